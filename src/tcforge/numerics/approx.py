"""MUFU approximations of PTX (`rcp/rsqrt/ex2/div.approx.ftz.f32`) as float32 numpy functions.

PROVISIONAL: correctly rounded results with flush-to-zero of subnormal inputs and outputs; replaced by the
H200-exact table-driven versions once the hardware characterisation is in.
"""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError

_F32_MIN_NORMAL = np.float32(2.0**-126)


def _as_f32(x: object, name: str) -> np.ndarray:
    """Validate that `x` is a float32 array (or scalar) and return it as an ndarray."""
    arr = np.asarray(x)
    if arr.dtype != np.float32:
        raise TcforgeError(f"{name}: expected float32 values, got dtype {arr.dtype}")
    return arr


def _ftz(x: np.ndarray) -> np.ndarray:
    """Flush float32 subnormals to zero of the same sign."""
    x = np.asarray(x, dtype=np.float32)
    return np.where(np.abs(x) < _F32_MIN_NORMAL, np.copysign(np.float32(0), x), x).astype(np.float32)


def rcp_approx_ftz_f32(x: object) -> np.ndarray:
    """`rcp.approx.ftz.f32`: 1/x with subnormal inputs and outputs flushed to signed zero."""
    xv = _ftz(_as_f32(x, "x"))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        r = (1.0 / xv.astype(np.float64)).astype(np.float32)
    return _ftz(r)


def rsqrt_approx_ftz_f32(x: object) -> np.ndarray:
    """`rsqrt.approx.ftz.f32`: 1/sqrt(x) with flush-to-zero (negative inputs give NaN)."""
    xv = _ftz(_as_f32(x, "x"))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        r = (1.0 / np.sqrt(xv.astype(np.float64))).astype(np.float32)
    return _ftz(r)


def ex2_approx_ftz_f32(x: object) -> np.ndarray:
    """`ex2.approx.ftz.f32`: 2**x with flush-to-zero."""
    xv = _ftz(_as_f32(x, "x"))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = np.exp2(xv.astype(np.float64)).astype(np.float32)
    return _ftz(r)


def div_approx_ftz_f32(a: object, b: object) -> np.ndarray:
    """`div.approx.ftz.f32`: a * (1/b) with flush-to-zero."""
    av = _ftz(_as_f32(a, "a"))
    bv = _ftz(_as_f32(b, "b"))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        r = (av.astype(np.float64) / bv.astype(np.float64)).astype(np.float32)
    return _ftz(r)
