"""The native enc5 kernel forms build for sm_90a without spills, their constants agree with the Python layout, and the
launcher reads each form's launch shape from its source."""

from __future__ import annotations

import ctypes
import re
import shutil

import pytest

from tcforge.layers.enc5 import epilogues as ep
from tcforge.layers.enc5.gpu import kernel
from tcforge.layers.enc5.gpu.layout import debug_layout
from tcforge.layers.enc5.layout import HEAD_SLOT, mlp_chunk_offsets, region

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


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_ada_kernel_compiles_for_sm90a() -> None:
    mod = kernel.compile_form("ada")
    st = mod.stats["enc5_ada"]
    assert st.registers <= 255  # may spill a little: the mode exists for exactness, not speed


def test_forms_are_chosen_by_name_with_the_launch_shape_of_their_source() -> None:
    forms = kernel.FORMS
    assert set(forms) == {"hopper", "ada", "hopper_split", "hopper_split_occ3"}
    for name, f in forms.items():
        assert f.path.name == f"{name}.cu" and f.entry == f"enc5_{name}"
        assert f"{f.entry}(const __grid_constant__ Enc5Params prm)" in f.path.read_text()
    assert forms["hopper"].block == forms["ada"].block == (32, 1, 8) and forms["hopper"].cluster == 1
    assert forms["hopper_split"].block == (32, 1, 4) and forms["hopper_split"].cluster == 2
    assert forms["hopper"].dynamic_smem == forms["ada"].dynamic_smem == 0
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
@pytest.mark.parametrize(("name", "spill_limit"), [("hopper_split_occ3", 64), ("hopper_split_occ3_timing", 128)])
def test_split_occ3_kernel_fits_three_ctas_per_sm(name: str, spill_limit: int) -> None:
    f = kernel.form(name)
    st = kernel.compile_form(f).stats[f.entry]
    assert st.registers <= 168  # 3 x 128 threads x 168 <= 65536
    # measured: 64 B (the timing twin 64 B): stored after P10 and reloaded at P13 (cuobjdump on the device), outside
    # the loops
    assert st.spill_stores <= spill_limit, f"more spill than measured when it was written: {st}"
