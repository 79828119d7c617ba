"""The Blackwell tcgen05 kernel (tcforge.gemm.sm100): it compiles for sm_100a without spills, and its PTX/SASS hold
the design's instructions (needs nvcc, CUDA >= 12.8, CI uses 13.0, but no GPU; skipped with a reason where nvcc is
absent); the byte-level model (TMA swizzle, descriptor-driven operand fetch, staged epilogue) computes A @ B exactly
and breaks when any descriptor field or step it relies on is wrong; the kernel's own PTX, run in the emulator,
computes it too and a broken release is caught; the host side: descriptor bit fields, the launch
description, and the refusing API."""

from __future__ import annotations

import re
import subprocess
from collections import Counter

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.gemm import sm100
from tcforge.gemm.sm100 import KERNEL_NAMES, CompileReport, compile_sm100, descriptors, emulate, find_tool, launch
from tcforge.gemm.sm100 import descriptors as d
from tcforge.gemm.sm100.compile import SOURCE_PATH, cross_check_defines
from tcforge.runtime.compile import INCLUDE_DIR

NVCC = find_tool("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, $CUDA_HOME/bin): CUDA toolkit needed")


@pytest.fixture(scope="module")
def report() -> CompileReport:
    return compile_sm100("sm_100a", stages=launch.DEFAULT_STAGES)


def _sass_by_kernel(sass: str) -> dict[str, Counter[str]]:
    """Opcode counts per kernel: cuobjdump prints one 'Function : name' section per entry."""
    opcode = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)", re.M)
    parts = re.split(r"Function : (\S+)", sass)
    return {name: Counter(opcode.findall(body)) for name, body in zip(parts[1::2], parts[2::2], strict=True)}


@needs_nvcc
def test_both_entry_points_compile_without_spills_or_stack(report: CompileReport) -> None:
    assert set(report.kernels) == set(KERNEL_NAMES)
    for k in report.kernels.values():
        assert (k.stack_frame, k.spill_stores, k.spill_loads) == (0, 0, 0), k
        # two CTAs of 320 threads per SM (3 stages) must fit in the 64 Ki-register file
        assert k.registers * launch.THREADS * launch.ctas_per_sm(report.stages) <= 65536, k


