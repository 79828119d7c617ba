"""Bad input raises a `ValueError` (`TcforgeError`) that names the argument and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.numerics import (
    cvt_rn_f16x2_e4m3x2,
    cvt_rn_satfinite_e4m3x2_f16x2,
    e4m3_to_f16,
    f16_add,
    f16_fma,
    f16_to_f32,
    f16x2_add,
    f32_mul_ftz,
    f32_to_f16_rn,
    mma_m16n8k32_e4m3_f16,
)

A = np.zeros((2, 16, 32), np.uint8)
B = np.zeros((2, 32, 8), np.uint8)
C = np.zeros((2, 16, 8), np.uint16)


def test_errors_are_value_errors() -> None:
    assert issubclass(TcforgeError, ValueError)


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        ((A.astype(np.int8), B, C), r"a: expected dtype uint8 with shape \(\.\.\., 16, 32\)"),
        ((A, B.astype(np.uint16), C), r"b: expected dtype uint8 with shape \(\.\.\., 32, 8\)"),
        ((A, B, C.view(np.float16)), r"c: expected dtype uint16 with shape \(\.\.\., 16, 8\)"),
        ((A[:, :, :16], B, C), r"a: expected shape \(\.\.\., 16, 32\), got \(2, 16, 16\)"),
        ((A, B.transpose(0, 2, 1), C), r"b: expected shape \(\.\.\., 32, 8\), got \(2, 8, 32\)"),
        ((A, B, C[:, :8]), r"c: expected shape \(\.\.\., 16, 8\)"),
        ((A, B[:1], C), r"share their leading dims"),
        ((A[0].tolist(), B[0], C[0]), r"a: expected a numpy uint8 array of shape \(\.\.\., 16, 32\), got list"),
        ((A[0, 0], B, C), r"a: expected shape"),
    ],
)
def test_mma_rejects_bad_operands(args: tuple[object, object, object], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        mma_m16n8k32_e4m3_f16(*args, "hopper")


def test_mma_unknown_model_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"model: unknown model 'ampere'; valid models: ada, hopper"):
        mma_m16n8k32_e4m3_f16(A, B, C, "ampere")


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: cvt_rn_satfinite_e4m3x2_f16x2(np.zeros(3, np.uint16)), r"x: expected uint32 bit patterns"),
        (lambda: cvt_rn_f16x2_e4m3x2(np.zeros(3, np.uint32)), r"codes: expected uint16 bit patterns"),
        (lambda: e4m3_to_f16(np.zeros(3, np.float32)), r"codes: expected uint8 bit patterns"),
        (lambda: e4m3_to_f16(300), r"codes: values must lie in \[0, 255\]"),
        (lambda: f16_add(np.uint16(1), np.float16(1)), r"b: expected uint16 bit patterns, got dtype float16"),
        (lambda: f16_fma(1, 2, -1), r"c: values must lie in \[0, 65535\]"),
        (lambda: f16_add(1.5, 2), r"a: expected uint16 bit patterns \(or Python ints\), got dtype float64"),
        (lambda: f16x2_add(np.uint16(1), np.uint32(1)), r"a: expected uint32 bit patterns"),
        (lambda: f16_to_f32(np.int32(5)), r"bits: expected uint16 bit patterns, got dtype int32"),
        (lambda: f32_to_f16_rn(np.float64(0.1)), r"x: expected float32 values, got dtype float64"),
        (lambda: f32_to_f16_rn(0.1), r"x: Python floats must be exactly representable in float32"),
        (lambda: f32_mul_ftz(np.float32(1), np.zeros(2, np.float16)), r"b: expected float32 values"),
    ],
)
def test_lane_helpers_reject_bad_input(call: object, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        call()  # type: ignore[operator]


def test_python_ints_are_accepted_where_they_fit() -> None:
    assert int(f16_add(0x3C00, 0x3C00)) == 0x4000
    assert f16_add([0x3C00, 0], [0x3C00, 0]).tolist() == [0x4000, 0]
    assert float(f32_to_f16_rn(0.5)) == 0x3800
