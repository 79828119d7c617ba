"""Textures and surfaces: samples against numpy indexing of the texels, linear filtering against hand-computed
weights, surface loads and stores with their out-of-range modes, queries, and the one-line errors."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tcforge.ptx.emulate import EmulationError, Surface, Texture, emulate

_HEAD = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 h, .param .u64 c, .param .u64 o)
{
.reg .pred %p<4>; .reg .b16 %rs<8>; .reg .b32 %r<32>; .reg .f32 %f<16>; .reg .b64 %rd<16>;
ld.param.u64 %rd1, [h]; ld.param.u64 %rd2, [c]; ld.param.u64 %rd3, [o];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd4, %r1, 16; add.s64 %rd5, %rd2, %rd4; add.s64 %rd6, %rd3, %rd4;
ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd5];
mov.b32 %f1, %r2; mov.b32 %f2, %r3; mov.b32 %f3, %r4;
"""


def _run(body: str, handle, c: np.ndarray, buffer: np.ndarray, name: str) -> dict:
    ptx = _HEAD + body + "\nret;\n}\n"
    words = np.zeros((len(c), 4), np.uint32)
    words[:, :c.shape[1]] = c
    return emulate(ptx, "k", 1, len(c), {"h": handle, "c": words, "o": np.zeros((len(c), 4), np.uint32),
                                         name: buffer})


def _tex(body_instr: str, tex: Texture, coords, texels: np.ndarray) -> np.ndarray:
    c = np.zeros((len(coords), 4), np.uint32)
    arr = np.asarray(coords)
    c[:, :arr.shape[1]] = arr.astype(np.float32).view(np.uint32) if arr.dtype.kind == "f" else arr
    body = body_instr + "\nst.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};"
    return _run(body, tex, c, texels, tex.buffer)["o"]


TEX2D_F = "tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd1, {%f1, %f2}];\n" \
          "mov.b32 %r10, %f10; mov.b32 %r11, %f11; mov.b32 %r12, %f12; mov.b32 %r13, %f13;"


@pytest.mark.parametrize("mode", ["clamp", "border"])
def test_point_samples_pick_the_texel_under_the_coordinate(mode: str) -> None:
    rng = np.random.default_rng(1)
    tx = rng.standard_normal((5, 7, 2)).astype(np.float32)
    xy = np.stack([rng.uniform(-3, 10, 200), rng.uniform(-3, 8, 200)], 1).astype(np.float32)
    tex = Texture("tx", "f32x2", (7, 5), address=(mode, mode), border=(0.5, -1.0, 2.0, 3.0))
    got = _tex(TEX2D_F, tex, xy, tx).view(np.float32)
    ix, iy = np.floor(xy[:, 0]).astype(int), np.floor(xy[:, 1]).astype(int)
    inside = (ix >= 0) & (ix < 7) & (iy >= 0) & (iy < 5)
    want = np.zeros((200, 4), np.float32)
    want[:, :2] = tx[np.clip(iy, 0, 4), np.clip(ix, 0, 6)]  # missing channels 0, alpha too (the H100's rule)
    if mode == "border":
        want[~inside] = (0.5, -1.0, 0.0, 0.0)  # the border colour in the texture's two channels
    np.testing.assert_array_equal(got, want)


def test_linear_filter_weights_by_hand() -> None:
    tx = np.array([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]], np.float32)[..., None]
    tex = Texture("tx", "f32x1", (3, 2), filter="linear")
    # texel centres give the texel; halfway between two centres the mean; x = 1.25 three quarters of the way from
    # the first centre to the second; 1 + 1/1024 rounds to 1 (8 fraction bits)
    xy = [(0.5, 0.5), (2.5, 1.5), (1.0, 0.5), (1.5, 1.0), (1.25, 0.5), (-7.0, 9.0), (1.0 + 1 / 1024, 0.5)]
    got = _tex(TEX2D_F, tex, xy, tx).view(np.float32)[:, 0]
    np.testing.assert_array_equal(got, [1.0, 32.0, 1.5, (2.0 + 16.0) / 2, 1.0 * 0.25 + 2.0 * 0.75, 8.0, 1.5])


def _exponent(x: Fraction) -> int:
    """floor(log2(|x|)) of a non-zero Fraction, exactly."""
    e = math.floor(math.log2(abs(x)))
    while Fraction(2) ** e > abs(x):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(x):
        e += 1
    return e


