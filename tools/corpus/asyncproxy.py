"""Inputs of the async-proxy kernels: mbarrier scripts, TMA boxes and tensor-map replacement, TMA and bulk
reductions' values, and the teaching-ladder rungs' operands and tensor maps."""

from __future__ import annotations

import numpy as np

from tools.corpus.values import f16


# ---- mbarrier (samples_sm90a: mbarrier_steps) ------------------------------------------------------------------------
def _mbarrier_scripts(scripts: int, steps: int):
    """Random legal mbarrier scripts (op, value) for `mbarrier_steps`: an init, then arrivals (never more than are
    pending), transaction bytes expected and completed (the count may go below zero), drops, re-inits."""
    def make(rng):
        prog = np.zeros((scripts, steps, 2), np.uint32)
        for s_ in range(scripts):
            pending = expected = tx = 0
            for i in range(steps):
                choices = [0] if i == 0 else [0, 3, 4] + ([1, 2, 5] if pending else [])
                op = int(rng.choice(choices, p=None if i == 0 else _weights(choices)))
                if op == 0:
                    v = pending = expected = int(rng.integers(1, 5))
                    tx = 0
                elif op in (1, 5):
                    v = int(rng.integers(1, pending + 1)) if op == 1 else int(rng.integers(1, min(pending,
                                                                                           expected - 1) + 1)) \
                        if expected > 1 else 0
                    if op == 5 and v == 0:
                        op, v = 1, 1
                    pending -= v
                    expected -= v if op == 5 else 0
                elif op == 2:
                    v = int(rng.choice([16, 128, 4096]))
                    pending, tx = pending - 1, tx + v
                else:
                    v = int(rng.choice([16, 48, 1024]))
                    tx += v if op == 3 else -v
                if pending == 0 and tx == 0:
                    pending = expected
                prog[s_, i] = op, v
        return [("prog", prog), ("out", np.full((scripts, steps, 4), 0xEEEEEEEE, np.uint32)), steps]
    return make


def _weights(choices: list[int]) -> list[float]:
    w = np.array([{0: 0.05, 1: 0.35, 2: 0.15, 3: 0.15, 4: 0.15, 5: 0.15}[c] for c in choices])
    return list(w / w.sum())


# ---- TMA boxes and tensor-map replacement (samples_sm90a: tma_box, tma_replace_*) ------------------------------------
TMA_BOXES = {"sw128_f16": (128, "f16"), "sw64_u8": (64, "u8"), "sw32_f32": (32, "f32"), "plain_f16": (0, "f16")}
# (box, x, y): in bounds, rows past the source's end, a box wholly right of it, the store's rows past the end
# (boxes reaching below coordinate 0 or partly past the inner extent stopped the H200 with an illegal instruction)
TMA_BOX_CASES = [(label, 0, 0) for label in TMA_BOXES] + [("sw128_f16", 0, 8), ("sw32_f32", 40, 0),
                                                         ("plain_f16", 40, 0)]


