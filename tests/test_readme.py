"""README.md's commands and examples run as written: every line of its ```bash blocks, every inline `tcforge ...`
command, and the Python example. GPU-only ones are skipped where no GPU is present; long ones are marked slow. The
measured results in bench/baselines/ are what the pages quote: every file is named on a page, every result of a
file of several results (one with an `about`) is quoted, and every `FILE.json`: `KEY` a page quotes exists. And
the code base stays `ruff` clean (lint rules in pyproject.toml)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
GPU_ONLY = ("gemm run", "bench gemm", "--backend native", "enc5.native", "matmul(")
SLOW = ("gemm build", "bench enc5", "--compare", "pytest")
NOT_HERE = ("pip install",)  # installing is the reader's step, not the test's


def _gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def readme_commands() -> list[str]:
    """Shell commands of README.md: each line of a ```bash block (comments dropped, `a && b` split where a part is
    an install step) and each inline `tcforge ...` (or `... && tcforge ...`) code span that is a whole command."""
    cmds: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", README, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                cmds += [part for part in line.split(" && ") if not any(n in part for n in NOT_HERE)]
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.split())
        if re.match(r"(python3 \S+ \S+ && )?tcforge \w+ \S", span) and "error:" not in span and "|" not in span:
            cmds.append(span)
    return list(dict.fromkeys(c for c in cmds if "python3 -m pytest" not in c))


def _param(cmd: str):
    marks = []
    if any(g in cmd for g in GPU_ONLY):
        marks.append(pytest.mark.gpu)
    if any(s in cmd for s in SLOW):
        marks.append(pytest.mark.slow)
    return pytest.param(cmd, marks=marks, id=cmd[:60])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A folder that looks like the repository root (its data linked in) so outputs land outside the tree, and a
    `tcforge` on PATH that runs this checkout."""
    d = tmp_path_factory.mktemp("readme")
    for name in ("tests", "tools", "src"):
        (d / name).symlink_to(ROOT / name)
    bindir = d / "bin"
    bindir.mkdir()
    shim = bindir / "tcforge"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m tcforge "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    return d, env


def test_readme_has_commands() -> None:
    cmds = readme_commands()
    assert any(c.startswith("tcforge spec") for c in cmds) and any(c.startswith("tcforge extract") for c in cmds)


@pytest.mark.parametrize("cmd", [_param(c) for c in readme_commands()])
def test_readme_command_runs_as_written(cmd: str, workdir) -> None:
    d, env = workdir
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], cwd=d, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"{cmd}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr


def test_readme_python_example_runs() -> None:
    (code,) = re.findall(r"```python\n(.*?)```", README, re.S)
    if not _gpu():
        code = "\n".join(line for line in code.splitlines() if not any(g in line for g in GPU_ONLY))
    rng = np.random.default_rng(0)
    env = {"a_codes": rng.integers(0, 0x7E, (2, 16, 32), dtype=np.uint8),
           "b_codes": rng.integers(0, 0x7E, (2, 32, 8), dtype=np.uint8), "c_bits": np.zeros((2, 16, 8), np.uint16)}
    exec(compile(code, "README.md", "exec"), env)  # noqa: S102 - the README's own example
    assert env["d"].shape == (2, 16, 8)


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    proc = subprocess.run([ruff, "check", "src", "tests", "bench", "tools"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _pages() -> str:
    return "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                                              *sorted((ROOT / "src").rglob("README.md"))])


def test_every_baseline_is_quoted_and_every_quote_exists() -> None:
    pages, base = _pages(), ROOT / "bench" / "baselines"
    unnamed, unquoted = [], []
    for f in sorted(base.iterdir()):
        if f.name not in pages:
            unnamed.append(f.name)
        elif f.suffix == ".json" and "about" in (results := json.loads(f.read_text())):
            unquoted += [f"{f.name}: {k}" for k in results if k != "about" and f"`{k}`" not in pages]
    quotes = re.findall(r"(\w+\.json)`?: `(\w+)`", pages)
    assert len(quotes) > 20
    missing = [f"{name}: {k}" for name, k in quotes
               if (base / name).is_file() and k not in json.loads((base / name).read_text())]
    assert (unnamed, unquoted, missing) == ([], [], [])
