"""Bit-exact emulation of `mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16` on sm_89 ("ada") and sm_90 ("hopper").

Vectorised numpy over whole tiles (tile index innermost). Both models are "align every term to the block's largest
exponent, cut toward zero to F bits (Ada 13, Hopper HMMA 25), sum exactly, round once to f16". Every e4m3 product is
exact (4 x 4 significand bits) and each cut term and block sum fits the float32/float64 significand it is computed in,
so the only roundings are the ones the hardware makes (numpy's cast to float16 rounds to nearest even, once).
See docs/numerics.md for the models and the evidence, mma_reference.py for the independent slow version.
"""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.numerics._checks import tile
from tcforge.numerics.codecs import E4M3_VALUES, F16_CANONICAL_NAN

MODELS = ("ada", "hopper")

# Per-code tables: value with NaN -> 0 (NaN is tracked separately), the NaN flag, and the Ada block exponent
# (floor(log2|x|) clamped at the subnormal exponent -6; zero and NaN codes get -60 so they never set the block maximum).
_VALUES = np.nan_to_num(E4M3_VALUES, nan=0.0)
_VALUES32 = _VALUES.astype(np.float32)
_IS_NAN = np.isnan(E4M3_VALUES)
_ZERO_EXP = -60


def _ada_exponent_table() -> np.ndarray:
    """Ada exponent of each e4m3 code: max(floor(log2|x|), -6); zero and NaN codes -60."""
    mags = np.abs(_VALUES)
    exps = np.full(256, _ZERO_EXP, dtype=np.int8)
    nz = mags > 0
    exps[nz] = np.maximum(np.floor(np.log2(mags[nz])), -6).astype(np.int8)
    return exps


_ADA_EXP = _ada_exponent_table()
_NEG = (np.arange(256) & 0x80) != 0
# Hopper: the first HMMA takes k % 4 in {0, 1}, the second k % 4 in {2, 3} (the F2FP unpack order).
_HOPPER_K = np.concatenate([np.flatnonzero(np.arange(32) % 4 < 2), np.flatnonzero(np.arange(32) % 4 >= 2)])

_CHUNK_TILES = 128  # tiles per vectorised pass: keeps the (16, 16, 8, T) float32 temporaries inside the L2 cache


def _check_operands(a: object, b: object, c: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a_ = tile(a, "a", np.uint8, (16, 32))
    b_ = tile(b, "b", np.uint8, (32, 8))
    c_ = tile(c, "c", np.uint16, (16, 8))
    lead = a_.shape[:-2]
    if b_.shape[:-2] != lead or c_.shape[:-2] != lead:
        raise TcforgeError(
            f"a, b, c must share their leading dims: a {a_.shape} -> {lead}, b {b_.shape}, c {c_.shape} "
            "(expected a (..., 16, 32), b (..., 32, 8), c (..., 16, 8) with the same ...)"
        )
    return a_, b_, c_


def _to_f16_values(x: np.ndarray) -> np.ndarray:
    """Round exact float64 values to f16 once and return them as float64 again (overflow -> inf)."""
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float64)


