"""`bench/gemm_small_table.py` on a committed device result: one line per case, ratios as recorded, best starred."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import gemm_small_table as table  # noqa: E402

RESULT = ROOT / "bench" / "results" / "gemm_small_s27_n4096.json"


def test_one_line_per_case_with_the_recorded_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert table.main([str(RESULT)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"== {RESULT} (60 rows")
    assert len(lines) == 1 + 10  # 5 shapes x 2 dtype pairs, 6 variants each
    bf16 = next(x for x in lines if x.startswith("80x4096x4096 bf16->bf16 colB"))
    assert "(cuBLAS 9.9us)" in bf16 and "auto 17.9us x0.55 |" in bf16 and "*t128 16.9us x0.58" in bf16
    assert "[" not in bf16  # the fast-accumulation peer is shown for fp8 only
    fp8 = next(x for x in lines if x.startswith("96x4096x4096 e4m3->bf16 colB"))
    assert "*sw64 9.9us x0.67 [0.63]" in fp8


def test_a_failed_check_is_named_and_never_starred() -> None:
    rows = [{"m": 8, "n": 8, "k": 8, "in": "fp16", "out": "fp32", "b_kmajor": False, "variant": v, "ok": ok,
             "ms": ms, "ratio_cublas": 1.0, "cublas_ms": 0.002, "error": None} for v, ok, ms in
            (("fast_but_wrong", False, 0.001), ("right", True, 0.003))]
    (key, case), = table.rows_by_case(rows).items()
    line = table.case_line(key, case)
    assert "fast_but_wrong FAILED check" in line and "*right 3.0us" in line


def test_not_a_result_file_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    assert table.main([str(bad)]) == 1
    assert "not a gemm_small result" in capsys.readouterr().err
