"""`WeightImage`: the 431,136-byte prepared weight image of enc5, with named logical views and a synthetic generator."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.layout import (
    CHANNELS,
    HEAD_DIM,
    HIDDEN_CHUNKS,
    IMAGE_BYTES,
    N_HEADS,
    Region,
    b_matrix_offsets,
    region,
    score_bias_offsets,
    weight_map,
)
from tcforge.numerics.codecs import f32_to_e4m3_satfinite

SHORT_IMAGE_BYTES = 431_124  # the analysis's extent (largest immediate + 4), accepted only with image_size="pad_431124"


def _f16_bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)


class WeightImage:
    """The prepared weight image W (param+40): raw bytes plus decoded views of its parts in logical (k, n) order."""

    def __init__(self, data: bytes | bytearray | np.ndarray) -> None:
        arr = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data
        if arr.dtype != np.uint8 or arr.ndim != 1:
            raise TcforgeError(f"weights: expected a 1-D uint8 array or bytes, got {arr.dtype} with shape {arr.shape}")
        if arr.size != IMAGE_BYTES:
            raise TcforgeError(f"weights: expected {IMAGE_BYTES} bytes (the enc5 weight image), got {arr.size}")
        self._data = np.array(arr, dtype=np.uint8, copy=True)
        self._data.setflags(write=False)

    # construction ---------------------------------------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes | bytearray, *, image_size: str = "431136") -> WeightImage:
        """Wrap raw bytes; the size must be 431,136 (or 431,124 with image_size="pad_431124", zero-padded)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TcforgeError(f"weights: expected bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) == SHORT_IMAGE_BYTES and image_size == "pad_431124":
            data = data + bytes(IMAGE_BYTES - SHORT_IMAGE_BYTES)
        if len(data) != IMAGE_BYTES:
            short = len(data) == SHORT_IMAGE_BYTES
            hint = " (431,124-byte images need --assume image_size=pad_431124)" if short else ""
            raise TcforgeError(f"weights: expected {IMAGE_BYTES} bytes (the enc5 weight image), got {len(data)}{hint}")
        return cls(np.frombuffer(data, dtype=np.uint8))

    @classmethod
    def from_file(cls, path: str | Path, *, image_size: str = "431136") -> WeightImage:
        """Read a weight image file (raw bytes)."""
        p = Path(path)
        if not p.is_file():
            raise TcforgeError(f"weights: no such file {str(p)!r}")
        return cls.from_bytes(p.read_bytes(), image_size=image_size)

    @classmethod
    def synthetic(cls, seed: int = 0) -> WeightImage:
        """A deterministic image with realistic magnitudes: activations stay O(1) through all 61 phases."""
        rng = np.random.default_rng(seed)
        img = np.zeros(IMAGE_BYTES, dtype=np.uint8)
        w = cls.__new__(cls)
        w._data = img

        def normal(shape: tuple[int, ...], std: float) -> np.ndarray:
            return rng.standard_normal(shape).astype(np.float32) * np.float32(std)

        gain = np.sqrt(CHANNELS)  # the norm has no 1/N: a gain ~ sqrt(160) restores unit scale
        w._put_vec("prologue_gain", gain * (1 + normal((CHANNELS,), 0.1)))
        for h in range(N_HEADS):
            w._put_b(f"head{h}.q", normal((CHANNELS, HEAD_DIM), 0.7 / np.sqrt(CHANNELS)))
            w._put_b(f"head{h}.v", normal((CHANNELS, HEAD_DIM), 1.0 / np.sqrt(CHANNELS)))
            w._put_score_bias(h, normal((64, 96), 1.5))
            w._put_b(f"head{h}.wo", normal((HEAD_DIM, CHANNELS), 0.6 / np.sqrt(N_HEADS * HEAD_DIM)))
        w._put_vec("proj_bias", normal((CHANNELS,), 0.1))
        w._put_vec("mlp_gain", gain * (1 + normal((CHANNELS,), 0.1)))
        for i in range(HIDDEN_CHUNKS):
            w._put_b(f"mlp{i}.fc1", normal((CHANNELS, 32), 1.2 / np.sqrt(CHANNELS)))
            w._put_vec(f"mlp{i}.fc1_bias", normal((32,), 0.2))
            w._put_b(f"mlp{i}.fc2", normal((32, CHANNELS), 0.9 / np.sqrt(32 * HIDDEN_CHUNKS)))
        w._put_vec("mlp_out_bias", normal((CHANNELS,), 0.1))
        w._put_b("head_out", normal((CHANNELS, 16), 1.5 / np.sqrt(CHANNELS)))
        w._put_vec("head_out_bias", normal((16,), 0.3))
        img.setflags(write=False)
        return w

    # raw access -----------------------------------------------------------------------------------------------------
    def __bytes__(self) -> bytes:
        return self._data.tobytes()

    def __len__(self) -> int:
        return IMAGE_BYTES

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WeightImage) and bool(np.array_equal(self._data, other._data))

    def __hash__(self) -> int:
        return hash(self._data.tobytes())

    @property
    def array(self) -> np.ndarray:
        """The image as a read-only uint8 array."""
        return self._data

    def region_bytes(self, name: str) -> np.ndarray:
        """The raw bytes of the named region (see `layout.weight_map()`)."""
        r = self._region(name)
        return self._data[r.start : r.end]

    # logical views ----------------------------------------------------------------------------------------------------
    def b_matrix(self, name: str) -> np.ndarray:
        """Logical K×N e4m3 codes of a B region (k = logical input channel, n = output column)."""
        r = self._region(name)
        if r.kind != "e4m3_b":
            raise TcforgeError(f"region {name!r} is not a B matrix (it is {r.kind})")
        k, n = r.shape
        return self._data[r.start + b_matrix_offsets(k, n, r.tile_order)]

    def vector(self, name: str, *, base: int | None = None) -> np.ndarray:
        """A per-column f16 table as uint16 bits (natural order: entry c at base + 2c)."""
        r = self._region(name)
        if r.kind != "f16_vec":
            raise TcforgeError(f"region {name!r} is not an f16 vector (it is {r.kind})")
        start = r.start if base is None else base
        return self._data[start : start + 2 * r.shape[0]].view("<u2").astype(np.uint16)

    def score_bias(self, h: int) -> np.ndarray:
        """Head h's 64×96 f16 score bias (uint16 bits), query row × key column."""
        r = self._region(f"head{h}.score_bias")
        off = r.start + score_bias_offsets()
        lo = self._data[off].astype(np.uint16)
        hi = self._data[off + 1].astype(np.uint16)
        return lo | (hi << 8)

    def q(self, h: int) -> np.ndarray:
        """Head h's Q projection (160×32 e4m3 codes); the same matrix gives the keys (position-only attention)."""
        return self.b_matrix(f"head{h}.q")

    def v(self, h: int) -> np.ndarray:
        """Head h's V projection (160×32)."""
        return self.b_matrix(f"head{h}.v")

    def wo(self, h: int) -> np.ndarray:
        """Head h's slice of the output projection (32×160)."""
        return self.b_matrix(f"head{h}.wo")

    def fc1(self, i: int) -> np.ndarray:
        """MLP chunk i's first layer (160×32)."""
        return self.b_matrix(f"mlp{i}.fc1")

    def fc1_bias(self, i: int) -> np.ndarray:
        """MLP chunk i's first-layer bias (32 f16)."""
        return self.vector(f"mlp{i}.fc1_bias")

    def fc2(self, i: int) -> np.ndarray:
        """MLP chunk i's second layer (32×160)."""
        return self.b_matrix(f"mlp{i}.fc2")

    def head_out(self) -> np.ndarray:
        """The P61 head (160×16)."""
        return self.b_matrix("head_out")

    def prologue_gain(self) -> np.ndarray:
        """The prologue's RMS-norm gain (160 f16, W+0)."""
        return self.vector("prologue_gain")

    def proj_bias(self) -> np.ndarray:
        """The output projection's column table added to the residual (phase 13's C)."""
        return self.vector("proj_bias")

    def mlp_gain(self) -> np.ndarray:
        """E20's RMS-norm gain (160 f16)."""
        return self.vector("mlp_gain")

    def mlp_out_bias(self) -> np.ndarray:
        """The MLP output's column table added to D20 (phase 22's C)."""
        return self.vector("mlp_out_bias")

    def head_bias(self) -> np.ndarray:
        """The P61 head's bias (16 f16)."""
        return self.vector("head_out_bias")

    def summary(self) -> list[tuple[str, int, int, str]]:
        """(name, start, end, read_by) for every region."""
        return [(r.name, r.start, r.end, r.read_by) for r in weight_map()]

    # encoding helpers (synthetic) -------------------------------------------------------------------------------------
    @staticmethod
    def _region(name: str) -> Region:
        try:
            return region(name)
        except KeyError:
            raise TcforgeError(f"unknown weight-image region {name!r}") from None

    def _put_b(self, name: str, values: np.ndarray) -> None:
        r = self._region(name)
        k, n = r.shape
        self._data[r.start + b_matrix_offsets(k, n, r.tile_order)] = f32_to_e4m3_satfinite(values)

    def _put_vec(self, name: str, values: np.ndarray) -> None:
        r = self._region(name)
        self._data[r.start : r.end] = _f16_bits(values).astype("<u2").view(np.uint8)

    def _put_score_bias(self, h: int, values: np.ndarray) -> None:
        r = self._region(f"head{h}.score_bias")
        bits = _f16_bits(values)
        off = r.start + score_bias_offsets()
        self._data[off] = (bits & 0xFF).astype(np.uint8)
        self._data[off + 1] = (bits >> 8).astype(np.uint8)
