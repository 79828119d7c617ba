"""CI without a GPU: every variant compiles for sm_90a with no spill or stack frame; its SASS holds HGMMA/QGMMA."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tcforge.gemm.build import Build, all_builds, build_all
from tcforge.gemm.variants import LADDER, SUPPORTED, SWEEP
from tcforge.runtime.tools import find_tool, sass_env

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


def _representative() -> list[Build]:
    """One build per variant (fp16 -> fp32, row-major B) plus the last rung's fp8 and column-major builds."""
    out = []
    for v in LADDER + SWEEP:
        out += [b for b in all_builds([v]) if (b.in_kind, b.out_kind, b.b_kmajor) == ("fp16", "fp32", False)]
    last = LADDER[-1]
    out += [b for b in all_builds([last]) if (b.in_kind, b.b_kmajor) in (("e4m3", True), ("bf16", True))]
    return out


def _assert_clean(results: list) -> None:
    bad = {b.tag(): m.stats["tcf_gemm"] for b, m in results if m.stats["tcf_gemm"].spills}
    assert not bad, f"register spills / stack frames: {bad}"
    for _, m in results:
        assert m.stats["tcf_gemm"].registers <= 255


@needs_nvcc
def test_representative_builds_do_not_spill() -> None:
    _assert_clean(build_all(_representative(), workers=os.cpu_count() or 2))


@needs_nvcc
@pytest.mark.slow
def test_every_variant_every_input_type_does_not_spill() -> None:
    """Each variant with each input type's default output and every B layout (`tcforge gemm build` does all 231)."""
    builds = [b for b in all_builds() if b.out_kind == SUPPORTED[b.in_kind][0]]
    _assert_clean(build_all(builds, workers=os.cpu_count() or 2))


@needs_nvcc
def test_sass_uses_wgmma_tma_and_setmaxnreg() -> None:
    tool = find_tool("cuobjdump")
    if tool is None:
        pytest.skip("no cuobjdump here")
    last = LADDER[-1]
    for b in all_builds([last]):
        if b.config.splitk or (b.in_kind, b.out_kind, b.b_kmajor) not in (
            ("fp16", "fp32", False),
            ("e4m3", "bf16", True),
        ):
            continue
        sass = subprocess.run([tool, "-sass", str(b.compile().cubin_path)], capture_output=True, text=True,
                              env=sass_env()).stdout
        assert ("QGMMA.64x256x32" if b.in_kind == "e4m3" else "HGMMA.64x256x16") in sass
        assert "UTMALDG" in sass and "UTMASTG" in sass and "USETMAXREG" in sass
        assert "LDL" not in sass and "STL" not in sass
