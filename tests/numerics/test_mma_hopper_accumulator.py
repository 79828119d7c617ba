"""Which HMMA accumulator the H200 has: the candidates of `mma_variants` scored on the committed H200 truth
(full tiles of families 0, 4, 5, 6). Only the shipped one (25 bits below the largest addend, product exponent =
sum of the operand exponents) has zero mismatches; the failure message of each check is the table of counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcforge.numerics import mma_m16n8k32_e4m3_f16
from tcforge.numerics.mma import HOPPER_FRAC_BITS
from tcforge.numerics.mma_variants import hopper_truncated

KINDS = (0, 4, 5, 6)
TILES = 256


@pytest.fixture(scope="module")
def truth_tiles(data_dir: Path) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    path = data_dir / "numerics" / "h200_mma_truth.npz"
    if not path.is_file():
        pytest.skip("tests/data/numerics/h200_mma_truth.npz is not present")
    from tcforge.numerics import truth

    z = truth.load_truth("h200_mma_truth", path.parent)
    out = []
    for k in KINDS:
        a, b, c = truth.mma_tile_inputs(k, truth.TRUTH_SEED, 0, TILES)
        out.append((a, b, c, z[f"k{k}_d"][:TILES]))
    return out


def _score(tiles: list[tuple[np.ndarray, ...]], frac_bits: int | None, rule: str) -> list[int]:
    return [int(np.count_nonzero(hopper_truncated(a, b, c, frac_bits, rule) != d)) for a, b, c, d in tiles]


def test_only_the_shipped_accumulator_fits(truth_tiles: list[tuple[np.ndarray, ...]]) -> None:
    table = {(f, r): _score(truth_tiles, f, r) for r in ("operands", "value") for f in (None, 23, 24, 25, 26, 27)}
    text = "; ".join(f"{r} {f if f is not None else 'exact'}: {v}" for (f, r), v in table.items())
    shipped = (HOPPER_FRAC_BITS, "operands")
    assert sum(table[shipped]) == 0, f"shipped accumulator mismatches (families {KINDS}) -- {text}"
    rejected = [k for k, v in table.items() if k != shipped and sum(v) == 0]
    assert not rejected, f"candidates the data cannot tell from the shipped one: {rejected} -- {text}"


def test_shipped_fast_path_equals_the_candidate(truth_tiles: list[tuple[np.ndarray, ...]]) -> None:
    for a, b, c, d in truth_tiles:
        fast = mma_m16n8k32_e4m3_f16(a, b, c, "hopper")
        slow = hopper_truncated(a, b, c, HOPPER_FRAC_BITS, "operands")
        assert np.array_equal(fast, slow) and np.array_equal(fast, d), (
            f"fast vs candidate {np.count_nonzero(fast != slow)}, fast vs H200 {np.count_nonzero(fast != d)}"
        )
