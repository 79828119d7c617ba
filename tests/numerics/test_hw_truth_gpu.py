"""On a GPU (sm_90a, CuPy, nvcc): re-measure a slice of the truth live and compare it with the committed files."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from tcforge.numerics import truth as T

GENERATE = Path(__file__).resolve().parents[2] / "tools" / "truth" / "generate.py"


@pytest.mark.gpu
def test_live_measurement_matches_committed_truth(tmp_path, data_dir):
    pytest.importorskip("cupy")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is needed to build tools/truth/truth_kernels.cu")
    spec = importlib.util.spec_from_file_location("tcforge_truth_generate", GENERATE)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = tmp_path / "out"
    assert (
        gen.main(["--out", str(out), "--carry", str(tmp_path / "nocarry"), "--tiles", "256", "--only", "rng,mma,cvt"])
        == 0
    )
    mma = np.load(out / "mma.npz")
    truth = T.load_truth("h200_mma_truth", data_dir / "numerics")
    for kind in sorted(T.MMA_KINDS):
        assert int(mma[f"k{kind}_twin_bad_tiles"]) == 0
        assert np.array_equal(mma[f"k{kind}_digest"], truth[f"k{kind}_digest"][:256]), f"kind {kind}"
    cvt = np.load(out / "cvt.npz")
    committed = T.load_truth("h200_cvt", data_dir / "numerics")
    for key in ("e4m3x2_from_lo", "e4m3x2_from_hi", "f16x2_from_e4m3x2"):
        assert np.array_equal(cvt[key], committed[key]), key
