"""Input validation for the numerics functions: dtype/shape checks raising a `TcforgeError` naming the argument."""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError


def as_bits(x: object, name: str, dtype: type[np.unsignedinteger]) -> np.ndarray:
    """Return `x` as an array of unsigned bit patterns of `dtype`.

    numpy arrays and scalars must already have exactly that dtype; plain Python ints (or nested lists of them) are
    accepted when every value fits. Anything else (floats, other integer widths, objects) is rejected.
    """
    want = np.dtype(dtype)
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype != want:
            raise TcforgeError(f"{name}: expected {want.name} bit patterns, got dtype {x.dtype}")
        return np.asarray(x)
    if isinstance(x, bool):
        raise TcforgeError(f"{name}: expected {want.name} bit patterns, got a bool")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TcforgeError(f"{name}: expected {want.name} bit patterns, got {type(x).__name__}") from exc
    if arr.dtype.kind not in "iu":
        raise TcforgeError(f"{name}: expected {want.name} bit patterns (or Python ints), got dtype {arr.dtype}")
    info = np.iinfo(want)
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) > info.max):
        raise TcforgeError(f"{name}: values must lie in [0, {info.max}] for {want.name} bit patterns")
    return arr.astype(want)


def as_f32(x: object, name: str) -> np.ndarray:
    """Return `x` as a float32 array: numpy inputs must be float32; Python floats must be exactly representable."""
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype != np.float32:
            raise TcforgeError(f"{name}: expected float32 values, got dtype {x.dtype}")
        return np.asarray(x)
    try:
        arr = np.asarray(x, dtype=np.float64)
    except Exception as exc:
        raise TcforgeError(f"{name}: expected float32 values, got {type(x).__name__}") from exc
    out = arr.astype(np.float32)
    with np.errstate(invalid="ignore"):
        same = (out.astype(np.float64) == arr) | (np.isnan(arr) & np.isnan(out))
    if not np.all(same):
        raise TcforgeError(f"{name}: Python floats must be exactly representable in float32 (pass a float32 array)")
    return out


def tile(x: object, name: str, dtype: type[np.unsignedinteger], tail: tuple[int, int]) -> np.ndarray:
    """Check a matrix operand: a numpy array of `dtype` whose last two dims are `tail`; returns it unchanged."""
    want = np.dtype(dtype)
    shape_txt = f"(..., {tail[0]}, {tail[1]})"
    if not isinstance(x, np.ndarray):
        raise TcforgeError(f"{name}: expected a numpy {want.name} array of shape {shape_txt}, got {type(x).__name__}")
    if x.dtype != want:
        raise TcforgeError(f"{name}: expected dtype {want.name} with shape {shape_txt}, got dtype {x.dtype}")
    if x.ndim < 2 or x.shape[-2:] != tail:
        raise TcforgeError(f"{name}: expected shape {shape_txt}, got {x.shape}")
    return x


def scalar_or_array(result: np.ndarray, *inputs: object) -> np.ndarray:
    """Return a numpy scalar when every input was a scalar (numpy ufunc convention), else the array."""
    if all(np.ndim(i) == 0 for i in inputs):
        return result[()]
    return result
