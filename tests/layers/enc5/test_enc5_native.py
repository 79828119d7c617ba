"""The native enc5 kernel (tcforge.layers.enc5.gpu): the API's argument checks (they raise before touching the
device); the forms build for sm_90a without spills, their constants agree with the Python layout, and the launcher
reads each form's launch shape from its source; the 3-CTA build's dispatch-order swaps (`kernel.dispatch_swaps`:
exact swaps for a 4K frame, always a permutation, never a worse modelled SM load, nothing to do where there is nothing
to balance; the parameter block carries them); `tcforge spec` on the kernel's own PTX (all loops unrolled); on the
GPU (marked `gpu`): bit-identical to the CPU reference (both numerics), untouched bytes kept, the batched entry point
equal to frame-by-frame runs.

The spec builds are test forms written here (SPEC_FORMS, PTX only, never launched): `spec_plain` turns off the
hand-issued HMMA pairs (qv_f16a) and the MLP's shared-memory weight ring (mlp_smem) so that every mma reads as the
layer's m16n8k32 e4m3 with its weights loaded from global memory — the layer's 1306 mma per warp, with the MLP's 20
odd/even phase pairs in the corrected shapes (docs/enc5.md explains the other differences); `spec_shipped` is
the shipped one-CTA form, whose P1-P10 mma are two m16n8k16 f16 each; `spec_split` the 2-CTA-cluster form."""

from __future__ import annotations

import ctypes
import itertools
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5 import Assumptions, Inputs, WeightImage, reference
from tcforge.layers.enc5 import epilogues as ep
from tcforge.layers.enc5.gpu import available, kernel, native
from tcforge.layers.enc5.gpu.kernel import Geometry, debug_layout, function
from tcforge.layers.enc5.layout import HEAD_SLOT, mlp_chunk_offsets, region


@pytest.fixture(scope="module")
def case() -> tuple[WeightImage, Inputs]:
    return WeightImage.synthetic(0), Inputs.synthetic((12, 9), 0, ox=3, oy=1)


def test_available_is_a_bool() -> None:
    assert isinstance(available(), bool)


def test_geometry_is_ceil_windows_times_frames() -> None:
    assert Geometry(40, 23).grid == (5, 3, 1)
    assert Geometry(37, 21, 64).grid == (5, 3, 64)
    assert Geometry(120, 68).windows == 135


@pytest.mark.parametrize("numerics", ["fp8", "", "Hopper"])
def test_unknown_numerics_is_refused(case, numerics: str) -> None:
    w, x = case
    with pytest.raises(TcforgeError, match="numerics"):
        native(w, x, numerics)


def test_non_default_assumptions_are_refused(case) -> None:
    w, x = case
    with pytest.raises(TcforgeError, match="default assumptions"):
        native(w, x, "hopper", assumptions=Assumptions(halo_order="ring"))


def test_inputs_type_is_checked(case) -> None:
    w, _ = case
    with pytest.raises(TcforgeError, match="inputs"):
        native(w, np.zeros(10, np.uint8), "hopper")


def test_unknown_form_is_refused() -> None:
    with pytest.raises(TcforgeError, match="kernel form must be one of hopper, ada, hopper_split"):
        function("turing")


def test_overlapping_buffers_are_detected() -> None:
    from tcforge.layers.enc5.gpu.kernel import ranges_overlap

    assert ranges_overlap((1000, 100), (1099, 10))  # last byte of one = first of the other
    assert not ranges_overlap((1000, 100), (1100, 10))  # adjacent, no shared byte
    assert ranges_overlap((1000, 100), (900, 1000))  # contained
    assert not ranges_overlap((1000, 0), (1000, 10))  # empty range


class _Buf:
    """Stand-in for a CUDA tensor: just an address range."""

    def __init__(self, ptr: int, n: int, size: int = 1) -> None:
        self.ptr, self.n, self.size = ptr, n, size

    def data_ptr(self) -> int:
        return self.ptr

    def numel(self) -> int:
        return self.n

    def element_size(self) -> int:
        return self.size