def _filtered(tx: np.ndarray, coords, sig: int = 24) -> int:
    """An exact reference of a clamp-addressed one-channel linear sample, 1 to 3 dimensions (tx indexed [z][y][x];
    the H100's texture unit, written apart from ops_tex): fixed-point coordinates with 8 fraction bits rounded half
    up and clamped to the texel centres; each z plane's share Z split along x as x1 = round-half-up(Z a / 256), each
    part along y with the corner on x's side rounded; per z plane, the weighted texels truncated sig + 3 bits below
    the plane's largest exponent (f32 subnormals as 0) and summed exactly; the plane with the smaller sum floored to
    the other's step; the sum over 256 rounded half away to sig bits (f32 bits; only -0 texels weighted: -0)."""
    dims = tx.ndim
    ext = tx.shape[::-1]
    fixed = [min(max(math.floor((Fraction(float(v)) - Fraction(1, 2)) * 256 + Fraction(1, 2)), 0), (n - 1) * 256)
             for v, n in zip(coords, ext, strict=True)]
    lo, frac = [f // 256 for f in fixed], [f % 256 for f in fixed]

    def half_up(n: int) -> int:
        return (n + 128) // 256

    a = frac[0]
    b = frac[1] if dims > 1 else 0
    shares = [256 - frac[2], frac[2]] if dims > 2 else [256]
    weights = {}
    for zb, z_share in enumerate(shares):
        x1 = half_up(z_share * a)
        x0 = z_share - x1
        x1y1, x0y0 = half_up(x1 * b), half_up(x0 * (256 - b))
        for (xb, yb), w in {(0, 0): x0y0, (1, 0): x1 - x1y1, (0, 1): x0 - x0y0, (1, 1): x1y1}.items():
            weights[xb, yb, zb] = weights.get((xb, yb, zb), 0) + w
    plane_sums, signs = [], []
    for zb in range(len(shares)):
        texels = []
        for (xb, yb, zz), w in weights.items():
            if zz != zb or w == 0:
                continue
            idx = [min(lo[0] + xb, ext[0] - 1), min(lo[1] + yb, ext[1] - 1) if dims > 1 else 0,
                   min(lo[2] + zb, ext[2] - 1) if dims > 2 else 0][:dims]
            signs.append(math.copysign(1.0, float(tx[tuple(idx[::-1])])))
            t = Fraction(float(tx[tuple(idx[::-1])]))
            texels.append((w, t if sig != 24 or abs(t) >= Fraction(2) ** -126 else Fraction(0)))
        live = [t for _, t in texels if t]
        if live:
            top = max(_exponent(t) for t in live)
            step = Fraction(2) ** (top - sig - 3)
            plane_sums.append((top, sum(w * math.trunc(t / step) * step for w, t in texels)))
    if not plane_sums:
        return 0x80000000 if signs and max(signs) < 0 else 0
    top = max(plane_sums, key=lambda tv: abs(tv[1]))[0]
    unit = Fraction(2) ** (top - sig - 3)
    total = sum(math.floor(v / unit) * unit for _, v in plane_sums) / 256
    if total == 0:
        return 0
    ulp = Fraction(2) ** max(_exponent(total) - sig + 1, -149 if sig == 24 else -24)
    n = math.floor(abs(total) / ulp + Fraction(1, 2))
    return int(np.float32(math.copysign(float(n * ulp), total)).view(np.uint32))


def test_linear_filter_matches_an_exact_reference() -> None:
    """Random texels over 2^-30..2^30 with both signs and random coordinates: every sample bit for bit against
    `_filtered`; a product weight's tie (a = 106, b = 64: 26.5) gives w11 = 27, so 113 / 79 / 37 / 27."""
    rng = np.random.default_rng(5)
    tx = (rng.standard_normal((5, 6)) * 2.0 ** rng.integers(-30, 30, (5, 6))).astype(np.float32)
    xy = rng.uniform(-1, 7, (300, 2)).astype(np.float32)
    xy[0] = (1.5 + 106 / 256, 1.5 + 64 / 256)
    got = _tex(TEX2D_F, Texture("tx", "f32x1", (6, 5), filter="linear"), xy, tx[..., None])[:, 0]
    want = [_filtered(tx, (float(x), float(y))) for x, y in xy]
    np.testing.assert_array_equal(got, np.array(want, np.uint32))
    t = tx[1:3, 1:3].astype(np.float64)
    exact = (113 * t[0, 0] + 79 * t[0, 1] + 37 * t[1, 0] + 27 * t[1, 1]) / 256
    assert abs(got[0:1].view(np.float32)[0] - exact) <= 2e-6 * np.abs(t).max()


TEX3D_F = "tex.3d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd1, {%f1, %f2, %f3, %f3}];\n" \
          "mov.b32 %r10, %f10; mov.b32 %r11, %f11; mov.b32 %r12, %f12; mov.b32 %r13, %f13;"


@pytest.mark.parametrize("ctype", ["f32", "f16"])
def test_trilinear_and_f16_filters_match_the_exact_reference(ctype: str) -> None:
    """3D f32 and f16 textures (texels over 2^-12..2^12 so that the z planes' exponents differ) and a 2D f16
    one, every sample against `_filtered` (f16: 11 significand bits, so the result is an f16 value); a trilinear
    tie: (a, b, c) = (32, 160, 160) gives the z0 plane 32 / 4 / 52 / 8, where splitting each 2D weight by c
    would give 31 / 4 / 53 / 8."""
    rng = np.random.default_rng(7)
    np_type = np.float32 if ctype == "f32" else np.float16
    sig = 24 if ctype == "f32" else 11
    tx = (rng.standard_normal((3, 4, 5)) * 2.0 ** rng.integers(-12, 12, (3, 4, 5))).astype(np_type)
    xyz = rng.uniform(-1, 6, (300, 3)).astype(np.float32)
    got = _tex(TEX3D_F, Texture("tx", f"{ctype}x1", (5, 4, 3), filter="linear"), xyz, tx[..., None])[:, 0]
    want = [_filtered(tx, tuple(map(float, c)), sig) for c in xyz]
    np.testing.assert_array_equal(got, np.array(want, np.uint32))
    probe = np.zeros((2, 2, 2, 4), np.float32)
    for corner in range(4):
        probe[0, corner >> 1, corner & 1, corner] = 1.0
    w = _tex(TEX3D_F, Texture("tx", "f32x4", (2, 2, 2), filter="linear"), [(0.625, 1.125, 1.125)], probe)
    np.testing.assert_array_equal(w.view(np.float32)[0] * 256, [32, 4, 52, 8])
    xy = xyz[:, :2]
    got = _tex(TEX2D_F, Texture("tx", f"{ctype}x1", (5, 4), filter="linear"), xy, tx[0][..., None])[:, 0]
    np.testing.assert_array_equal(got, np.array([_filtered(tx[0], tuple(map(float, c)), sig) for c in xy], np.uint32))


def test_trilinear_rows_of_the_h100() -> None:
    """H100 truth (tests/data/emulate/tex3d_h100_rows.npz): a: a 6 x 5 x 4 clamp texture of random f32 texels and 20
    of its samples, each one that a variant of the model gets wrong (truncating the smaller plane toward zero
    instead of flooring it, one exponent for both planes, clamping the index instead of the coordinate, 2 or 4
    guard bits, the y split rounded on the upper side throughout); b, c: a sample each of two 4 x 4 x 3 f32x4
    textures with specials where the plane with the larger texel is not the one with the larger sum, which sets the
    step. Against the emulator, and channel 0 against `_filtered`."""
    with np.load(Path(__file__).parents[2] / "data" / "emulate" / "tex3d_h100_rows.npz") as z:
        for key in "abc":
            tx, xyz, gpu = z[f"{key}_texels"], z[f"{key}_coords"], z[f"{key}_gpu"]
            d, h, w, ch = tx.shape
            got = _tex(TEX3D_F, Texture("tx", f"f32x{ch}", (w, h, d), filter="linear"), xyz, tx)[:, :ch]
            np.testing.assert_array_equal(got, gpu)
            want = [_filtered(tx[..., 0], tuple(map(float, c))) for c in xyz]
            np.testing.assert_array_equal(want, gpu[:, 0])


def test_filter_edges_zeros_subnormals_and_huge_normalized_coordinates() -> None:
    """Only -0 texels weighted give -0; an f32 subnormal texel filters as 0; a normalized coordinate of inf,
    -inf, 1e30 or NaN reads as 0 under wrap (here halfway between the last and the first texel)."""
    tx = np.array([[[-0.0], [-0.0], [1e-41], [5.0]]], np.float32)
    tex = Texture("tx", "f32x1", (4, 1), filter="linear")
    got = _tex(TEX2D_F, tex, [(1.0, 0.5), (2.5, 0.5), (3.0, 0.5)], tx)[:, 0]
    np.testing.assert_array_equal(got, [0x80000000, 0, np.float32(2.5).view(np.uint32)])
    tx = np.array([[[1.0], [2.0], [4.0], [8.0]]], np.float32)
    tex = Texture("tx", "f32x1", (4, 1), filter="linear", address=("wrap", "wrap"), normalized=True)
    xs = np.array([np.inf, -np.inf, 1e30, np.nan, 0.0], np.float32)
    got = _tex(TEX2D_F, tex, np.stack([xs, np.full_like(xs, 0.5)], 1), tx).view(np.float32)[:, 0]
    np.testing.assert_array_equal(got, [4.5] * 5)


def test_normalized_wrap_and_mirror_indices() -> None:
    tx = np.arange(4, dtype=np.float32)[None, :, None]
    xs = np.array([0.1, 0.3, 0.6, 0.9, 1.1, 1.4, -0.1, -0.4, 2.1], np.float32)
    xy = np.stack([xs, np.full_like(xs, 0.5)], 1)
    wrap = _tex(TEX2D_F, Texture("tx", "f32x1", (4, 1), address=("wrap", "wrap"), normalized=True), xy, tx)
    mirror = _tex(TEX2D_F, Texture("tx", "f32x1", (4, 1), address=("mirror", "mirror"), normalized=True), xy, tx)
    np.testing.assert_array_equal(wrap.view(np.float32)[:, 0], [0, 1, 2, 3, 0, 1, 3, 2, 0])
    np.testing.assert_array_equal(mirror.view(np.float32)[:, 0], [0, 1, 2, 3, 3, 2, 0, 1, 0])


def test_normalized_integer_reads_and_integer_results() -> None:
    u8 = np.array([[[0, 255, 51, 1]]], np.uint8)
    got = _tex(TEX2D_F, Texture("tx", "u8x4", (1, 1), read="normalized"), [(0.5, 0.5)], u8).view(np.float32)
    np.testing.assert_array_equal(got[0], (np.array([0, 255, 51, 1], np.float64) / 255).astype(np.float32))
    s16 = np.array([[[-32768, -32767, 32767, 5]]], np.int16)[..., :2]
    got = _tex(TEX2D_F, Texture("tx", "s16x2", (1, 1), read="normalized"), [(0.5, 0.5)], s16).view(np.float32)
    np.testing.assert_array_equal(got[0], [-1.0, -1.0, 0.0, 0.0])
    body = "tex.2d.v4.s32.s32 {%r10, %r11, %r12, %r13}, [%rd1, {%r2, %r3}];"
    s8 = np.array([[[-128, 127]], [[-1, 3]]], np.int8)
    got = _tex(body, Texture("tx", "s8x2", (1, 2)), np.array([[0, 1], [0, 9]], np.uint32), s8).view(np.int32)
    np.testing.assert_array_equal(got, [[-1, 3, 0, 0], [0, 0, 0, 0]])  # integer coordinates outside read 0


def test_normalized_reads_filter_integer_codes() -> None:
    """Linear filtering of normalized-read texels (the H100's corpus entries): the codes weighted exactly, the sum
    widened to a 16-bit code and rounded half up (u8 * 257; 16-bit as is; s8 by the measured table, near * (258 +
    1/128), with -128 weighted as it is), then read as unorm16 / snorm16; a border colour first stored as a code,
    ties toward zero."""
    half = [(1.0, 0.5)]  # halfway between texels 0 and 1: weights 128 / 128

    def sample(fmt: str, texels, **kw) -> float:
        dt = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16}[fmt]
        tex = Texture("tx", f"{fmt}x1", (len(texels), 1), filter="linear", read="normalized", **kw)
        return float(_tex(TEX2D_F, tex, half, np.array(texels, dt)[None, :, None]).view(np.float32)[0, 0])

    assert sample("u8", [1, 2]) == np.float32(386 / 65535)  # 1.5 * 257 = 385.5 -> 386
    assert sample("s8", [-128, 64]) == np.float32(-8256 / 32767)  # -32 * 258.0078125 = -8256.25 -> -8256
    # s8: the code is a measured function of the weighted sum S; S = -127 * 193 - 126 * 63 = -32449 gives -32704,
    # one below S * 258.0078125 / 256 = -32703.2 rounded (the H100's sweep probe)
    tex = Texture("tx", "s8x1", (2, 1), filter="linear", read="normalized")
    got = _tex(TEX2D_F, tex, [(0.5 + 63 / 256, 0.5)], np.array([[[-127], [-126]]], np.int8)).view(np.float32)
    assert got[0, 0] == np.float32(-32704 / 32767)
    assert sample("u16", [0, 1001]) == np.float32(501 / 65535)  # 500.5 -> 501
    # border addressing at x = 2.0: texel 1 and the border colour 0.5, stored as 32767 (32767.5, tie toward zero)
    tex = Texture("tx", "u16x1", (2, 1), filter="linear", read="normalized", address=("border", "border"),
                  border=(0.5, 0.0, 0.0, 0.0))
    got = _tex(TEX2D_F, tex, [(2.0, 0.5)], np.array([[[0], [1000]]], np.uint16)).view(np.float32)[0, 0]
    assert got == np.float32(16884 / 65535)  # (1000 + 32767) / 2 = 16883.5 -> 16884


