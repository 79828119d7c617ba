"""The shipped enc5 kernel's PTX (nvcc output of every form) run by the emulator gives the same bytes as
tcforge.layers.enc5.reference. Default run: one small odd extent with a non-zero origin per form (hopper ~3 s, ada
~4 s: wgmma, named barriers with bar.arrive; the split forms ~2 s: 2-CTA clusters exchanging through distributed
shared memory); --slow: five frames per form including a 720p frame."""

from __future__ import annotations

import pytest
from tests.ptx.emulate.enc5_case import compare, nvcc

pytestmark = pytest.mark.skipif(nvcc() is None, reason="nvcc is needed to make the kernel's PTX")


def test_hopper_small_odd_extent_with_origin() -> None:
    assert compare("hopper", (13, 11), (3, 5), seed=1) == (0, 0)


def test_ada_small_odd_extent_with_origin() -> None:
    assert compare("ada", (13, 11), (3, 5), seed=1) == (0, 0)


@pytest.mark.parametrize("form", ["hopper_split", "hopper_split_occ3"])
def test_split_forms_small_odd_extent_with_origin(form: str) -> None:
    assert compare(form, (13, 7), (3, 5), seed=1) == (0, 0)


FRAMES = [((40, 23), (0, 0), 0), ((13, 11), (3, 5), 1), ((8, 8), (0, 0), 2), ((21, 9), (7, 1), 3),
          ((17, 30), (0, 12), 4)]


@pytest.mark.slow
@pytest.mark.parametrize("extent,origin,seed", FRAMES)
def test_hopper_frames(extent, origin, seed) -> None:
    assert compare("hopper", extent, origin, seed) == (0, 0)


@pytest.mark.slow
@pytest.mark.parametrize("extent,origin,seed", [((8, 8), (0, 0), 2), ((13, 11), (3, 5), 1), ((9, 9), (1, 2), 5),
                                                ((16, 8), (0, 7), 6), ((11, 5), (5, 0), 7)])
def test_ada_frames(extent, origin, seed) -> None:
    assert compare("ada", extent, origin, seed) == (0, 0)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["hopper_split", "hopper_split_occ3"])
@pytest.mark.parametrize("extent,origin,seed", [((40, 23), (0, 0), 0), ((17, 9), (2, 1), 3), ((8, 5), (0, 0), 2)])
def test_split_frames(form, extent, origin, seed) -> None:
    assert compare(form, extent, origin, seed) == (0, 0)
