"""`bench/gemm_points.py`: the committed point lists are valid and are the lists the committed results were timed
from (same shapes, variants and order); a bad list is refused with the reason, before any GPU is needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import gemm_points  # noqa: E402

LISTS = {"gemm_s30_band.json": "gemm_small_s30_band.json", "gemm_s30_n2fit.json": "gemm_small_s30_n2fit.json",
         "gemm_s30_longn.json": "gemm_small_s30_longn.json", "gemm_s31_refit1.json": "gemm_small_s31_refit1.json",
         "gemm_s31_refit2.json": "gemm_small_s31_refit2.json"}


@pytest.mark.parametrize("name", sorted(LISTS))
def test_committed_lists_are_valid_and_match_their_results(name: str) -> None:
    points = json.loads((ROOT / "bench" / "points" / name).read_text())
    assert gemm_points.check_points(points) is None
    rows = json.loads((ROOT / "bench" / "results" / LISTS[name]).read_text())["rows"]
    want = [(tuple(p["shape"]), p["combo"].split(":")[0], p["layout"] == "col" or p["combo"].startswith("e4m3"), v)
            for p in points for v in p["variants"]]
    got = [((r["m"], r["n"], r["k"]), r["in"], r["b_kmajor"], r["variant"]) for r in rows]
    assert got == want
    assert all(r["ok"] and not r["error"] for r in rows)  # every timed launch passed its check first


@pytest.mark.parametrize(("points", "reason"), [
    ({"shape": [1, 2, 3]}, "a JSON array"),
    ([{"shape": [1, 2, 3], "combo": "bf16:bf16", "layout": "col"}], "needs shape, combo, layout and variants"),
    ([{"shape": [0, 2, 3], "combo": "bf16:bf16", "layout": "col", "variants": ["auto"]}], "positive integers"),
    ([{"shape": [1, 2, 3], "combo": "bf16:fp16", "layout": "col", "variants": ["auto"]}], "not a supported"),
    ([{"shape": [1, 2, 3], "combo": "bf16:bf16", "layout": "colB", "variants": ["auto"]}], "'col' or 'row'"),
    ([{"shape": [1, 2, 3], "combo": "e4m3:bf16", "layout": "col", "variants": ["sw56n3#2"]}], "unknown variant"),
])
def test_a_bad_list_is_refused_with_its_reason(points: object, reason: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "points.json"
    f.write_text(json.dumps(points))
    assert gemm_points.main([str(f), str(tmp_path / "out.json")]) == 1
    assert reason in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_usage_and_an_unreadable_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gemm_points.main([]) == 2
    assert "Time explicit GEMM points" in capsys.readouterr().out
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    assert gemm_points.main([str(bad), str(tmp_path / "o.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
