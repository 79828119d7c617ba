"""`tcforge gemm` and `tcforge bench gemm` entry points (CPU side: listing, argument errors)."""

from __future__ import annotations

import pytest

from tcforge.cli import main as tcforge_main
from tcforge.gemm.cli import main
from tcforge.gemm.variants import LADDER


def test_list_prints_every_rung(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for v in LADDER:
        assert v.name in out
    assert "tuned" in out
    # the cluster column says which way a cluster runs; swapped tiles carry W
    n96 = next(line for line in out.splitlines() if line.startswith("n96c4 "))
    assert n96.split()[5] == "4N" and "W" not in n96.split()[6]
    sw16 = next(line for line in out.splitlines() if line.startswith("sw16c4 "))
    assert sw16.split()[5] == "4" and "W" in sw16.split()[6]


def test_unknown_variant_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert tcforge_main(["gemm", "build", "--variant", "nonsense"]) == 2
    assert "unknown variant" in capsys.readouterr().err


def test_run_rejects_unknown_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    assert tcforge_main(["gemm", "run", "--dtype", "fp64"]) == 2
    assert "--dtype must be one of" in capsys.readouterr().err


def test_run_refuses_a_column_major_fp8_a(capsys: pytest.CaptureFixture[str]) -> None:
    assert tcforge_main(["gemm", "run", "--dtype", "e4m3", "--a-col-major"]) == 2
    assert "fp8 wgmma reads A K-major" in capsys.readouterr().err
