"""The ladder's nine rung kernels (src/tcforge/gemm/ladder): each compiles for sm_90a with no spill, no stack frame and
no wgmma serialisation, and its machine code holds what the rung adds; on a GPU each one's C equals torch's fp32
product within 1e-4 relative Frobenius error (fp32 C; bf16 C: within bf16 rounding) on fresh random inputs, with C
poisoned (NaN) first.

Shapes each rung supports: M, N, K positive multiples of `Rung.multiple` — rungs 1-2 (128, 128, 32), rung 3
(128, 256, 32), rungs 4-5 (256, 256, 32), rungs 6-9 (256, 256, 64); other shapes raise TcforgeError."""

from __future__ import annotations

import re
import shutil

import pytest

from tcforge.errors import TcforgeError
from tcforge.gemm import ladder
from tcforge.runtime.tools import find_tool

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and find_tool("nvcc") is None,
                                reason="nvcc is not installed")
NAMES = list(ladder.RUNGS)


def test_rungs_are_nine_small_files_in_order() -> None:
    assert [r.number for r in ladder.RUNGS.values()] == list(range(1, 10))
    for r in ladder.RUNGS.values():
        lines = (ladder.HERE / r.file).read_text().splitlines()
        assert 60 <= len(lines) <= 350, (r.file, len(lines))
        assert lines[0].startswith(f"// Rung {r.number} — ") and r.adds
        assert r.file.startswith(f"rung{r.number}_")
    readme = (ladder.HERE / "README.md").read_text()
    assert all(f"`{r.file}`" in readme for r in ladder.RUNGS.values())


def test_shapes_off_the_tile_are_refused() -> None:
    ladder.check_shape("hoist", 512, 256, 128)
    for m, n, k in ((128, 256, 128), (512, 128, 128), (512, 256, 96), (0, 256, 64)):
        with pytest.raises(TcforgeError, match="multiple of"):
            ladder.check_shape("hoist", m, n, k)
    with pytest.raises(TcforgeError, match="no ladder rung"):
        ladder.rung("r10")
    assert ladder.rung(1).name == "baseline" and ladder.rung("r9") is ladder.RUNGS["hoist"]


def test_split_choice_leaves_no_split_empty() -> None:
    assert ladder.choose_splits("hoist", 4096, 4096, 4096, 132) == 1  # more tiles than clusters
    assert ladder.choose_splits("persistent", 256, 256, 8192, 132) == 1  # rung 7 never splits
    for k in (512, 768, 4096, 8192, 64 * 37):
        s = ladder.choose_splits("hoist", 256, 256, k, 132)
        kt = k // 64
        per = -(-kt // s)
        assert s >= 1 and (s - 1) * per < kt and (s == 1 or per >= ladder.MIN_SPLIT_KTILES)


def _check_build(name: str, out_kind: str) -> None:
    r = ladder.RUNGS[name]
    built = ladder.compile_rung(name, out_kind)
    st = built.stats[ladder.KERNEL]
    assert not st.spills, (name, out_kind, st)
    assert not built.wgmma_serialized, (name, out_kind, built.log)
    if find_tool("cuobjdump") is None:
        pytest.skip("no cuobjdump here")
    sass = built.sass()
    # what each rung adds shows in its machine code
    assert "HGMMA.64x" in sass
    assert ("LDGSTS" in sass) == (r.number == 1)
    assert ("UTMALDG" in sass) == (r.number >= 2)
    assert (re.search(r"UTMALDG\S*MULTICAST", sass) is not None) == (r.number >= 4)
    assert ("UTMASTG" in sass) == (r.number >= 5)
    assert (f"HGMMA.64x{r.bn}x16.F32" in sass)


@needs_nvcc
def test_last_rung_compiles_clean() -> None:
    _check_build("hoist", "fp32")


@needs_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("out_kind", ladder.OUT_KINDS)
@pytest.mark.parametrize("name", NAMES)
def test_every_rung_compiles_clean(name: str, out_kind: str) -> None:
    _check_build(name, out_kind)


def _shapes(r: ladder.Rung) -> list[tuple[int, int, int, int | None]]:
    """(M, N, K, forced splits): one tile; several tiles and more k-tiles than stages; a non-square grid; for the
    persistent rungs more cluster tiles than 66 clusters (81: some clusters run two); for split-K a forced split with
    an uneven last split and the automatic one on a long K."""
    bm, bn, bk = r.multiple
    out = [(bm, bn, bk, None), (2 * bm, 3 * bn, 9 * bk, None), (5 * bm, 2 * bn, 4 * bk, None)]
    if r.kind in ("persistent", "splitk"):
        out.append((9 * bm, 9 * bn, 8 * bk, None))
    if r.kind == "splitk":
        out += [(bm, 2 * bn, 14 * bk, 3), (bm, bn, 128 * bk, None)]
    return out


def _fp16(rng, shape):
    import numpy as np

    return (rng.standard_normal(shape) * rng.choice([1.0, 2.0**-12, 2.0**9], shape)).astype(np.float16)


@needs_nvcc
@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in ("cluster2", "tma_store") else [pytest.mark.slow])
                                  for n in NAMES[1:]])  # the corpus holds every rung's PTX to the GPU's bits
