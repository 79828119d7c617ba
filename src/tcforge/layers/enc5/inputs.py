"""`Inputs`: everything of one enc5 launch besides the weights: extents, block origins, the e4m3 input arena and
the texture.

Assumed input format (assumption `input_format=arena`): the layout E60 writes, 5 planes × ey × ex × 32 bytes; plane
p holds
channels 32p..32p+31 of token (x, y) at byte p·(32·ex·ey) + 32·(ex·y + x) + b, b in mma k order (`input_record_order`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.descriptor import check_extents
from tcforge.layers.enc5.layout import CHANNELS, k_permutation
from tcforge.numerics.codecs import f32_to_e4m3_satfinite

PLANES = 5


def record_channel_order(order: str) -> np.ndarray:
    """Channel (0..159) stored at each of a token's 160 record bytes (plane-major), for record order "pack" or
    "natural"."""
    if order == "pack":
        return k_permutation(CHANNELS)
    if order == "natural":
        return np.arange(CHANNELS)
    raise TcforgeError(f"record order must be 'pack' or 'natural', got {order!r}")


def arena_to_features(arena: np.ndarray, ex: int, ey: int, order: str = "pack") -> np.ndarray:
    """Decode a 5-plane arena (uint8, 5·ey·ex·32) to e4m3 codes (ey, ex, 160) in logical channel order."""
    planes = np.asarray(arena, dtype=np.uint8).reshape(PLANES, ey, ex, 32)
    rec = planes.transpose(1, 2, 0, 3).reshape(ey, ex, CHANNELS)
    out = np.empty_like(rec)
    out[..., record_channel_order(order)] = rec
    return out


def features_to_arena(codes: np.ndarray, order: str = "pack") -> np.ndarray:
    """Encode e4m3 codes (ey, ex, 160) in logical channel order into the 5-plane arena layout (flat uint8)."""
    codes = np.asarray(codes, dtype=np.uint8)
    ey, ex, _ = codes.shape
    rec = codes[..., record_channel_order(order)]
    return np.ascontiguousarray(rec.reshape(ey, ex, PLANES, 32).transpose(2, 0, 1, 3)).reshape(-1)


@dataclass(frozen=True, eq=False)
class Inputs:
    """Extents (ex, ey) in tokens, origin offsets (ox, oy), the input arena (uint8) and the RGBA16F texture (uint16
    bits)."""

    ex: int
    ey: int
    input: np.ndarray
    texture: np.ndarray
    ox: int = 0
    oy: int = 0

    def __post_init__(self) -> None:
        check_extents(self.ex, self.ey)
        for name, v in (("ox", self.ox), ("oy", self.oy)):
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 0xFFFF:
                raise TcforgeError(f"origin offset {name} must be an integer in [0, 65535] (u16), got {v!r}")
        inp = self.input
        if not isinstance(inp, np.ndarray) or inp.dtype != np.uint8:
            raise TcforgeError(f"input: expected a uint8 numpy array of e4m3 codes, got {_describe(inp)}")
        want = PLANES * self.ey * self.ex * 32
        if inp.size != want:
            raise TcforgeError(
                f"input: expected {want} bytes (5 planes × ey={self.ey} × ex={self.ex} × 32), got {inp.size}")
        tex = self.texture
        if not isinstance(tex, np.ndarray) or tex.dtype != np.uint16:
            raise TcforgeError(f"texture: expected a uint16 numpy array of f16 bits, got {_describe(tex)}")
        if tex.shape != (self.ey, self.ex, 4):
            raise TcforgeError(f"texture: expected RGBA16F shape (ey, ex, 4) = ({self.ey}, {self.ex}, 4), "
                               f"got {tex.shape}")
        object.__setattr__(self, "input", np.ascontiguousarray(inp).reshape(-1))

    @property
    def extent(self) -> tuple[int, int]:
        """(ex, ey)."""
        return self.ex, self.ey

    def features(self, order: str = "pack") -> np.ndarray:
        """The input as e4m3 codes (ey, ex, 160), logical channel order."""
        return arena_to_features(self.input, self.ex, self.ey, order)

    @classmethod
    def from_features(cls, codes: np.ndarray, texture: np.ndarray, *, ox: int = 0, oy: int = 0,
                      order: str = "pack") -> Inputs:
        """Build from e4m3 codes (ey, ex, 160) in logical channel order and a (ey, ex, 4) f16 texture."""
        codes = np.asarray(codes)
        if codes.dtype != np.uint8 or codes.ndim != 3 or codes.shape[2] != CHANNELS:
            raise TcforgeError(f"features: expected uint8 e4m3 codes of shape (ey, ex, 160), got {_describe(codes)}")
        ey, ex, _ = codes.shape
        return cls(ex, ey, features_to_arena(codes, order), texture, ox, oy)

    @classmethod
    def synthetic(cls, extent: tuple[int, int] = (40, 23), seed: int = 0, *, ox: int = 0, oy: int = 0) -> Inputs:
        """Deterministic inputs: N(0,1) e4m3 features with some spatial structure and a smooth RGB texture in [0, 1]."""
        ex, ey = extent
        check_extents(ex, ey)
        rng = np.random.default_rng(seed)
        yy, xx = np.mgrid[0:ey, 0:ex].astype(np.float32)
        freq = rng.uniform(0.1, 0.6, size=(2, CHANNELS)).astype(np.float32)
        phase = rng.uniform(0, 2 * np.pi, size=CHANNELS).astype(np.float32)
        smooth = np.sin(xx[..., None] * freq[0] + yy[..., None] * freq[1] + phase)
        feats = 0.8 * smooth + 0.6 * rng.standard_normal((ey, ex, CHANNELS)).astype(np.float32)
        codes = f32_to_e4m3_satfinite(feats)  # |feats| stays far below 448: round to nearest even alone
        u = xx / max(ex - 1, 1)
        v = yy / max(ey - 1, 1)
        rgb = np.stack([u, v, 0.5 + 0.5 * np.sin(6.0 * u + 4.0 * v)], axis=-1)
        rgb = np.clip(rgb + 0.05 * rng.standard_normal(rgb.shape).astype(np.float32), 0, 1)
        tex = np.concatenate([rgb, np.ones((ey, ex, 1), np.float32)], axis=-1).astype(np.float16).view(np.uint16)
        return cls.from_features(codes, tex, ox=ox, oy=oy)


def _describe(x: object) -> str:
    if isinstance(x, np.ndarray):
        return f"{x.dtype} array of shape {x.shape}"
    return type(x).__name__
