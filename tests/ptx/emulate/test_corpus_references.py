"""Corpus kernels built with nvcc here and run in the emulator against references written apart from it: numpy folds
of the surface reductions, the PTX ISA's loop for fns, the TMA box rule for edited tensor maps, a convolution's
im2col matrix, numpy packs, the PTX ISA's pseudocode of the SIMD video instructions (the corpus's GPU data pins the
same kernels' bits, test_gpu_data.py; cu_fns_spaces waits for its device run)."""

from __future__ import annotations

import functools
import shutil

import numpy as np
import pytest
from tests.marks import thinned
from tests.ptx.emulate.kernels import (
    fns_reference,
    im2col_boxes,
    samples_module,
    swizzle_rows,
    tma_box_reference,
    video_reference,
)
from tools import emulate_corpus as ec
from tools.corpus.asyncproxy import TMA_IM2COL, TMA_REPLACE, TMA_REPLACE_ENTRIES
from tools.corpus.entries import ENTRIES, VIDEO_FORMS
from tools.corpus.images import SURED_ENTRIES

pytestmark = pytest.mark.xdist_group("nvcc_samples")


@pytest.fixture(scope="module")
def samples():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")
    return functools.partial(samples_module, "sm90a")


def _run(name: str, samples, seed: int = 5) -> tuple[dict, dict]:
    """(inputs by buffer name, the emulator's outputs) of one corpus entry."""
    entry = next(e for e in ENTRIES if e.name == name)
    module = samples()
    kernel, grid, block, shared = ec.launch_of(entry, module)
    values = entry.inputs(np.random.default_rng(seed))
    args, buffers, _ = ec.make_args(module["ptx"], kernel, values)
    out, _ = ec.emulate_entry(module["ptx"], kernel, grid, block, shared, args, entry.outputs, buffers)
    return {v[0]: v[1] for v in values if isinstance(v, tuple)}, out


@pytest.mark.parametrize("name", thinned(sorted(TMA_IM2COL), 2))
def test_tma_im2col_entries_load_the_convolutions_im2col_matrix(name: str, samples) -> None:
    """nvcc's im2col loads (inline PTX, 3d / 4d / 5d) give each CTA its tile of the convolution's im2col matrix."""
    inputs, out = _run(name, samples)
    boxes = im2col_boxes(TMA_IM2COL[name], inputs["x"])
    swizzle = TMA_IM2COL[name][10]
    want = np.concatenate([swizzle_rows(b, swizzle) if swizzle else b.reshape(-1).view(np.uint8) for b in boxes])
    np.testing.assert_array_equal(out["dump"], want)


@pytest.mark.parametrize("name", sorted(TMA_REPLACE_ENTRIES))
def test_tma_replace_loads_the_box_of_the_edited_map(name: str, samples) -> None:
    inputs, out = _run(name, samples)
    kernel, _, x, y = TMA_REPLACE_ENTRIES[name]
    dtype, span, _, _ = TMA_REPLACE[kernel]
    np_t = {"f32": np.float32, "bf16": np.uint16, "f64": np.float64, "u8": np.uint8}[dtype]
    want, _ = tma_box_reference(inputs["src2"], np.zeros((1, 16), np.uint8), np_t, span, x, y)
    dump = out["dump"][:8192]
    if name.endswith("_nan_rows_past"):  # rows past the end: f32 NaN instead of zeros
        rows = dump.view(np.uint32).reshape(256, 8)
        inside = 50 - y
        np.testing.assert_array_equal(dump[:inside * 32], want[:inside * 32])
        assert (rows[inside:] == 0x7FF77FF7).all()
    else:
        np.testing.assert_array_equal(dump, want)
    assert out["status"][0] == 1 and (out["dump"][8192:].view(np.uint32) == np.tile([0xABABABAB, 0, 0, 0xABABABAB],
                                                                                      512)).all()


