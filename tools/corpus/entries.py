"""The corpus entries: Entry (module, kernel, launch, input generator, outputs), the nvcc sample and Triton entry
lists, ENTRIES and AWAITING_GPU (the entries not yet run on a GPU)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tools.corpus.asyncproxy import (
    BULK_REDUCE_ENTRIES,
    LADDER,
    TMA_BOX_CASES,
    TMA_BOXES,
    TMA_IM2COL,
    TMA_REDUCE_ENTRIES,
    TMA_REPLACE_ENTRIES,
    _bulk_reduce,
    _gluon_conv,
    _gluon_im2col,
    _ladder_rung1,
    _ladder_tma,
    _mbarrier_scripts,
    _tma_box,
    _tma_im2col,
    _tma_reduce,
    _tma_replace,
    im2col_geometry,
)
from tools.corpus.images import (
    SULD_ENTRIES,
    SURED_ENTRIES,
    SUST_ENTRIES,
    TEX_ENTRIES,
    _image_queries,
    _surface_load,
    _surface_reduce,
    _surface_store,
    _tex_entry,
    _tex_probe,
    _tex_s8_sweep,
)
from tools.corpus.mma import (
    F64_M16_K,
    F64_SPECIAL,
    INT_MMA_ENTRIES,
    M884_FORMS,
    SP_FORMS,
    _f64_m16_inputs,
    _f64_mma_inputs,
    _fp8_k16_inputs,
    _int_mma_inputs,
    _k8_inputs,
    _m884_inputs,
    _mma_inputs,
    _sp_inputs,
    _tf32_mma_inputs,
    m884_name,
    sp_name,
)
from tools.corpus.modules import MODULES
from tools.corpus.values import E4M3_SPECIAL, F16_SPECIAL, _bf16, _sprinkle, e4m3, f16, f32, with_cancellations
from tools.corpus.wgmma import WG_FORMS, WG_SP_FORMS, _wgmma_base_offset, _wgmma_inputs, wg_name


@dataclass(frozen=True)
class Entry:
    """One corpus kernel: its module's PTX, kernel, launch, an input generator and the buffers it writes."""

    name: str
    module: str
    kernel: str | None  # None: the module's (Triton)
    grid: tuple
    block: tuple | None  # None: 32 x the module's warps (Triton)
    inputs: Callable  # rng -> one value per kernel parameter: a number or (buffer name, array)
    outputs: tuple
    shared: int | None = 0  # dynamic shared bytes; None: the module's (Triton)
    slow: bool = False  # outside the default test run

    @property
    def source(self) -> str:
        """'nvcc' or 'triton'."""
        return "nvcc" if self.module.startswith(("samples", "ladder")) else "triton"


# ---- the Triton entries' inputs --------------------------------------------------------------------------------------
def _matmul(dtype: str, m: int, n: int, k: int):
    def make(rng):
        if dtype == "e4m3":
            a = e4m3(rng, (m, k), 1.0, 0.0)
            b = e4m3(rng, (k, n), 1.0, 0.0)
            a[1] = _sprinkle(rng, a[1], 0.2, E4M3_SPECIAL)  # row 1 and column 2: NaN, 448, subnormals, zeros
            b[:, 2] = _sprinkle(rng, b[:, 2], 0.2, E4M3_SPECIAL)
        elif dtype == "bf16":
            a, b = _bf16(rng, (m, k)), _bf16(rng, (k, n))
        elif dtype == "f32":  # f32 words with low bits set (tf32 inputs drop them)
            a, b = f32(rng, (m, k), 1.0), f32(rng, (k, n), 1.0)
        else:
            a = f16(rng, (m, k), 1.0, 0.0, 0.01)
            b = f16(rng, (k, n), 1.0, 0.0, 0.01)
            a[1] = _sprinkle(rng, a[1].view(np.uint16), 0.1, F16_SPECIAL).view(np.float16)
            b[:, 2] = _sprinkle(rng, b[:, 2].view(np.uint16), 0.1, F16_SPECIAL).view(np.float16)
        return [("A", a), ("B", b), ("C", np.zeros((m, n), np.float16)), m, n, k, k, n, n]
    return make


