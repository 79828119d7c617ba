"""Epilogue arithmetic against hand-checked values (each derivation is in the comment next to it)."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.layers.enc5 import epilogues as ep


def h(x: float) -> int:
    """f16 bits of an exactly representable value."""
    v = np.float16(x)
    assert float(v) == x, x
    return int(v.view(np.uint16))


def bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float16).view(np.uint16)


def test_cubic_exponent_hand_values() -> None:
    # x = 0: m = 0, u = fma(0, t, 1.375) = 1.375 (mantissa 384): E = 12, F = 0 -> 2^-3
    # x = 100: m clamps to 1139/2048; t = 1899/2048 - (1139/2048)^2 = 0.61794.. -> 1266/2048;
    #   u = 1139·1266/2048² + 1.375 = 1.718788.. -> 1760/1024 (mantissa 736): E = 23, F = 0 -> 2^8
    # x = -100: u = 1.375 - 0.343788.. = 1.031211.. -> 1056/1024 (mantissa 32): E = 1 -> 2^-14
    out = ep.cubic_exponent(bits([0.0, 100.0, -100.0]))
    assert out.tolist() == [h(0.125), h(256.0), h(2.0**-14)]


def test_e11_row_sum_tree_and_butterfly() -> None:
    # column 0 = 2048, the other 95 = 1. Lane 0 low half, even n-tiles: (2048+1) ties to 2048, +(1+1) = 2050,
    # +(1+1) = 2052; odd n-tiles 6 -> 2058. Other halves/lanes: 12. Butterfly bit 0: 2070 / 24, bit 1: 2094 / 48;
    # halves: 2142 (exact sum 2143).
    e = np.full((1, 96), h(1.0), np.uint16)
    e[0, 0] = h(2048.0)
    assert ep.e11_row_sum(e).tolist() == [h(2142.0)]
    assert ep.e11_row_sum(np.full((3, 96), h(0.5), np.uint16)).tolist() == [h(48.0)] * 3


def test_e11_softmax_of_a_constant_row() -> None:
    # all scores 0: expval 0.125 each, row sum 12 exactly, rcp = 1/12 -> f16 0.08331298828125 (1365·2^-14),
    # p = 0.125 · that = 0.0104141235.. exact (power-of-two scaling)
    e, rcp, p = ep.e11_softmax(np.zeros((2, 64, 96), np.uint16))
    assert np.all(e == h(0.125)) and np.all(rcp == h(1365 * 2.0**-14)) and np.all(p == h(1365 * 2.0**-17))


def test_activation_hand_values() -> None:
    # 1: s = 0.412109375 - 0.0810546875 = 0.3310546875, g = 0.8310546875, out = g
    # 0.5: s = 0.37158203125, y·s = 0.185791015625, g = 0.685791015625 ties (1404.5 ulps) to 0.685546875,
    #      out 0.3427734375
    # -1: g = 0.5 - 0.3310546875 = 0.1689453125; 2 -> 2·1 = 2; 3 -> 3; -3 -> -3 · (+0) = -0
    out = ep.activation(bits([1.0, 0.5, -1.0, 2.0, 3.0, -3.0]))
    assert out.tolist() == [h(0.8310546875), h(0.3427734375), h(-0.1689453125), h(2.0), h(3.0), 0x8000]


def test_rms_norm_hand_value() -> None:
    # 160 ones: Σx² = 160 (+2^-13 rounds back to 160), rsqrt = 0.0790569.. -> 1295·2^-14; ×1 then ×2 -> 2590·2^-14
    x = np.full((1, 160), h(1.0), np.uint16)
    gain = np.full(160, h(2.0), np.uint16)
    for tree in ("sequential", "pairwise"):
        assert np.all(ep.rms_norm(x, gain, tree) == h(2590 * 2.0**-14))


def test_sum_of_squares_tree_orders_differ_as_derived() -> None:
    # x[0] = 64 (square 4096, f16 ulp 4 there), 159 ones. Lane 0 low half holds columns 8i.
    # sequential: 4096+1 stays 4096 nineteen times -> 4096; butterfly 4116, 4156; + high half 80 -> 4236
    # pairwise: (4096+1)=4096, +2 ties to 4096, +4 = 4100, +8 = 4108, +4 = 4112; butterfly 4132, 4172; +80 -> 4252
    x = np.full((1, 160), h(1.0), np.uint16)
    x[0, 0] = h(64.0)
    assert ep.row_sum_of_squares(x, "sequential").tolist() == [h(4236.0)]
    assert ep.row_sum_of_squares(x, "pairwise").tolist() == [h(4252.0)]


def test_e61_uniform_weights_and_fold() -> None:
    # nine zeros: ex2(0) = 1, sum 9, 1/9 -> f16 1820·2^-14, p_i = that.
    # fold over nine taps of 1.0 (units of 2^-14): 1820, 3640, 5460, 7280, 9100 ties to 9104, 10924 -> 10928,
    # 12748 -> 12752, 14572 -> 14576, 16396 -> 16400 = 1.0009765625
    v = np.zeros((1, 10), np.uint16)
    p = ep.e61_weights(v, 9, 9)
    assert p[0, :9].tolist() == [h(1820 * 2.0**-14)] * 9
    acc = ep.e61_fold(p[:, :9], np.full((1, 9, 4), h(1.0), np.uint16))
    assert acc.tolist() == [[h(1.0009765625)] * 4]


def test_e61_paired_fold() -> None:
    # p = 1820·2^-14 each, taps 1.0 (units 2^-14): each half 1820, 3640, 5460, 7280 (exact); lo + hi = 14560;
    # + p8 = 16380 -> ulp 8 there: 2047.5 ties to 2048 -> 16384 = 1.0 (the sequential fold gives 1.0009765625)
    p = np.full((1, 9), h(1820 * 2.0**-14), np.uint16)
    acc = ep.e61_fold_paired(p, np.full((1, 9, 4), h(1.0), np.uint16))
    assert acc.tolist() == [[h(1.0)] * 4]
    # pairing really pairs taps: weights only on tap 1 and tap 8 -> p1·tap1 + p8·tap8 per channel
    p = np.zeros((1, 9), np.uint16)
    p[0, 1], p[0, 8] = h(0.5), h(0.25)
    taps = np.zeros((1, 9, 4), np.uint16)
    taps[0, 1], taps[0, 8] = bits([1.0, 2.0, 3.0, 4.0]), bits([4.0, 4.0, 4.0, 4.0])
    assert ep.e61_fold_paired(p, taps).tolist() == [[h(1.5), h(2.0), h(2.5), h(3.0)]]


def test_e61_weights_with_a_max_shift() -> None:
    # values (2, 0 × 8): independent float64 derivation of the same op sequence, rounded where the PTX rounds
    v = np.zeros((1, 10), np.uint16)
    v[0, 0] = h(2.0)
    p = ep.e61_weights(v, 9, 9)[0, :9]
    log2e = float(np.array(0x3FB8AA3B, np.uint32).view(np.float32))
    e = np.exp2(np.array([0.0] + [-2.0] * 8) * log2e)
    r = np.float16(1.0 / e.sum())
    expect = (e.astype(np.float16).astype(np.float64) * float(r)).astype(np.float16).view(np.uint16)
    assert p.tolist() == expect.tolist()
    assert p[0] == h(1967 * 2.0**-12)  # 1/2.08268 = 0.480151 -> 1967·2^-12


@pytest.mark.parametrize("x", [448.0, 500.0, -1000.0, 0.0009765625])
def test_requant_saturates_and_keeps_subnormals(x: float) -> None:
    code = int(ep.requant(bits([x]))[0])
    expect = {448.0: 0x7E, 500.0: 0x7E, -1000.0: 0xFE, 0.0009765625: 0x00}[x]  # 2^-10 < half of 2^-9: rounds to 0
    assert code == expect
