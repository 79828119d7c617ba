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


def _cuda_h() -> str | None:
    """cuda.h from a CUDA toolkit or Triton's wheel (None: neither here)."""
    import glob
    import importlib.util
    import os
    from pathlib import Path

    cands = [Path(os.environ[v]) / "include" / "cuda.h" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    cands += [Path(p) for p in sorted(glob.glob("/usr/local/cuda*/include/cuda.h"), reverse=True)]
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin is not None:
        cands.append(Path(spec.origin).parent / "backends" / "nvidia" / "include" / "cuda.h")
    for c in cands:
        if c.is_file():
            return c.read_text(errors="replace")
    return None


def test_launch_attribute_ids_and_pdl_value_match_cuda_h() -> None:
    import re

    text = _cuda_h()
    if text is None:
        pytest.skip("no cuda.h on this machine")
    for name in ("CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION", "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION",
                 "CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE"):
        found = re.search(rf"^\s*,?\s*{name}\s*=\s*(\d+)", text, re.M)
        assert found is not None, name
        assert int(found.group(1)) == getattr(driver, name)
    for key, name in (("spread", "SPREAD"), ("load_balancing", "LOAD_BALANCING")):
        found = re.search(rf"^\s*,?\s*CU_CLUSTER_SCHEDULING_POLICY_{name}\s*=\s*(\d+)", text, re.M)
        assert found is not None, name
        assert int(found.group(1)) == driver.CLUSTER_POLICIES[key]
    # the PDL flag is the union's first int, as the cluster dims are its first three uints
    assert re.search(r"int programmaticStreamSerializationAllowed;", text)
    assert driver._LaunchAttrValue.flag.offset == 0 and driver._LaunchAttrValue.cluster.offset == 0
    assert ctypes.sizeof(driver._LaunchAttrValue) == 64


class _FakeLaunch:
    """Stands in for libcuda's cuLaunchKernelEx: records the launch config's attributes."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, tuple[int, int, int], int]] = []
        self.num = -1

    def cuLaunchKernelEx(self, cfg_ref: object, fn: object, params: object, extra: object) -> int:  # noqa: N802
        cfg = ctypes.cast(cfg_ref, ctypes.POINTER(driver._LaunchConfig)).contents
        self.num = cfg.numAttrs
        for i in range(cfg.numAttrs):
            a = cfg.attrs[i]
            self.seen.append((a.id, tuple(a.value.cluster), a.value.flag))
        return 0


@pytest.mark.parametrize(
    ("cluster", "pdl", "policy", "want"),
    [
        (None, False, 0, []),
        ((1, 1, 1), False, 0, []),
        ((2, 1, 1), False, 0, [(4, (2, 1, 1))]),
        (None, True, 0, [(6, 1)]),
        ((2, 1, 1), True, 0, [(4, (2, 1, 1)), (6, 1)]),
        (None, False, 1, [(5, 1)]),  # a compile-time cluster (__cluster_dims__) takes the preference too
        ((4, 1, 1), True, 2, [(4, (4, 1, 1)), (5, 2), (6, 1)]),
    ],
)
def test_launch_passes_cluster_and_pdl_attributes(monkeypatch: pytest.MonkeyPatch, cluster, pdl, policy, want) -> None:
    fake = _FakeLaunch()
    monkeypatch.setattr(driver, "lib", lambda: fake)
    driver.launch(driver.Function(1, "k"), (4, 1, 1), (128, 1, 1), [ctypes.c_int(3)], cluster=cluster, pdl=pdl,
                  cluster_policy=policy)
    assert fake.num == len(want)
    for (kind, cl, flag), (wkind, wval) in zip(fake.seen, want, strict=True):
        assert kind == wkind
        if kind == driver.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            assert cl == wval
        else:
            assert flag == wval


def test_launch_refuses_an_unknown_cluster_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeLaunch()
    monkeypatch.setattr(driver, "lib", lambda: fake)
    with pytest.raises(driver.TcforgeError, match="cluster_policy must be one of"):
        driver.launch(driver.Function(1, "k"), (4, 1, 1), (128, 1, 1), [ctypes.c_int(3)], cluster_policy=3)
    assert fake.num == -1  # nothing was launched
