"""The texture unit's arithmetic, read off the H100's linear-filter probes and corpus entries (ops_tex runs the
instructions on it; docs/emulate.md lists what was tried).

- Coordinates: a float coordinate becomes fixed point with `subtexel_bits` fraction bits; a normalized one is first
  truncated to `normalized_bits` fraction bits and multiplied by the extent exactly. Linear filtering takes half a
  texel off and rounds half up, point sampling floors; the integer part picks the texel, the fraction (a, b, c in
  x, y, z) is the upper texel's weight in 256ths.
- Weights: each z plane's share Z (256 - c and c; 256 in 1D and 2D) is split along x, x1 = (Z a + 128) >> 8, and
  each part along y with the corner on x's side rounded: x1y1 = (x1 b + 128) >> 8, x0y0 = (x0 (256 - b) + 128) >> 8
  (in 2D the same as w11 = (a b + 128) >> 8 and the rest by difference).
- Float texels: per z plane, the texels with a weight are truncated toward zero to multiples of 2^(E - p -
  `guard_bits`), E the largest exponent among them and p the significand bits of the texel type
  (`FILTER_PRECISION`), and summed exactly with their weights; the plane whose sum is larger in magnitude sets the
  step and the other is floored to it (a two's complement shift); the sum over 256 is rounded half away from zero to
  p bits once (f16 textures filter to f16 values).
- Normalized-read integer texels: the codes are weighted exactly and the sum widened to a 16-bit code (`NORM_WIDEN`;
  s8 through a measured table, `SNORM8_TABLE`); a border colour enters as the code it is stored as."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

TEXTURE_UNIT = {"subtexel_bits": 8, "normalized_bits": 21, "guard_bits": 3}
# texel float type: (significand bits p, exponent of the smallest subnormal) of the filter's arithmetic
FILTER_PRECISION = {"f32": (24, -149), "f16": (11, -24)}


def fixed_point(x: np.ndarray, size: int, normalized: bool, linear: bool) -> np.ndarray:
    """Fixed-point texel coordinates (`subtexel_bits` fraction bits) of f32 coordinates (TEXTURE_UNIT)."""
    unit = TEXTURE_UNIT
    u = (x.view(np.float32) if x.dtype != np.float32 else x).astype(np.float64)
    one = float(1 << unit["subtexel_bits"])
    with np.errstate(invalid="ignore", over="ignore"):
        # NaN reads as 0 (the H100's border_norm); a normalized coordinate's magnitude beyond 2^24 (an even integer
        # in f32, infinities too) acts as 0 under wrap and mirror addressing and stays outside under the others
        u = np.where(np.isnan(u), 0.0, u)
        big = 2.0 ** (24 if normalized else 40)
        u = np.clip(u, -big, big)
        if normalized:
            scale = 2.0 ** unit["normalized_bits"]
            u = np.floor(u * scale) / scale * size
        f = np.floor(u * one - one / 2 + 0.5) if linear else np.floor(u * one)
    return np.clip(f, -(2.0 ** 50), 2.0 ** 50).astype(np.int64)


def weights(frac: list[np.ndarray]) -> list[np.ndarray]:
    """Integer weights (256ths) of the 2^dims corners (corner bit d: the upper texel in dimension d) from the
    fractions (0..255) per dimension (TEXTURE_UNIT): each z plane's share split along x, each part along y."""
    def split(share: np.ndarray, t: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) parts of `share` at fraction t; the one on the `upper` side rounded half up."""
        if upper:
            hi = (share * t + 128) >> 8
            return share - hi, hi
        lo = (share * (256 - t) + 128) >> 8
        return lo, share - lo

    planes = [256 - frac[2], frac[2]] if len(frac) > 2 else [np.full_like(frac[0], 256)]
    w: list[np.ndarray] = []
    for share in planes:
        x0, x1 = split(share, frac[0], True)
        if len(frac) == 1:
            w += [x0, x1]
        else:
            (x0y0, x0y1), (x1y0, x1y1) = split(x0, frac[1], False), split(x1, frac[1], True)
            w += [x0y0, x1y0, x0y1, x1y1]
    return w


def blend(vals: np.ndarray, w: np.ndarray, used: np.ndarray, ftype: str) -> np.ndarray:
    """(k, 4) f32 bits of the weighted texels (corners, k, 4) float64 with weights (corners, k) in 256ths
    (TEXTURE_UNIT, FILTER_PRECISION of the texels' float type): per z plane, the texels with a weight truncated
    below the largest one's exponent, weighted and summed exactly; the plane with the smaller sum floored to the
    other's step; the sum rounded half away. An infinity or NaN decides where the footprint uses it (`used`, corners
    by k: a non-zero fraction in every dimension where the corner is the upper texel, even at a rounded weight 0)."""
    sig, tiny = FILTER_PRECISION[ftype]
    keep = sig + TEXTURE_UNIT["guard_bits"]
    if ftype == "f32":  # subnormal f32 texels filter as zeros of their sign (tex3d_f32x4_linear_specials)
        vals = np.where(np.abs(vals) < 2.0 ** -126, np.copysign(0.0, vals), vals)
    finite = np.isfinite(vals)
    live = (w[:, :, None] > 0) & finite & (vals != 0)
    _, ex = np.frexp(np.where(live, vals, 1.0))
    planes = np.split(np.arange(len(vals)), max(1, len(vals) // 4))
    tops = np.stack([np.max(np.where(live[p], ex[p] - 1, -(1 << 20)), axis=0) for p in planes])  # (planes, k, 4)
    sums = []
    for p, plane_top in zip(planes, tops, strict=True):
        with np.errstate(invalid="ignore", over="ignore"):
            m = np.trunc(np.ldexp(np.where(live[p], vals[p], 0.0), keep - plane_top[None]))
        sums.append(np.sum(m.astype(np.int64) * w[p][:, :, None], axis=0))  # exact: |m| < 2^28, w <= 256
    # the plane whose sum is larger in magnitude sets the step; the other is floored to it (a two's complement
    # shift) or, from a coarser step, exact (its sum is no larger, so the shift stays below 38 bits)
    size = np.stack([np.ldexp(np.abs(s_.astype(np.float64)), np.clip(t, -2000, 2000)) for s_, t in zip(sums, tops,
                                                                                                      strict=True)])
    ref = np.take_along_axis(tops, np.argmax(size, axis=0)[None], axis=0)[0]
    total = np.zeros(ref.shape, np.int64)
    for plane, plane_top in zip(sums, tops, strict=True):
        d = ref - plane_top
        total += np.where(d >= 0, plane >> np.clip(d, 0, 63), plane << np.clip(-d, 0, 62))
    out = round_half_away(total, ref - keep - TEXTURE_UNIT["subtexel_bits"], sig, tiny)
    weighted = w[:, :, None] > 0
    minus_zero = np.all(~weighted | ((vals == 0) & np.signbit(vals)), axis=0)  # only -0 texels weighted: -0
    out = np.where(minus_zero, np.uint32(0x80000000), out)
    bad = used[:, :, None] & ~finite
    nan = np.any(bad & np.isnan(vals), axis=0) | (np.any(bad & (vals > 0), axis=0) & np.any(bad & (vals < 0), axis=0))
    inf = np.any(bad, axis=0) & ~nan
    sign = np.where(np.any(bad & (vals < 0), axis=0), np.uint32(0x80000000), np.uint32(0))
    out = np.where(inf, sign | np.uint32(0x7F800000), out)
    return np.where(nan, np.uint32(0x7FFFE000 if ftype == "f16" else 0x7FFFFFFF), out).astype(np.uint32)


def round_half_away(n: np.ndarray, shift: np.ndarray, sig: int, tiny: int) -> np.ndarray:
    """f32 bits of the integers n (int64) times 2^shift, rounded half away from zero to `sig` significand bits
    (subnormal below 2^(tiny + sig - 1): multiples of 2^tiny)."""
    mag = np.abs(n)
    _, nbits = np.frexp(mag.astype(np.float64))  # mag < 2^nbits (mag < 2^53: exact)
    drop = np.clip(np.maximum(nbits - sig, tiny - shift), 0, 62)
    q = mag >> drop
    rem = mag - (q << drop)
    q = q + ((drop > 0) & (rem >= (np.int64(1) << np.maximum(drop - 1, 0))))
    with np.errstate(over="ignore"):
        v = np.ldexp(q.astype(np.float64), shift + drop).astype(np.float32)
    return np.where(n < 0, -v, np.where(n == 0, np.float32(0), v)).view(np.uint32)


def border_codes(ctype: str, border) -> np.ndarray:
    """A border colour's 4 integer codes in a normalized-read texture's channel type (u8 / s8 / u16 / s16): the
    colour times the largest code in f32, to nearest with ties toward zero (the H100: u8 0.375 -> 96, 0.5 -> 127,
    0.1 -> 25, 0.9 -> 229)."""
    signed = ctype[0] == "s"
    one = (1 << (int(ctype[1:]) - signed)) - 1
    colour = np.clip(np.array(border, np.float64), -1.0 if signed else 0.0, 1.0).astype(np.float32)
    x = (colour * np.float32(one)).astype(np.float64)
    return (np.sign(x) * np.ceil(np.abs(x) - 0.5)).astype(np.int64)


# normalized-read integer texels under linear filtering: the codes weighted exactly (256ths), the sum S widened to a
# 16-bit code as (S mul + 2^(shift - 1)) >> shift and read as unorm16 / snorm16 (snorm: -128 and -32768 weighted as
# they are, the result clamped to -1): u8 exactly * 257 (tex_u8x4_linear_mirror_norm), 16-bit codes as they are
# (tex_u16x1_linear_clamp_normread); s8 near S * (258 + 1/128) / 256 (a sample 63 reads 16254, 64 16513, -64
# -16512), but the code is a function of S that no affine formula with any rounding gives: `SNORM8_TABLE`
NORM_WIDEN = {"u8": (257, 8), "s8": (33025, 15), "u16": (1, 8), "s16": (1, 8)}
# s8: where the code is one below (S * 33025 + 2^14) >> 15, over S = -32768..32512 (a bit per S, np.packbits): every
# S measured by the H100's sweep probe (tex_s8_linear_sweep_probe), and it gives 24,576 random 2D samples' codes too
SNORM8_TABLE = Path(__file__).with_name("data") / "texture_unit.npz"


@cache
def _snorm8_lower() -> np.ndarray:
    """Per S + 32768: 1 where the s8 filter's code is one below the rounded affine widening (SNORM8_TABLE)."""
    with np.load(SNORM8_TABLE) as z:
        return np.unpackbits(z["snorm8_lower"])[: 65281].astype(np.int64)


def blend_codes(ctype: str, codes: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(k, 4) f32 bits of a normalized-read texture's linear filter (channel type `ctype`) of integer codes
    (corners, k, 4) with weights (corners, k) in 256ths (NORM_WIDEN, SNORM8_TABLE)."""
    mul, shift = NORM_WIDEN[ctype]
    total = np.sum(codes * w[:, :, None], axis=0)
    q = (total * mul + (1 << (shift - 1))) >> shift
    if ctype == "s8":
        q = q - _snorm8_lower()[np.clip(total, -32768, 32512) + 32768]
    if ctype[0] == "u":
        return (q / 65535).astype(np.float32).view(np.uint32)
    return np.maximum((q / 32767).astype(np.float32), np.float32(-1.0)).view(np.uint32)
