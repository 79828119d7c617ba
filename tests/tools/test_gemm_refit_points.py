"""tools/gemm_refit_points.py: from the measured-points tables as they stood before MEASURED_S31 (the later tables
left out), it picks exactly the thirteenth session's committed re-timing list; an unknown table name is refused with
its name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import gemm_refit_points  # noqa: E402


def test_reproduces_the_committed_refit_lists(tmp_path: Path) -> None:
    out = tmp_path / "points.json"
    # every table measured after the list was chosen
    later = "MEASURED_S31,MEASURED_S33_N2,MEASURED_S33_WIDE,MEASURED_S33_ROWB,MEASURED_S37,MEASURED_S37B"
    assert gemm_refit_points.main([str(out), "--without", later]) == 0
    committed = [p for name in ("gemm_s31_refit1.json", "gemm_s31_refit2.json")
                 for p in json.loads((ROOT / "bench" / "points" / name).read_text())]
    assert json.loads(out.read_text()) == committed
    assert len(committed) == 80 and all(p["variants"][0] == "auto" for p in committed)


def test_an_unknown_table_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gemm_refit_points.main([str(tmp_path / "o.json"), "--without", "MEASURED_S99"]) == 1
    assert "MEASURED_S99" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()