def test_layers_clamp_as_unsigned() -> None:
    """A layer index is clamped as an unsigned number: -1 and 7 read the last layer of three, 1 the second."""
    tx = np.arange(3, dtype=np.float32).reshape(3, 1, 1, 1) + 10
    body = "tex.a2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd1, {%r5, %f1, %f2, %f2}];\n" \
           "mov.b32 %r10, %f10; mov.b32 %r11, %f11; mov.b32 %r12, %f12; mov.b32 %r13, %f13;"
    c = np.zeros((3, 4), np.uint32)
    c[:, :2] = np.float32(0.5).view(np.uint32)
    c[:, 3] = np.array([-1, 7, 1], np.int32).view(np.uint32)
    got = _tex(body, Texture("tx", "f32x1", (1, 1, 3), layered=True), c, tx).view(np.float32)[:, 0]
    np.testing.assert_array_equal(got, [12.0, 12.0, 11.0])


def test_tld4_footprint_order_and_queries() -> None:
    tx = (np.arange(12, dtype=np.float32).reshape(3, 4) * 10)[..., None].repeat(4, -1)
    tx[..., 3] += 1
    tex = Texture("tx", "f32x4", (4, 3))
    body = "tld4.a.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd1, {%f1, %f2}];\n" \
           "mov.b32 %r10, %f10; mov.b32 %r11, %f11; mov.b32 %r12, %f12; mov.b32 %r13, %f13;"
    got = _tex(body, tex, [(1.0, 1.0)], tx).view(np.float32)[0]
    # texels (i, j+1), (i+1, j+1), (i+1, j), (i, j) of the footprint at i = j = 0, channel a
    np.testing.assert_array_equal(got, [tx[1, 0, 3], tx[1, 1, 3], tx[0, 1, 3], tx[0, 0, 3]])
    body = "txq.width.b32 %r10, [%rd1]; txq.height.b32 %r11, [%rd1]; txq.addr_mode_1.b32 %r12, [%rd1];\n" \
           "txq.filter_mode.b32 %r13, [%rd1];"
    q = _tex(body, Texture("tx", "f16x1", (6, 2, 3), layered=True, filter="linear", address=("wrap", "mirror"),
                           normalized=True), [(0, 0)], np.zeros((3, 2, 6, 1), np.float16))
    np.testing.assert_array_equal(q[0], [6, 2, 2, 1])


