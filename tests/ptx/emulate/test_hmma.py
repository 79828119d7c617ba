"""numerics.hmma (mma.m16n8k16 f16 on Hopper) agrees with the first HMMA of the Hopper FP8 model: on e4m3-valued
operands with C = 0, an m16n8k32 whose k % 4 in {2, 3} products are zero is exactly one m16n8k16."""

from __future__ import annotations

import numpy as np

from tcforge import numerics as nx
from tcforge.numerics.hmma import mma_m16n8k16_f16_f16


def test_hmma_matches_the_hopper_fp8_model_first_half() -> None:
    rng = np.random.default_rng(3)
    codes = np.array([c for c in range(256) if (c & 0x7F) != 0x7F], np.uint8)
    a8 = rng.choice(codes, (64, 16, 16))
    b8 = rng.choice(codes, (64, 16, 8))
    a8[:8, :, 8:] = a8[:8, :, :8] ^ 0x80  # exact cancellations
    b8[:8, 8:] = b8[:8, :8]
    k32 = np.flatnonzero(np.arange(32) % 4 < 2)  # where the first HMMA's k lie in the m16n8k32 order
    a32 = np.zeros((64, 16, 32), np.uint8)
    b32 = np.zeros((64, 32, 8), np.uint8)
    a32[:, :, k32] = a8
    b32[:, k32, :] = b8
    want = nx.mma_m16n8k32_e4m3_f16(a32, b32, np.zeros((64, 16, 8), np.uint16), "hopper")
    got = mma_m16n8k16_f16_f16(nx.e4m3_to_f16(a8), nx.e4m3_to_f16(b8), np.zeros((64, 16, 8), np.uint16))
    np.testing.assert_array_equal(got, want)
