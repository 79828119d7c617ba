"""Exact rounding helpers: round-to-odd float64 sums, products, quotients and square roots (then any rounding to
f32/f16/bf16 is a single correct rounding), 64-bit integers to float64 rounded to odd, directed rounding float64 ->
f32/f16/bf16 (with flush-to-zero), f64 results in every rounding mode through exact rationals, f32 flush-to-zero."""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

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


def round_f64_to_f32(x: np.ndarray, mode: str, ftz: bool = False) -> np.ndarray:
    """float64 -> float32 under PTX rounding mode rn/rz/rm/rp (x exact or rounded to odd), optionally with .ftz."""
    # .ftz: rounded to 24 bits as if the exponent were unbounded, then a result below 2^-126 becomes a zero of x's
    # sign (what mul.ftz.f32 measurably does on the H200; assumed for the other .ftz operations)
    if ftz:
        x = np.asarray(x, np.float64)
        small = np.abs(x) < 2.0 ** -126
        scaled = np.where(small, x * 2.0 ** 64, x)
        r = round_f64_to_f32(scaled, mode).astype(np.float64)
        r = np.where(small, r * 2.0 ** -64, r)
        return np.where(np.abs(r) < 2.0 ** -126, np.copysign(0.0, x), r).astype(np.float32)
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


def round_f64_to_f16(x: np.ndarray, mode: str, ftz: bool = False) -> np.ndarray:
    """float64 (exact or rounded to odd) -> f16 bits under rn/rz/rm/rp, optionally .ftz; NaN -> 0x7fff."""
    # .ftz: rounded to 11 bits as if the exponent were unbounded, then a result below 2^-14 becomes a zero of x's
    # sign (assumed, as measured for f32)
    if ftz:
        x = np.asarray(x, np.float64)
        small = np.abs(x) < 2.0 ** -14
        r = f16_bits_to_f64(round_f64_to_f16(np.where(small, x * 2.0 ** 16, x), mode))  # [2^-15, 2^-14) -> normal
        r = np.where(small, r * 2.0 ** -16, r)
        out = round_f64_to_f16(np.where(np.abs(r) < 2.0 ** -14, np.copysign(0.0, x), r), "rn")
        return np.where(np.isnan(x), np.uint16(0x7FFF), out).astype(np.uint16)
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


def f16_bits_to_f64(bits: np.ndarray) -> np.ndarray:
    """f16 bit patterns -> float64 values."""
    return np.asarray(bits).astype(np.uint16).view(np.float16).astype(np.float64)


def _step16(bits: np.ndarray, up: np.ndarray) -> np.ndarray:
    """One step of a 16-bit sign-magnitude float toward +inf (`up`) or -inf (infinities step to the largest finite)."""
    b = np.asarray(bits).astype(np.int64)
    neg = (b & 0x8000) != 0
    mag = b & 0x7FFF
    away = up != neg
    cross = (mag == 0) & ~away  # -0 up or +0 down: the smallest subnormal of the other sign
    out = np.where(away, b + 1, b - 1)
    return np.where(cross, np.where(neg, 0x0001, 0x8001), out).astype(np.uint16)


def round_f64_to_bf16(x: np.ndarray, mode: str) -> np.ndarray:
    """float64 (exact or rounded to odd) -> bf16 bits under rn/rz/rm/rp; NaN -> 0x7fff."""
    x = np.asarray(x, np.float64)
    r = f64_to_bf16_rn(x)
    if mode == "rn":
        return r
    v = bf16_bits_to_f64(r)
    with np.errstate(invalid="ignore"):
        if mode == "rz":
            fix, up = np.abs(v) > np.abs(x), v < 0
        elif mode == "rm":
            fix, up = v > x, np.zeros(x.shape, bool)
        else:
            fix, up = v < x, np.ones(x.shape, bool)
    return np.where(fix & ~np.isnan(x), _step16(r, up), r).astype(np.uint16)


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = fl(a * b) and the exact error e (a * b = p + e) by Veltkamp splitting (no over- or underflow)."""
    def split(v):
        t = 134217729.0 * v
        hi = t - (t - v)
        return hi, v - hi
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        ah, al = split(a)
        bh, bl = split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(p), e, 0.0)


def _odd_toward(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Round-to-odd of a float64 q whose exact value lies on the side of q given by the sign of r (0: exact)."""
    even = (q.view(np.uint64) & np.uint64(1)) == 0
    fix = (r != 0) & even & np.isfinite(q)
    return np.where(fix, np.nextafter(q, np.where(r > 0, np.inf, -np.inf)), q)