def test_aliasing_check_names_the_buffers() -> None:
    from tcforge.layers.enc5.gpu.api import _check_no_aliasing

    inputs = {"inputs": _Buf(0, 4096), "texture": _Buf(8192, 512, 2), "weights": _Buf(1 << 20, 431136)}
    _check_no_aliasing({"arena": _Buf(4096, 4096), "surface": _Buf(16384, 512, 2)}, inputs)  # disjoint: fine
    with pytest.raises(TcforgeError, match="arena overlaps inputs"):
        _check_no_aliasing({"arena": _Buf(4000, 4096)}, inputs)
    with pytest.raises(TcforgeError, match="surface overlaps texture"):
        _check_no_aliasing({"surface": _Buf(9000, 16, 2)}, inputs)  # inside the texture's 1024 bytes
    with pytest.raises(TcforgeError, match="arena overlaps surface"):
        _check_no_aliasing({"arena": _Buf(20000, 64), "surface": _Buf(20032, 64, 2)}, inputs)


SRC = kernel.source("hopper") + kernel.source("hopper_split")  # every shared header


def _const(name: str) -> int:
    m = re.search(rf"\b{name}\s*=\s*(0x[0-9A-Fa-f]+|\d+)u?\b", SRC)
    assert m, f"{name} not found in the kernel headers"
    return int(m.group(1), 0)


def test_parameter_block_matches_the_original_offsets() -> None:
    p = kernel.Enc5Params
    assert ctypes.sizeof(p) == 144
    offsets = {name: getattr(p, name).offset for name, _ in p._fields_}
    assert offsets["ex"] == 0 and offsets["ey"] == 4
    assert offsets["input"] == 8 and offsets["weights"] == 40 and offsets["arena"] == 48
    assert offsets["ox"] == 80 and offsets["oy"] == 82
    assert offsets["texture"] == 88 and offsets["surface"] == 112
    assert offsets["debug"] == 24  # an offset the original never reads


def test_weight_offsets_in_the_kernel_match_the_weight_map() -> None:
    assert _const("HEAD_SLOT") == HEAD_SLOT
    assert _const("OFF_Q") == region("head0.q").start
    assert _const("OFF_V") == region("head0.v").start
    assert _const("OFF_SBIAS") == region("head0.score_bias").start
    assert _const("OFF_WO") == region("head0.wo").start
    assert _const("OFF_PROJ_BIAS") == region("proj_bias").start
    assert _const("OFF_MLP_GAIN") == region("mlp_gain").start
    assert _const("OFF_OUT_BIAS") == region("mlp_out_bias").start
    assert _const("OFF_HEAD") == region("head_out").start
    assert _const("OFF_HEAD_BIAS") == region("head_out_bias").start
    # chunk_base(i) = 222144 + 10304 i + (i > 0 ? 320 : 0): fc1, bias at +5120, fc2 at +5184
    assert "222144 + 10304 * i + (i > 0 ? 320 : 0)" in SRC
    for i in range(20):
        fc1, b1, fc2 = mlp_chunk_offsets(i)
        base = 222144 + 10304 * i + (320 if i else 0)
        assert (fc1, b1, fc2) == (base, base + 5120, base + 5184)


def test_epilogue_constants_match_the_reference() -> None:
    pairs = {"C_SCALE": ep.SOFTMAX_SCALE, "C_CLAMP_HI": ep.CLAMP_HI, "C_CLAMP_LO": ep.CLAMP_LO,
             "C_CUBIC1": ep.CUBIC_C1, "C_CUBIC0": ep.CUBIC_C0, "C_ACT_A": ep.ACT_A, "C_ACT_B": ep.ACT_B,
             "C_HALF": ep.ACT_HALF, "C_TWO": ep.ACT_TWO}
    for name, half in pairs.items():
        assert _const(name) == int(half) * 0x10001, name  # f16x2: the value in both halves
    assert _const("C_EPS") == int(ep.NORM_EPS)
    assert "0f3FB8AA3B" in SRC  # E61's log2(e), as the reference's LOG2E_F32
    assert ep.LOG2E_F32.view("<u4") == 0x3FB8AA3B