SULD = "suld.b.2d.v2.b32.{mode} {{%r10, %r11}}, [%rd1, {{%r2, %r3}}];\nmov.u32 %r12, 0; mov.u32 %r13, 0;"
SUST = "mov.u32 %r20, 7; sust.b.2d.b32.{mode} [%rd1, {{%r2, %r3}}], %r20;\n" \
       "mov.u32 %r10, 0; mov.u32 %r11, 0; mov.u32 %r12, 0; mov.u32 %r13, 0;"


def test_surface_loads_by_byte_x_with_clamp_and_zero() -> None:
    sf = np.arange(4 * 3 * 2, dtype=np.uint32).reshape(3, 4, 2)
    c = np.array([[0, 0], [8, 1], [24, 2], [32, 0], [-8, 1], [8, 3], [8, -1]], np.int32).view(np.uint32)
    surf = Surface("sf", "u32x2", (4, 3))
    zero = _tex(SULD.format(mode="zero"), surf, c, sf)
    clamp = _tex(SULD.format(mode="clamp"), surf, c, sf)
    at = [(0, 0), (1, 1), (2, 3), None, None, None, None]
    for k, ij in enumerate(at):
        np.testing.assert_array_equal(zero[k, :2], sf[ij] if ij else [0, 0])
    np.testing.assert_array_equal(clamp[3:, :2], [sf[0, 3], sf[1, 0], sf[2, 1], sf[0, 1]])
    with pytest.raises(EmulationError, match=r"surface access at \(32, 0\) outside .* with \.trap"):
        _tex(SULD.format(mode="trap"), surf, c, sf)


