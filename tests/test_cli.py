"""The `tcforge` command line: the dispatcher (help, version, unknown commands exit 2 naming the valid ones); its one
error path (issue 42): every user-caused failure — a bad output or input path of each class, a bad environment
variable, a malformed value — is one stderr line `tcforge <cmd>: error: ...`, exit 2, no traceback, and is refused
before any long work; a closed pipe ends quietly; every group called bare prints its help and exits 2; every option
has help text; progress and scale: a tqdm bar on a terminal only, none when piped or with --quiet; `gemm build`
prints a summary (a line per kernel with --verbose, and always for a kernel that fails its check); `tcforge gemm` and
`tcforge bench gemm` on the CPU side (listing, argument errors before a GPU is needed); `tcforge enc5 ...` and
`tcforge bench enc5` end to end on a small frame, and the PNG writer of `enc5 run` (decoded back with zlib)."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import types
import zlib
from pathlib import Path

import numpy as np
import pytest

from tcforge.cli import SUBCOMMANDS, main
from tcforge.errors import TcforgeError
from tcforge.gemm.cli import main as gemm_main
from tcforge.gemm.variants import LADDER
from tcforge.layers.enc5.cli import encode_png, to_uint8, upscale
from tcforge.layers.enc5.cli import main as enc5_main
from tcforge.layers.enc5.descriptor import HEADER

ROOT = Path(__file__).resolve().parents[1]

# commands that write a FOLDER / a FILE, with the option naming it ({} is replaced by the bad path)
DIR_OUTPUTS = {
    "enc5 run": ["enc5", "run", "--extent", "8x8", "--out", "{}"],
    "extract": ["extract", "tests/data/extract/libkernels.so", "--out", "{}"],
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


def test_unknown_command_exits_2_and_names_valid_ones(capsys) -> None:
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "'frobnicate'" in err and "spec" in err and "gemm" in err


def test_missing_optional_package_is_one_clean_line(monkeypatch, capsys) -> None:
    def needs_torch(argv: list[str]) -> int:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setitem(sys.modules, "tcforge._fake_cmd", types.SimpleNamespace(main=needs_torch))
    monkeypatch.setitem(SUBCOMMANDS, "fake", ("tcforge._fake_cmd", "a command that needs torch"))
    assert main(["fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'torch'" in err and "tcforge[gpu]" in err


def test_unwritable_output_path_is_one_line(tmp_path, capsys) -> None:
    """An output path inside a missing folder of a read-only place: one line naming it, exit 2."""
    bad = "/proc/tcforge-no-such/w.bin"
    assert main(["enc5", "weights", "--out", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tcforge enc5: error:") and "tcforge-no-such" in err


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
    (["bench", "gemm", "--eager-spread", "-1"], "--eager-spread takes 0 to 60 seconds"),
    (["bench", "gemm", "--size", "0"], "--size must be at least 1, got 0"),
    (["bench", "gemm", "--combos", "fp16:int4,bf16:fp32"], "--combos: fp16:int4 not supported; pairs IN:OUT from "),
    (["bench", "gemm", "--variants", "bn256,nope"], "unknown variant 'nope'"),
    (["bench", "gemm", "--sweep-variants", "zz"], "unknown variant 'zz'"),
    (["extract", "pyproject.toml"], "no CUDA code in pyproject.toml (unknown: no ELF, PE or fatbin header"),
])
def test_malformed_values_are_one_line(argv, needle, capsys) -> None:
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
                                 "extract tests/data/extract/libkernels.so", "enc5 assumptions"])
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


def _stderr_on_a_terminal(args: list[str], cwd: Path) -> str:
    """Run `tcforge ARGS` with stderr on a pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # a 100-column terminal
    proc = subprocess.Popen([sys.executable, "-m", "tcforge", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=follower, env=dict(os.environ, COLUMNS="100"))
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode(errors="replace")


def test_enc5_run_shows_progress_on_a_terminal_only(tmp_path) -> None:
    argv = ["enc5", "run", "--backend", "cpu", "--extent", "8x8", "--out", str(tmp_path / "o")]
    shown = _stderr_on_a_terminal(argv, ROOT)
    assert "enc5 reference" in shown and "window" in shown
    assert _stderr_on_a_terminal([*argv, "--quiet"], ROOT) == ""  # piped: test_progress_stays_off_when_piped


def test_enc5_run_states_its_time_before_a_long_run(capsys, tmp_path, monkeypatch) -> None:
    from tcforge.layers.enc5 import cli as enc5_cli

    monkeypatch.setattr(enc5_cli, "ANNOUNCE_SECONDS", 0)
    assert main(["enc5", "run", "--backend", "cpu", "--extent", "8x8", "--out", str(tmp_path)]) == 0
    assert "enc5: 1 windows on the CPU reference: about 0 s" in capsys.readouterr().err
    assert main(["enc5", "run", "--backend", "cpu", "--extent", "2000x2000", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "62500 windows" in err and "about 3.0 h" in err and "--yes" in err


def _fake_builds(monkeypatch, spills: list[int]) -> None:
    import tcforge.gemm.build as build

    def fake(i: int, s: int):
        stats = types.SimpleNamespace(spills=s, registers=100 + i, stack_frame=0, spill_stores=s, spill_loads=s)
        module = types.SimpleNamespace(stats={"tcf_gemm": stats}, wgmma_serialized=False)
        return types.SimpleNamespace(tag=lambda: f"kernel{i}", compile=lambda: module)

    monkeypatch.setattr(build, "all_builds", lambda variants=None: [fake(i, s) for i, s in enumerate(spills)])
    monkeypatch.delenv("TCFORGE_NVCC", raising=False)


def test_gemm_build_prints_a_summary(monkeypatch, capsys) -> None:
    _fake_builds(monkeypatch, [0] * 40)
    assert main(["gemm", "build", "--jobs", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["40 cubins for sm_90a (registers 100-139), 0 with spills or a stack frame, 0 with wgmma serialised "
                   "by ptxas (C7515 / C7511); --verbose for one line per kernel"]
    assert main(["gemm", "build", "--verbose"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 41 and out[0].startswith("kernel0 ") and out[0].endswith(" ok")


@pytest.mark.parametrize("verbose", [[], ["--verbose"]])
def test_gemm_build_names_a_kernel_that_spills(monkeypatch, capsys, verbose) -> None:
    _fake_builds(monkeypatch, [0, 8, 0])
    assert main(["gemm", "build", *verbose]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out if "SPILLS" in line] == ["kernel1"]
    assert "1 with spills" in out[-1]


def test_list_prints_every_rung(capsys: pytest.CaptureFixture[str]) -> None:
    assert gemm_main(["list"]) == 0
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
    assert main(["gemm", "build", "--variant", "nonsense"]) == 2
    assert "unknown variant" in capsys.readouterr().err


def test_build_names_every_unknown_variant_in_a_list(capsys: pytest.CaptureFixture[str]) -> None:
    """A list with one good name and one bad is refused (not built short of the bad one)."""
    assert main(["gemm", "build", "--variant", "sw80,nonsense"]) == 2
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
    assert main(["gemm", "run", *argv]) == 2
    assert message in capsys.readouterr().err


def test_run_rejects_unknown_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gemm", "run", "--dtype", "fp64"]) == 2
    assert "--dtype must be one of" in capsys.readouterr().err


def test_run_refuses_a_column_major_fp8_a(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gemm", "run", "--dtype", "e4m3", "--a-col-major"]) == 2
    assert "fp8 wgmma reads A K-major" in capsys.readouterr().err


def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """Minimal PNG reader for the writer's output: checks CRCs, returns (width, height, colour type, raw rows)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, info = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, payload = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        if kind == b"IHDR":
            info = struct.unpack(">IIBBBBB", payload)
        elif kind == b"IDAT":
            idat += payload
        pos += 12 + length
    w, h, depth, colour, *_ = info
    assert depth == 8
    return w, h, colour, zlib.decompress(idat)


def test_enc5_png_round_trip() -> None:
    img = (np.arange(5 * 3 * 3) * 7 % 256).astype(np.uint8).reshape(5, 3, 3)
    w, h, colour, rows = decode_png(encode_png(img))
    assert (w, h, colour) == (3, 5, 2)
    raw = np.frombuffer(rows, np.uint8).reshape(5, 1 + 9)
    assert np.all(raw[:, 0] == 0) and np.array_equal(raw[:, 1:].reshape(5, 3, 3), img)
    assert decode_png(encode_png(img[..., 0]))[2] == 0
    with pytest.raises(TcforgeError, match="uint8"):
        encode_png(img.astype(np.float32))
    with pytest.raises(TcforgeError, match="shape"):
        encode_png(np.zeros((2, 2, 2), np.uint8))
    assert to_uint8(np.array([0.0, 0.5, 1.0, np.nan]), 0, 1).tolist() == [0, 128, 255, 0]
    assert upscale(np.eye(2, dtype=np.uint8), 3).shape == (6, 6)


def test_enc5_phases_and_assumptions_commands(capsys) -> None:
    assert enc5_main(["phases"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == HEADER and len(out) == 62
    assert enc5_main(["phases", "--detail"]) == 0
    text = capsys.readouterr().out
    assert "P3: 96x32x32 per warp, 1 k-step(s), warps 0..7, C chained from P2" not in text
    assert "P3: 96x32x32 per warp, 1 k-step(s), warps 0..7, C chained from P1" in text
    assert "B  weights @1344 + 27648·tid.z" in text and "E61 s20066-s20299" in text
    assert enc5_main(["phases", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc) == 61 and doc[20]["b"]["base"] == 222144 and doc[20]["k_steps"] == 5
    assert enc5_main(["assumptions"]) == 0
    text = capsys.readouterr().out
    assert "halo_order = tblr" in text and "e61_values" in text
    assert enc5_main(["layout"]) == 0
    text = capsys.readouterr().out
    assert "grid (5, 3, 1)" in text and "[428544, 431104) head_out" in text


def test_enc5_run_writes_outputs(tmp_path, capsys) -> None:
    out = tmp_path / "o"
    rc = enc5_main(["run", "--extent", "9x8", "--out", str(out), "--numerics", "hopper", "--compare",
               "--assume", "halo_order=ring", "--backend", "cpu"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "extent 9x8 tokens, grid 2x1 (2 windows)" in text and "vs float model" in text
    assert (out / "arena.bin").stat().st_size == 5 * 8 * 9 * 32
    surface = np.load(out / "surface.npy")
    assert surface.shape == (8, 9, 4) and surface.dtype == np.uint16
    w, h, colour, _ = decode_png((out / "surface.png").read_bytes())
    assert (w, h, colour) == (72, 64, 2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["assumptions"] == {"halo_order": "ring"} and summary["backend"] == "cpu"
    # the same run from a weights file gives the same arena
    wfile = tmp_path / "w.bin"
    assert enc5_main(["weights", "--seed", "0", "--out", str(wfile)]) == 0
    out2 = tmp_path / "o2"
    assert enc5_main(["run", "--extent", "9x8", "--out", str(out2), "--numerics", "hopper", "--weights", str(wfile),
                 "--assume", "halo_order=ring"]) == 0
    assert (out2 / "arena.bin").read_bytes() == (out / "arena.bin").read_bytes()


def test_enc5_run_saves_stages(tmp_path) -> None:
    out = tmp_path / "s"
    assert enc5_main(["run", "--extent", "9x8", "--out", str(out), "--stages", "11,60-61", "--window", "1"]) == 0
    z = np.load(out / "stages.npz")
    assert z["p11_w1_z7_C"].shape == (64, 96) and z["p61_w1_z3_A"].shape == (16, 160)
    assert sorted({k.split("_")[0] for k in z.files}) == ["p11", "p60", "p61"]
    assert {k.split("_")[1] for k in z.files} == {"w1"}


@pytest.mark.parametrize("argv,msg", [
    (["run", "--stages", "1-x"], "--stages expects phase numbers"),
    (["run", "--stages", "70"], "phase numbers must be in 1..61"),
    (["run", "--stages", "3-1"], "--stages: the range '3-1' runs backwards (write 1-3)"),
    (["run", "--seed", "-1"], "argument --seed: expected a non-negative integer, got -1"),
    (["run", "--extent", "0x5"], "--extent 0x5: both extents must be positive"),
    (["run", "--extent", "40by23"], "--extent expects EXxEY"),
    (["run", "--assume", "halo_order=spiral"], "is not one of tblr, ring"),
    (["run", "--backend", "native"], "no native enc5 kernel"),
])
def test_enc5_bad_input_exits_2_with_one_line(argv, msg, capsys, tmp_path) -> None:
    assert main(["enc5", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_enc5_bad_weight_file(tmp_path, capsys) -> None:
    bad = tmp_path / "w.bin"
    bad.write_bytes(bytes(1000))
    assert main(["enc5", "run", "--weights", str(bad), "--out", str(tmp_path)]) == 2
    assert "expected 431136 bytes (the enc5 weight image), got 1000" in capsys.readouterr().err


def test_bench_enc5_writes_json(tmp_path, capsys) -> None:
    from tcforge.layers.enc5.cli import bench as enc5_bench

    path = tmp_path / "enc5.json"
    assert enc5_bench(["--extent", "8x8", "--numerics", "hopper", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    (row,) = data["results"]
    assert row["numerics"] == "hopper" and row["windows"] == 1 and row["seconds_best"] > 0
    assert data["native_available"] is False and "per frame" in capsys.readouterr().out
