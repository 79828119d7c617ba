"""Assumptions: every open point is named, documented and selectable; bad choices raise clear errors."""

from __future__ import annotations

from dataclasses import fields

import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.assumptions import CATALOGUE, Assumptions, format_catalogue


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
