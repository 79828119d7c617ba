"""The command line's one error path (issue 42): every user-caused failure — a bad output or input path of each
class, a bad environment variable, a malformed value — is one stderr line `tcforge <cmd>: error: ...`, exit 2, no
traceback, and is refused before any long work; a closed pipe ends quietly; every group called bare prints its help
and exits 2; every option has help text."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from tcforge.cli import SUBCOMMANDS, main

# commands that write a FOLDER / a FILE, with the option naming it ({} is replaced by the bad path)
DIR_OUTPUTS = {
    "enc5 run": ["enc5", "run", "--extent", "8x8", "--out", "{}"],
    "extract": ["extract", "tests/data/extract/multi.fatbin", "--out", "{}"],
    "bench gemm": ["bench", "gemm", "--out", "{}"],
}
FILE_OUTPUTS = {
    "spec": ["spec", "tests/data/ptx/wgmma_chain.ptx", "-o", "{}"],
    "enc5 weights": ["enc5", "weights", "--out", "{}"],
    "bench numerics": ["bench", "numerics", "--json", "{}"],
    "bench enc5": ["bench", "enc5", "--json", "{}"],
}
INPUTS = {  # commands that read a FILE
    "spec": ["spec", "{}"],
    "extract": ["extract", "{}"],
    "enc5 run --weights": ["enc5", "run", "--weights", "{}"],
    "enc5 run --input": ["enc5", "run", "--input", "{}"],
    "emulate": ["emulate", "{}", "--grid", "1", "--block", "32", "--args", "a.npz", "--out", "o.npz"],
}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("TCFORGE_NVCC", raising=False)


def one_error_line(capsys, argv: list[str], needle: str = "") -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    cmd = argv[0]
    assert err.startswith(f"tcforge {cmd}: error: "), err
    assert needle in err, err
    return err


def _bad_dirs(tmp_path: Path) -> dict[str, str]:
    f = tmp_path / "a-file"
    f.write_text("x")
    return {"existing file": str(f), "/dev/null": "/dev/null", "/proc/x": "/proc/tcforge-x"}


def _bad_files(tmp_path: Path, make_parent: bool) -> dict[str, str]:
    bad = {"a folder": str(tmp_path), "/proc/x": "/proc/tcforge-x/out.json"}
    if not make_parent:  # bench --json creates its folder, as it always did for bench/results
        bad["missing parent"] = str(tmp_path / "missing" / "out.txt")
    return bad


@pytest.mark.parametrize("name", DIR_OUTPUTS)
def test_every_bad_output_folder_is_one_line(name, tmp_path, capsys) -> None:
    for cls, path in _bad_dirs(tmp_path).items():
        argv = [a.replace("{}", path) for a in DIR_OUTPUTS[name]]
        err = one_error_line(capsys, argv, "--out")
        assert path in err, (cls, err)


@pytest.mark.parametrize("name", FILE_OUTPUTS)
def test_every_bad_output_file_is_one_line(name, tmp_path, capsys) -> None:
    for cls, path in _bad_files(tmp_path, name.startswith("bench")).items():
        argv = [a.replace("{}", path) for a in FILE_OUTPUTS[name]]
        err = one_error_line(capsys, argv)
        assert path in err, (cls, err)


def test_dev_null_is_a_fine_output_file(capsys) -> None:
    """As for any Unix tool: a report or image written to /dev/null is thrown away, not refused."""
    assert main(["spec", "tests/data/ptx/wgmma_chain.ptx", "-o", "/dev/null"]) == 0
    assert main(["enc5", "weights", "--out", "/dev/null"]) == 0


@pytest.mark.parametrize("name", INPUTS)
def test_every_bad_input_is_one_line(name, tmp_path, capsys) -> None:
    for path in (str(tmp_path), str(tmp_path / "missing.bin"), "/proc/tcforge-x/y"):
        one_error_line(capsys, [a.replace("{}", path) for a in INPUTS[name]], path)


@pytest.mark.parametrize("argv", [["gemm", "build"], ["gemm", "run", "--m", "64"], ["enc5", "run", "--backend", "auto"],
                                  ["enc5", "run", "--backend", "native"], ["bench", "gemm"], ["bench", "enc5"]])
@pytest.mark.parametrize("value", ["/nonexistent", "/tmp"])
def test_bad_tool_variable_is_one_line(argv, value, monkeypatch, capsys) -> None:
    monkeypatch.setenv("TCFORGE_NVCC", value)
    one_error_line(capsys, argv, f"TCFORGE_NVCC={value!r}")


@pytest.mark.parametrize(("argv", "needle"), [
    (["enc5", "run", "--extent", "-1x5"], "both extents must be positive"),
    (["enc5", "layout", "--extent", "-1x5"], "both extents must be positive"),
    (["enc5", "run", "--extent", "2000x2000"], "pass --yes"),
    (["enc5", "run", "--bogus"], "unrecognized arguments: --bogus"),
    (["gemm", "run", "--dtype"], "expected one argument"),
    (["spec", "tests/data/ptx/wgmma_chain.ptx", "--entry", "nope*"], "no function matches 'nope*'"),
    (["spec", "-", "-"], "stdin) may be given once"),
    (["emulate", "x.ptx", "--grid", "0", "--block", "32", "--args", "a.npz", "--out", "o.npz"], "--grid"),
    (["bench", "numerics", "--bogus"], "unrecognized arguments: --bogus"),
    (["extract", "tests/data/extract/kernels.cu"], ""),
])
def test_malformed_values_are_one_line(argv, needle, capsys) -> None:
    if argv[0] == "extract":  # a text file is no binary: listed as holding nothing, not an error
        assert main(argv) == 0
        assert "no ELF, PE or fatbin header" in capsys.readouterr().out
        return
    one_error_line(capsys, argv, needle)


def test_utf8_bom_is_read_as_ptx(tmp_path, capsys) -> None:
    src = (ROOT / "tests/data/ptx/wgmma_chain.ptx").read_bytes()
    bom = tmp_path / "bom.ptx"
    bom.write_bytes(b"\xef\xbb\xbf" + src)
    assert main(["spec", str(bom), "--format", "json"]) == 0
    assert '"entry": "wgmma_chain"' in capsys.readouterr().out


@pytest.mark.parametrize("group", ["enc5", "gemm", "bench", None])
def test_groups_called_bare_print_help_and_exit_2(group, capsys) -> None:
    rc = main([group] if group else [])
    out, err = capsys.readouterr()
    assert rc == 2 and "usage:" in out and err.count("\n") == 1 and "error: a " in err and "required" in err


def _walk(p: argparse.ArgumentParser):
    yield p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub in a.choices.values():
                yield from _walk(sub)


def test_every_option_has_help_text() -> None:
    from tcforge.extract.cli import build_parser as extract_parser
    from tcforge.gemm.cli import build_parser as gemm_parser
    from tcforge.layers.enc5.cli import build_parser as enc5_parser
    from tcforge.ptx.cli import build_parser as spec_parser

    missing = [f"{p.prog} {'/'.join(a.option_strings) or a.dest}" for top in (spec_parser(), extract_parser(),
               enc5_parser(), gemm_parser()) for p in _walk(top) for a in p._actions
               if not a.help and not isinstance(a, argparse._SubParsersAction)]
    assert missing == []


def test_version_is_listed_in_help(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--version" in out and all(f"  {name} " in out for name in SUBCOMMANDS)
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("tcforge ")


@pytest.mark.parametrize("cmd", ["gemm list", "enc5 phases --detail", "spec tests/data/ptx/fused_chains.ptx",
                                 "extract tests/data/extract/prog", "enc5 assumptions"])
def test_closed_pipe_is_quiet(cmd) -> None:
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m tcforge {cmd} | head -1"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.stderr == "" and proc.returncode == 0 and proc.stdout.count("\n") == 1


def test_progress_stays_off_when_piped(tmp_path) -> None:
    """stderr is not a terminal here: no bar, no estimate line; the run's summary on stdout only."""
    proc = subprocess.run([sys.executable, "-m", "tcforge", "enc5", "run", "--extent", "8x8", "--out",
                           str(tmp_path / "o"), "--backend", "cpu"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stderr == ""


@pytest.mark.parametrize("cmd", ["spec", "extract", "enc5", "enc5 run", "enc5 weights", "gemm", "gemm build",
                                 "gemm run", "bench", "bench numerics", "bench enc5", "bench gemm"])
def test_every_help_prints_and_exits_0(cmd, capsys) -> None:
    try:
        rc = main([*cmd.split(), "--help"])
    except SystemExit as exc:  # argparse's --help
        rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 0 and "usage:" in out and err == ""
