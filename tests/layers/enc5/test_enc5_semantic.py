"""The float model: numpy and PyTorch paths agree; the torch path is exercised where torch is installed."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5 import Inputs, WeightImage
from tcforge.layers.enc5.semantic import semantic


def test_numpy_model_shapes_and_unwritten_pixels() -> None:
    res = semantic(WeightImage.synthetic(0), Inputs.synthetic((8, 8), 0, ox=2))
    assert res.features.shape == (8, 8, 160) and res.surface.shape == (8, 8, 4)
    # origin offset 2 with the ceil grid (one window, x0 = -2): columns 6..7 of the frame are beyond it
    assert np.isnan(res.features[:, 6:]).all() and np.isfinite(res.features[:, :6]).all()
    with pytest.raises(TcforgeError, match="backend must be"):
        semantic(WeightImage.synthetic(0), Inputs.synthetic((9, 8), 0), backend="jax")


def test_torch_model_matches_numpy() -> None:
    pytest.importorskip("torch")
    w, inp = WeightImage.synthetic(0), Inputs.synthetic((9, 8), 0)
    a = semantic(w, inp, backend="numpy")
    b = semantic(w, inp, backend="torch")
    assert np.allclose(a.features, b.features, atol=1e-4) and np.allclose(a.surface, b.surface, atol=1e-5)
