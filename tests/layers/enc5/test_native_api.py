"""The native enc5 API's argument checks (no GPU needed: they raise before touching the device)."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5 import Assumptions, Inputs, WeightImage
from tcforge.layers.enc5.gpu import available, native
from tcforge.layers.enc5.gpu.kernel import Geometry, function


@pytest.fixture(scope="module")
def case() -> tuple[WeightImage, Inputs]:
    return WeightImage.synthetic(0), Inputs.synthetic((12, 9), 0, ox=3, oy=1)


def test_available_is_a_bool() -> None:
    assert isinstance(available(), bool)


def test_geometry_is_ceil_windows_times_frames() -> None:
    assert Geometry(40, 23).grid == (5, 3, 1)
    assert Geometry(37, 21, 64).grid == (5, 3, 64)
    assert Geometry(120, 68).windows == 135


@pytest.mark.parametrize("numerics", ["fp8", "", "Hopper"])
def test_unknown_numerics_is_refused(case, numerics: str) -> None:
    w, x = case
    with pytest.raises(TcforgeError, match="numerics"):
        native(w, x, numerics)


def test_non_default_assumptions_are_refused(case) -> None:
    w, x = case
    with pytest.raises(TcforgeError, match="default assumptions"):
        native(w, x, "hopper", assumptions=Assumptions(halo_order="ring"))


def test_inputs_type_is_checked(case) -> None:
    w, _ = case
    with pytest.raises(TcforgeError, match="inputs"):
        native(w, np.zeros(10, np.uint8), "hopper")


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(TcforgeError, match="variant"):
        function("turing")