def test_debug_layout_matches_the_kernel() -> None:
    lay = debug_layout()
    assert _const("DBG_TOTAL") == lay["total"]
    for name, (_, _, off, _) in lay["parts"].items():
        assert _const(f"DBG_{name.upper()}") == off, name


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_hopper_kernel_compiles_for_sm90a_without_spills() -> None:
    mod = kernel.compile_form("hopper")
    st = mod.stats[kernel.FORMS["hopper"].entry]
    assert mod.arch == "sm_90a"
    assert st.registers <= 255
    assert not st.spills, f"enc5_hopper spills: {st}"
    assert st.shared_bytes <= 48 * 1024


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_ada_kernel_compiles_for_sm90a_without_spills() -> None:
    mod = kernel.compile_form("ada")
    st = mod.stats["enc5_ada"]
    assert mod.arch == "sm_90a" and st.registers <= 255
    assert st.spill_stores == st.spill_loads == 0, f"enc5_ada spills: {st}"
    assert st.stack_frame <= 256  # the cold -0 path's call and its operands (ada.cu: negzero_step)


def test_forms_are_chosen_by_name_with_the_launch_shape_of_their_source() -> None:
    forms = kernel.FORMS
    assert set(forms) == {"hopper", "ada", "hopper_split", "hopper_split_occ3"}
    for name, f in forms.items():
        assert f.path.name == f"{name}.cu" and f.entry == f"enc5_{name}"
        assert f"{f.entry}(const __grid_constant__ Enc5Params prm)" in f.path.read_text()
    assert forms["hopper"].block == forms["ada"].block == (32, 1, 8) and forms["hopper"].cluster == 1
    assert forms["hopper_split"].block == (32, 1, 4) and forms["hopper_split"].cluster == 2
    assert forms["hopper"].dynamic_smem == 0
    ada_smem = kernel.constant(kernel.source("ada"), "ENC5_DYNAMIC_SMEM")
    assert forms["ada"].dynamic_smem == ada_smem == 167424  # < 227 KB: one CTA per SM
    # the dynamic shared memory of the cluster forms: the header's constants, which static_assert sizeof(SplitSmem)
    assert re.search(r"static_assert\(sizeof\(SplitSmem<true>\) == SPLIT_SMEM_BYTES", SRC)
    assert re.search(r"static_assert\(sizeof\(SplitSmem<false>\) == SPLIT_SMEM_BYTES_REG_WO", SRC)
    split, occ3 = forms["hopper_split"].dynamic_smem, forms["hopper_split_occ3"].dynamic_smem
    assert split == _const("SPLIT_SMEM_BYTES") == 109536 and occ3 == _const("SPLIT_SMEM_BYTES_REG_WO") == 68576
    assert 3 * (occ3 + 1024) <= 228 * 1024  # three CTAs per SM
    assert 2 * (split + 1024) <= 228 * 1024  # two
    assert kernel.Geometry(40, 23, 1, ctas_per_window=2).grid == (10, 3, 1)
    assert kernel.Geometry(40, 23, 1, ctas_per_window=2).windows == 15


def test_tool_forms_come_from_the_checkout() -> None:
    assert set(kernel.tool_forms()) == {"hopper_debug", "hopper_timing", "hopper_split_timing",
                                        "hopper_split_occ3_timing", "tile_check"}
    timing = kernel.form("hopper_split_occ3_timing")
    assert timing.dynamic_smem == kernel.FORMS["hopper_split_occ3"].dynamic_smem and timing.cluster == 2
    assert kernel.form("hopper_debug").block == (32, 1, 8)
    assert "ENC5_VARIANT" not in SRC and "#if" not in SRC  # forms are files and traits, not preprocessor branches


def test_source_inlines_each_header_once() -> None:
    text = kernel.source("hopper_split")
    assert text.count("struct __align__(8) Enc5Params {") == 1
    assert "#pragma once" not in text
    # what stays is the shared library's, found on nvcc's include path (tcforge.runtime passes it)
    assert all(line.startswith('#include "tcforge/') for line in text.splitlines() if line.startswith('#include "'))
    assert kernel.constant(text, "ENC5_DYNAMIC_SMEM") == 109536


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_split_kernel_compiles_for_sm90a_without_spills() -> None:
    mod = kernel.compile_form("hopper_split")
    st = mod.stats["enc5_hopper_split"]
    assert st.registers <= 255  # 128 threads: two CTAs per SM at up to 255 registers
    assert not st.spills and not st.stack_frame, f"enc5_hopper_split spills: {st}"


