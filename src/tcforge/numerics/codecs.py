"""Bit-pattern codecs: f16 bits <-> float, e4m3 codes <-> f16 and from f32, and the packed PTX conversions
`cvt.*.e4m3x2`.

The f32 -> e4m3 encoder rounds once after exact scaling by the binade's quantum; the f16 one is a table (one uint8
per f16 pattern) built with it. Both are independent of ml_dtypes (the tests cross-check them with it).
"""

from __future__ import annotations

import numpy as np

from tcforge.numerics._checks import as_bits, scalar_or_array

F16_CANONICAL_NAN = 0x7FFF
E4M3_MAX = 448.0
E4M3_NAN_CODES = (0x7F, 0xFF)


def f16_bits_to_float(bits: np.ndarray) -> np.ndarray:
    """Exact float64 values of f16 bit patterns (NaN payloads are not kept; callers track NaN separately)."""
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float64)


def float_to_f16_bits(x: np.ndarray) -> np.ndarray:
    """Round float64 values to f16 once (round to nearest even, overflow to inf); NaN becomes canonical 0x7fff."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = x.astype(np.float16).view(np.uint16)
    return np.where(np.isnan(x), np.uint16(F16_CANONICAL_NAN), out).astype(np.uint16)


def f16_is_nan(bits: np.ndarray) -> np.ndarray:
    """True where the f16 bit pattern is a NaN (exponent all ones, fraction nonzero)."""
    return (np.asarray(bits, dtype=np.uint16) & 0x7FFF) > 0x7C00


def _e4m3_value_table() -> np.ndarray:
    """float64 value of each of the 256 e4m3 (OCP E4M3FN) codes; NaN for 0x7f and 0xff."""
    codes = np.arange(256)
    exp_field = (codes >> 3) & 0xF
    mant = codes & 0x7
    sig = np.where(exp_field == 0, mant, mant + 8).astype(np.float64)
    exp = np.where(exp_field == 0, -6, exp_field - 7)
    mag = np.ldexp(sig, exp - 3)
    values = np.where(codes & 0x80, -mag, mag)
    values[list(E4M3_NAN_CODES)] = np.nan
    return values


E4M3_VALUES: np.ndarray = _e4m3_value_table()
E4M3_VALUES.flags.writeable = False


def _e4m3_to_f16_table() -> np.ndarray:
    """f16 bits of each e4m3 code (exact); both NaN codes decode to the canonical 0x7fff (sign dropped) [measured]."""
    with np.errstate(invalid="ignore"):
        table = np.nan_to_num(E4M3_VALUES, nan=0.0).astype(np.float16).view(np.uint16).copy()
    table[0x7F] = 0x7FFF
    table[0xFF] = 0x7FFF
    return table


E4M3_TO_F16: np.ndarray = _e4m3_to_f16_table()
E4M3_TO_F16.flags.writeable = False


def _f16_to_e4m3_table() -> np.ndarray:
    """uint8 e4m3 code of every f16 pattern under `cvt.rn.satfinite` (RNE, clamp to +-448, NaN -> 0x7f): each f16
    value (exact in f32) through the f32 encoder's one rounding."""
    return f32_to_e4m3_satfinite(np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
                                 .astype(np.float32))


_F16_TO_E4M3: np.ndarray | None = None


def _f16_to_e4m3() -> np.ndarray:
    """The lazily built f16 -> e4m3 table."""
    global _F16_TO_E4M3
    if _F16_TO_E4M3 is None:
        table = _f16_to_e4m3_table()
        table.flags.writeable = False
        _F16_TO_E4M3 = table
    return _F16_TO_E4M3


def e4m3_to_f16(codes: object) -> np.ndarray:
    """`cvt.rn.f16x2.e4m3x2` per lane: uint8 e4m3 codes -> uint16 f16 bits (exact; NaN codes -> 0x7fff)."""
    c = as_bits(codes, "codes", np.uint8)
    return scalar_or_array(E4M3_TO_F16[c], codes)


def f16_to_e4m3_satfinite(bits: object) -> np.ndarray:
    """`cvt.rn.satfinite.e4m3.f16` per lane: uint16 f16 bits -> uint8 codes (RNE, +-448 clamp, every NaN -> 0x7f)."""
    b = as_bits(bits, "bits", np.uint16)
    return scalar_or_array(_f16_to_e4m3()[b], bits)


def f32_to_e4m3_satfinite(x: object) -> np.ndarray:
    """float32 values -> uint8 e4m3 codes as `cvt.rn.satfinite.e4m3x2.f32` gives them: each value rounded once to
    nearest even, magnitudes past 448 (infinities too) clamped to 448, NaN -> 0x7f."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN lanes: their codes are set last
        v = np.asarray(x, dtype=np.float32).astype(np.float64)
        mag = np.abs(v)
        e = np.maximum(np.frexp(mag)[1] - 1, -6)  # the binade (subnormals: 2^-6's quantum)
        q = np.rint(np.ldexp(mag, 3 - e))  # exact scaling; rint rounds half to even
        rounded = np.minimum(np.ldexp(q, e - 3), E4M3_MAX)
        frac, ee = np.frexp(rounded)
        ee = ee - 1
        normal = ((ee + 7) << 3) | (np.ldexp(frac, 4).astype(np.int64) - 8)
        code = np.where(rounded == 0, 0, np.where(ee >= -6, normal, np.ldexp(rounded, 9).astype(np.int64)))
    out = np.where(np.isnan(v), 0x7F, code | np.where(np.signbit(v), 0x80, 0)).astype(np.uint8)
    return scalar_or_array(out, x)


def cvt_rn_satfinite_e4m3x2_f16x2(x: object) -> np.ndarray:
    """`cvt.rn.satfinite.e4m3x2.f16x2`: uint32 f16x2 words -> uint16 e4m3x2 (upper f16 half -> upper byte)."""
    w = as_bits(x, "x", np.uint32)
    table = _f16_to_e4m3()
    lo = table[(w & 0xFFFF).astype(np.uint16)].astype(np.uint16)
    hi = table[(w >> 16).astype(np.uint16)].astype(np.uint16)
    return scalar_or_array((hi << 8 | lo).astype(np.uint16), x)


def cvt_rn_f16x2_e4m3x2(codes: object) -> np.ndarray:
    """`cvt.rn.f16x2.e4m3x2`: uint16 e4m3x2 -> uint32 f16x2 words (upper byte -> upper f16 half; exact)."""
    c = as_bits(codes, "codes", np.uint16)
    lo = E4M3_TO_F16[(c & 0xFF).astype(np.uint8)].astype(np.uint32)
    hi = E4M3_TO_F16[(c >> 8).astype(np.uint8)].astype(np.uint32)
    return scalar_or_array((hi << 16 | lo).astype(np.uint32), codes)
