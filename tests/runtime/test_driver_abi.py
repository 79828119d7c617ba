"""tcforge.runtime driver/tensormap without a GPU: our constants are cuda-python's enums, the launch config and the
kernel parameters hold the bytes cuda.h lays out, bad arguments are refused early, and driver errors are one line."""

from __future__ import annotations

import builtins
import ctypes
import struct
from types import SimpleNamespace

import pytest

from tcforge.errors import DeviceUnavailableError, TcforgeError
from tcforge.runtime import driver, tensormap

cu = pytest.importorskip("cuda.bindings.driver", reason="cuda-python is not installed")

LAUNCH_CONFIG_BYTES = 56  # CUlaunchConfig on LP64: 7 x uint, CUstream, CUlaunchAttribute*, uint
ATTR_BYTES = 72  # CUlaunchAttribute: id, 4 bytes of padding, a 64-byte value union


def test_constants_are_cuda_pythons_enums() -> None:
    ids = cu.CUlaunchAttributeID
    assert driver.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION == ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert driver.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION == \
        ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert driver.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE == \
        ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
    pol = cu.CUclusterSchedulingPolicy
    assert driver.CLUSTER_POLICIES == {"default": pol.CU_CLUSTER_SCHEDULING_POLICY_DEFAULT,
                                       "spread": pol.CU_CLUSTER_SCHEDULING_POLICY_SPREAD,
                                       "load_balancing": pol.CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING}
    fa, da = cu.CUfunction_attribute, cu.CUdevice_attribute
    assert driver.CU_FUNC_ATTRIBUTE_NUM_REGS == fa.CU_FUNC_ATTRIBUTE_NUM_REGS
    assert driver.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES == fa.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
    assert driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES == fa.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    assert driver.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == da.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    assert driver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == da.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    assert driver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == da.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    dt = cu.CUtensorMapDataType
    assert (tensormap.DTYPE_UINT8, tensormap.DTYPE_FLOAT16, tensormap.DTYPE_FLOAT32, tensormap.DTYPE_BFLOAT16) == (
        dt.CU_TENSOR_MAP_DATA_TYPE_UINT8, dt.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, dt.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        dt.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16)
    sw = cu.CUtensorMapSwizzle
    assert tensormap.SWIZZLE_BYTES == {0: sw.CU_TENSOR_MAP_SWIZZLE_NONE, 32: sw.CU_TENSOR_MAP_SWIZZLE_32B,
                                       64: sw.CU_TENSOR_MAP_SWIZZLE_64B, 128: sw.CU_TENSOR_MAP_SWIZZLE_128B}
    l2 = cu.CUtensorMapL2promotion
    assert (tensormap.L2_PROMOTION_128B, tensormap.L2_PROMOTION_256B) == (
        l2.CU_TENSOR_MAP_L2_PROMOTION_L2_128B, l2.CU_TENSOR_MAP_L2_PROMOTION_L2_256B)


def _config_bytes(cfg: object) -> tuple[tuple[int, ...], int, list[tuple[int, bytes]]]:
    """(grid, block, smem, stream, numAttrs), attrs pointer, [(attr id, value bytes)] read from memory."""
    raw = ctypes.string_at(cfg.getPtr(), LAUNCH_CONFIG_BYTES)
    head = struct.unpack_from("<7I", raw, 0) + struct.unpack_from("<Q", raw, 32) + struct.unpack_from("<I", raw, 48)
    ptr = struct.unpack_from("<Q", raw, 40)[0]
    attrs = []
    for i in range(head[-1]):
        a = ctypes.string_at(ptr + i * ATTR_BYTES, ATTR_BYTES)
        attrs.append((struct.unpack_from("<i", a, 0)[0], a[8:]))
    return head, ptr, attrs


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
def test_launch_config_holds_cuda_h_bytes(cluster, pdl, policy, want) -> None:
    cfg = driver.launch_config((7, 2, 1), (128, 1, 1), 1000, 0xABCDEF0, cluster=cluster, pdl=pdl,
                               cluster_policy=policy)
    head, _, attrs = _config_bytes(cfg)
    assert head == (7, 2, 1, 128, 1, 1, 1000, 0xABCDEF0, len(want))
    for (kind, value), (wkind, wval) in zip(attrs, want, strict=True):
        assert kind == wkind
        if kind == driver.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            assert struct.unpack_from("<3I", value) == wval  # the union's first three uints
        else:
            assert struct.unpack_from("<i", value) == (wval,)  # the union's first int


