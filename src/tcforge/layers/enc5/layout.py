"""Byte- and lane-level layouts of enc5: the mma k permutation, the B-tile byte map, the score-bias map and the
weight-image map.

Every index formula here comes from enc5.md §3–§4 (checked there on all (n, k) pairs); everything else in the
package uses these.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

IMAGE_BYTES = 431_136  # 431,124 in the analysis (largest immediate + 4) plus the +12 per-lane table term
HEAD_SLOT = 27_648  # the %tid.z weight slot of phases 1–11 (mul.wide(%tid.z·13824, 2))
N_HEADS = 8
HEAD_DIM = 32
CHANNELS = 160
HIDDEN_CHUNKS = 20
TILE = 512  # one B tile: 32 lanes × 16 bytes = one K=32 slice of 16 output columns


def mma_k_to_channel(kk: np.ndarray | int) -> np.ndarray:
    """Logical channel (within a 32-channel slice) of mma k index `kk`: the pack order of a requantised accumulator.

    Register j of lane t holds k = 4t..4t+3 (+16 for the second register) = channels 2t, 2t+1, 16+2t, 17+2t (+8).
    """
    kk = np.asarray(kk)
    return 2 * ((kk >> 2) & 3) + (kk & 1) + 16 * ((kk >> 1) & 1) + 8 * ((kk >> 4) & 1)


@cache
def k_permutation(k_total: int) -> np.ndarray:
    """Index array p with p[i] = logical channel consumed at mma position i, for a K = k_total chain (32-deep steps)."""
    if k_total % 32:
        raise ValueError(f"k_total must be a multiple of 32, got {k_total}")
    kk = np.arange(k_total)
    perm = (kk & ~31) + mma_k_to_channel(kk & 31)
    perm.setflags(write=False)
    return perm


def b_tile_byte(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Byte offset of B element (column n, logical k) inside a run of 512-byte tiles of one K=32 slice (enc5.md §4)."""
    n = np.asarray(n)
    k = np.asarray(k)
    return (
        512 * (n >> 4)
        + 64 * (n & 7)
        + 16 * ((k >> 1) & 3)
        + 8 * ((n >> 3) & 1)
        + 4 * ((k >> 3) & 1)
        + 2 * ((k >> 4) & 1)
        + (k & 1)
    )


@cache
def b_matrix_offsets(k_total: int, n_total: int, order: str) -> np.ndarray:
    """(K, N) array of byte offsets (relative to the region base) of a logical K×N B matrix stored as 512-byte tiles.

    order "k_major": tile = (N/16)·(k//32) + n//16 (phase-per-k-slice regions: Q/V chains, Wo, fc2);
    order "n_major": tile = (K/32)·(n//16) + k//32 (one phase's K=160 chains: fc1, the head).
    """
    k = np.arange(k_total)[:, None]
    n = np.arange(n_total)[None, :]
    ks, kin = k >> 5, k & 31
    nt, nin = n >> 4, n & 15
    if order == "k_major":
        tile = (n_total // 16) * ks + nt
    elif order == "n_major":
        tile = (k_total // 32) * nt + ks
    else:
        raise ValueError(f"unknown tile order {order!r}")
    off = TILE * tile + b_tile_byte(nin, kin)
    off.setflags(write=False)
    return off


@cache
def score_bias_offsets() -> np.ndarray:
    """(64, 96) byte offsets of the f16 score bias relative to its base: tile 4(n>>1)+m, lane slot, 8(n&1) + 4r + 2j."""
    row = np.arange(64)[:, None]
    col = np.arange(96)[None, :]
    m, r, g = row >> 4, (row >> 3) & 1, row & 7
    n, t, j = col >> 3, (col >> 1) & 3, col & 1
    off = TILE * (4 * (n >> 1) + m) + 16 * (4 * g + t) + 8 * (n & 1) + 4 * r + 2 * j
    off.setflags(write=False)
    return off


@dataclass(frozen=True)
class Region:
    """One named part of the weight image: [start, end), what it holds and who reads it."""

    name: str
    start: int
    end: int
    kind: str  # "e4m3_b" (B tiles), "f16_vec" (per-column table), "f16_score_bias"
    shape: tuple[int, ...]
    read_by: str
    tile_order: str = ""  # for e4m3_b regions: "k_major" | "n_major"

    @property
    def size(self) -> int:
        """Bytes in the region."""
        return self.end - self.start


def head_base(h: int) -> int:
    """Start of head h's slot (the %tid.z = h term of phases 1–11): the offsets below are relative to it."""
    return HEAD_SLOT * h


def mlp_chunk_offsets(i: int) -> tuple[int, int, int]:
    """(fc1, fc1 bias, fc2) byte offsets of MLP chunk i (0..19); chunks 1..19 repeat with stride 10304 = 5120 + 64
    + 5120."""
    if i == 0:
        return 222_144, 227_264, 227_328
    base = 232_768 + 10_304 * (i - 1)
    return base, base + 5120, base + 5184


@lru_cache(maxsize=1)
def weight_map() -> tuple[Region, ...]:
    """The full weight-image map: contiguous, non-overlapping regions covering [0, 431136)."""
    regs: list[Region] = [Region("prologue_gain", 0, 320, "f16_vec", (160,), "prologue RMS norm")]
    for h in range(N_HEADS):
        b = head_base(h)
        regs += [
            Region(f"head{h}.q", b + 320, b + 5440, "e4m3_b", (160, 32), f"phases 1,3,5,7,9 (warp {h})", "k_major"),
            Region(f"head{h}.v", b + 5440, b + 10560, "e4m3_b", (160, 32), f"phases 2,4,6,8,10 (warp {h})", "k_major"),
            Region(f"head{h}.score_bias", b + 10560, b + 22848, "f16_score_bias", (64, 96), f"phase 11 C (warp {h})"),
            Region(f"head{h}.wo", b + 22848, b + 27968, "e4m3_b", (32, 160), f"phase {13 + h} (warps 0..3)", "k_major"),
        ]
    regs += [
        Region("proj_bias", 221_504, 221_824, "f16_vec", (160,), "phase 13 C (E12: + residual)"),
        Region("mlp_gain", 221_824, 222_144, "f16_vec", (160,), "E20 RMS norm"),
    ]
    for i in range(HIDDEN_CHUNKS):
        fc1, b1, fc2 = mlp_chunk_offsets(i)
        regs += [
            Region(f"mlp{i}.fc1", fc1, fc1 + 5120, "e4m3_b", (160, 32), f"phase {21 + 2 * i}", "n_major"),
            Region(f"mlp{i}.fc1_bias", b1, b1 + 64, "f16_vec", (32,), f"phase {21 + 2 * i} C"),
            Region(f"mlp{i}.fc2", fc2, fc2 + 5120, "e4m3_b", (32, 160), f"phase {22 + 2 * i}", "k_major"),
        ]
        if i == 0:
            regs.append(Region("mlp_out_bias", 232_448, 232_768, "f16_vec", (160,), "phase 22 C (E21: + residual)"))
    regs += [
        Region("head_out", 428_544, 431_104, "e4m3_b", (160, 16), "phase 61", "n_major"),
        Region("head_out_bias", 431_104, 431_136, "f16_vec", (16,), "phase 61 C"),
    ]
    regs.sort(key=lambda r: r.start)
    return tuple(regs)


def region(name: str) -> Region:
    """The weight-image region called `name` (see `weight_map()`)."""
    for r in weight_map():
        if r.name == name:
            return r
    raise KeyError(name)
