"""f16 lane arithmetic: hand-checked bits, PTX NaN/signed-zero rules, and cross-checks against independent models
(numpy float16 arithmetic, which computes in f32 and rounds once; exact `Fraction` arithmetic for fma)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tcforge.numerics import (
    f16_abs,
    f16_add,
    f16_fma,
    f16_max,
    f16_min,
    f16_mul,
    f16_neg,
    f16_sub,
    f16x2_abs,
    f16x2_add,
    f16x2_fma,
    f16x2_max,
    f16x2_min,
    f16x2_mul,
    f16x2_neg,
    f16x2_sub,
)
from tcforge.numerics.mma_reference import f16_fraction, round_to_f16

NAN = 0x7FFF


def u16(x: int) -> np.uint16:
    return np.uint16(x)


@pytest.mark.parametrize(
    ("op", "a", "b", "want"),
    [
        (f16_add, 0x3C00, 0x3C00, 0x4000),  # 1 + 1 = 2
        (f16_add, 0x3C00, 0x1000, 0x3C00),  # 1 + 2^-11: tie -> even 1.0
        (f16_add, 0x3C01, 0x1000, 0x3C02),  # (1 + 2^-10) + 2^-11: tie -> even 1 + 2^-9
        (f16_add, 0x7BFF, 0x7BFF, 0x7C00),  # overflow -> +inf
        (f16_add, 0x8000, 0x8000, 0x8000),  # -0 + -0 = -0
        (f16_add, 0x0000, 0x8000, 0x0000),  # +0 + -0 = +0
        (f16_add, 0x3C00, 0xBC00, 0x0000),  # exact cancellation -> +0
        (f16_add, 0x7C00, 0xFC00, NAN),  # inf - inf -> canonical NaN
        (f16_add, 0x7E01, 0x3C00, NAN),  # NaN payloads are not propagated
        (f16_add, 0x0001, 0x0001, 0x0002),  # subnormals kept
        (f16_sub, 0x8000, 0x0000, 0x8000),  # -0 - +0 = -0
        (f16_sub, 0x3C00, 0x3C00, 0x0000),
        (f16_sub, 0x7C00, 0x7C00, NAN),
        (f16_mul, 0x3C00, 0x8000, 0x8000),  # 1 * -0 = -0
        (f16_mul, 0x0001, 0x3800, 0x0000),  # 2^-24 * 0.5: tie -> even 0
        (f16_mul, 0x0001, 0x3E00, 0x0002),  # 2^-24 * 1.5: tie -> even 2 * 2^-24
        (f16_mul, 0x7C00, 0x0000, NAN),  # inf * 0
        (f16_mul, 0x5C00, 0x5C00, 0x7C00),  # 256^2 = 65536 overflows
        (f16_mul, 0x5BFF, 0x5BFF, 0x7BFE),  # 255.875^2 = 65472, an f16
    ],
)
def test_binary_ops_hand_checked(op: object, a: int, b: int, want: int) -> None:
    assert int(op(u16(a), u16(b))) == want  # type: ignore[operator]


@pytest.mark.parametrize(
    ("a", "b", "c", "want"),
    [
        (0x3C01, 0x3C01, 0x1000, 0x3C03),  # 1 + 2^-9 + 2^-11 + 2^-20 -> up; mul-then-add would give 0x3c02
        (0x3C01, 0x3C01, 0xBC00, 0x1800),  # 2^-9 + 2^-20: half an ulp of 2^-9 -> even 2^-9
        (0x3C00, 0x8000, 0x8000, 0x8000),  # 1 * -0 + -0 = -0
        (0x3C00, 0x8000, 0x0000, 0x0000),
        (0x3C00, 0x3C00, 0xBC00, 0x0000),  # exact zero -> +0
        (0x7C00, 0x0000, 0x3C00, NAN),  # inf * 0
        (0x7C00, 0x3C00, 0xFC00, NAN),  # inf - inf
        (0x7BFF, 0x4000, 0xFBFF, 0x7BFF),  # 2 * 65504 - 65504: the product may exceed f16, the result does not
        (0x0001, 0x0001, 0x0000, 0x0000),  # 2^-48 underflows to +0
        (0x0001, 0x0001, 0x8001, 0x8001),  # -2^-24 + 2^-48 rounds back to -2^-24
    ],
)
def test_fma_hand_checked(a: int, b: int, c: int, want: int) -> None:
    assert int(f16_fma(u16(a), u16(b), u16(c))) == want


def _random_f16(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 65536, n).astype(np.uint16)


@pytest.mark.parametrize(("op", "npop"), [(f16_add, np.add), (f16_sub, np.subtract), (f16_mul, np.multiply)])
def test_add_sub_mul_match_numpy_float16(op: object, npop: np.ufunc) -> None:
    rng = np.random.default_rng(11)
    a, b = _random_f16(rng, 400_000), _random_f16(rng, 400_000)
    b[:100_000] = (a[:100_000] ^ 0x8000) + rng.integers(-3, 4, 100_000).astype(np.uint16)  # near-cancellation
    with np.errstate(all="ignore"):
        ref = npop(a.view(np.float16), b.view(np.float16)).view(np.uint16)
    ref = np.where((ref & 0x7FFF) > 0x7C00, np.uint16(NAN), ref)
    got = op(a, b)  # type: ignore[operator]
    assert np.array_equal(got, ref), f"{np.count_nonzero(got != ref)} mismatches"


def test_fma_matches_exact_rational_rounding() -> None:
    rng = np.random.default_rng(12)
    n = 20_000
    a, b, c = _random_f16(rng, n), _random_f16(rng, n), _random_f16(rng, n)
    # steer half the cases to where a*b and c overlap and cancel (the hard ones for one rounding)
    c[: n // 2] = (a[: n // 2] & 0x7C00) + (b[: n // 2] & 0x7C00) - 0x3C00 | (rng.integers(0, 1024, n // 2)).astype(
        np.uint16
    )
    finite = ((a & 0x7C00) != 0x7C00) & ((b & 0x7C00) != 0x7C00) & ((c & 0x7C00) != 0x7C00)
    a, b, c = a[finite], b[finite], c[finite]
    got = f16_fma(a, b, c)
    want = np.empty_like(got)
    for i in range(len(a)):
        s = f16_fraction(int(a[i])) * f16_fraction(int(b[i])) + f16_fraction(int(c[i]))
        neg_zero = s == 0 and bool((a[i] ^ b[i]) & c[i] & 0x8000)
        want[i] = round_to_f16(s, negative_zero=neg_zero)  # type: ignore[arg-type]
    assert np.array_equal(got, want), f"{np.count_nonzero(got != want)} mismatches of {len(a)}"


def test_max_min_follow_ptx_nan_and_zero_rules() -> None:
    assert int(f16_max(u16(0x0000), u16(0x8000))) == 0x0000 and int(f16_max(u16(0x8000), u16(0x0000))) == 0x0000
    assert int(f16_min(u16(0x0000), u16(0x8000))) == 0x8000 and int(f16_min(u16(0x8000), u16(0x0000))) == 0x8000
    assert int(f16_max(u16(0x7E01), u16(0x3C00))) == 0x3C00  # one NaN: the other input
    assert int(f16_max(u16(0xBC00), u16(0xFE01))) == 0xBC00
    assert int(f16_min(u16(0x7E01), u16(0xFC00))) == 0xFC00
    assert int(f16_max(u16(0x7E01), u16(0xFE02))) == NAN  # two NaN: canonical NaN
    assert int(f16_min(u16(0x7C01), u16(0x7C01))) == NAN
    assert int(f16_max(u16(0x7C00), u16(0x7BFF))) == 0x7C00
    assert int(f16_min(u16(0xC000), u16(0xBC00))) == 0xC000
    assert int(f16_max(u16(0x0001), u16(0x8001))) == 0x0001


def test_max_min_match_value_order_on_random_input() -> None:
    rng = np.random.default_rng(13)
    a, b = _random_f16(rng, 200_000), _random_f16(rng, 200_000)
    fa, fb = a.view(np.float16).astype(np.float32), b.view(np.float16).astype(np.float32)
    ok = ~np.isnan(fa) & ~np.isnan(fb) & (fa != fb)
    assert np.array_equal(f16_max(a, b)[ok].view(np.float16).astype(np.float32), np.maximum(fa, fb)[ok])
    assert np.array_equal(f16_min(a, b)[ok].view(np.float16).astype(np.float32), np.minimum(fa, fb)[ok])


def test_neg_abs_flip_and_clear_the_sign() -> None:
    assert int(f16_neg(u16(0x3C00))) == 0xBC00 and int(f16_neg(u16(0x0000))) == 0x8000
    assert int(f16_abs(u16(0xBC00))) == 0x3C00 and int(f16_abs(u16(0x8000))) == 0x0000
    assert int(f16_neg(u16(0x7C00))) == 0xFC00 and int(f16_abs(u16(0xFC00))) == 0x7C00
    # NaN inputs give the canonical NaN, sign and payload dropped [measured on the H200]
    assert int(f16_neg(u16(0x7E01))) == NAN and int(f16_neg(u16(0xFC01))) == NAN and int(f16_abs(u16(0xFFFF))) == NAN
    allb = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    finite = (allb & 0x7FFF) <= 0x7C00
    assert np.array_equal(f16_neg(allb)[finite], (allb ^ 0x8000)[finite])
    assert np.array_equal(f16_abs(allb)[finite], (allb & 0x7FFF)[finite])


def test_packed_forms_apply_the_lane_op_to_each_half() -> None:
    assert int(f16x2_add(np.uint32(0x3C00_4000), np.uint32(0x3C00_3C00))) == 0x4000_4200  # hi 1+1, lo 2+1
    rng = np.random.default_rng(14)
    words = [rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
    lanes = [((w & 0xFFFF).astype(np.uint16), (w >> 16).astype(np.uint16)) for w in words]
    cases = [
        (f16x2_add, f16_add, 2), (f16x2_sub, f16_sub, 2), (f16x2_mul, f16_mul, 2), (f16x2_fma, f16_fma, 3),
        (f16x2_max, f16_max, 2), (f16x2_min, f16_min, 2), (f16x2_neg, f16_neg, 1), (f16x2_abs, f16_abs, 1),
    ]
    for packed, lane, arity in cases:
        got = packed(*words[:arity])
        lo = lane(*[lanes[i][0] for i in range(arity)]).astype(np.uint32)
        hi = lane(*[lanes[i][1] for i in range(arity)]).astype(np.uint32)
        assert got.dtype == np.uint32 and np.array_equal(got, hi << 16 | lo), packed.__name__


def test_broadcasting_and_scalars() -> None:
    out = f16_add(np.full((3, 1), 0x3C00, np.uint16), np.array([0x3C00, 0x4000], np.uint16))
    assert out.shape == (3, 2) and out.dtype == np.uint16
    assert isinstance(f16_add(u16(0x3C00), u16(0x3C00)), np.uint16)
    assert Fraction(1) == f16_fraction(int(f16_mul(u16(0x3800), u16(0x4000))))
