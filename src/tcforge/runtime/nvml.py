"""NVML through nvidia-ml-py (`pynvml`): the energy counter, power, SM clock and clock-limit reasons of one GPU.

Used by the GEMM energy benchmark: under a power cap the time of a kernel is its energy divided by the allowed power,
so joules per GEMM (not only seconds) tell whether a kernel can get faster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcforge.errors import DeviceUnavailableError

# bits of nvmlDeviceGetCurrentClocksEventReasons (pynvml.nvmlClocksEventReason*)
CLOCK_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
}


def _pynvml() -> Any:
    try:
        import pynvml
    except ImportError:
        raise DeviceUnavailableError("nvidia-ml-py is not installed: pip install tcforge[gpu]") from None
    return pynvml


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
        self._nv = nv = _pynvml()
        self._call(nv.nvmlInit, "nvmlInit")
        self._dev = None
        if pci_bus_id:
            try:
                self._dev = nv.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            except nv.NVMLError:
                self._dev = None
        if self._dev is None:
            self._dev = self._call(nv.nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex", index)
        # the newer name first; drivers before r535 have only the older one
        self._reasons = [f for f in (getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None),
                                     getattr(nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None)) if f]

    def _call(self, fn: Any, what: str, *args: object) -> Any:
        try:
            return fn(*args)
        except self._nv.NVMLError as exc:
            raise DeviceUnavailableError(f"NVML call {what} failed: {exc}") from None

    def sample(self) -> Sample:
        """Read the counters once."""
        nv, d = self._nv, self._dev
        e = self._call(nv.nvmlDeviceGetTotalEnergyConsumption, "energy", d)
        p = self._call(nv.nvmlDeviceGetPowerUsage, "power", d)
        c = self._call(nv.nvmlDeviceGetClockInfo, "clock", d, nv.NVML_CLOCK_SM)
        r = 0
        for fn in self._reasons:
            try:
                r = fn(d)
                break
            except nv.NVMLError:
                continue
        return Sample(int(e), int(p), int(c), int(r))

    def power_limit_mw(self) -> int:
        """The enforced power limit."""
        return int(self._call(self._nv.nvmlDeviceGetEnforcedPowerLimit, "power limit", self._dev))


def reason_names(bits: int) -> list[str]:
    """The names of the set clock-limit reason bits."""
    return [name for bit, name in CLOCK_REASONS.items() if bits & bit]
