"""A tiny dependency-free PNG writer (zlib only) for 8-bit grey, RGB and RGBA images, and a float-to-8-bit helper."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from tcforge.errors import TcforgeError

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPE = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type (grey, RGB, RGBA)


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 image shaped (H, W), (H, W, 1), (H, W, 3) or (H, W, 4)."""
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise TcforgeError(f"image: expected uint8 pixels, got {img.dtype}")
    if img.ndim == 2:
        img = img[..., None]
    if img.ndim != 3 or img.shape[2] not in _COLOUR_TYPE or img.shape[0] < 1 or img.shape[1] < 1:
        raise TcforgeError(f"image: expected shape (H, W) or (H, W, 1|3|4) with H, W >= 1, got {np.shape(image)}")
    h, w, c = img.shape
    header = struct.pack(">IIBBBBB", w, h, 8, _COLOUR_TYPE[c], 0, 0, 0)
    rows = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * c)], axis=1)  # filter type 0 per row
    idat = _chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
    return _SIGNATURE + _chunk(b"IHDR", header) + idat + _chunk(b"IEND", b"")


def write_png(path: str | Path, image: np.ndarray) -> Path:
    """Write `image` (see `encode_png`) to `path`; returns the path."""
    p = Path(path)
    p.write_bytes(encode_png(image))
    return p


def to_uint8(x: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Map finite floats linearly from [lo, hi] (default: the data's range) to 0..255; NaN/inf become 0."""
    v = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(v)
    lo = float(np.min(v[finite])) if lo is None and finite.any() else (0.0 if lo is None else lo)
    hi = float(np.max(v[finite])) if hi is None and finite.any() else (1.0 if hi is None else hi)
    scale = 255.0 / (hi - lo) if hi > lo else 0.0
    out = np.clip(np.round((np.where(finite, v, lo) - lo) * scale), 0, 255)
    return out.astype(np.uint8)


def upscale(image: np.ndarray, factor: int) -> np.ndarray:
    """Nearest-neighbour enlargement by an integer factor (token grids are small)."""
    if factor < 1:
        raise TcforgeError(f"factor must be >= 1, got {factor}")
    return np.repeat(np.repeat(np.asarray(image), factor, axis=0), factor, axis=1)
