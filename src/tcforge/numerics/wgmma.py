"""Hopper `wgmma.mma_async` arithmetic bit for bit: m64nNk32 FP8 (e4m3/e5m2, f16 or f32 accumulator) and m64nNk16
f16/bf16 (f32 accumulator; f16 too for f16), scale-d = 1 (D = A·B + C).

Operands are bit patterns: a (..., 64, K) [row, k] (uint8 FP8 codes, uint16 f16/bf16 bits), b (..., K, N) [k, col],
c (..., 64, N) (uint32 f32 bits or uint16 f16 bits); D comes back like c. N is any multiple of 8 in 8..256 (the
arithmetic is per output). Thin entry points over the parameter-table engine (tensorcore.py); models and evidence:
docs/numerics.md ("Tensor-core forms").
"""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.numerics.tensorcore import get_form, tc_mma

MODELS = ("hopper",)
FP8_TYPES = ("e4m3", "e5m2")


def _check_model(model: str) -> None:
    """Only the Hopper model exists (wgmma is sm_90a only)."""
    if model != "hopper":
        if model in ("ada",):
            raise UnsupportedError("model: wgmma exists on sm_90a only; the one model is 'hopper'")
        raise TcforgeError(f"model: unknown model {model!r}; valid models: {', '.join(MODELS)}")


def _check_choice(name: str, value: str, valid: tuple[str, ...]) -> None:
    """A clear error for a type name outside `valid`."""
    if value not in valid:
        raise TcforgeError(f"{name}: expected one of {', '.join(valid)}, got {value!r}")


def wgmma_m64nNk32(a: np.ndarray, b: np.ndarray, c: np.ndarray, a_type: str = "e4m3", b_type: str = "e4m3",
                   d_type: str = "f32", model: str = "hopper") -> np.ndarray:
    """`wgmma.mma_async.sync.aligned.m64nNk32.{d_type}.{a_type}.{b_type}` on FP8 codes (see the module doc)."""
    _check_model(model)
    _check_choice("a_type", a_type, FP8_TYPES)
    _check_choice("b_type", b_type, FP8_TYPES)
    _check_choice("d_type", d_type, ("f32", "f16"))
    return tc_mma(get_form(f"wgmma.m64n8k32.{d_type}.{a_type}.{b_type}"), a, b, c)


def wgmma_m64nNk16(a: np.ndarray, b: np.ndarray, c: np.ndarray, ab_type: str = "f16", d_type: str = "f32",
                   model: str = "hopper") -> np.ndarray:
    """`wgmma.mma_async.sync.aligned.m64nNk16.{d_type}.{ab}.{ab}` on f16/bf16 bits (bf16: f32 accumulator only)."""
    _check_model(model)
    _check_choice("ab_type", ab_type, ("f16", "bf16"))
    _check_choice("d_type", d_type, ("f32", "f16"))
    if ab_type == "bf16" and d_type == "f16":
        raise TcforgeError("d_type: wgmma with bf16 inputs accumulates in f32 only")
    return tc_mma(get_form(f"wgmma.m64n8k16.{d_type}.{ab_type}.{ab_type}"), a, b, c)
