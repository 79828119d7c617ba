"""Textures and surfaces through bindless handles (a `.u64` operand): `tex` (1d, 2d, 3d, a1d, a2d; float or integer
coordinates; point or linear filtering; wrap / clamp / mirror / border addressing; normalized coordinates; element
or normalized-float reads), `tld4` (one channel of the bilinear footprint's four texels), `txq`, `suld.b` /
`sust.b` (the x coordinate in bytes), `sust.p` (formatted, x in samples) with `.trap` / `.clamp` / `.zero`,
`sured.b` (a word reduced in place, lane by lane) and `suq`.

A kernel's `Texture` or `Surface` argument becomes a handle; the texels live in a global buffer, dense: channels
innermost, then x, then y, then z or the layer. The texture unit's arithmetic (how a float coordinate becomes a
texel index and a filter weight, how a filtered value is rounded) is `texture_unit`; the rules here about where
texels come from were read off the H100 too: clamp addressing clamps the fixed-point coordinate, integer coordinates
read 0 outside the extents under every address mode, a layer index clamps as an unsigned number."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcforge.ptx.emulate.machine import EmulationError
from tcforge.ptx.emulate.ops_mem import reduce_values
from tcforge.ptx.emulate.rounding import round_f64_to_f16
from tcforge.ptx.emulate.state import TYPE_BYTES, UINT
from tcforge.ptx.emulate.texture_unit import TEXTURE_UNIT, blend, blend_codes, border_codes, fixed_point, weights
from tcforge.ptx.operands import Addr, Reg, Vec

HANDLE_BASE = 0x5E00_0000_0000  # handles the emulator gives: HANDLE_BASE + 16 * (index of the object)
_TYPES = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32, "s32": np.int32,
          "f16": np.float16, "f32": np.float32}
ADDRESS_MODES = ("wrap", "clamp", "mirror", "border")  # CUaddress_mode's order (txq.addr_mode_N answers the index)
FILTERS = ("point", "linear")
_GEOMS = {"1d": (1, False), "2d": (2, False), "3d": (3, False), "a1d": (1, True), "a2d": (2, True)}

def _format(fmt: str, what: str) -> tuple[str, int]:
    """('f16', 4) of 'f16x4'."""
    ctype, _, n = fmt.partition("x")
    if ctype not in _TYPES or n not in ("1", "2", "4"):
        raise EmulationError(f"{what}: format {fmt!r} is not TYPExN with TYPE one of {', '.join(_TYPES)} and N "
                             "1, 2 or 4")
    return ctype, int(n)


class _Image:
    """What textures and surfaces share: a buffer of texels, its format and extents."""

    buffer: str
    format: str
    dims: tuple[int, ...]
    layered: bool

    def _check(self, what: str) -> None:
        _format(self.format, what)
        if not 1 <= len(self.dims) <= 3 or any(int(d) < 1 for d in self.dims):
            raise EmulationError(f"{what} of {self.buffer!r}: dims {self.dims} must be 1 to 3 positive extents")
        if self.layered and len(self.dims) == 1:
            raise EmulationError(f"{what} of {self.buffer!r}: a layered image needs its extents and a layer count")

    @property
    def ctype(self) -> str:
        return _format(self.format, "")[0]

    @property
    def channels(self) -> int:
        return _format(self.format, "")[1]

    @property
    def texel_bytes(self) -> int:
        return np.dtype(_TYPES[self.ctype]).itemsize * self.channels

    @property
    def extents(self) -> tuple[int, int, int]:
        """(width, height, depth), 1 where absent; a layered image's layer count is `layers`."""
        d = self.dims[:-1] if self.layered else self.dims
        return tuple(int(x) for x in d) + (1,) * (3 - len(d))  # type: ignore[return-value]

    @property
    def layers(self) -> int:
        return int(self.dims[-1]) if self.layered else 1

    @property
    def nbytes(self) -> int:
        w, h, d = self.extents
        return w * h * d * self.layers * self.texel_bytes

    def _words(self) -> list[str]:
        out = [self.buffer, self.format, "dims=" + ",".join(map(str, self.dims))]
        return out + (["layered=1"] if self.layered else [])


