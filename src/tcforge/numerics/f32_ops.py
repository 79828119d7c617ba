"""f32 helpers of the layer's PTX: `cvt.f32.f16`, `cvt.rn.f16.f32`, `mul.ftz.f32`, `add.ftz.f32`.

The `.ftz` forms flush subnormal inputs and (after rounding) subnormal results to zero of the same sign; NaN
results are the canonical f32 NaN 0x7fffffff.
"""

from __future__ import annotations

import numpy as np

from tcforge.numerics._checks import as_bits, as_f32, scalar_or_array
from tcforge.numerics.codecs import float_to_f16_bits

F32_CANONICAL_NAN = np.uint32(0x7FFFFFFF)
_F32_MIN_NORMAL = np.float32(2.0**-126)


def f16_to_f32(bits: object) -> np.ndarray:
    """`cvt.f32.f16`: uint16 f16 bits -> float32 (exact; a NaN gives the canonical 0x7fffffff [assumed])."""
    b = as_bits(bits, "bits", np.uint16)
    with np.errstate(invalid="ignore"):
        out = _canonical_nan(b.view(np.float16).astype(np.float32))
    return scalar_or_array(out, bits)


def f32_to_f16_rn(x: object) -> np.ndarray:
    """`cvt.rn.f16.f32`: float32 -> uint16 f16 bits, round to nearest even, overflow to inf, NaN -> 0x7fff."""
    v = as_f32(x, "x")
    with np.errstate(invalid="ignore"):
        wide = v.astype(np.float64)
    return scalar_or_array(float_to_f16_bits(wide), x)


def flush_subnormal_f32(x: np.ndarray) -> np.ndarray:
    """Replace float32 subnormals by zero of the same sign."""
    x = np.asarray(x, dtype=np.float32)
    return np.where(np.abs(x) < _F32_MIN_NORMAL, np.copysign(np.float32(0.0), x), x).astype(np.float32)


def _canonical_nan(r: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(r), F32_CANONICAL_NAN.view(np.float32), r).astype(np.float32)


def f32_mul_ftz(a: object, b: object) -> np.ndarray:
    """`mul.rn.ftz.f32`: flush subnormal inputs, round the product to 24 bits as if the exponent were unbounded, then
    flush a result below 2^-126 to signed zero (a product just under 2^-126 that rounds up to it survives) [measured].
    """
    x = flush_subnormal_f32(as_f32(a, "a"))
    y = flush_subnormal_f32(as_f32(b, "b"))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        exact = x.astype(np.float64) * y.astype(np.float64)  # 24 x 24 bits: exact in float64
        frac, exp = np.frexp(exact)
        rounded = np.ldexp(frac.astype(np.float32).astype(np.float64), exp)  # RNE to 24 bits, exponent unbounded
        rounded = np.where(np.isfinite(exact), rounded, exact)
        r = rounded.astype(np.float32)  # exact, or +-inf past the f32 range
        r = np.where(np.abs(rounded) < 2.0**-126, np.copysign(np.float32(0.0), exact), r).astype(np.float32)
    return scalar_or_array(_canonical_nan(r), a, b)


def f32_add_ftz(a: object, b: object) -> np.ndarray:
    """`add.rn.ftz.f32`: flush subnormal inputs, add with one rounding to nearest even, flush a subnormal result."""
    x = flush_subnormal_f32(as_f32(a, "a"))
    y = flush_subnormal_f32(as_f32(b, "b"))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = np.add(x, y, dtype=np.float32)
    return scalar_or_array(_canonical_nan(flush_subnormal_f32(r)), a, b)
