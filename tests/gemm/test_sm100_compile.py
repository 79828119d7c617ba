"""The Blackwell tcgen05 kernel compiles for sm_100a without spills, and its PTX/SASS hold the design's instructions.

Needs nvcc (CUDA >= 12.8; CI uses 13.0) but no GPU; skipped with a reason where nvcc is absent.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter

import pytest

from tcforge.errors import UnsupportedError
from tcforge.gemm.sm100 import KERNEL_NAMES, CompileReport, compile_sm100, find_tool, launch
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
@pytest.mark.parametrize("arch, stages", [("sm_100a", 2), ("sm_100a", 4), ("sm_100a", 6), ("sm_103a", 3)])
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
