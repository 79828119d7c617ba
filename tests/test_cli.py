"""The `tcforge` dispatcher: help, version, unknown commands exit 2 with a message naming the valid ones."""

from tcforge.cli import SUBCOMMANDS, main


def test_help_lists_every_command(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert f"  {name} " in out


def test_unknown_command_exits_2_and_names_valid_ones(capsys) -> None:
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "'frobnicate'" in err and "spec" in err and "gemm" in err
