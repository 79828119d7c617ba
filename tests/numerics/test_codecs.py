"""e4m3 <-> f16 and f32 -> e4m3: hand-checked bits, the measured NaN/inf rules, and agreement with ml_dtypes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tcforge.numerics import cvt_rn_f16x2_e4m3x2, cvt_rn_satfinite_e4m3x2_f16x2, e4m3_to_f16, f16_to_e4m3_satfinite
from tcforge.numerics.codecs import f32_to_e4m3_satfinite

ALL_F16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)


@pytest.mark.parametrize(
    ("f16", "code"),
    [
        (0x3C00, 0x38),  # 1.0
        (0xC000, 0xC0),  # -2.0
        (0x3C40, 0x38),  # 1.0625: tie between 1.0 and 1.125 -> even 1.0
        (0x3CC0, 0x3A),  # 1.1875: tie between 1.125 and 1.25 -> even 1.25
        (0x3C41, 0x39),  # just above the tie -> 1.125
        (0x5F00, 0x7E),  # 448
        (0x5F40, 0x7E),  # 464 would round past 448: satfinite clamps
        (0x7BFF, 0x7E),  # 65504 -> 448
        (0xFBFF, 0xFE),  # -65504 -> -448
        (0x7C00, 0x7E),  # +inf -> 448 [measured]
        (0xFC00, 0xFE),  # -inf -> -448 [measured]
        (0x7C01, 0x7F),  # every NaN -> 0x7f, sign dropped [measured]
        (0x7FFF, 0x7F),
        (0xFE00, 0x7F),
        (0x1800, 0x01),  # 2^-9, the smallest e4m3 subnormal
        (0x1A00, 0x02),  # 1.5 * 2^-9: tie -> even 2 * 2^-9
        (0x1400, 0x00),  # 2^-10: tie between 0 and 2^-9 -> even 0
        (0x9400, 0x80),  # -2^-10 -> -0
        (0x1401, 0x01),  # just above -> 2^-9
        (0x0001, 0x00),  # f16 subnormal -> +0
        (0x8000, 0x80),  # -0 keeps its sign
        (0x2400, 0x08),  # 2^-6, the smallest e4m3 normal
    ],
)
def test_f16_to_e4m3_hand_checked(f16: int, code: int) -> None:
    assert int(f16_to_e4m3_satfinite(np.uint16(f16))) == code


def test_f16_to_e4m3_exhaustive_against_ml_dtypes() -> None:
    """All 65536 f16 patterns: ml_dtypes rounds the same way once values are clipped to +-448 (NaN handled apart)."""
    values = ALL_F16.view(np.float16).astype(np.float32)
    nan = np.isnan(values)
    ref = np.clip(values[~nan], -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    got = f16_to_e4m3_satfinite(ALL_F16)
    assert np.array_equal(got[~nan], ref), f"{np.count_nonzero(got[~nan] != ref)} mismatches"
    assert np.all(got[nan] == 0x7F) and nan.sum() == 2046


@pytest.mark.parametrize("value,code", [(0.0, 0x00), (-0.0, 0x80), (1.0, 0x38), (-1.5, 0xBC), (448.0, 0x7E),
                                        (1e9, 0x7E), (-np.inf, 0xFE), (np.nan, 0x7F), (2.0**-9, 0x01),
                                        (2.0**-10, 0x00), (3 * 2.0**-10, 0x02), (1.0625, 0x38), (1.1875, 0x3A),
                                        (0.875 * 2.0**-6, 0x07), (0.9375 * 2.0**-6, 0x08)])
def test_f32_to_e4m3_hand_checked(value: float, code: int) -> None:
    """Ties to even (1.0625 -> 1.0, 1.1875 -> 1.25; half the smallest subnormal -> 0, 1.5 of it -> 2 of it), the
    subnormal to normal carry, the 448 clamp and NaN."""
    assert int(f32_to_e4m3_satfinite(np.float32(value))) == code


def test_f32_to_e4m3_agrees_with_ml_dtypes_on_every_rounding_case() -> None:
    """Every sign, exponent and top-5-mantissa-bit pattern of f32, with the bits below set to each case the
    rounding tells apart (zero, one ulp, just under, at and past the half, all ones) and a random fill: the
    codes are ml_dtypes' of the value clipped to +-448 (NaN -> 0x7f). (All 2^32 patterns agree; run once.)"""
    rng = np.random.default_rng(12)
    lows = np.concatenate([[0, 1, 2, (1 << 17) - 1, 1 << 17, (1 << 17) + 1, (1 << 18) - 1],
                           rng.integers(0, 1 << 18, 3)]).astype(np.uint32)
    bits = ((np.arange(1 << 14, dtype=np.uint32) << np.uint32(18))[:, None] | lows[None]).reshape(-1)
    x = bits.view(np.float32)
    with np.errstate(invalid="ignore"):
        ref = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    np.testing.assert_array_equal(f32_to_e4m3_satfinite(x), np.where(np.isnan(x), 0x7F, ref).astype(np.uint8))


