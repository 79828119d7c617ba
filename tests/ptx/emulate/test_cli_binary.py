"""`tcforge emulate` on a binary: the PTX entry picked by --arch runs like the .ptx file; --out is checked first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcforge.cli import main as tcforge_main

SO = Path(__file__).parents[2] / "data" / "extract" / "libkernels.so"


def _args(tmp_path: Path) -> Path:
    args = tmp_path / "a.npz"
    x = np.arange(40, dtype=np.float32)
    np.savez(args, axpy_param_0=np.float32(2.0), axpy_param_1=x, axpy_param_2=np.ones(40, np.float32),
             axpy_param_3=np.int32(37))
    return args


@pytest.mark.parametrize("arch", ["compute_80", "compute_90a"])
def test_emulate_runs_binary_ptx(tmp_path, arch) -> None:
    out = tmp_path / "o.npz"
    rc = tcforge_main(["emulate", str(SO), "--arch", arch, "--entry", "axpy", "--grid", "2", "--block", "32",
                       "--args", str(_args(tmp_path)), "--out", str(out)])
    assert rc == 0
    want = np.ones(40, np.float32)
    want[:37] += 2 * np.arange(37, dtype=np.float32)
    with np.load(out) as z:
        np.testing.assert_array_equal(z["axpy_param_2"], want)


def test_emulate_binary_needs_arch(tmp_path, capsys) -> None:
    rc = tcforge_main(["emulate", str(SO), "--entry", "axpy", "--grid", "1", "--block", "32",
                       "--args", str(_args(tmp_path)), "--out", str(tmp_path / "o.npz")])
    assert rc == 2 and "pick one by architecture" in capsys.readouterr().err


def test_emulate_checks_out_before_running(tmp_path, capsys) -> None:
    rc = tcforge_main(["emulate", str(SO), "--arch", "compute_80", "--entry", "axpy", "--grid", "1", "--block", "32",
                       "--args", str(_args(tmp_path)), "--out", str(tmp_path / "missing" / "o.npz")])
    assert rc == 2 and "--out" in capsys.readouterr().err
