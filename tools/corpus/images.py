"""Textures and surfaces (samples_sm90a: tex*, tld4*, suld*, sust*, sured*, image_queries): coordinates and
texels, and the TEX / SULD / SUST / SURED entry tables."""

from __future__ import annotations

import numpy as np

_F32_SPECIAL_COORDS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3e9, -3e9, 2.0 ** 24, 1e-40],
                               np.float32)


def _coords_f32(rng, n: int, size: int, normalized: bool) -> np.ndarray:
    """f32 coordinates over [-2, size + 2] texels: uniform; at, just around and one ulp either side of integers,
    half-integers and 1/256 steps; a few specials. Divided by `size` (in f64) for normalized coordinates."""
    ints = rng.integers(-2, size + 3, n).astype(np.float64)
    eps = rng.choice(np.concatenate([[0.0], 2.0 ** -np.arange(6, 25)]), n) * rng.choice([-1.0, 1.0], n)
    cands = [rng.uniform(-2, size + 2, n), ints + eps, ints + 0.5 + eps, ints + rng.integers(0, 256, n) / 256 + eps]
    x = np.choose(rng.integers(0, 4, n), cands)
    x = (x / size if normalized else x).astype(np.float32)
    ulp = rng.random(n) < 0.1
    x[ulp] = np.nextafter(x[ulp], np.where(rng.random(int(ulp.sum())) < 0.5, -np.inf, np.inf).astype(np.float32))
    x[rng.choice(n, len(_F32_SPECIAL_COORDS), replace=False)] = _F32_SPECIAL_COORDS
    return x


def _texels(rng, fmt: str, shape: tuple, specials: bool = False) -> np.ndarray:
    """Random texels of a format ('f16x4'): floats of mixed scale, integers over their whole range."""
    ctype, ch = fmt.split("x")
    shape = (*shape, int(ch))
    if ctype in ("f32", "f16"):
        v = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(ctype.replace("f", "float"))
        if specials:
            flat = v.reshape(-1)
            pick = rng.choice(flat.size, max(4, flat.size // 12), replace=False)
            flat[pick] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38 if ctype == "f32" else 6e4,
                                              1e-41 if ctype == "f32" else 3e-7], np.float64), len(pick))
        return v
    info = np.iinfo(ctype.replace("u", "uint").replace("s", "int"))
    v = rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64)
    v.reshape(-1)[:2] = (info.min, info.max)
    return v.astype(info.dtype)


def _tex_entry(tex, coords: str, n: int = 2048, specials: bool = False, layers: tuple = (-2, 5)):
    """Inputs of a texture kernel: the texture, n samples' coordinate words {x, y, z, layer} (float bits, or
    integers around the extents for 'int'), out, n, the texels."""
    def make(rng):
        from tcforge.ptx.emulate import Texture

        t = Texture(**{**tex, "buffer": "tx"})
        c = np.zeros((n, 4), np.uint32)
        for d, size in enumerate(t.extents[:len(t.dims) - t.layered]):
            if coords == "int":
                c[:, d] = rng.integers(-3, size + 3, n).astype(np.int32).view(np.uint32)
            else:
                c[:, d] = _coords_f32(rng, n, size, t.normalized).view(np.uint32)
        c[:, 3] = rng.integers(*layers, n, endpoint=True).astype(np.int32).view(np.uint32)
        w, h, dd = t.extents
        texels = _texels(rng, t.format, (t.layers * dd, h, w), specials)
        return [t, ("c", c), ("out", np.zeros((n, 4), np.uint32)), n, ("tx", texels)]
    return make


