"""MMA-Sim beside tcforge.numerics (bench/numerics_peers.py): the facts docs/numerics.md states about the peer, the
disagreements it lists, those the hardware settled, and the bench's own run (skipped where `mmasim` is not
installed: `pip install -e .[peers]`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from bench import numerics_peers as P

from tcforge.numerics import mma_m16n8k16_f16_f16, mma_m16n8k32_e4m3_f16
from tcforge.numerics import tensorcore as TC
from tcforge.numerics import truth as T

needs_mmasim = pytest.mark.skipif(importlib.util.find_spec("mmasim") is None, reason="mmasim is not installed")


@pytest.fixture(scope="module")
def sim():
    return P._mmasim()


def _hmma_pair(sim, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[int, int]:
    torch, nv_ptx = sim
    op = nv_ptx.MMA("Hopper", "m16n8k16.f16.f16.f16.f16")
    peer = P.native_peer(torch, op, torch.float16, torch.float16, torch.float16, np.uint16)
    return int(mma_m16n8k16_f16_f16(a, b, c)[0, 0, 0]), int(peer(a, b, c)[0, 0, 0])


def _f16_tile(a_row: dict[int, int], b_col: dict[int, int], c00: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b, c = np.zeros((1, 16, 16), np.uint16), np.zeros((1, 16, 8), np.uint16), np.zeros((1, 16, 8), np.uint16)
    for k, v in a_row.items():
        a[0, 0, k] = v
    for k, v in b_col.items():
        b[0, k, 0] = v
    c[0, 0, 0] = c00
    return a, b, c


@needs_mmasim
def test_mmasim_has_no_fp8_mma_sync_on_hopper(sim) -> None:
    _, nv_ptx = sim
    nv_ptx.MMA("Ada Lovelace", "m16n8k32.f16.e4m3.e4m3.f16")
    with pytest.raises(AssertionError, match="Unsupported shape_and_type"):
        nv_ptx.MMA("Hopper", "m16n8k32.f16.e4m3.e4m3.f16")
    nv_ptx.WGMMA("Hopper", "m64n8k32.f16.e4m3.e4m3")


@needs_mmasim
def test_lowered_peer_reproduces_the_shared_h200_tiles(sim) -> None:
    z = np.load(P.DATA / "shared" / "h200_mma_tiles_sample.npz")
    got = P.lowered_hopper_peer(*sim)(z["a"], z["b"], z["c"])
    assert np.array_equal(got, z["d"]), f"{np.count_nonzero(got != z['d'])} outputs differ from the H200"


@needs_mmasim
def test_ada_all_negative_zero_products_onto_minus_zero(sim) -> None:
    """tcforge keeps the IEEE -0 (c = -0, every product -0); MMA-Sim returns +0 (no Ada hardware decides)."""
    torch, nv_ptx = sim
    fp8 = torch.float8_e4m3fn
    op = nv_ptx.MMA("Ada Lovelace", "m16n8k32.f16.e4m3.e4m3.f16")
    ada = P.native_peer(torch, op, fp8, fp8, torch.float16, np.uint16)
    a, b = np.full((1, 16, 32), 0x80, np.uint8), np.full((1, 32, 8), 0x38, np.uint8)
    c = np.full((1, 16, 8), 0x8000, np.uint16)
    assert int(mma_m16n8k32_e4m3_f16(a, b, c, "ada")[0, 0, 0]) == 0x8000
    assert int(ada(a, b, c)[0, 0, 0]) == 0x0000
    assert int(mma_m16n8k32_e4m3_f16(a, b, c, "hopper")[0, 0, 0]) == 0x0000  # HADD2: +0 + -0


@needs_mmasim
def test_f16_hmma_rules_the_h100_chose(sim) -> None:
    """The two f16 HMMA rules the H100 decided: tcforge and MMA-Sim give the same bits, the retired floor rule not."""
    floor_row = TC.with_step(TC.get_form("mma.m16n8k16.f16.f16.f16"), exp_rule="floor", zero_sign="underflow")
    cases = [  # (tile, shipped = MMA-Sim, the retired floor-exponent / signed-underflow rule)
        # -2^-24 x 2^-10 = -2^-34 rounds to zero: +0 (every zero result is +0), not -0 (the sign of the sum)
        (_f16_tile({0: 0x8001}, {0: 0x1400}, 0), 0x0000, 0x8000),
        # C = 514 * 2^-24 (subnormal: exponent -14, floor(log2) -15) + 2^-25 (a tie) + 2^-40 (sticky, cut at -14)
        (_f16_tile({0: 0x0800, 1: 0x0010}, {0: 0x0C00, 1: 0x0010}, 0x0202), 0x0202, 0x0203),
        # 2^-24 x 2^15 is the largest term: exponent -14 + 15 = 1 (subnormals clamped), not -24 + 15 = -9
        (_f16_tile({0: 0x0001, 1: 0x1400, 2: 0x0200}, {0: 0x7800, 1: 0x1400, 2: 0x0200}, 0), 0x1800, 0x1801),
    ]
    for (a, b, c), shipped, retired in cases:
        assert _hmma_pair(sim, a, b, c) == (shipped, shipped)
        assert int(TC.run_form(floor_row, a, b, c)[0, 0, 0]) == retired


def test_h100_subnormal_tiles_are_the_bench_tiles() -> None:
    """hopper_hmma_subnormal.npz holds tiles of the bench's random f16 set, at their indices there."""
    z = np.load(P.DATA / "hopper_hmma_subnormal.npz")
    parts = list(P.f16_random(int(json.loads(str(z["meta"]))["tiles_per_family"])).chunks())
    for f in ("a", "b", "c"):
        assert np.array_equal(np.concatenate([getattr(p, f) for p in parts])[z["tile"]], z[f]), f


