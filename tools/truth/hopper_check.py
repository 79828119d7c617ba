#!/usr/bin/env python3
"""Independent float64 check of the Hopper mma model against the committed H200 tile digests.

`python3 -m tools.truth.hopper_check [--tiles N]` (about 2 minutes for all 9 x 32768 tiles on one core). Model of
each `HMMA.16816.F16` step (16 products plus the accumulator): a product's exponent is ea + eb (floor(log2|.|) of the
two f16 operands), the accumulator's is floor(log2|acc|); every addend is truncated toward zero to a multiple of
2^(M - 25), M the largest of those exponents; the exact sum is rounded to nearest-even f16. Steps: k % 4 in {0, 1}
onto +0, then k % 4 in {2, 3} onto that result; then HADD2 adds C (f16, nearest-even). NaN results are 0x7fff.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np

from tcforge.numerics import truth as T

REPO = Path(__file__).resolve().parents[2]

VALUES = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
_NZ = (VALUES != 0) & np.isfinite(VALUES)
EXPONENTS = np.where(_NZ, np.floor(np.log2(np.where(_NZ, np.abs(VALUES), 1.0))), -1000.0)
FRAC_BITS = 25


def _hmma(prod: np.ndarray, prod_exp: np.ndarray, acc: np.ndarray) -> np.ndarray:
    nz = (acc != 0) & np.isfinite(acc)
    acc_exp = np.where(nz, np.floor(np.log2(np.where(nz, np.abs(acc), 1.0))), -1000.0)
    top = np.maximum(np.where(prod != 0, prod_exp, -1000.0).max(axis=-1), acc_exp)
    q = np.ldexp(1.0, (top - FRAC_BITS).astype(np.int64))
    s = (np.trunc(prod / q[..., None]) * q[..., None]).sum(axis=-1) + np.trunc(acc / q) * q
    return s.astype(np.float16).astype(np.float64)


def hopper_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The model above on (n,16,32) / (n,32,8) / (n,16,8) bit patterns; returns (n,16,8) uint16."""
    bt = np.transpose(b, (0, 2, 1))
    prod = VALUES[a][:, :, None, :] * VALUES[bt][:, None, :, :]
    prod_exp = EXPONENTS[a][:, :, None, :] + EXPONENTS[bt][:, None, :, :]
    k = np.arange(32)
    acc = np.zeros(prod.shape[:3])
    for half in ((0, 1), (2, 3)):
        sel = np.isin(k % 4, half)
        acc = _hmma(prod[..., sel], prod_exp[..., sel], acc)
    d = (acc + c.view(np.float16).astype(np.float64)).astype(np.float16)
    return np.where(np.isnan(d), np.uint16(0x7FFF), d.view(np.uint16))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tiles", type=int, default=None, help="tiles per family (default: all committed)")
    args = p.parse_args(argv)
    truth = T.load_truth("h200_mma_truth", REPO / "tests" / "data" / "numerics")
    t0, total = time.time(), 0
    with np.errstate(all="ignore"):
        for kind in sorted(T.MMA_KINDS):
            digests = truth[f"k{kind}_digest"][: args.tiles]
            bad = []
            for start in range(0, digests.size, 4096):
                n = min(4096, digests.size - start)
                got = T.tile_digests(hopper_mma(*T.mma_tile_inputs(kind, T.TRUTH_SEED, start, n)))
                bad.extend((np.flatnonzero(got != digests[start : start + n]) + start).tolist())
            total += len(bad)
            print(f"kind {kind}: {len(bad)} of {digests.size} tiles differ {bad[:5]}  [{time.time() - t0:.0f} s]")
    print(f"total mismatching tiles: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
