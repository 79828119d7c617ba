"""tcforge.runtime's parts that need neither cuda-python nor a GPU: the nvcc JIT (tcforge.runtime.compile: ptxas report
parsing, cache keys, and a real nvcc build with a cache hit, CPU only) and NVML through nvidia-ml-py (clock-limit
reason decoding, readings through pynvml, clear errors where it is missing)."""

from __future__ import annotations

import builtins
import ctypes.util
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from tcforge.errors import DeviceUnavailableError, TcforgeError
from tcforge.runtime import compile as rc
from tcforge.runtime import nvml
from tcforge.runtime.nvml import CLOCK_REASONS, Nvml, reason_names

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


def test_sass_is_disassembled_once_and_kept_beside_the_cubin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`CompiledModule.sass()` runs cuobjdump once and keeps the listing; a cache it cannot write still gets the
    listing (not kept); a failing cuobjdump is one TcforgeError naming the cubin. A script stands in for cuobjdump."""
    calls = tmp_path / "calls"
    tool = tmp_path / "cuobjdump"
    tool.write_text(f'#!/bin/sh\necho x >> {calls}\n[ -s "$2" ] || {{ echo "bad cubin" >&2; exit 1; }}\n'
                    'echo "Function : k"\n')
    tool.chmod(0o755)
    monkeypatch.setenv("TCFORGE_CUOBJDUMP", str(tool))
    (tmp_path / "k.cubin").write_bytes(b"\x7fELF")
    m = rc.CompiledModule(tmp_path / "k.cubin", "key", "sm_90a", "")
    assert m.sass() == m.sass() == "Function : k\n"
    assert calls.read_text().count("x") == 1 and (tmp_path / "k.sass").read_text() == "Function : k\n"

    (tmp_path / "r.cubin").write_bytes(b"\x7fELF")

    def read_only(*_: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(rc.os, "replace", read_only)
    assert rc.CompiledModule(tmp_path / "r.cubin", "key", "sm_90a", "").sass() == "Function : k\n"
    assert not (tmp_path / "r.sass").exists() and not list(tmp_path.glob(".r.sass*"))
    (tmp_path / "e.cubin").write_bytes(b"")
    with pytest.raises(TcforgeError, match=r"cuobjdump -sass .*e\.cubin failed: bad cubin"):
        rc.CompiledModule(tmp_path / "e.cubin", "key", "sm_90a", "").sass()


@needs_nvcc
def test_compile_error_carries_diagnostics(tmp_path: Path) -> None:
    with pytest.raises(rc.CompileError, match="undefined_thing"):
        rc.compile_cuda("__global__ void k() { undefined_thing(); }", name="bad", cache=tmp_path)


def test_reason_bits_decode_to_names() -> None:
    assert reason_names(0x4) == ["sw_power_cap"]
    assert reason_names(0x1 | 0x4 | 0x40) == ["gpu_idle", "sw_power_cap", "hw_thermal"]
    assert reason_names(0) == []


def test_reason_bits_are_pynvmls() -> None:
    pynvml = pytest.importorskip("pynvml")
    names = {"gpu_idle": "GpuIdle", "applications_clocks": "ApplicationsClocksSetting", "sw_power_cap": "SwPowerCap",
             "hw_slowdown": "HwSlowdown", "sw_thermal": "SwThermalSlowdown", "hw_thermal": "HwThermalSlowdown",
             "hw_power_brake": "HwPowerBrakeSlowdown"}
    for bit, name in CLOCK_REASONS.items():
        assert getattr(pynvml, f"nvmlClocksEventReason{names[name]}") == bit


class _FakeNvml(SimpleNamespace):
    class NVMLError(Exception):
        pass

    NVML_CLOCK_SM = 1

    def __init__(self) -> None:
        super().__init__(calls=[])

    def nvmlInit(self) -> None:  # noqa: N802
        self.calls.append("init")

    def nvmlDeviceGetHandleByPciBusId(self, bus: str) -> object:  # noqa: N802
        raise self.NVMLError("Not Found")

    def nvmlDeviceGetHandleByIndex(self, i: int) -> object:  # noqa: N802
        return ("dev", i)

    def nvmlDeviceGetTotalEnergyConsumption(self, d: object) -> int:  # noqa: N802
        return 123456

    def nvmlDeviceGetPowerUsage(self, d: object) -> int:  # noqa: N802
        return 700000

    def nvmlDeviceGetClockInfo(self, d: object, kind: int) -> int:  # noqa: N802
        assert kind == self.NVML_CLOCK_SM
        return 1980

    def nvmlDeviceGetCurrentClocksEventReasons(self, d: object) -> int:  # noqa: N802
        return 0x4

    def nvmlDeviceGetEnforcedPowerLimit(self, d: object) -> int:  # noqa: N802
        raise self.NVMLError("Insufficient Permissions")


def test_readings_come_through_pynvml(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeNvml()
    monkeypatch.setattr(nvml, "_pynvml", lambda: fake)
    nv = Nvml(1, "0000:99:00.0")  # an unknown bus id falls back to the index
    assert nv.sample() == nvml.Sample(123456, 700000, 1980, 0x4)
    with pytest.raises(DeviceUnavailableError, match="NVML call power limit failed: Insufficient Permissions"):
        nv.power_limit_mw()


def test_missing_nvidia_ml_py_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pynvml(name, *args, **kwargs):
        if name == "pynvml":
            raise ImportError("No module named 'pynvml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pynvml)
    with pytest.raises(DeviceUnavailableError, match=r"nvidia-ml-py is not installed: pip install tcforge\[gpu\]"):
        Nvml()


@pytest.mark.skipif(ctypes.util.find_library("nvidia-ml") is not None, reason="NVML present here")
def test_missing_nvml_library_raises_a_clear_error() -> None:
    pytest.importorskip("pynvml")
    with pytest.raises(DeviceUnavailableError, match="NVML"):
        Nvml()