def test_surface_stores_with_zero_and_clamp_and_formatted() -> None:
    c = np.array([[4, 0], [-4, 1], [40, 2], [8, 9]], np.int32).view(np.uint32)
    surf = Surface("sf", "u32x1", (3, 3))
    base = np.full((3, 3, 1), 0xAB, np.uint32)
    zero = _run(SUST.format(mode="zero") + "\nst.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};", surf, c,
                base.copy(), "sf")["sf"]
    want = base.copy()
    want[0, 1] = 7
    np.testing.assert_array_equal(zero, want)
    clamp = _run(SUST.format(mode="clamp"), surf, c, base.copy(), "sf")["sf"]
    for y, x in ((0, 1), (1, 0), (2, 2), (2, 2)):
        want[y, x] = 7
    np.testing.assert_array_equal(clamp, want)
    body = "mov.u32 %r20, 1; mov.u32 %r21, 0; sust.p.2d.v4.b32.trap [%rd1, {%r20, %r21}], {%r2, %r3, %r4, %r5};"

    def store_p(fmt: str, words) -> np.ndarray:
        """The texel sust.p writes at x = 1 sample of a 2 x 1 surface from 4 value words."""
        c = np.array([words], np.uint32)
        ctype, n = fmt.split("x")
        buf = np.zeros((1, 2, int(n)), {"f16": np.float16, "u8": np.uint8, "s8": np.int8, "u16": np.uint16,
                                         "s16": np.int16}[ctype])
        return _run(body, Surface("sf", fmt, (2, 1)), c, buf, "sf")["sf"][0, 1]

    # f16: toward zero (1 + 2^-11 + 2^-12 -> 1; 65520 and 1e6 -> 65504), infinities kept, a NaN's payload truncated
    got = store_p("f16x4", [0x3F801800, 0x477FF000, 0xFF800000, 0xFF94F622]).view(np.uint16)
    np.testing.assert_array_equal(got, [0x3C00, 0x7BFF, 0xFC00, 0xFCA7])
    # integers saturate: unsigned formats read the word as unsigned, signed ones as signed
    np.testing.assert_array_equal(store_p("u8x4", [200, 256, 0xFFFFFFFF, 0]), [200, 255, 255, 0])
    np.testing.assert_array_equal(store_p("s16x2", [40000, 0xFFFF0000, 0, 0]), [32767, -32768])


