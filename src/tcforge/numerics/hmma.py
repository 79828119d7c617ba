"""`mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16` on sm_90 (one HMMA.16816.F16), bit for bit.

The same datapath as the first half of the Hopper FP8 model (docs/numerics.md): every addend (16 products and C) is
cut toward zero to 25 bits below the largest addend exponent (a product's exponent is the sum of its operands'
floor(log2|x|)), the cut terms are summed exactly and the sum is rounded once to f16. Here C enters the HMMA directly
(no HADD2). Pinned by the H200 truth for operands that are e4m3 values (f16 normals); for f16 subnormal operands the
exponent rule floor(log2|x|) is assumed. Infinite operands: the IEEE sum of the infinite terms (an assumption).
"""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.numerics._checks import tile
from tcforge.numerics.codecs import F16_CANONICAL_NAN
from tcforge.numerics.mma import _F16_LOG2, HOPPER_FRAC_BITS

MODELS = ("hopper",)


def mma_m16n8k16_f16_f16(a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str = "hopper") -> np.ndarray:
    """a uint16 (..., 16, 16) f16 bits [row, k]; b uint16 (..., 16, 8) [k, col]; c uint16 (..., 16, 8).
    Returns d uint16 (..., 16, 8). Only the "hopper" model exists (no Ada f16 HMMA data)."""
    if model not in ("ada", "hopper"):
        raise TcforgeError(f"model: unknown model {model!r}; valid models: ada, hopper")
    if model != "hopper":
        raise UnsupportedError("mma.m16n8k16 f16: only the hopper model is known (no Ada f16 HMMA data)")
    a_ = tile(a, "a", np.uint16, (16, 16))
    b_ = tile(b, "b", np.uint16, (16, 8))
    c_ = tile(c, "c", np.uint16, (16, 8))
    lead = a_.shape[:-2]
    a2, b2, c2 = a_.reshape(-1, 16, 16), b_.reshape(-1, 16, 8), c_.reshape(-1, 16, 8)
    av = a2.view(np.float16).astype(np.float64)  # (T, 16i, 16k)
    bv = b2.view(np.float16).astype(np.float64)  # (T, 16k, 8j)
    cv = c2.view(np.float16).astype(np.float64)
    ea = _F16_LOG2[a2].astype(np.int32)
    eb = _F16_LOG2[b2].astype(np.int32)
    with np.errstate(invalid="ignore", over="ignore"):
        prod = av[:, :, :, None] * bv[:, None, :, :]  # (T, i, k, j), exact in float64
        e = ea[:, :, :, None] + eb[:, None, :, :]
        e = np.where(prod == 0, -200, e)
        m = e.max(axis=2)  # (T, i, j)
        m = np.maximum(m, np.where(cv == 0, -200, _F16_LOG2[c2].astype(np.int32)))
        m = np.maximum(m, -60)
        scale = np.ldexp(1.0, HOPPER_FRAC_BITS - m)
        finite = np.isfinite(prod)
        cut = np.trunc(np.where(finite, prod, 0.0) * scale[:, :, None, :])
        total = cut.sum(axis=2) + np.trunc(np.where(np.isfinite(cv), cv, 0.0) * scale) + 0.0
        d = (total / scale).astype(np.float16)
        inf_terms = ~finite.all(axis=2) | np.isinf(cv)
        if inf_terms.any():
            s = np.where(finite, 0.0, prod).sum(axis=2) + np.where(np.isinf(cv), cv, 0.0)
            d = np.where(inf_terms, s.astype(np.float16), d)
    bits = d.view(np.uint16)
    nan = np.isnan(av).any(axis=2)[:, :, None] | np.isnan(bv).any(axis=1)[:, None, :] | np.isnan(cv)
    nan |= (bits & 0x7FFF) > 0x7C00
    return np.where(nan, np.uint16(F16_CANONICAL_NAN), bits).astype(np.uint16).reshape(*lead, 16, 8)
