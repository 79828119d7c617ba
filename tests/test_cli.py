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


def test_closed_pipe_ends_quietly() -> None:
    """`tcforge ... | head -1`: the reader leaves early; no traceback, exit 0."""
    import subprocess
    import sys

    cmd = (f"{sys.executable} -m tcforge enc5 phases --detail | head -1")
    proc = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], capture_output=True, text=True)
    assert proc.stderr == "" and proc.returncode == 0
    assert proc.stdout.count("\n") == 1


def test_unwritable_output_path_is_one_line(tmp_path, capsys) -> None:
    """An output path inside a missing folder of a read-only place: one line naming it, exit 2."""
    from tcforge.cli import main

    bad = "/proc/tcforge-no-such/w.bin"
    assert main(["enc5", "weights", "--out", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tcforge enc5: error:") and "tcforge-no-such" in err