@pytest.mark.parametrize("red,ctype,mode", [("add", "u32", "trap"), ("min", "s32", "clamp"), ("max", "u32", "zero"),
                                             ("and", "b32", "clamp"), ("or", "b32", "zero"), ("add", "u64", "zero"),
                                             ("min", "s64", "clamp")])
def test_surface_reductions_fold_every_lane_in_order(red: str, ctype: str, mode: str) -> None:
    """sured.b: 64 lanes reduce into 6 words of a 3x2 surface with collisions; the result is numpy's fold of each
    word's operands (signed or unsigned as the type says), .zero dropping and .clamp moving the lanes outside."""
    rng = np.random.default_rng(11)
    wide = ctype.endswith("64")
    es = 8 if wide else 4
    n = 64
    xs = rng.integers(-1 if mode != "trap" else 0, 4 if mode != "trap" else 3, n)
    ys = rng.integers(-1 if mode != "trap" else 0, 3 if mode != "trap" else 2, n)
    v = rng.integers(0, 2**63, (n, 2 if wide else 1), dtype=np.uint64)
    words = v.view(np.uint32).reshape(n, -1)[:, :2] if wide else v.astype(np.uint32)
    c = np.zeros((n, 4), np.uint32)
    c[:, 0] = (xs * es).astype(np.int32).view(np.uint32)
    c[:, 1] = ys.astype(np.int32).view(np.uint32)
    c[:, 2:2 + words.shape[1]] = words
    dt = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64}[ctype]
    sf = rng.integers(0, 2**32, (2, 3, 2 if wide else 1), dtype=np.uint64).astype(np.uint32)
    want = sf.copy().view(dt).reshape(2, 3)
    fold = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}[red]
    operand = c[:, 2:4].copy().view(np.uint64)[:, 0].view(dt) if wide else c[:, 2].view(dt)
    for x, y, o in zip(xs, ys, operand, strict=True):
        if mode == "clamp":
            x, y = min(max(x, 0), 2), min(max(y, 0), 1)
        if 0 <= x < 3 and 0 <= y < 2:
            want[y, x] = fold(want[y, x], o)
    if wide:
        body = f"mov.b64 %rd7, {{%r4, %r5}};\nsured.b.{red}.2d.{ctype}.{mode} [%rd1, {{%r2, %r3}}], %rd7;"
    else:
        body = f"sured.b.{red}.2d.{ctype}.{mode} [%rd1, {{%r2, %r3}}], %r4;"
    got = _run(body, Surface("sf", "u32x2" if wide else "u32x1", (3, 2)), c, sf, "sf")["sf"]
    np.testing.assert_array_equal(got.view(dt).reshape(2, 3), want)