def div_round_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b rounded to odd in float64, for a and b with at most 24 significant bits and f32 exponents."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(all="ignore"):
        q = a / b
        p, e = two_prod(q, b)
        r = ((a - p) - e) * np.sign(b)  # the remainder's sign: the exact quotient lies above q when positive
    return _odd_toward(q, np.where(np.isfinite(q) & (q != 0), r, 0.0))


def sqrt_round_odd(x: np.ndarray) -> np.ndarray:
    """sqrt(x) rounded to odd in float64, for x with at most 24 significant bits and an f32 exponent."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        s = np.sqrt(x)
        p, e = two_prod(s, s)
        r = (x - p) - e
    return _odd_toward(s, np.where(np.isfinite(s) & (s > 0), r, 0.0))


def _bit_length(m: np.ndarray) -> np.ndarray:
    """Bit length of each uint64."""
    n = np.zeros(m.shape, np.int64)
    v = m.copy()
    for k in (32, 16, 8, 4, 2, 1):
        big = v >= (np.uint64(1) << np.uint64(k))
        n += np.where(big, k, 0)
        v = np.where(big, v >> np.uint64(k), v)
    return n + (v > 0)


def int_to_f64_round_odd(x: np.ndarray) -> np.ndarray:
    """Integers (int64 or uint64 arrays) -> float64 rounded to odd (exact below 2^53)."""
    x = np.asarray(x)
    neg = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, bool)
    u = x.astype(np.int64).view(np.uint64) if x.dtype.kind == "i" else x.astype(np.uint64)
    mag = np.where(neg, ~u + np.uint64(1), u)
    s = np.maximum(_bit_length(mag) - 53, 0).astype(np.uint64)
    q = mag >> s
    sticky = (mag & ((np.uint64(1) << s) - np.uint64(1))) != 0
    v = np.ldexp((q | sticky.astype(np.uint64)).astype(np.float64), s.astype(np.int64))
    return np.where(neg, -v, v)


F64_MAX = float(np.finfo(np.float64).max)


def round_fraction_f64(q: Fraction, mode: str) -> float:
    """An exact nonzero rational rounded to float64 in rn/rz/rm/rp (overflow and underflow included)."""
    try:
        r = float(q)  # int / int: correctly rounded to nearest even
    except OverflowError:
        r = float("inf") if q > 0 else float("-inf")
    if mode == "rn":
        return r
    if r in (float("inf"), float("-inf")):
        if mode == "rz" or (mode == "rm" and q > 0) or (mode == "rp" and q < 0):
            return F64_MAX if q > 0 else -F64_MAX
        return r
    fr = Fraction(r)
    if mode == "rz" and abs(fr) > abs(q):
        r = float(np.nextafter(r, 0.0))
    elif mode == "rm" and fr > q:
        r = float(np.nextafter(r, -np.inf))
    elif mode == "rp" and fr < q:
        r = float(np.nextafter(r, np.inf))
    if r == 0.0:
        r = 0.0 if q > 0 else -0.0
    return r


def _sqrt_fraction(a: Fraction) -> Fraction:
    """sqrt(a), a > 0, as a rational rounding like the root in any mode to 53 bits (> 110 bits, rounded to odd)."""
    n, e = a.numerator, a.denominator.bit_length() - 1  # a = n / 2^e
    k = max(0, 240 - n.bit_length())
    k += (e + k) % 2
    big = n << k
    s = isqrt(big)
    return Fraction(2 * s + (0 if s * s == big else 1), 1 << ((e + k) // 2 + 1))


def f64_rounded(op: str, mode: str, *xs: np.ndarray) -> np.ndarray:
    """f64 add/sub/mul/div/fma/sqrt/rcp rounded once in rn/rz/rm/rp (finite lanes exactly, as rationals)."""
    # infinities and NaN as numpy's IEEE arithmetic gives them; an exact zero sum is -0 in rm, +0 otherwise, unless
    # both addends are zeros of one sign
    x = [np.asarray(v, np.float64) for v in xs]
    with np.errstate(all="ignore"):
        ieee = {"add": lambda: x[0] + x[1], "sub": lambda: x[0] - x[1], "mul": lambda: x[0] * x[1],
                "div": lambda: x[0] / x[1], "fma": lambda: x[0] * x[1] + x[2], "sqrt": lambda: np.sqrt(x[0]),
                "rcp": lambda: 1.0 / x[0]}[op]()
    out = np.array(ieee, np.float64, copy=True).reshape(-1)
    flat = [v.reshape(-1) for v in np.broadcast_arrays(*x)]
    finite = np.logical_and.reduce([np.isfinite(v) for v in flat])
    for i in np.flatnonzero(finite):
        f = [Fraction(float(v[i])) for v in flat]
        if op in ("div", "rcp") and f[-1] == 0:
            continue
        if op == "sqrt":
            if f[0] <= 0:
                continue
            q = _sqrt_fraction(f[0])
        elif op == "rcp":
            q = 1 / f[0]
        elif op == "add":
            q = f[0] + f[1]
        elif op == "sub":
            q = f[0] - f[1]
        elif op == "mul":
            q = f[0] * f[1]
        elif op == "div":
            q = f[0] / f[1]
        else:
            q = f[0] * f[1] + f[2]
        if q != 0:
            out[i] = round_fraction_f64(q, mode)
        elif op in ("add", "sub", "fma"):
            if op == "fma":
                s1, s2 = np.signbit(flat[0][i]) != np.signbit(flat[1][i]), np.signbit(flat[2][i])
            else:
                s1, s2 = np.signbit(flat[0][i]), np.signbit(flat[1][i]) != (op == "sub")
            both_zero = f[2] == 0 and f[0] * f[1] == 0 if op == "fma" else f[0] == 0 and f[1] == 0
            neg = (s1 and s2) if both_zero and s1 == s2 else mode == "rm"
            out[i] = -0.0 if neg else 0.0
    return out.reshape(np.broadcast_shapes(*[v.shape for v in x]))


def fma_f64_rn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """fma.rn.f64: a * b + c rounded once (error-free transformations; rationals where they could overflow)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        ph, pl = two_prod(a, b)
        th, tl = two_sum(c, ph)
        r = th + sum_round_odd(tl, pl)
        fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        risky = fin & ((np.abs(a) > 2.0 ** 990) | (np.abs(b) > 2.0 ** 990) | (np.abs(c) > 2.0 ** 1020)
                       | ((np.abs(ph) < 2.0 ** -960) & (ph != 0)) | (np.abs(ph) > 2.0 ** 1020) | ~np.isfinite(r)
                       | (r == 0))
        r = np.where(fin, r, a * b + c)
    if risky.any():
        idx = np.flatnonzero(np.broadcast_to(risky, r.shape))
        r = np.array(np.broadcast_to(r, np.broadcast_shapes(a.shape, b.shape, c.shape)), copy=True)
        aa, bb, cc = (np.broadcast_to(v, r.shape).reshape(-1)[idx] for v in (a, b, c))
        r.reshape(-1)[idx] = f64_rounded("fma", "rn", aa, bb, cc)
    return r