def _grid_mm(module: str, m: int, n: int) -> tuple:
    cx = MODULES[module].constexprs
    return (-(-m // cx["BM"]) * -(-n // cx["BN"]), 1, 1)


def _mm_entry(name: str, dtype: str, m: int, n: int, k: int, slow: bool = False) -> Entry:
    return Entry(name, name, None, _grid_mm(name, m, n), None, _matmul(dtype, m, n, k), ("C",), None, slow)


def _desc_matmul(m: int, n: int, k: int):
    """`desc_matmul`: f16 A (m x k) and B (k x n) with specials in a row and a column, ragged against the 64 x 64 x
    32 tiles (TMA fills and clips); the global scratch the device descriptors are written to."""
    def make(rng):
        a = f16(rng, (m, k), 1.0, 0.0, 0.01)
        b = f16(rng, (k, n), 1.0, 0.0, 0.01)
        a[1] = _sprinkle(rng, a[1].view(np.uint16), 0.1, F16_SPECIAL).view(np.float16)
        b[:, 2] = _sprinkle(rng, b[:, 2].view(np.uint16), 0.1, F16_SPECIAL).view(np.float16)
        return [("A", a), ("B", b), ("C", np.full((m, n), 0x7E00, np.uint16).view(np.float16)), m, n, k,
                ("gscratch", np.zeros(4096, np.uint8))]
    return make


def _ws_matmul(dtype: str, m: int, n: int, k: int):
    """`ws_matmul`: A (m x k) and B (n x k), f16 or e4m3 codes, specials in a row of A and of B; f32 C poisoned
    with NaN; the global scratch of the device descriptors."""
    def make(rng):
        if dtype == "e4m3":
            a, b = e4m3(rng, (m, k), 1.0, 0.0), e4m3(rng, (n, k), 1.0, 0.0)
            a[1] = _sprinkle(rng, a[1], 0.2, E4M3_SPECIAL)
            b[2] = _sprinkle(rng, b[2], 0.2, E4M3_SPECIAL)
        else:
            a, b = f16(rng, (m, k), 1.0, 0.0, 0.01), f16(rng, (n, k), 1.0, 0.0, 0.01)
            a[1] = _sprinkle(rng, a[1].view(np.uint16), 0.1, F16_SPECIAL).view(np.float16)
            b[2] = _sprinkle(rng, b[2].view(np.uint16), 0.1, F16_SPECIAL).view(np.float16)
        return [("A", a), ("B", b), ("C", np.full((m, n), np.nan, np.float32)), m, n, k,
                ("gscratch", np.zeros(8192, np.uint8))]
    return make


def _attn(heads: int, length: int):
    def make(rng):
        q, k, v = (f16(rng, (heads, length, 64), 1.0, 0.0, 0.005) for _ in range(3))
        return [("Q", q), ("K", k), ("V", v), ("O", np.zeros_like(q)), length, np.float32(0.125 * 1.4426950408889634)]
    return make


def _softmax(rows: int, n: int, stride: int):
    def make(rng):
        x = f32(rng, (rows, stride), 3.0)
        x[0, :n:7] = -np.inf
        return [("x", x), ("y", np.zeros_like(x)), n, stride]
    return make


def _layernorm(rows: int, n: int):
    def make(rng):
        x = f16(rng, (rows, n), 2.0, 0.0, 0.01) + np.float16(rng.standard_normal() * 4)
        return [("x", x.astype(np.float16)), ("y", np.zeros((rows, n), np.float16)), ("w", f32(rng, n)),
                ("b", f32(rng, n)), ("stats", np.zeros(2 * rows, np.float32)), n, np.float32(1e-5)]
    return make


def _reduce_rows(rows: int, n: int):
    def make(rng):
        x = with_cancellations(rng, f32(rng, (rows, n), 10.0))
        xi = rng.integers(-1000, 1000, (rows, n), dtype=np.int32)
        return [("x", x), ("xi", xi), ("out", np.zeros(3 * rows, np.float32)), ("outi", np.zeros(2 * rows, np.int32)),
                ("cum", np.zeros((rows, n), np.int32)), n]
    return make


# ---- the nvcc samples' inputs, and the entry lists -------------------------------------------------------------------
def _u32(rng, n, hi=2**32):
    return rng.integers(0, hi, n, dtype=np.uint64).astype(np.uint32)


def _tf32_cvt_inputs(rng):
    """tf32_cvt: f32 words at every rounding case (low 13 bits below, at and above the half, odd and even kept
    bits), near the largest finite value, subnormals, infinities and NaN payloads, and random words."""
    top = rng.integers(0, 2**19, 1024, dtype=np.uint64).astype(np.uint32) << np.uint32(13)
    low = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    ties = (top[:, None] | low[None, :]).reshape(-1)
    edge = np.array([0x7F7FFFFF, 0x7F7FF000, 0x7F7FEFFF, 0x7F7FE000, 0xFF7FF000, 0x7F800000, 0xFF800000, 0x7FC00000,
                     0x7F800001, 0xFFC01234, 0x7FFFFFFF, 0x00000001, 0x00001000, 0x00001FFF, 0x807FFFFF, 0x00800000,
                     0x80000000, 0], np.uint32)
    x = np.concatenate([ties, edge, rng.integers(0, 2**32, 1024 - 18, dtype=np.uint64).astype(np.uint32)])
    return [("x", x), ("out", np.zeros(4 * x.size, np.uint32)), x.size]


def _elect_masks(rng):
    """One member mask per warp: the full warp, one lane, the top lane, a half, random sets."""
    fixed = np.array([0xFFFFFFFF, 1 << 17, 1 << 31, 0xFFFF0000], np.uint32)
    masks = np.concatenate([fixed, rng.integers(1, 2**32, 12, dtype=np.uint64).astype(np.uint32)])
    return [("masks", masks), ("leader", np.zeros(16 * 32, np.uint32)), ("elected", np.zeros(16 * 32, np.uint32))]


def _wmma_inputs(t: str):
    """`wmma_*`: four 16-row bands of A (16 x K each, row-major), B (K x 16, column-major: 16 rows of K), C per band;
    f16 with specials and subnormals, s8 over its range with C near the s32 ends, f32 words for tf32."""
    k = 32 if t == "tf32" else 64

    def make(rng):
        if t == "f16":
            a, b = f16(rng, (64, k), 1.0, 0.02, 0.01), f16(rng, (16, k), 1.0, 0.02, 0.01)
            c = f32(rng, (64, 16), 4.0)
        elif t == "s8":
            a, b = (rng.integers(-128, 128, s).astype(np.int8) for s in ((64, k), (16, k)))
            c = rng.integers(-2**31, 2**31, (64, 16)).astype(np.int32)
            c[::5] = np.where(c[::5] > 0, 2**31 - 1000, -2**31 + 1000)
        else:
            a, b, c = f32(rng, (64, k), 1.0), f32(rng, (16, k), 1.0), f32(rng, (64, 16), 4.0)
        return [("a", a), ("b", b), ("c", c), ("d", np.zeros_like(c))]
    return make


def _wmma_map(rng):
    """`wmma_map`: random words for the two source matrices of every block (the fragments only move bits), random
    words to fill the accumulators with, dumps and stored matrices poisoned."""
    return [("src", rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)),
            ("fill", rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)),
            ("out", np.full(62 * 1024, 0xDEADBEEF, np.uint32)), ("mat", np.full(10 * 4096, 0xDEADBEEF, np.uint32))]