@pytest.mark.parametrize(("grid", "block", "policy", "msg"), [
    ((0, 1, 1), (128, 1, 1), 0, "must be three positive"),
    ((1, 1), (128, 1, 1), 0, "must be three positive"),
    ((1, 1, 1), (128, 1, 1), 3, "cluster_policy must be one of"),
])
def test_launch_config_refuses_bad_shapes(grid, block, policy, msg) -> None:
    with pytest.raises(TcforgeError, match=msg):
        driver.launch_config(grid, block, cluster_policy=policy)


def test_kernel_args_point_at_each_value_and_patch_in_place() -> None:
    a, b = ctypes.c_int(7), ctypes.c_void_p(0x1000)
    tm = tensormap.TensorMap()
    args = driver.KernelArgs([a, b, tm])
    assert args.pointers() == [ctypes.addressof(a), ctypes.addressof(b), ctypes.addressof(tm.param_buffer)]
    ptrs = (ctypes.c_void_p * 3).from_address(args.address)
    b.value = 0x2000  # patching a pointer: the array still points at the value
    assert ctypes.c_void_p.from_address(ptrs[1]).value == 0x2000
    c = ctypes.c_longlong(-3)
    args.set(0, c)
    assert ptrs[0] == ctypes.addressof(c) and args.values[0] is c
    t = cu.CUtensorMap()
    assert driver.KernelArgs([t]).pointers() == [t.getPtr()]
    with pytest.raises(TcforgeError, match="argument 1"):
        driver.KernelArgs([a, 5])


def test_tensor_map_buffer_is_128_byte_aligned_and_128_bytes() -> None:
    for _ in range(8):
        tm = tensormap.TensorMap()
        assert ctypes.addressof(tm.param_buffer) % 128 == 0
        assert ctypes.sizeof(tm.param_buffer) == 128 and tm.raw() == bytes(128)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"strides_bytes": [100]}, "multiples of 16"),
        ({"box": [64, 300]}, "box dims"),
        ({"box": [128, 64]}, "swizzle span"),
        ({"address": 8}, "16-byte aligned"),
        ({"swizzle": 96}, "swizzle must be"),
        ({"dims": [0, 10]}, "dims must be"),
        ({"dims": [64], "box": [64]}, "rank mismatch"),
    ],
)
def test_tiled_arguments_are_checked_before_the_driver(kwargs: dict, msg: str) -> None:
    ok = {"dims": [4096, 4096], "strides_bytes": [8192], "box": [64, 128], "elem_bytes": 2, "swizzle": 128,
          "address": 1 << 20}
    tensormap.check_tiled_args(**ok)
    with pytest.raises(TcforgeError, match=msg):
        tensormap.check_tiled_args(**{**ok, **kwargs})


def test_encoder_args_map_to_cuda_python_enums() -> None:
    args = tensormap.encoder_args(tensormap.DTYPE_BFLOAT16, 1 << 20, [4096, 512], [8192], [64, 128], 64,
                                  tensormap.L2_PROMOTION_128B)
    dt, rank, addr, dims, strides, box, estr, il, sw, l2, oob = args
    assert dt == cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 and isinstance(dt, cu.CUtensorMapDataType)
    assert (rank, addr) == (2, 1 << 20)
    assert [[int(v) for v in values] for values in (dims, strides, box, estr)] == [[4096, 512], [8192], [64, 128],
                                                                                     [1, 1]]
    assert all(isinstance(v, cu.cuuint64_t) for v in dims + strides)
    assert all(isinstance(v, cu.cuuint32_t) for v in box + estr)
    assert il == cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE
    assert sw == cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B
    assert l2 == cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B
    assert oob == cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE


