"""Hand-built mma tiles with bit values worked out by hand: NaN codes, +-inf and NaN in C, overflow, signed zeros,
subnormals, and the rounding steps that tell the Ada and Hopper models apart."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.numerics import mma_m16n8k32_e4m3_f16

ONE, TWO_M5, TWO_M6, TWO_M9, MAX = 0x38, 0x10, 0x08, 0x01, 0x7E  # e4m3 codes of 1, 2^-5, 2^-6, 2^-9, 448
POS_INF, NEG_INF, NAN = 0x7C00, 0xFC00, 0x7FFF


def tiles() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros((16, 32), np.uint8), np.zeros((32, 8), np.uint8), np.zeros((16, 8), np.uint16)


def dot(pairs: dict[int, tuple[int, int]], c: int, model: str) -> int:
    """Output (0, 0) of a tile whose row 0 / column 0 hold the given (a, b) codes at positions k."""
    a, b, cc = tiles()
    for k, (x, y) in pairs.items():
        a[0, k], b[k, 0] = x, y
    cc[0, 0] = c
    return int(mma_m16n8k32_e4m3_f16(a, b, cc, model)[0, 0])


@pytest.mark.parametrize("model", ["ada", "hopper"])
def test_nan_codes_poison_their_row_and_column(model: str) -> None:
    a, b, c = tiles()
    a[3, 7] = 0x7F  # NaN in row 3 of A: the whole output row is NaN even though B is all zero
    b[20, 5] = 0xFF  # NaN in column 5 of B
    c[9, 1] = 0x7E01  # NaN payload in C
    d = mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = np.zeros((16, 8), np.uint16)
    want[3, :] = NAN
    want[:, 5] = NAN
    want[9, 1] = NAN
    assert np.array_equal(d, want)


@pytest.mark.parametrize("model", ["ada", "hopper"])
@pytest.mark.parametrize("c", [POS_INF, NEG_INF])
def test_infinite_c_passes_through_finite_products(model: str, c: int) -> None:
    assert dot({0: (MAX, ONE), 9: (ONE, 0xB8)}, c, model) == c
    # a single 448 x 448 product (200704) overflows the Hopper HMMA to +inf: +inf + (-inf) in HADD2 is NaN
    want = NAN if (model == "hopper" and c == NEG_INF) else c
    assert dot({0: (MAX, MAX)}, c, model) == want


def test_overflow_and_opposite_infinity() -> None:
    """16 x 448^2 overflows f16. Hopper: the HMMA gives +inf, HADD2 with C = -inf gives NaN. Ada (assumed IEEE): the
    products are exact and finite, so C = -inf wins."""
    big = {k: (MAX, MAX) for k in range(16)}
    for model in ("ada", "hopper"):
        assert dot(big, 0, model) == POS_INF
        assert dot({k: (MAX, 0xFE) for k in range(16)}, 0, model) == NEG_INF
    assert dot(big, NEG_INF, "hopper") == NAN
    assert dot(big, NEG_INF, "ada") == NEG_INF
    # 65504 + 15 rounds back to 65504; 65504 + 16 = 65520 is the tie with 2^16 and rounds to even: +inf
    for model in ("ada", "hopper"):
        assert dot({0: (0x47, 0x48)}, 0x7BFF, model) == 0x7BFF  # 3.75 * 4
        assert dot({0: (0x48, 0x48)}, 0x7BFF, model) == POS_INF  # 4 * 4


@pytest.mark.parametrize("model", ["ada", "hopper"])
def test_exact_cancellation_gives_plus_zero(model: str) -> None:
    pairs = {0: (0x44, 0x3A), 1: (0x44, 0xBA), 16: (MAX, ONE), 18: (MAX, 0xB8)}
    assert dot(pairs, 0x8000, model) == 0x0000
    assert dot(pairs, 0x0000, model) == 0x0000


def test_zero_products_and_negative_zero_c() -> None:
    """Nothing nonzero to add: Hopper's HMMA accumulator is +0 and +0 + (-0) = +0; Ada (assumed IEEE) keeps -0 only
    when C is -0 and every product is a negative zero."""
    assert dot({}, 0x8000, "hopper") == 0x0000
    assert dot({}, 0x8000, "ada") == 0x0000  # the zero codes 0x00 x 0x00 are +0 products
    a, b, c = tiles()
    a[0, :] = 0x80  # -0 times +0 everywhere: all products are -0
    c[0, 0] = 0x8000
    assert int(mma_m16n8k32_e4m3_f16(a, b, c, "ada")[0, 0]) == 0x8000
    assert int(mma_m16n8k32_e4m3_f16(a, b, c, "hopper")[0, 0]) == 0x0000


@pytest.mark.parametrize("model", ["ada", "hopper"])
def test_subnormal_result(model: str) -> None:
    # 2^-9 * 2^-9 = 2^-18 = 64 * 2^-24 (f16 subnormal 0x0040); minus 2^-24 from C gives 63 * 2^-24
    assert dot({0: (TWO_M9, TWO_M9)}, 0x0000, model) == 0x0040
    assert dot({0: (TWO_M9, TWO_M9)}, 0x8001, model) == 0x003F


def test_ada_truncation_vs_hopper_exact_sum() -> None:
    """1 + 2^-11 + 2^-18 in one block/HMMA: Ada cuts 2^-18 (13 bits below 2^0) and rounds the tie to even (1.0);
    the Hopper HMMA sums exactly and rounds up to 1 + 2^-10."""
    pairs = {0: (ONE, ONE), 1: (TWO_M6, TWO_M5), 4: (TWO_M9, TWO_M9)}
    assert dot(pairs, 0, "ada") == 0x3C00
    assert dot(pairs, 0, "hopper") == 0x3C01


def test_hopper_rounds_after_each_hmma() -> None:
    """k=0,1 go to the first HMMA, k=2 to the second: 1 + 2^-11 ties to 1.0, then 1.0 + 2^-11 ties to 1.0 again.
    Ada sums all three in one block exactly (1 + 2^-10)."""
    pairs = {0: (ONE, ONE), 1: (TWO_M6, TWO_M5), 2: (TWO_M6, TWO_M5)}
    assert dot(pairs, 0, "hopper") == 0x3C00
    assert dot(pairs, 0, "ada") == 0x3C01


def test_ada_c_enters_the_first_block() -> None:
    """C = 2048 and 1 + 1 in the second block: with C in block 1, block 2 sees acc 2048 (exponent 11) and adds 2
    exactly (2050, an f16). One +1 in each block would each tie back to 2048 (f16 spacing 2 there)."""
    assert dot({0: (ONE, ONE)}, 0x6800, "ada") == 0x6800  # 2049 ties to even 2048
    assert dot({16: (ONE, ONE), 17: (ONE, ONE)}, 0x6800, "ada") == 0x6801  # 2050
    assert dot({0: (ONE, ONE), 16: (ONE, ONE)}, 0x6800, "ada") == 0x6800  # two ties, each back to 2048


def test_hopper_hmma_cuts_addends_25_bits_below_the_largest() -> None:
    """256 * 128 = 2^15 (operand exponents 8 + 7), + 16 (half an ulp of 2^15: a tie), + 2^-11 (2^-5 * 2^-6): the
    unit is 2^(15 - 25) = 2^-10, so 2^-11 is cut and the tie rounds to even 2^15. An exact sum would round up.
    With 2^-10 (2^-5 * 2^-5) instead, the small term survives and breaks the tie upwards."""
    big, tie = (0x78, 0x70), (0x48, 0x48)
    assert dot({0: big, 1: tie, 4: (TWO_M5, TWO_M6)}, 0, "hopper") == 0x7800
    assert dot({0: big, 1: tie, 4: (TWO_M5, TWO_M5)}, 0, "hopper") == 0x7801
    assert dot({0: big, 1: tie, 4: (TWO_M5, TWO_M5)}, 0, "ada") == 0x7800  # Ada cuts at 2^(15 - 13)


def test_hopper_aligns_on_operand_exponents() -> None:
    """192 * 192 = 36864 = 1.125 * 2^15, but its operand exponents sum to 7 + 7 = 14: the unit is 2^(14 - 25) = 2^-11,
    so a 2^-11 term survives and breaks the tie of + 16 upwards (0x7881); aligning on the value's exponent (15)
    would cut it (0x7880)."""
    pairs = {0: (0x74, 0x74), 1: (0x48, 0x48), 4: (TWO_M5, TWO_M6)}
    assert dot(pairs, 0, "hopper") == 0x7881
    assert dot(pairs, 0, "ada") == 0x7880
