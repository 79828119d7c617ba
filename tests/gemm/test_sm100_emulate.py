"""The byte-level model of the sm100 kernel (TMA swizzle, descriptor-driven operand fetch, staged epilogue) computes
A @ B exactly, and breaks when any descriptor field or step it relies on is wrong."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.gemm.sm100 import descriptors, emulate


def _operands(m: int, n: int, k: int, dtype: type, seed: int) -> tuple[np.ndarray, np.ndarray]:
    # small nonzero integers: every product and fp32 partial sum is exact, so the result has exact expected bits
    rng = np.random.default_rng(seed)
    a = rng.choice([-3, -2, -1, 1, 2, 3], size=(m, k)).astype(dtype)
    b = rng.choice([-3, -2, -1, 1, 2, 3], size=(k, n)).astype(dtype)
    return a, b


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize(
    "m, n, k, dtype",
    [
        (256, 256, 256, np.float16),  # one full tile, 4 k-tiles: the 3-stage ring wraps
        (129, 200, 72, np.float16),  # partial tile in M and N, K tail zero-filled by TMA
        (512, 264, 64, ml_dtypes.bfloat16),  # two pairs in M, a second N tile of 8 columns
    ],
)
def test_model_computes_the_exact_product(m: int, n: int, k: int, dtype: type) -> None:
    a, b = _operands(m, n, k, dtype, seed=m + n + k)
    c = emulate.emulate_matmul(a, b)
    assert not np.isnan(c).any()  # every output element written (the model poisons C first)
    np.testing.assert_array_equal(c, _reference(a, b))


def test_model_on_gaussian_fp16_matches_fp32_rounded_float64() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((256, 128)).astype(np.float16)
    b = rng.standard_normal((128, 256)).astype(np.float16)
    np.testing.assert_array_equal(emulate.emulate_matmul(a, b), _reference(a, b))


@pytest.mark.parametrize(
    "name, value",
    [
        ("B_LBO", descriptors.B_SBO),  # LBO and SBO swapped for the N-major B operand
        ("B_SBO", descriptors.B_LBO),
        ("A_SBO", 512),  # A's 8-row group stride of a 64-byte swizzle
        ("A_K16_STEP", 16),  # K = 16 step of 8 elements instead of 16
        ("B_K16_STEP", 1024),  # B's K = 16 step of 8 rows instead of 16
    ],
)
def test_model_detects_a_wrong_descriptor_field(monkeypatch: pytest.MonkeyPatch, name: str, value: int) -> None:
    a, b = _operands(256, 256, 64, np.float16, seed=1)
    monkeypatch.setattr(descriptors, name, value)
    assert not np.array_equal(emulate.emulate_matmul(a, b), _reference(a, b))


def test_swizzle_is_the_128b_pattern() -> None:
    addr = np.arange(1024)
    sw = emulate.swizzle_128b(addr)
    assert sorted(sw.tolist()) == addr.tolist()  # a permutation inside each 1024-byte atom
    # row 3 (bytes 384..511): 16-byte chunk 0 lands at chunk 3, chunk 5 at chunk 6
    assert sw[384] == 384 + 3 * 16 and sw[384 + 5 * 16] == 384 + 6 * 16


def test_model_inputs_are_checked() -> None:
    with pytest.raises(TcforgeError, match="matching K"):
        emulate.emulate_matmul(np.zeros((8, 16), np.float16), np.zeros((8, 8), np.float16))
    with pytest.raises(TcforgeError, match="16-bit dtype"):
        emulate.emulate_matmul(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))
