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


def test_unknown_form_is_refused() -> None:
    with pytest.raises(TcforgeError, match="kernel form must be one of hopper, ada, hopper_split"):
        function("turing")


def test_overlapping_buffers_are_detected() -> None:
    from tcforge.layers.enc5.gpu.api import ranges_overlap

    assert ranges_overlap((1000, 100), (1099, 10))  # last byte of one = first of the other
    assert not ranges_overlap((1000, 100), (1100, 10))  # adjacent, no shared byte
    assert ranges_overlap((1000, 100), (900, 1000))  # contained
    assert not ranges_overlap((1000, 0), (1000, 10))  # empty range


class _Buf:
    """Stand-in for a CUDA tensor: just an address range."""

    def __init__(self, ptr: int, n: int, size: int = 1) -> None:
        self.ptr, self.n, self.size = ptr, n, size

    def data_ptr(self) -> int:
        return self.ptr

    def numel(self) -> int:
        return self.n

    def element_size(self) -> int:
        return self.size


def test_aliasing_check_names_the_buffers() -> None:
    from tcforge.layers.enc5.gpu.api import _check_no_aliasing

    inputs = {"inputs": _Buf(0, 4096), "texture": _Buf(8192, 512, 2), "weights": _Buf(1 << 20, 431136)}
    _check_no_aliasing({"arena": _Buf(4096, 4096), "surface": _Buf(16384, 512, 2)}, inputs)  # disjoint: fine
    with pytest.raises(TcforgeError, match="arena overlaps inputs"):
        _check_no_aliasing({"arena": _Buf(4000, 4096)}, inputs)
    with pytest.raises(TcforgeError, match="surface overlaps texture"):
        _check_no_aliasing({"surface": _Buf(9000, 16, 2)}, inputs)  # inside the texture's 1024 bytes
    with pytest.raises(TcforgeError, match="arena overlaps surface"):
        _check_no_aliasing({"arena": _Buf(20000, 64), "surface": _Buf(20032, 64, 2)}, inputs)