class _FakeDriver:
    """cuda-python's driver module with cuLaunchKernelEx / cuTensorMapEncodeTiled recorded, not run."""

    def __init__(self, result: int = 0) -> None:
        self.result = cu.CUresult(result)
        self.launches: list[tuple] = []
        self.encodes: list[tuple] = []

    def __getattr__(self, name: str) -> object:
        return getattr(cu, name)

    def cuLaunchKernelEx(self, cfg, f, params, extra):  # noqa: N802
        first = ctypes.c_void_p.from_address(params).value  # what the driver reads during the call
        self.launches.append((_config_bytes(cfg)[0], int(f), params, extra, first))
        return (self.result,)

    def cuTensorMapEncodeTiled(self, *args):  # noqa: N802
        self.encodes.append(args)
        m = cu.CUtensorMap()
        m.opaque = list(range(1, 17))
        return self.result, m

    cuTensorMapEncodeIm2col = cuTensorMapEncodeTiled  # noqa: N815


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> _FakeDriver:
    f = _FakeDriver()
    monkeypatch.setattr(driver, "api", lambda: f)
    return f


def test_launch_passes_the_config_function_and_parameter_array(fake: _FakeDriver) -> None:
    x = ctypes.c_int(3)
    fn = driver.Function(0x1234, "k")
    driver.launch(fn, (4, 1, 1), (128, 1, 1), [x], shared_bytes=512, stream=99, cluster=(2, 1, 1), pdl=True)
    (head, f, _, extra, first), = fake.launches
    assert head == (4, 1, 1, 128, 1, 1, 512, 99, 2) and f == 0x1234 and extra == 0
    assert first == ctypes.addressof(x)
    prepared = driver.Launch(fn, (4, 1, 1), (128, 1, 1), [x], pdl=True)
    prepared(7)
    prepared(7)
    prepared(8)
    assert [h[7] for h, *_ in fake.launches[1:]] == [7, 7, 8]
    assert len(prepared._configs) == 2  # one config per stream, built once
    assert {p for _, _, p, _, _ in fake.launches[1:]} == {prepared.args.address}


def test_a_driver_error_names_the_call_and_the_result_in_one_line(fake: _FakeDriver) -> None:
    fake.result = cu.CUresult.CUDA_ERROR_INVALID_VALUE
    fn = driver.Function(1, "k")
    with pytest.raises(driver.CudaError, match=r"cuLaunchKernelEx\(k, grid=\(4, 1, 1\).*CUDA_ERROR_INVALID_VALUE") as e:
        driver.launch(fn, (4, 1, 1), (128, 1, 1), [ctypes.c_int(3)], cluster_policy=1)
    assert "\n" not in str(e.value) and "cluster_policy=1" in str(e.value)
    fake.result = cu.CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    with pytest.raises(driver.CudaError, match=r"cuLaunchKernelEx\(k, .*CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"):
        driver.Launch(fn, (4, 1, 1), (1024, 1, 1), [])()
    with pytest.raises(driver.CudaError, match=r"^cuFoo failed: CUDA_ERROR_OUT_OF_MEMORY"):
        driver.check(cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY, "cuFoo")
    driver.check(cu.CUresult.CUDA_SUCCESS, "cuFoo")


def test_encode_tiled_copies_the_map_into_the_aligned_buffer(fake: _FakeDriver) -> None:
    tm = tensormap.encode_tiled(tensormap.DTYPE_FLOAT16, 2, 1 << 20, [4096, 4096], [8192], [64, 128])
    assert tm.encoded_by == "cuda-python"
    assert tm.raw() == b"".join(struct.pack("<Q", v) for v in range(1, 17))
    args = fake.encodes[0]
    assert args[0] == cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16 and args[8] == 3  # 128B swizzle
    fake.result = cu.CUresult.CUDA_ERROR_NOT_INITIALIZED
    with pytest.raises(driver.CudaError, match=r"cuTensorMapEncodeTiled\(dims=\[4096, 4096\].*NOT_INITIALIZED"):
        tensormap.encode_tiled(tensormap.DTYPE_FLOAT16, 2, 1 << 20, [4096, 4096], [8192], [64, 128])