def test_auto_variant_choice_follows_the_launch_size() -> None:
    from tcforge.layers.enc5.gpu.api import choose_hopper_variant

    assert choose_hopper_variant(15) == "hopper_split"  # one 720p frame: latency-bound, a CTA pair per window
    assert choose_hopper_variant(132) == "hopper_split"  # every CTA pair still has SM room of its own
    assert choose_hopper_variant(135) == "hopper_split_occ3"  # one 4K frame: 270 CTAs > 2 x 132 slots (39.3 us)
    assert choose_hopper_variant(198) == "hopper_split_occ3"  # 396 CTAs = 3 x 132: still one wave
    assert choose_hopper_variant(270) == "hopper_split_occ3"  # two 4K frames: 69 us (the one-CTA form 71.6 us)
    assert choose_hopper_variant(300) == "hopper"
    assert choose_hopper_variant(15 * 64) == "hopper"  # batches: throughput-bound
    assert choose_hopper_variant(135, sms=114) == "hopper_split_occ3"  # H100 PCIe: 114 SMs
    assert choose_hopper_variant(114, sms=114) == "hopper_split"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize(("name", "spill_limit"), [("hopper_split_occ3", 64),  # the timing twin with --slow
                                                   pytest.param("hopper_split_occ3_timing", 128,
                                                                marks=pytest.mark.slow)])
def test_split_occ3_kernel_fits_three_ctas_per_sm(name: str, spill_limit: int) -> None:
    f = kernel.form(name)
    st = kernel.compile_form(f).stats[f.entry]
    assert st.registers <= 168  # 3 x 128 threads x 168 <= 65536
    # measured: 64 B (the timing twin 64 B): stored after P10 and reloaded at P13 (cuobjdump on the device), outside
    # the loops
    assert st.spill_stores <= spill_limit, f"more spill than measured when it was written: {st}"


def sm_loads(ex: int, ey: int, oy: int, sms: int, swaps) -> list[int]:
    """Live m-tiles per SM under breadth-first dispatch (CTA j on SM j mod sms), both CTAs of a cluster counted."""
    weights = kernel.window_weights(ex, ey, oy)
    loads = [0] * sms
    for c in range(len(weights)):
        w = weights[kernel.apply_swaps(c, swaps)]
        loads[(2 * c) % sms] += w
        loads[(2 * c + 1) % sms] += w
    return loads


def test_live_mtiles_counts_query_rows_inside_the_frame() -> None:
    assert kernel.live_mtiles(0, 68) == 4
    assert kernel.live_mtiles(64, 68) == 2  # 4K bottom row: token rows 64..67 of 64..71
    assert kernel.live_mtiles(16, 23) == 4  # 720p bottom row: row 22 keeps m-tile 3 alive
    assert kernel.live_mtiles(-5, 21) == 2  # origin 5: rows -5..-2 are m-tiles 0 and 1
    assert kernel.live_mtiles(-2, 10) == 3
    assert kernel.live_mtiles(6, 10) == 2


def test_4k_frame_swaps_put_light_windows_on_the_three_cta_sms() -> None:
    swaps = kernel.dispatch_swaps(120, 68, 0, 132, 3)
    # 270 CTAs: SMs 0..5 hold CTAs j, j + 132, j + 264 = clusters 0..2, 66..68, 132..134; the bottom row is 120..134
    assert swaps == ((0, 120, 3), (66, 123, 3))
    assert max(sm_loads(120, 68, 0, 132, swaps)) == 8 < max(sm_loads(120, 68, 0, 132, ())) == 10


@pytest.mark.parametrize(("ex", "ey", "oy", "sms"), [(120, 68, 0, 132), (120, 68, 3, 132), (100, 70, 0, 114),
                                                     (96, 92, 6, 132), (120, 68, 0, 114), (64, 150, 0, 132)])
