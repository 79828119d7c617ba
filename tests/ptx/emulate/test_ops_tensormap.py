"""tensormap.replace and tensormap.cp_fenceproxy: a kernel copies its tensor-map parameter (or starts from zeroed
shared memory, as Triton's device-side descriptors do), edits every field, publishes the map to global memory and
loads a TMA box through it; the box must be the one a map made with the edited fields loads."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import HEADER, TMA_WAIT_AND_DUMP, tma_box_reference

from tcforge.ptx.emulate import EmulationError, TensorMap, emulate
from tcforge.ptx.emulate.ops_tensormap import ELEMTYPES

_KERNEL = HEADER + """
.visible .entry tmr(
	.param .align 64 .b8 tmr_tmpl[128],
	.param .u64 tmr_work,
	.param .u64 tmr_src2,
	.param .u64 tmr_dump,
	.param .u32 tmr_x,
	.param .u32 tmr_y
)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<64>;
	.reg .b64 %rd<32>;
	.shared .align 1024 .b8 box[8192];
	.shared .align 128 .b8 tm[128];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, bar;
	mov.u32 %r3, box;
	mov.u32 %r6, tm;
	ld.param.u32 %r4, [tmr_x];
	ld.param.u32 %r5, [tmr_y];
	ld.param.u64 %rd20, [tmr_src2];
	ld.param.u64 %rd21, [tmr_work];
	// lanes 0..7 copy 16 bytes each of the map parameter into shared memory (or zeros)
	setp.lt.u32 %p5, %r1, 8;
	@!%p5 bra $Lcopied;
	shl.b32 %r40, %r1, 4;
	mov.b64 %rd10, tmr_tmpl;
	cvta.param.u64 %rd11, %rd10;
	cvt.u64.u32 %rd12, %r40;
	add.s64 %rd13, %rd11, %rd12;
	ld.v4.u32 {{%r20, %r21, %r22, %r23}}, [%rd13];
	{zero}
	add.s32 %r41, %r6, %r40;
	st.shared.v4.u32 [%r41], {{%r20, %r21, %r22, %r23}};
$Lcopied:
	bar.sync 0;
	setp.eq.u32 %p1, %r1, 0;
{edits}
	bar.sync 0;
	setp.lt.u32 %p6, %r1, 32;
	@%p6 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd21], [%r6], 128;
	@%p6 fence.proxy.tensormap::generic.acquire.gpu [%rd21], 128;
	@!%p1 bra $Lsync;
	mbarrier.init.shared::cta.b64 [%r2], 1;
	fence.mbarrier_init.release.cluster;
$Lsync:
	bar.sync 0;
	@%p1 bra $Lissue;
