"""Bit-exact emulation of `mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16` on sm_89 ("ada") and sm_90 ("hopper").

Vectorised numpy over whole tiles. Both models reduce to exact float64 arithmetic: every e4m3 product is exact
(4 x 4 significand bits) and every partial sum below spans fewer than 53 bits, so float64 sums of them are exact;
the only roundings are the ones the hardware makes (`astype(float16)` rounds float64 to nearest even, once).
See docs/numerics.md for the models and the evidence.
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
_IS_NAN = np.isnan(E4M3_VALUES)
_ZERO_EXP = -60


def _ada_exponent_table() -> np.ndarray:
    mags = np.abs(_VALUES)
    exps = np.full(256, _ZERO_EXP, dtype=np.int8)
    nz = mags > 0
    exps[nz] = np.maximum(np.floor(np.log2(mags[nz])), -6).astype(np.int8)
    return exps


_ADA_EXP = _ada_exponent_table()
_NEG = (np.arange(256) & 0x80) != 0
# Hopper: the first HMMA takes k % 4 in {0, 1}, the second k % 4 in {2, 3} (the F2FP unpack order).
_HOPPER_K = np.concatenate([np.flatnonzero(np.arange(32) % 4 < 2), np.flatnonzero(np.arange(32) % 4 >= 2)])

_CHUNK_TILES = 64  # tiles per vectorised pass: keeps the (16, T, 8, 16) float64 temporaries inside the L2 cache


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
    row_nan = _IS_NAN[a].any(axis=-1)  # (T, 16)
    col_nan = _IS_NAN[b].any(axis=-2)  # (T, 8)
    return row_nan[:, :, None] | col_nan[:, None, :] | ((c & 0x7FFF) > 0x7C00)


def _hopper_chunk(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Hopper lowering: acc = RN(sum of k%4<2 products); acc = RN(acc + sum of k%4>=2 products); d = RN(acc + c)."""
    av = _VALUES[a[:, :, _HOPPER_K]]  # (T, 16, 32) float64, k reordered so each HMMA's half is contiguous
    bv = _VALUES[b[:, _HOPPER_K, :]]  # (T, 32, 8)
    # matmul sums exact products on a 2^-18 grid below 2^22: exact in any order, with or without FMA
    acc = _to_f16_values(np.matmul(av[:, :, :16], bv[:, :16, :]) + 0.0)  # + 0.0: an exact zero is +0
    acc = _to_f16_values(acc + np.matmul(av[:, :, 16:], bv[:, 16:, :]) + 0.0)
    cv = c.view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = (acc + cv).astype(np.float16).view(np.uint16)  # HADD2: IEEE sum incl. +0 + -0 = +0, inf - inf = NaN
    nan = _nan_mask(a, b, c) | ((d & 0x7FFF) > 0x7C00)
    return np.where(nan, np.uint16(F16_CANONICAL_NAN), d)


def _ada_block(ea: np.ndarray, eb: np.ndarray, av: np.ndarray, bv: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """One 16-term Ada block on finite data; k-major operands ea/av (16, T, 16, 1), eb/bv (16, T, 1, 8); acc (T, 16, 8).

    Returns the float64 value of RN_f16(sum of terms cut toward zero to 13 bits below the largest term exponent).
    """
    m = np.max(ea + eb, axis=0).astype(np.int32)  # (T, 16, 8): block exponent of the products (-120: none)
    acc_exp = np.maximum(np.frexp(acc)[1] - 1, -14)
    m = np.where(acc != 0, np.maximum(m, acc_exp), m)
    scale = np.ldexp(1.0, 13 - m)  # 2^(13 - M): one unit = 2^(M - 13)
    prod = av * bv  # (16, T, 16, 8) exact products
    prod *= scale
    np.trunc(prod, out=prod)
    total = prod.sum(axis=0) + np.trunc(acc * scale) + 0.0  # exact integers below 2^20; + 0.0 turns -0 into +0
    return _to_f16_values(total / scale)


def _ada_chunk(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Ada: two contiguous 16-term blocks (k 0-15, then 16-31), each rounding once to f16; C enters the first block."""
    a_k = np.ascontiguousarray(a.transpose(2, 0, 1))[:, :, :, None]  # (32, T, 16, 1)
    b_k = np.ascontiguousarray(b.transpose(1, 0, 2))[:, :, None, :]  # (32, T, 1, 8)
    cv = c.view(np.float16).astype(np.float64)
    c_inf = np.isinf(cv)
    acc = np.where(c_inf, 0.0, cv)
    for lo in (0, 16):
        ka, kb = a_k[lo : lo + 16], b_k[lo : lo + 16]
        new = _ada_block(_ADA_EXP[ka], _ADA_EXP[kb], _VALUES[ka], _VALUES[kb], acc)
        acc = new if lo == 0 else new
        if lo == 0:
            blk1 = new
    acc_inf_1 = np.isinf(blk1)
    # an inf accumulator (from C or from block-1 overflow) passes through: the products are finite
    with np.errstate(invalid="ignore"):
        d = np.where(c_inf, cv, np.where(acc_inf_1, blk1, acc))
    bits = d.astype(np.float16).view(np.uint16)
    bits = _ada_signed_zeros(a, b, c, bits, blk1)
    return np.where(_nan_mask(a, b, c), np.uint16(F16_CANONICAL_NAN), bits)


def _ada_signed_zeros(a: np.ndarray, b: np.ndarray, c: np.ndarray, bits: np.ndarray, blk1: np.ndarray) -> np.ndarray:
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
