"""TMA im2col copies (`cp.async.bulk.tensor.Nd ... .im2col` loads with im2col offsets, `.im2col_no_offs` stores):
the pixel traversal against the worked examples Triton's and CubeCL's im2col tutorials publish, and whole kernels
against a convolution's im2col matrix built by numpy from the convolution's own index formula."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import gluon_conv_reference, im2col_boxes, swizzle_rows
from tools.corpus.asyncproxy import TMA_IM2COL, im2col_conv

from tcforge.ptx.emulate import EmulationError, TensorMap, emulate
from tcforge.ptx.emulate.tensor_map import box_elements, im2col_pixels


def _kernel(rank: int, store: bool = False) -> str:
    """One CTA per row of `i2c_args` (8 s32: the rank's coordinates C first, then its rank - 2 im2col offsets): thread
    0 loads the im2col box, every thread copies the box's shared bytes to dump[ctaid]; with `store`, thread 0 also
    stores the box back through `i2c_out_map` (`.im2col_no_offs`, at the same coordinates)."""
    coords = ", ".join(f"%r{10 + i}" for i in range(rank))
    offs = ", ".join(f"%h{i}" for i in range(rank - 2))
    cvts = "\n".join(f"\tcvt.u16.u32 %h{i}, %r{10 + rank + i};" for i in range(rank - 2))
    load = f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
    out_param = "\t.param .align 64 .b8 i2c_out_map[128],\n" if store else ""
    store_text = f"""\tmov.b64 %rd12, i2c_out_map;
\tcvta.param.u64 %rd13, %rd12;
\tcp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group.im2col_no_offs [%rd13, {{{coords}}}], [%r3];
\tcp.async.bulk.commit_group;
\tcp.async.bulk.wait_group.read 0;
""" if store else ""
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry i2c(
\t.param .align 64 .b8 i2c_map[128],
{out_param}\t.param .u64 i2c_args,
\t.param .u64 i2c_dump,
\t.param .u32 i2c_bytes
)
{{
\t.reg .pred %p<8>;
\t.reg .b16 %h<4>;
\t.reg .b32 %r<64>;
\t.reg .b64 %rd<16>;
\t.shared .align 1024 .b8 box[32768];
\t.shared .align 8 .b64 bar;
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, bar;
\tmov.u32 %r3, box;
\tld.param.u32 %r4, [i2c_bytes];
\tmov.u32 %r5, %ctaid.x;
\tld.param.u64 %rd1, [i2c_args];
\tcvta.to.global.u64 %rd2, %rd1;
\tmul.wide.u32 %rd3, %r5, 32;
\tadd.s64 %rd4, %rd2, %rd3;
\tld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd4];
\tld.global.v4.u32 {{%r14, %r15, %r16, %r17}}, [%rd4+16];
\tsetp.eq.u32 %p1, %r1, 0;
\t@!%p1 bra $Lsync;
\tmbarrier.init.shared::cta.b64 [%r2], 1;
\tfence.mbarrier_init.release.cluster;
$Lsync:
\tbar.sync 0;
\t@!%p1 bra $Lwait;
{cvts}
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r4;
\tmov.b64 %rd5, i2c_map;
\tcvta.param.u64 %rd6, %rd5;
\t{load} [%r3], [%rd6, {{{coords}}}], [%r2], {{{offs}}};
$Lwait:
\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
\t@!%p2 bra $Lwait;
\t@!%p1 bra $Lcopy0;
{store_text}$Lcopy0:
\tld.param.u64 %rd7, [i2c_dump];
\tcvta.to.global.u64 %rd8, %rd7;
\tmul.wide.u32 %rd9, %r5, %r4;
\tadd.s64 %rd8, %rd8, %rd9;
\tshl.b32 %r20, %r1, 4;
$Lcopy:
\tsetp.ge.u32 %p3, %r20, %r4;
\t@%p3 bra $Lend;
\tadd.s32 %r21, %r3, %r20;
\tld.shared.v4.u32 {{%r30, %r31, %r32, %r33}}, [%r21];
\tcvt.u64.u32 %rd10, %r20;
\tadd.s64 %rd11, %rd8, %rd10;
\tst.global.v4.u32 [%rd11], {{%r30, %r31, %r32, %r33}};
\tadd.s32 %r20, %r20, 2048;
\tbra.uni $Lcopy;
$Lend:
\tret;
}}
"""


@pytest.mark.parametrize("name", list(TMA_IM2COL))
def test_im2col_loads_are_the_convolutions_im2col_matrix(name: str) -> None:
    """Every filter tap (im2col offsets) and every tile of `pixels` output rows (start coordinates at the tile's
    first filter corner, tiles crossing into the next image): the box is that tile of the convolution's im2col
    matrix — zero padding (or NaN fill) outside the input, strided traversal, rows past the last image out of
    bounds, channels past C out of bounds (the corpus entry's inputs, run here apart from GPU data)."""
    case = TMA_IM2COL[name]
    x, tm, args = im2col_conv(case, np.random.default_rng(5))
    nbytes = tm.box_bytes
    res = emulate(_kernel(case[0]), "i2c", len(args), 128, {"i2c_map": tm, "x": x, "i2c_args": args,
                                                             "i2c_dump": np.zeros(len(args) * nbytes, np.uint8),
                                                             "i2c_bytes": nbytes})
    dump = res["i2c_dump"].reshape(len(args), nbytes)
    for i, box in enumerate(im2col_boxes(case, x)):
        want = swizzle_rows(box, tm.swizzle) if tm.swizzle else box.reshape(-1).view(np.uint8)
        np.testing.assert_array_equal(dump[i], want, err_msg=f"CTA {i}: coordinates and offsets {args[i]}")


def test_im2col_store_without_offsets_writes_the_visited_pixels() -> None:
    """`.im2col_no_offs` stores the box back along the same traversal (no offsets): the visited in-bounds pixels of a
    fresh output get the loaded values, every other element stays as it was."""
    x, tm, args = im2col_conv((4, (2, 5, 7), 16, "f16", 1, 2, 3, 8, 16, 0, 0, "zero"), np.random.default_rng(6))
    args = args[:1].copy()
    args[0, 4:6] = 0  # no offsets, so the load and the store visit the same pixels
    out = np.full_like(x, 0xABCD)
    out_map = TensorMap("out", tm.dtype, tm.dims, tm.strides, tm.box, lower=tm.lower, upper=tm.upper,
                        traversal=tm.traversal)
    res = emulate(_kernel(4, store=True), "i2c", 1, 128, {"i2c_map": tm, "i2c_out_map": out_map, "x": x, "out": out,
                                                          "i2c_args": args, "i2c_bytes": tm.box_bytes,
                                                          "i2c_dump": np.zeros(tm.box_bytes, np.uint8)})
    want = out.copy()
    px = im2col_pixels(tm, args[0, :4].astype(np.int64), np.zeros(2, np.int64))
    for w, h, n in px:
        if 0 <= w < 7 and 0 <= h < 5 and n < 2:
            want[n, h, w] = x[n, h, w]
    assert len({tuple(p) for p in px}) == len(px) and (want != out).any()
    np.testing.assert_array_equal(res["out"], want)


def _gluon_entry(name: str) -> tuple[dict, dict]:
    """(buffers, the emulator's outputs) of a Gluon corpus entry, built by Triton here."""
    pytest.importorskip("triton.experimental.gluon")
    from tools import emulate_corpus as ec
    from tools.corpus.entries import ENTRIES
    from tools.corpus.modules import MODULES

    module = ec._build_triton(MODULES[name], ec._triton_kernels())
    entry = next(e for e in ENTRIES if e.name == name)
    kernel, grid, block, shared = ec.launch_of(entry, module)
    args, buffers, _ = ec.make_args(module["ptx"], kernel, entry.inputs(np.random.default_rng(8)))
    out, _ = ec.emulate_entry(module["ptx"], kernel, grid, block, shared, args, entry.outputs, buffers)
    return buffers, out


def test_gluon_im2col_tiles_are_the_convolutions_im2col_matrix() -> None:
    """Triton's Gluon compiles a kernel that loads a convolution's im2col tiles through a host TMA im2col descriptor
    (coordinates outermost first, offsets from the filter tap, a 64-byte NVMMA swizzle read back through its layout):
    emulated, every program stores its tap's tile of the im2col matrix (the corpus entry `im2col_gluon_sm90`)."""
    from tools.corpus.asyncproxy import GLUON_IM2COL

    buffers, out = _gluon_entry("im2col_gluon_sm90")
    want = im2col_boxes(GLUON_IM2COL, buffers["x"])
    np.testing.assert_array_equal(np.asarray(out["out"]).reshape(want.shape), want)


def test_gluon_implicit_gemm_convolution_is_the_chained_wgmma_model() -> None:
    """Gluon's implicit-GEMM convolution (im2col TMA for the activations, tiled TMA for the weights, wgmma m64n64k16
    with B MN-major, specials in the input and the weights): emulated, its output is numerics.tensorcore's chain of
    m64n8k16 f16 -> f32 steps from +0 over K = (filter tap, channel) of the convolution's im2col matrix, bit for bit,
    and within 1e-5 of the exact sum where that is finite (the corpus entry `conv_gluon_sm90`)."""
    buffers, out = _gluon_entry("conv_gluon_sm90")
    a, want = gluon_conv_reference(buffers["x"], buffers["wt"])
    m = len(a)
    got = np.asarray(out["out"]).reshape(m, -1).view(np.uint32)
    np.testing.assert_array_equal(got, want)
    with np.errstate(invalid="ignore"):
        exact = a.view(np.float16).astype(np.float64) @ buffers["wt"].view(np.float16).astype(np.float64)
    finite = np.isfinite(exact)
    assert (~finite).any() and finite.sum() > 3000
    np.testing.assert_allclose(got.view(np.float32)[finite], exact[finite], rtol=1e-5, atol=1e-4)


def _tutorial_map(n: int, lower: tuple[int, int], upper: tuple[int, int], channels: int, pixels: int) -> TensorMap:
    return TensorMap("x", "f32", (channels, 4, 4, n), (channels * 4, channels * 16, channels * 64), (channels, pixels),
                     lower=lower, upper=upper)


@pytest.mark.parametrize("n,corner,coords,offsets,want", [
    (1, (0, 0), (0, 0, 0, 0), (0, 0), list(range(1, 17))),
    (1, (-1, -1), (0, -1, -1, 0), (0, 0), [0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11]),
    (1, (-1, -1), (0, -1, -1, 0), (1, 1), list(range(1, 17))),
    (2, (0, 0), (0, 3, 1, 0), (0, 0), list(range(8, 24))),
    (2, (-1, -1), (0, 2, 1, 0), (0, 0), [7, 0, 9, 10, 11, 0, 0, 0, 0, 0, 17, 18, 19, 0, 21, 22]),
], ids=["basic", "padded", "padded_offset", "multi_batch", "padded_multi_batch"])
def test_traversal_matches_the_triton_tutorial(n: int, corner, coords, offsets, want) -> None:
    """Triton's gluon im2col tutorial: a 4×4 NHWC f32 image (pixel k holds k + 1), 16 pixels per column, the
    values it prints for channel 0 (corners and offsets W first here; its lists are H first, equal in each)."""
    x = np.repeat(np.arange(1, 16 * n + 1, dtype=np.float32), 32).reshape(n, 4, 4, 32)
    tm = _tutorial_map(n, corner, corner, 32, 16)
    addr, ok = box_elements(tm, 0, np.array(coords), np.array(offsets))
    got = np.where(ok, x.reshape(-1)[np.clip(addr, 0, x.nbytes - 4) // 4], 0).reshape(16, 32)
    np.testing.assert_array_equal(got[:, 0], want)
    assert (got == got[:, :1]).all()


@pytest.mark.parametrize("offsets,want", [
    ((0, 0), [0, 0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9]),
    ((1, 0), [0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0]),
    ((0, 1), [0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 0, 0, 0]),
    ((1, 1), [1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 0, 0, 0, 0]),
])
def test_traversal_matches_cubecls_test(offsets, want) -> None:
    """CubeCL's im2col tensor-map test: a 3×3 NHWC image, corners lower (-1, -1) and upper (0, 0), 16 pixels from
    (-1, -1): each pixel's number (0: filled), for offsets (w, h)."""
    tm = TensorMap("x", "f16", (8, 3, 3, 1), (16, 48, 144), (8, 16), lower=(-1, -1), upper=(0, 0))
    addr, ok = box_elements(tm, 0, np.array([0, -1, -1, 0]), np.array(offsets))
    pixel = np.where(ok, addr // 16 + 1, 0).reshape(16, 8)
    np.testing.assert_array_equal(pixel[:, 0], want)


def test_map_encoding_text_and_checks() -> None:
    """An im2col map survives its 128-byte encoding and its text form; bad maps and bad copies fail in one line."""
    tm = TensorMap("x", "bf16", (64, 9, 8, 7, 2), (128, 1152, 9216, 64512), (64, 128), 128, "nan",
                   lower=(-1, -2, -3), upper=(4, -5, 6), traversal=(2, 3, 1))
    plain = TensorMap("x", "f16", (16, 8, 8, 1), (32, 256, 2048), (16, 32), lower=(0, -1), upper=(0, 0))
    for m in (tm, plain):
        assert TensorMap.decode(m.encode(0x1000), "x") == (m, 0x1000)
        assert TensorMap.parse(m.text()) == m
    bad = [(dict(lower=(-1,), upper=(0,)), "needs 2 lower and upper corners"),
           (dict(lower=(-200, 0), upper=(0, 0)), "leave the rank-4 range -128..127"),
           (dict(lower=(0, 0), upper=(-9, 0)), "bounding box .* is empty"),
           (dict(lower=(0, 0), upper=(0, 0), traversal=(9, 1)), "traversal strides"),
           (dict(upper=(0, 0)), "belong to an im2col map")]
    for kw, msg in bad:
        with pytest.raises(EmulationError, match=msg):
            TensorMap("x", "f16", (16, 8, 8, 1), (32, 256, 2048), (16, 32), **kw)
    with pytest.raises(EmulationError, match=r"box is \(channels 1..256, pixels 1..1024\)"):
        TensorMap("x", "f16", (16, 8, 8, 1), (32, 256, 2048), (16, 2048), lower=(0, 0), upper=(0, 0))


@pytest.mark.parametrize("args,tiled,msg", [
    ([0, 5, 0, 0, 0, 0], False, r"im2col start \(5, 0\) lies outside the bounding box"),
    ([0, 0, 0, 0, 256, 0], False, r"im2col offsets \(256, 0\): a rank-4 map takes 2, each 0..255"),
    ([0, 0, 0, 0, 0, 0], True, "an im2col copy through a tiled tensor map"),
])
def test_bad_im2col_copies_fail_in_one_line(args, tiled: bool, msg: str) -> None:
    tm = TensorMap("x", "f16", (16, 4, 4, 1), (32, 128, 512), (16, 16), lower=(0, 0), upper=(0, 0))
    if tiled:
        tm = TensorMap("x", "f16", (16, 4, 4, 1), (32, 128, 512), (16, 4, 4, 1))
    with pytest.raises(EmulationError, match=msg) as exc:
        emulate(_kernel(4), "i2c", 1, 32, {"i2c_map": tm, "x": np.zeros((1, 4, 4, 16), np.uint16),
                                           "i2c_args": np.array([args + [0, 0]], np.int32),
                                           "i2c_dump": np.zeros(512, np.uint8), "i2c_bytes": 512})
    assert "\n" not in str(exc.value)
