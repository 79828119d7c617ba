"""Helpers of the numerics tests: committed sample copies, published vectors as tiles, random tiles per input family."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "numerics" / "shared"
FAMILIES = {
    0: "any finite code, random finite C",
    1: "normal-like values, cancellation",
    2: "large values, f16 overflow",
    3: "tiny values, subnormal results",
    4: "random codes incl. NaN, C in {+-0, +-inf, NaN, +-1}",
    5: "exact cancellation, C = +-0",
    6: "any finite code with many zeros, C anything finite",
    7: "moderate values onto large C (ties, sticky bits)",
    8: "any bit patterns at all (a, b any byte, c any 16 bits)",
}


def load_published(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A published dot-product file as whole tiles: row 0 of A, column 0 of B, C[0, 0]; returns a, b, c, d[0, 0]."""
    z = np.load(path)
    n = z["a"].shape[0]
    a = np.zeros((n, 16, 32), np.uint8)
    b = np.zeros((n, 32, 8), np.uint8)
    c = np.zeros((n, 16, 8), np.uint16)
    a[:, 0, :] = z["a"].astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    b[:, :, 0] = z["b"].astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    c[:, 0, 0] = z["c_f16"]
    return a, b, c, z["d_f16"]


def _codes(rng: np.random.Generator, shape: tuple[int, ...], exp_lo: int, exp_hi: int) -> np.ndarray:
    """Finite e4m3 codes with exponent fields in [exp_lo, exp_hi] and random sign and mantissa."""
    ef = rng.integers(exp_lo, exp_hi + 1, shape)
    code = (rng.integers(0, 2, shape) << 7) | (ef << 3) | rng.integers(0, 8, shape)
    code = np.where((code & 0x7F) == 0x7F, code - 1, code)
    return code.astype(np.uint8)


def _f16(rng: np.random.Generator, shape: tuple[int, ...], exp_lo: int, exp_hi: int) -> np.ndarray:
    """Finite f16 bits with exponent fields in [exp_lo, exp_hi], random sign and fraction."""
    ef = rng.integers(exp_lo, exp_hi + 1, shape)
    return ((rng.integers(0, 2, shape) << 15) | (ef << 10) | rng.integers(0, 1024, shape)).astype(np.uint16)


def family_tiles(kind: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n random tiles (a, b, c) of one input family (see FAMILIES)."""
    rng = np.random.default_rng([kind, seed])
    sa, sb, sc = (n, 16, 32), (n, 32, 8), (n, 16, 8)
    if kind == 0:
        a, b, c = _codes(rng, sa, 0, 15), _codes(rng, sb, 0, 15), _f16(rng, sc, 0, 30)
    elif kind == 1:
        a, b, c = _codes(rng, sa, 5, 9), _codes(rng, sb, 5, 9), _f16(rng, sc, 12, 18)
    elif kind == 2:
        a, b, c = _codes(rng, sa, 12, 15), _codes(rng, sb, 12, 15), _f16(rng, sc, 24, 30)
    elif kind == 3:
        a, b, c = _codes(rng, sa, 0, 0), _codes(rng, sb, 0, 1), _f16(rng, sc, 0, 1)
        a[rng.random(sa) < 0.5] = 0
    elif kind == 4:
        a = rng.integers(0, 256, sa).astype(np.uint8)
        b = rng.integers(0, 256, sb).astype(np.uint8)
        a[rng.random(sa) < 0.97] &= 0xFE  # keep NaN codes rare enough that some outputs stay finite
        b[rng.random(sb) < 0.97] &= 0xFE
        c = rng.choice(np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0xBC00], np.uint16), sc)
    elif kind == 5:
        a, b = _codes(rng, sa, 0, 15), _codes(rng, sb, 0, 15)
        a[:, :, 16:] = a[:, :, :16]
        b[:, 16:, :] = b[:, :16, :] ^ 0x80
        c = rng.choice(np.array([0, 0x8000], np.uint16), sc)
    elif kind == 6:
        a, b, c = _codes(rng, sa, 0, 15), _codes(rng, sb, 0, 15), _f16(rng, sc, 0, 30)
        zero = rng.random(sa) < 0.3
        a[zero] = 0
    elif kind == 7:
        a, b, c = _codes(rng, sa, 4, 8), _codes(rng, sb, 4, 8), _f16(rng, sc, 20, 28)
    elif kind == 8:
        a = rng.integers(0, 256, sa).astype(np.uint8)
        b = rng.integers(0, 256, sb).astype(np.uint8)
        c = rng.integers(0, 65536, sc).astype(np.uint16)
    else:
        raise ValueError(f"kind: unknown family {kind}")
    return a, b, c


def load_tiles(path: Path) -> dict[str, np.ndarray]:
    """A tile sample file as a dict of arrays."""
    z = np.load(path)
    return {k: z[k] for k in z.files}


def mismatch_message(got: np.ndarray, want: np.ndarray, what: str) -> str:
    """The assertion message: mismatch count and the first few failing indices with their bits."""
    bad = np.argwhere(got != want)
    first = ", ".join(f"{tuple(int(v) for v in i)}: got {int(got[tuple(i)]):#06x} want {int(want[tuple(i)]):#06x}"
                      for i in bad[:5])
    return f"{what}: {len(bad)} mismatches of {got.size}; first: {first}"