def test_surface_reduction_errors() -> None:
    """sured.p (its reduction follows the surface's format) is refused in one line; .trap outside fails."""
    surf = Surface("sf", "u32x1", (3, 2))
    c = np.array([[12, 0, 1, 0]], np.uint32)
    with pytest.raises(EmulationError, match=r"sured\.p\.add\.2d\.b32\.trap \(sured\.b\..* is emulated; sured\.p"):
        _run("sured.p.add.2d.b32.trap [%rd1, {%r2, %r3}], %r4;", surf, c, np.zeros((2, 3, 1), np.uint32), "sf")
    with pytest.raises(EmulationError, match=r"surface access at \(12, 0\) outside .* with \.trap"):
        _run("sured.b.add.2d.u32.trap [%rd1, {%r2, %r3}], %r4;", surf, c, np.zeros((2, 3, 1), np.uint32), "sf")


def test_text_forms_and_bad_arguments() -> None:
    t = Texture("tx", "u8x4", (12, 5), filter="linear", address=("mirror", "wrap"), normalized=True,
                read="normalized", border=(0.25, 0.0, 0.0, 1.0))
    assert Texture.parse(t.text()) == t
    s = Surface("sf", "f16x2", (4, 3, 2), layered=True)
    assert Surface.parse(s.text()) == s
    for kw, msg in (({"format": "f64x4"}, "not TYPExN"), ({"address": ("wrap", "wrap")}, "need normalized"),
                    ({"format": "u8x1", "filter": "linear"}, "needs float results"),
                    ({"format": "f32x1", "read": "normalized"}, "8- and 16-bit")):
        with pytest.raises(EmulationError, match=msg):
            Texture("tx", **{"format": "f32x1", "dims": (4, 4), **kw})
    with pytest.raises(EmulationError, match="expected 'texture BUFFER FORMAT"):
        Texture.parse("texture tx f32x1 size=4")
    tex = Texture("tx", "f32x1", (2, 2))
    with pytest.raises(EmulationError, match="is not a surface"):
        _tex(SULD.format(mode="zero"), tex, [(0, 0)], np.zeros((2, 2, 1), np.float32))
    with pytest.raises(EmulationError, match="buffer 'tx' has 12 bytes; f32x1 x \\(2, 2\\) needs 16"):
        _tex(TEX2D_F, tex, [(0.5, 0.5)], np.zeros(3, np.float32))
    with pytest.raises(EmulationError, match="returns floats .* asks .s32"):
        _tex("tex.2d.v4.s32.f32 {%r10, %r11, %r12, %r13}, [%rd1, {%f1, %f2}];", tex, [(0.5, 0.5)],
             np.zeros((2, 2, 1), np.float32))


