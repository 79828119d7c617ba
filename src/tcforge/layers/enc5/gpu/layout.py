"""Layouts the native enc5 kernel shares with its Python side: the parameter block and the debug-stage dump."""

from __future__ import annotations

from functools import lru_cache

DEBUG_PARTS = (  # name, phase, per-head (8 warps) or per-row-tile (4 warps), logical shape per head / per window
    ("d9", 9, "head", (96, 32)),
    ("d10", 10, "head", (96, 32)),
    ("s11", 11, "head", (64, 96)),
    ("o12", 12, "head", (64, 32)),
    ("d20", 20, "rows", (64, 160)),
    ("d21", 21, "rows", (64, 32)),
    ("d22", 22, "rows", (64, 160)),
    ("d60", 60, "rows", (64, 160)),
    ("d61", 61, "rows", (64, 16)),
)


@lru_cache(maxsize=1)
def debug_layout() -> dict:
    """Offsets (in f16 elements) of each debug part inside one window's block; `total` is the block size."""
    parts = {}
    off = 0
    for name, phase, kind, shape in DEBUG_PARTS:
        n = shape[0] * shape[1] * (8 if kind == "head" else 1)
        parts[name] = (phase, kind, off, shape)
        off += n
    return {"parts": parts, "total": off}