def test_swaps_are_a_permutation_and_never_worsen_the_load(ex: int, ey: int, oy: int, sms: int) -> None:
    swaps = kernel.dispatch_swaps(ex, ey, oy, sms, 3)
    clusters = -(-ex // 8) * -(-ey // 8)
    assert sorted(kernel.apply_swaps(c, swaps) for c in range(clusters)) == list(range(clusters))
    ranges = [range(a, a + n) for a, _, n in swaps] + [range(b, b + n) for _, b, n in swaps]
    for r1, r2 in itertools.combinations(ranges, 2):
        assert not set(r1) & set(r2)  # the kernel applies the first matching swap: ranges must not overlap
    assert len(swaps) <= kernel.MAX_SWAPS
    assert max(sm_loads(ex, ey, oy, sms, swaps)) <= max(sm_loads(ex, ey, oy, sms, ()))


def test_nothing_to_balance_gives_no_swaps() -> None:
    assert kernel.dispatch_swaps(40, 23, 0, 132, 3) == ()  # 15 windows: one CTA per SM at most
    assert kernel.dispatch_swaps(120, 64, 0, 132, 3) == ()  # 120 windows, all full
    assert kernel.dispatch_swaps(240, 136, 0, 132, 3) == ()  # 510 windows: not one wave
    assert kernel.dispatch_swaps(120, 68, 0, 131, 3) == ()  # odd SM count: clusters straddle passes


def test_parameter_block_carries_the_swaps() -> None:
    p = kernel.params(120, 68, 0, 0, input_ptr=1, weights_ptr=2, arena_ptr=3, texture_ptr=4, surface_ptr=5,
                      order=((0, 120, 3), (66, 123, 3)))
    raw = bytes(p)
    assert len(raw) == 144
    words = [int.from_bytes(raw[56 + 2 * i:58 + 2 * i], "little") for i in range(12)]
    assert words == [0, 120, 3, 66, 123, 3] + [0] * 6
    assert raw[80:84] == bytes(4)  # ox, oy right after
    with pytest.raises(TcforgeError, match="order"):
        kernel.params(8, 8, 0, 0, input_ptr=1, weights_ptr=2, arena_ptr=3, texture_ptr=4, surface_ptr=5,
                      order=((0, 1, 1),) * 5)
    with pytest.raises(TcforgeError, match="order"):
        kernel.params(8, 8, 0, 0, input_ptr=1, weights_ptr=2, arena_ptr=3, texture_ptr=4, surface_ptr=5,
                      order=((0, 70000, 1),))


NEEDS_NVCC = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
SPEC_FORMS = {  # test forms of the spec builds: every loop unrolled (j_unroll, ks_unroll, mlp_unroll)
    "spec_plain": """\
// Test form for `tcforge spec`: the one-CTA form with every loop unrolled,
// P1-P10's A staged as e4m3 and the MLP weights loaded from global memory, so every mma reads as the layer's
// m16n8k32 e4m3 with its weights from the weight image. PTX only (never launched).
#include "enc5_window.cuh"

struct SpecPlainForm : WindowForm {
    static constexpr bool qv_f16a = false;
    static constexpr int j_unroll = 8;
    static constexpr int ks_unroll = 5;
    static constexpr int mlp_unroll = 20;
};

extern "C" __global__ void __launch_bounds__(256, 1) enc5_spec_plain(const __grid_constant__ Enc5Params prm) {
    enc5_body<SpecPlainForm>(prm);
}
""",
    "spec_shipped": """\
// Test form: the shipped one-CTA form (HopperForm) with every loop unrolled, for counting its mma in the PTX.
#include "enc5_window.cuh"

struct SpecShippedForm : HopperForm {
    static constexpr int j_unroll = 8;
    static constexpr int ks_unroll = 5;
    static constexpr int mlp_unroll = 20;
};

extern "C" __global__ void __launch_bounds__(256, 1) enc5_spec_shipped(const __grid_constant__ Enc5Params prm) {
    enc5_body<SpecShippedForm>(prm);
}
""",
    "spec_split": """\
// Test form for `tcforge spec`: the 2-CTA-cluster form (HopperSplitForm) with every loop unrolled. PTX only.
#include "enc5_split.cuh"

struct SpecSplitForm : HopperSplitForm {
    static constexpr int j_unroll = 8;
    static constexpr int ks_unroll = 5;
    static constexpr int mlp_unroll = 20;
};

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    enc5_spec_split(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<SpecSplitForm>(prm);
}
""",
}


def ptx_of(form: str, out: Path) -> Path:
    """nvcc -ptx of a test form of SPEC_FORMS (headers inlined as the launcher compiles them), all loops unrolled."""
    form_file = out.with_name(f"{form}.cu")
    form_file.write_text(SPEC_FORMS[form])
    src = out.with_suffix(".cu")
    src.write_text(kernel.source_text(form_file))
    subprocess.run(["nvcc", "-ptx", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-std=c++17", "--use_fast_math",
                    "-I", str(kernel.INCLUDE_DIR), "-o", str(out), str(src)], check=True)
    return out


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> dict:
    from tcforge.ptx.analysis import analyse
    from tcforge.ptx.module import read_module_file

    ptx = ptx_of("spec_plain", Path(tmp_path_factory.mktemp("enc5ptx")) / "enc5_full.ptx")
    return analyse(read_module_file(str(ptx)), "enc5_spec_plain", block=(32, 1, 8)).to_dict()


@NEEDS_NVCC
def test_total_mma_count_equals_the_layer(spec: dict) -> None:
    # per warp of the original: P1–P10 10×24, P11 48, P12 48, P13–P20 8×20, P21–P60 40×20, P61 10
    assert sum(p["mma"] for p in spec["phases"]) == 10 * 24 + 48 + 48 + 8 * 20 + 40 * 20 + 10 == 1306


@NEEDS_NVCC
def test_mlp_phases_have_the_corrected_shapes(spec: dict) -> None:
    shapes = [(p["M"], p["N"], p["K"], p["mma"]) for p in spec["phases"]]
    assert shapes.count((16, 32, 160, 20)) == 20  # fc1 chunks: 16×32×160, 4 chains of 5
    assert shapes.count((16, 160, 32, 20)) >= 20 + 6  # fc2 chunks + Wo phases (the last two heads may merge)


@NEEDS_NVCC
def test_parameter_reads_are_the_originals(spec: dict) -> None:
    # the analysis's §1.1: extents +0 (v2.u32), input +8, W +40, arena +48, origins +80 (v2.u16), +88, +112
    assert spec["param_offsets"] == [0, 8, 40, 48, 80, 88, 112]
    types = {p["offset"]: p["type"] for p in spec["params"]}
    assert types[0] == "v2.u32" and types[80] == "v2.u16" and types[40] == "u64"


@NEEDS_NVCC
def test_shipped_build_issues_the_hmma_pairs_by_hand(tmp_path) -> None:
    # P1-P10 (10 x 24 per warp) become pairs of m16n8k16 f16; the other 1066 stay m16n8k32 e4m3
    ptx = ptx_of("spec_shipped", tmp_path / "enc5_shipped.ptx")
    text = ptx.read_text()
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") == 2 * 10 * 24
    assert text.count("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16") == 1306 - 10 * 24
    assert text.count("cp.async.cg.shared.global") > 0  # the MLP's weight ring


@NEEDS_NVCC
def test_split_kernel_spec_counts_each_ctas_half(tmp_path) -> None:
    """The 2-CTA-cluster kernel (all loops unrolled): per CTA 4 heads of P1-P12, half of every N = 160 phase and of
    fc1's hidden tiles: 1086 mma (P1-P10 as 480 hand-issued m16n8k16, 96 P11/P12, 80 P13-P20, 20 x 20 + 20 MLP, 10 P61),
    with P13-P20 as one 16 x 80 x 256 phase (the CTA's 80 columns, 8 chained heads) and the MLP in 20 phases."""
    from tcforge.ptx.analysis import analyse
    from tcforge.ptx.module import read_module_file

    ptx = ptx_of("spec_split", tmp_path / "enc5_split.ptx")
    text = ptx.read_text()
    # one head per warp: 6 m-tiles x 5 k-steps x 4 n-tiles x (Q, V), each as two m16n8k16
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") == 6 * 5 * 4 * 2 * 2
    spec = analyse(read_module_file(str(ptx)), "enc5_spec_split", block=(32, 1, 4)).to_dict()
    assert sum(p["mma"] for p in spec["phases"]) == 480 + 96 + 80 + 20 * 20 + 20 + 10 == 1086
    shapes = [(p["M"], p["N"], p["K"], p["mma"]) for p in spec["phases"]]
    assert shapes.count((16, 80, 256, 80)) == 1
    assert shapes.count((16, 96, 32, 12)) == 4 and shapes.count((16, 32, 96, 12)) == 4
    assert spec["param_offsets"] == [0, 8, 40, 48, 80, 88, 112]


@pytest.fixture(scope="module")
def gpu_case() -> tuple[WeightImage, Inputs]:
    return WeightImage.synthetic(21), Inputs.synthetic((13, 11), 22, ox=5, oy=4)


@pytest.mark.gpu
@pytest.mark.parametrize("numerics", ["hopper", "ada"])
def test_bit_identical_to_reference_with_poisoned_outputs(gpu_case, numerics: str) -> None:
    from tcforge.layers.enc5.gpu import native

    w, x = gpu_case
    arena0 = np.full(5 * x.ey * x.ex * 32, 0xA5, np.uint8)
    surf0 = np.full((x.ey, x.ex, 4), 0xA5A5, np.uint16)
    ref = reference(w, x, numerics=numerics, arena=arena0, surface=surf0)
    got = native(w, x, numerics, arena=arena0, surface=surf0)
    arena = got.arena.cpu().numpy()
    surface = got.surface.cpu().numpy().view(np.uint16)
    assert int(np.count_nonzero(arena != ref.arena)) == 0
    assert int(np.count_nonzero(surface != ref.surface)) == 0
    untouched = np.all(ref.surface == 0xA5A5, axis=-1)
    assert untouched.any()  # origin (5, 4): windows end at x = 10, so columns 11, 12 stay untouched
    assert np.all(surface[untouched] == 0xA5A5)


@pytest.mark.gpu
def test_batch_equals_single_frames(gpu_case) -> None:
    import torch

    from tcforge.layers.enc5.gpu import native, native_batch

    w, _ = gpu_case
    frames = [Inputs.synthetic((13, 11), s, ox=3, oy=2) for s in (31, 32, 33)]
    inp = torch.from_numpy(np.stack([f.input for f in frames])).cuda()
    tex = torch.from_numpy(np.stack([f.texture for f in frames]).view(np.int16)).cuda()
    arena, surface = native_batch(w, inp, tex, 13, 11, ox=3, oy=2)
    for i, f in enumerate(frames):
        one = native(w, f, "hopper")
        assert torch.equal(arena[i], one.arena)
        assert torch.equal(surface[i], one.surface)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["hopper", "hopper_split", "hopper_split_occ3"])