def test_cli_takes_textures_and_surfaces_as_text(tmp_path, capsys) -> None:
    """`tcforge emulate` reads a texture and a surface from the .npz as text; a malformed one is one line, exit 2."""
    from tcforge.cli import main as tcforge_main

    ptx = tmp_path / "k.ptx"
    body = ("tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd1, {%f1, %f2}];\nmov.b32 %r10, %f10;\n"
            "shl.b32 %r21, %r1, 2; sust.b.2d.b32.trap [%rd3, {%r21, %r20}], %r10;\nret;\n}\n")
    ptx.write_text(_HEAD.replace("mov.b32 %f3, %r4;", "mov.b32 %f3, %r4; mov.u32 %r20, 0;") + body)
    tx = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)[..., None]
    c = np.zeros((4, 4), np.float32)
    c[:, 0], c[:, 1] = [3.5, 2.5, 1.5, 0.5], 0.5
    args = tmp_path / "a.npz"
    good = {"h": np.array("texture tx f32x1 dims=4,1"), "o": np.array("surface sf f32x1 dims=4,1")}
    np.savez(args, tx=tx, sf=np.zeros((1, 4, 1), np.float32), c=c.view(np.uint32), **good)
    out = tmp_path / "o.npz"
    assert tcforge_main(["emulate", str(ptx), "--grid", "1", "--block", "4", "--args", str(args), "--out",
                         str(out)]) == 0
    with np.load(out) as z:
        np.testing.assert_array_equal(z["sf"].reshape(-1), [4.0, 3.0, 2.0, 1.0])
    np.savez(args, tx=tx, sf=np.zeros((1, 4, 1), np.float32), c=c.view(np.uint32),
             **{**good, "h": np.array("texture tx f32x1 dims=4,1 filter=cubic")})
    capsys.readouterr()
    rc = tcforge_main(["emulate", str(ptx), "--grid", "1", "--block", "4", "--args", str(args), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "filter 'cubic' is not point or linear" in err, err


def test_handle_inside_a_struct_parameter() -> None:
    """`PARAM@OFFSET` -> a Texture puts its handle in a by-value struct (as the denoiser layers' parameter block
    carries its textures and surfaces), next to buffer addresses."""
    ptx = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .align 8 .b8 p[24])
{
.reg .b32 %r<4>; .reg .f32 %f<8>; .reg .b64 %rd<4>;
ld.param.u64 %rd1, [p+8]; ld.param.u64 %rd2, [p+16];
mov.f32 %f1, 0f3FC00000; mov.f32 %f2, 0f3F000000;
tex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f1, %f2}];
st.global.f32 [%rd2], %f3;
ret;
}
"""
    tx = np.array([[5.0, 6.0, 7.0]], np.float32)[..., None]
    got = emulate(ptx, "k", 1, 1, {"p": np.zeros(24, np.uint8), "p@8": "texture tx f32x1 dims=3,1",
                                   "p@16": "out", "tx": tx, "out": np.zeros(1, np.float32)})
    assert got["out"][0] == 6.0
    with pytest.raises(EmulationError, match=r"argument p@20: offset past the 24-byte parameter"):
        emulate(ptx, "k", 1, 1, {"p": np.zeros(24, np.uint8), "p@20": Texture("tx", "f32x1", (3, 1)), "tx": tx})


def test_texref_variables_are_refused_in_one_line() -> None:
    ptx = """.version 8.5
.target sm_90a
.address_size 64
.global .texref tex0;
.visible .entry k(.param .u64 o)
{
.reg .b32 %r<4>; .reg .f32 %f<8>;
mov.u32 %r1, 0;
tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tex0, {%r1, %r1}];
ret;
}
"""
    with pytest.raises(EmulationError, match=r"^t\.ptx:9: tex\.2d\.v4\.f32\.s32: only bindless handles"):
        emulate(ptx, "k", 1, 1, {"o": np.zeros(4, np.float32)}, file="t.ptx")