def _wmma_copies(rng):
    """`wmma_copies`: finite f16 A (up to 32 x 16, row-major) and B (up to 16 x 32, column-major), D poisoned."""
    return [("a", f16(rng, 512, 1.0)), ("b", f16(rng, 512, 1.0)), ("d", np.full(48 * 256, np.nan, np.float32))]


def _wmma_more(rng):
    """`wmma_more`: f64 A, B (8 blocks of 128) and C (of 64) over a wide exponent range, specials in blocks 0 and 5;
    random s4 / u4 / b1 words (6 blocks of 8 rows of 12 words), s32 C with rows 0-1 near the top of the range and
    row 2 near the bottom (so .satfinite clamps where a wrapped sum differs); D and the dumps poisoned; a leading
    dimension 7 elements past whole words."""
    def vals(shape, spread):
        x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread, shape)).view(np.uint64)
        x[[0, 5]] = _sprinkle(rng, x[[0, 5]], 0.03, F64_SPECIAL)
        return x
    ic = rng.integers(-2**31, 2**31, (6, 8, 8)).astype(np.int32)
    ic[:, :2] = 2**31 - 1 - rng.integers(0, 4000, (6, 2, 8))
    ic[:, 2] = -2**31 + rng.integers(0, 4000, (6, 8))
    words = (6, 96)
    return [("fa", vals((8, 128), 40)), ("fb", vals((8, 128), 40)), ("fc", vals((8, 64), 60)),
            ("fd", np.full((8, 64), 0x7FF4DEADBEEF0000, np.uint64)),
            ("ia", rng.integers(0, 2**32, words, dtype=np.uint64).astype(np.uint32)),
            ("ib", rng.integers(0, 2**32, words, dtype=np.uint64).astype(np.uint32)), ("ic", ic),
            ("id", np.full((6, 64), 0x5A5A5A5A, np.uint32).view(np.int32)),
            ("dump", np.full(14 * 256, 0xDEADBEEF, np.uint32)), 7]


def _set_words(rng):
    """`set_forms`: 1024 word pairs — random bits, equal pairs, f32 specials and subnormals, f16 / bf16 lanes that are
    NaN, infinite, signed zeros or equal."""
    x = rng.integers(0, 2**32, (1024, 2), dtype=np.uint64).astype(np.uint32)
    x[:128, 1] = x[:128, 0]  # equal
    f32s = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.0, -1.0, 3e38], np.float32).view(np.uint32)
    x[128:384] = rng.choice(f32s, (256, 2))
    halves = np.array([0x7E00, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x3C00, 0x0001, 0x7FC0, 0xFF80, 0x3F80], np.uint32)
    x[384:640] = rng.choice(halves, (256, 2)) | (rng.choice(halves, (256, 2)) << np.uint32(16))
    return [("x", x), ("out", np.zeros((1024, 8), np.uint32)), 1024]


VIDEO_FORMS = (  # video_forms' 16 instructions in output order (tools/emulate_corpus_samples.cu)
    "vabsdiff4.u32.u32.u32 d, a, b, c", "vadd4.s32.s32.s32.sat d, a, b, c", "vsub4.u32.u32.u32.sat d, a, b, c",
    "vavrg4.s32.s32.s32 d, a, b, c", "vmin4.s32.u32.s32 d, a, b, c", "vmax4.u32.s32.u32.sat d, a, b, c",
    "vabsdiff4.s32.s32.s32.add d.b20, a, b, c", "vadd4.u32.u32.u32 d.b31, a.b0123, b.b4567, c",
    "vset4.s32.s32.lt d, a, b, c", "vset4.u32.u32.ge.add d, a, b, c", "vabsdiff2.u32.u32.u32.add d, a, b, c",
    "vadd2.s32.s32.s32.sat d, a, b, c", "vavrg2.u32.u32.u32 d.h1, a.h23, b.h01, c", "vmin2.s32.s32.s32 d, a, b, c",
    "vset2.s32.u32.ne d, a, b, c", "vsub2.s32.s32.s32.add d, a, b, c",
)