def test_encode_tiled_falls_back_to_the_aligned_entry_point(fake: _FakeDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the driver refuses cuda-python's unaligned CUtensorMap, the entry point writes into our buffer."""
    fake.result = cu.CUresult.CUDA_ERROR_INVALID_VALUE
    calls = []

    def direct(out, dt, rank, addr, dims, strides, box, estr, il, sw, l2, oob):
        calls.append((out, dt, rank, addr, list(dims), list(strides[: rank - 1]), list(box), sw, l2))
        ctypes.memset(out, 0x5A, 128)
        return 0

    monkeypatch.setattr(tensormap, "_direct_encoder", lambda: direct)
    monkeypatch.setattr(tensormap, "_use_direct", False)
    tm = tensormap.encode_tiled(tensormap.DTYPE_UINT8, 1, 1 << 20, [4096, 4096], [4096], [128, 128],
                                l2_promotion=tensormap.L2_PROMOTION_128B)
    assert tm.encoded_by == "cuGetProcAddress" and tm.raw() == b"\x5a" * 128
    assert calls == [(ctypes.addressof(tm.param_buffer), 0, 2, 1 << 20, [4096, 4096], [4096], [128, 128], 3, 2)]
    assert tensormap.encode_tiled(tensormap.DTYPE_UINT8, 1, 1 << 20, [64], [], [64]).encoded_by == "cuGetProcAddress"
    assert len(fake.encodes) == 1  # once refused, later maps go straight to the entry point


def test_encode_im2col_passes_the_corners_and_traversal_strides(fake: _FakeDriver) -> None:
    """cuTensorMapEncodeIm2col's arguments: dims C, W, H, N; the corners as plain ints, W first; element strides 1
    for C and N around the traversal strides; errors name the map."""
    tm = tensormap.encode_im2col(tensormap.DTYPE_FLOAT16, 1 << 20, [64, 7, 5, 2], [128, 896, 4480], [-1, -1],
                                 [-2, -1], 64, 32, [2, 2], swizzle=128, oob_nan=True)
    assert tm.raw() == b"".join(struct.pack("<Q", v) for v in range(1, 17))
    args = fake.encodes[0]
    assert args[0] == cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16 and args[1] == 4 and args[2] == 1 << 20
    assert [int(d) for d in args[3]] == [64, 7, 5, 2] and [int(s) for s in args[4]] == [128, 896, 4480]
    assert (args[5], args[6], args[7], args[8]) == ([-1, -1], [-2, -1], 64, 32)
    assert [int(e) for e in args[9]] == [1, 2, 2, 1]
    assert args[11] == cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
    assert args[13] == cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
    fake.result = cu.CUresult.CUDA_ERROR_NOT_INITIALIZED
    with pytest.raises(driver.CudaError, match=r"cuTensorMapEncodeIm2col\(dims=\[64, 7, 5, 2\].*lower=\[-1, -1\]"):
        tensormap.encode_im2col(tensormap.DTYPE_FLOAT16, 1 << 20, [64, 7, 5, 2], [128, 896, 4480], [-1, -1],
                                [-2, -1], 64, 32, [2, 2])


def test_missing_cuda_python_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_cuda(name, *args, **kwargs):
        if name == "cuda" or name.startswith("cuda."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(driver, "_mod", None)
    monkeypatch.setattr(builtins, "__import__", no_cuda)
    with pytest.raises(DeviceUnavailableError, match=r"^cuda-python is not installed: pip install tcforge\[gpu\]$"):
        driver.api()


def test_no_driver_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(_flags: int) -> tuple:
        raise RuntimeError('"cuda" is an NVIDIA driver library\nand can only be found via system search.')

    monkeypatch.setattr(driver, "_ready", False)
    monkeypatch.setattr(driver, "_mod", SimpleNamespace(cuInit=fail, CUresult=cu.CUresult))
    with pytest.raises(DeviceUnavailableError, match="libcuda") as e:
        driver.api()
    assert "\n" not in str(e.value)
    monkeypatch.setattr(driver, "_mod", SimpleNamespace(cuInit=lambda _f: (cu.CUresult.CUDA_ERROR_NO_DEVICE,),
                                                        CUresult=cu.CUresult))
    with pytest.raises(DeviceUnavailableError, match="no CUDA device"):
        driver.api()


def test_module_import_falls_back_to_cuda_python_12(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuda-python < 12.6 has only `from cuda import cuda`."""
    legacy = SimpleNamespace(marker="legacy")
    real_import = builtins.__import__

    def old_layout(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "cuda.bindings":
            raise ImportError("No module named 'cuda.bindings'")
        if name == "cuda" and fromlist and "cuda" in fromlist:
            return SimpleNamespace(cuda=legacy)
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(driver, "_mod", None)
    monkeypatch.setattr(builtins, "__import__", old_layout)
    assert driver.module() is legacy
