"""The corpus's modules (Triton kernels and options, the nvcc samples) and entries (launch, inputs, outputs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# ---- modules: how each PTX is made -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Triton:
    """A Triton kernel compiled for a GPUTarget: kernel function name, signature types, constexprs, options."""

    fn: str
    types: dict
    constexprs: dict
    arch: int
    warps: int
    stages: int = 2
    div16: tuple = ()  # parameters specialised as multiples of 16 (tt.divisibility), as Triton's launcher would


@dataclass(frozen=True)
class Nvcc:
    """tools/emulate_corpus_samples.cu (or a teaching-ladder rung: `rung`) through `nvcc -ptx -O3 -arch=sm_XX`."""

    arch: str
    rung: int | None = None


_MM = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "sam", "sbk", "scm")


def _mm(dtype: str, arch: int, bm: int, bn: int, bk: int, warps: int, stages: int, acc: str, group: int = 1,
        even: bool = True) -> Triton:
    types = dict(zip(_MM, [dtype, dtype, "*fp16"] + ["i32"] * 6, strict=True))
    cx = {"sak": 1, "sbn": 1, "scn": 1, "BM": bm, "BN": bn, "BK": bk, "GROUP": group, "ACC": acc}
    return Triton("matmul", types, cx, arch, warps, stages, _MM if even else ("a_ptr", "b_ptr", "c_ptr"))


_ATTN = dict(zip(("q_ptr", "k_ptr", "v_ptr", "o_ptr", "L", "scale"), ["*fp16"] * 4 + ["i32", "fp32"], strict=True))

MODULES: dict[str, Triton | Nvcc] = {
    "samples_sm80": Nvcc("80"),
    "samples_sm89": Nvcc("89"),
    "samples_sm90a": Nvcc("90a"),
    **{f"ladder_rung{r}_sm90a": Nvcc("90a", rung=r) for r in range(1, 10)},
    "mm_f16_f16acc_sm80_64x64x32": _mm("*fp16", 80, 64, 64, 32, 4, 3, "fp16"),
    "mm_f16_f16acc_sm80_128x128x64": _mm("*fp16", 80, 128, 128, 64, 8, 3, "fp16", group=2),
    "mm_f16_f16acc_sm89_64x32x64_ragged": _mm("*fp16", 89, 64, 32, 64, 2, 4, "fp16", even=False),
    "mm_f16_f16acc_sm80_16x32x16_w1": _mm("*fp16", 80, 16, 32, 16, 1, 2, "fp16"),
    "mm_e4m3_f16acc_sm89_64x64x64": _mm("*fp8e4nv", 89, 64, 64, 64, 4, 3, "fp16"),
    "mm_e4m3_f16acc_sm89_128x64x128_w8": _mm("*fp8e4nv", 89, 128, 64, 128, 8, 2, "fp16", group=2),
    "mm_e4m3_f16acc_sm89_32x32x64_ragged": _mm("*fp8e4nv", 89, 32, 32, 64, 2, 3, "fp16", even=False),
    "mm_f16_f32acc_sm80_128x128x64": _mm("*fp16", 80, 128, 128, 64, 4, 3, "fp32"),
    "mm_bf16_f32acc_sm80_64x64x32": _mm("*bf16", 80, 64, 64, 32, 4, 3, "fp32"),
    "mm_f16_f32acc_sm90_128x128x64": _mm("*fp16", 90, 128, 128, 64, 4, 3, "fp32"),  # wgmma, B MN-major
    "mm_bf16_f32acc_sm90_64x128x32": _mm("*bf16", 90, 64, 128, 32, 4, 3, "fp32"),
    "mm_f16_f16acc_sm90_64x64x64_ragged": _mm("*fp16", 90, 64, 64, 64, 4, 3, "fp16", even=False),
    "mm_e4m3_f32acc_sm90_64x128x128": _mm("*fp8e4nv", 90, 64, 128, 128, 4, 3, "fp32"),
    "mm_e4m3_f32acc_sm89_64x64x64": _mm("*fp8e4nv", 89, 64, 64, 64, 4, 3, "fp32"),
    "mm_f32_tf32_sm90_64x64x32": _mm("*fp32", 90, 64, 64, 32, 4, 3, "fp32"),  # wgmma tf32 (Triton's default)
    "attn_f16acc_causal_sm80": Triton("attn_fwd", _ATTN, {"D": 64, "BM": 64, "BN": 32, "ACC": "fp16", "CAUSAL": True,
                                                          "EXACT": True}, 80, 4, 2),
    "attn_f32acc_sm80": Triton("attn_fwd", _ATTN, {"D": 64, "BM": 64, "BN": 64, "ACC": "fp32", "CAUSAL": False,
                                                   "EXACT": False}, 80, 4, 2),
    "softmax_exact_sm80": Triton("softmax", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "stride": "i32"},
                                 {"BLOCK": 256, "EXACT": True}, 80, 4),
    "softmax_tl_exp_sm80": Triton("softmax", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "stride": "i32"},
                                  {"BLOCK": 128, "EXACT": False}, 80, 2),
    "layernorm_sm80": Triton("layernorm", {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                           "stats_ptr": "*fp32", "n": "i32", "eps": "fp32"}, {"BLOCK": 512}, 80, 4),
    "reduce_rows_sm89": Triton("reduce_rows", {"x_ptr": "*fp32", "xi_ptr": "*i32", "out_ptr": "*fp32",
                                               "outi_ptr": "*i32", "cum_ptr": "*i32", "n": "i32"},
                               {"BLOCK": 256}, 89, 4),
}


# ---- input generators -------------------------------------------------------------------------------------------

F16_SPECIAL = np.array([0x7E00, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200, 0x7BFF,
                        0xFBFF, 0x0400, 0x7D00, 0xFE01, 0x3C00, 0xBC00], np.uint16)
F16_SUBNORMAL_OR_ZERO = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200, 0x8155, 0x0033], np.uint16)
F32_SPECIAL = np.array([0x7FC00000, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001,
                        0x007FFFFF, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800001, 0xFFC00123,
                        0x3F800000, 0xBF000000, 0x4B000000, 0xCF000000], np.uint32)
BF16_SPECIAL = np.array([0x7FC0, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x7F7F, 0xFF7F, 0x3F80],
                        np.uint16)
E5M2_SPECIAL = np.array([0x7E, 0x7C, 0xFC, 0x00, 0x80, 0x01, 0x81, 0x03, 0x7B, 0xFB, 0x04, 0x3C], np.uint8)
E4M3_SPECIAL = np.array([0x7F, 0xFF, 0x00, 0x80, 0x01, 0x81, 0x07, 0x87, 0x7E, 0xFE, 0x08, 0x88], np.uint8)


def _sprinkle(rng, bits: np.ndarray, rate: float, values: np.ndarray) -> np.ndarray:
    """Replace a fraction `rate` of the elements (raw bits) by values drawn from `values`."""
    hit = rng.random(bits.shape) < rate
    out = bits.copy()
    out[hit] = rng.choice(values, int(hit.sum()))
    return out


def f16(rng, shape, scale: float = 1.0, special: float = 0.0, subnormal: float = 0.0) -> np.ndarray:
    """Normal f16 values with a fraction of special (NaN, inf, subnormal, 0) and subnormal-or-zero elements."""
    bits = (rng.standard_normal(shape) * scale).astype(np.float16).view(np.uint16)
    bits = _sprinkle(rng, bits, subnormal, F16_SUBNORMAL_OR_ZERO)
    return _sprinkle(rng, bits, special, F16_SPECIAL).view(np.float16)


def f32(rng, shape, scale: float = 1.0, special: float = 0.0) -> np.ndarray:
    """Normal f32 values with a fraction of specials (NaN with payloads, infinities, subnormals, signed zeros)."""
    bits = (rng.standard_normal(shape) * scale).astype(np.float32).view(np.uint32)
    return _sprinkle(rng, bits, special, F32_SPECIAL).view(np.float32)


def e4m3(rng, shape, scale: float = 1.0, special: float = 0.0) -> np.ndarray:
    """e4m3 bytes (uint8) of normal values, with a fraction of NaN, 448, subnormals and zeros."""
    bits = _to_e4m3(rng.standard_normal(shape) * scale)
    return _sprinkle(rng, bits, special, E4M3_SPECIAL)


def _to_e4m3(x: np.ndarray) -> np.ndarray:
    """e4m3 codes (uint8) of float values: through f16, rounded to nearest even, saturated to ±448."""
    from tcforge.numerics.codecs import f16_to_e4m3_satfinite

    return np.asarray(f16_to_e4m3_satfinite(np.asarray(x).astype(np.float16).view(np.uint16)), np.uint8)


def _bf16(rng, shape) -> np.ndarray:
    """bf16 bits (uint16) of normal values."""
    x = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
    return ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)


def with_cancellations(rng, x: np.ndarray, rate: float = 0.1) -> np.ndarray:
    """Negated copies of earlier elements at random places (sums with exact cancellations)."""
    flat = x.reshape(-1).copy()
    hit = np.flatnonzero(rng.random(flat.size) < rate)
    hit = hit[hit > 0]
    flat[hit] = -flat[rng.integers(0, hit, hit.size)]
    return flat.reshape(x.shape)


# ---- mma fragments (PTX ISA layouts, lane = 4 * group + thread in group) ------------------------------------------

def a_fragments(a: np.ndarray, bits: int | None = None) -> np.ndarray:
    """A tiles (W, 16, K) of `bits`-bit elements (default: the dtype's width) -> (W, K·bits/64, 32) uint32 words in
    mma.sync's A fragment order: word j of lane 4g + t holds row g + 8 (j & 1), k = K/2 (j >> 1) + e t .. + e - 1
    (e = 32 / bits elements, element 0 in the lowest bits)."""
    bits = bits or 8 * a.itemsize
    w, _, k = a.shape
    e, half = 32 // bits, k // 2
    out = np.zeros((w, k * bits // 64, 32), np.uint32)
    for j in range(out.shape[1]):
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            row, k0 = g + 8 * (j & 1), half * (j >> 1) + e * t
            out[:, j, lane] = _pack(a[:, row, k0:k0 + e], bits)
    return out


def b_fragments(b: np.ndarray, bits: int | None = None) -> np.ndarray:
    """B tiles (W, K, 8) -> (W, K·bits/128, 32) uint32 words in mma.sync's B fragment order: word j of lane 4g + t
    holds column g, k = K/2 j + e t .. + e - 1."""
    bits = bits or 8 * b.itemsize
    w, k, _ = b.shape
    e, half = 32 // bits, k // 2
    out = np.zeros((w, k * bits // 128, 32), np.uint32)
    for j in range(out.shape[1]):
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            out[:, j, lane] = _pack(b[:, half * j + e * t:half * j + e * t + e, g], bits)
    return out


def _pack(elems: np.ndarray, bits: int) -> np.ndarray:
    """(..., 32 / bits) elements (bit patterns or integers) -> (...) uint32 words, element 0 in the lowest bits."""
    shifts = np.arange(elems.shape[-1], dtype=np.uint64) * bits
    return ((elems.astype(np.uint64) & ((1 << bits) - 1)) << shifts).sum(axis=-1).astype(np.uint32)


def c_fragments(c: np.ndarray) -> np.ndarray:
    """f16 C tiles (W, 16, 8) (uint16 bits) -> (W, 2, 32) uint32 words."""
    out = np.zeros((c.shape[0], 2, 32), np.uint32)
    for j in range(2):
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            out[:, j, lane] = np.ascontiguousarray(c[:, g + 8 * j, 2 * t:2 * t + 2]).view(np.uint32)[:, 0]
    return out


def c32_fragments(c: np.ndarray) -> np.ndarray:
    """32-bit C tiles (W, 16, 8) (f32 bits or s32) -> (W, 4, 32) uint32 words, word i of lane 4g + t: row
    g + 8 (i >> 1), column 2t + (i & 1)."""
    lane, i = np.arange(32), np.arange(4)[:, None]
    words = np.ascontiguousarray(c[:, (lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)])
    return words.astype(np.int32).view(np.uint32) if words.dtype.kind == "i" else words.astype(np.uint32)


def int_mma_words(a: np.ndarray, b: np.ndarray, c: np.ndarray, bits: int = 8) -> tuple[np.ndarray, np.ndarray,
                                                                                          np.ndarray]:
    """Integer tiles A (W, 16, K), B (W, K, 8) of `bits`-bit elements (8: K = 16 or 32; 4: K = 32 or 64; 1: K = 128
    or 256) and s32 C (W, 16, 8) -> fragment words per warp and lane in the kernel's fixed slots: A (W, 4, 32) and B
    (W, 2, 32) as `a_fragments` / `b_fragments` (the smaller K of each width fills the first 2 A words and the first B
    word; an m8n8 shape reads the first A word: rows 0-7), C (W, 4, 32), word i: row g + 8 (i >> 1), column
    2t + (i & 1) (m8n8: the first 2 words)."""
    w = a.shape[0]
    aw, bw = (np.zeros((w, n, 32), np.uint32) for n in (4, 2))
    af, bf = a_fragments(a, bits), b_fragments(b, bits)
    aw[:, :af.shape[1]], bw[:, :bf.shape[1]] = af, bf
    return aw, bw, c32_fragments(c)


INT_RANGES = {"s8": (-128, 127), "u8": (0, 255), "s4": (-8, 7), "u4": (0, 15), "b1": (0, 1)}
INT_BITS = {"s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1}


def int_mma_tiles(rng, warps: int, k: int, ta: str, tb: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full-range integer A and B (int64 values of their types), and an s32 C with 40 % of its values within a
    product sum of either end of the range (sums that wrap or clamp)."""
    (alo, ahi), (blo, bhi) = INT_RANGES[ta], INT_RANGES[tb]
    a = rng.integers(alo, ahi + 1, (warps, 16, k))
    b = rng.integers(blo, bhi + 1, (warps, k, 8))
    c = rng.integers(-(2**31), 2**31, (warps, 16, 8), dtype=np.int64)
    near = rng.random(c.shape) < 0.4
    c[near] = np.where(rng.random(near.sum()) < 0.5, 2**31 - 1, -(2**31)) - rng.integers(-200000, 200000, near.sum())
    return a, b, np.clip(c, -(2**31), 2**31 - 1).astype(np.int32)


def _int_mma_inputs(form: int, k: int, ta: str, tb: str, warps: int = 16):
    def make(rng):
        aw, bw, cw = int_mma_words(*int_mma_tiles(rng, warps, k, ta, tb), bits=INT_BITS[ta])
        return [("a", aw), ("b", bw), ("c", cw), ("d", np.zeros_like(cw)), form]
    return make


# the integer kernel's forms (mma_int_special's `form`): entry name -> (form, M, K, A type, B type, .satfinite, b1 op)
INT_MMA_ENTRIES = {
    "mma_int_k32_s8s8": (0, 16, 32, "s8", "s8", False, ""),
    "mma_int_k32_u8s8_sat": (1, 16, 32, "u8", "s8", True, ""),
    "mma_int_k16_s8u8": (2, 16, 16, "s8", "u8", False, ""),
    "mma_int_k16_u8u8_sat": (3, 16, 16, "u8", "u8", True, ""),
    "mma_int_k64_s4s4": (4, 16, 64, "s4", "s4", False, ""),
    "mma_int_k32_u4s4_sat": (5, 16, 32, "u4", "s4", True, ""),
    "mma_int_m8k16_s8u8": (6, 8, 16, "s8", "u8", False, ""),
    "mma_int_m8k32_u4s4_sat": (7, 8, 32, "u4", "s4", True, ""),
    "mma_b1_m8k128_xor": (8, 8, 128, "b1", "b1", False, "xor"),
    "mma_b1_m16k128_and": (9, 16, 128, "b1", "b1", False, "and"),
    "mma_b1_m16k256_xor": (10, 16, 256, "b1", "b1", False, "xor"),
    "mma_b1_m16k256_and": (11, 16, 256, "b1", "b1", False, "and"),
}


F64_SPECIAL = np.array([0x7FF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x0000000000000001,
                        0x8000000000000000, 0x000FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0x7FF4000000000123,
                        0xFFF8000000000456], np.uint64)


def _f64_mma_inputs(warps: int = 16):
    """mma_f64_special: f64 operands over a wide exponent range (products that cancel C and each other, so a chain of
    fmas and one rounding differ), specials in the first two warps; fragment order [warp][register][lane]."""
    def make(rng):
        def vals(shape, spread):
            x = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread, shape)
            bits = x.view(np.uint64)
            bits[:2] = _sprinkle(rng, bits[:2], 0.05, F64_SPECIAL)
            return bits
        a, b = vals((warps, 32), 40), vals((warps, 32), 40)
        c = vals((warps, 2, 32), 60)
        return [("a", a), ("b", b), ("c", c), ("d", np.zeros_like(c))]
    return make


