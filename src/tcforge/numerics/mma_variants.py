"""Candidate Hopper HMMA accumulators, scored against the H200 truth by the tests (evidence, not API).

Family: every addend cut toward zero to `frac_bits` bits below the largest addend exponent, then one rounding to
f16 (frac_bits None: the exact sum, one rounding). Two exponent rules for the alignment. The shipped model
(`mma.py`) is the member that the hardware data leaves standing: frac_bits 25 with the "operands" rule. This
straightforward float64 version is slow and independent of the shipped fast path.
"""

from __future__ import annotations

import numpy as np

from tcforge.numerics.codecs import F16_CANONICAL_NAN
from tcforge.numerics.mma import _HOPPER_K, _VALUES, _nan_mask

EXPONENT_RULES = ("value", "operands")


def _floor_log2(x: np.ndarray) -> np.ndarray:
    """floor(log2|x|) for nonzero x; a very negative number for zero."""
    e = np.frexp(x)[1] - 1
    return np.where(x != 0, e, -1000)


def _truncated_hmma(acc: np.ndarray, prods: np.ndarray, exps: np.ndarray, frac_bits: int) -> np.ndarray:
    """acc (T, 16, 8) f16 values (finite), prods/exps (T, 16, 8, 16): one truncated-accumulator HMMA step."""
    if frac_bits is None:  # exact: float64 holds these sums exactly (a 2^-24 grid below 2^23)
        with np.errstate(over="ignore"):
            return (prods.sum(axis=-1) + acc + 0.0).astype(np.float16).astype(np.float64)
    acc_exp = _floor_log2(acc)
    m = np.maximum(exps.max(axis=-1), acc_exp)
    unit = np.ldexp(1.0, np.maximum(m, -200) - frac_bits)
    total = np.trunc(prods / unit[..., None]).sum(axis=-1) + np.trunc(acc / unit) + 0.0
    with np.errstate(over="ignore"):
        return (total * unit).astype(np.float16).astype(np.float64)


def hopper_truncated(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, frac_bits: int | None, exponent: str = "operands"
) -> np.ndarray:
    """The Hopper lowering with truncated-accumulator HMMAs; tiles (N, 16, 32), (N, 32, 8), (N, 16, 8) -> (N, 16, 8).

    exponent "value": an addend's exponent is floor(log2|x|); "operands": a product's exponent is the sum of its f16
    operands' exponents (its significand then lies in [1, 4)), as some tensor cores align.
    """
    if exponent not in EXPONENT_RULES:
        raise ValueError(f"exponent: expected one of {EXPONENT_RULES}, got {exponent!r}")
    av = _VALUES[a[:, :, _HOPPER_K]]
    bv = _VALUES[b[:, _HOPPER_K, :]]
    prods = av[:, :, None, :] * bv.transpose(0, 2, 1)[:, None, :, :]  # (N, 16, 8, 32)
    if exponent == "value":
        exps = _floor_log2(prods)
    else:
        exps = _floor_log2(av)[:, :, None, :] + _floor_log2(bv).transpose(0, 2, 1)[:, None, :, :]
        exps = np.where(prods != 0, exps, -1000)
    acc = np.zeros(c.shape, np.float64)
    acc = _truncated_hmma(acc, prods[..., :16], exps[..., :16], frac_bits)
    acc_inf = np.isinf(acc)
    acc2 = _truncated_hmma(np.where(acc_inf, 0.0, acc), prods[..., 16:], exps[..., 16:], frac_bits)
    acc = np.where(acc_inf, acc, acc2)
    cv = c.view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = (acc + cv).astype(np.float16).view(np.uint16)
    nan = _nan_mask(a, b, c) | ((d & 0x7FFF) > 0x7C00)
    return np.where(nan, np.uint16(F16_CANONICAL_NAN), d)