""" + TMA_WAIT_AND_DUMP.replace("DUMP", "tmr_dump").replace("{", "{{").replace("}", "}}") + """	ret;
$Lissue:
	mov.u32 %r30, 8192;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r30;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd21, {{%r4, %r5}}], [%r2];
	bra.uni $Lwait;
}}
"""

# the edits that turn any map into: src2, f32, dims (36, 50), row stride 144, box (8, 256), 32-byte swizzle, zero fill
_EDITS = [("global_address", None, "%rd20"), ("rank", None, 1), ("elemtype", None, ELEMTYPES.index("f32")),
          ("global_dim", 0, 36), ("global_dim", 1, 50), ("global_stride", 0, 144), ("box_dim", 0, 8),
          ("box_dim", 1, 256), ("element_stride", 0, 1), ("element_stride", 1, 1), ("swizzle_mode", None, 1),
          ("interleave_layout", None, 0), ("fill_mode", None, 0)]


def _edit(field: str, ordinal, value, space: str = "shared::cta", at: str = "%r6") -> str:
    width = "b64" if field in ("global_address", "global_stride") else "b32"
    mid = "" if ordinal is None else f"{ordinal}, "
    return f"\t@%p1 tensormap.replace.tile.{field}.{space}.b1024.{width} [{at}], {mid}{value};"


def _kernel(edits, zero: bool = False) -> str:
    return _KERNEL.format(edits="\n".join(_edit(*e) for e in edits),
                          zero="mov.u32 %r20, 0;\n\tmov.u32 %r21, 0;\n\tmov.u32 %r22, 0;\n\tmov.u32 %r23, 0;"
                          if zero else "")


def _args(x: int, y: int, src2: np.ndarray) -> dict:
    tmpl = TensorMap("src", "f16", (72, 50), (144,), (64, 64), 0, "nan")  # every field differs from the edits
    return {"tmr_tmpl": tmpl, "src": np.zeros((50, 144), np.uint8), "tmr_work": np.zeros(128, np.uint8),
            "tmr_src2": src2, "tmr_dump": np.zeros(8192, np.uint8), "tmr_x": x, "tmr_y": y}


@pytest.mark.parametrize("zero", [False, True])
@pytest.mark.parametrize("x,y", [(0, 0), (4, 37)])
def test_replaced_map_loads_the_box_of_its_new_fields(zero: bool, x: int, y: int) -> None:
    """Every field edited (from the template's bytes or from zeros): the box is a 32-byte-swizzled f32 box of src2
    with out-of-bounds rows zero (the template's NaN fill replaced), and the work buffer holds the published map."""
    src2 = np.random.default_rng(5).integers(1, 255, (50, 144), dtype=np.uint8)
    res = emulate(_kernel(_EDITS, zero), "tmr", 1, 128, _args(x, y, src2))
    dump, _ = tma_box_reference(src2, np.zeros((1, 16), np.uint8), np.float32, 32, x, y)
    np.testing.assert_array_equal(res["tmr_dump"], dump)
    tm, base = TensorMap.decode(res["tmr_work"].tobytes())
    assert tm == TensorMap("?", "f32", (36, 50), (144,), (8, 256), 32)


def test_replace_in_global_memory_and_lane_order() -> None:
    """Edits in global memory through the published copy; of two lanes editing one field, the higher lane's value
    stays (lanes run in order)."""
    src2 = np.random.default_rng(6).integers(1, 255, (50, 144), dtype=np.uint8)
    edits = [*_EDITS, ("box_dim", 1, 8)]
    text = _kernel(edits).replace(
        "\t@%p6 fence.proxy.tensormap",
        "\tsetp.lt.u32 %p7, %r1, 2;\n\tadd.s32 %r50, %r1, 63;\n"
        "\t@%p7 tensormap.replace.tile.box_dim.global.b1024.b32 [%rd21], 1, %r50;\n\t@%p6 fence.proxy.tensormap"
    ).replace("mov.u32 %r30, 8192;", "mov.u32 %r30, 2048;")  # the smaller box's bytes
    res = emulate(text, "tmr", 1, 128, {**_args(0, 0, src2), "tmr_dump": np.zeros(8192, np.uint8)})
    tm, _ = TensorMap.decode(res["tmr_work"].tobytes())
    assert tm.box == (8, 64)  # lane 1's 64 over lane 0's 63
    dump, _ = tma_box_reference(src2, np.zeros((1, 16), np.uint8), np.float32, 32, 0, 0)
    np.testing.assert_array_equal(res["tmr_dump"][:64 * 32], dump[:64 * 32])


@pytest.mark.parametrize("edit,match", [
    (("rank", None, 5), r"tensormap\.replace: rank field 5 \(the rank minus one\) is not 0\.\.4"),
    (("elemtype", None, 13), r"elemtype 13 is not one of the sm_90 codes 0\.\.12"),
    (("swizzle_mode", None, 4), r"swizzle_mode 4 is not 0\.\.3"),
    (("box_dim", 5, 8), r"ordinal 5 of box_dim is not 0\.\.4"),
    (("element_stride", 0, 9), r"element stride 9 is not 1\.\.8"),
    (("element_stride", 0, 2), r"tensor map of '<map at 0x[0-9a-f]+>': element strides other than 1 .* not emulated"),
    (("box_dim", 0, 300), r"box extents 1\.\.256"),
    (("swizzle_attributes", None, 0), r"the tensor-map field \.swizzle_attributes \(sm_100 and later\) is not "
                                      "supported")])
def test_bad_edits_are_one_line_errors_at_the_edit_or_the_use(edit, match: str) -> None:
    """A value the map cannot hold fails at tensormap.replace; one the emulator does not run (element strides) or
    the hardware would reject (a box past 256) fails where a TMA instruction uses the map, naming line and thread."""
    with pytest.raises(EmulationError, match=r"k\.ptx:\d+: .*" + match):
        emulate(_kernel([*_EDITS, edit]), "tmr", 1, 128, _args(0, 0, np.zeros((50, 144), np.uint8)), file="k.ptx")


def test_box_edit_of_an_im2col_map_is_refused() -> None:
    """An im2col map's box is its channels and pixels (its corners beside them): tensormap.replace.tile.box_dim on one
    fails at the edit."""
    args = _args(0, 0, np.zeros((50, 144), np.uint8))
    args["tmr_tmpl"] = TensorMap("src", "f16", (16, 9, 8, 1), (32, 288, 2304), (16, 64), lower=(-1, -1), upper=(0, 0))
    with pytest.raises(EmulationError, match=r"k\.ptx:\d+: .*tensormap\.replace\.tile\.box_dim of an im2col map"):
        emulate(_kernel([("box_dim", 0, 8)]), "tmr", 1, 128, args, file="k.ptx")


def test_triton_matmul_on_device_made_descriptors() -> None:
    """Triton 3.8's PTX for a matmul whose three tensor descriptors are made on the device (tensormap.replace into
    its global scratch, cp_fenceproxy, TMA loads past the edges, wgmma, a clipped TMA store), ragged against its
    64 x 64 x 32 tiles: every element of C written, equal to the float64 product to f16 rounding. (Its pointer
    parameters are `.ptr .global .align 1`: the scratch pointer after three .u32 must sit 8-byte aligned.)"""
    from pathlib import Path

    ptx = (Path(__file__).resolve().parents[2] / "data" / "emulate" / "triton_desc_mm_sm90.ptx").read_text()
    m, n, k = 100, 72, 136
    rng = np.random.default_rng(12)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    args = {f"desc_matmul_param_{i}": v for i, v in enumerate((a, b, c, m, n, k, np.zeros(4096, np.uint8),
                                                               np.zeros(256, np.uint8)))}
    got = emulate(ptx, "desc_matmul", (2, 2, 1), (128, 1, 1), args, dynamic_shared=24600)["desc_matmul_param_2"]
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-2)
