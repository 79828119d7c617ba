"""Tensor maps: the emulator's 128-byte stand-in for a CUtensorMap (tiled, or im2col) and the global elements a TMA
copy moves, in shared-memory order.

A tiled map's box is a dense block of the tensor (`cuTensorMapEncodeTiled`). An im2col map (`cuTensorMapEncodeIm2col`,
tensors of rank 3-5 laid out C, W, H, D, N innermost first) loads `pixels` rows of `channels` elements: the pixels
are visited from the instruction's (w, h, d, n) in W, then H, then D order inside the bounding box
[lower, dim - 1 + upper] of each spatial dimension (inclusive), stepping by the traversal strides and wrapping to the
box's lower corner, past its last row into the next image n + 1; each visited pixel is read at its position plus the
instruction's im2col offsets (the filter tap), channels c .. c + channels - 1. Out-of-bounds elements load as zeros
(or NaN: `fill`) and are not stored."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcforge.ptx.emulate.machine import EmulationError

MAGIC = 0x4D46_4354  # "TCFM"
_DTYPES = {"u8": 1, "u16": 2, "u32": 4, "s32": 4, "u64": 8, "s64": 8, "f16": 2, "f32": 4, "f64": 8, "bf16": 2,
           "f32_ftz": 4, "tf32": 4, "tf32_ftz": 4, "e4m3": 1, "e5m2": 1}
DTYPE_CODES = list(_DTYPES)
# the encoding's fields: (byte offset, bytes) of one entry; ranked fields repeat per dimension (strides: dims 1..)
MAP_LAYOUT = {"global_address": (0, 8), "magic": (8, 4), "rank": (12, 1), "elemtype": (13, 1), "swizzle_mode": (14, 1),
              "fill_mode": (15, 1), "global_dim": (16, 8), "box_dim": (56, 4), "global_stride": (80, 8),
              "element_stride": (112, 1), "interleave_layout": (117, 1)}
IM2COL_AT, _CORNERS_AT = 118, 64  # im2col: byte 118 is 1; box_dim 0 / 1 hold channels / pixels, then 3 + 3 s16 corners
# the NaN an out-of-bounds element loads as under fill=nan: the 16-bit pattern 0x7FF7 repeated over the element (the
# H100 corpus pins f16 and f32, tiled and im2col boxes; bf16, tf32 and f64 follow the pattern, assumed)
NAN_FILL = {"f16": 0x7FF7, "bf16": 0x7FF7, "f32": 0x7FF77FF7, "f32_ftz": 0x7FF77FF7, "tf32": 0x7FF77FF7,
            "tf32_ftz": 0x7FF77FF7, "f64": 0x7FF77FF77FF77FF7}
# im2col by rank: the bits of a bounding-box corner (signed) and of an instruction's im2col offset (unsigned)
IM2COL_BITS = {3: 16, 4: 8, 5: 5}


@dataclass(frozen=True)
class TensorMap:
    """A tensor map as the driver's encoders take it: `buffer` (a global buffer's name in the emulate arguments),
    element type, `dims` innermost first, byte `strides` of dims 1.., `swizzle` 0 / 32 / 64 / 128 bytes, `fill` of
    out-of-bounds loads. Tiled: `box` innermost first. Im2col (`lower` given): `box` = (channels per pixel, pixels per
    column), `lower` / `upper` the bounding box's corners and `traversal` its strides, one per spatial dimension
    (W first), as `cuTensorMapEncodeIm2col`'s pixelBox corners and elementStrides take them."""

    buffer: str
    dtype: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    swizzle: int = 0
    fill: str = "zero"  # out-of-bounds loads: "zero", or "nan" (float types; the driver's NAN_REQUEST_ZERO_FMA)
    lower: tuple[int, ...] = ()
    upper: tuple[int, ...] = ()
    traversal: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        rank = len(self.dims)
        name = f"tensor map of {self.buffer!r}"
        if self.dtype not in _DTYPES:
            raise EmulationError(f"{name}: element type {self.dtype!r} is not one of {', '.join(_DTYPES)}")
        if (self.upper or self.traversal) and not self.im2col:
            raise EmulationError(f"{name}: upper / traversal belong to an im2col map (give lower too)")
        boxes = 2 if self.im2col else rank  # im2col: (channels, pixels)
        if not 1 <= rank <= 5 or len(self.box) != boxes or len(self.strides) != rank - 1:
            raise EmulationError(f"{name}: {rank} dims need {boxes} box extents and {rank - 1} strides")
        if any(d < 1 for d in self.dims) or (not self.im2col and any(not 1 <= b <= 256 for b in self.box)):
            raise EmulationError(f"{name}: dims must be positive and box extents 1..256")
        if self.im2col:
            self._check_im2col(name)
        es = _DTYPES[self.dtype]
        if any(s % 16 for s in self.strides):
            raise EmulationError(f"{name}: strides {self.strides} must be multiples of 16")
        if self.box[0] * es % 16:
            raise EmulationError(f"{name}: the box's inner extent is {self.box[0] * es} bytes, not a multiple of 16")
        if self.fill not in ("zero", "nan") or (self.fill == "nan" and self.dtype not in NAN_FILL):
            raise EmulationError(f"{name}: fill {self.fill!r} is not zero, or nan for a float type "
                                 f"({', '.join(NAN_FILL)})")
        if self.swizzle not in (0, 32, 64, 128):
            raise EmulationError(f"{name}: swizzle {self.swizzle} is not 0, 32, 64 or 128")
        if self.swizzle and self.box[0] * es != self.swizzle:
            raise EmulationError(f"{name}: a {self.swizzle}-byte swizzle with a {self.box[0] * es}-byte inner box "
                                 "extent is not emulated (only equal spans)")

    def _check_im2col(self, name: str) -> None:
        rank, spatial = len(self.dims), len(self.dims) - 2
        if rank < 3:
            raise EmulationError(f"{name}: an im2col map has rank 3..5 (C, W, [H, [D,]] N), not {rank}")
        traversal = self.traversal or (1,) * spatial
        if len(self.lower) != spatial or len(self.upper) != spatial or len(traversal) != spatial:
            raise EmulationError(f"{name}: a rank-{rank} im2col map needs {spatial} lower and upper corners (and "
                                 "traversal strides), W first")
        half = 1 << (IM2COL_BITS[rank] - 1)
        if any(not -half <= v < half for v in self.lower + self.upper):
            raise EmulationError(f"{name}: bounding-box corners {self.lower} / {self.upper} leave the rank-{rank} "
                                 f"range {-half}..{half - 1}")
        if any(not 1 <= s <= 8 for s in traversal):
            raise EmulationError(f"{name}: traversal strides {traversal} must be 1..8")
        if any(d - 1 + u < lo for d, lo, u in zip(self.dims[1:-1], self.lower, self.upper, strict=True)):
            raise EmulationError(f"{name}: the bounding box [lower, dim - 1 + upper] is empty in some dimension")
        if not 1 <= self.box[0] <= 256 or not 1 <= self.box[1] <= 1024:
            raise EmulationError(f"{name}: an im2col map's box is (channels 1..256, pixels 1..1024), not {self.box}")

    @property
    def im2col(self) -> bool:
        return bool(self.lower)

    @property
    def elem_bytes(self) -> int:
        return _DTYPES[self.dtype]

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.elem_bytes

    def encode(self, base: int = 0) -> bytes:
        """The 128 bytes the kernel receives (MAP_LAYOUT): global address, magic, rank, element type, swizzle, fill,
        dims, box, strides; element strides (minus one: im2col traversal strides) and interleave zero. An im2col
        map sets byte 118 and keeps its channels, pixels and corners in the box's bytes."""
        raw = bytearray(128)
        rank = len(self.dims)
        raw[0:8] = int(base).to_bytes(8, "little")
        raw[8:12] = MAGIC.to_bytes(4, "little")
        raw[12], raw[13], raw[14] = rank, DTYPE_CODES.index(self.dtype), self.swizzle // 16
        raw[15] = self.fill == "nan"
        pad = (0,) * (5 - rank)
        raw[16:56] = np.array(tuple(self.dims) + pad, np.uint64).tobytes()
        raw[56:56 + 4 * len(self.box)] = np.array(self.box, np.uint32).tobytes()
        raw[80:112] = np.array(tuple(self.strides) + pad, np.uint64).tobytes()
        if self.im2col:
            raw[IM2COL_AT] = 1
            pad3 = (0,) * (5 - rank)  # three corners each
            raw[_CORNERS_AT:_CORNERS_AT + 12] = np.array(self.lower + pad3 + self.upper + pad3, np.int16).tobytes()
            raw[113:113 + rank - 2] = bytes(s - 1 for s in self.traversal or (1,) * (rank - 2))
        return bytes(raw)

    @staticmethod
    def decode(raw: bytes, name: str = "?") -> tuple[TensorMap, int]:
        """(map, global address) of 128 bytes written by `encode` or edited by tensormap.replace; ValueError where
        they are no tensor map, EmulationError where the map is one the emulator does not run."""
        if len(raw) != 128 or int.from_bytes(raw[8:12], "little") != MAGIC:
            raise ValueError("not a tcforge tensor map")
        rank, im2col = raw[12], raw[IM2COL_AT] == 1
        if not 1 <= rank <= 5 or raw[13] >= len(DTYPE_CODES) or raw[14] not in (0, 2, 4, 8) or raw[15] > 1:
            raise EmulationError(f"tensor map of {name!r}: rank {rank}, element type code {raw[13]}, swizzle code "
                                 f"{raw[14]} or fill {raw[15]} is not valid")
        estr = raw[112:112 + rank]
        if (any(estr) if not im2col else estr[0] or estr[rank - 1]) or raw[117]:
            raise EmulationError(f"tensor map of {name!r}: element strides other than 1 (but an im2col map's "
                                 "traversal strides) and interleaved layouts are not emulated")
        dims = tuple(int(x) for x in np.frombuffer(raw[16:56], np.uint64)[:rank])
        strides = tuple(int(x) for x in np.frombuffer(raw[80:112], np.uint64)[:rank - 1])
        fields: dict = {}
        if im2col:
            box = tuple(int(x) for x in np.frombuffer(raw[56:64], np.uint32))
            corners = [int(x) for x in np.frombuffer(raw[_CORNERS_AT:_CORNERS_AT + 12], np.int16)]
            traversal = tuple(s + 1 for s in estr[1:rank - 1])
            fields = {"lower": tuple(corners[:rank - 2]), "upper": tuple(corners[3:1 + rank]),
                      "traversal": traversal if any(t != 1 for t in traversal) else ()}
        else:
            box = tuple(int(x) for x in np.frombuffer(raw[56:76], np.uint32)[:rank])
        tm = TensorMap(name, DTYPE_CODES[raw[13]], dims, strides, box, raw[14] * 16, "nan" if raw[15] else "zero",
                       **fields)
        return tm, int.from_bytes(raw[0:8], "little")

    def text(self) -> str:
        """The text form `parse` reads."""
        j = lambda t: ",".join(map(str, t))  # noqa: E731
        extra = (f" lower={j(self.lower)} upper={j(self.upper)}" if self.im2col else "") + \
            (f" traversal={j(self.traversal)}" if self.traversal else "")
        return (f"tensormap {self.buffer} {self.dtype} dims={j(self.dims)} strides={j(self.strides)} "
                f"box={j(self.box)} swizzle={self.swizzle}" + extra + (" fill=nan" if self.fill == "nan" else ""))

    @staticmethod
    def parse(text: str) -> TensorMap:
        """`tensormap BUFFER TYPE dims=D0,D1 strides=S1 box=B0,B1 [swizzle=N] [fill=nan]`, an im2col map with
        `box=CHANNELS,PIXELS lower=W,H upper=W,H [traversal=W,H]` (the CLI's .npz form)."""
        words = text.split()
        try:
            if words[0] != "tensormap" or len(words) < 5:
                raise ValueError
            kv = dict(w.split("=", 1) for w in words[3:])
            fill = kv.pop("fill", "zero")
            ints = {k: tuple(int(x) for x in v.split(",") if x) for k, v in kv.items()}
            if set(ints) - {"dims", "strides", "box", "swizzle", "lower", "upper", "traversal"}:
                raise ValueError
            args = (words[1], words[2], ints["dims"], ints.get("strides", ()), ints["box"],
                    ints.get("swizzle", (0,))[0], fill, ints.get("lower", ()), ints.get("upper", ()),
                    ints.get("traversal", ()))
        except (ValueError, KeyError, IndexError):
            raise EmulationError(f"tensor map {text!r}: expected 'tensormap BUFFER TYPE dims=D0,.. strides=S1,.. "
                                 "box=B0,.. [swizzle=0|32|64|128] [fill=nan]' (im2col: box=CHANNELS,PIXELS "
                                 "lower=W,.. upper=W,.. [traversal=W,..])") from None
        return TensorMap(*args)


