"""Hopper `mma.sync` forms on the f16 tensor cores: m16n8k16 f16 -> f16 (one HMMA.16816.F16), m16n8k16 f16/bf16 ->
f32 (one HMMA.16816.F32) and m16n8k32 e4m3/e5m2 -> f32 or f16 (ptxas 13.0's sm_90 lowering: exact unpack to f16, two
chained HMMAs, then an IEEE FADD / HADD2 of C).

Operands are bit patterns: a (..., 16, K) [row, k], b (..., K, 8) [k, col] (uint8 FP8 codes, uint16 f16/bf16 bits),
c (..., 16, 8) (uint32 f32 bits or uint16 f16 bits); D comes back like c. Thin entry points over the parameter-table
engine (tensorcore.py); models and evidence: docs/numerics.md ("Tensor-core forms", "Peers").
"""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.numerics.tensorcore import get_form, tc_mma
from tcforge.numerics.wgmma import FP8_TYPES, _check_choice

MODELS = ("hopper",)


def _check_model(model: str, what: str) -> None:
    """Only the Hopper model of these forms exists (no Ada data for them)."""
    if model != "hopper":
        if model == "ada":
            raise UnsupportedError(f"model: {what}: only the hopper model is known (no Ada data for this form)")
        raise TcforgeError(f"model: unknown model {model!r}; valid models: ada, hopper")


def mma_m16n8k16_f16_f16(a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str = "hopper") -> np.ndarray:
    """`mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`: a uint16 (..., 16, 16), b (..., 16, 8), c (..., 16, 8)."""
    _check_model(model, "mma.m16n8k16 f16")
    return tc_mma(get_form("mma.m16n8k16.f16.f16.f16"), a, b, c)


def mma_m16n8k16_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray, ab_type: str = "f16",
                     model: str = "hopper") -> np.ndarray:
    """`mma.sync.aligned.m16n8k16.row.col.f32.{ab_type}.{ab_type}.f32` on f16/bf16 bits with f32 C and D bits."""
    _check_model(model, "mma.m16n8k16 f32")
    _check_choice("ab_type", ab_type, ("f16", "bf16"))
    return tc_mma(get_form(f"mma.m16n8k16.f32.{ab_type}.{ab_type}"), a, b, c)


def mma_m16n8k32_f8(a: np.ndarray, b: np.ndarray, c: np.ndarray, a_type: str = "e4m3", b_type: str = "e4m3",
                    d_type: str = "f32", model: str = "hopper") -> np.ndarray:
    """`mma.sync.aligned.m16n8k32.row.col.{d}.{a}.{b}.{d}` on FP8 codes (e4m3.e4m3.f16 = mma_m16n8k32_e4m3_f16)."""
    _check_model(model, "mma.m16n8k32 FP8 (use mma_m16n8k32_e4m3_f16 for Ada e4m3 -> f16)")
    _check_choice("a_type", a_type, FP8_TYPES)
    _check_choice("b_type", b_type, FP8_TYPES)
    _check_choice("d_type", d_type, ("f32", "f16"))
    return tc_mma(get_form(f"mma.m16n8k32.{d_type}.{a_type}.{b_type}"), a, b, c)
