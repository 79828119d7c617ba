"""The `tcforge` dispatcher: help, version, unknown commands exit 2 with a message naming the valid ones."""

import sys

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


def test_missing_optional_package_is_one_clean_line(monkeypatch, capsys) -> None:
    import types

    def needs_torch(argv: list[str]) -> int:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setitem(sys.modules, "tcforge._fake_cmd", types.SimpleNamespace(main=needs_torch))
    monkeypatch.setitem(SUBCOMMANDS, "fake", ("tcforge._fake_cmd", "a command that needs torch"))
    assert main(["fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'torch'" in err and "tcforge[gpu]" in err
