"""Progress and scale (issue 42): a tqdm bar on a terminal only, none when piped or with --quiet; `gemm build` prints
a summary (a line per kernel with --verbose, and always for a kernel that fails its check)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import types
from pathlib import Path

import pytest

from tcforge.cli import main

ROOT = Path(__file__).resolve().parents[1]


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
    argv = ["enc5", "run", "--backend", "cpu", "--extent", "24x8", "--out", str(tmp_path / "o")]
    shown = _stderr_on_a_terminal(argv, ROOT)
    assert "enc5 reference" in shown and "window" in shown
    assert _stderr_on_a_terminal([*argv, "--quiet"], ROOT) == ""
    piped = subprocess.run([sys.executable, "-m", "tcforge", *argv], cwd=ROOT, capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stderr == ""


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
