"""MUFU approximations of PTX on the H200 (`rcp/rsqrt/ex2/div.approx.ftz.f32`), bit-identical over the whole f32 domain.

Each op is a measured table plus exact scaling (proved on the H200 against all 2^32 inputs, see
docs/numerics-hardware.md): rcp per input mantissa, rsqrt per (mantissa, exponent parity), ex2 per 23-bit fraction
of the truncated sign-magnitude fixed-point input (one table for x >= 0, one for x < 0). `div.approx.ftz.f32` is
what ptxas makes of it: `MUFU.RCP` of b, then `FMUL.FTZ` by a.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from tcforge.errors import TcforgeError

TABLES_PATH = Path(__file__).resolve().parent / "data" / "approx_tables.npz"
_MANT = np.uint32(0x7FFFFF)
_NAN = np.uint32(0x7FFFFFFF)  # the canonical NaN every MUFU op and FMUL returns
_INF = np.uint32(0x7F800000)
_ONE = np.uint32(0x3F800000)
_SIGN = np.uint32(0x80000000)


def _load(*keys: str) -> list[np.ndarray]:
    """Read arrays from the shipped table archive, with a clear error if it is missing or damaged."""
    if not TABLES_PATH.is_file():
        raise TcforgeError(f"approx tables missing: {TABLES_PATH} (reinstall tcforge)")
    try:
        with np.load(TABLES_PATH) as z:
            return [z[k] for k in keys]
    except (OSError, KeyError, ValueError) as exc:
        raise TcforgeError(f"approx tables unreadable: {TABLES_PATH} ({exc})") from exc


def parity_inputs(i: np.ndarray | None = None) -> np.ndarray:
    """The float32 inputs x' = 1.m * 2^p in [1, 4) that the square-root tables are indexed by (i = p << 23 | m): all
    2^24 of them, or those at the indices i."""
    i = np.arange(1 << 24, dtype=np.uint32) if i is None else np.asarray(i, np.uint32)
    return (((np.uint32(127) + (i >> np.uint32(23))) << np.uint32(23)) | (i & _MANT)).view(np.float32)


def _base(name: str, i: np.ndarray) -> np.ndarray:
    """The correctly rounded f32 value that the rcp / rsqrt table's correction at index i is added to (as int32)."""
    if name == "rcp":
        x = (np.uint32(0x3F800000) | np.asarray(i, np.uint32)).view(np.float32).astype(np.float64)
        return (1.0 / x).astype(np.float32).view(np.int32)
    return (1.0 / np.sqrt(parity_inputs(i).astype(np.float64))).astype(np.float32).view(np.int32)


_SMALL = 1 << 21  # a lookup of at most this many rcp / rsqrt entries computes them, not the whole table


@cache
def _corrections(name: str) -> np.ndarray:
    return _load(f"{name}_corr")[0]


def _entries(name: str, i: np.ndarray) -> np.ndarray:
    """The table's entries at the indices i: a small lookup before the table is expanded computes just those
    (the base plus its correction; a process that needs a few values skips the 2^23- or 2^24-entry expansion)."""
    if name in ("rcp", "rsqrt") and i.size <= _SMALL and name not in _EXPANDED:
        return (_base(name, i).astype(np.int64) + _corrections(name)[i]).astype(np.uint32)
    return _table(name)[i]


_EXPANDED: set[str] = set()


@cache
def _table(name: str) -> np.ndarray:
    """Expand one shipped correction table into its full uint32 result table (cached per op)."""
    _EXPANDED.add(name)
    if name in ("rcp", "rsqrt"):
        i = np.arange(1 << (23 if name == "rcp" else 24), dtype=np.uint32)
        return (_base(name, i).astype(np.int64) + _corrections(name)).astype(np.uint32)
    if name in ("ex2_pos", "ex2_neg"):
        t0, delta = _load(f"{name}_t0", f"{name}_delta")
        steps = np.concatenate([[0], np.cumsum(delta, dtype=np.int64)])
        return (int(t0) + (steps if name == "ex2_pos" else -steps)).astype(np.uint32)
    raise KeyError(name)


def _bits(x: object, name: str) -> np.ndarray:
    """Validate a float32 array/scalar and return its bit patterns as a uint32 ndarray of the same shape."""
    arr = np.asarray(x)
    if arr.dtype != np.float32:
        raise TcforgeError(f"{name}: expected float32 values, got dtype {arr.dtype}")
    return (arr if arr.flags.c_contiguous else arr.copy()).view(np.uint32)


