"""NVML through ctypes: the energy counter, power, SM clock and clock-limit reasons of one GPU.

Used by the GEMM energy benchmark: under a power cap the time of a kernel is its energy divided by the allowed power,
so joules per GEMM (not only seconds) tell whether a kernel can get faster.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from tcforge.errors import DeviceUnavailableError

NVML_CLOCK_SM = 1
# bits of nvmlDeviceGetCurrentClocksEventReasons (nvml.h)
CLOCK_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
}


@dataclass(frozen=True)
class Sample:
    """One reading: energy since driver load (mJ), power (mW), SM clock (MHz), clock-limit reason bits."""

    energy_mj: int
    power_mw: int
    sm_mhz: int
    reasons: int


class Nvml:
    """One GPU's NVML handle (by PCI bus id when given, else by index)."""

    def __init__(self, index: int = 0, pci_bus_id: str | None = None) -> None:
        try:
            self._lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as exc:
            raise DeviceUnavailableError(f"NVML (libnvidia-ml.so.1) is not available: {exc}") from exc
        self._check(self._lib.nvmlInit_v2(), "nvmlInit_v2")
        self._dev = ctypes.c_void_p()
        rc = 1
        if pci_bus_id:
            rc = self._lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(self._dev))
        if rc != 0:
            self._check(self._lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self._dev)),
                        "nvmlDeviceGetHandleByIndex_v2")

    @staticmethod
    def _check(rc: int, what: str) -> None:
        if rc != 0:
            raise DeviceUnavailableError(f"NVML call {what} failed with code {rc}")

    def sample(self) -> Sample:
        """Read the counters once."""
        e, p, c, r = ctypes.c_ulonglong(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
        self._check(self._lib.nvmlDeviceGetTotalEnergyConsumption(self._dev, ctypes.byref(e)), "energy")
        self._check(self._lib.nvmlDeviceGetPowerUsage(self._dev, ctypes.byref(p)), "power")
        self._check(self._lib.nvmlDeviceGetClockInfo(self._dev, NVML_CLOCK_SM, ctypes.byref(c)), "clock")
        fn = getattr(self._lib, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            self._lib.nvmlDeviceGetCurrentClocksThrottleReasons
        if fn(self._dev, ctypes.byref(r)) != 0:
            r = ctypes.c_ulonglong(0)
        return Sample(int(e.value), int(p.value), int(c.value), int(r.value))

    def power_limit_mw(self) -> int:
        """The enforced power limit."""
        v = ctypes.c_uint()
        self._check(self._lib.nvmlDeviceGetEnforcedPowerLimit(self._dev, ctypes.byref(v)), "power limit")
        return int(v.value)


def reason_names(bits: int) -> list[str]:
    """The names of the set clock-limit reason bits."""
    return [name for bit, name in CLOCK_REASONS.items() if bits & bit]
