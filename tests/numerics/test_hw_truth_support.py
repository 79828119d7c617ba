"""tcforge.numerics.truth itself: the RNG's fixed values, the family generators' invariants, digests and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.numerics import truth as T


def test_mix32_is_a_fixed_bijective_hash():
    x = np.arange(1 << 16, dtype=np.uint32)
    h = T.mix32(x)
    assert np.unique(h).size == x.size
    assert int(T.mix32(np.array([0], np.uint32))[0]) == 0
    # an independent pure-Python statement of the hash (the CUDA twin is proved equal by the device words)
    def py_mix32(v: int) -> int:
        v ^= v >> 16
        v = (v * 0x7FEB352D) & 0xFFFFFFFF
        v ^= v >> 15
        v = (v * 0x846CA68B) & 0xFFFFFFFF
        return v ^ (v >> 16)

    for v in (1, 2, 0xDEADBEEF, 0xFFFFFFFF):
        assert int(T.mix32(np.array([v], np.uint32))[0]) == py_mix32(v)
    key = py_mix32(py_mix32(5) ^ 9)
    assert int(T.rng_u32(5, 9, np.array([77]))[0]) == py_mix32((py_mix32(77 ^ key) + key) & 0xFFFFFFFF)


def test_rng_is_counter_based():
    idx = np.arange(100, 200, dtype=np.uint64)
    whole = T.rng_u32(7, 3, np.arange(0, 300, dtype=np.uint64))
    assert np.array_equal(T.rng_u32(7, 3, idx), whole[100:200])
    assert not np.array_equal(T.rng_u32(7, 4, idx), whole[100:200])
    assert not np.array_equal(T.rng_u32(8, 3, idx), whole[100:200])


def test_tiles_are_regenerated_identically_from_any_start():
    a, b, c = T.mma_tile_inputs(6, 99, 0, 12)
    a2, b2, c2 = T.mma_tile_inputs(6, 99, 5, 7)
    assert np.array_equal(a[5:], a2) and np.array_equal(b[5:], b2) and np.array_equal(c[5:], c2)


@pytest.mark.parametrize("kind", sorted(T.MMA_KINDS))
def test_family_invariants(kind):
    a, b, c = T.mma_tile_inputs(kind, 1, 0, 64)
    assert a.shape == (64, 16, 32) and a.dtype == np.uint8
    assert b.shape == (64, 32, 8) and c.shape == (64, 16, 8) and c.dtype == np.uint16
    nan_codes = ((a & 0x7F) == 0x7F).any() or ((b & 0x7F) == 0x7F).any()
    assert nan_codes == (kind in (4, 8))
    c_special = ((c & 0x7C00) == 0x7C00).any()
    assert c_special == (kind in (4, 8))
    if kind == 5:
        assert np.all((c & 0x7FFF) == 0)


def test_kind5_terms_cancel_exactly():
    import ml_dtypes

    a, b, _ = T.mma_tile_inputs(5, 3, 0, 32)
    av = a.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    bv = b.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    assert np.all(np.einsum("tik,tkj->tij", av, bv) == 0)


def test_digests():
    d = np.zeros((3, 16, 8), np.uint16)
    d[1, 15, 7] = 1
    g = T.tile_digests(d)
    assert g.dtype == np.uint64 and g[0] == g[2] != g[1]
    assert np.array_equal(
        T.chunk_digests(np.arange(8, dtype=np.uint16), 4), T.chunk_digests(np.arange(8, dtype=np.uint16), 4)
    )
    with pytest.raises(TcforgeError, match=r"d: expected"):
        T.tile_digests(np.zeros((2, 8, 16), np.uint16))
    with pytest.raises(TcforgeError, match=r"values: expected"):
        T.chunk_digests(np.arange(10, dtype=np.uint16), 4)


def test_bad_arguments():
    with pytest.raises(TcforgeError, match=r"kind: expected one of"):
        T.mma_tile_inputs(9, 0, 0, 1)
    with pytest.raises(TcforgeError, match=r"start/count"):
        T.mma_tile_inputs(0, 0, -1, 1)
    with pytest.raises(TcforgeError, match=r"name: no truth file"):
        T.load_truth("does_not_exist")


def test_malformed_truth_file(tmp_path):
    (tmp_path / "broken.npz").write_bytes(b"not a zip archive")
    with pytest.raises(TcforgeError, match=r"not a readable \.npz"):
        T.load_truth("broken", tmp_path)