def _fields(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return u & _SIGN, (u >> np.uint32(23)) & np.uint32(255), u & _MANT


def _assemble(re: np.ndarray, t: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """sign | re << 23 | mantissa of t, for re already known to lie in 1..254."""
    return sign | (np.clip(re, 0, 255).astype(np.uint32) << np.uint32(23)) | (t & _MANT)


def _rcp_bits(u: np.ndarray) -> np.ndarray:
    s, e, m = _fields(u)
    t = _entries("rcp", m)
    re = ((t >> np.uint32(23)) & np.uint32(255)).astype(np.int64) - (e.astype(np.int64) - 127)
    out = np.where(re <= 0, s, _assemble(re, t, s))  # results below 2^-126 flush to signed zero
    out = np.where(e == 0, s | _INF, out)  # +-0 and (flushed) subnormals
    return np.where(e == 255, np.where(m != 0, _NAN, s), out).astype(np.uint32)


def rcp_approx_ftz_f32(x: object) -> np.ndarray:
    """`rcp.approx.ftz.f32` (MUFU.RCP) bit-identical to the H200 for every float32 input."""
    return _rcp_bits(_bits(x, "x")).view(np.float32)


def rsqrt_approx_ftz_f32(x: object) -> np.ndarray:
    """`rsqrt.approx.ftz.f32` (MUFU.RSQ) bit-identical to the H200 for every float32 input."""
    u = _bits(x, "x")
    s, e, m = _fields(u)
    p = (e + np.uint32(1)) & np.uint32(1)  # parity of the unbiased exponent
    t = _entries("rsqrt", (p << np.uint32(23)) | m)
    half_q = (e.astype(np.int64) - 127 - p.astype(np.int64)) // 2
    re = ((t >> np.uint32(23)) & np.uint32(255)).astype(np.int64) - half_q
    out = np.where(s != 0, _NAN, _assemble(re, t, np.uint32(0)))
    out = np.where(e == 0, s | _INF, out)
    out = np.where(e == 255, np.where((m != 0) | (s != 0), _NAN, np.uint32(0)), out)
    return out.astype(np.uint32).view(np.float32)


def ex2_approx_ftz_f32(x: object) -> np.ndarray:
    """`ex2.approx.ftz.f32` (MUFU.EX2) bit-identical to the H200 for every float32 input.

    X = trunc(|x| * 2^23); result = T±[X mod 2^23] * 2^(±(X >> 23)), flushed below 2^-126, inf from 2^128.
    """
    u = _bits(x, "x")
    s, e, m = _fields(u)
    sig = (m | np.uint32(0x800000)).astype(np.int64)
    ei = e.astype(np.int64)
    left = np.clip(ei - 127, 0, 6)
    right = np.clip(127 - ei, 0, 40)
    fixed = np.where(ei >= 127, sig << left, sig >> right)
    ipart = fixed >> 23
    frac = (fixed & 0x7FFFFF).astype(np.intp)
    neg = s != 0
    t = np.where(neg, _table("ex2_neg")[frac], _table("ex2_pos")[frac])
    re = ((t >> np.uint32(23)) & np.uint32(255)).astype(np.int64) + np.where(neg, -ipart, ipart)
    out = np.where(re >= 255, _INF, np.where(re <= 0, np.uint32(0), _assemble(re, t, np.uint32(0))))
    out = np.where(ei >= 134, np.where(neg, np.uint32(0), _INF), out)  # |x| >= 128
    out = np.where(e == 0, _ONE, out)
    out = np.where(e == 255, np.where(m != 0, _NAN, np.where(neg, np.uint32(0), _INF)), out)
    return out.astype(np.uint32).view(np.float32)


def _fmul_ftz_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`FMUL.FTZ` (mul.rn.ftz.f32) on bit patterns: subnormal inputs read as signed zero, the product rounded to 24
    bits with unbounded exponent, then flushed to signed zero if below 2^-126; NaN results are 0x7fffffff."""

    def value(u: np.ndarray) -> np.ndarray:
        v = u.view(np.float32).astype(np.float64)
        sub = ((u >> np.uint32(23)) & np.uint32(255)) == 0
        return np.where(sub, np.where((u & _SIGN) != 0, -0.0, 0.0), v)

    with np.errstate(all="ignore"):
        p = value(a) * value(b)  # exact: 24 x 24 bits fit a float64 significand
        mant, ex = np.frexp(p)
        q = np.ldexp(np.rint(mant * 2.0**24), ex - 24)  # round to nearest even at 24 bits, exponent unbounded
        q = np.where(np.isfinite(p), q, p)
        q = np.where(np.abs(q) < 2.0**-126, np.copysign(0.0, p), q)
        r = q.astype(np.float32).view(np.uint32)
    return np.where(np.isnan(p), _NAN, r).astype(np.uint32)


def div_approx_ftz_f32(a: object, b: object) -> np.ndarray:
    """`div.approx.ftz.f32` as ptxas lowers it on sm_90a: FMUL.FTZ(a, MUFU.RCP(b)); bit-identical to the H200."""
    ua, ub = _bits(a, "a"), _bits(b, "b")
    try:
        ua, ub = np.broadcast_arrays(ua, ub)
    except ValueError as exc:
        raise TcforgeError(f"a, b: shapes {ua.shape} and {ub.shape} do not broadcast") from exc
    return _fmul_ftz_bits(ua.copy(), _rcp_bits(ub.copy())).view(np.float32)
