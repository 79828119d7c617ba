"""The enc5 layer on the CPU, as data: every open point is a named, documented and selectable assumption (bad choices
raise clear errors); the descriptor reproduces the analysis's §2.1 table (typed from it), its §2.2 corrections and the
10304 stride; the lane/byte layouts (the mma k permutation and the B-tile and score-bias byte maps of enc5.md §4); the
WeightImage and Inputs (sizes, views at the documented addresses, synthetic determinism, clear errors); the epilogue
arithmetic against hand-checked values (each derivation is in the comment next to it). The reference run:
test_enc5_reference.py."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5 import Assumptions, Inputs, WeightImage, phase
from tcforge.layers.enc5 import epilogues as ep
from tcforge.layers.enc5.assumptions import CATALOGUE, format_catalogue
from tcforge.layers.enc5.descriptor import (
    HEADER,
    PARAMS,
    PHASES,
    check_extents,
    launch_geometry,
    phase_table,
)
from tcforge.layers.enc5.inputs import arena_to_features, features_to_arena
from tcforge.layers.enc5.layout import (
    IMAGE_BYTES,
    b_matrix_offsets,
    b_tile_byte,
    k_permutation,
    mlp_chunk_offsets,
    mma_k_to_channel,
    score_bias_offsets,
    weight_map,
)


def test_every_field_is_catalogued_with_evidence_and_its_default() -> None:
    by_name = {a.name: a for a in CATALOGUE}
    for f in fields(Assumptions):
        info = by_name[f.name]
        assert info.selectable and info.evidence and f.default == info.choice and f.default in info.alternatives
    assert {"halo_order", "prologue_sum_tree", "e20_sum_tree", "e61_values", "residual", "e21_residual",
            "input_record_order", "arena_record_order", "e60_lane_guard", "image_size"} <= set(by_name)


def test_parse_and_errors() -> None:
    a = Assumptions.parse(["halo_order=ring", "e20_sum_tree=pairwise"])
    assert a.halo_order == "ring" and a.non_default() == {"halo_order": "ring", "e20_sum_tree": "pairwise"}
    with pytest.raises(TcforgeError, match="tblr, ring"):
        Assumptions(halo_order="spiral")
    with pytest.raises(TcforgeError, match="unknown assumption 'nope'"):
        Assumptions.parse(["nope=1"])
    with pytest.raises(TcforgeError, match="not selectable"):
        Assumptions.parse(["warps=4"])
    with pytest.raises(TcforgeError, match="name=value"):
        Assumptions.parse(["halo_order"])


def test_catalogue_text_marks_the_choice() -> None:
    text = format_catalogue(Assumptions(halo_order="ring"))
    assert "halo_order = ring" in text and "* ring:" in text and "  tblr:" in text
    assert text.count("evidence:") == len(CATALOGUE)


# typed from the analysis §2.1: (#, first stmt, last stmt, mma, grid, weight lo, weight hi, bias lo, bias hi, epi)
ANALYSIS_ROWS = [
    (1, 7554, 7577, 24, "full", 320, 844, None, None, 7),
    (2, 7585, 7608, 24, "full", 5440, 5964, None, None, 7),
    (3, 7616, 7639, 24, "full", 1344, 1868, None, None, 7),
    (4, 7647, 7670, 24, "full", 6464, 6988, None, None, 7),
    (5, 7678, 7701, 24, "full", 2368, 2892, None, None, 7),
    (6, 7709, 7732, 24, "full", 7488, 8012, None, None, 7),
    (7, 7740, 7763, 24, "full", 3392, 3916, None, None, 7),
    (8, 7771, 7794, 24, "full", 8512, 9036, None, None, 7),
    (9, 7802, 7825, 24, "full", 4416, 4940, None, None, 7),
    (10, 7833, 7856, 24, "full", 9536, 10060, None, None, 171),
    (11, 8028, 8075, 48, "full", None, None, 10560, 22348, 3844),
    (12, 11920, 11967, 48, "band", None, None, None, None, 274),
    (13, 12242, 12261, 20, "full", 22848, 27468, None, None, 27),
    (14, 12289, 12308, 20, "full", 50496, 55116, None, None, 27),
    (15, 12336, 12355, 20, "full", 78144, 82764, None, None, 27),
    (16, 12383, 12402, 20, "full", 105792, 110412, None, None, 27),
    (17, 12430, 12449, 20, "full", 133440, 138060, None, None, 27),
    (18, 12477, 12496, 20, "full", 161088, 165708, None, None, 27),
    (19, 12524, 12543, 20, "full", 188736, 193356, None, None, 27),
    (20, 12571, 12590, 20, "full", 216384, 221004, None, None, 1029),
    (21, 13620, 13639, 20, "band", 222144, 226764, 227264, 227312, 321),
    (22, 13961, 13980, 20, "full", 227328, 231948, None, None, 92),
    (23, 14073, 14092, 20, "band", 232768, 237388, 237888, 237936, 172),
    (24, 14265, 14284, 20, "full", 237952, 242572, None, None, 92),
    (25, 14377, 14396, 20, "band", 243072, 247692, 248192, 248240, 172),
    (59, 19545, 19564, 20, "band", 418240, 422860, 423360, 423408, 172),
    (60, 19737, 19756, 20, "full", 423424, 428044, None, None, 299),
    (61, 20056, 20065, 10, "band", 428544, 430604, 431104, 431120, 234),
]

# §2.2's corrected shapes (M×N×K per warp)
CORRECTED = {1: (96, 32, 32), 11: (64, 96, 32), 12: (64, 32, 96), 13: (16, 160, 32), 21: (16, 32, 160),
             22: (16, 160, 32), 59: (16, 32, 160), 60: (16, 160, 32), 61: (16, 16, 160)}


@pytest.mark.parametrize("row", ANALYSIS_ROWS, ids=lambda r: f"P{r[0]}")
def test_phase_matches_analysis_row(row) -> None:
    idx, first, last, mma, grid, wlo, whi, blo, bhi, epi = row
    p = phase(idx)
    assert (p.first, p.last, p.mma, p.grid, p.epilogue.count) == (first, last, mma, grid, epi)
    assert p.weight_bytes == (None if wlo is None else (wlo, whi))
    assert p.bias_bytes == (None if blo is None else (blo, bhi))


def test_corrected_shapes_and_mma_identity() -> None:
    assert len(PHASES) == 61
    for idx, mnk in CORRECTED.items():
        assert (phase(idx).m, phase(idx).n, phase(idx).k) == mnk
    for p in PHASES:
        assert (p.m // 16) * (p.n // 8) * (p.k // 32) == p.mma


def test_statement_ranges_are_contiguous_with_epilogues() -> None:
    for a, b in zip(PHASES, PHASES[1:], strict=False):
        assert a.epilogue.first == a.last + 1
        assert b.first == a.epilogue.last + 1, (a.index, b.index)
    assert PHASES[-1].epilogue.last == 20299


def test_mlp_stride_is_10304_and_matches_the_analysis_offsets() -> None:
    assert mlp_chunk_offsets(1)[0] - mlp_chunk_offsets(0)[0] != 10304  # chunk 0 is followed by the 232448 table
    for i in range(2, 20):
        assert mlp_chunk_offsets(i)[0] - mlp_chunk_offsets(i - 1)[0] == 10304
    assert mlp_chunk_offsets(19) == (418_240, 423_360, 423_424)
    assert phase(60).weight_bytes[0] + 5120 == 428_544 == phase(61).weight_bytes[0]


def test_slot_terms_and_chaining() -> None:
    for i in range(1, 11):
        assert phase(i).b.tidz == "27648·tid.z"
        assert phase(i).chain_from == (None if i <= 2 else i - 2)
    assert phase(11).c.tidz == "27648·tid.z"
    assert phase(13).b.tidz == "" and phase(14).chain_from == 13
    assert phase(22).chain_from is None and phase(24).chain_from == 22 and phase(23).chain_from is None
    assert all(phase(i).warps == 8 for i in range(1, 13)) and all(phase(i).warps == 4 for i in range(13, 62))


def test_weight_map_is_contiguous_and_431136_bytes() -> None:
    regs = weight_map()
    assert regs[0].start == 0 and regs[-1].end == IMAGE_BYTES == 431_136
    for a, b in zip(regs, regs[1:], strict=False):
        assert a.end == b.start, (a.name, b.name)
    assert 8 * 27648 + 320 == 221_504 == [r for r in regs if r.name == "proj_bias"][0].start


def test_phase_table_text() -> None:
    text = phase_table().splitlines()
    assert text[0] == HEADER == ("  # stmt range    M    N     K tiles  mma  grid           weight bytes"
                                 "                 bias bytes    epi")
    assert len(text) == 62
    assert text[1].split() == ["1", "s7554-s7577", "96", "32", "32", "24", "24", "full", "320..844", "-", "7"]
    assert text[21].split() == ["21", "s13620-s13639", "16", "32", "160", "4", "20", "band", "222144..226764",
                                "227264..227312", "321"]
    assert text[12].split()[2:5] == ["64", "32", "96"]
    for line in text[1:]:  # right edges line up under the header (a 13-character stmt range pushes its row by one)
        assert len(line) == len(HEADER) + (len(line.split()[1]) == 13)


def test_params_and_launch() -> None:
    assert [f.offset for f in PARAMS] == [0, 8, 40, 48, 80, 88, 112]
    g = launch_geometry(40, 23)
    assert g.grid == (5, 3, 1) and g.block == (32, 1, 8) and g.windows == 15 and g.smem_bytes == 16384
    assert launch_geometry(41, 23).grid == (6, 3, 1)
    assert launch_geometry(40, 23, 3, 0, "ceil_offset").grid == (6, 3, 1)


@pytest.mark.parametrize("ex,ey", [(0, 5), (5, -1), (100_000, 100_000)])
def test_bad_extents(ex, ey) -> None:
    with pytest.raises(TcforgeError, match="extent"):
        check_extents(ex, ey)


def test_k_permutation_follows_the_pack() -> None:
    # reg0 of lane t: k = 4t..4t+3 -> channels 2t, 2t+1, 16+2t, 17+2t; reg2 (k + 16): the same + 8
    expected = {0: 0, 1: 1, 2: 16, 3: 17, 4: 2, 5: 3, 6: 18, 7: 19, 12: 6, 15: 23, 16: 8, 17: 9, 18: 24, 19: 25, 31: 31}
    for kk, ch in expected.items():
        assert int(mma_k_to_channel(kk)) == ch
    p = k_permutation(160)
    assert sorted(p.tolist()) == list(range(160))
    assert p[32 + 2] == 32 + 16 and p[128 + 16] == 128 + 8


def test_b_tile_map_is_a_bijection_matching_the_lane_loads() -> None:
    n, k = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    off = b_tile_byte(n, k)
    assert sorted(off.ravel().tolist()) == list(range(1024))
    # lane l loads 16 bytes at 16·l: lane = 4·(n&7) + ((k>>1)&3) = 4g + t, column n&7 = g
    lane = (off % 512) // 16
    assert np.array_equal(lane, 4 * (n & 7) + ((k >> 1) & 3))
    # inside the lane's 16 bytes: bytes 0..7 = n-tile (n>>3)&1 registers b0 (k = 4t..4t+3), b1 (+16) in mma k order
    inner = off % 16
    assert np.array_equal(inner // 8, (n >> 3) & 1)
    mma_k = 4 * ((k >> 1) & 3) + (inner % 8 % 4) + 16 * ((inner % 8) // 4)
    assert np.array_equal(mma_k_to_channel(mma_k), k)


def test_b_matrix_tile_orders() -> None:
    km = b_matrix_offsets(160, 32, "k_major")  # Q/V chains: k-slice s at +1024 s
    assert km[32, 0] == 1024 and km[0, 16] == 512
    nm = b_matrix_offsets(160, 32, "n_major")  # fc1: chain steps at +512, columns 16..31 at +2560
    assert nm[32, 0] == 512 and nm[0, 16] == 2560
    assert sorted(nm.ravel().tolist()) == list(range(5120))
    wo = b_matrix_offsets(32, 160, "k_major")
    assert sorted(wo.ravel().tolist()) == list(range(5120))


def test_score_bias_map() -> None:
    off = score_bias_offsets()
    assert off.shape == (64, 96)
    assert sorted((off // 2).ravel().tolist()) == list(range(6144)) and np.all(off % 2 == 0)
    # element (row 16m + g + 8r, col 8n + 2t + j) at 512(4(n>>1)+m) + 16(4g+t) + 8(n&1) + 4r + 2j
    assert off[0, 0] == 0 and off[8, 0] == 4 and off[0, 1] == 2 and off[0, 8] == 8 and off[16, 0] == 512
    assert off[0, 16] == 2048 and off[1, 2] == 16 * 5


@pytest.fixture(scope="module")
def image() -> WeightImage:
    return WeightImage.synthetic(7)


def _addr(n: int, k: int) -> int:
    """enc5.md §4's B-tile byte map, written out independently of the package."""
    return (512 * (n >> 4) + 64 * (n & 7) + 16 * ((k >> 1) & 3) + 8 * ((n >> 3) & 1) + 4 * ((k >> 3) & 1)
            + 2 * ((k >> 4) & 1) + (k & 1))


