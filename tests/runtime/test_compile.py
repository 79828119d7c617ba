"""tcforge.runtime.compile: ptxas report parsing, cache keys, and a real nvcc build with a cache hit (CPU only)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tcforge.errors import TcforgeError
from tcforge.runtime import compile as rc

LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k_spill' for 'sm_90a'
ptxas info    : Function properties for k_spill
    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compiling entry function 'k_clean' for 'sm_90a'
ptxas info    : Function properties for k_clean
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers
"""

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


def test_parse_ptxas_log_reads_each_function() -> None:
    stats = rc.parse_ptxas_log(LOG)
    assert set(stats) == {"k_spill", "k_clean"}
    s = stats["k_spill"]
    assert (s.registers, s.stack_frame, s.spill_stores, s.spill_loads, s.shared_bytes) == (255, 24, 16, 8, 1024)
    assert s.spills
    c = stats["k_clean"]
    assert (c.registers, c.stack_frame, c.spill_stores, c.spill_loads) == (40, 0, 0, 0)
    assert not c.spills


def test_gencode_flags() -> None:
    assert rc.gencode_for("sm_90a") == ["-gencode=arch=compute_90a,code=sm_90a"]
    assert rc.gencode_for("sm_100a") == ["-gencode=arch=compute_100a,code=sm_100a"]
    with pytest.raises(TcforgeError, match="sm_90a"):
        rc.gencode_for("hopper")


@needs_nvcc
def test_cache_key_depends_on_source_options_and_arch() -> None:
    k0 = rc.cache_key("x", ["-O3"], "sm_90a")
    assert k0 == rc.cache_key("x", ["-O3"], "sm_90a")
    assert (
        len(
            {
                k0,
                rc.cache_key("y", ["-O3"], "sm_90a"),
                rc.cache_key("x", ["-O2"], "sm_90a"),
                rc.cache_key("x", ["-O3"], "sm_100a"),
            }
        )
        == 4
    )


SRC = r"""
extern "C" __global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""


@needs_nvcc
def test_compile_writes_cubin_and_reuses_cache(tmp_path: Path) -> None:
    m1 = rc.compile_cuda(SRC, name="add_one", cache=tmp_path)
    assert m1.cubin_path.exists() and m1.cubin()[:4] == b"\x7fELF"
    assert not m1.stats["add_one"].spills and m1.stats["add_one"].registers > 0
    mtime = m1.cubin_path.stat().st_mtime_ns
    m2 = rc.compile_cuda(SRC, name="add_one", cache=tmp_path)
    assert m2.cubin_path == m1.cubin_path and m2.cubin_path.stat().st_mtime_ns == mtime  # a hit, not a rebuild


@needs_nvcc
def test_compile_error_carries_diagnostics(tmp_path: Path) -> None:
    with pytest.raises(rc.CompileError, match="undefined_thing"):
        rc.compile_cuda("__global__ void k() { undefined_thing(); }", name="bad", cache=tmp_path)
