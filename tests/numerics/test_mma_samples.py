"""The mma emulator against every shared hardware sample (1000 + 1000 published vectors, 600 H200 tiles): 0 misses."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from numerics_testlib import SAMPLES, load_published, load_tiles, mismatch_message

from tcforge.numerics import mma_m16n8k32_e4m3_f16

SHARED_FILES = ("ada_published_0-999.npz", "h200_published_0-999.npz", "h200_mma_tiles_sample.npz")


@pytest.mark.parametrize(
    ("fname", "model"), [("ada_published_0-999.npz", "ada"), ("h200_published_0-999.npz", "hopper")]
)
def test_published_vectors(fname: str, model: str) -> None:
    a, b, c, want = load_published(SAMPLES / fname)
    assert a.shape[0] == 1000
    got = mma_m16n8k32_e4m3_f16(a, b, c, model)
    assert np.array_equal(got[:, 0, 0], want), mismatch_message(got[:, 0, 0], want, f"{model} vs {fname}")
    # every other output sees only zero products and C = +0
    rest = got.copy()
    rest[:, 0, 0] = 0
    assert not rest.any(), mismatch_message(rest, np.zeros_like(rest), "zero outputs")


@pytest.mark.parametrize("kind", range(6))
def test_h200_tiles_hopper(kind: int) -> None:
    z = load_tiles(SAMPLES / "h200_mma_tiles_sample.npz")
    sel = z["kind"] == kind
    assert sel.sum() == 100
    got = mma_m16n8k32_e4m3_f16(z["a"][sel], z["b"][sel], z["c"][sel], "hopper")
    assert np.array_equal(got, z["d"][sel]), mismatch_message(got, z["d"][sel], f"hopper, family {kind}")


def test_h200_tiles_cover_the_special_values() -> None:
    """The tile sample really exercises what the special-value rules claim (NaN, inf, -0, overflow, subnormals)."""
    z = load_tiles(SAMPLES / "h200_mma_tiles_sample.npz")
    d = z["d"]
    assert np.count_nonzero(d == 0x7FFF) > 100  # canonical NaN
    assert np.count_nonzero((d & 0x7FFF) == 0x7C00) > 100  # +-inf from C and from overflow
    assert np.count_nonzero(((d & 0x7C00) == 0) & ((d & 0x3FF) != 0)) > 100  # subnormal results
    cancel = z["kind"] == 5
    assert np.count_nonzero(z["c"][cancel] == 0x8000) > 100 and np.count_nonzero(d[cancel] == 0) > 100


@pytest.mark.parametrize("fname", SHARED_FILES)
def test_committed_copies_match_shared(fname: str, shared_dir: Path) -> None:
    src = shared_dir / "data" / "numerics" / fname
    digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (src, SAMPLES / fname)]
    assert digest[0] == digest[1], f"tests/data/numerics/shared/{fname} differs from ../shared"