def _video_words(rng):
    """`video_forms`: 1024 {a, b, c} triples, the first half built from edge bytes (0, 1, 0x7f, 0x80, 0x81, 0xfe,
    0xff, 0x40), every fifth with b = a."""
    x = rng.integers(0, 2**32, (1024, 3), dtype=np.uint64).astype(np.uint32)
    edge = rng.choice(np.array([0x00, 0x01, 0x7F, 0x80, 0x81, 0xFE, 0xFF, 0x40], np.uint32), (512, 3, 4))
    x[:512] = (edge << np.array([0, 8, 16, 24], np.uint32)).sum(axis=2, dtype=np.uint32)
    x[::5, 1] = x[::5, 0]
    return [("x", x), ("out", np.zeros((1024, 16), np.uint32)), 1024]


def _video_scalar_words(rng):
    """`video_scalar`: the triples of `video_forms`, 32 results each."""
    x, _, n = _video_words(rng)
    return [x, ("out", np.zeros((1024, 32), np.uint32)), n]


def _fns_words(rng):
    """`fns_spaces`: 1024 {mask, base, offset} triples (edge masks, every base, offsets -33..33)."""
    w = np.zeros((1024, 4), np.uint32)
    w[:, 0] = rng.integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
    w[:64, 0] = rng.choice(np.array([0, 0xFFFFFFFF, 1, 0x80000000, 0xAAAAAAAA, 0x55555555], np.uint32), 64)
    w[:, 1] = rng.integers(0, 32, 1024)
    w[:, 2] = rng.integers(-33, 34, 1024).astype(np.int32).view(np.uint32)
    return [("w", w), ("out", np.zeros((1024, 2), np.uint32)), np.zeros(16, np.uint8), 1024]


def _mufu16(rng):
    """`mufu16` over every 16-bit pattern (x = 0..65535 in order; y a random permutation for the .x2 forms' high
    halves)."""
    x = np.arange(65536, dtype=np.uint16)
    return [("x", x), ("y", rng.permutation(x)), ("out0", np.zeros((65536, 4), np.uint32)),
            ("out1", np.zeros((65536, 4), np.uint32)), 65536]