def _tma_box(span: int, dtype: str, x: int, y: int, fill: str = "zero"):
    """`tma_box`: an 8 KB box of rows of `span` bytes (64 without a swizzle) loaded at (x, y) of a 50-row source and
    stored at (y, x) of a 60-row destination pre-filled with 0xAB, both partly out of bounds where x or y is."""
    from tcforge.ptx.emulate import TensorMap

    es = {"f16": 2, "u8": 1, "f32": 4}[dtype]
    inner = (span or 64) // es
    rows = 8192 // (inner * es)

    def make(rng):
        src = rng.integers(0, 256, (50, 144), dtype=np.uint8)
        out = np.full((60, 80), 0xAB, np.uint8)
        maps = [TensorMap(name, dtype, (a.shape[1] // es, a.shape[0]), (a.shape[1],), (inner, rows), span,
                          fill if name == "src" else "zero") for name, a in (("src", src), ("out", out))]
        return [*maps, ("dump", np.zeros(8192, np.uint8)), x, y, 8192, ("src", src), ("out", out)]
    return make


# kernel -> (element type, swizzle span, box (inner, rows), dims' inner extent): the map tma_replace builds
TMA_REPLACE = {"tma_replace_f32_sw32": ("f32", 32, (8, 256), 36), "tma_replace_f32_sw32_nan": ("f32", 32, (8, 256), 36),
               "tma_replace_bf16_sw128": ("bf16", 128, (64, 64), 72), "tma_replace_f64_sw64": ("f64", 64, (8, 128), 18),
               "tma_replace_u8_none": ("u8", 0, (64, 128), 144)}
# entry -> (kernel, from zeros, x, y)
TMA_REPLACE_ENTRIES = {
    "cu_tma_replace_f32_sw32": ("tma_replace_f32_sw32", False, 0, 0),
    "cu_tma_replace_f32_sw32_zeros_rows_past": ("tma_replace_f32_sw32", True, 4, 37),
    "cu_tma_replace_f32_sw32_nan_rows_past": ("tma_replace_f32_sw32_nan", False, 4, 37),
    "cu_tma_replace_bf16_sw128": ("tma_replace_bf16_sw128", False, 0, 0),
    "cu_tma_replace_f64_sw64_zeros": ("tma_replace_f64_sw64", True, 2, 8),
    "cu_tma_replace_u8_none": ("tma_replace_u8_none", False, 16, 5)}


def _tma_replace(kernel: str, zeros: bool, x: int, y: int):
    """`tma_replace_*`: a template map (f16, NaN fill, every field unlike the edits) over `src`, edited on the device
    into TMA_REPLACE[kernel]'s map over a 50-row, 144-byte-pitch `src2`; the 8 KB box at (x, y) loaded through it."""
    from tcforge.ptx.emulate import TensorMap

    dtype, span, box, inner = TMA_REPLACE[kernel]

    def make(rng):
        tmpl = TensorMap("src", "f16", (72, 50), (144,), (64, 64), 0, "nan")
        f = np.array([zeros, inner, 50, 144, *box, 0, 0, 0, 8192], np.uint32)
        return [tmpl, ("work", np.zeros(128, np.uint8)), ("src2", rng.integers(0, 256, (50, 144), dtype=np.uint8)),
                ("f", f), ("dump", np.zeros(16384, np.uint8)), ("status", np.full(4, 7, np.uint32)), x, y,
                ("src", rng.integers(0, 256, (50, 144), dtype=np.uint8))]
    return make


# ---- TMA im2col (samples_sm90a: tma_im2col3 / 4 / 5) ---------------------------------------------------------------
# entry -> (rank, (N, [D, [H,]] W), C, element type, padding, stride, filter extent, pixels, channels, first channel,
# swizzle, fill): a convolution's im2col tiles loaded by filter tap, tiles crossing into the next image
TMA_IM2COL = {
    "cu_tma_im2col_nhwc_s1": (4, (2, 5, 7), 16, "f16", 1, 1, 3, 16, 16, 0, 0, "zero"),
    "cu_tma_im2col_nhwc_s2_sw32": (4, (2, 5, 7), 16, "f16", 1, 2, 3, 32, 16, 0, 32, "zero"),
    "cu_tma_im2col_nhwc_sw128_nanfill": (4, (3, 4, 4), 64, "f16", 1, 1, 3, 64, 64, 0, 128, "nan"),
    "cu_tma_im2col_nwc_channels_past_c": (3, (3, 11), 12, "f32", 2, 1, 5, 16, 8, 8, 32, "zero"),
    "cu_tma_im2col_ndhwc_s2": (5, (1, 3, 4, 5), 8, "f16", 1, 2, 2, 16, 8, 0, 0, "zero"),
}


def im2col_geometry(case: tuple) -> tuple[tuple[int, ...], int, int]:
    """(the convolution's output extents, outermost first; im2col rows; CTAs: one per filter tap and tile)."""
    rank, dims_outer, _, _, pad, stride, filt, pixels = case[:8]
    out = tuple((s + 2 * pad - filt) // stride + 1 for s in dims_outer[1:])
    rows = dims_outer[0] * int(np.prod(out))
    return out, rows, filt ** (rank - 2) * -(-rows // pixels)


def im2col_map(case: tuple) -> tuple[object, np.ndarray]:
    """(im2col TensorMap over buffer 'x', per-CTA rows of 8 s32: coordinates C first, then the im2col offsets W
    first) for every filter tap (outer loop) and every `pixels`-row tile of the im2col matrix: the tile's first
    filter corner as the coordinates, lower corners -padding, upper ones at the last output's corner, traversal
    strides the convolution's."""
    from tcforge.ptx.emulate import TensorMap

    rank, dims_outer, c_total, dtype, pad, stride, filt, pixels, channels, c0, swizzle, fill = case
    out, rows, _ = im2col_geometry(case)
    n_img, spatial = dims_outer[0], dims_outer[1:]
    es = {"f16": 2, "f32": 4}[dtype]
    dims = (c_total, *reversed(spatial), n_img)  # innermost first: C, W, H, D, N
    strides = tuple(int(np.prod(dims[:i + 1])) * es for i in range(rank - 1))
    upper = tuple((o - 1) * stride - pad - s + 1 for o, s in zip(reversed(out), reversed(spatial), strict=True))
    tm = TensorMap("x", dtype, dims, strides, (channels, pixels), swizzle, fill, lower=(-pad,) * (rank - 2),
                   upper=upper, traversal=(stride,) * (rank - 2))
    args = []
    for tap in np.ndindex(*(filt,) * (rank - 2)):
        for m0 in range(0, rows, pixels):
            n0, o = divmod(m0, int(np.prod(out)))
            corner = [int(i) * stride - pad for i in np.unravel_index(o, out)]  # outermost first
            args.append([c0, *reversed(corner), n0, *reversed(tap)] + [0] * (10 - 2 * rank))
    return tm, np.array(args, np.int32)


def im2col_conv(case: tuple, rng) -> tuple[np.ndarray, object, np.ndarray]:
    """(input NHWC-like array of random codes, then `im2col_map`'s map and per-CTA rows)."""
    _, dims_outer, c_total, dtype = case[:4]
    es = {"f16": 2, "f32": 4}[dtype]
    x = rng.integers(1, 0x3C00 if es == 2 else 2**31, (*dims_outer, c_total)).astype(f"u{es}")
    return (x, *im2col_map(case))


# Gluon's im2col tiles (module im2col_gluon_sm90): a 3x3 stride-2 convolution's 60 output rows in two 32-row tiles
# (the first crossing into image 1, the second past the last image), 64-byte swizzle (Gluon's NVMMA default)
GLUON_IM2COL = (4, (2, 9, 11), 32, "f16", 1, 2, 3, 32, 32, 0, 64, "zero")


def _gluon_im2col(rng):
    """`im2col_tiles` (Gluon): the map, Triton's four unused descriptor words, the output tiles, its two scratch
    pointers, then the input the map reads."""
    x, tm, args = im2col_conv(GLUON_IM2COL, rng)
    return [tm, 0, 0, 0, 0, ("out", np.zeros(len(args) * tm.box_bytes // 2, np.uint16)),
            ("gscratch", np.zeros(256, np.uint8)), ("pscratch", np.zeros(256, np.uint8)), ("x", x)]


# Gluon's implicit-GEMM convolution (module conv_gluon_sm90): the same image shape with 64 channels in two 32-channel
# im2col blocks per tap (64-byte swizzle), 64 output channels; weights (3 * 3 * 64) x 64, K = tap * 64 + channel
GLUON_CONV = (4, (2, 9, 11), 64, "f16", 1, 2, 3, 64, 32, 0, 64, "zero")


def _gluon_conv(rng):
    """`conv_fprop` (Gluon): f16 input and weights (normal, a row of each with specials), the output poisoned with
    NaN; Triton's unused descriptor words and scratch pointers."""
    from tcforge.ptx.emulate import TensorMap

    _, dims_outer, c_total, _, _, _, filt, _, channels = GLUON_CONV[:9]
    tm, _ = im2col_map(GLUON_CONV)
    _, m, _ = im2col_geometry(GLUON_CONV)
    x = (rng.standard_normal((*dims_outer, c_total)) * 0.5).astype(np.float16)
    x[0, 4, 5, :8] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 6e-8, -6e-8, 65504.0]
    k = filt * filt * c_total
    wt = (rng.standard_normal((k, 64)) * 0.25).astype(np.float16)
    wt[70, :4] = [np.inf, 1e-7, -65504.0, np.nan]
    wm = TensorMap("wt", "f16", (64, k), (128,), (64, channels), 128)
    return [tm, 0, 0, 0, 0, wm, 0, 0, 0, 0, ("out", np.full((m, 64), np.nan, np.float32)), m,
            ("gscratch", np.zeros(256, np.uint8)), ("pscratch", np.zeros(256, np.uint8)), ("x", x.view(np.uint16)),
            ("wt", wt.view(np.uint16))]


def _tma_im2col(name: str):
    """`tma_im2col<rank>`: TMA_IM2COL[name]'s tiles, one CTA each, dumped in shared-memory order."""
    def make(rng):
        x, tm, args = im2col_conv(TMA_IM2COL[name], rng)
        return [tm, ("args", args), ("dump", np.zeros(len(args) * tm.box_bytes, np.uint8)), tm.box_bytes, ("x", x)]
    return make


# ---- bulk reductions ------------------------------------------------------------------------------------------
def _reduce_values(rng, ptype: str, n: int) -> np.ndarray:
    """n random words of a reduction's type: floats of mixed scale with specials and subnormals, integers over the
    type's range (near its ends too)."""
    if ptype in ("f32", "f16", "bf16"):
        dt = {"f32": np.float32, "f16": np.float16, "bf16": np.float32}[ptype]
        v = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)).astype(dt)
        tiny = {"f32": 1e-39, "f16": 3e-6, "bf16": 1e-39}[ptype]
        pick = rng.choice(n, n // 8, replace=False)
        v[pick] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 3 * tiny], dt), len(pick))
        if ptype == "bf16":
            return (v.view(np.uint32) >> 16).astype(np.uint16)
        return v.view(np.uint32 if ptype == "f32" else np.uint16)
    bits = int(ptype[1:])
    v = rng.integers(0, 2 ** bits, n, dtype=np.uint64)
    v[: n // 4] = rng.integers(0, 40, n // 4).astype(np.uint64)  # small values: inc's wrap, min / max near zero
    v[n // 4: n // 2] = (2 ** bits - 1) - rng.integers(0, 40, n // 4).astype(np.uint64)
    return v.astype(np.dtype(f"u{bits // 8}"))


def _tma_reduce(dtype: str, x: int, y: int):
    """`tma_reduce_*`: a 16-row box of 64-byte rows reduced into a 40 x 32-element tensor at (x, y) (rows past the
    tensor's end skipped)."""
    from tcforge.ptx.emulate import TensorMap

    es = {"f32": 4, "u32": 4, "s32": 4, "f16": 2, "bf16": 2}[dtype]
    inner, cols = 64 // es, 32

    def make(rng):
        out = _reduce_values(rng, dtype, 40 * cols).reshape(40, cols)
        box = _reduce_values(rng, dtype, 16 * inner)
        return [TensorMap("out", dtype, (cols, 40), (cols * es,), (inner, 16)), ("src", box), x, y, box.nbytes,
                ("out", out)]
    return make


def _bulk_reduce(ptype: str):
    def make(rng):
        n = 1024 // (int(ptype[1:]) // 8)
        return [("src", _reduce_values(rng, ptype, n)), ("dst", _reduce_values(rng, ptype, 2 * n)), 1, 1024]
    return make


# name: (kernel, tensor-map element type, x, y)
TMA_REDUCE_ENTRIES = {
    "tma_reduce_add_f32": ("tma_reduce_add", "f32", 16, 8),
    "tma_reduce_add_f16": ("tma_reduce_add", "f16", 0, 30),
    "tma_reduce_add_bf16": ("tma_reduce_add", "bf16", 0, 0),
    "tma_reduce_min_s32": ("tma_reduce_min", "s32", 16, 24),
    "tma_reduce_max_u32": ("tma_reduce_max", "u32", 0, 4),
    "tma_reduce_or_u32": ("tma_reduce_or", "u32", 16, 0),
}
# name: (kernel, element type)
BULK_REDUCE_ENTRIES = {"bulk_reduce_add_f32": "f32", "bulk_reduce_add_f16": "f16", "bulk_reduce_min_s32": "s32",
                       "bulk_reduce_inc_u32": "u32", "bulk_reduce_xor_b64": "u64"}


# ---- teaching-ladder rungs (ladder_rungN_sm90a: ladder_gemm) ---------------------------------------------------------
def _ladder_rung1(m: int, n: int, k: int):
    def make(rng):
        a = f16(rng, (m, k), 1.0, 0.002, 0.01)
        b = f16(rng, (n, k), 1.0, 0.002, 0.01)
        return [("A", a), ("B", b), ("C", np.full((m, n), np.nan, np.float32)), m, n, k]
    return make


# rung -> (B's box rows, threads, dynamic shared bytes), as the rung's `ladder_info` reports them
# (tcforge.gemm.ladder._load reads the same on the GPU)
LADDER = {2: (128, 256, 66624), 3: (256, 384, 99392), 4: (128, 384, 99392), 5: (128, 384, 132160),
          6: (128, 384, 230464), 7: (128, 384, 230464), 8: (128, 384, 230464), 9: (128, 384, 230464)}


def _ladder_tma(rung: int, m: int, n: int, k: int, splits: int | None = None):
    """A rung's inputs with the tensor maps `tcforge.gemm.ladder.prepare` makes (its launch plan) over A, B and,
    for the TMA-store rungs, C; `splits` for rungs 8-9 (C then holds the fp32 partial planes)."""
    from tcforge.gemm import ladder
    from tcforge.ptx.emulate import TensorMap

    planes = splits or 1
    plan = ladder.launch_plan(ladder.rung(rung), m, n, k, planes, 132, LADDER[rung][0], 4)

    def make(rng):
        a = f16(rng, (m, k), 1.0, 0.002, 0.01)
        b = f16(rng, (n, k), 1.0, 0.002, 0.01)
        c = np.full((planes * m, n), np.nan, np.float32)
        maps = [TensorMap(buf, "f16", *spec) for buf, spec in zip("AB", plan.operand_maps, strict=True)]
        c_arg = "C" if plan.c_map is None else TensorMap("C", "f32", *plan.c_map)
        return [*maps, c_arg, m, n, k, *([] if splits is None else [splits]), ("A", a), ("B", b), ("C", c)]
    return make