F64_M16_K = (4, 8, 16)  # mma_f64_m16_special's K by form


def f64_m16_tiles(rng, warps: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (W, 16, K), B (W, K, 8), C (W, 16, 8) f64 bits over a wide exponent range (so a chain of fmas, its order
    and one rounding of the exact sum differ), specials in the first two warps."""
    def vals(shape, spread):
        x = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread, shape)
        bits = x.view(np.uint64)
        bits[:2] = _sprinkle(rng, bits[:2], 0.03, F64_SPECIAL)
        return bits
    return vals((warps, 16, k), 30), vals((warps, k, 8), 30), vals((warps, 16, 8), 50)


def f64_m16_words(x: np.ndarray, operand: str) -> np.ndarray:
    """f64 tiles -> (W, registers, 32) words by the PTX ISA's m16n8k4 / k8 / k16 f64 formulas (g = %laneid >> 2,
    t = %laneid % 4): A a_i at row g (i even) or g + 8 (odd), column t + 4 (i >> 1); B b_i at row t + 4 i, column
    g; C / D c_i at row g (i < 2) or g + 8, column 2 t + (i & 1)."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    if operand == "a":
        regs = [x[:, g + 8 * (i & 1), t + 4 * (i >> 1)] for i in range(x.shape[2] // 2)]
    elif operand == "b":
        regs = [x[:, t + 4 * i, g] for i in range(x.shape[1] // 4)]
    else:
        regs = [x[:, g + 8 * (i >> 1), 2 * t + (i & 1)] for i in range(4)]
    return np.stack(regs, axis=1)


def _f64_m16_inputs(form: int, warps: int = 16):
    def make(rng):
        a, b, c = f64_m16_tiles(rng, warps, F64_M16_K[form])
        aw, bw = np.zeros((warps, 8, 32), np.uint64), np.zeros((warps, 4, 32), np.uint64)
        wa, wb = f64_m16_words(a, "a"), f64_m16_words(b, "b")
        aw[:, :wa.shape[1]], bw[:, :wb.shape[1]] = wa, wb
        cw = f64_m16_words(c, "c")
        return [("a", aw), ("b", bw), ("c", cw), ("d", np.zeros_like(cw)), form]
    return make


def _f32_words(rng, shape, spread: int, special: float) -> np.ndarray:
    """f32 bits over a range of exponents with every low bit random (so tf32 must drop or round them), specials."""
    x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread, shape)).astype(np.float32).view(np.uint32)
    return _sprinkle(rng, x, special, F32_SPECIAL)


def _tf32_mma_inputs(form: int, warps: int = 16):
    """mma_tf32_special: A (4 words per lane) and B (2) raw f32 words, C f32 (specials in every operand)."""
    def make(rng):
        a, b = _f32_words(rng, (warps, 4, 32), 20, 0.01), _f32_words(rng, (warps, 2, 32), 20, 0.01)
        c = _f32_words(rng, (warps, 4, 32), 10, 0.01)
        return [("a", a), ("b", b), ("c", c), ("d", np.zeros_like(c)), form]
    return make


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


def _k8_inputs(form: int, warps: int = 16):
    """mma_a2b1_special's m16n8k8 forms: 16-bit A (W, 16, 8) and B (W, 8, 8) with specials and subnormals (bf16:
    normal values), C f32 or f16 (form 2), as fragment words."""
    def make(rng):
        if form == 1:
            a, b = _bf16(rng, (warps, 16, 8)), _bf16(rng, (warps, 8, 8))
        else:
            a, b = (f16(rng, s, 1.0, 0.01, 0.05).view(np.uint16) for s in ((warps, 16, 8), (warps, 8, 8)))
        if form == 2:
            cw = np.zeros((warps, 4, 32), np.uint32)
            cw[:, :2] = c_fragments(f16(rng, (warps, 16, 8), 4.0, 0.01).view(np.uint16))
        else:
            cw = c32_fragments(f32(rng, (warps, 16, 8), 4.0, 0.01).view(np.uint32))
        return [("a", a_fragments(a)), ("b", b_fragments(b)), ("c", cw), ("d", np.zeros_like(cw)), form]
    return make


def _fp8_k16_inputs(form: int, warps: int = 16):
    """mma_a2b1_special's FP8 m16n8k16 forms: A (W, 16, 16) and B (W, 16, 8) e4m3 from the special tiles (form 4: A
    e5m2 codes with specials instead), C f32 or f16 (form 4), as fragment words."""
    def make(rng):
        a, b, c = _special_f16_tiles(rng, warps, 16, True)
        if form == 4:
            a = _wg_codes(rng, "e5m2", a.shape, 0.03)
            cw = np.zeros((warps, 4, 32), np.uint32)
            cw[:, :2] = c_fragments(c)
        else:
            cw = c32_fragments(c.view(np.float16).astype(np.float32).view(np.uint32))
        return [("a", a_fragments(a)), ("b", b_fragments(b)), ("c", cw), ("d", np.zeros_like(cw)), form]
    return make


def _special_f16_tiles(rng, w: int, k: int, e4: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (W, 16, K), B (W, K, 8), C (W, 16, 8) bits per warp: mixed specials, exact cancellation, subnormal, wide."""
    # modes by warp: 0 normal values with NaN / infinities / subnormals / zeros sprinkled in; 1 pairs of equal
    # products of opposite sign and C = minus the exact sum of the rest; 2 subnormal-heavy (products far below the
    # largest term); 3 a wide exponent range (large and small terms in one sum)
    abits = np.zeros((w, 16, k), np.uint8 if e4 else np.uint16)
    bbits = np.zeros((w, k, 8), abits.dtype)
    cbits = np.zeros((w, 16, 8), np.uint16)
    for i in range(w):
        mode = i % 4
        if mode == 1:  # exact cancellation: a_k b_k + a_k' b_k' = 0 in pairs, and C = -(sum of the rest)
            a = rng.integers(-8, 9, (16, k)).astype(np.float64) * 2.0 ** rng.integers(-4, 3, (16, 1))
            b = rng.integers(-8, 9, (k, 8)).astype(np.float64)
            a[:, 1::2] = a[:, 0::2]
            b[1::2, :4] = -b[0::2, :4]
            exact = a @ b
            c = np.where(np.abs(exact) <= 2048, -exact, rng.standard_normal((16, 8)))
        elif mode == 2:  # subnormal-heavy: tiny operands, products far below the largest term
            a = rng.standard_normal((16, k)) * 2.0 ** rng.integers(-24 if not e4 else -9, -8, (16, k))
            b = rng.standard_normal((k, 8)) * 2.0 ** rng.integers(-24 if not e4 else -9, 2, (k, 8))
            c = rng.standard_normal((16, 8)) * 2.0 ** rng.integers(-24, -10, (16, 8))
        elif mode == 3:  # wide exponent range: large and small terms in one sum
            a = rng.standard_normal((16, k)) * 2.0 ** rng.integers(-12 if not e4 else -6, 8, (16, k))
            b = rng.standard_normal((k, 8)) * 2.0 ** rng.integers(-12 if not e4 else -6, 7, (k, 8))
            c = rng.standard_normal((16, 8)) * 2.0 ** rng.integers(-10, 12, (16, 8))
        else:  # mixed: normal values with NaN, infinities, subnormals and zeros sprinkled in
            a, b, c = rng.standard_normal((16, k)), rng.standard_normal((k, 8)), rng.standard_normal((16, 8))
        ab = _to_e4m3(a) if e4 else a.astype(np.float16).view(np.uint16)
        bb = _to_e4m3(b) if e4 else b.astype(np.float16).view(np.uint16)
        cb = c.astype(np.float16).view(np.uint16)
        if mode == 0:
            spec = E4M3_SPECIAL if e4 else F16_SPECIAL
            ab, bb = _sprinkle(rng, ab, 0.03, spec), _sprinkle(rng, bb, 0.03, spec)
            cb = _sprinkle(rng, cb, 0.1, F16_SPECIAL)
        abits[i], bbits[i], cbits[i] = ab, bb, cb
    return abits, bbits, cbits


def _mma_inputs(e4: bool, warps: int, ksteps: int):
    def make(rng):
        k = 32 if e4 else 16
        a, b, c = _special_f16_tiles(rng, warps * ksteps, k, e4)
        af = a_fragments(a).reshape(warps, ksteps, 4, 32)
        bf = b_fragments(b).reshape(warps, ksteps, 2, 32)
        cf = c_fragments(c.reshape(warps, ksteps, 16, 8)[:, 0])
        return [("a", af), ("b", bf), ("c", cf), ("d", np.zeros_like(cf)), ksteps]
    return make


# ---- mma.sync m8n8k4 f16 (samples: mma_m884_special) -----------------------------------------------------------
M884_FORMS = (("row", "col", "f32", "f32"), ("col", "row", "f32", "f32"), ("row", "row", "f16", "f16"),
              ("col", "col", "f16", "f16"), ("col", "col", "f32", "f16"))  # (A, B layouts, D, C types) by form


def m884_name(form: int) -> str:
    la, lb, d, c = M884_FORMS[form]
    return f"mma_m884_{la}_{lb}_{d}" + ("" if c == d else f"_c{c}")


def m884_tiles(rng, warps: int, c_type: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (W, 4, 8, 4), B (W, 4, 4, 8) f16 bits and C (W, 4, 8, 8) f16 or f32 bits: one product per quad pair, from
    the special tiles above (two quad pairs share each 16-row tile's B); in quad pairs 2-3 of every fourth warp
    from warp 1 instead, integer k0 and k1 products that C cancels exactly and small k2, k3 ones (so the order of
    the additions shows in D); f32 C: those values, with every fourth warp from warp 2 redrawn as f32 with
    specials."""
    a, b, c = _special_f16_tiles(rng, 2 * warps, 4, False)
    a = a.reshape(warps, 4, 8, 4)
    b = np.repeat(b[:, None], 2, axis=1).reshape(warps, 4, 4, 8)
    c = c.reshape(warps, 4, 8, 8)
    shape = (len(range(1, warps, 4)), 2)
    big_a, big_b = rng.integers(-30, 31, (*shape, 8, 2)), rng.integers(-30, 31, (*shape, 2, 8))
    small_a = (rng.standard_normal((*shape, 8, 2)) * 2.0 ** -6).astype(np.float16).astype(np.float64)
    small_b = rng.standard_normal((*shape, 2, 8)).astype(np.float16).astype(np.float64)
    a[1::4, 2:] = np.concatenate([big_a, small_a], axis=-1).astype(np.float16).view(np.uint16)
    b[1::4, 2:] = np.concatenate([big_b, small_b], axis=-2).astype(np.float16).view(np.uint16)
    c[1::4, 2:] = (-(big_a @ big_b)).astype(np.float16).view(np.uint16)  # |C| <= 1800: exact in f16
    if c_type == "f32":
        c = c.view(np.float16).astype(np.float32).view(np.uint32)
        c[2::4] = f32(rng, c[2::4].shape, 4.0, 0.02).view(np.uint32)
    return a, b, c


def m884_words(a: np.ndarray, b: np.ndarray, c: np.ndarray, lay_a: str, lay_b: str) -> tuple[np.ndarray, ...]:
    """m8n8k4 tiles -> fragment words (W, registers, 32) by the PTX ISA's formulas: lanes 4q..4q+3 and 16+4q..
    16+4q+3 hold quad pair q's product; A row-major: row %laneid % 4 (+ 4 from lane 16), column i; column-major: row
    i (+ 4), column %laneid % 4; B row-major: row %laneid % 4, column i (+ 4); column-major: row i, column
    %laneid % 4 (+ 4); f16 C: row %laneid % 4 (+ 4), column i; f32 C: row X (+ 4), X = (%laneid & 1) + (i & 2),
    column (i & 4) + (%laneid & 2) + (i & 1)."""
    w = a.shape[0]
    f32 = c.dtype == np.uint32
    ea, eb = np.zeros((w, 32, 4), np.uint16), np.zeros((w, 32, 4), np.uint16)
    ec = np.zeros((w, 32, 8), c.dtype)
    for lane in range(32):
        q, hi, r = (lane >> 2) & 3, 4 * (lane >= 16), lane % 4
        for i in range(4):
            ea[:, lane, i] = a[:, q, r + hi, i] if lay_a == "row" else a[:, q, i + hi, r]
            eb[:, lane, i] = b[:, q, r, i + hi] if lay_b == "row" else b[:, q, i, r + hi]
        for i in range(8):
            row, col = ((lane & 1) + (i & 2) + hi, (i & 4) + (lane & 2) + (i & 1)) if f32 else (r + hi, i)
            ec[:, lane, i] = c[:, q, row, col]
    words = [np.ascontiguousarray(x).view(np.uint32).transpose(0, 2, 1) for x in (ea, eb, ec)]
    if not f32:  # f16 C: 4 registers, padded to the kernel's 8
        words[2] = np.concatenate([words[2], np.zeros_like(words[2])], axis=1)
    return tuple(np.ascontiguousarray(x) for x in words)


def _m884_inputs(form: int, warps: int = 16):
    lay_a, lay_b, _, c_type = M884_FORMS[form]

    def make(rng):
        aw, bw, cw = m884_words(*m884_tiles(rng, warps, c_type), lay_a, lay_b)
        return [("a", aw), ("b", bw), ("c", cw), ("d", np.zeros((warps, 8, 32), np.uint32)), form]
    return make


# ---- sparse mma.sp (samples_sm90a: mma_sp_special) ----------------------------------------------------------------
SP_FORMS = ((16, "f32", "f16", 0), (16, "f32", "f16", 1), (16, "f32", "f16", 2), (32, "f32", "f16", 0),
            (32, "f32", "f16", 1), (32, "f32", "bf16", 1), (32, "f16", "f16", 0), (64, "f32", "e4m3", 0),
            (32, "s32", "s8", 0), (64, "s32", "s8", 0), (64, "f32", "e5m2.e4m3", 0),
            (32, "s32", "u8.s8.sat", 1), (8, "f32", "tf32", 0), (16, "f32", "tf32", 1), (64, "s32", "s4", 1),
            (128, "s32", "u4.s4.sat", 0))  # (dense K, D / C type, A / B types, sparsity selector) by form
SP_PAIRS = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])  # the ordered index pairs of a 2:4 chunk


def sp_types(form: int) -> tuple[str, str, bool]:
    """A's and B's element types and .satfinite of a form."""
    parts = SP_FORMS[form][2].split(".")
    return parts[0], parts[1] if len(parts) > 1 else parts[0], "sat" in parts


def sp_name(form: int, probe: bool) -> str:
    k, d, ab, sel = SP_FORMS[form]
    return f"mma_sp_k{k}_{ab.replace('.', '_')}_{d}_sel{sel}" + ("_probe" if probe else "")


def sp_meta(rng, warps: int, tf32: bool = False) -> np.ndarray:
    """(W, 32) metadata words: every nibble an ordered index pair (i0 | i1 << 2, i0 < i1), in every lane; tf32
    (1:2, a pair of 16-bit halves naming one 32-bit element): (0, 1) or (2, 3) only."""
    pairs = SP_PAIRS[rng.choice([0, 5], (warps, 32, 8)) if tf32 else rng.integers(0, len(SP_PAIRS), (warps, 32, 8))]
    nib = (pairs[..., 0] | pairs[..., 1] << 2).astype(np.uint64)
    return (nib << (4 * np.arange(8, dtype=np.uint64))).sum(-1).astype(np.uint32)


def sp_b_words(b: np.ndarray, bits: int | None = None) -> np.ndarray:
    """B tiles (W, K, 8) -> (W, K·bits/128, 32) words: word j of lane 4g + t holds column g, k = 4e j + e t + i
    (e elements of a word, i = 0..e-1, the lowest bits first): the dense m16n8 B layout continued over K."""
    bits = bits or 8 * b.itemsize
    e = 32 // bits
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    out = np.zeros((b.shape[0], b.shape[1] * bits // 128, 32), np.uint32)
    for j in range(out.shape[1]):
        out[:, j] = _pack(np.stack([b[:, 4 * e * j + e * t + i, g] for i in range(e)], axis=-1), bits)
    return out


def _sp_encode(x: np.ndarray, kind: str) -> np.ndarray:
    """Small integers as element bits of `kind`."""
    if kind == "f16":
        return x.astype(np.float16).view(np.uint16)
    if kind == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if kind in ("s8", "u8"):
        return x.astype(np.int16).astype(np.uint8)
    return _to_e4m3(x) if kind == "e4m3" else (x.astype(np.float16).view(np.uint16) >> 8).astype(np.uint8)


def _sp_codes(rng, kind: str, shape) -> np.ndarray:
    """Element bits of one operand with specials; fp8 over a wide exponent range (products 2^-18..2^16 apart, so a
    grouping of the sum shows); integers over their whole range."""
    if kind in ("s8", "u8"):
        return rng.integers(0, 256, shape).astype(np.uint8)
    if kind == "bf16":
        return _bf16(rng, shape)
    if kind == "f16":
        return f16(rng, shape, 1.0, 0.02, 0.03).view(np.uint16)
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-8, 8, shape)
    bits = _to_e4m3(x) if kind == "e4m3" else (x.astype(np.float16).view(np.uint16) >> 8).astype(np.uint8)
    return _sprinkle(rng, bits, 0.02, E4M3_SPECIAL if kind == "e4m3" else E5M2_SPECIAL)


def sp_tiles(rng, warps: int, form: int, probe: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Compressed A (W, 16, K/2), B (W, K, 8), C (W, 16, 8) bits and metadata words (W, 32). probe: small integers
    (every sum exact in any order) and, in warp w, nonzero A only in chunk w % (K/4) (two distinct magnitudes), so
    D - C names the two B rows the metadata picked; else random values with specials (integers: C near both ends
    of the s32 range)."""
    k, d, _, _ = SP_FORMS[form]
    ta, tb, _ = sp_types(form)
    if ta == "tf32":  # 1:2: one kept element of each pair of k, K/2 per row
        meta = sp_meta(rng, warps, tf32=True)
        if probe:
            a = np.zeros((warps, 16, k // 2), np.float32)
            for w in range(warps):
                a[w, :, w % (k // 2)] = rng.integers(1, 4, 16) * rng.choice([-1, 1], 16)
            b = rng.integers(-8, 9, (warps, k, 8)).astype(np.float32)
            c = rng.integers(-60, 61, (warps, 16, 8)).astype(np.float32)
            return a.view(np.uint32), b.view(np.uint32), c.view(np.uint32), meta
        return (_f32_words(rng, (warps, 16, k // 2), 20, 0.01), _f32_words(rng, (warps, k, 8), 20, 0.01),
                _f32_words(rng, (warps, 16, 8), 10, 0.01), meta)
    if ta in ("s4", "u4"):  # 4-bit codes (uint8); pairs of elements are the 2:4 units
        if probe:  # in warp w only unit chunk w % (K/16): its four kept elements small and non-zero
            a = np.zeros((warps, 16, k // 2), np.uint8)
            for w in range(warps):
                j = w % (k // 16)
                a[w, :, 4 * j:4 * j + 4] = rng.integers(1, 6, (16, 4)) if ta == "u4" else \
                    (rng.integers(1, 6, (16, 4)) * rng.choice([-1, 1], (16, 4))) & 0xF
            b = (rng.integers(0 if tb == "u4" else -7, 8, (warps, k, 8)) & 0xF).astype(np.uint8)
            c = rng.integers(-60, 61, (warps, 16, 8)).astype(np.int32).view(np.uint32)
        else:
            a, b = (rng.integers(0, 16, s_).astype(np.uint8) for s_ in ((warps, 16, k // 2), (warps, k, 8)))
            c = (rng.integers(2**31 - 2**13, 2**31, (warps, 16, 8)) * rng.choice([-1, 1], (warps, 16, 8)))
            c = c.astype(np.int64).astype(np.int32).view(np.uint32)
        return a, b, c, sp_meta(rng, warps)
    if probe:
        mag = rng.integers(1, 4, (warps, 16, 1))
        vals = np.concatenate([mag, mag + rng.integers(1, 4, (warps, 16, 1))], -1) * rng.choice([-1, 1], (warps, 16, 2))
        dense = np.zeros((warps, 16, k // 2))
        for w in range(warps):
            j = w % (k // 4)
            dense[w, :, 2 * j:2 * j + 2] = np.abs(vals[w]) if ta == "u8" else vals[w]
        a = _sp_encode(dense, ta)
        b = _sp_encode(rng.integers(0 if tb == "u8" else -8, 9, (warps, k, 8)).astype(np.float64), tb)
        c = rng.integers(-60, 61, (warps, 16, 8)).astype(np.float64)
        c = c.astype(np.float16).view(np.uint16) if d == "f16" else \
            c.astype(np.float32).view(np.uint32) if d == "f32" else c.astype(np.int32).view(np.uint32)
        return a, b, c, sp_meta(rng, warps)
    a, b = _sp_codes(rng, ta, (warps, 16, k // 2)), _sp_codes(rng, tb, (warps, k, 8))
    if d == "s32":
        c = (rng.integers(2**31 - 2**17, 2**31, (warps, 16, 8)) * rng.choice([-1, 1], (warps, 16, 8)))
        c = c.astype(np.int64).astype(np.int32).view(np.uint32)
    else:
        c = f16(rng, (warps, 16, 8), 4.0, 0.02).view(np.uint16) if d == "f16" else \
            f32(rng, (warps, 16, 8), 4.0, 0.02).view(np.uint32)
    return a, b, c, sp_meta(rng, warps)


def sp_words(a: np.ndarray, b: np.ndarray, c: np.ndarray, bits: int | None = None) -> tuple[np.ndarray, ...]:
    """Compressed A, B and C tiles -> (W, 4, 32) fragment words each (A in the dense layout of half the K; f16 C in
    2 of the 4); `bits`: the element width where it is not the dtype's (4-bit codes in uint8)."""
    out = []
    for x in (a_fragments(a, bits), sp_b_words(b, bits), c_fragments(c) if c.dtype == np.uint16 else c32_fragments(c)):
        full = np.zeros((x.shape[0], 4, 32), np.uint32)
        full[:, :x.shape[1]] = x
        out.append(full)
    return tuple(out)


def _sp_inputs(form: int, probe: bool, warps: int = 16):
    def make(rng):
        a, b, c, e = sp_tiles(rng, warps, form, probe)
        aw, bw, cw = sp_words(a, b, c, 4 if sp_types(form)[0] in ("s4", "u4") else None)
        return [("a", aw), ("b", bw), ("c", cw), ("e", e), ("d", np.zeros_like(cw)), form]
    return make


# ---- wgmma forms (samples_sm90a: wgmma_forms) ----------------------------------------------------------------------
# Each form's steps name the descriptors the kernel builds: (start, LBO, SBO, swizzle bytes or 0) of A (None: A from
# registers) and of B, with the step's (imm-scale-a, imm-scale-b). A step reads 32 bytes of K from each row.

@dataclass(frozen=True)
class WgForm:
    """One wgmma_forms form: types, N, the per-step descriptors and scales, image bytes, scale-d, CTAs."""

    form: int
    acc: str
    ta: str
    tb: str
    n: int
    steps: tuple  # ((A descriptor or None, B descriptor, (imm-scale-a, imm-scale-b)), ...)
    image: int
    scale_d: int
    ctas: int
    mn_major: tuple = (False, False)  # (A, B) read MN-major (imm-trans-a / -b = 1)

    @property
    def k(self) -> int:
        """K of one step: 32 bytes of the operand type."""
        return 32 // WG_BYTES[self.ta]

    @property
    def tc_form(self) -> str:
        """The numerics.tensorcore form (its n8 name; a wgmma form takes any N)."""
        return f"wgmma.m64n8k{self.k}.{self.acc}.{self.ta}.{self.tb}"

    @property
    def integer(self) -> bool:
        return self.acc.startswith("s32")


WG_BYTES = {"e4m3": 1, "e5m2": 1, "f16": 2, "bf16": 2, "s8": 1, "u8": 1, "tf32": 4}
_SCALES = ((1, 1), (-1, 1), (1, -1), (-1, -1))  # (imm-scale-a, imm-scale-b) of the steps, as the kernel issues them
WG_FORMS = (
    # bf16 -> f32 n16, A from registers; B 16 rows x 128 B, 128-byte swizzle: steps 32 B apart in the swizzle span
    WgForm(0, "f32", "bf16", "bf16", 16, tuple((None, (32 * s, 16, 1024, 128), _SCALES[s]) for s in range(4)),
           2048, 1, 4),
    # e4m3 x e5m2 -> f16 n32, no swizzle: A's core matrices stacked along M (LBO 1024, SBO 128), B's along K
    WgForm(1, "f16", "e4m3", "e5m2", 32, (((0, 1024, 128, 0), (4096, 128, 512, 0), (1, 1)),
                                          ((2048, 1024, 128, 0), (4352, 128, 512, 0), (1, -1))), 6144, 0, 4),
    # f16 -> f32 n40: A 128-byte swizzle; B two K slabs of 40 rows x 64 B, 64-byte swizzle
    WgForm(2, "f32", "f16", "f16", 40,
           tuple(((32 * s, 16, 1024, 128), (8192 + 2560 * (s // 2) + 32 * (s % 2), 16, 512, 64), sc)
                 for s, sc in enumerate(((1, 1), (-1, 1), (1, 1), (1, -1)))), 13312, 1, 4),
    # e4m3 -> f16 n256: A and B (256 rows) 128-byte swizzle
    WgForm(3, "f16", "e4m3", "e4m3", 256,
           tuple(((32 * s, 16, 1024, 128), (8192 + 32 * s, 16, 1024, 128), sc)
                 for s, sc in enumerate(((1, 1), (1, 1), (-1, 1), (1, 1)))), 40960, 1, 2),
    # f16 -> f32 n64, both MN-major: A no swizzle (M blocks at SBO 128, k-blocks at LBO 1024); B 64-byte swizzle
    # (32 columns per k-row, the next 32 at LBO 2048, k-blocks at SBO 512)
    WgForm(4, "f32", "f16", "f16", 64, (((0, 1024, 128, 0), (4096, 2048, 512, 64), (1, 1)),
                                        ((2048, 1024, 128, 0), (5120, 2048, 512, 64), (-1, 1))), 8192, 1, 4,
           (True, True)),
    # integers -> s32 n64, A and B 128-byte swizzle, 4 steps: s8 x s8 wrapped, u8 x s8 .satfinite (C near the ends)
    *(WgForm(form, acc, ta, "s8", 64, tuple(((32 * s, 16, 1024, 128), (8192 + 32 * s, 16, 1024, 128), (1, 1))
                                            for s in range(4)), 16384, 1, 4)
      for form, acc, ta in ((5, "s32", "s8"), (6, "s32.satfinite", "u8"))),
    # tf32 -> f32 n32, A and B 128-byte swizzle, 4 steps with every imm-scale pair (f32 words with their low 13 bits
    # set: the tensor core must not read them)
    WgForm(7, "f32", "tf32", "tf32", 32, tuple(((32 * s, 16, 1024, 128), (8192 + 32 * s, 16, 1024, 128), _SCALES[s])
                                              for s in range(4)), 12288, 1, 4),
    # tf32 -> f32 n16, A from registers, B 64-byte swizzle (2 steps in its span), scale-d = 0
    WgForm(8, "f32", "tf32", "tf32", 16, tuple((None, (32 * s, 16, 512, 64), _SCALES[s]) for s in range(2)), 1024, 0,
           4),
)


def wg_address(desc: tuple, row: int | np.ndarray, kb: int | np.ndarray, mn_major: bool = False):
    """Shared byte address of (row, K byte < 32) under a descriptor (start, LBO, SBO, swizzle), as the PTX ISA's
    canonical layouts place it: K-major, or MN-major for 16-bit elements (k = kb / 2; W / 2 elements of the row
    dimension per k-row, 8 k-rows per atom); the swizzle XORs address bits [4, 4 + log2(W / 16)) with bits [7, ...)."""
    start, lbo, sbo, w = desc
    row, kb = np.asarray(row), np.asarray(kb)
    if mn_major:
        k, byte = kb // 2, kb % 2
        if w == 0:  # core matrices: 8 k-rows of 16 bytes (8 elements of the row dimension)
            return start + (row // 8) * sbo + (k // 8) * lbo + (k % 8) * 16 + (row % 8) * 2 + byte
        addr = start + (row // (w // 2)) * lbo + (k // 8) * sbo + (k % 8) * w + (row % (w // 2)) * 2 + byte
    elif w == 0:
        return start + (row // 8) * sbo + (kb // 16) * lbo + (row % 8) * 16 + kb % 16
    else:
        addr = start + (row // 8) * sbo + (row % 8) * w + kb
    return addr ^ (((addr >> 7) & (w // 16 - 1)) << 4)


def _wg_codes(rng, kind: str, shape, special: float) -> np.ndarray:
    """Operand codes (uint8 or uint16) of one type: normal values, a fraction `special` of special codes."""
    if kind == "f16":
        return f16(rng, shape, 1.0, special, 0.02).view(np.uint16)
    if kind == "bf16":
        return _sprinkle(rng, _bf16(rng, shape), special, BF16_SPECIAL)
    if kind == "e4m3":
        return e4m3(rng, shape, 1.0, special)
    if kind == "tf32":  # f32 words, low 13 bits random; specials and tf32 subnormals
        w = f32(rng, shape, 1.0).view(np.uint32) | rng.integers(0, 1 << 13, shape).astype(np.uint32)
        return _sprinkle(rng, w, special, np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x80000000,
                                                   0x00002000, 0x00001FFF, 0x807FE000], np.uint32))
    h = f16(rng, shape, 1.0, 0.0, 0.02).view(np.uint16).astype(np.uint32)  # e5m2: f16 rounded to its top byte
    code = ((h + 0x7F + ((h >> 8) & 1)) >> 8).astype(np.uint8)
    return _sprinkle(rng, code, special, E5M2_SPECIAL)


def wg_tiles(rng, f: WgForm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logical tiles per CTA: A (CTA, step, 64, K), B (CTA, step, N, K) codes and C (CTA, 64, N) bits (the first CTA
    with special operands; NaN C where scale-d = 0 must ignore it)."""
    ns = len(f.steps)
    if f.integer:  # any codes; C within 2^17 of either end of the s32 range in half of the columns
        a = rng.integers(0, 256, (f.ctas, ns, 64, f.k), dtype=np.uint8)
        b = rng.integers(0, 256, (f.ctas, ns, f.n, f.k), dtype=np.uint8)
        c = rng.integers(-2**31, 2**31, (f.ctas, 64, f.n), dtype=np.int64)
        edge = rng.integers(0, 2**17, (f.ctas, 64, f.n // 2))
        c[..., : f.n // 2] = np.where(rng.random(edge.shape) < 0.5, 2**31 - 1 - edge, -2**31 + edge)
        return a, b, c.astype(np.int32).view(np.uint32)
    special = np.array([0.01] + [0.0] * (f.ctas - 1))
    a = np.stack([_wg_codes(rng, f.ta, (ns, 64, f.k), sp) for sp in special])
    b = np.stack([_wg_codes(rng, f.tb, (ns, f.n, f.k), sp) for sp in special])
    if f.acc == "f32":
        c = f32(rng, (f.ctas, 64, f.n), 4.0).view(np.uint32)
    else:
        c = f16(rng, (f.ctas, 64, f.n), 4.0).view(np.uint16)
    if not f.scale_d:
        c = np.full_like(c, 0x7FC00000 if f.acc == "f32" else 0x7E00)
    return a, b, c


def wg_fragments(x: np.ndarray, acc: str) -> np.ndarray:
    """C / D tiles (..., 64, N) as the warpgroup's registers (..., reg, thread) words: f32 reg 4j + i holds row
    16w + g + 8(i >> 1), column 8j + 2t + (i & 1); f16 reg 2j + h the columns 8j + 2t, + 1 of row 16w + g + 8h."""
    th = np.arange(128)
    w, g, t = th // 32, (th % 32) // 4, th % 4
    n = x.shape[-1]
    if acc != "f16":
        r = np.arange(n // 2)[:, None]
        j, i = r // 4, r % 4
        return x[..., 16 * w + g + 8 * (i >> 1), 8 * j + 2 * t + (i & 1)].astype(np.uint32)
    r = np.arange(n // 4)[:, None]
    j, h = r // 2, r % 2
    lo = x[..., 16 * w + g + 8 * h, 8 * j + 2 * t].astype(np.uint32)
    hi = x[..., 16 * w + g + 8 * h, 8 * j + 2 * t + 1].astype(np.uint32)
    return lo | hi << 16


def wg_a_registers(a: np.ndarray) -> np.ndarray:
    """16-bit A tiles (..., 64, 16) as registers (..., 4, thread): reg r half i holds row 16w + g + 8(r & 1), k
    2t + i + 8(r >> 1); tf32 tiles (..., 64, 8): reg r is the word of row 16w + g + 8(r & 1), k t + 4(r >> 1)."""
    th = np.arange(128)
    w, g, t = th // 32, (th % 32) // 4, th % 4
    r = np.arange(4)[:, None]
    if a.dtype == np.uint32:
        return a[..., 16 * w + g + 8 * (r & 1), t + 4 * (r >> 1)]
    row, k = 16 * w + g + 8 * (r & 1), 2 * t + 8 * (r >> 1)
    return a[..., row, k].astype(np.uint32) | a[..., row, k + 1].astype(np.uint32) << 16


def wg_image(f: WgForm, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each CTA's shared-memory image (CTA, bytes): every step's A and B rows at their descriptors' addresses."""
    img = np.zeros((a.shape[0], f.image), np.uint8)
    owner = np.full(f.image, -1)
    for s, (da, db, _) in enumerate(f.steps):
        for desc, tile, rows, mn in ((da, a, 64, f.mn_major[0]), (db, b, f.n, f.mn_major[1])):
            if desc is None:
                continue
            row, kb = np.meshgrid(np.arange(rows), np.arange(32), indexing="ij")
            addr = wg_address(desc, row, kb, mn)
            assert (owner[addr] == -1).all(), "two descriptors name one byte"
            owner[addr] = s
            img[:, addr] = tile[:, s].view(np.uint8).reshape(tile.shape[0], rows, 32)
    return img


def wg_expected(f: WgForm, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D (CTA, 64, N) bits from numerics.tensorcore: per step one wgmma of the form's datapath over all N columns;
    scales as sign flips."""
    from tcforge.numerics.tensorcore import tc_mma
    from tcforge.ptx.emulate.ops_wgmma import TF32_FORM

    sign = {1: 0x80, 2: 0x8000, 4: 0x80000000}
    form = TF32_FORM if f.ta == "tf32" else f.tc_form
    d = c if f.scale_d else np.zeros_like(c)
    if f.integer:  # each step: the exact sum, wrapped, or clamped with .satfinite
        val = {"s8": lambda x: x.view(np.int8).astype(np.int64), "u8": lambda x: x.astype(np.int64)}
        for s in range(len(f.steps)):
            e = d.view(np.int32).astype(np.int64) + val[f.ta](a[:, s]) @ val[f.tb](b[:, s]).swapaxes(-1, -2)
            e = np.clip(e, -2**31, 2**31 - 1) if f.acc.endswith("satfinite") else e
            d = (e & 0xFFFFFFFF).astype(np.uint32)
        return d
    for s, (_, _, (sa, sb)) in enumerate(f.steps):
        ai = a[:, s] ^ (sign[WG_BYTES[f.ta]] if sa < 0 else 0)
        bi = b[:, s] ^ (sign[WG_BYTES[f.tb]] if sb < 0 else 0)
        d = tc_mma(form, ai, bi.swapaxes(-1, -2), d)
    return d


def _wgmma_inputs(f: WgForm):
    def make(rng):
        a, b, c = wg_tiles(rng, f)
        img = wg_image(f, a, b)
        areg = wg_a_registers(a) if f.steps[0][0] is None else np.zeros((1, 128), np.uint32)
        cw = wg_fragments(c, f.acc)
        return [("img", img), f.image, ("areg", areg), ("c", cw), ("d", np.zeros_like(cw)), f.form, f.scale_d]
    return make


def _elect_masks(rng):
    """One member mask per warp: the full warp, one lane, the top lane, a half, random sets."""
    fixed = np.array([0xFFFFFFFF, 1 << 17, 1 << 31, 0xFFFF0000], np.uint32)
    masks = np.concatenate([fixed, rng.integers(1, 2**32, 12, dtype=np.uint64).astype(np.uint32)])
    return [("masks", masks), ("leader", np.zeros(16 * 32, np.uint32)), ("elected", np.zeros(16 * 32, np.uint32))]


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


def _mufu16(rng):
    """`mufu16` over every 16-bit pattern (x = 0..65535 in order; y a random permutation for the .x2 forms' high
    halves)."""
    x = np.arange(65536, dtype=np.uint16)
    return [("x", x), ("y", rng.permutation(x)), ("out0", np.zeros((65536, 4), np.uint32)),
            ("out1", np.zeros((65536, 4), np.uint32)), 65536]


def _weights(choices: list[int]) -> list[float]:
    w = np.array([{0: 0.05, 1: 0.35, 2: 0.15, 3: 0.15, 4: 0.15, 5: 0.15}[c] for c in choices])
    return list(w / w.sum())


# ---- textures and surfaces ------------------------------------------------------------------------------------
_F32_SPECIAL_COORDS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3e9, -3e9, 2.0 ** 24, 1e-40],
                               np.float32)


def _coords_f32(rng, n: int, size: int, normalized: bool) -> np.ndarray:
    """f32 coordinates over [-2, size + 2] texels: uniform; at, just around and one ulp either side of integers,
    half-integers and 1/256 steps; a few specials. Divided by `size` (in f64) for normalized coordinates."""
    ints = rng.integers(-2, size + 3, n).astype(np.float64)
    eps = rng.choice(np.concatenate([[0.0], 2.0 ** -np.arange(6, 25)]), n) * rng.choice([-1.0, 1.0], n)
    cands = [rng.uniform(-2, size + 2, n), ints + eps, ints + 0.5 + eps, ints + rng.integers(0, 256, n) / 256 + eps]
    x = np.choose(rng.integers(0, 4, n), cands)
    x = (x / size if normalized else x).astype(np.float32)
    ulp = rng.random(n) < 0.1
    x[ulp] = np.nextafter(x[ulp], np.where(rng.random(int(ulp.sum())) < 0.5, -np.inf, np.inf).astype(np.float32))
    x[rng.choice(n, len(_F32_SPECIAL_COORDS), replace=False)] = _F32_SPECIAL_COORDS
    return x


def _texels(rng, fmt: str, shape: tuple, specials: bool = False) -> np.ndarray:
    """Random texels of a format ('f16x4'): floats of mixed scale, integers over their whole range."""
    ctype, ch = fmt.split("x")
    shape = (*shape, int(ch))
    if ctype in ("f32", "f16"):
        v = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(ctype.replace("f", "float"))
        if specials:
            flat = v.reshape(-1)
            pick = rng.choice(flat.size, max(4, flat.size // 12), replace=False)
            flat[pick] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38 if ctype == "f32" else 6e4,
                                              1e-41 if ctype == "f32" else 3e-7], np.float64), len(pick))
        return v
    info = np.iinfo(ctype.replace("u", "uint").replace("s", "int"))
    v = rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64)
    v.reshape(-1)[:2] = (info.min, info.max)
    return v.astype(info.dtype)


def _tex_entry(tex, coords: str, n: int = 2048, specials: bool = False, layers: tuple = (-2, 5)):
    """Inputs of a texture kernel: the texture, n samples' coordinate words {x, y, z, layer} (float bits, or
    integers around the extents for 'int'), out, n, the texels."""
    def make(rng):
        from tcforge.ptx.emulate import Texture

        t = Texture(**{**tex, "buffer": "tx"})
        c = np.zeros((n, 4), np.uint32)
        for d, size in enumerate(t.extents[:len(t.dims) - t.layered]):
            if coords == "int":
                c[:, d] = rng.integers(-3, size + 3, n).astype(np.int32).view(np.uint32)
            else:
                c[:, d] = _coords_f32(rng, n, size, t.normalized).view(np.uint32)
        c[:, 3] = rng.integers(*layers, n, endpoint=True).astype(np.int32).view(np.uint32)
        w, h, dd = t.extents
        texels = _texels(rng, t.format, (t.layers * dd, h, w), specials)
        return [t, ("c", c), ("out", np.zeros((n, 4), np.uint32)), n, ("tx", texels)]
    return make


def _surface_load(surf: dict, step: int, n: int = 1024, inside: bool = False):
    """Inputs of a surface-load kernel: coordinates {x (bytes, multiples of `step`), y, z, layer} around the
    extents (inside them only for .trap)."""
    def make(rng):
        from tcforge.ptx.emulate import Surface

        s = Surface(**{**surf, "buffer": "sf"})
        w, h, d = s.extents
        row = w * s.texel_bytes
        c = np.zeros((n, 4), np.int32)
        pad = 0 if inside else 3
        c[:, 0] = rng.integers(-pad, (row - step) // step + 1 + pad, n) * step
        c[:, 1] = rng.integers(-pad, h + pad, n)
        c[:, 2] = rng.integers(-pad, d + pad, n)
        c[:, 3] = rng.integers(-pad, s.layers + pad, n)
        texels = _texels(rng, s.format, (s.layers * d, h, w))
        return [s, ("c", c), ("out", np.zeros((n, 4), np.uint32)), n, ("sf", texels)]
    return make


def _surface_store(surf: dict, step: int, values: str, n: int = 96, inside: bool = False):
    """Inputs of a surface-store kernel (one thread, samples in order): coordinates {x, y} (x in bytes, multiples
    of `step`; `step` 0: x in samples), value words (random bits, or f32 / s32 values of mixed range), the surface
    pre-filled with random texels."""
    def make(rng):
        from tcforge.ptx.emulate import Surface

        s = Surface(**{**surf, "buffer": "sf"})
        w, h, _ = s.extents
        c = np.zeros((n, 4), np.int32)
        pad = 0 if inside else 2
        c[:, 0] = rng.integers(-pad, w + pad, n) * (step or 1)
        c[:, 1] = rng.integers(-pad, h + pad, n)
        if values == "f32":
            v = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-8, 9, (n, 4))).astype(np.float32)
            v.reshape(-1)[rng.choice(4 * n, 40, replace=False)] = np.array(
                [np.nan, np.inf, -np.inf, -0.0, 65504.0, 65520.0, 65519.99, 1e-8, 6e-8, 3e-5] * 4, np.float32)
            v = v.view(np.uint32)
        elif values == "s32":
            v = rng.integers(-2**31, 2**31, (n, 4)).astype(np.int32)
            v[: n // 2] = rng.integers(-70000, 70000, (n // 2, 4))
            v = v.view(np.uint32)
        else:
            v = rng.integers(0, 2**32, (n, 4), dtype=np.uint64).astype(np.uint32)
        return [s, ("c", c), ("v", v), n, ("sf", _texels(rng, s.format, (s.layers * s.extents[2], h, w)))]
    return make


def _image_queries(rng):
    from tcforge.ptx.emulate import Surface, Texture

    return [Texture("tx", "f16x2", (11, 6, 4), True, "linear", ("wrap", "mirror"), True),
            Surface("sf", "u8x4", (9, 7, 5)), ("out", np.zeros(12, np.uint32)),
            ("tx", np.zeros((4, 6, 11, 2), np.float16)), ("sf", np.zeros((5, 7, 9, 4), np.uint8))]


_L, _C, _B = "linear", ("clamp", "clamp", "clamp"), ("border", "border", "border")
# name: (kernel, texture (Texture fields but the buffer), coordinates, specials in the texels)
TEX_ENTRIES = {
    "tex_f32x1_point_clamp": ("tex2d_ff", {"format": "f32x1", "dims": (13, 7)}, "f32", False),
    "tex_f32x1_linear_clamp": ("tex2d_ff", {"format": "f32x1", "dims": (13, 7), "filter": _L}, "f32", False),
    "tex_f32x1_linear_specials": ("tex2d_ff", {"format": "f32x1", "dims": (6, 5), "filter": _L}, "f32", True),
    "tex_f32x4_linear_border_norm": ("tex2d_ff", {"format": "f32x4", "dims": (16, 9), "filter": _L, "address": _B,
                                                  "normalized": True, "border": (0.5, -2.0, 3.0, 0.125)}, "f32",
                                     False),
    "tex_f16x4_linear_wrap_norm": ("tex2d_ff", {"format": "f16x4", "dims": (10, 6), "filter": _L,
                                                "address": ("wrap", "wrap"), "normalized": True}, "f32", True),
    "tex_u8x4_linear_mirror_norm": ("tex2d_ff", {"format": "u8x4", "dims": (12, 5), "filter": _L,
                                                 "address": ("mirror", "mirror"), "normalized": True,
                                                 "read": "normalized"}, "f32", False),
    "tex_u16x1_linear_clamp_normread": ("tex2d_ff", {"format": "u16x1", "dims": (9, 4), "filter": _L,
                                                     "read": "normalized"}, "f32", False),
    "tex_s16x2_point_clamp_normread": ("tex2d_ff", {"format": "s16x2", "dims": (9, 9), "read": "normalized"},
                                       "f32", False),
    # conversions alone (point samples): every 8-bit code, 16-bit codes, f16 specials
    "tex_u8x4_point_clamp_normread": ("tex2d_ff", {"format": "u8x4", "dims": (16, 16), "read": "normalized"},
                                      "f32", False),
    "tex_s8x4_point_clamp_normread": ("tex2d_ff", {"format": "s8x4", "dims": (16, 16), "read": "normalized"},
                                      "f32", False),
    "tex_u16x2_point_clamp_normread": ("tex2d_ff", {"format": "u16x2", "dims": (16, 16), "read": "normalized"},
                                       "f32", False),
    "tex_f16x4_point_clamp": ("tex2d_ff", {"format": "f16x4", "dims": (9, 7)}, "f32", True),
    "tex_u32x1_point_border": ("tex2d_uf", {"format": "u32x1", "dims": (7, 6), "address": _B,
                                            "border": (7.0, 0.0, 0.0, 1.0)}, "f32", False),
    "tex_s16x4_point_clamp_s32": ("tex2d_sf", {"format": "s16x4", "dims": (8, 3)}, "f32", False),
    "tex_s8x2_intcoords_border": ("tex2d_si", {"format": "s8x2", "dims": (7, 5), "address": _B}, "int", False),
    "tex_f32x2_intcoords_clamp": ("tex2d_fi", {"format": "f32x2", "dims": (7, 5)}, "int", False),
    "tex1d_f32x1_linear_clamp_norm": ("tex1d_ff", {"format": "f32x1", "dims": (40,), "filter": _L,
                                                   "normalized": True}, "f32", False),
    "tex3d_f32x1_linear_clamp": ("tex3d_ff", {"format": "f32x1", "dims": (6, 5, 4), "filter": _L}, "f32", False),
    "texa2d_f16x1_linear_clamp": ("texa2d_ff", {"format": "f16x1", "dims": (7, 5, 3), "layered": True,
                                                "filter": _L}, "f32", False),
    "tld4r_f32x4_clamp": ("tld4r_2d", {"format": "f32x4", "dims": (8, 6)}, "f32", False),
    "tld4a_u8x4_border_normread": ("tld4a_2d", {"format": "u8x4", "dims": (8, 6), "address": _B,
                                                "read": "normalized", "border": (0.25, 0.5, 0.75, 0.375)}, "f32",
                                   False),
}
# name: (kernel, surface (Surface fields but the buffer), x step in bytes, only inside the extents)
SULD_ENTRIES = {
    "suld2d_v4b32_trap": ("suld2d_v4b32_trap", {"format": "f32x4", "dims": (10, 6)}, 16, True),
    "suld2d_v4b32_clamp": ("suld2d_v4b32_clamp", {"format": "f32x4", "dims": (10, 6)}, 16, False),
    "suld2d_v4b32_zero": ("suld2d_v4b32_zero", {"format": "f32x4", "dims": (10, 6)}, 16, False),
    "suld2d_b8_clamp_u8x4": ("suld2d_b8_clamp", {"format": "u8x4", "dims": (10, 6)}, 1, False),
    "suld2d_v2b16_zero": ("suld2d_v2b16_zero", {"format": "f16x2", "dims": (10, 6)}, 4, False),
    "suld3d_b64_clamp": ("suld3d_b64_clamp", {"format": "u32x2", "dims": (5, 4, 3)}, 8, False),
    "sulda2d_b32_zero": ("sulda2d_b32_zero", {"format": "u16x2", "dims": (6, 4, 3), "layered": True}, 4, False),
}
# name: (kernel, surface, x step in bytes (0: x in samples), values, only inside the extents)
SUST_ENTRIES = {
    "sust2d_b32_clamp": ("sust2d_b32_clamp", {"format": "u32x1", "dims": (10, 6)}, 4, "bits", False),
    "sust2d_b32_zero": ("sust2d_b32_zero", {"format": "u32x1", "dims": (10, 6)}, 4, "bits", False),
    "sust2d_v2b16_clamp": ("sust2d_v2b16_clamp", {"format": "f16x2", "dims": (10, 6)}, 4, "bits", False),
    "sustp2d_f16x4_trap": ("sustp2d_v4_trap", {"format": "f16x4", "dims": (8, 6)}, 0, "f32", True),
    "sustp2d_u8x4_trap": ("sustp2d_v4_trap", {"format": "u8x4", "dims": (8, 6)}, 0, "bits", True),
    "sustp2d_s16x2_trap": ("sustp2d_v4_trap", {"format": "s16x2", "dims": (8, 6)}, 0, "s32", True),
    "sustp2d_f32x1_zero": ("sustp2d_v4_zero", {"format": "f32x1", "dims": (8, 6)}, 0, "f32", False),
}


# entry/kernel -> (surface, 64-bit words, sample range past the edges)
SURED_ENTRIES = {
    "sured2d_add_u32_trap": ({"format": "u32x1", "dims": (5, 4)}, False, 0),
    "sured2d_min_s32_clamp": ({"format": "u32x1", "dims": (5, 4)}, False, 2),
    "sured2d_max_u32_zero": ({"format": "u16x2", "dims": (5, 4)}, False, 2),
    "sured1d_and_b32_clamp": ({"format": "u32x1", "dims": (24,)}, False, 3),
    "sured2d_or_b32_zero": ({"format": "u32x1", "dims": (5, 4)}, False, 2),
    "sured3d_add_u64_trap": ({"format": "u32x2", "dims": (3, 3, 2)}, True, 0),
    "sured2d_min_s64_clamp": ({"format": "u32x2", "dims": (4, 3)}, True, 2),
    "sured2d_max_s64_zero": ({"format": "u16x4", "dims": (4, 3)}, True, 2)}


def _surface_reduce(surf: dict, wide: bool, pad: int, n: int = 1024):
    """Inputs of a surface-reduction kernel: n samples over a small surface (many land on one word), x in bytes,
    `pad` texels past each edge; values over the whole range (and near zero, so signed
    minima and maxima compete); the surface pre-filled with random texels."""
    def make(rng):
        from tcforge.ptx.emulate import Surface

        s = Surface(**{**surf, "buffer": "sf"})
        w, h, d = s.extents
        c = np.zeros((n, 4), np.int32)
        c[:, 0] = rng.integers(-pad, w + pad, n) * s.texel_bytes  # every format here: a texel is one word
        c[:, 1] = rng.integers(-pad, h + pad, n) if h > 1 else 0
        c[:, 2] = rng.integers(-pad, d + pad, n) if d > 1 else 0
        v = rng.integers(0, 2**64, n, dtype=np.uint64)
        v[: n // 4] = rng.integers(-5000, 5000, n // 4).astype(np.int64).view(np.uint64)
        v = v if wide else v.astype(np.uint32)
        return [s, ("c", c), ("v", v), n, ("sf", _texels(rng, s.format, (s.layers * d, h, w)))]
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


# ---- entries ------------------------------------------------------------------------------------------------------

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


def _u32(rng, n, hi=2**32):
    return rng.integers(0, hi, n, dtype=np.uint64).astype(np.uint32)


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
        e("cu_mufu16_all", "samples_sm90a", "mufu16", (512, 1, 1), (128, 1, 1), _mufu16, ("out0", "out1")),
        e("cu_bulk_copy", "samples_sm90a", "bulk_copy", (1, 1, 1), (64, 1, 1),
          lambda rng: [("src", rng.integers(0, 2**32, (96, 4), dtype=np.uint32)),
                       ("dst", np.full((64, 4), 0xABABABAB, np.uint32)), 5, 7, 3 * 256 + 16], ("dst",)),
        *(e(name, "samples_sm90a", k, (16, 1, 1), (128, 1, 1), _tex_entry(t, c, specials=sp), ("out",))
          for name, (k, t, c, sp) in TEX_ENTRIES.items()),
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


def wg_name(f: WgForm) -> str:
    """A wgmma form's corpus entry name."""
    return f"wgmma_{f.acc.replace('.', '_')}_{f.ta}_{f.tb}_n{f.n}_{_wg_label(f)}"


def _wg_label(f: WgForm) -> str:
    """What a form's entry name says of its operands: rA (A from registers) or its layouts, scale-d = 0."""
    names = {0: "none", 64: "sw64", 128: "sw128"}
    mn = ("mn" if f.mn_major[0] else "", "mn" if f.mn_major[1] else "")
    a = "rA" if f.steps[0][0] is None else f"A{mn[0]}{names[f.steps[0][0][3]]}"
    return f"{a}_B{mn[1]}{names[f.steps[0][1][3]]}" + ("" if f.scale_d else "_zeroC")


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
    ]


ENTRIES: list[Entry] = _samples() + _triton_entries()
# entries added since the last device run (tests/data/emulate/corpus.npz lacks them)
AWAITING_GPU: set[str] = (
    {e.name for e in ENTRIES if e.name.startswith(("wgmma_s32", "wgmma_f32_tf32", "mm_f32_tf32", "cu_tma_nanfill"))}
    | set(TEX_ENTRIES)
    | set(SULD_ENTRIES) | set(SUST_ENTRIES) | {"cu_image_queries"} | set(TMA_REDUCE_ENTRIES) | set(BULK_REDUCE_ENTRIES)
    | set(TMA_REPLACE_ENTRIES) | set(SURED_ENTRIES) | {"cu_mufu16_all"})