def test_both_hopper_kernel_forms_match_the_reference(gpu_case, variant: str) -> None:
    """The one-CTA-per-window kernel and the 2-CTA-cluster kernels each equal the reference byte for byte (origin
    (5, 4): the top window row has a dead query m-tile, whose warps the 3-CTA build idles)."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    w, x = gpu_case
    ref = reference(w, x, numerics="hopper", arena=np.full(5 * x.ey * x.ex * 32, 0xA5, np.uint8),
                    surface=np.full((x.ey, x.ex, 4), 0xA5A5, np.uint16))
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, x.ey, x.ex, 4)
    a0 = torch.full_like(inp, 0xA5)
    s0 = torch.full_like(tex, np.int16(np.uint16(0xA5A5).view(np.int16)))
    arena, surface = native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, arena=a0, surface=s0, variant=variant)
    assert int(np.count_nonzero(arena.cpu().numpy().reshape(-1) != ref.arena)) == 0
    assert int(np.count_nonzero(surface.cpu().numpy().view(np.uint16) != ref.surface)) == 0



@pytest.mark.gpu
def test_4k_dispatch_order_changes_no_bit() -> None:
    """One 4K frame through the 3-CTA build with and without the dispatch-order swaps (light bottom-row windows onto
    the SMs that hold three CTAs) and through the one-CTA kernel: the same bytes everywhere."""
    import torch

    from tcforge.layers.enc5.gpu import kernel, native_batch

    assert kernel.dispatch_swaps(120, 68, 0, torch.cuda.get_device_properties(0).multi_processor_count, 3) \
        or torch.cuda.get_device_properties(0).multi_processor_count != 132
    w = WeightImage.synthetic(41)
    x = Inputs.synthetic((120, 68), 42)
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, 68, 120, 4)
    outs = [native_batch(w, inp, tex, 120, 68, variant=v, reorder=r)
            for v, r in (("hopper_split_occ3", True), ("hopper_split_occ3", False), ("hopper", False))]
    for arena, surface in outs[1:]:
        assert torch.equal(arena, outs[0][0])
        assert torch.equal(surface, outs[0][1])
    assert int(outs[0][0].count_nonzero()) > 0


@pytest.mark.gpu
def test_aliased_outputs_are_refused(gpu_case) -> None:
    import torch

    from tcforge.errors import TcforgeError
    from tcforge.layers.enc5.gpu import native_batch

    w, x = gpu_case
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, x.ey, x.ex, 4)
    with pytest.raises(TcforgeError, match="arena overlaps inputs"):
        native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, arena=inp)
    with pytest.raises(TcforgeError, match="surface overlaps texture"):
        native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, surface=tex)


def negzero_case(seed: int = 7) -> tuple[WeightImage, Inputs]:
    """A frame on which Ada's -0 rule decides output bytes: V = +0 makes O = +0, so every product of P13-P20 is
    (+0)(Wo < 0) = -0; fc1 = +0 with a +0 bias makes the MLP's hidden activations +0, so every fc2 product is -0;
    half the projection, output and head biases are -0 and a third of the input codes are -0, so the residual chains
    start from C = -0 there. Ada keeps -0 through those chains, wgmma alone writes +0."""
    rng = np.random.default_rng(seed)
    w = WeightImage.synthetic(seed)
    img = WeightImage.__new__(WeightImage)
    img._data = np.array(w.array, dtype=np.uint8)

    def some_neg_zero(n: int, std: float) -> np.ndarray:
        v = (rng.standard_normal(n) * std).astype(np.float32)
        return np.where(rng.random(n) < 0.5, np.float32(-0.0), v)

    for h in range(8):
        img._put_b(f"head{h}.v", np.zeros((160, 32), np.float32))
        img._put_b(f"head{h}.wo", -np.abs(rng.standard_normal((32, 160))).astype(np.float32) * 0.05)
    for i in range(20):
        img._put_b(f"mlp{i}.fc1", np.zeros((160, 32), np.float32))
        img._put_vec(f"mlp{i}.fc1_bias", np.zeros(32, np.float32))
        img._put_b(f"mlp{i}.fc2", -np.abs(rng.standard_normal((32, 160))).astype(np.float32) * 0.05)
    img._put_vec("proj_bias", some_neg_zero(160, 0.1))
    img._put_vec("mlp_out_bias", some_neg_zero(160, 0.1))
    img._put_vec("head_out_bias", some_neg_zero(16, 0.3))
    img._data.setflags(write=False)
    x = Inputs.synthetic((13, 11), seed, ox=5, oy=4)
    codes = x.input.copy()
    codes[rng.random(codes.size) < 1 / 3] = 0x80
    return img, Inputs(x.ex, x.ey, codes, x.texture, x.ox, x.oy)


def test_negzero_case_has_teeth() -> None:
    """The -0 frame's Ada reference writes -0 codes (0x80) into the arena where its chains end in -0."""
    w, x = negzero_case()
    ref = reference(w, x, numerics="ada")
    assert int(np.count_nonzero(ref.arena == 0x80)) > 1000


@pytest.mark.gpu
def test_ada_negzero_rule_on_the_gpu() -> None:
    """The ada form equals the Ada reference on the -0 frame; built without its -0 rule it does not."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    w, x = negzero_case()
    ref = reference(w, x, numerics="ada")
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, x.ey, x.ex, 4)
    bad = []
    for options in ((), ("-DENC5_ADA_NO_NEGZERO_RULE",)):
        arena, surface = native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, numerics="ada", options=options)
        bad.append(int(np.count_nonzero(arena.cpu().numpy().reshape(-1) != ref.arena))
                   + int(np.count_nonzero(surface.cpu().numpy().view(np.uint16) != ref.surface)))
    assert bad[0] == 0 and bad[1] > 1000, bad
