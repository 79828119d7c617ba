"""The CUDA driver API through ctypes (libcuda): context, module load, function attributes, launch (clusters too).

ctypes on libcuda is used rather than a binding package so that argument buffers (a 128-byte CUtensorMap passed by
value, 64-bit pointers, scalars) are laid out exactly as the kernel's parameter list says, on any cuda-python version.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from tcforge.errors import DeviceUnavailableError, TcforgeError

CUresult = ctypes.c_int
_lock = threading.Lock()
_lib: ctypes.CDLL | None = None

CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
CLUSTER_POLICIES = {"default": 0, "spread": 1, "load_balancing": 2}  # CUclusterSchedulingPolicy


class CudaError(TcforgeError):
    """A driver call failed; the message names the call and the CUDA error."""


class _LaunchAttrValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("cluster", ctypes.c_uint * 3), ("flag", ctypes.c_int)]


class _LaunchAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _LaunchAttrValue)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [
        ("gridDimX", ctypes.c_uint),
        ("gridDimY", ctypes.c_uint),
        ("gridDimZ", ctypes.c_uint),
        ("blockDimX", ctypes.c_uint),
        ("blockDimY", ctypes.c_uint),
        ("blockDimZ", ctypes.c_uint),
        ("sharedMemBytes", ctypes.c_uint),
        ("hStream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(_LaunchAttr)),
        ("numAttrs", ctypes.c_uint),
    ]


def lib() -> ctypes.CDLL:
    """libcuda, loaded once (DeviceUnavailableError where there is no NVIDIA driver)."""
    global _lib
    with _lock:
        if _lib is None:
            try:
                _lib = ctypes.CDLL("libcuda.so.1")
            except OSError as exc:
                raise DeviceUnavailableError(f"the CUDA driver (libcuda.so.1) is not available here: {exc}") from exc
            check(_lib.cuInit(0), "cuInit")
    return _lib


def check(result: int, what: str) -> None:
    """Raise CudaError naming `what` when a driver call returned an error code."""
    if result == 0:
        return
    name = ctypes.c_char_p()
    text = ctypes.c_char_p()
    if _lib is not None:
        _lib.cuGetErrorName(result, ctypes.byref(name))
        _lib.cuGetErrorString(result, ctypes.byref(text))
    n = name.value.decode() if name.value else str(result)
    t = text.value.decode() if text.value else ""
    raise CudaError(f"{what} failed: {n} ({t})")


def ensure_context(device: int = 0) -> int:
    """Make the device's primary context (the one PyTorch uses) current on this thread; returns its handle."""
    cu = lib()
    ctx = ctypes.c_void_p()
    check(cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    if ctx.value:
        cur = ctypes.c_int()
        check(cu.cuCtxGetDevice(ctypes.byref(cur)), "cuCtxGetDevice")
        if cur.value == dev.value:
            return ctx.value
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx.value or 0


def device_attribute(attr: int, device: int = 0) -> int:
    """One cuDeviceGetAttribute value."""
    cu = lib()
    val = ctypes.c_int()
    check(cu.cuDeviceGetAttribute(ctypes.byref(val), attr, device), "cuDeviceGetAttribute")
    return val.value


def multiprocessor_count(device: int = 0) -> int:
    """Number of SMs (132 on the H200)."""
    return device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)


@dataclass
class Function:
    """A kernel in a loaded module."""

    handle: int
    name: str

    def attribute(self, attr: int) -> int:
        """cuFuncGetAttribute."""
        val = ctypes.c_int()
        check(lib().cuFuncGetAttribute(ctypes.byref(val), attr, ctypes.c_void_p(self.handle)), "cuFuncGetAttribute")
        return val.value

    def set_max_dynamic_shared(self, nbytes: int) -> None:
        """Allow more than 48 KB of dynamic shared memory."""
        check(
            lib().cuFuncSetAttribute(
                ctypes.c_void_p(self.handle), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(nbytes)
            ),
            f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={nbytes}) for {self.name}",
        )


class Module:
    """A cubin loaded into the current context."""

    def __init__(self, image: bytes) -> None:
        cu = lib()
        self._image = ctypes.create_string_buffer(image, len(image))
        handle = ctypes.c_void_p()
        check(cu.cuModuleLoadData(ctypes.byref(handle), self._image), "cuModuleLoadData")
        self.handle = handle.value
        self._functions: dict[str, Function] = {}

    def function(self, name: str) -> Function:
        """Look a kernel up by its (extern "C") name."""
        if name not in self._functions:
            fn = ctypes.c_void_p()
            check(
                lib().cuModuleGetFunction(ctypes.byref(fn), ctypes.c_void_p(self.handle), name.encode()),
                f"cuModuleGetFunction({name!r})",
            )
            self._functions[name] = Function(fn.value or 0, name)
        return self._functions[name]


