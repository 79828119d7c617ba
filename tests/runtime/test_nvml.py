"""NVML through nvidia-ml-py: clock-limit reason decoding, readings through pynvml, clear errors where it is missing."""

from __future__ import annotations

import builtins
import ctypes.util
from types import SimpleNamespace

import pytest

from tcforge.errors import DeviceUnavailableError
from tcforge.runtime import nvml
from tcforge.runtime.nvml import CLOCK_REASONS, Nvml, reason_names


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