def test_size_checks_and_round_trip(image: WeightImage, tmp_path) -> None:
    raw = bytes(image)
    assert len(raw) == 431_136 and WeightImage.from_bytes(raw) == image
    with pytest.raises(TcforgeError, match="expected 431136 bytes.*got 431135"):
        WeightImage.from_bytes(raw[:-1])
    with pytest.raises(TcforgeError, match="pad_431124"):
        WeightImage.from_bytes(raw[:431_124])
    padded = WeightImage.from_bytes(raw[:431_124], image_size="pad_431124")
    assert bytes(padded)[:431_124] == raw[:431_124] and bytes(padded)[431_124:] == bytes(12)
    p = tmp_path / "w.bin"
    p.write_bytes(raw)
    assert WeightImage.from_file(p) == image
    with pytest.raises(TcforgeError, match="no such file"):
        WeightImage.from_file(tmp_path / "missing.bin")
    with pytest.raises(TcforgeError, match="expected bytes"):
        WeightImage.from_bytes("abc")  # type: ignore[arg-type]


def test_synthetic_is_deterministic(image: WeightImage) -> None:
    assert WeightImage.synthetic(7) == image and WeightImage.synthetic(8) != image


def test_views_read_the_documented_addresses(image: WeightImage) -> None:
    raw = np.frombuffer(bytes(image), np.uint8)
    q3 = image.q(3)  # head 3, chain A, k-slice s at 27648·3 + 320 + 1024 s
    for k, n in [(0, 0), (37, 5), (159, 31), (100, 17)]:
        assert q3[k, n] == raw[27648 * 3 + 320 + 1024 * (k // 32) + _addr(n, k % 32)]
    fc1 = image.fc1(5)  # chunk 5: 232768 + 10304·4, tile = ks + 5·(n>>4)
    for k, n in [(0, 0), (70, 20), (159, 31)]:
        assert fc1[k, n] == raw[232_768 + 10_304 * 4 + 512 * (k // 32 + 5 * (n // 16)) + _addr(n % 16, k % 32)]
    wo = image.wo(2)
    assert wo[9, 150] == raw[22_848 + 27_648 * 2 + _addr(150, 9)]
    head = image.head_out()
    assert head[140, 9] == raw[428_544 + 512 * 4 + _addr(9, 140 % 32)]
    sb = image.score_bias(1)  # row 16m+g+8r, col 8n+2t+j
    row, col = 16 * 2 + 3 + 8, 8 * 5 + 2 * 1 + 1
    off = 27_648 + 10_560 + 512 * (4 * (5 >> 1) + 2) + 16 * (4 * 3 + 1) + 8 * (5 & 1) + 4 + 2
    assert sb[row, col] == raw[off] | (raw[off + 1].astype(np.uint16) << 8)
    assert image.vector("mlp_gain")[7] == raw[221_824 + 14] | (raw[221_824 + 15].astype(np.uint16) << 8)
    assert image.fc1_bias(19).tolist() == raw[423_360:423_424].view("<u2").tolist()
    with pytest.raises(TcforgeError, match="unknown weight-image region"):
        image.b_matrix("nope")


def test_synthetic_magnitudes(image: WeightImage) -> None:
    gain = image.vector("mlp_gain").view(np.float16).astype(np.float32)
    assert 9 < float(np.median(gain)) < 16  # ~sqrt(160): the norm has no 1/N
    assert np.all(image.q(0) & 0x7F != 0x7F)  # no NaN codes


def test_inputs_round_trip_and_errors() -> None:
    inp = Inputs.synthetic((11, 6), 3)
    assert inp.input.size == 5 * 6 * 11 * 32 and inp.texture.shape == (6, 11, 4)
    feats = inp.features()
    assert np.array_equal(arena_to_features(features_to_arena(feats), 11, 6), feats)
    # record byte b of plane p holds channel 32p + perm(b): byte 2 of plane 1 is channel 48
    assert inp.input[1 * 6 * 11 * 32 + 2] == feats[0, 0, 48]
    tex = inp.texture
    with pytest.raises(TcforgeError, match="texture: expected RGBA16F shape"):
        Inputs(11, 6, inp.input, tex[:, :10])
    with pytest.raises(TcforgeError, match="texture: expected a uint16"):
        Inputs(11, 6, inp.input, tex.astype(np.float32))
    with pytest.raises(TcforgeError, match="input: expected 10560 bytes"):
        Inputs(11, 6, inp.input[:-1], tex)
    with pytest.raises(TcforgeError, match="extent ex must be a positive integer"):
        Inputs(0, 6, inp.input, tex)
    with pytest.raises(TcforgeError, match="too large for the arena"):
        Inputs.synthetic((60_000, 60_000))
    with pytest.raises(TcforgeError, match="origin offset ox"):
        Inputs(11, 6, inp.input, tex, ox=70_000)


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