@dataclass(frozen=True)
class Texture(_Image):
    """A texture object as `cuTexObjectCreate` makes it from an array: `buffer` (a global buffer's name in the
    emulate arguments) holding the texels, `format` 'f32x4' (channel type x channel count), `dims` width[, height[,
    depth]] (a layered texture: then the layer count), the filter, one address mode per dimension, normalized
    coordinates, `read` 'element' or 'normalized' (8- and 16-bit integers as floats in [0, 1] or [-1, 1]) and the
    border colour."""

    buffer: str
    format: str
    dims: tuple[int, ...]
    layered: bool = False
    filter: str = "point"
    address: tuple[str, ...] = ("clamp", "clamp", "clamp")
    normalized: bool = False
    read: str = "element"
    border: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        what = "texture"
        self._check(what)
        ctype = self.ctype
        if self.filter not in FILTERS:
            raise EmulationError(f"{what} of {self.buffer!r}: filter {self.filter!r} is not point or linear")
        if len(self.address) < len(self.dims) - self.layered or any(a not in ADDRESS_MODES for a in self.address):
            raise EmulationError(f"{what} of {self.buffer!r}: address modes {self.address} must be one of "
                                 f"{', '.join(ADDRESS_MODES)} per dimension")
        if not self.normalized and any(a in ("wrap", "mirror") for a in self.address[:len(self.dims) - self.layered]):
            raise EmulationError(f"{what} of {self.buffer!r}: wrap and mirror addressing need normalized "
                                 "coordinates")
        if self.read not in ("element", "normalized"):
            raise EmulationError(f"{what} of {self.buffer!r}: read {self.read!r} is not element or normalized")
        if self.read == "normalized" and ctype not in ("u8", "s8", "u16", "s16"):
            raise EmulationError(f"{what} of {self.buffer!r}: normalized reads are for 8- and 16-bit integer "
                                 f"channels, not {ctype}")
        if self.filter == "linear" and not self.floats:
            raise EmulationError(f"{what} of {self.buffer!r}: linear filtering needs float results (a float "
                                 "format or normalized reads)")
        if len(self.border) != 4:
            raise EmulationError(f"{what} of {self.buffer!r}: the border colour has 4 components")

    @property
    def floats(self) -> bool:
        """Whether `tex` returns floats (a float format, or normalized reads)."""
        return self.ctype in ("f16", "f32") or self.read == "normalized"

    def text(self) -> str:
        """The text form `parse` reads."""
        words = ["texture", *self._words(), f"filter={self.filter}", "address=" + ",".join(self.address)]
        words += ["normalized=1"] if self.normalized else []
        words += [f"read={self.read}"] if self.read != "element" else []
        words += ["border=" + ",".join(repr(float(b)) for b in self.border)] if any(self.border) else []
        return " ".join(words)

    @staticmethod
    def parse(text: str) -> Texture:
        """`texture BUFFER FORMAT dims=W[,H[,D]] [layered=1] [filter=point|linear] [address=M,..]
        [normalized=1] [read=element|normalized] [border=R,G,B,A]`."""
        kv, head = _words(text, "texture", {"dims", "layered", "filter", "address", "normalized", "read", "border"})
        try:
            dims = tuple(int(x) for x in kv["dims"].split(","))
            border = tuple(float(x) for x in kv.get("border", "0,0,0,0").split(","))
        except ValueError:
            raise EmulationError(f"texture {text!r}: dims and border must be numbers") from None
        return Texture(head[0], head[1], dims, kv.get("layered") == "1", kv.get("filter", "point"),
                       tuple(kv.get("address", "clamp,clamp,clamp").split(",")), kv.get("normalized") == "1",
                       kv.get("read", "element"), border)


@dataclass(frozen=True)
class Surface(_Image):
    """A surface object over an array: `buffer` holding the texels, `format` 'f16x4', `dims` width[, height[,
    depth]] (a layered surface: then the layer count)."""

    buffer: str
    format: str
    dims: tuple[int, ...]
    layered: bool = False

    def __post_init__(self) -> None:
        self._check("surface")

    def text(self) -> str:
        return " ".join(["surface", *self._words()])

    @staticmethod
    def parse(text: str) -> Surface:
        """`surface BUFFER FORMAT dims=W[,H[,D]] [layered=1]`."""
        kv, head = _words(text, "surface", {"dims", "layered"})
        try:
            dims = tuple(int(x) for x in kv["dims"].split(","))
        except ValueError:
            raise EmulationError(f"surface {text!r}: dims must be integers") from None
        return Surface(head[0], head[1], dims, kv.get("layered") == "1")


