"""mma.sync fragment layouts and the inputs of the inline-PTX mma kernels: f16 / e4m3 special tiles, integer,
f64, tf32, m16n8k8, FP8 m16n8k16, m8n8k4 and sparse mma.sp forms, with their tables."""

from __future__ import annotations

import numpy as np

from tools.corpus.values import (
    E4M3_SPECIAL,
    E5M2_SPECIAL,
    F16_SPECIAL,
    F32_SPECIAL,
    _bf16,
    _sprinkle,
    _to_e4m3,
    _wg_codes,
    f16,
    f32,
)

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