def _nan_mask(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """NaN outputs in both models: a NaN code in the row of A or the column of B (even times 0), or NaN in C."""
    nan = (c & 0x7FFF) > 0x7C00
    a_nan, b_nan = (a & 0x7F) == 0x7F, (b & 0x7F) == 0x7F
    if a_nan.any() or b_nan.any():  # rare outside the special-value families: skip the per-row work otherwise
        nan = nan | a_nan.any(axis=-1)[:, :, None] | b_nan.any(axis=-2)[:, None, :]
    return nan


# Hopper HMMA.16816.F16: every addend (16 products and the accumulator) is cut toward zero to 25 bits below the
# largest addend exponent, then the sum is rounded once to f16. A product's exponent is the sum of its f16 operands'
# exponents (e4m3 subnormals are normal in f16, so no clamp); the accumulator's is floor(log2|acc|).
HOPPER_FRAC_BITS = 25
_HOPPER_MIN_EXP = -30  # "nothing nonzero" blocks are clamped here so 2^(25 - M) stays finite in float32


def _f16_operand_exponent_table() -> np.ndarray:
    """floor(log2|x|) of each e4m3 code's value (as an f16 operand); zero and NaN codes get -60."""
    mags = np.abs(_VALUES)
    exps = np.full(256, _ZERO_EXP, dtype=np.int8)
    nz = mags > 0
    exps[nz] = np.floor(np.log2(mags[nz])).astype(np.int8)
    return exps


def _f16_floor_log2_table() -> np.ndarray:
    """floor(log2|x|) of each finite nonzero f16 bit pattern (subnormals included); zero, inf and NaN get -60."""
    values = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    exps = np.full(65536, _ZERO_EXP, dtype=np.int8)
    ok = np.isfinite(values) & (values != 0)
    exps[ok] = (np.frexp(values[ok])[1] - 1).astype(np.int8)
    return exps


_HOPPER_EXP = _f16_operand_exponent_table()
_F16_LOG2 = _f16_floor_log2_table()
_HOPPER_SCALE = np.ldexp(
    np.float32(1.0),
    HOPPER_FRAC_BITS - np.maximum(np.arange(256).astype(np.uint8).view(np.int8).astype(np.int32), _HOPPER_MIN_EXP),
).astype(np.float32)


def _hopper_hmma(ea: np.ndarray, eb: np.ndarray, av: np.ndarray, bv: np.ndarray, acc: np.ndarray | None) -> np.ndarray:
    """One HMMA.16816.F16 step, tile index last: ea/av (16, 16, 1, T), eb/bv (16, 1, 8, T) [k, i, j, t];
    acc (16, 8, T) float16 (finite), or None for C = +0. Returns the new float16 accumulator.

    x_k = p_k * 2^(25 - M) and trunc(x_k) are exact in float32 (at most 8 significant bits, below 2^27); their sum
    (below 2^31) is accumulated in float64, exactly.
    """
    m = np.max(ea + eb, axis=0)  # (16, 8, T) int8
    if acc is not None:
        np.maximum(m, _F16_LOG2[acc.view(np.uint16)], out=m)
    scale32 = _HOPPER_SCALE[m.view(np.uint8)]
    x = av * bv
    x *= scale32
    np.trunc(x, out=x)
    total = x.sum(axis=0, dtype=np.float64)
    scale = scale32.astype(np.float64)
    if acc is not None:
        total += np.trunc(acc.astype(np.float64) * scale)
    total += 0.0  # an exact zero sum is +0
    total /= scale
    with np.errstate(over="ignore"):
        return total.astype(np.float16)


def _hopper_chunk(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Hopper lowering: acc = HMMA(0, k%4 in {0,1}); acc = HMMA(acc, k%4 in {2,3}); d = RN_f16(acc + c) (HADD2)."""
    a_k = np.ascontiguousarray(a[:, :, _HOPPER_K].transpose(2, 1, 0))[:, :, None, :]  # (32, 16, 1, T), k reordered
    b_k = np.ascontiguousarray(b[:, _HOPPER_K, :].transpose(1, 2, 0))[:, None, :, :]  # (32, 1, 8, T)
    lo, hi = slice(0, 16), slice(16, 32)
    acc = _hopper_hmma(_HOPPER_EXP[a_k[lo]], _HOPPER_EXP[b_k[lo]], _VALUES32[a_k[lo]], _VALUES32[b_k[lo]], None)
    acc_inf = np.isinf(acc)
    acc2 = _hopper_hmma(
        _HOPPER_EXP[a_k[hi]], _HOPPER_EXP[b_k[hi]], _VALUES32[a_k[hi]], _VALUES32[b_k[hi]],
        np.where(acc_inf, np.float16(0), acc),
    )
    acc = np.where(acc_inf, acc, acc2).transpose(2, 0, 1).astype(np.float64)  # (T, 16, 8)
    cv = c.view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = (acc + cv).astype(np.float16).view(np.uint16)  # HADD2: IEEE sum incl. +0 + -0 = +0, inf - inf = NaN
    nan = _nan_mask(a, b, c) | ((d & 0x7FFF) > 0x7C00)
    return np.where(nan, np.uint16(F16_CANONICAL_NAN), d)


# Ada runs in float32: products (8 significand bits), each term scaled to units of 2^(M-13) and cut (< 2^15), the
# block sum (< 2^20) and its value sum * 2^(M-13) are all exact in float32, so only the final f16 rounding rounds.
_MIN_BLOCK_EXP = -20  # blocks with nothing nonzero (exponent -120) are clamped here so 2^(13 - M) stays finite


def _scale_table() -> np.ndarray:
    """2^(13 - M) as float32, indexed by the int8 block exponent M viewed as uint8."""
    m = np.arange(256).astype(np.uint8).view(np.int8).astype(np.int32)
    return np.ldexp(np.float32(1.0), 13 - np.maximum(m, _MIN_BLOCK_EXP)).astype(np.float32)


def _f16_exponent_table() -> np.ndarray:
    """Ada exponent of an f16 accumulator, by bit pattern: max(floor(log2|x|), -14); zero (and inf/NaN) -> -60."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    field = ((bits >> 10) & 0x1F).astype(np.int32)
    exps = np.where(field == 0, -14, field - 15).astype(np.int8)
    exps[((bits & 0x7FFF) == 0) | (field == 0x1F)] = _ZERO_EXP
    return exps


_SCALE = _scale_table()
_F16_EXP = _f16_exponent_table()


def _ada_block(ea: np.ndarray, eb: np.ndarray, av: np.ndarray, bv: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """One 16-term Ada block on finite data, tile index last: ea/av (16, 16, 1, T) [k, i, -, t],
    eb/bv (16, 1, 8, T) [k, -, j, t]; acc (16, 8, T) float16 (finite). Returns the new float16 accumulator:
    RN_f16(sum of the terms, each cut toward zero to 13 bits below the largest term exponent)."""
    m = np.max(ea + eb, axis=0)  # (16, 8, T) int8: block exponent of the nonzero products (-120: none)
    np.maximum(m, _F16_EXP[acc.view(np.uint16)], out=m)
    scale = _SCALE[m.view(np.uint8)]  # 2^(13 - M): one unit = 2^(M - 13)
    prod = av * bv  # (16, 16, 8, T) exact products
    prod *= scale
    np.trunc(prod, out=prod)
    total = prod.sum(axis=0)
    total += np.trunc(acc.astype(np.float32) * scale)
    total += np.float32(0.0)  # an exact zero sum is +0
    total /= scale
    with np.errstate(over="ignore"):
        return total.astype(np.float16)


def _ada_chunk(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Ada: two contiguous 16-term blocks (k 0-15, then 16-31), each rounding once to f16; C enters the first block."""
    a_k = np.ascontiguousarray(a.transpose(2, 1, 0))[:, :, None, :]  # (32, 16, 1, T)
    b_k = np.ascontiguousarray(b.transpose(1, 2, 0))[:, None, :, :]  # (32, 1, 8, T)
    c16 = np.ascontiguousarray(c.transpose(1, 2, 0)).view(np.float16)  # (16, 8, T)
    c_inf = np.isinf(c16)
    acc = np.where(np.isfinite(c16), c16, np.float16(0))  # inf passes through below; NaN is masked at the end
    blk1 = _ada_block(_ADA_EXP[a_k[:16]], _ADA_EXP[b_k[:16]], _VALUES32[a_k[:16]], _VALUES32[b_k[:16]], acc)
    blk1_inf = np.isinf(blk1)
    acc = np.where(blk1_inf, np.float16(0), blk1)
    blk2 = _ada_block(_ADA_EXP[a_k[16:]], _ADA_EXP[b_k[16:]], _VALUES32[a_k[16:]], _VALUES32[b_k[16:]], acc)
    # an infinite accumulator (C itself, or block-1 overflow) passes through: the products are all finite
    d = np.where(c_inf, c16, np.where(blk1_inf, blk1, blk2))
    bits = np.ascontiguousarray(d.view(np.uint16).transpose(2, 0, 1))  # (T, 16, 8)
    bits = _ada_signed_zeros(a, b, c, bits)
    return np.where(_nan_mask(a, b, c), np.uint16(F16_CANONICAL_NAN), bits)


def _ada_signed_zeros(a: np.ndarray, b: np.ndarray, c: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """IEEE zero sign where nothing nonzero was summed: -0 iff C is -0 and every product is a negative zero."""
    cand = (c == 0x8000) & (bits == 0)
    if not cand.any():
        return bits
    t, i, j = np.nonzero(cand)
    prod_zero_neg = (_NEG[a[t, i, :]] ^ _NEG[b[t, :, j]]) & (_VALUES[a[t, i, :]] * _VALUES[b[t, :, j]] == 0)
    neg = prod_zero_neg.all(axis=-1)
    out = bits.copy()
    out[t[neg], i[neg], j[neg]] = 0x8000
    return out


_CHUNK_FN = {"ada": _ada_chunk, "hopper": _hopper_chunk}


def mma_m16n8k32_e4m3_f16(a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str) -> np.ndarray:
    """`mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16` bit for bit.

    a: uint8 (..., 16, 32) e4m3 codes [row, k]; b: uint8 (..., 32, 8) codes [k, col]; c: uint16 (..., 16, 8) f16
    bits; model: "ada" (sm_89 native FP8) or "hopper" (the sm_90 lowering of ptxas 13.0). Returns uint16 (..., 16, 8).
    """
    if model not in MODELS:
        raise TcforgeError(f"model: unknown model {model!r}; valid models: {', '.join(MODELS)}")
    a_, b_, c_ = _check_operands(a, b, c)
    lead = a_.shape[:-2]
    a2, b2, c2 = a_.reshape(-1, 16, 32), b_.reshape(-1, 32, 8), c_.reshape(-1, 16, 8)
    out = np.empty(c2.shape, dtype=np.uint16)
    fn = _CHUNK_FN[model]
    for lo in range(0, a2.shape[0], _CHUNK_TILES):
        hi = lo + _CHUNK_TILES
        out[lo:hi] = fn(a2[lo:hi], b2[lo:hi], c2[lo:hi])
    return out.reshape(*lead, 16, 8)
