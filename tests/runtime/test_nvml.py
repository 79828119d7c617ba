"""NVML wrapper: clock-limit reason decoding, and a clear error where the library is missing."""

import ctypes.util

import pytest

from tcforge.errors import DeviceUnavailableError
from tcforge.runtime.nvml import Nvml, reason_names


def test_reason_bits_decode_to_names() -> None:
    assert reason_names(0x4) == ["sw_power_cap"]
    assert reason_names(0x1 | 0x4 | 0x40) == ["gpu_idle", "sw_power_cap", "hw_thermal"]
    assert reason_names(0) == []


@pytest.mark.skipif(ctypes.util.find_library("nvidia-ml") is not None, reason="NVML present here")
def test_missing_nvml_raises_a_clear_error() -> None:
    with pytest.raises(DeviceUnavailableError, match="NVML"):
        Nvml()