def test_e4m3_to_f16_exhaustive() -> None:
    codes = np.arange(256, dtype=np.uint8)
    got = e4m3_to_f16(codes)
    finite = (codes & 0x7F) != 0x7F
    ref = codes[finite].view(ml_dtypes.float8_e4m3fn).astype(np.float16).view(np.uint16)
    assert np.array_equal(got[finite], ref)
    assert int(got[0x7F]) == 0x7FFF and int(got[0xFF]) == 0x7FFF  # [measured] both NaN codes -> canonical NaN
    assert int(got[0x80]) == 0x8000 and int(got[0x01]) == 0x1800 and int(got[0x7E]) == 0x5F00
    # decoding is exact: every finite code survives the round trip
    assert np.array_equal(f16_to_e4m3_satfinite(got[finite]), codes[finite])


def test_packed_forms_put_the_upper_half_in_the_upper_byte() -> None:
    assert int(cvt_rn_satfinite_e4m3x2_f16x2(np.uint32(0x3C00_4000))) == 0x3840
    assert int(cvt_rn_satfinite_e4m3x2_f16x2(np.uint32(0x7C00_FE00))) == 0x7E7F
    assert int(cvt_rn_f16x2_e4m3x2(np.uint16(0x4038))) == 0x4000_3C00
    assert int(cvt_rn_f16x2_e4m3x2(np.uint16(0xFF80))) == 0x7FFF_8000


def test_packed_forms_agree_with_the_lanes() -> None:
    rng = np.random.default_rng(7)
    words = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
    got = cvt_rn_satfinite_e4m3x2_f16x2(words)
    assert got.dtype == np.uint16 and got.shape == words.shape
    lo = f16_to_e4m3_satfinite((words & 0xFFFF).astype(np.uint16))
    hi = f16_to_e4m3_satfinite((words >> 16).astype(np.uint16))
    assert np.array_equal(got, (hi.astype(np.uint16) << 8) | lo)
    back = cvt_rn_f16x2_e4m3x2(got)
    assert back.dtype == np.uint32
    assert np.array_equal(back & 0xFFFF, e4m3_to_f16(lo)) and np.array_equal(back >> 16, e4m3_to_f16(hi))


def test_shapes_and_scalars() -> None:
    x = np.full((2, 3), 0x3C00_3C00, np.uint32)
    assert cvt_rn_satfinite_e4m3x2_f16x2(x).shape == (2, 3)
    assert isinstance(cvt_rn_satfinite_e4m3x2_f16x2(np.uint32(0)), np.uint16)
    assert isinstance(e4m3_to_f16(np.uint8(0x38)), np.uint16)


@pytest.mark.slow
def test_f32_to_e4m3_agrees_with_ml_dtypes_on_all_patterns() -> None:
    """All 2^32 f32 patterns, 2^24 at a time (about 8 minutes on two cores): ml_dtypes' code of the value clipped
    to +-448, NaN -> 0x7f."""
    low = np.arange(1 << 24, dtype=np.uint32)
    for top in range(256):
        x = ((np.uint32(top) << np.uint32(24)) | low).view(np.float32)
        with np.errstate(invalid="ignore"):
            ref = np.where(np.isnan(x), 0x7F, np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
        np.testing.assert_array_equal(f32_to_e4m3_satfinite(x), ref.astype(np.uint8), err_msg=f"top byte {top:#x}")