def swizzled(offsets: np.ndarray, swizzle: int) -> np.ndarray:
    """Shared-memory byte addresses under a TMA swizzle: the 16-byte chunk bits 4.. XOR the bits 7.. (as many
    as the span has chunks' bits)."""
    if not swizzle:
        return offsets
    bits = {32: 1, 64: 2, 128: 3}[swizzle]
    mask = (1 << bits) - 1
    return offsets ^ (((offsets >> 7) & mask) << 4)


def im2col_pixels(tm: TensorMap, coords: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The (w, [h, [d,]] n) positions of an im2col box's pixels, in load order: the traversal from the coordinates'
    pixel through the bounding box, each visited position plus the im2col offsets. ValueError where the start lies
    outside the bounding box (the PTX ISA requires the filter's corner inside it)."""
    spatial = len(tm.dims) - 2
    lo = list(tm.lower)
    hi = [d - 1 + u for d, u in zip(tm.dims[1:-1], tm.upper, strict=True)]
    step = tm.traversal or (1,) * spatial
    pos, n = [int(c) for c in coords[1:1 + spatial]], int(coords[-1])
    if any(not a <= p <= b for a, p, b in zip(lo, pos, hi, strict=True)):
        raise ValueError(f"the im2col start {tuple(pos)} lies outside the bounding box {tuple(lo)}..{tuple(hi)} "
                         "(W first)")
    out = np.empty((tm.box[1], spatial + 1), np.int64)
    for p in range(tm.box[1]):
        out[p, :spatial], out[p, spatial] = pos, n
        i = 0
        pos[0] += step[0]
        while pos[i] > hi[i]:  # past the box's end: back to its lower corner, one step on in the next dimension
            pos[i] = lo[i]
            i += 1
            if i == spatial:
                n += 1
                break
            pos[i] += step[i]
    out[:, :spatial] += np.asarray(offsets, np.int64)
    return out


def box_elements(tm: TensorMap, base: int, coords: np.ndarray,
                 offsets: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(global addresses, in-bounds mask) of the box's elements in shared-memory order (innermost first); an im2col
    map's pixels by `im2col_pixels` (no offsets: zeros, as `.im2col_no_offs` copies take them)."""
    if tm.im2col:
        px = im2col_pixels(tm, coords, np.zeros(len(tm.dims) - 2, np.int64) if offsets is None else offsets)
        ch = np.arange(tm.box[0], dtype=np.int64) + int(coords[0])
        pos = [np.broadcast_to(ch, (len(px), len(ch))).reshape(-1)]
        pos += [np.repeat(px[:, i], len(ch)) for i in range(px.shape[1])]
    else:
        grids = np.meshgrid(*[np.arange(b, dtype=np.int64) for b in reversed(tm.box)], indexing="ij")
        pos = [g.reshape(-1) + int(c) for g, c in zip(reversed(grids), coords, strict=True)]
    ok = np.ones(pos[0].shape, bool)
    for p, d in zip(pos, tm.dims, strict=True):
        ok &= (p >= 0) & (p < d)
    addr = base + pos[0] * tm.elem_bytes
    for p, s in zip(pos[1:], tm.strides, strict=True):
        addr = addr + p * s
    return addr, ok
