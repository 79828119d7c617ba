"""Tile-by-tile, step-by-step mma chains over logical matrices: the only place enc5 calls the numerics mma.

A logical operand has k in channel order; `k_permutation` puts it in the order the mma consumes, 32-deep step by
step, and
every step's D is rounded to f16 by the instruction itself (that is what a K > 32 chain does on the hardware).
"""

from __future__ import annotations

import numpy as np

from tcforge import numerics as nx
from tcforge.layers.enc5.layout import k_permutation


def to_mma_order(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A (..., M, K) and B (..., K, N) in logical k order -> the same with k in mma consumption order."""
    perm = k_permutation(a.shape[-1])
    return a[..., perm], b[..., perm, :]


def mma_steps(a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str, *, logical: bool = True) -> list[np.ndarray]:
    """Run D = A·B + C as K/32 chained m16n8k32 steps; returns the D (..., M, N) after every step.

    a: uint8 (..., M, K), b: uint8 (..., K, N), c: uint16 (..., M, N); leading dims broadcast. With logical=True the k
    axes are in channel order and are permuted to mma order first.
    """
    if logical:
        a, b = to_mma_order(a, b)
    *la, m, k = a.shape
    *lb, k2, n = b.shape
    *lc, mc, nc = c.shape
    if k != k2 or (mc, nc) != (m, n) or m % 16 or n % 8 or k % 32:
        raise ValueError(f"mma_steps: shapes A {a.shape}, B {b.shape}, C {c.shape} do not chain")
    lead = np.broadcast_shapes(tuple(la), tuple(lb), tuple(lc))
    mt, nt, steps = m // 16, n // 8, k // 32
    full = (*lead, mt, nt)
    # A tiles: (..., mt, 16, S, 32) -> (..., S, mt, 1, 16, 32)
    at = np.moveaxis(a.reshape(*la, mt, 16, steps, 32), -2, len(la))[..., :, None, :, :]
    bt = np.moveaxis(b.reshape(*lb, steps, 32, nt, 8), -2, -3)[..., None, :, :, :]  # (..., S, 1, nt, 32, 8)
    acc = np.broadcast_to(np.swapaxes(c.reshape(*lc, mt, 16, nt, 8), -3, -2), (*full, 16, 8))
    out: list[np.ndarray] = []
    nlead = len(lead)
    for s in range(steps):
        a_s = np.broadcast_to(_take_step(at, s, len(la), nlead), (*full, 16, 32))
        b_s = np.broadcast_to(_take_step(bt, s, len(lb), nlead), (*full, 32, 8))
        acc = nx.mma_m16n8k32_e4m3_f16(np.ascontiguousarray(a_s), np.ascontiguousarray(b_s),
                                       np.ascontiguousarray(acc), model)
        out.append(np.swapaxes(acc, -3, -2).reshape(*lead, m, n))
    return out


def _take_step(x: np.ndarray, s: int, nl: int, nlead: int) -> np.ndarray:
    """Select step s (the axis right after the operand's own leading dims) and left-pad leading dims to nlead."""
    y = x[(slice(None),) * nl + (s,)]
    return y.reshape((1,) * (nlead - nl) + y.shape)