def test_emulated_rung_gives_rung1_bits(name: str) -> None:
    """Each rung's own PTX in the emulator (`ladder.emulate`: TMA, mbarriers, clusters and multicast, TMA stores,
    a persistent walk over more tiles than the one cluster a 2-SM GPU would launch) gives the bits of rung 1, whose
    PTX the H100 corpus pins; bf16 C is rung 1's fp32 C rounded to nearest even."""
    import numpy as np

    r = ladder.RUNGS[name]
    m, n, k = 2 * r.multiple[0], r.multiple[1], 3 * r.bk
    rng = np.random.default_rng(r.number)
    a, b = _fp16(rng, (m, k)), _fp16(rng, (n, k))
    want = ladder.emulate(1, a, b).view(np.uint32)
    got = ladder.emulate(name, a, b, sms=r.cluster)
    np.testing.assert_array_equal(got.view(np.uint32), want)
    if r.number == 5:
        rne = ((want + 0x7FFF + ((want >> 16) & 1)) >> 16).astype(np.uint16)
        np.testing.assert_array_equal(ladder.emulate(name, a, b, out_kind="bf16"), rne)


@needs_nvcc
def test_emulated_split_k_sums_the_planes_in_order() -> None:
    """Rung 8 with three splits of five k-tiles (2, 2, 1): fp32 C is ((P0 + P1) + P2) of rung 1's products over
    each split's k range."""
    import numpy as np

    rng = np.random.default_rng(8)
    a, b = _fp16(rng, (256, 320)), _fp16(rng, (256, 320))
    p = [ladder.emulate(1, a[:, k0:k0 + 128], b[:, k0:k0 + 128]) for k0 in (0, 128, 256)]
    got = ladder.emulate("splitk", a, b, splits=3)
    np.testing.assert_array_equal(got.view(np.uint32), ((p[0] + p[1]) + p[2]).view(np.uint32))
    with pytest.raises(TcforgeError, match="does not split K"):
        ladder.emulate("bk64", a, b, splits=2)
    with pytest.raises(TcforgeError, match="multiple of"):
        ladder.emulate("bk64", a[:, :96], b[:, :96])


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_rung_matches_torch(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)  # the reference in plain fp32
    r = ladder.RUNGS[name]
    gen = torch.Generator(device="cuda").manual_seed(1000 + r.number)
    for m, n, k, splits in _shapes(r):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=gen)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16, generator=gen)
        ref = a.float() @ b.float().t()
        # bf16 C: within half a bf16 ulp (2^-8 relative at most) of the product, and next to torch's own rounding
        for out_dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 4e-3)):
            out = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
            run = ladder.prepare(name, a, b, out, splits=splits)
            run()
            torch.cuda.synchronize()
            where = f"{name} {m}x{n}x{k} -> {out_dtype}, splits {run.splits}"
            assert not out.isnan().any(), f"{where}: unwritten (NaN) outputs"
            err = ((out.float() - ref).norm() / ref.norm()).item()
            assert err <= tol, f"{where}: relative Frobenius error {err:.3g} > {tol}"
            if out_dtype == torch.bfloat16:
                near = ((out.float() - ref.to(out_dtype).float()).norm() / ref.norm()).item()
                assert near <= 1e-3, f"{where}: {near:.3g} from torch's bf16 rounding of the product"
            if splits is not None:
                assert run.splits == splits
            run()  # a second launch of the same preparation gives the same bits
            torch.cuda.synchronize()
            again = out.clone()
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            assert torch.equal(out, again), f"{where}: a relaunch changed the result"


@pytest.mark.gpu
def test_ladder_refuses_bad_operands() -> None:
    import torch

    a = torch.zeros(256, 64, device="cuda", dtype=torch.float16)
    b = torch.zeros(256, 64, device="cuda", dtype=torch.float16)
    out = torch.zeros(256, 256, device="cuda", dtype=torch.float32)
    with pytest.raises(TcforgeError, match="multiple of"):
        ladder.launch("hoist", a[:, :48].contiguous(), b[:, :48].contiguous(), out)
    with pytest.raises(TcforgeError, match="fp16"):
        ladder.launch("hoist", a.float(), b, out)
    with pytest.raises(TcforgeError, match="contiguous"):
        ladder.launch("baseline", a, b, out.t())
    with pytest.raises(TcforgeError, match="does not split"):
        ladder.launch("persistent", a, b, out, splits=2)
