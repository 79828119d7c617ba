"""tcforge.runtime driver/tensormap: the ctypes structs match cuda.h's layout, and bad arguments are refused early."""

from __future__ import annotations

import ctypes

import pytest

from tcforge.errors import TcforgeError
from tcforge.runtime import driver, tensormap


def test_launch_config_layout_matches_cuda_h() -> None:
    # CUlaunchConfig: 7 x uint, CUstream, CUlaunchAttribute*, uint -> 56 bytes on LP64
    assert ctypes.sizeof(driver._LaunchConfig) == 56
    assert driver._LaunchConfig.hStream.offset == 32
    assert driver._LaunchConfig.attrs.offset == 40
    assert driver._LaunchConfig.numAttrs.offset == 48
    # CUlaunchAttribute: id, 4 bytes pad, 64-byte value union
    assert ctypes.sizeof(driver._LaunchAttr) == 72
    assert driver._LaunchAttr.value.offset == 8


def test_tensor_map_buffer_is_64_byte_aligned_and_128_bytes() -> None:
    for _ in range(8):
        tm = tensormap.TensorMap()
        assert ctypes.addressof(tm.param_buffer) % 64 == 0
        assert ctypes.sizeof(tm.param_buffer) == 128


def test_pack_args_points_at_each_value() -> None:
    a, b = ctypes.c_int(7), ctypes.c_longlong(-3)
    tm = tensormap.TensorMap()
    ptrs, keep = driver.pack_args([a, b, tm])
    assert ptrs[0] == ctypes.addressof(a) and ptrs[1] == ctypes.addressof(b)
    assert ptrs[2] == ctypes.addressof(tm.param_buffer)
    assert len(keep) == 3
    with pytest.raises(TcforgeError, match="argument 1"):
        driver.pack_args([a, 5])


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"strides_bytes": [100]}, "multiples of 16"),
        ({"box": [64, 300]}, "box dims"),
        ({"box": [128, 64]}, "swizzle span"),
        ({"address": 8}, "16-byte aligned"),
        ({"swizzle": 96}, "swizzle must be"),
        ({"dims": [0, 10]}, "dims must be"),
    ],
)
def test_tiled_arguments_are_checked_before_the_driver(kwargs: dict, msg: str) -> None:
    args = {
        "dims": [4096, 4096],
        "strides_bytes": [8192],
        "box": [64, 128],
        "elem_bytes": 2,
        "swizzle": 128,
        "address": 1 << 20,
    }
    args.update(kwargs)
    with pytest.raises(TcforgeError, match=msg):
        tensormap.check_tiled_args(**args)
    ok = {
        "dims": [4096, 4096],
        "strides_bytes": [8192],
        "box": [64, 128],
        "elem_bytes": 2,
        "swizzle": 128,
        "address": 1 << 20,
    }
    tensormap.check_tiled_args(**ok)