def _samples() -> list[Entry]:
    """The nvcc-built CUDA-sample-style kernels and the inline-PTX mma kernels."""
    s80, s89 = "samples_sm80", "samples_sm89"

    def warp_reduce(rng):
        n = 1000
        x = with_cancellations(rng, f32(rng, n, 1.0))
        x[::97] = np.float32(1e-40)  # subnormals
        v = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        return [("x", x), ("v", v), ("sums", np.zeros(32, np.float32)), ("maxs", np.zeros(32, np.int32)),
                ("seg", np.zeros(n, np.int32)), n]

    def block_reduce(rng):
        n = 5000
        return [("x", with_cancellations(rng, f32(rng, n, 2.0))), ("out", np.zeros(8, np.float32)), n]

    def sgemm(rng):
        m, n, k = 50, 40, 70
        return [("A", f32(rng, (m, k))), ("B", f32(rng, (k, n))), ("C", f32(rng, (m, n))), m, n, k,
                np.float32(1.5), np.float32(-0.75)]

    def histogram(rng):
        n = 10000
        data = rng.integers(0, 256, n, dtype=np.uint8)
        data[rng.random(n) < 0.2] = 7
        return [("data", data), n, ("hist", np.zeros(256, np.uint32)),
                ("stats", np.array([0, 0, 0xFFFFFFFF, 0], np.uint32))]

    def scan_block(rng):
        n = 1000
        return [("x", with_cancellations(rng, f32(rng, n))), ("y", np.zeros(n, np.float32)),
                ("xi", rng.integers(-100, 100, n, dtype=np.int32)), ("yi", np.zeros(n, np.int32)), n]

    def scan_hillis(rng):
        n = 700
        return [("x", _u32(rng, n)), ("y", np.zeros(n, np.uint32)), n]

    def collatz(rng):
        n = 4096
        start = rng.integers(0, 100000, n, dtype=np.uint32)
        start[:6] = [0, 1, 27, 97, 871, 0xFFFFFFFF]
        return [("start", start), ("steps", np.zeros(n, np.uint32)), ("peak", np.zeros(n, np.uint64)), n]

    def mandelbrot(rng):
        w, h = 64, 48
        x0, y0 = np.float32(-2.1 + 0.1 * rng.random()), np.float32(-1.2 + 0.1 * rng.random())
        return [("iters", np.zeros(w * h, np.uint32)), ("mag", np.zeros(w * h, np.float32)), w, h, x0, y0,
                np.float32(3.0 / w), np.float32(2.4 / h), 200]

    def bitonic(rng):
        keys = rng.integers(0, 1000, 2048, dtype=np.uint32)
        return [("keys", keys), ("vals", np.arange(2048, dtype=np.uint32))]

    def transpose(rng):
        w, h = 70, 45
        return [("src", f32(rng, (h, w), 1.0, 0.05)), ("dst", np.zeros((w, h), np.float32)), w, h]

    def compact(rng):
        n = 700
        x = rng.integers(-50, 200, n, dtype=np.int32)
        x[100:132] = 0  # one warp whose all() is false
        x[300] = -2000000
        return [("x", x), ("out", np.zeros(768, np.int32)), ("counts", np.zeros(3, np.int32)),
                ("votes", np.zeros(24, np.uint32)), n]

    def softmax_warp(rng):
        rows, cols = 16, 100
        x = f32(rng, (rows, cols), 4.0)
        x[3, 5] = np.inf
        x[4] = -np.inf
        x[5, 7] = np.nan
        return [("x", x), ("y", np.zeros_like(x)), rows, cols]

    def layernorm_block(rng):
        rows, cols = 6, 300
        return [("x", f32(rng, (rows, cols), 3.0) + np.float32(5)), ("g", f32(rng, cols)), ("b", f32(rng, cols)),
                ("y", np.zeros((rows, cols), np.float32)), cols, np.float32(1e-5)]

    def bit_mix(rng):
        n = 512
        a, b = _u32(rng, n), _u32(rng, n)
        a[:4] = [0, 0xFFFFFFFF, 0x80000000, 1]
        b[4:8] = [0, 0xFFFFFFFF, 0x80000000, 1]
        return [("a", a), ("b", b), ("out", np.zeros(4 * n, np.uint32)), ("out64", np.zeros(n, np.uint64)), n]

    def half2_ops(rng):
        n = 512
        x, y = (f16(rng, 2 * n, 4.0, 0.08, 0.04).view(np.uint32) for _ in range(2))
        s = f32(rng, n, 2.0, 0.05)
        return [("x", x), ("y", y), ("s", s), ("out", np.zeros(3 * n, np.uint32)), ("outb", np.zeros(n, np.uint32)),
                n]

    def float_specials(rng):
        n = 512
        a, b, c = (f32(rng, n, 1e3, 0.3) for _ in range(3))
        return [("a", a), ("b", b), ("c", c), ("out", np.zeros(8 * n, np.float32)), ("outi", np.zeros(2 * n, np.int32)),
                n]

    def transcend(rng):
        n = 512
        x = f32(rng, n, 10.0, 0.05)
        x[::5] = (rng.standard_normal(len(x[::5])) * 10.0 ** rng.uniform(3, 38, len(x[::5]))).astype(np.float32)
        return [("x", x), ("out", np.zeros(4 * n, np.float32)), n]

    def block_votes(rng):
        n = 300
        x = rng.integers(-150, 150, n).astype(np.int32)
        x[128:256] = np.abs(x[128:256]) + 1  # the middle CTA: every value positive
        return [("x", x), ("f", f32(rng, n, 4.0, 0.05)), ("out", np.zeros(3 * n, np.int32)),
                ("outf", np.zeros(n, np.float32)), n]

    def divergent(rng):
        n = 512
        x = _u32(rng, n)
        x[:3] = [0, 1, 2]
        return [("x", x), ("out", np.zeros(n, np.uint32)), n]

    def mma_ldmatrix(rng):
        blocks, k = 8, 64
        a = f16(rng, (blocks, 16, k), 1.0, 0.0, 0.02)
        b = f16(rng, (blocks, k, 8), 1.0, 0.0, 0.02)
        a[0] = _sprinkle(rng, a[0].view(np.uint16), 0.05, F16_SPECIAL).view(np.float16)
        return [("A", a), ("B", b), ("D", np.zeros((blocks, 16, 8), np.float16)), k]

    e = Entry
    return [
        e("cu_warp_reduce", s80, "warp_reduce", (4, 1, 1), (256, 1, 1), warp_reduce, ("sums", "maxs", "seg")),
        e("cu_block_reduce", s80, "block_reduce", (8, 1, 1), (256, 1, 1), block_reduce, ("out",)),
        e("cu_sgemm_tiled", s80, "sgemm_tiled", (3, 4, 1), (16, 16, 1), sgemm, ("C",)),
        e("cu_histogram256", s89, "histogram256", (8, 1, 1), (256, 1, 1), histogram, ("hist", "stats")),
        e("cu_scan_block", s80, "scan_block", (2, 1, 1), (512, 1, 1), scan_block, ("y", "yi")),
        e("cu_scan_hillis", s89, "scan_hillis", (3, 1, 1), (256, 1, 1), scan_hillis, ("y",), 2048),
        e("cu_collatz", s80, "collatz", (32, 1, 1), (128, 1, 1), collatz, ("steps", "peak")),
        e("cu_mandelbrot", s89, "mandelbrot", (4, 6, 1), (16, 8, 1), mandelbrot, ("iters", "mag")),
        e("cu_bitonic_sort", s80, "bitonic_sort", (2, 1, 1), (512, 1, 1), bitonic, ("keys", "vals")),
        e("cu_transpose_padded", s80, "transpose_padded", (3, 2, 1), (32, 8, 1), transpose, ("dst",)),
        e("cu_compact", s89, "compact", (3, 1, 1), (256, 1, 1), compact, ("out", "counts", "votes")),
        e("cu_softmax_warp", s80, "softmax_warp", (4, 1, 1), (128, 1, 1), softmax_warp, ("y",)),
        e("cu_layernorm_block", s89, "layernorm_block", (6, 1, 1), (128, 1, 1), layernorm_block, ("y",)),
        e("cu_bit_mix", s89, "bit_mix", (4, 1, 1), (128, 1, 1), bit_mix, ("out", "out64")),
        e("cu_half2_ops", s80, "half2_ops", (4, 1, 1), (128, 1, 1), half2_ops, ("out", "outb")),
        e("cu_float_specials", s80, "float_specials", (4, 1, 1), (128, 1, 1), float_specials, ("out", "outi")),
        e("cu_transcend", s89, "transcend", (4, 1, 1), (128, 1, 1), transcend, ("out",)),
        e("cu_divergent", s80, "divergent", (4, 1, 1), (128, 1, 1), divergent, ("out",)),
        e("cu_block_votes", s80, "block_votes", (3, 1, 1), (128, 1, 1), block_votes, ("out", "outf")),
        e("mma_f16_special", s80, "mma_f16_special", (4, 1, 1), (128, 1, 1), _mma_inputs(False, 16, 1), ("d",)),
        e("mma_f16_special_chain4", s89, "mma_f16_special", (2, 1, 1), (128, 1, 1), _mma_inputs(False, 8, 4),
          ("d",)),
        e("mma_e4m3_special", s89, "mma_e4m3_special", (4, 1, 1), (128, 1, 1), _mma_inputs(True, 16, 1), ("d",)),
        e("mma_e4m3_special_chain4", s89, "mma_e4m3_special", (2, 1, 1), (128, 1, 1), _mma_inputs(True, 8, 4),
          ("d",)),
        *(e(name, s80, "mma_int_special", (4, 1, 1), (128, 1, 1), _int_mma_inputs(form, k, ta, tb), ("d",))
          for name, (form, _, k, ta, tb, _, _) in INT_MMA_ENTRIES.items()),
        *(e(f"mma_tf32_{name}", s80, "mma_tf32_special", (4, 1, 1), (128, 1, 1), _tf32_mma_inputs(form), ("d",))
          for form, name in enumerate(("k8_raw", "k8_rna", "k4_raw"))),
        e("mma_f64_special", s80, "mma_f64_special", (4, 1, 1), (128, 1, 1), _f64_mma_inputs(), ("d",)),
        *(e(f"mma_f64_m16n8k{k}", "samples_sm90a", "mma_f64_m16_special", (4, 1, 1), (128, 1, 1),
            _f64_m16_inputs(form), ("d",)) for form, k in enumerate(F64_M16_K)),
        *(e(f"mma_k8_{name}", s80, "mma_a2b1_special", (4, 1, 1), (128, 1, 1), _k8_inputs(form), ("d",))
          for form, name in enumerate(("f32_f16", "f32_bf16", "f16_f16"))),
        *(e(m884_name(form), s80, "mma_m884_special", (4, 1, 1), (128, 1, 1), _m884_inputs(form), ("d",))
          for form in range(len(M884_FORMS))),
        *(e(f"mma_fp8_k16_{name}", s89, "mma_a2b1_special", (4, 1, 1), (128, 1, 1), _fp8_k16_inputs(form), ("d",))
          for form, name in ((3, "f32_e4m3"), (4, "f16_e5m2_e4m3"))),
        e("mma_ldmatrix_f16", s80, "mma_ldmatrix_f16", (8, 1, 1), (32, 1, 1), mma_ldmatrix, ("D",),
          (16 * 64 + 64 * 8) * 2),
        *(e(wg_name(f), "samples_sm90a", "wgmma_forms", (f.ctas, 1, 1),
            (128, 1, 1), _wgmma_inputs(f), ("d",)) for f in WG_FORMS),
        *(e(wg_name(f), "samples_sm90a", "wgmma_sp_forms", (f.ctas, 1, 1),
            (128, 1, 1), _wgmma_inputs(f), ("d",)) for f in WG_SP_FORMS),
        *(e(sp_name(form, probe), "samples_sm90a", "mma_sp_special", (4, 1, 1), (128, 1, 1), _sp_inputs(form, probe),
            ("d",)) for form in range(len(SP_FORMS)) for probe in (True, False)),
        e("cu_tf32_cvt", "samples_sm90a", "tf32_cvt", (56, 1, 1), (128, 1, 1), _tf32_cvt_inputs, ("out",)),
        e("cu_elect", "samples_sm90a", "elect_lanes", (4, 1, 1), (128, 1, 1), _elect_masks, ("leader", "elected")),
        *(e(f"cu_tma_box_{label}_{x}_{y}", "samples_sm90a", "tma_box", (1, 1, 1), (128, 1, 1),
            _tma_box(*TMA_BOXES[label], x, y), ("dump", "out"))
          for label, x, y in TMA_BOX_CASES),
        *(e(f"cu_tma_nanfill_{label}_0_8", "samples_sm90a", "tma_box", (1, 1, 1), (128, 1, 1),
            _tma_box(*TMA_BOXES[label], 0, 8, "nan"), ("dump", "out")) for label in ("plain_f16", "sw32_f32")),
        *(e(name, "samples_sm90a", k, (1, 1, 1), (128, 1, 1), _tma_replace(k, z, x, y), ("dump", "status"))
          for name, (k, z, x, y) in TMA_REPLACE_ENTRIES.items()),
        *(e(name, "samples_sm90a", f"tma_im2col{case[0]}", (im2col_geometry(case)[2], 1, 1), (128, 1, 1),
            _tma_im2col(name), ("dump",)) for name, case in TMA_IM2COL.items()),
        e("cu_mufu16_all", "samples_sm90a", "mufu16", (512, 1, 1), (128, 1, 1), _mufu16, ("out0", "out1")),
        e("cu_set_forms", "samples_sm90a", "set_forms", (8, 1, 1), (128, 1, 1), _set_words, ("out",)),
        *(e(f"cu_wmma_{t}", "samples_sm90a", f"wmma_{t}", (4, 1, 1), (32, 1, 1), _wmma_inputs(t), ("d",))
          for t in ("f16", "s8", "tf32")),
        e("cu_wmma_fragment_map", "samples_sm90a", "wmma_map", (62, 1, 1), (32, 1, 1), _wmma_map, ("out", "mat")),
        e("cu_wmma_copies", "samples_sm90a", "wmma_copies", (48, 1, 1), (32, 1, 1), _wmma_copies, ("d",)),
        e("cu_wmma_more", "samples_sm90a", "wmma_more", (14, 1, 1), (32, 1, 1), _wmma_more, ("fd", "id", "dump")),
        e("cu_alloca", "samples_sm90a", "alloca_sum", (4, 1, 1), (64, 1, 1),
          lambda rng: [("n", rng.integers(1, 40, 256).astype(np.int32)), ("out", np.full(256, -1, np.int32))],
          ("out",)),
        e("cu_fns_spaces", "samples_sm90a", "fns_spaces", (8, 1, 1), (128, 1, 1), _fns_words, ("out",)),
        e("cu_video_forms", "samples_sm90a", "video_forms", (8, 1, 1), (128, 1, 1), _video_words, ("out",)),
        e("cu_video_scalar", "samples_sm90a", "video_scalar", (8, 1, 1), (128, 1, 1), _video_scalar_words,
          ("out",)),
        e("cu_int_packs", "samples_sm90a", "int_packs", (4, 1, 1), (128, 1, 1),
          lambda rng: [("x", np.concatenate([rng.integers(-300, 300, (512, 2)), rng.integers(-2**31, 2**31, (512, 1))],
                                            1).astype(np.int32)), ("out", np.zeros((512, 4), np.uint32)), 512],
          ("out",)),
        e("cu_bulk_copy", "samples_sm90a", "bulk_copy", (1, 1, 1), (64, 1, 1),
          lambda rng: [("src", rng.integers(0, 2**32, (96, 4), dtype=np.uint32)),
                       ("dst", np.full((64, 4), 0xABABABAB, np.uint32)), 5, 7, 3 * 256 + 16], ("dst",)),
        *(e(name, "samples_sm90a", k, (16, 1, 1), (128, 1, 1), _tex_entry(t, c, specials=sp), ("out",))
          for name, (k, t, c, sp) in TEX_ENTRIES.items()),
        *(e(f"tex_linear_{probe}{'_norm' * norm}_probe", "samples_sm90a", "tex2d_ff", (16, 1, 1), (128, 1, 1),
            _tex_probe(probe, norm), ("out",)) for probe, norm in (("weights", False), ("blend", False),
                                                                   ("weights", True))),
        *(e(f"tex3d_linear_weights{upper}_probe", "samples_sm90a", "tex3d_ff", (16, 1, 1), (128, 1, 1),
            _tex_probe(f"weights3d_z{upper}"), ("out",)) for upper in (0, 1)),
        *(e(f"cu_wgmma_base_offset{base}_probe", "samples_sm90a", "wgmma_base_offset", (2, 1, 1), (128, 1, 1),
            _wgmma_base_offset(base), ("out",)) for base in (0, 1, 3, 5)),
        *(e(f"cu_wgmma_base_offset{base}_sw{128 >> (swz - 1)}_probe", "samples_sm90a", "wgmma_base_offset_sw",
            (2, 1, 1), (128, 1, 1), _wgmma_base_offset(base, swz), ("out",))
          for swz, base in ((2, 0), (2, 1), (2, 2), (3, 0), (3, 1))),
        e("tex_s8_linear_sweep_probe", "samples_sm90a", "tex2d_ff", (128, 1, 1), (128, 1, 1), _tex_s8_sweep,
          ("out",)),
        *(e(name, "samples_sm90a", k, (8, 1, 1), (128, 1, 1), _surface_load(sf, step, inside=inside), ("out",))
          for name, (k, sf, step, inside) in SULD_ENTRIES.items()),
        *(e(name, "samples_sm90a", k, (1, 1, 1), (32, 1, 1), _surface_store(sf, step, vals, inside=inside), ("sf",))
          for name, (k, sf, step, vals, inside) in SUST_ENTRIES.items()),
        *(e(name, "samples_sm90a", name, (4, 1, 1), (128, 1, 1), _surface_reduce(sf, wide, pad), ("sf",))
          for name, (sf, wide, pad) in SURED_ENTRIES.items()),
        *(e(name, "samples_sm90a", k, (1, 1, 1), (128, 1, 1), _tma_reduce(t, x, y), ("out",))
          for name, (k, t, x, y) in TMA_REDUCE_ENTRIES.items()),
        *(e(name, "samples_sm90a", name, (1, 1, 1), (128, 1, 1), _bulk_reduce(t), ("dst",))
          for name, t in BULK_REDUCE_ENTRIES.items()),
        e("cu_image_queries", "samples_sm90a", "image_queries", (1, 1, 1), (32, 1, 1), _image_queries, ("out",)),
        e("cu_mbarrier_steps", "samples_sm90a", "mbarrier_steps", (2, 1, 1), (256, 1, 1), _mbarrier_scripts(16, 24),
          ("out",)),
        e("ladder_rung1_f16_cp_async_sw64", "ladder_rung1_sm90a", "ladder_gemm", (2, 1, 1), (256, 1, 1),
          _ladder_rung1(256, 128, 160), ("C",), 3 * 2 * 128 * 64 + 1024),
        *(e(f"ladder_rung{r}_{label}", f"ladder_rung{r}_sm90a", "ladder_gemm", grid, (LADDER[r][1], 1, 1),
            _ladder_tma(r, *shape), ("C",), LADDER[r][2])
          for r, label, grid, shape in (
              (2, "tma_warpspec", (2, 1, 1), (256, 128, 160)),
              (3, "bn256_setmaxnreg", (1, 1, 1), (128, 256, 160)),
              (4, "cluster_multicast", (2, 1, 1), (256, 256, 160)),
              (5, "tma_store", (2, 1, 1), (256, 256, 96)),
              (6, "bk64", (2, 1, 1), (256, 256, 320)),
              (7, "persistent_walk", (2, 1, 1), (512, 512, 128)),  # one cluster walks all four tiles
              (8, "splitk_planes", (4, 1, 1), (256, 256, 512, 2)),
              (9, "hoist_splitk_walk", (2, 1, 1), (512, 256, 256, 2)))),
    ]