def pack_args(args: Sequence[object]) -> tuple[ctypes.Array, list[object]]:
    """Build the `void**` kernelParams array: each argument must be a ctypes object (or a TensorMap)."""
    keep: list[object] = []
    ptrs = (ctypes.c_void_p * max(1, len(args)))()
    for i, a in enumerate(args):
        buf = getattr(a, "param_buffer", None)
        if buf is not None:  # TensorMap
            ptrs[i] = ctypes.addressof(buf)
            keep.append(a)
        elif isinstance(a, ctypes._SimpleCData | ctypes.Structure | ctypes.Array):
            ptrs[i] = ctypes.addressof(a)
            keep.append(a)
        else:
            raise TcforgeError(f"kernel argument {i} must be a ctypes value or a TensorMap, got {type(a).__name__}")
    return ptrs, keep


def max_active_clusters(fn: Function, block: tuple[int, int, int], shared_bytes: int, cluster_size: int) -> int:
    """cuOccupancyMaxActiveClusters: how many clusters of `cluster_size` CTAs (along x) of `fn` can be resident at
    once on this device (clusters must fit inside one GPC, so this can be less than SMs / cluster_size)."""
    cfg = _LaunchConfig(cluster_size, 1, 1, *block, int(shared_bytes), None, None, 0)
    n = ctypes.c_int()
    check(lib().cuOccupancyMaxActiveClusters(ctypes.byref(n), ctypes.c_void_p(fn.handle), ctypes.byref(cfg)),
          f"cuOccupancyMaxActiveClusters({fn.name}, cluster={cluster_size}, smem={shared_bytes})")
    return n.value


def max_active_blocks_per_sm(fn: Function, threads: int, shared_bytes: int) -> int:
    """cuOccupancyMaxActiveBlocksPerMultiprocessor: resident CTAs of `fn` per SM (kernels without clusters)."""
    n = ctypes.c_int()
    check(lib().cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), ctypes.c_void_p(fn.handle),
                                                            int(threads), ctypes.c_size_t(int(shared_bytes))),
          f"cuOccupancyMaxActiveBlocksPerMultiprocessor({fn.name}, threads={threads}, smem={shared_bytes})")
    return n.value


def launch(
    fn: Function,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    args: Sequence[object],
    *,
    shared_bytes: int = 0,
    stream: int = 0,
    cluster: tuple[int, int, int] | None = None,
    pdl: bool = False,
    cluster_policy: int = 0,
) -> None:
    """Launch with cuLaunchKernelEx: a cluster dimension attribute when `cluster` is given, a cluster
    scheduling-policy preference when `cluster_policy` is not 0 (CLUSTER_POLICIES); with `pdl` the
    programmatic-stream-serialisation attribute (the grid may start while the previous kernel in the stream finishes:
    the kernel must `griddepcontrol.wait` before touching global memory)."""
    if any(g < 1 for g in grid) or any(b < 1 for b in block):
        raise TcforgeError(f"grid {grid} and block {block} must be positive")
    if cluster_policy not in CLUSTER_POLICIES.values():
        raise TcforgeError(f"cluster_policy must be one of {CLUSTER_POLICIES} (by value), got {cluster_policy!r}")
    params, keep = pack_args(args)
    cfg = _LaunchConfig(*grid, *block, int(shared_bytes), ctypes.c_void_p(stream), None, 0)
    attrs = (_LaunchAttr * 3)()
    n = 0
    if cluster is not None and cluster != (1, 1, 1):
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attrs[n].value.cluster[0], attrs[n].value.cluster[1], attrs[n].value.cluster[2] = cluster
        n += 1
    if cluster_policy:  # also for kernels with compile-time cluster dimensions (__cluster_dims__)
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
        attrs[n].value.flag = int(cluster_policy)
        n += 1
    if pdl:
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attrs[n].value.flag = 1
        n += 1
    if n:
        cfg.attrs = ctypes.cast(attrs, ctypes.POINTER(_LaunchAttr))
        cfg.numAttrs = n
    check(
        lib().cuLaunchKernelEx(ctypes.byref(cfg), ctypes.c_void_p(fn.handle), params, None),
        f"cuLaunchKernelEx({fn.name}, grid={grid}, block={block}, smem={shared_bytes}, cluster={cluster}, pdl={pdl}"
        f"{f', cluster_policy={cluster_policy}' if cluster_policy else ''})",
    )
    del keep, attrs
