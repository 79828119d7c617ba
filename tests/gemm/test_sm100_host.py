"""Host side of the Blackwell kernel: descriptor bit fields, the launch description, and the refusing API."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.gemm import sm100
from tcforge.gemm.sm100 import descriptors as d
from tcforge.gemm.sm100 import launch


def test_kernel_instruction_descriptors_have_the_hand_computed_bits() -> None:
    # f32 D (1 << 4) | N-major B (1 << 16) | N/8 = 32 << 17 | M/16 = 16 << 24
    assert d.kernel_instr_desc("float16") == 0x10410010
    # + BF16 A (1 << 7) + BF16 B (1 << 10)
    assert d.kernel_instr_desc("bfloat16") == 0x10410490
    fields = d.decode_instr_desc(0x10410490)
    assert fields["m_shr4"] << 4 == 256 and fields["n_shr3"] << 3 == 256
    assert (fields["a_type"], fields["b_type"], fields["d_format"]) == (1, 1, 1)
    assert (fields["transpose_a"], fields["transpose_b"]) == (0, 1)
    assert fields["reserved_23"] == fields["reserved_29"] == fields["sparse"] == 0


def test_kernel_smem_descriptors_have_the_hand_computed_bits() -> None:
    # start 1024 >> 4 = 0x40; LBO 16 >> 4 = 1 at bit 16; SBO 1024 >> 4 = 0x40 at bit 32; 0b001 at bit 46; 2 at bit 61
    assert d.kernel_a_desc(1024) == 0x4000404000010040
    # B: LBO = 8192 (one 64-column slab) >> 4 = 0x200 at bit 16
    assert d.kernel_b_desc(1024) == 0x4000404002000040
    b = d.decode_smem_desc(d.kernel_b_desc(1024 + d.B_K16_STEP))
    assert b == {
        "start_addr_shr4": (1024 + 2048) >> 4,
        "lbo_shr4": 512,
        "sbo_shr4": 64,
        "fixed_0b001": 1,
        "base_offset": 0,
        "lbo_mode": 0,
        "swizzle": 2,
    }


@given(
    start=st.integers(0, (1 << 14) - 1),
    lbo=st.integers(0, (1 << 14) - 1),
    sbo=st.integers(0, (1 << 14) - 1),
    swizzle=st.sampled_from(sorted(d.SWIZZLES)),
    base=st.integers(0, 7),
)
def test_smem_descriptor_fields_round_trip(start: int, lbo: int, sbo: int, swizzle: str, base: int) -> None:
    value = d.smem_desc(start << 4, lbo << 4, sbo << 4, swizzle, base_offset=base)
    f = d.decode_smem_desc(value)
    assert (f["start_addr_shr4"], f["lbo_shr4"], f["sbo_shr4"], f["base_offset"]) == (start, lbo, sbo, base)
    assert f["swizzle"] == d.SWIZZLES[swizzle] and f["fixed_0b001"] == 1
    # nothing outside the named fields is set
    mask = sum(((1 << w) - 1) << lo for _, lo, w in d.SMEM_DESC_FIELDS)
    assert value & ~mask == 0


@given(
    m=st.sampled_from(d.INSTR_M_VALUES),
    n=st.integers(1, 32).map(lambda x: 8 * x),
    t=st.sampled_from(["f16", "bf16"]),
    am=st.sampled_from(["K", "MN"]),
    bm=st.sampled_from(["K", "MN"]),
)
def test_instr_descriptor_fields_round_trip(m: int, n: int, t: str, am: str, bm: str) -> None:
    f = d.decode_instr_desc(d.instr_desc_f16(a_type=t, b_type=t, a_major=am, b_major=bm, m=m, n=n))
    assert (f["m_shr4"] << 4, f["n_shr3"] << 3) == (m, n)
    assert (f["transpose_a"], f["transpose_b"]) == (d.MAJORS[am], d.MAJORS[bm])
    assert f["a_type"] == f["b_type"] == d.AB_TYPES_F16_KIND[t]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: d.instr_desc_f16(m=96), "m must be one of"),
        (lambda: d.instr_desc_f16(n=260), "n must be a multiple of 8"),
        (lambda: d.instr_desc_f16(a_type="f16", b_type="bf16"), "must match"),
        (lambda: d.instr_desc_f16(d_format="f64"), "d_format"),
        (lambda: d.smem_desc(8, 16, 1024), "start_addr"),
        (lambda: d.smem_desc(0, 16, 1 << 18), "sbo"),
        (lambda: d.smem_desc(0, 16, 1024, "256B"), "swizzle"),
        (lambda: d.decode_instr_desc(1 << 32), "32-bit"),
        (lambda: d.kernel_instr_desc("float32"), "in_dtype"),
    ],
)
def test_descriptor_inputs_are_checked(call, match: str) -> None:
    with pytest.raises(TcforgeError, match=match):
        call()


def test_launch_description_at_4096_cubed() -> None:
    spec = launch.describe_launch(4096, 4096, 4096)
    assert spec.kernel_name == "tcforge_sm100_gemm_f16_f32"
    assert spec.grid == (32, 16, 1) and spec.cluster == (2, 1, 1) and spec.block == (320, 1, 1)
    assert spec.tiles == 256
    assert spec.dynamic_smem_bytes == 1024 + 3 * 32768 + 256 == 99584
    assert spec.ctas_per_sm == 2
    assert spec.tx_bytes_per_stage == 65536
    a, b, c = spec.tensor_maps
    assert (a.global_dims, a.global_strides, a.box_dims) == ((4096, 4096), (8192,), (64, 128))
    assert (b.global_dims, b.global_strides, b.box_dims) == ((4096, 4096), (8192,), (64, 64))
    assert (c.global_dims, c.global_strides, c.box_dims) == ((4096, 4096), (16384,), (32, 32))
    assert a.data_type.endswith("FLOAT16") and c.data_type.endswith("FLOAT32")
    assert {m.swizzle for m in spec.tensor_maps} == {"CU_TENSOR_MAP_SWIZZLE_128B"}
    # every box's inner extent is exactly the 128-byte swizzle span
    assert a.box_dims[0] * 2 == b.box_dims[0] * 2 == c.box_dims[0] * 4 == 128


def test_launch_description_partial_tiles_and_bf16() -> None:
    spec = launch.describe_launch(257, 8, 8, in_dtype="bfloat16", stages=4)
    assert spec.kernel_name == "tcforge_sm100_gemm_bf16_f32"
    assert spec.grid == (4, 1, 1) and spec.tiles == 2
    assert spec.tensor_maps[0].data_type.endswith("BFLOAT16")
    assert spec.dynamic_smem_bytes == 132352 and spec.ctas_per_sm == 1
    assert launch.describe_launch(1, 8, 8).grid == (2, 1, 1)


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((4096, 4100, 64), {}, UnsupportedError, "N = 4100"),
        ((4096, 64, 12), {}, UnsupportedError, "K = 12"),
        ((0, 64, 64), {}, TcforgeError, "M must be"),
        ((64, 64, 64.0), {}, TcforgeError, "K must be"),
        ((64, 64, 64), {"in_dtype": "float8_e4m3fn"}, UnsupportedError, "in_dtype"),
        ((64, 64, 64), {"stages": 7}, TcforgeError, "stages must be"),
    ],
)
def test_launch_inputs_are_checked(args, kwargs, exc, match: str) -> None:
    with pytest.raises(exc, match=match):
        launch.describe_launch(*args, **kwargs)


def test_matmul_sm100_refuses_and_says_why() -> None:
    a = np.ones((256, 64), np.float16)
    b = np.ones((64, 256), np.float16)
    with pytest.raises(UnsupportedError) as info:
        sm100.matmul_sm100(a, b)
    message = str(info.value)
    assert "needs a Blackwell sm_100a GPU" in message
    assert "never run" in message
    assert "not a CUDA device" in message


def test_module_exposes_the_source() -> None:
    assert sm100.SM100_SOURCE_PATH.name == "gemm_sm100.cu"
    assert "tcgen05.mma.cta_group::2.kind::f16" in sm100.SM100_SOURCE
    assert set(sm100.KERNEL_NAMES) == {"tcforge_sm100_gemm_f16_f32", "tcforge_sm100_gemm_bf16_f32"}
    for name in sm100.KERNEL_NAMES:
        assert re.search(
            r'extern "C" __global__ void __cluster_dims__\(2, 1, 1\)[^\n]*\n\s+' + name + r"\(", sm100.SM100_SOURCE
        )