def _triton_entries() -> list[Entry]:
    e = Entry
    return [
        _mm_entry("mm_f16_f16acc_sm80_64x64x32", "f16", 128, 128, 96),
        _mm_entry("mm_f16_f16acc_sm80_128x128x64", "f16", 256, 128, 256),
        _mm_entry("mm_f16_f16acc_sm89_64x32x64_ragged", "f16", 100, 72, 100),
        _mm_entry("mm_f16_f16acc_sm80_16x32x16_w1", "f16", 48, 64, 64),
        _mm_entry("mm_e4m3_f16acc_sm89_64x64x64", "e4m3", 128, 128, 128),
        _mm_entry("mm_e4m3_f16acc_sm89_128x64x128_w8", "e4m3", 256, 128, 256),
        _mm_entry("mm_e4m3_f16acc_sm89_32x32x64_ragged", "e4m3", 40, 56, 96),
        _mm_entry("mm_f16_f32acc_sm80_128x128x64", "f16", 128, 128, 192),
        _mm_entry("mm_bf16_f32acc_sm80_64x64x32", "bf16", 128, 64, 96),
        _mm_entry("mm_f16_f32acc_sm90_128x128x64", "f16", 256, 128, 192),
        _mm_entry("mm_bf16_f32acc_sm90_64x128x32", "bf16", 128, 256, 96),
        _mm_entry("mm_f16_f16acc_sm90_64x64x64_ragged", "f16", 100, 72, 136),
        _mm_entry("mm_e4m3_f32acc_sm90_64x128x128", "e4m3", 128, 128, 256),
        _mm_entry("mm_e4m3_f32acc_sm89_64x64x64", "e4m3", 64, 128, 128),
        _mm_entry("mm_f32_tf32_sm90_64x64x32", "f32", 128, 128, 96),
        e("attn_f16acc_causal_sm80", "attn_f16acc_causal_sm80", None, (2, 2, 1), None, _attn(2, 128), ("O",), None),
        e("attn_f32acc_sm80", "attn_f32acc_sm80", None, (2, 2, 1), None, _attn(2, 128), ("O",), None),
        e("softmax_exact_sm80", "softmax_exact_sm80", None, (8, 1, 1), None, _softmax(8, 200, 256), ("y",), None),
        e("softmax_tl_exp_sm80", "softmax_tl_exp_sm80", None, (8, 1, 1), None, _softmax(8, 100, 128), ("y",), None),
        e("layernorm_sm80", "layernorm_sm80", None, (4, 1, 1), None, _layernorm(4, 384), ("y", "stats"), None),
        e("reduce_rows_sm89", "reduce_rows_sm89", None, (6, 1, 1), None, _reduce_rows(6, 200),
          ("out", "outi", "cum"), None),
        e("im2col_gluon_sm90", "im2col_gluon_sm90", None, (2, 9, 1), None, _gluon_im2col, ("out",), None),
        e("conv_gluon_sm90", "conv_gluon_sm90", None, (1, 1, 1), None, _gluon_conv, ("out",), None),
        e("desc_mm_f16_sm90", "desc_mm_f16_sm90", None, (2, 2, 1), None, _desc_matmul(100, 72, 136), ("C",), None),
        *(e(f"ws_mm_{t}_sm90", f"ws_mm_{t}_sm90", None, (2, 2, 1), None, _ws_matmul(t, 200, 72, 192), ("C",), None)
          for t in ("f16", "e4m3")),
    ]


ENTRIES: list[Entry] = _samples() + _triton_entries()
# entries tests/data/emulate/corpus.npz lacks: cu_image_queries, which the H100 cannot run (its driver, 580.159.04,
# refuses any module with `suq` on a bindless surface (CUDA_ERROR_NOT_SUPPORTED, cubin or PTX) and loads one whose
# kernels use `txq` without finding those kernels (CUDA_ERROR_NOT_FOUND)); tests/data/emulate/corpus_pending.npz
# holds later runs of trilinear entries the corpus has, one or two samples off each
AWAITING_GPU: set[str] = {"cu_image_queries"}
