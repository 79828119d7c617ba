"""Lane/byte layouts: the mma k permutation and the B-tile and score-bias byte maps of enc5.md §4."""

from __future__ import annotations

import numpy as np

from tcforge.layers.enc5.layout import (
    b_matrix_offsets,
    b_tile_byte,
    k_permutation,
    mma_k_to_channel,
    score_bias_offsets,
)


def test_k_permutation_follows_the_pack() -> None:
    # reg0 of lane t: k = 4t..4t+3 -> channels 2t, 2t+1, 16+2t, 17+2t; reg2 (k + 16): the same + 8
    expected = {0: 0, 1: 1, 2: 16, 3: 17, 4: 2, 5: 3, 6: 18, 7: 19, 12: 6, 15: 23, 16: 8, 17: 9, 18: 24, 19: 25, 31: 31}
    for kk, ch in expected.items():
        assert int(mma_k_to_channel(kk)) == ch
    p = k_permutation(160)
    assert sorted(p.tolist()) == list(range(160))
    assert p[32 + 2] == 32 + 16 and p[128 + 16] == 128 + 8


def test_b_tile_map_is_a_bijection_matching_the_lane_loads() -> None:
    n, k = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    off = b_tile_byte(n, k)
    assert sorted(off.ravel().tolist()) == list(range(1024))
    # lane l loads 16 bytes at 16·l: lane = 4·(n&7) + ((k>>1)&3) = 4g + t, column n&7 = g
    lane = (off % 512) // 16
    assert np.array_equal(lane, 4 * (n & 7) + ((k >> 1) & 3))
    # inside the lane's 16 bytes: bytes 0..7 = n-tile (n>>3)&1 registers b0 (k = 4t..4t+3), b1 (+16) in mma k order
    inner = off % 16
    assert np.array_equal(inner // 8, (n >> 3) & 1)
    mma_k = 4 * ((k >> 1) & 3) + (inner % 8 % 4) + 16 * ((inner % 8) // 4)
    assert np.array_equal(mma_k_to_channel(mma_k), k)


def test_b_matrix_tile_orders() -> None:
    km = b_matrix_offsets(160, 32, "k_major")  # Q/V chains: k-slice s at +1024 s
    assert km[32, 0] == 1024 and km[0, 16] == 512
    nm = b_matrix_offsets(160, 32, "n_major")  # fc1: chain steps at +512, columns 16..31 at +2560
    assert nm[32, 0] == 512 and nm[0, 16] == 2560
    assert sorted(nm.ravel().tolist()) == list(range(5120))
    wo = b_matrix_offsets(32, 160, "k_major")
    assert sorted(wo.ravel().tolist()) == list(range(5120))


def test_score_bias_map() -> None:
    off = score_bias_offsets()
    assert off.shape == (64, 96)
    assert sorted((off // 2).ravel().tolist()) == list(range(6144)) and np.all(off % 2 == 0)
    # element (row 16m + g + 8r, col 8n + 2t + j) at 512(4(n>>1)+m) + 16(4g+t) + 8(n&1) + 4r + 2j
    assert off[0, 0] == 0 and off[8, 0] == 4 and off[0, 1] == 2 and off[0, 8] == 8 and off[16, 0] == 512
    assert off[0, 16] == 2048 and off[1, 2] == 16 * 5
