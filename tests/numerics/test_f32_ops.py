"""f32 helpers: hand-checked bits for `cvt.f32.f16`, `cvt.rn.f16.f32`, `mul.rn.ftz.f32`, `add.rn.ftz.f32`."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.numerics import f16_to_f32, f32_add_ftz, f32_mul_ftz, f32_to_f16_rn


def f32(bits: int) -> np.float32:
    return np.uint32(bits).view(np.float32)


def bits_of(x: object) -> int:
    return int(np.asarray(x, dtype=np.float32).view(np.uint32))


def test_f16_to_f32_is_exact_on_every_non_nan_pattern() -> None:
    allb = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    got = f16_to_f32(allb)
    ok = (allb & 0x7FFF) <= 0x7C00
    assert got.dtype == np.float32
    assert np.array_equal(got[ok].view(np.uint32), allb[ok].view(np.float16).astype(np.float32).view(np.uint32))
    assert bits_of(f16_to_f32(np.uint16(0x0001))) == 0x33800000  # 2^-24
    assert bits_of(f16_to_f32(np.uint16(0x7E01))) == 0x7FFFFFFF


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0x3DCCCCCD, 0x2E66),  # 0.1f
        (0x477FE000, 0x7BFF),  # 65504
        (0x477FEFFF, 0x7BFF),  # just below 65520
        (0x477FF000, 0x7C00),  # 65520: the tie with 2^16 rounds to even -> inf
        (0x33000000, 0x0000),  # 2^-25: tie between 0 and 2^-24 -> even 0
        (0x33000001, 0x0001),  # just above -> 2^-24
        (0xB3C00000, 0x8002),  # -1.5 * 2^-24: tie -> even 2 * 2^-24
        (0x00000001, 0x0000),  # f32 subnormal -> +0
        (0x7F800001, 0x7FFF),  # NaN -> canonical
        (0xFF800000, 0xFC00),
    ],
)
def test_f32_to_f16_rn(x: int, want: int) -> None:
    assert int(f32_to_f16_rn(f32(x))) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (0x3F800000, 0x40000000, 0x40000000),  # 1 * 2 = 2
        (0x3F7FFFFF, 0x00800000, 0x00000000),  # 2^-126 - 2^-150: 24 bits already, below 2^-126 -> flushed
        (0xBF7FFFFF, 0x00800000, 0x80000000),  # ... to a signed zero
        (0x3F7FFFFE, 0x00800001, 0x00800000),  # 2^-126 (1 - 2^-46) rounds up to 2^-126 and survives
        (0x00400000, 0x7F000000, 0x00000000),  # subnormal input flushed first (else 2^-127 * 2^127 = 1)
        (0x80400000, 0x3F800000, 0x80000000),
        (0x7F000000, 0x40000000, 0x7F800000),  # overflow -> +inf
        (0x7F800000, 0x00000000, 0x7FFFFFFF),  # inf * 0 -> canonical NaN
        (0x1F800000, 0x1F800000, 0x00000000),  # 2^-64 * 2^-64 = 2^-128 -> flushed
        (0x20800000, 0x1F800000, 0x00800000),  # 2^-62 * 2^-64 = 2^-126 -> kept
    ],
)
def test_f32_mul_ftz(a: int, b: int, want: int) -> None:
    assert bits_of(f32_mul_ftz(f32(a), f32(b))) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (0x3F800000, 0x3F800000, 0x40000000),
        (0x00800000, 0x80400000, 0x00800000),  # -2^-127 input is subnormal: flushed, 2^-126 stays
        (0x00C00000, 0x80800000, 0x00000000),  # 1.5 * 2^-126 - 2^-126 = 2^-127: subnormal result flushed to +0
        (0x80C00000, 0x00800000, 0x80000000),  # ... keeping its sign
        (0x3F800000, 0xBF800000, 0x00000000),  # x - x = +0
        (0x7F800000, 0xFF800000, 0x7FFFFFFF),  # inf - inf -> canonical NaN
    ],
)
def test_f32_add_ftz(a: int, b: int, want: int) -> None:
    assert bits_of(f32_add_ftz(f32(a), f32(b))) == want
