"""Two independent implementations of each mma model agree bit for bit: the vectorised float64 path (`mma.py`) and
the per-element `Fraction` reference (`mma_reference.py`), on random tiles of every input family."""

from __future__ import annotations

import numpy as np
import pytest
from numerics_testlib import FAMILIES, family_tiles, mismatch_message

from tcforge.numerics import MODELS, mma_m16n8k32_e4m3_f16
from tcforge.numerics.mma_reference import mma_reference


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_fast_matches_reference(model: str, kind: int) -> None:
    a, b, c = family_tiles(kind, 3, seed=1)
    got = mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = mma_reference(a, b, c, model)
    assert np.array_equal(got, want), mismatch_message(got, want, f"{model}, family {kind}: fast vs reference")


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_fast_matches_reference_many(model: str, kind: int) -> None:
    a, b, c = family_tiles(kind, 16, seed=2)
    got = mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = mma_reference(a, b, c, model)
    assert np.array_equal(got, want), mismatch_message(got, want, f"{model}, family {kind}: fast vs reference")


def test_families_are_not_degenerate() -> None:
    """The random families reach what they are meant to: NaN, inf, overflow, subnormal and zero results."""
    d = {k: mma_m16n8k32_e4m3_f16(*family_tiles(k, 20, seed=3), "ada") for k in FAMILIES}
    assert np.count_nonzero((d[2] & 0x7FFF) == 0x7C00) > 100
    assert np.count_nonzero(((d[3] & 0x7C00) == 0) & ((d[3] & 0x3FF) != 0)) > 100
    assert np.count_nonzero(d[4] == 0x7FFF) > 100 and np.count_nonzero(d[4] != 0x7FFF) > 100
    assert np.count_nonzero((d[5] & 0x7FFF) == 0) > 10


def test_leading_dims_and_chunking() -> None:
    """Any leading shape (incl. more tiles than one vectorised chunk) gives the same bits as tile-by-tile calls."""
    a, b, c = family_tiles(0, 150, seed=4)
    for model in MODELS:
        whole = mma_m16n8k32_e4m3_f16(a.reshape(3, 50, 16, 32), b.reshape(3, 50, 32, 8), c.reshape(3, 50, 16, 8), model)
        assert whole.shape == (3, 50, 16, 8) and whole.dtype == np.uint16
        single = np.stack([mma_m16n8k32_e4m3_f16(a[t], b[t], c[t], model) for t in range(0, 150, 37)])
        assert np.array_equal(whole.reshape(150, 16, 8)[::37], single)
