"""The numerics benchmark runs, writes its JSON and reports a throughput per model (speed itself is not asserted here:
the figure belongs to `OMP_NUM_THREADS=1 taskset -c 0 python3 -m bench.numerics_mma`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcforge.numerics.bench import main


def test_bench_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "n.json"
    main(["--tiles", "64", "--repeat", "1", "--json", str(out)])
    report = json.loads(out.read_text())
    assert set(report["models"]) == {"ada", "hopper"}
    for r in report["models"].values():
        assert r["outputs"] == 64 * 128 and r["outputs_per_s_cpu"] > 0
    assert "M outputs/s" in capsys.readouterr().out


def test_bench_rejects_unknown_models(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="valid models: ada, hopper"):
        main(["--models", "volta", "--json", str(tmp_path / "x.json")])