def _words(text: str, kind: str, keys: set[str]) -> tuple[dict[str, str], list[str]]:
    words = text.split()
    usage = f"{kind} {text!r}: expected '{kind} BUFFER FORMAT dims=W[,H[,D]] [key=value ...]' with keys " \
            f"{', '.join(sorted(keys))}"
    if len(words) < 4 or words[0] != kind or any("=" not in w for w in words[3:]):
        raise EmulationError(usage)
    kv = dict(w.split("=", 1) for w in words[3:])
    if set(kv) - keys or "dims" not in kv:
        raise EmulationError(usage)
    return kv, words[1:3]


# ---- finding the object of a handle -------------------------------------------------------------------------------
def _groups(ctx, st, op: Addr, kind: type):
    """`groups(lanes)`: [(object, byte offset of its texels in global memory, positions in lanes)] by handle."""
    if op.index is not None and not isinstance(op.index, Vec):
        ctx.fail_static(st, "expected [handle, {coordinates}]")
    if not isinstance(op.base, Reg) or op.offset:
        ctx.fail_static(st, "only bindless handles in a .u64 register are emulated (not .texref / .surfref / "
                            ".samplerref variables)")
    rh = ctx.src(op.base, "u64")
    fail = ctx.failer(st)
    what = kind.__name__.lower()

    def groups(lanes):
        h = rh()[lanes].astype(np.int64)
        out = []
        for v in np.unique(h):
            obj = ctx.mem.images.get(int(v))
            at = np.flatnonzero(h == v)
            if obj is None or not isinstance(obj[0], kind):
                fail(int(lanes[at[0]]), f"handle {int(v):#x} is not a {what} (pass a tcforge.ptx.emulate."
                                        f"{kind.__name__} as the kernel's argument)")
            img, name = obj
            i = ctx.mem.names.index(name)
            if ctx.mem.sizes[i] != img.nbytes:
                fail(int(lanes[at[0]]), f"{what} buffer {name!r} has {ctx.mem.sizes[i]} bytes; {img.format} x "
                                        f"{img.dims} needs {img.nbytes}")
            out.append((img, ctx.mem.starts[i], at))
        return out
    return groups


def _coords(ctx, st, op: Addr, geom: str, ctype: str):
    """`coords(lanes)`: (layer index or None, [x, y, z as the geometry uses them]); the operand is {x}, {x, y},
    {x, y, z, _}, {layer, x} or {layer, x, y, _}."""
    if geom not in _GEOMS:
        ctx.unsupported(st, f"{st.opcode} ({geom} geometry)")
    n, layered = _GEOMS[geom]
    items = list(op.index.items) if op.index is not None else []
    if len(items) < n + layered:
        ctx.fail_static(st, f"a .{geom} access takes {n + layered} coordinates, got {len(items)}")
    layer = ctx.src_full(items[0], "s32") if layered else None
    rs = [ctx.src_full(x, ctype) for x in items[layered:layered + n]]

    def coords(lanes):
        return (None if layer is None else layer()[lanes].view(np.int32).astype(np.int64)), \
            [r()[lanes] for r in rs]
    return coords


