"""Exact rounding helpers: round-to-odd float64 sums (then any rounding to f32/bf16 is a single correct rounding),
directed rounding float64 -> f32, bf16 <-> float64, f32 flush-to-zero."""

from __future__ import annotations

import numpy as np


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = fl(a + b) and the exact error e (a + b = s + e), Knuth's TwoSum."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _to_odd(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Round-to-odd: an inexact s with an even last bit moves one ulp toward the true value."""
    bits = s.view(np.uint64)
    even = (bits & np.uint64(1)) == 0
    fix = (e != 0) & even
    if not fix.any():
        return s
    return np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def sum_round_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd in float64 (53 bits: enough for one correct rounding to 24 bits or fewer)."""
    s, e = two_sum(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return _to_odd(s, e)


def fma_round_odd(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """p + c rounded to odd where p is an exact float64 product (of two f32/bf16 values)."""
    return sum_round_odd(p, c)


def round_f64_to_f32(x: np.ndarray, mode: str) -> np.ndarray:
    """float64 -> float32 under PTX rounding mode rn/rz/rm/rp (x exact or rounded to odd)."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.asarray(x, np.float64).astype(np.float32)
        if mode == "rn":
            return r
        r64 = r.astype(np.float64)
        if mode == "rz":
            fix = np.abs(r64) > np.abs(x)
            return np.where(fix, np.nextafter(r, np.float32(0)), r)
        if mode == "rm":
            return np.where(r64 > x, np.nextafter(r, np.float32(-np.inf)), r)
        if mode == "rp":
            return np.where(r64 < x, np.nextafter(r, np.float32(np.inf)), r)
    raise ValueError(mode)


def round_f64_to_f16(x: np.ndarray, mode: str) -> np.ndarray:
    """float64 (exact or rounded to odd) -> f16 bits under rn/rz/rm/rp."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.asarray(x, np.float64).astype(np.float16)
        if mode != "rn":
            r64 = r.astype(np.float64)
            if mode == "rz":
                r = np.where(np.abs(r64) > np.abs(x), np.nextafter(r, np.float16(0)), r)
            elif mode == "rm":
                r = np.where(r64 > x, np.nextafter(r, np.float16(-np.inf)), r)
            else:
                r = np.where(r64 < x, np.nextafter(r, np.float16(np.inf)), r)
    bits = np.asarray(r, np.float16).view(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), bits)


def flush_f32(x: np.ndarray) -> np.ndarray:
    """f32 subnormals -> zero of the same sign."""
    x = np.asarray(x, np.float32)
    sub = (np.abs(x) < np.float32(1.1754944e-38)) & (x != 0)
    if not sub.any():
        return x
    return np.where(sub, np.copysign(np.float32(0), x), x)


def bf16_bits_to_f64(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns -> float64 values."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def f64_to_bf16_rn(x: np.ndarray) -> np.ndarray:
    """float64 (exact or rounded to odd) -> bf16 bits, nearest even, NaN -> 0x7FFF."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
        r = np.where((r.astype(np.float64) != x) & ((r.view(np.uint32) & 1) == 0) & np.isfinite(x),
                     np.nextafter(r, np.where(x > r, np.float32(np.inf), np.float32(-np.inf))), r)
    b = np.asarray(r, np.float32).view(np.uint32)
    rounded = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return np.where(np.isnan(x), np.uint32(0x7FFF), rounded).astype(np.uint16)
