"""The enc5 descriptor reproduces the analysis's §2.1 table (typed from it), its §2.2 corrections, the 10304 stride."""

from __future__ import annotations

import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.descriptor import (
    HEADER,
    PARAMS,
    PHASES,
    check_extents,
    launch_geometry,
    phase,
    phase_table,
)
from tcforge.layers.enc5.layout import IMAGE_BYTES, mlp_chunk_offsets, weight_map

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