@needs_mmasim
def test_mmasim_reproduces_the_h100_subnormal_tiles(sim) -> None:
    torch, nv_ptx = sim
    z = np.load(P.DATA / "hopper_hmma_subnormal.npz")
    f16 = torch.float16
    peer = P.native_peer(torch, nv_ptx.MMA("Hopper", "m16n8k16.f16.f16.f16.f16"), f16, f16, f16, np.uint16)
    assert np.array_equal(peer(z["a"], z["b"], z["c"]), z["d"])


def _tc_truth(tmp_path: Path, sim) -> tuple[Path, int]:
    """A tensor-core truth file in the packed layout, MMA-Sim's WGMMA e4m3 standing in for the hardware."""
    form, seed = "wgmma.m64n8k32.f16.e4m3.e4m3", 7
    a, b, c = T.tc_tile_inputs(form, 0, seed, 0, 3)
    _, peer = P.mmasim_peer(form, *sim)
    path = tmp_path / "tc_truth.npz"
    np.savez(path, forms=np.array([form]), seed=np.uint32(seed), **{T.tc_key(form, 0, "d"): peer(a, b, c)})
    return path, a.shape[0] * 64 * 8


@needs_mmasim
def test_bench_writes_the_peer_table(tmp_path: Path, sim, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--out", str(tmp_path), "--digest-tiles", "8", "--full-tiles", "8", "--f16-tiles", "8", "--quiet"]
    with_tc = hasattr(T, "tc_tile_inputs")  # the tensor-core truth reader, where this tree has it
    if with_tc:
        path, n_tc = _tc_truth(tmp_path, sim)
        argv += ["--wgmma", str(path)]
    assert P.main(argv) == 0
    rows = json.loads((tmp_path / "numerics_peers.json").read_text())["rows"]
    hw = [r for r in rows if r["n_hw"] and not r["form"].startswith("wgmma")]  # the committed hardware vectors
    assert all(r["tcforge"]["vs_hw"] == 0 for r in hw)
    assert all(p["vs_hw"] == 0 for r in hw for label, p in r["mmasim"].items() if label != P.P_WGMMA)
    hmma = next(r for r in hw if r["form"] == P.F_HMMA)  # the H100's f16 subnormal tiles: all three agree
    assert hmma["mmasim"][P.P_HMMA]["vs_tcforge"] == 0 and hmma["n_hw"] == 67 * 128
    if with_tc:
        assert rows[-1]["form"].startswith("wgmma.m64n8k32.f16.e4m3.e4m3") and rows[-1]["n_hw"] == n_tc
        assert next(iter(rows[-1]["mmasim"].values()))["vs_hw"] == 0
    assert "| form | vectors |" in capsys.readouterr().out


def test_bench_without_mmasim_says_so_in_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    def missing():
        raise ImportError("No module named 'mmasim'")

    monkeypatch.setattr(P, "_mmasim", missing)
    assert P.main(["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install mmasim" in err[0]