@needs_nvcc
def test_ptx_holds_pair_mma_pair_tma_multicast_commit_and_tma_store(report: CompileReport) -> None:
    ptx = report.ptx
    for name in KERNEL_NAMES:
        entry = ptx.split(f".entry {name}(")[1].split(".entry ")[0]
        assert ".reqnctapercluster 2, 1, 1" in entry
        assert len(re.findall(r"tcgen05\.mma\.cta_group::2\.kind::f16 ", entry)) >= 4  # BK 64 = 4 x K16 per stage
        assert "tcgen05.mma.cta_group::1" not in entry
        assert "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64" in entry
        assert re.search(
            r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
            r"\.cta_group::2 ",
            entry,
        )
        # the staged epilogue's TMA store (.tile, the default load mode, written or not: tcforge/tma.cuh leaves it out)
        assert re.search(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta(\.tile)?\.bulk_group", entry)
        assert "fence.proxy.async.shared::cta" in entry
        assert "tcgen05.ld.sync.aligned.32x32b.x32.b32" in entry
        assert "tcgen05.alloc.cta_group::2.sync.aligned" in entry
        assert "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned" in entry
        assert "tcgen05.dealloc.cta_group::2.sync.aligned" in entry
        assert "mapa.shared::cluster" in entry  # the peer signals the leader's full barrier


@needs_nvcc
def test_sass_holds_2cta_umma_utcbar_multicast_tma_load_and_store(report: CompileReport) -> None:
    if report.sass is None:
        pytest.skip("cuobjdump not found: " + "; ".join(report.notes))
    per_kernel = _sass_by_kernel(report.sass)
    assert set(per_kernel) == set(KERNEL_NAMES)
    for name, ops in per_kernel.items():
        mma = {op: n for op, n in ops.items() if op.startswith("UTCHMMA") or op.startswith("UTCMMA")}
        assert mma and all(".2CTA" in op for op in mma), (name, mma)
        assert sum(mma.values()) >= 4, (name, mma)
        assert ops["UTCBAR.2CTA.MULTICAST"] >= 2, name  # stage release + accumulator-ready, both CTAs
        assert ops["UTMALDG.2D.2CTA"] >= 3, name  # A box + two B slabs per stage
        assert ops["UTMASTG.2D"] >= 1, name  # epilogue TMA store
        assert any(op.startswith("LDTM") for op in ops), name  # tcgen05.ld
        assert any(op.startswith("UTCATOMSWS.2CTA") for op in ops), name  # TMEM alloc for the pair


@needs_nvcc
@pytest.mark.parametrize("arch, stages", [pytest.param("sm_100a", 2, marks=pytest.mark.slow),
                                          pytest.param("sm_100a", 4, marks=pytest.mark.slow), ("sm_100a", 6),
                                          ("sm_103a", 3)])  # the deepest pipeline and B300 by default
def test_other_stage_counts_and_b300_compile_without_spills(arch: str, stages: int) -> None:
    rep = compile_sm100(arch, stages=stages, with_sass=False)
    assert rep.dynamic_smem_bytes == launch.smem_bytes(stages)
    for k in rep.kernels.values():
        assert not k.spills, k


@needs_nvcc
def test_cross_check_static_asserts_are_live() -> None:
    """A wrong Python-side descriptor must stop the build: the agreement checks are not decoration."""
    defines = [d for d in cross_check_defines(3) if not d.startswith("-DTCF_EXPECT_IDESC_F16=")]
    defines.append("-DTCF_EXPECT_IDESC_F16=0x10410011u")  # D format bit flipped
    proc = subprocess.run(
        [
            NVCC,
            "-gencode=arch=compute_100a,code=sm_100a",
            "-std=c++17",
            "-I",
            str(INCLUDE_DIR),
            *defines,
            "-ptx",
            "-o",
            "/dev/null",
            str(SOURCE_PATH),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "idesc (fp16) differs from the Python encoder" in proc.stdout + proc.stderr


def test_non_blackwell_arch_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="arch must be one of"):
        compile_sm100("sm_90a")


def _operands(m: int, n: int, k: int, dtype: type, seed: int) -> tuple[np.ndarray, np.ndarray]:
    # small nonzero integers: every product and fp32 partial sum is exact, so the result has exact expected bits
    rng = np.random.default_rng(seed)
    a = rng.choice([-3, -2, -1, 1, 2, 3], size=(m, k)).astype(dtype)
    b = rng.choice([-3, -2, -1, 1, 2, 3], size=(k, n)).astype(dtype)
    return a, b


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize(
    "m, n, k, dtype",
    [
        (256, 256, 256, np.float16),  # one full tile, 4 k-tiles: the 3-stage ring wraps
        (129, 200, 72, np.float16),  # partial tile in M and N, K tail zero-filled by TMA
        (512, 264, 64, ml_dtypes.bfloat16),  # two pairs in M, a second N tile of 8 columns
    ],
)
def test_model_computes_the_exact_product(m: int, n: int, k: int, dtype: type) -> None:
    a, b = _operands(m, n, k, dtype, seed=m + n + k)
    c = emulate.emulate_matmul(a, b)
    assert not np.isnan(c).any()  # every output element written (the model poisons C first)
    np.testing.assert_array_equal(c, _reference(a, b))


def test_model_on_gaussian_fp16_matches_fp32_rounded_float64() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((256, 128)).astype(np.float16)
    b = rng.standard_normal((128, 256)).astype(np.float16)
    np.testing.assert_array_equal(emulate.emulate_matmul(a, b), _reference(a, b))


@pytest.mark.parametrize(
    "name, value",
    [
        ("B_LBO", descriptors.B_SBO),  # LBO and SBO swapped for the N-major B operand
        ("B_SBO", descriptors.B_LBO),
        ("A_SBO", 512),  # A's 8-row group stride of a 64-byte swizzle
        ("A_K16_STEP", 16),  # K = 16 step of 8 elements instead of 16
        ("B_K16_STEP", 1024),  # B's K = 16 step of 8 rows instead of 16
    ],
)
def test_model_detects_a_wrong_descriptor_field(monkeypatch: pytest.MonkeyPatch, name: str, value: int) -> None:
    a, b = _operands(256, 256, 64, np.float16, seed=1)
    monkeypatch.setattr(descriptors, name, value)
    assert not np.array_equal(emulate.emulate_matmul(a, b), _reference(a, b))


def test_swizzle_is_the_128b_pattern() -> None:
    addr = np.arange(1024)
    sw = emulate.swizzle_128b(addr)
    assert sorted(sw.tolist()) == addr.tolist()  # a permutation inside each 1024-byte atom
    # row 3 (bytes 384..511): 16-byte chunk 0 lands at chunk 3, chunk 5 at chunk 6
    assert sw[384] == 384 + 3 * 16 and sw[384 + 5 * 16] == 384 + 6 * 16


def test_model_inputs_are_checked() -> None:
    with pytest.raises(TcforgeError, match="matching K"):
        emulate.emulate_matmul(np.zeros((8, 16), np.float16), np.zeros((8, 8), np.float16))
    with pytest.raises(TcforgeError, match="16-bit dtype"):
        emulate.emulate_matmul(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))


@needs_nvcc
@pytest.mark.parametrize(
    "m, n, k, dtype",
    [
        (256, 256, 256, np.float16),  # one full tile, 4 k-tiles: the 3-stage ring wraps
        (129, 200, 72, np.float16),  # partial tile in M and N, K tail zero-filled by TMA
        (512, 264, 64, ml_dtypes.bfloat16),  # two pairs in M, a second N tile of 8 columns
    ],
)
def test_kernel_ptx_emulated_computes_the_exact_product(report: CompileReport, m: int, n: int, k: int,
                                                        dtype: type) -> None:
    """The compiled kernel's own PTX in tcforge.ptx.emulate (ops_tcgen05): its warp roles, mbarrier phases, TMA boxes
    and epilogue, not a restatement of them."""
    a, b = _operands(m, n, k, dtype, seed=m + n + k)
    c = emulate.emulate_ptx(a, b, ptx=report.ptx)
    assert not np.isnan(c).any()  # C is poisoned first
    np.testing.assert_array_equal(c, _reference(a, b))


@needs_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("stages", [2, 4, 6])
def test_kernel_ptx_emulated_at_other_stage_counts(stages: int) -> None:
    """Rings of 2, 4 and 6 stages wrap over 8 k-tiles (each its own build), C still A @ B exactly."""
    a, b = _operands(256, 256, 512, np.float16, seed=stages)
    c = emulate.emulate_ptx(a, b, stages, ptx=compile_sm100("sm_100a", stages=stages, with_sass=False).ptx)
    np.testing.assert_array_equal(c, _reference(a, b))


@needs_nvcc
def test_kernel_ptx_emulated_on_gaussian_fp16_is_the_k16_chain_in_order(report: CompileReport) -> None:
    """Gaussian fp16 inputs: C is the chain of K = 16 MMAs in K order from C = +0 (enable-input-d 0 on the first
    only), each through the datapath ops_tcgen05 assumes (numerics.tensorcore's Hopper f16 -> f32 step)."""
    from tests.ptx.emulate.kernels import f16_k16_chain

    rng = np.random.default_rng(8)
    a = rng.standard_normal((256, 128)).astype(np.float16)
    b = rng.standard_normal((128, 256)).astype(np.float16)
    want = f16_k16_chain(a, b)
    got = emulate.emulate_ptx(a, b, ptx=report.ptx)
    np.testing.assert_array_equal(got.view(np.uint32), want)
    assert not np.array_equal(got, _reference(a, b))  # the chain's roundings show


@needs_nvcc
def test_kernel_ptx_emulated_reports_a_broken_release(report: CompileReport) -> None:
    """The final commit multicast to the leader alone (mask 1, not 3): the peer's epilogue waits on a done barrier
    nothing completes, which the emulator names in one line."""
    broken, count = re.subn(r"(mov\.b16\s+%rs\d+, )3;(\s+// begin inline asm\s+tcgen05\.commit[^\n]*\[%r3\])",
                            r"\g<1>1;\2", report.ptx)
    assert count == 2  # both entry points
    a, b = _operands(256, 256, 64, np.float16, seed=2)
    with pytest.raises(TcforgeError, match="never arrive.*waits on the mbarrier") as err:
        emulate.emulate_ptx(a, b, ptx=broken)
    assert "\n" not in str(err.value)


@needs_nvcc
def test_module_command_emulates_and_says_so(report: CompileReport, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from tcforge.gemm.sm100 import __main__ as cli
    from tcforge.gemm.sm100 import compile as sm100_compile

    monkeypatch.setattr(sm100_compile, "compile_sm100", lambda arch, stages: report)
    monkeypatch.setattr(emulate, "kernel_ptx", lambda stages: report.ptx)
    assert cli.main(["--emulate", "256x256x64"]) == 0
    assert "C is A @ B exactly" in capsys.readouterr().out
    assert cli.main(["--emulate", "256x256x12"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m tcforge.gemm.sm100: error: K = 12") and "\n" not in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["--emulate", "12x"])
    assert exc.value.code == 2 and "expected MxNxK" in capsys.readouterr().err


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