# linear-filter probes: the values (corner, channel) of the 2 x 2 (x 2) block at texel (1, 1 (, 1)) (corner bits: x,
# y, z); every other texel 0. "weights": channel c is 1 at corner c alone, so each sample returns its four bilinear
# weights ("weights3d_z0" / "_z1": the trilinear weights of the z = 0 / z = 1 plane's corners); "blend": one-ulp
# neighbours, a 2^20 range, a cancellation, and four odd integers, for the blend's arithmetic
TEX_PROBE_CORNERS = {
    "weights": np.eye(4, dtype=np.float32),
    "blend": np.array([[1.0, 2.0**20, 1.0, 3.0], [1.0 + 2.0**-23, 1.0, -1.0, 5.0], [1.0 - 2.0**-24, 2.0**-20, 0.5, 7.0],
                       [1.0, 3.0, -0.5, 11.0]], np.float32),
    "weights3d_z0": np.eye(8, 4, dtype=np.float32),
    "weights3d_z1": np.eye(8, 4, -4, dtype=np.float32),
}


def _tex_probe(corners: str, normalized: bool = False, n: int = 2048):
    """Inputs of a linear-filter probe (TEX_PROBE_CORNERS) on a 4 x 4 (x 4) f32x4 texture (normalized, 2D only:
    5 x 3, the coordinates divided by the extents in f32); coordinates in [1.5, 2.5): a 1/1024 sweep of x with the
    other axes scrambled over the same steps, then ones at and one ulp around the midpoints between 1/256 steps,
    then random ones."""
    def make(rng):
        from tcforge.ptx.emulate import Texture

        values = TEX_PROBE_CORNERS[corners]
        dims = 3 if len(values) == 8 else 2
        extents = (5, 3) if normalized else (4,) * dims
        t = Texture(buffer="tx", format="f32x4", dims=extents, filter="linear", normalized=normalized)
        texels = np.zeros(((extents + (1,))[2], extents[1], extents[0], 4), np.float32)
        for corner, v in enumerate(values):
            texels[1 + (corner >> 2 & 1) if dims == 3 else 0, 1 + (corner >> 1 & 1), 1 + (corner & 1)] = v
        k = np.arange(n // 2)
        sweep = np.stack([1.5 + (k * step % (n // 2)) / (n // 2) for step in (1, 37, 101)[:dims]], 1)
        mid = 1.5 + (rng.integers(0, 256, (n // 4, dims)) + 0.5) / 256
        rand = rng.uniform(1.5, 2.5, (n - n // 2 - n // 4, dims))
        xyz = np.concatenate([sweep, mid, rand]).astype(np.float32)
        nudge = rng.integers(-1, 2, xyz.shape) * (np.arange(len(xyz))[:, None] >= n // 2)
        away = np.nextafter(xyz, np.where(nudge > 0, np.inf, -np.inf).astype(np.float32))
        xyz = np.where(nudge == 0, xyz, away).astype(np.float32)
        if normalized:
            xyz = (xyz / np.array(extents, np.float32)).astype(np.float32)
        c = np.zeros((n, 4), np.uint32)
        c[:, :dims] = xyz.view(np.uint32)
        return [t, ("c", c), ("out", np.zeros((n, 4), np.uint32)), n, ("tx", texels)]
    return make


def _tex_s8_sweep(rng):
    """Inputs of the s8 normalized-filter sweep: a 65 x 1 s8x4 clamp texture whose channels hold the codes -128..-64,
    -64..0, 0..64 and 63..127 in order, sampled between every pair of neighbours at each of the 256 weights (sample
    j: texels j // 256 and j // 256 + 1, weight j % 256), so that the weighted code sums cover every value from
    -32768 to 32512."""
    from tcforge.ptx.emulate import Texture

    t = Texture(buffer="tx", format="s8x4", dims=(65, 1), filter="linear", read="normalized")
    texels = np.stack([np.arange(-128, -63), np.arange(-64, 1), np.arange(0, 65), np.arange(63, 128)], 1)
    j = np.arange(64 * 256)
    c = np.zeros((len(j), 4), np.uint32)
    c[:, 0] = (j // 256 + 0.5 + (j % 256) / 256).astype(np.float32).view(np.uint32)
    c[:, 1] = np.float32(0.5).view(np.uint32)
    return [t, ("c", c), ("out", np.zeros((len(j), 4), np.uint32)), len(j),
            ("tx", texels.astype(np.int8).reshape(1, 1, 65, 4))]


def _surface_load(surf: dict, step: int, n: int = 1024, inside: bool = False):
    """Inputs of a surface-load kernel: coordinates {x (bytes, multiples of `step`), y, z, layer} around the
    extents (inside them only for .trap)."""
    def make(rng):
        from tcforge.ptx.emulate import Surface

        s = Surface(**{**surf, "buffer": "sf"})
        w, h, d = s.extents
        row = w * s.texel_bytes
        c = np.zeros((n, 4), np.int32)
        pad = 0 if inside else 3
        c[:, 0] = rng.integers(-pad, (row - step) // step + 1 + pad, n) * step
        c[:, 1] = rng.integers(-pad, h + pad, n)
        c[:, 2] = rng.integers(-pad, d + pad, n)
        c[:, 3] = rng.integers(-pad, s.layers + pad, n)
        texels = _texels(rng, s.format, (s.layers * d, h, w))
        return [s, ("c", c), ("out", np.zeros((n, 4), np.uint32)), n, ("sf", texels)]
    return make


def _surface_store(surf: dict, step: int, values: str, n: int = 96, inside: bool = False):
    """Inputs of a surface-store kernel (one thread, samples in order): coordinates {x, y} (x in bytes, multiples
    of `step`; `step` 0: x in samples), value words (random bits, f32 / s32 values of mixed range, small integers,
    NaN payloads), the surface
    pre-filled with random texels."""
    def make(rng):
        from tcforge.ptx.emulate import Surface

        s = Surface(**{**surf, "buffer": "sf"})
        w, h, _ = s.extents
        c = np.zeros((n, 4), np.int32)
        pad = 0 if inside else 2
        c[:, 0] = rng.integers(-pad, w + pad, n) * (step or 1)
        c[:, 1] = rng.integers(-pad, h + pad, n)
        if values == "f32":
            v = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-8, 9, (n, 4))).astype(np.float32)
            v.reshape(-1)[rng.choice(4 * n, 40, replace=False)] = np.array(
                [np.nan, np.inf, -np.inf, -0.0, 65504.0, 65520.0, 65519.99, 1e-8, 6e-8, 3e-5] * 4, np.float32)
            v = v.view(np.uint32)
        elif values in ("s32", "small"):  # small: half within +-300, a quarter within +-70000, the rest any
            v = rng.integers(-2**31, 2**31, (n, 4)).astype(np.int32)
            v[: n // 2] = rng.integers(-70000, 70000, (n // 2, 4))
            if values == "small":
                v[: n // 4] = rng.integers(-300, 300, (n // 4, 4))
            v = v.view(np.uint32)
        elif values == "nans":  # NaNs of any sign and payload, f16 subnormals and their edges, mixed values
            v = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-8, 6, (n, 4))).astype(np.float32).view(np.uint32)
            v[: n // 3] = (rng.integers(0, 2, (n // 3, 4)) << 31 | 0x7F800000 | rng.integers(1, 1 << 23, (n // 3, 4))
                           ).astype(np.uint32)
            v[n // 3: n // 2] = (rng.uniform(-2.0 ** -13, 2.0 ** -13, (n // 2 - n // 3, 4))).astype(np.float32).view(
                np.uint32)
        else:
            v = rng.integers(0, 2**32, (n, 4), dtype=np.uint64).astype(np.uint32)
        return [s, ("c", c), ("v", v), n, ("sf", _texels(rng, s.format, (s.layers * s.extents[2], h, w)))]
    return make


def _image_queries(rng):
    from tcforge.ptx.emulate import Surface, Texture

    return [Texture("tx", "f16x2", (11, 6, 4), True, "linear", ("wrap", "mirror"), True),
            Surface("sf", "u8x4", (9, 7, 5)), ("out", np.zeros(12, np.uint32)),
            ("tx", np.zeros((4, 6, 11, 2), np.float16)), ("sf", np.zeros((5, 7, 9, 4), np.uint8))]


_L, _C, _B = "linear", ("clamp", "clamp", "clamp"), ("border", "border", "border")
# name: (kernel, texture (Texture fields but the buffer), coordinates, specials in the texels)
TEX_ENTRIES = {
    "tex_f32x1_point_clamp": ("tex2d_ff", {"format": "f32x1", "dims": (13, 7)}, "f32", False),
    "tex_f32x1_linear_clamp": ("tex2d_ff", {"format": "f32x1", "dims": (13, 7), "filter": _L}, "f32", False),
    "tex_f32x1_linear_specials": ("tex2d_ff", {"format": "f32x1", "dims": (6, 5), "filter": _L}, "f32", True),
    "tex_f32x4_linear_border_norm": ("tex2d_ff", {"format": "f32x4", "dims": (16, 9), "filter": _L, "address": _B,
                                                  "normalized": True, "border": (0.5, -2.0, 3.0, 0.125)}, "f32",
                                     False),
    "tex_f16x4_linear_wrap_norm": ("tex2d_ff", {"format": "f16x4", "dims": (10, 6), "filter": _L,
                                                "address": ("wrap", "wrap"), "normalized": True}, "f32", True),
    "tex_u8x4_linear_mirror_norm": ("tex2d_ff", {"format": "u8x4", "dims": (12, 5), "filter": _L,
                                                 "address": ("mirror", "mirror"), "normalized": True,
                                                 "read": "normalized"}, "f32", False),
    "tex_u16x1_linear_clamp_normread": ("tex2d_ff", {"format": "u16x1", "dims": (9, 4), "filter": _L,
                                                     "read": "normalized"}, "f32", False),
    "tex_s16x2_point_clamp_normread": ("tex2d_ff", {"format": "s16x2", "dims": (9, 9), "read": "normalized"},
                                       "f32", False),
    # conversions alone (point samples): every 8-bit code, 16-bit codes, f16 specials
    "tex_u8x4_point_clamp_normread": ("tex2d_ff", {"format": "u8x4", "dims": (16, 16), "read": "normalized"},
                                      "f32", False),
    "tex_s8x4_point_clamp_normread": ("tex2d_ff", {"format": "s8x4", "dims": (16, 16), "read": "normalized"},
                                      "f32", False),
    "tex_u16x2_point_clamp_normread": ("tex2d_ff", {"format": "u16x2", "dims": (16, 16), "read": "normalized"},
                                       "f32", False),
    "tex_f16x4_point_clamp": ("tex2d_ff", {"format": "f16x4", "dims": (9, 7)}, "f32", True),
    "tex_u32x1_point_border": ("tex2d_uf", {"format": "u32x1", "dims": (7, 6), "address": _B,
                                            "border": (7.0, 0.0, 0.0, 1.0)}, "f32", False),
    "tex_s16x4_point_clamp_s32": ("tex2d_sf", {"format": "s16x4", "dims": (8, 3)}, "f32", False),
    "tex_s8x2_intcoords_border": ("tex2d_si", {"format": "s8x2", "dims": (7, 5), "address": _B}, "int", False),
    "tex_f32x2_intcoords_clamp": ("tex2d_fi", {"format": "f32x2", "dims": (7, 5)}, "int", False),
    "tex1d_f32x1_linear_clamp_norm": ("tex1d_ff", {"format": "f32x1", "dims": (40,), "filter": _L,
                                                   "normalized": True}, "f32", False),
    "tex3d_f32x1_linear_clamp": ("tex3d_ff", {"format": "f32x1", "dims": (6, 5, 4), "filter": _L}, "f32", False),
    "texa2d_f16x1_linear_clamp": ("texa2d_ff", {"format": "f16x1", "dims": (7, 5, 3), "layered": True,
                                                "filter": _L}, "f32", False),
    "tld4r_f32x4_clamp": ("tld4r_2d", {"format": "f32x4", "dims": (8, 6)}, "f32", False),
    # checks of the texture unit's model on what its fit did not see: signed normalized reads, a border colour and
    # 3D in the integer filter, f16 trilinear with a border, 3D specials, mirror on huge normalized coordinates,
    # negative layers in point samples, integer coordinates with a border colour
    "tex_s8x4_linear_clamp_normread": ("tex2d_ff", {"format": "s8x4", "dims": (9, 7), "filter": _L,
                                                    "read": "normalized"}, "f32", False),
    "tex_s8x4_linear_row_normread": ("tex2d_ff", {"format": "s8x4", "dims": (64, 1), "filter": _L,
                                                  "read": "normalized"}, "f32", False),  # 1D weights: y clamps
    "tex_s16x2_linear_border_normread": ("tex2d_ff", {"format": "s16x2", "dims": (7, 6), "filter": _L, "address": _B,
                                                      "read": "normalized", "border": (-0.3, 0.77, 0.0, 0.0)},
                                         "f32", False),
    "tex_u8x4_linear_border_normread": ("tex2d_ff", {"format": "u8x4", "dims": (6, 5), "filter": _L, "address": _B,
                                                     "read": "normalized", "border": (0.1, 0.9, 0.5, 0.376)},
                                        "f32", False),
    "tex3d_u8x4_linear_clamp_normread": ("tex3d_ff", {"format": "u8x4", "dims": (5, 4, 3), "filter": _L,
                                                      "read": "normalized"}, "f32", False),
    "tex3d_f16x2_linear_border": ("tex3d_ff", {"format": "f16x2", "dims": (5, 4, 3), "filter": _L, "address": _B,
                                               "border": (1.5, -2.25, 0.0, 0.0)}, "f32", True),
    "tex3d_f32x4_linear_specials": ("tex3d_ff", {"format": "f32x4", "dims": (4, 4, 3), "filter": _L}, "f32", True),
    "tex1d_f16x1_linear_mirror_norm": ("tex1d_ff", {"format": "f16x1", "dims": (33,), "filter": _L,
                                                    "address": ("mirror",), "normalized": True}, "f32", True),
    "texa2d_f32x1_point_clamp": ("texa2d_ff", {"format": "f32x1", "dims": (7, 5, 3), "layered": True}, "f32", False),
    "tex_f32x2_intcoords_border": ("tex2d_fi", {"format": "f32x2", "dims": (7, 5), "address": _B,
                                                "border": (2.5, -1.0, 0.0, 0.0)}, "int", False),
    "tld4a_u8x4_border_normread": ("tld4a_2d", {"format": "u8x4", "dims": (8, 6), "address": _B,
                                                "read": "normalized", "border": (0.25, 0.5, 0.75, 0.375)}, "f32",
                                   False),
}
# name: (kernel, surface (Surface fields but the buffer), x step in bytes, only inside the extents)
SULD_ENTRIES = {
    "suld2d_v4b32_trap": ("suld2d_v4b32_trap", {"format": "f32x4", "dims": (10, 6)}, 16, True),
    "suld2d_v4b32_clamp": ("suld2d_v4b32_clamp", {"format": "f32x4", "dims": (10, 6)}, 16, False),
    "suld2d_v4b32_zero": ("suld2d_v4b32_zero", {"format": "f32x4", "dims": (10, 6)}, 16, False),
    "suld2d_b8_clamp_u8x4": ("suld2d_b8_clamp", {"format": "u8x4", "dims": (10, 6)}, 1, False),
    "suld2d_v2b16_zero": ("suld2d_v2b16_zero", {"format": "f16x2", "dims": (10, 6)}, 4, False),
    "suld3d_b64_clamp": ("suld3d_b64_clamp", {"format": "u32x2", "dims": (5, 4, 3)}, 8, False),
    "sulda2d_b32_zero": ("sulda2d_b32_zero", {"format": "u16x2", "dims": (6, 4, 3), "layered": True}, 4, False),
}
# name: (kernel, surface, x step in bytes (0: x in samples), values, only inside the extents)
SUST_ENTRIES = {
    "sust2d_b32_clamp": ("sust2d_b32_clamp", {"format": "u32x1", "dims": (10, 6)}, 4, "bits", False),
    "sust2d_b32_zero": ("sust2d_b32_zero", {"format": "u32x1", "dims": (10, 6)}, 4, "bits", False),
    "sust2d_v2b16_clamp": ("sust2d_v2b16_clamp", {"format": "f16x2", "dims": (10, 6)}, 4, "bits", False),
    "sustp2d_f16x4_trap": ("sustp2d_v4_trap", {"format": "f16x4", "dims": (8, 6)}, 0, "f32", True),
    "sustp2d_u8x4_trap": ("sustp2d_v4_trap", {"format": "u8x4", "dims": (8, 6)}, 0, "bits", True),
    "sustp2d_s16x2_trap": ("sustp2d_v4_trap", {"format": "s16x2", "dims": (8, 6)}, 0, "s32", True),
    "sustp2d_f32x1_zero": ("sustp2d_v4_zero", {"format": "f32x1", "dims": (8, 6)}, 0, "f32", False),
    "sustp2d_u8x4_small_trap": ("sustp2d_v4_trap", {"format": "u8x4", "dims": (8, 6)}, 0, "small", True),
    "sustp2d_s8x4_small_trap": ("sustp2d_v4_trap", {"format": "s8x4", "dims": (8, 6)}, 0, "small", True),
    "sustp2d_u16x2_small_trap": ("sustp2d_v4_trap", {"format": "u16x2", "dims": (8, 6)}, 0, "small", True),
    "sustp2d_f16x4_nans_trap": ("sustp2d_v4_trap", {"format": "f16x4", "dims": (8, 6)}, 0, "nans", True),
}


# entry/kernel -> (surface, 64-bit words, sample range past the edges)
SURED_ENTRIES = {
    "sured2d_add_u32_trap": ({"format": "u32x1", "dims": (5, 4)}, False, 0),
    "sured2d_min_s32_clamp": ({"format": "u32x1", "dims": (5, 4)}, False, 2),
    "sured2d_max_u32_zero": ({"format": "u16x2", "dims": (5, 4)}, False, 2),
    "sured1d_and_b32_clamp": ({"format": "u32x1", "dims": (24,)}, False, 3),
    "sured2d_or_b32_zero": ({"format": "u32x1", "dims": (5, 4)}, False, 2),
    "sured3d_add_u64_trap": ({"format": "u32x2", "dims": (3, 3, 2)}, True, 0),
    "sured2d_min_s64_clamp": ({"format": "u32x2", "dims": (4, 3)}, True, 2),
    "sured2d_max_s64_zero": ({"format": "u16x4", "dims": (4, 3)}, True, 2)}


def _surface_reduce(surf: dict, wide: bool, pad: int, n: int = 1024):
    """Inputs of a surface-reduction kernel: n samples over a small surface (many land on one word), x in bytes,
    `pad` texels past each edge; values over the whole range (and near zero, so signed
    minima and maxima compete); the surface pre-filled with random texels."""
    def make(rng):
        from tcforge.ptx.emulate import Surface

        s = Surface(**{**surf, "buffer": "sf"})
        w, h, d = s.extents
        c = np.zeros((n, 4), np.int32)
        c[:, 0] = rng.integers(-pad, w + pad, n) * s.texel_bytes  # every format here: a texel is one word
        c[:, 1] = rng.integers(-pad, h + pad, n) if h > 1 else 0
        c[:, 2] = rng.integers(-pad, d + pad, n) if d > 1 else 0
        v = rng.integers(0, 2**64, n, dtype=np.uint64)
        v[: n // 4] = rng.integers(-5000, 5000, n // 4).astype(np.int64).view(np.uint64)
        v = v if wide else v.astype(np.uint32)
        return [s, ("c", c), ("v", v), n, ("sf", _texels(rng, s.format, (s.layers * d, h, w)))]
    return make