# ---- texel addressing -------------------------------------------------------------------------------------------
def _address(i: np.ndarray, size: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """(index inside 0..size-1, valid) of texel indices `i` under an address mode (border: invalid outside)."""
    if mode == "clamp":
        return np.clip(i, 0, size - 1), np.ones(i.shape, bool)
    if mode == "border":
        ok = (i >= 0) & (i < size)
        return np.where(ok, i, 0), ok
    if mode == "wrap":
        return np.mod(i, size), np.ones(i.shape, bool)
    m = np.mod(i, 2 * size)
    return np.where(m < size, m, 2 * size - 1 - m), np.ones(i.shape, bool)


def _read_texels(mem, img: _Image, base: int, idx: list[np.ndarray], layer) -> np.ndarray:
    """(k, channels) texels at integer indices (already inside the extents), in the format's dtype."""
    w, h, d = img.extents
    pos = idx[0]
    if len(idx) > 1:
        pos = pos + w * idx[1]
    if len(idx) > 2:
        pos = pos + w * h * idx[2]
    if layer is not None:
        pos = pos + w * h * d * layer
    dt = np.dtype(_TYPES[img.ctype])
    flat = mem.gmem[base:base + img.nbytes].view(dt).reshape(-1, img.channels)
    return flat[pos]


def _as_float(img: Texture, t: np.ndarray) -> np.ndarray:
    """Texels as the filter sees them: float64 (f16 / f32 exact; normalized integers divided out)."""
    if img.read == "normalized":
        bits = 8 * t.dtype.itemsize
        if img.ctype[0] == "u":
            return (t.astype(np.float64) / ((1 << bits) - 1)).astype(np.float32).astype(np.float64)
        return np.maximum((t.astype(np.float64) / ((1 << (bits - 1)) - 1)).astype(np.float32), -1.0).astype(
            np.float64)
    return t.astype(np.float64)


def _bits(img: Texture, t: np.ndarray) -> np.ndarray:
    """(k, 4) result words of texels read without filtering: f32 texels' own bits (NaN payloads kept), other
    floats through f32, integers sign- or zero-extended; missing channels 0, alpha too (the H100 corpus's
    tex_f32x1_point_clamp and tex_s8x2_intcoords_border)."""
    k = len(t)
    out = np.zeros((k, 4), np.uint32)
    if img.ctype == "f32":
        out[:, :img.channels] = t.view(np.uint32)
    elif img.floats:
        out[:, :img.channels] = _as_float(img, t).astype(np.float32).view(np.uint32)
    else:
        out[:, :img.channels] = t.astype(np.int64).astype(np.uint32)
    return out


def _fill(img: Texture, vals: np.ndarray) -> np.ndarray:
    """(k, 4) components from a texture's channels (as the filter sees them: float64 values, or int64 codes under
    normalized reads), in vals' dtype: missing 0, alpha too."""
    out = np.zeros((len(vals), 4), vals.dtype)
    out[:, :img.channels] = vals
    return out


def _border(img: Texture, k: int) -> np.ndarray:
    """(k, 4) result words of the border colour: its f32 bits in the texture's channels, integer textures too (the
    H100 corpus's tex_u32x1_point_border reads a border of 7 as 0x40E00000); under normalized reads first stored in
    the texel format (`texture_unit.border_codes`); missing channels 0."""
    colour = np.array(img.border, np.float64)
    if img.read == "normalized":
        colour = _as_float(img, border_codes(img.ctype, img.border).astype(_TYPES[img.ctype]))
    b = colour.astype(np.float32).view(np.uint32)
    b[img.channels:] = 0
    return np.broadcast_to(b, (k, 4))


def _layer(img: _Image, layer):
    """The layer read: the index clamped as an unsigned number (texa2d_f16x1_linear_clamp: -1 reads the last)."""
    return None if layer is None else np.clip(layer & 0xFFFF_FFFF, 0, img.layers - 1)


def _fetch(mem, img: Texture, base: int, layer, idx: list[np.ndarray], border: bool = False) -> tuple[np.ndarray,
                                                                                                     np.ndarray]:
    """(texels (k, channels) in the format's dtype, in range) at integer texel indices per dimension, under the
    texture's address modes (out of range only for border addressing; every mode acts as border with `border`)."""
    ok = np.ones(len(idx[0]), bool)
    at = []
    for i, size, mode in zip(idx, img.extents, img.address, strict=False):
        j, v = _address(i, size, "border" if border else mode)
        at.append(j)
        ok &= v
    return _read_texels(mem, img, base, at, _layer(img, layer)), ok


def _sample(mem, img: Texture, base: int, layer, xs: list[np.ndarray], float_coords: bool) -> np.ndarray:
    """(k, 4) result words of `tex`."""
    k = len(xs[0])
    bits = TEXTURE_UNIT["subtexel_bits"]
    if not float_coords or img.filter == "point":
        if float_coords:
            idx = [fixed_point(x, s, img.normalized, False) >> bits for x, s in zip(xs, img.extents, strict=False)]
        else:
            idx = [x.view(np.int32).astype(np.int64) for x in xs]
        # integer coordinates read 0 outside the extents whatever the address mode and border colour
        # (tex_f32x2_intcoords_clamp, tex_f32x2_intcoords_border)
        t, ok = _fetch(mem, img, base, layer, idx, border=not float_coords)
        return np.where(ok[:, None], _bits(img, t), _border(img, k) if float_coords else np.uint32(0))
    fx = [fixed_point(x, s, img.normalized, True) for x, s in zip(xs, img.extents, strict=False)]
    # clamp addressing clamps the fixed-point coordinate: an edge sample takes the edge texel whole (weight 256)
    fx = [np.clip(f, 0, (s - 1) << bits) if mode == "clamp" else f
          for f, s, mode in zip(fx, img.extents, img.address, strict=False)]
    lo = [f >> bits for f in fx]
    frac = [f & ((1 << bits) - 1) for f in fx]
    w = weights(frac)
    codes = img.read == "normalized"  # the filter weighs integer codes, else float values
    if codes:
        border = _fill(img, border_codes(img.ctype, img.border)[None, :img.channels])
    else:
        border = _border(img, k).view(np.float32).astype(np.float64)
    vals = []
    for corner in range(1 << len(xs)):
        hi = [corner >> d & 1 for d in range(len(xs))]
        t, ok = _fetch(mem, img, base, layer, [lo_d + h for lo_d, h in zip(lo, hi, strict=True)])
        vals.append(np.where(ok[:, None], _fill(img, t.astype(np.int64) if codes else _as_float(img, t)), border))
    if codes:
        return blend_codes(img.ctype, np.stack(vals), np.stack(w))
    used = [np.all([frac[d] > 0 for d in range(len(xs)) if corner >> d & 1] + [np.ones(k, bool)], axis=0)
            for corner in range(1 << len(xs))]
    return blend(np.stack(vals), np.stack(w), np.stack(used), "f16" if img.ctype == "f16" else "f32")


def _footprint(mem, img: Texture, base: int, layer, xs: list[np.ndarray], comp: int) -> np.ndarray:
    """(k, 4) result words of `tld4`: channel `comp` of the texels (i, j+1), (i+1, j+1), (i+1, j), (i, j) around
    the sample."""
    bits = TEXTURE_UNIT["subtexel_bits"]
    lo = [fixed_point(x, s, img.normalized, True) >> bits for x, s in zip(xs, img.extents, strict=False)]
    border = _border(img, len(xs[0]))[:, comp]
    out = []
    for di, dj in ((0, 1), (1, 1), (1, 0), (0, 0)):
        t, ok = _fetch(mem, img, base, layer, [lo[0] + di, lo[1] + dj])
        out.append(np.where(ok, _bits(img, t)[:, comp], border))
    return np.stack(out, axis=1)


# ---- instructions -------------------------------------------------------------------------------------------------
def _dests(ctx, st, d, rtype: str):
    ws = [ctx.dst(x, "b32") for x in (d.items if isinstance(d, Vec) else (d,))]
    if len(ws) != 4:
        ctx.fail_static(st, "expected a .v4 destination")
    if rtype not in ("f32", "s32", "u32"):
        ctx.unsupported(st, f"{st.opcode} (.{rtype} results)")
    return ws


def _check_result(fail, lane: int, img: Texture, rtype: str) -> None:
    """A texture returns floats (float formats, normalized reads) or integers; the instruction must ask that."""
    if img.floats != (rtype == "f32"):
        fail(lane, f"the texture returns {'floats' if img.floats else 'integers'} ({img.format}, read={img.read}) "
                   f"but the instruction asks .{rtype}")


def _write4(ctx, ws, m, lanes, bits: np.ndarray) -> None:
    for c, w in enumerate(ws):
        full = np.zeros(ctx.n, np.uint32)
        full[lanes] = bits[:, c]
        w(full, m)


def _texture_op(ctx, st, geom: str, rtype: str, ctype: str, sample):
    """The run of a tex / tld4: per handle's texture, `sample(mem, texture, base, layer, coordinates)` -> (k, 4)
    result words, written to the four destinations."""
    ws = _dests(ctx, st, st.operands[0], rtype)
    groups = _groups(ctx, st, st.operands[1], Texture)
    coords = _coords(ctx, st, st.operands[1], geom, ctype)
    fail = ctx.failer(st)

    def run(m):
        lanes = ctx.lanes(m)
        layer, xs = coords(lanes)
        out = np.zeros((len(lanes), 4), np.uint32)
        for img, base, at in groups(lanes):
            _check_result(fail, int(lanes[at[0]]), img, rtype)
            out[at] = sample(ctx.mem, img, base, None if layer is None else layer[at], [x[at] for x in xs])
        _write4(ctx, ws, m, lanes, out)
    return run


def b_tex(ctx, st, parts):
    """tex{.level}.geom.v4.dtype.ctype d, [t, c]{, lod}: a sample (mip level 0: a texture has no other)."""
    p = [x for x in parts[1:] if x not in ("level", "base")]
    if "grad" in parts or len(p) < 4 or p[1] != "v4":
        ctx.unsupported(st, f"{st.opcode} (tex.geom.v4.dtype.ctype and tex.level are emulated)")
    geom, rtype, ctype = p[0], p[2], p[3]
    return _texture_op(ctx, st, geom, rtype, ctype,
                       lambda mem, img, base, layer, xs: _sample(mem, img, base, layer, xs, ctype == "f32"))


def b_tld4(ctx, st, parts):
    """tld4.comp.2d.v4.dtype.f32 d, [t, c]: channel `comp` of the bilinear footprint's four texels."""
    if len(parts) < 6 or parts[2] not in ("2d", "a2d") or parts[-1] != "f32":
        ctx.unsupported(st, f"{st.opcode} (tld4.comp.2d/a2d.v4.dtype.f32 is emulated)")
    comp = "rgba".index(parts[1])
    return _texture_op(ctx, st, parts[2], parts[-2], "f32",
                       lambda mem, img, base, layer, xs: _footprint(mem, img, base, layer, xs, comp))


_QUERIES = {"width": lambda i: i.extents[0], "height": lambda i: i.extents[1], "depth": lambda i: i.extents[2],
            "array_size": lambda i: i.layers}
_TEX_QUERIES = {"normalized_coords": lambda t: int(t.normalized), "filter_mode": lambda t: FILTERS.index(t.filter),
                **{f"addr_mode_{d}": (lambda t, d=d: ADDRESS_MODES.index(t.address[d])) for d in range(3)}}


def b_query(ctx, st, parts):
    """txq / suq .query.b32 d, [handle]: extents, layer count; txq also the sampling state."""
    kind = Texture if parts[0] == "txq" else Surface
    q = parts[1]
    table = {**_QUERIES, **(_TEX_QUERIES if kind is Texture else {})}
    if q not in table:
        ctx.unsupported(st, f"{st.opcode} (emulated queries: {', '.join(table)})")
    w = ctx.dst(st.operands[0], "b32")
    groups = _groups(ctx, st, st.operands[1], kind)

    def run(m):
        lanes = ctx.lanes(m)
        full = np.zeros(ctx.n, np.uint32)
        for img, _, at in groups(lanes):
            full[lanes[at]] = table[q](img)
        w(full, m)
    return run


# ---- surfaces -----------------------------------------------------------------------------------------------------
def _surface_at(img: Surface, base: int, layer, xs: list[np.ndarray], nbytes: int, mode: str, by_sample: bool,
                fail, lanes) -> tuple[np.ndarray, np.ndarray]:
    """(byte offsets in global memory, in bounds) of accesses of `nbytes` at surface coordinates (x in bytes, or in
    samples for `by_sample`); .clamp moves them to the nearest edge, .trap fails outside."""
    w, h, d = img.extents
    row = w * img.texel_bytes
    x = xs[0].view(np.int32).astype(np.int64)
    if by_sample:
        x = x * img.texel_bytes
    elif (x % nbytes).any():
        j = int(np.argmax(x % nbytes != 0))
        fail(int(lanes[j]), f"surface access of {nbytes} bytes at byte x {int(x[j])}: not a multiple of its size "
                            "(not modelled)")
    rest = [c.view(np.int32).astype(np.int64) for c in xs[1:]]
    zero = np.zeros(len(x), np.int64)
    y, z = (rest + [zero, zero])[:2]
    lay = zero if layer is None else layer
    coords = [x, y, z, lay]
    tops = [row - nbytes, h - 1, d - 1, img.layers - 1]
    ok = np.ones(len(x), bool)
    for c, top in zip(coords, tops, strict=True):
        ok &= (c >= 0) & (c <= top)
    if mode == "trap" and not ok.all():
        j = int(np.argmin(ok))
        shown = ", ".join(str(int(c[j])) for c in ([lay] if layer is not None else []) + [x, *rest])
        fail(int(lanes[j]), f"surface access at ({shown}) outside the {img.format} surface of dims {img.dims} with "
                            f".trap (x in {'samples' if by_sample else 'bytes'})")
    if mode == "clamp":
        x, y, z, lay = (np.clip(c, 0, top) for c, top in zip(coords, tops, strict=True))
        ok = np.ones(len(x), bool)
    off = x + row * (y + h * (z + d * lay))
    return base + np.where(ok, off, 0), ok


@dataclass
class _SurfaceOp:
    """What suld and sust share: the opcode's vector count, element type and size, out-of-range mode, and readers
    of the handle's surface and the coordinates."""

    count: int
    btype: str
    width: int
    mode: str
    groups: object
    coords: object
    fail: object


def _surface_op(ctx, st, parts, addr: Addr) -> _SurfaceOp:
    """The parts of a suld / sust opcode ({b, p}.geom{.cop}{.vec}.type.mode) and its `[surface, coords]` operand."""
    geom = next((p for p in parts if p in _GEOMS), None)
    mode = parts[-1]
    if parts[1] not in ("b", "p") or geom is None or mode not in ("trap", "clamp", "zero") or \
            (parts[0] == "suld" and parts[1] == "p"):
        ctx.unsupported(st, f"{st.opcode} (suld.b / sust.b / sust.p .1d .2d .3d .a1d .a2d with .trap, .clamp or "
                            ".zero)")
    return _SurfaceOp(next((int(p[1:]) for p in parts if p in ("v2", "v4")), 1), parts[-2], TYPE_BYTES[parts[-2]],
                      mode, _groups(ctx, st, addr, Surface), _coords(ctx, st, addr, geom, "b32"), ctx.failer(st))


def b_suld(ctx, st, parts):
    """suld.b.geom{.cop}{.vec}.btype.mode d, [s, c]: bytes from the surface (x in bytes); .zero: zeros outside."""
    d, a = st.operands[:2]
    op = _surface_op(ctx, st, parts, a)
    ws = [ctx.dst(x, op.btype) for x in (d.items if isinstance(d, Vec) else (d,))]
    dt = UINT[op.width]

    def run(m):
        lanes = ctx.lanes(m)
        layer, xs = op.coords(lanes)
        vals = np.zeros((len(lanes), op.count), dt)
        for img, base, at in op.groups(lanes):
            off, ok = _surface_at(img, base, None if layer is None else layer[at], [x[at] for x in xs],
                                  op.width * op.count, op.mode, False, op.fail, lanes[at])
            vals[at] = np.where(ok[:, None], ctx.mem.read(ctx.mem.gmem, off, op.width, op.count), 0)
        for c, w in enumerate(ws):
            full = np.zeros(ctx.n, dt)
            full[lanes] = vals[:, c]
            w(full, m)
    return run


def _formatted(img: Surface, v: np.ndarray) -> np.ndarray:
    """sust.p: 32-bit source values (k, channels) as the surface's channel type (its raw bits): f32 as they are,
    f16 rounded toward zero (a finite overflow stays the largest finite; a NaN keeps its payload's top bits),
    integers saturated, the word read as unsigned for unsigned formats and as signed for signed ones (the H100's
    sustp2d entries)."""
    ctype = img.ctype
    if ctype == "f32":
        return v.astype(np.uint32)
    if ctype == "f16":  # a NaN keeps its sign and its payload's top 10 bits (0xFF94F622 -> 0xFCA7; an empty one: 0x200)
        w = v.astype(np.uint32)
        f = w.view(np.float32).astype(np.float64)
        payload = w >> 13 & 0x3FF
        nan = ((w >> 16 & 0x8000) | 0x7C00 | np.where(payload == 0, 0x200, payload)).astype(np.uint16)
        return np.where(np.isnan(f), nan, round_f64_to_f16(f, "rz")).astype(np.uint16)
    dt = np.dtype(_TYPES[ctype])
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    words = v.astype(np.uint32)
    wide = words.view(np.int32).astype(np.int64) if ctype[0] == "s" else words.astype(np.int64)
    return np.clip(wide, lo, hi).astype(dt).view(f"u{dt.itemsize}")


def b_sust(ctx, st, parts):
    """sust.b.geom{.cop}{.vec}.btype.mode [s, c], v: bytes to the surface (x in bytes); sust.p.geom{.vec}.b32.mode:
    a sample converted to the surface's format (x in samples); .zero: nothing stored outside."""
    a, v = st.operands[:2]
    op = _surface_op(ctx, st, parts, a)
    formatted = parts[1] == "p"
    rs = [ctx.src_full(x, op.btype) for x in (v.items if isinstance(v, Vec) else (v,))]
    mem = ctx.mem

    def run(m):
        lanes = ctx.lanes(m)
        layer, xs = op.coords(lanes)
        vals = np.stack([r()[lanes] for r in rs], axis=1)
        for img, base, at in op.groups(lanes):
            if formatted and op.count < img.channels:
                op.fail(int(lanes[at[0]]), f"sust.p writes {op.count} of the {img.channels} channels of a "
                                           f"{img.format} surface; the others would be unpredictable")
            off, ok = _surface_at(img, base, None if layer is None else layer[at], [x[at] for x in xs],
                                  img.texel_bytes if formatted else op.width * op.count, op.mode, formatted, op.fail,
                                  lanes[at])
            data = _formatted(img, vals[at][:, :img.channels]) if formatted else vals[at]
            keep = np.flatnonzero(ok)
            if len(keep):  # lane order: a later lane's store wins
                mem.write(mem.gmem, off[keep], data.dtype.itemsize, data[keep])
                mem.written.add(img.buffer)
    return run


def b_sured(ctx, st, parts):
    """sured.b.op.geom.ctype.mode [s, c], v: the surface's word at byte x reduced with v (add, min, max, and, or;
    `atom`'s rules), one lane after another; .zero drops a reduction outside, .clamp moves it to the edge."""
    if parts[1] != "b" or len(parts) != 6 or parts[2] not in ("add", "min", "max", "and", "or") or \
            parts[3] not in ("1d", "2d", "3d"):
        ctx.unsupported(st, f"{st.opcode} (sured.b.{{add,min,max,and,or}}.{{1d,2d,3d}} is emulated; sured.p, "
                            "whose reduction follows the surface's format, is not)")
    red = parts[2]
    a, v = st.operands[:2]
    op = _surface_op(ctx, st, ["sured", "b", *parts[3:]], a)
    rv = ctx.src_full(v, op.btype)
    mem = ctx.mem

    def run(m):
        lanes = ctx.lanes(m)
        layer, xs = op.coords(lanes)
        vals = rv()[lanes]
        for img, base, at in op.groups(lanes):
            off, ok = _surface_at(img, base, None if layer is None else layer[at], [x[at] for x in xs], op.width,
                                  op.mode, False, op.fail, lanes[at])
            mine = vals[at]
            for j in np.flatnonzero(ok).tolist():  # in lane order, each on the word the lanes before it left
                old = mem.read(mem.gmem, off[j:j + 1], op.width, 1)[:, 0]
                new = reduce_values(red, op.btype, True, old, mine[j:j + 1])
                mem.write(mem.gmem, off[j:j + 1], op.width, new[:, None])
            mem.written.add(img.buffer)
    return run


BUILDERS = {"tex": b_tex, "tld4": b_tld4, "txq": b_query, "suq": b_query, "suld": b_suld, "sust": b_sust,
            "sured": b_sured}