@pytest.mark.parametrize("name", sorted(SURED_ENTRIES))
def test_surface_reductions_are_numpy_folds(name: str, samples) -> None:
    inputs, out = _run(name, samples)
    surf, wide, _ = SURED_ENTRIES[name]
    op, ctype, mode = name.split("_")[1], name.split("_")[2], name.split("_")[3]
    dt = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64}[ctype]
    es = 8 if wide else 4
    want = inputs["sf"].copy().view(dt)
    want = want.reshape(-1, *want.shape[-3:-1]) if want.ndim > 2 else want.reshape(1, 1, -1)
    d, h, w = want.shape
    fold = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}[op]
    with np.errstate(over="ignore"):
        for (x, yy, z, _), v in zip(inputs["c"], inputs["v"].view(dt), strict=True):
            x, yy, z = int(x) // es, int(yy), int(z)
            if mode == "clamp":
                x, yy, z = min(max(x, 0), w - 1), min(max(yy, 0), h - 1), min(max(z, 0), d - 1)
            if 0 <= x < w and 0 <= yy < h and 0 <= z < d:
                want[z, yy, x] = fold(want[z, yy, x], v)
    np.testing.assert_array_equal(out["sf"].view(dt).reshape(want.shape), want)


def test_fns_and_isspacep_kernel(samples) -> None:
    inputs, out = _run("cu_fns_spaces", samples)
    w = inputs["w"]
    o = out["out"].reshape(-1, 2)
    want = [fns_reference(int(m), int(b), int(c))
            for m, b, c in zip(w[:, 0], w[:, 1], w[:, 2].view(np.int32), strict=True)]
    np.testing.assert_array_equal(o[:, 0], want)
    # global, local, shared, and the parameter both param and global (as the H100 answers); loc == sm
    assert (o[:, 1] == (1 | 2 << 4 | 4 << 8 | 9 << 12 | 1 << 16)).all()


def test_int_packs_kernel(samples) -> None:
    inputs, out = _run("cu_int_packs", samples)
    a, b, c = (inputs["x"][:, i].astype(np.int64) for i in range(3))
    c &= 0xFFFFFFFF

    def pack(n: int, signed: bool) -> np.ndarray:
        lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
        return (np.clip(b, lo, hi) & ((1 << n) - 1)) | ((np.clip(a, lo, hi) & ((1 << n) - 1)) << n)
    o = out["out"].reshape(-1, 4).astype(np.int64)
    np.testing.assert_array_equal(o[:, 0], (pack(8, False) | c << 16) & 0xFFFFFFFF)
    np.testing.assert_array_equal(o[:, 1], pack(16, True))
    np.testing.assert_array_equal(o[:, 2], (pack(4, True) | c << 8) & 0xFFFFFFFF)
    np.testing.assert_array_equal(o[:, 3], (pack(2, False) | c << 4) & 0xFFFFFFFF)


@pytest.mark.parametrize("t", ["f16", "s8", "tf32"])
def test_wmma_kernels_multiply_each_band(t: str, samples) -> None:
    """The wmma API kernels: D of each 16-row band is C + A·B (s8: exact, clamped after each k16 step; f16 / tf32: to
    the product's rounding, NaN and infinities where float64 has them)."""
    inputs, out = _run(f"cu_wmma_{t}", samples)
    a, b, c = (inputs[x].astype(np.float64 if t != "s8" else np.int64) for x in ("a", "b", "c"))
    with np.errstate(invalid="ignore"):
        want = c + np.concatenate([a[16 * i:16 * i + 16] @ b.T for i in range(4)])
    d = out["d"].reshape(64, 16)
    if t == "s8":  # .satfinite clamps after each k16 step
        acc = c
        for k0 in range(0, 64, 16):
            acc = np.clip(acc + np.concatenate([a[16 * i:16 * i + 16, k0:k0 + 16] @ b[:, k0:k0 + 16].T
                                                for i in range(4)]), -2**31, 2**31 - 1)
        np.testing.assert_array_equal(d, acc)
        return
    if t == "f16":  # stored column-major per band
        d = d.reshape(4, 16, 16).transpose(0, 2, 1).reshape(64, 16)
    fin = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(d), fin)
    tol = (2e-3, 1e-2) if t == "tf32" else (1e-5, 1e-4)
    np.testing.assert_allclose(d[fin], want[fin], rtol=tol[0], atol=tol[1])


def test_video_forms_kernel(samples) -> None:
    inputs, out = _run("cu_video_forms", samples)
    got = out["out"].reshape(-1, 16)
    for k, form in enumerate(VIDEO_FORMS):
        want = [video_reference(form, int(a), int(b), int(c)) for a, b, c in inputs["x"]]
        np.testing.assert_array_equal(got[:, k], want, err_msg=form)
