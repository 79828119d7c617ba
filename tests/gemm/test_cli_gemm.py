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


def test_build_names_every_unknown_variant_in_a_list(capsys: pytest.CaptureFixture[str]) -> None:
    """A list with one good name and one bad is refused (not built short of the bad one)."""
    assert tcforge_main(["gemm", "build", "--variant", "sw80,nonsense"]) == 2
    err = capsys.readouterr().err
    assert "'nonsense'" in err and "'sw80'" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "nonsense"], "unknown variant 'nonsense'"),
        (["--m", "0"], "--m 0: every dimension must be at least 1"),
        (["--n", "-3", "--k", "0"], "--n -3, --k 0: every dimension"),
        (["--dtype", "e4m3", "--out", "fp64"], "--out fp64 is not made from e4m3"),
        (["--dtype", "fp16", "--out", "bf16"], "--out bf16 is not made from fp16: choose one of fp16, fp32"),
    ],
)
def test_run_refuses_bad_arguments_before_needing_a_gpu(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tcforge_main(["gemm", "run", *argv]) == 2
    assert message in capsys.readouterr().err


def test_run_rejects_unknown_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    assert tcforge_main(["gemm", "run", "--dtype", "fp64"]) == 2
    assert "--dtype must be one of" in capsys.readouterr().err


def test_run_refuses_a_column_major_fp8_a(capsys: pytest.CaptureFixture[str]) -> None:
    assert tcforge_main(["gemm", "run", "--dtype", "e4m3", "--a-col-major"]) == 2
    assert "fp8 wgmma reads A K-major" in capsys.readouterr().err
