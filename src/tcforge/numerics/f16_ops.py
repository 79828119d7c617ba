"""f16 arithmetic as PTX does it (`add/sub/mul/fma.rn`, `max/min`, `neg/abs`), scalar lanes and packed f16x2 words.

Values are computed exactly in float64 (sums and products of two f16 are exact there) and rounded to f16 once;
`fma` adds an error-free correction so that its single rounding is exact too. NaN results are the canonical 0x7fff.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tcforge.numerics._checks import as_bits, scalar_or_array
from tcforge.numerics.codecs import F16_CANONICAL_NAN, f16_bits_to_float, f16_is_nan, float_to_f16_bits

_SIGN = np.uint16(0x8000)


def _binary(name_a: str, a: object, name_b: str, b: object) -> tuple[np.ndarray, np.ndarray]:
    return as_bits(a, name_a, np.uint16), as_bits(b, name_b, np.uint16)


def f16_add(a: object, b: object) -> np.ndarray:
    """`add.rn.f16`: a + b rounded once to nearest even (subnormals kept)."""
    x, y = _binary("a", a, "b", b)
    with np.errstate(invalid="ignore"):
        r = float_to_f16_bits(f16_bits_to_float(x) + f16_bits_to_float(y))
    return scalar_or_array(r, a, b)


def f16_sub(a: object, b: object) -> np.ndarray:
    """`sub.rn.f16`: a - b rounded once to nearest even."""
    x, y = _binary("a", a, "b", b)
    with np.errstate(invalid="ignore"):
        r = float_to_f16_bits(f16_bits_to_float(x) - f16_bits_to_float(y))
    return scalar_or_array(r, a, b)


def f16_mul(a: object, b: object) -> np.ndarray:
    """`mul.rn.f16`: a * b rounded once to nearest even."""
    x, y = _binary("a", a, "b", b)
    with np.errstate(invalid="ignore"):
        r = float_to_f16_bits(f16_bits_to_float(x) * f16_bits_to_float(y))
    return scalar_or_array(r, a, b)


def fma_f64_to_f16_bits(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Round p + c to f16 once, where p and c are exact float64 values (p a product of two f16, c an f16).

    The float64 sum s may itself be rounded; TwoSum gives the exact error e, and when e != 0 s is moved one float64
    step towards the exact value, which can then no longer sit on an f16 rounding boundary.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        s = p + c
        bp = s - c
        err = (p - bp) + (c - (s - bp))
        finite = np.isfinite(s)
        err = np.where(finite, err, 0.0)
        nudged = np.where(err > 0, np.nextafter(s, np.inf), np.where(err < 0, np.nextafter(s, -np.inf), s))
    return float_to_f16_bits(nudged)


def f16_fma(a: object, b: object, c: object) -> np.ndarray:
    """`fma.rn.f16`: a * b + c computed exactly and rounded once to nearest even."""
    x, y = _binary("a", a, "b", b)
    z = as_bits(c, "c", np.uint16)
    with np.errstate(invalid="ignore"):
        p = f16_bits_to_float(x) * f16_bits_to_float(y)  # exact: 11 x 11 significand bits
    r = fma_f64_to_f16_bits(p, f16_bits_to_float(z))
    return scalar_or_array(r, a, b, c)


def _order_key(bits: np.ndarray) -> np.ndarray:
    """An int32 key that orders non-NaN f16 patterns by value with -0 < +0."""
    b = bits.astype(np.int32)
    return np.where(b & 0x8000, -(b & 0x7FFF) - 1, b)


def _max_min(x: np.ndarray, y: np.ndarray, want_max: bool) -> np.ndarray:
    nx, ny = f16_is_nan(x), f16_is_nan(y)
    kx, ky = _order_key(x), _order_key(y)
    pick_x = kx > ky if want_max else kx < ky
    r = np.where(pick_x, x, y)
    r = np.where(nx & ~ny, y, np.where(ny & ~nx, x, r))
    return np.where(nx & ny, np.uint16(F16_CANONICAL_NAN), r).astype(np.uint16)


def f16_max(a: object, b: object) -> np.ndarray:
    """`max.f16`: the larger value, +0 > -0; one NaN input returns the other input, two NaN give canonical NaN."""
    x, y = _binary("a", a, "b", b)
    return scalar_or_array(_max_min(x, y, True), a, b)


def f16_min(a: object, b: object) -> np.ndarray:
    """`min.f16`: the smaller value, -0 < +0; one NaN input returns the other input, two NaN give canonical NaN."""
    x, y = _binary("a", a, "b", b)
    return scalar_or_array(_max_min(x, y, False), a, b)


def f16_neg(a: object) -> np.ndarray:
    """`neg.f16`: flips the sign bit; a NaN input gives the canonical 0x7fff (PTX: unspecified; H200: measured)."""
    x = as_bits(a, "a", np.uint16)
    r = np.where(f16_is_nan(x), np.uint16(F16_CANONICAL_NAN), x ^ _SIGN).astype(np.uint16)
    return scalar_or_array(r, a)


def f16_abs(a: object) -> np.ndarray:
    """`abs.f16`: clears the sign bit; a NaN input gives the canonical 0x7fff (H200: measured)."""
    x = as_bits(a, "a", np.uint16)
    r = np.where(f16_is_nan(x), np.uint16(F16_CANONICAL_NAN), x & np.uint16(0x7FFF)).astype(np.uint16)
    return scalar_or_array(r, a)


def _lanes(word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (word & 0xFFFF).astype(np.uint16), (word >> 16).astype(np.uint16)


def _pack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return (hi.astype(np.uint32) << 16 | lo.astype(np.uint32)).astype(np.uint32)


def _packed(op: Callable[..., np.ndarray], names: tuple[str, ...], words: tuple[object, ...]) -> np.ndarray:
    """Apply a lane op to each f16 half of uint32 f16x2 words (low half = first element)."""
    arrays = [as_bits(w, n, np.uint32) for n, w in zip(names, words, strict=True)]
    split = [_lanes(w) for w in arrays]
    lo = op(*[s[0] for s in split])
    hi = op(*[s[1] for s in split])
    return scalar_or_array(np.asarray(_pack(np.asarray(lo), np.asarray(hi))), *words)


def f16x2_add(a: object, b: object) -> np.ndarray:
    """`add.rn.f16x2` on uint32 words."""
    return _packed(f16_add, ("a", "b"), (a, b))


def f16x2_sub(a: object, b: object) -> np.ndarray:
    """`sub.rn.f16x2` on uint32 words."""
    return _packed(f16_sub, ("a", "b"), (a, b))


def f16x2_mul(a: object, b: object) -> np.ndarray:
    """`mul.rn.f16x2` on uint32 words."""
    return _packed(f16_mul, ("a", "b"), (a, b))


def f16x2_fma(a: object, b: object, c: object) -> np.ndarray:
    """`fma.rn.f16x2` on uint32 words (one rounding per lane)."""
    return _packed(f16_fma, ("a", "b", "c"), (a, b, c))


def f16x2_max(a: object, b: object) -> np.ndarray:
    """`max.f16x2` on uint32 words."""
    return _packed(f16_max, ("a", "b"), (a, b))


def f16x2_min(a: object, b: object) -> np.ndarray:
    """`min.f16x2` on uint32 words."""
    return _packed(f16_min, ("a", "b"), (a, b))


def f16x2_neg(a: object) -> np.ndarray:
    """`neg.f16x2` on uint32 words."""
    return _packed(f16_neg, ("a",), (a,))


def f16x2_abs(a: object) -> np.ndarray:
    """`abs.f16x2` on uint32 words."""
    return _packed(f16_abs, ("a",), (a,))
