"""The CUDA driver API through cuda-python (`cuda.bindings.driver`): context, module load, function attributes,
occupancy, and launches with cluster, PDL and cluster-scheduling attributes (cuLaunchKernelEx).

Kernel parameters stay ctypes values (or TensorMaps): `KernelArgs` points a `void*[]` at them once, and a launch
passes that array's address, so a prepared `Launch` costs one cuda-python call per enqueue and patching a pointer is
`arg.value = ptr`. Every failing driver call raises CudaError naming the call and the CUresult.
"""

from __future__ import annotations

import ctypes
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tcforge.errors import DeviceUnavailableError, TcforgeError

CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
CLUSTER_POLICIES = {"default": 0, "spread": 1, "load_balancing": 2}  # CUclusterSchedulingPolicy

_lock = threading.Lock()
_mod: Any = None  # the cuda-python driver module (imported on first use)
_ready = False  # cuInit done


class CudaError(TcforgeError):
    """A driver call failed; the message names the call and the CUresult."""


def module() -> Any:
    """cuda-python's driver module, imported once: `cuda.bindings.driver`, or `cuda.cuda` of cuda-python < 12.6."""
    global _mod
    if _mod is None:
        try:
            from cuda.bindings import driver as mod
        except ImportError:
            try:
                from cuda import cuda as mod  # type: ignore[no-redef]
            except ImportError:
                raise DeviceUnavailableError(
                    "cuda-python is not installed: pip install tcforge[gpu]") from None
        _mod = mod
    return _mod


def api() -> Any:
    """The driver module with cuInit done (DeviceUnavailableError where there is no driver or device)."""
    global _ready
    cu = module()
    if not _ready:
        with _lock:
            if not _ready:
                try:
                    (err,) = cu.cuInit(0)
                except Exception as exc:  # cuda-python could not load libcuda
                    msg = " ".join(str(exc).split())
                    raise DeviceUnavailableError(f"the CUDA driver (libcuda) is not available here: {msg}") from None
                if err == cu.CUresult.CUDA_ERROR_NO_DEVICE:
                    raise DeviceUnavailableError("cuInit found no CUDA device (CUDA_ERROR_NO_DEVICE)")
                check(err, "cuInit")
                _ready = True
    return cu


def error_name(result: object) -> str:
    """`CUDA_ERROR_X (its description)` of a CUresult or int."""
    cu = module()
    try:
        res = cu.CUresult(int(result))  # type: ignore[call-overload]
    except ValueError:
        return f"CUresult {int(result)}"  # type: ignore[call-overload]
    text = ""
    if _ready:
        err, s = cu.cuGetErrorString(res)
        text = f" ({s.decode()})" if not err and s else ""
    return f"{res.name}{text}"


def check(result: object, what: str) -> None:
    """Raise CudaError naming `what` and the CUresult when a driver call did not return CUDA_SUCCESS."""
    if result:
        raise CudaError(f"{what} failed: {error_name(result)}")


def call(name: str, *args: object, what: str | None = None) -> Any:
    """`cuXxx(*args)` with its result checked; returns the outputs (None, the one output, or a tuple)."""
    out = getattr(api(), name)(*args)
    check(out[0], what or name)
    return None if len(out) == 1 else out[1] if len(out) == 2 else out[1:]


def ensure_context(device: int = 0) -> int:
    """Make the device's primary context (the one PyTorch uses) current on this thread; returns its handle."""
    ctx = call("cuCtxGetCurrent")
    dev = call("cuDeviceGet", device)
    if int(ctx) and int(call("cuCtxGetDevice")) == int(dev):
        return int(ctx)
    ctx = call("cuDevicePrimaryCtxRetain", dev)
    call("cuCtxSetCurrent", ctx)
    return int(ctx)


def device_attribute(attr: int, device: int = 0) -> int:
    """One cuDeviceGetAttribute value."""
    cu = api()
    return int(call("cuDeviceGetAttribute", cu.CUdevice_attribute(attr), cu.CUdevice(device),
                    what=f"cuDeviceGetAttribute({attr}, device={device})"))


def multiprocessor_count(device: int = 0) -> int:
    """Number of SMs (132 on the H100 SXM and the H200)."""
    return device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)


def compute_capability(device: int = 0) -> tuple[int, int]:
    """(major, minor): (9, 0) on Hopper."""
    return (device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))


@dataclass(eq=False)
class Function:
    """A kernel in a loaded module: its handle as an int (a cache key) and cuda-python's CUfunction."""

    handle: int
    name: str
    cu: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.cu is None:
            self.cu = module().CUfunction(self.handle)

    def attribute(self, attr: int) -> int:
        """cuFuncGetAttribute."""
        return int(call("cuFuncGetAttribute", api().CUfunction_attribute(attr), self.cu,
                        what=f"cuFuncGetAttribute({attr}) for {self.name}"))

    def set_max_dynamic_shared(self, nbytes: int) -> None:
        """Allow more than 48 KB of dynamic shared memory."""
        cu = api()
        call("cuFuncSetAttribute", self.cu, cu.CUfunction_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
             int(nbytes), what=f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={nbytes}) for {self.name}")


class Module:
    """A cubin loaded into the current context."""

    def __init__(self, image: bytes) -> None:
        self.cu = call("cuModuleLoadData", image)
        self.handle = int(self.cu)
        self._functions: dict[str, Function] = {}

    def function(self, name: str) -> Function:
        """Look a kernel up by its (extern "C") name."""
        fn = self._functions.get(name)
        if fn is None:
            f = call("cuModuleGetFunction", self.cu, name.encode(), what=f"cuModuleGetFunction({name!r})")
            fn = self._functions[name] = Function(int(f), name, f)
        return fn


_CDATA = ctypes._SimpleCData.__mro__[1]  # the base of every ctypes value, structure, union and array


def _address(i: int, a: object) -> int:
    if isinstance(a, _CDATA):
        return ctypes.addressof(a)
    buf = getattr(a, "param_buffer", None)
    if buf is not None:  # TensorMap: its aligned 128-byte copy
        return ctypes.addressof(buf)
    get_ptr = getattr(a, "getPtr", None)  # a cuda-python struct (e.g. CUtensorMap)
    if get_ptr is not None:
        return int(get_ptr())
    raise TcforgeError(f"kernel argument {i} must be a ctypes value or a TensorMap, got {type(a).__name__}")


class KernelArgs:
    """A kernel's `void*[] kernelParams`, built once over ctypes values and TensorMaps (kept alive here).

    Patch a launch in place by assigning the ctypes value (`args.values[i].value = ptr`): the array points at it.
    `set` replaces an argument object."""

    __slots__ = ("values", "_ptrs", "address")

    def __init__(self, args: Sequence[object]) -> None:
        self.values = list(args)
        addressof, cdata = ctypes.addressof, _CDATA
        self._ptrs = array("Q", [addressof(a) if isinstance(a, cdata) else _address(i, a)
                                 for i, a in enumerate(self.values)] or [0])
        self.address = self._ptrs.buffer_info()[0]  # fixed: the array is never resized

    def set(self, i: int, value: object) -> None:
        """Point parameter `i` at a new ctypes value / TensorMap."""
        self._ptrs[i] = _address(i, value)
        self.values[i] = value

    def point(self, i: int, value: object, address: int) -> None:
        """`set` with the value's address already known (a remembered TensorMap's `param_buffer`)."""
        self._ptrs[i] = address
        self.values[i] = value

    def pointers(self) -> list[int]:
        """The addresses the array holds (tests)."""
        return list(self._ptrs[: len(self.values)])


def _check_shape(grid: Sequence[int], block: Sequence[int], cluster_policy: int) -> None:
    if len(grid) != 3 or len(block) != 3 or any(g < 1 for g in grid) or any(b < 1 for b in block):
        raise TcforgeError(f"grid {tuple(grid)} and block {tuple(block)} must be three positive extents")
    if cluster_policy not in CLUSTER_POLICIES.values():
        raise TcforgeError(f"cluster_policy must be one of {CLUSTER_POLICIES} (by value), got {cluster_policy!r}")


def launch_config(
    grid: Sequence[int],
    block: Sequence[int],
    shared_bytes: int = 0,
    stream: int = 0,
    *,
    cluster: Sequence[int] | None = None,
    pdl: bool = False,
    cluster_policy: int = 0,
) -> Any:
    """A CUlaunchConfig: a cluster-dimension attribute when `cluster` is not (1, 1, 1), a cluster scheduling-policy
    preference when `cluster_policy` is not 0 (also for kernels with compile-time `__cluster_dims__`), and with `pdl`
    programmatic stream serialisation (the grid may start while the previous kernel in the stream finishes: the
    kernel must `griddepcontrol.wait` before touching global memory)."""
    _check_shape(grid, block, cluster_policy)
    cu = module()
    cfg = cu.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = (int(g) for g in grid)
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = (int(b) for b in block)
    cfg.sharedMemBytes = int(shared_bytes)
    cfg.hStream = int(stream)
    ids = cu.CUlaunchAttributeID
    attrs = []
    if cluster is not None and tuple(cluster) != (1, 1, 1):
        a = cu.CUlaunchAttribute()
        a.id = ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = (int(c) for c in cluster)
        attrs.append(a)
    if cluster_policy:
        a = cu.CUlaunchAttribute()
        a.id = ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
        a.value.clusterSchedulingPolicyPreference = cu.CUclusterSchedulingPolicy(int(cluster_policy))
        attrs.append(a)
    if pdl:
        a = cu.CUlaunchAttribute()
        a.id = ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        a.value.programmaticStreamSerializationAllowed = 1
        attrs.append(a)
    if attrs:
        cfg.attrs = attrs
        cfg.numAttrs = len(attrs)
    return cfg


def _describe(fn: Function, grid: Sequence[int], block: Sequence[int], shared_bytes: int,
              cluster: Sequence[int] | None, pdl: bool, cluster_policy: int) -> str:
    policy = f", cluster_policy={cluster_policy}" if cluster_policy else ""
    return (f"cuLaunchKernelEx({fn.name}, grid={tuple(grid)}, block={tuple(block)}, smem={shared_bytes}, "
            f"cluster={cluster}, pdl={pdl}{policy})")


class Launch:
    """One kernel launch prepared once (parameters; a config per stream): `prepared(stream)` enqueues it."""

    __slots__ = ("fn", "args", "_shape", "_configs", "_enqueue", "what")

    def __init__(
        self,
        fn: Function,
        grid: Sequence[int],
        block: Sequence[int],
        args: KernelArgs | Sequence[object],
        *,
        shared_bytes: int = 0,
        cluster: Sequence[int] | None = None,
        pdl: bool = False,
        cluster_policy: int = 0,
    ) -> None:
        _check_shape(grid, block, cluster_policy)
        self.fn = fn
        self.args = args if isinstance(args, KernelArgs) else KernelArgs(args)
        self._shape = (tuple(grid), tuple(block), int(shared_bytes), cluster, pdl, cluster_policy)
        self._configs: dict[int, Any] = {}
        self._enqueue = api().cuLaunchKernelEx
        self.what = _describe(fn, grid, block, shared_bytes, cluster, pdl, cluster_policy)

    def __call__(self, stream: int = 0) -> None:
        cfg = self._configs.get(stream)
        if cfg is None:
            g, b, smem, cluster, pdl, policy = self._shape
            cfg = self._configs[stream] = launch_config(g, b, smem, stream, cluster=cluster, pdl=pdl,
                                                        cluster_policy=policy)
        (err,) = self._enqueue(cfg, self.fn.cu, self.args.address, 0)
        if err:
            raise CudaError(f"{self.what} failed: {error_name(err)}")


_configs: dict[tuple, Any] = {}


def launch(
    fn: Function,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    args: Sequence[object] | KernelArgs,
    *,
    shared_bytes: int = 0,
    stream: int = 0,
    cluster: tuple[int, int, int] | None = None,
    pdl: bool = False,
    cluster_policy: int = 0,
) -> None:
    """Launch once with cuLaunchKernelEx (see `launch_config` for the attributes); configs are cached by shape and
    stream, the parameter array is built per call unless `args` is a KernelArgs. Repeated launches: `Launch`."""
    key = (grid, block, shared_bytes, stream, cluster, pdl, cluster_policy)
    try:
        cfg = _configs.get(key)
    except TypeError:  # lists for extents
        key = (tuple(grid), tuple(block), shared_bytes, stream, cluster and tuple(cluster), pdl, cluster_policy)
        cfg = _configs.get(key)
    if cfg is None:
        cfg = launch_config(grid, block, shared_bytes, stream, cluster=cluster, pdl=pdl, cluster_policy=cluster_policy)
        if len(_configs) > 4096:
            _configs.clear()
        _configs[key] = cfg
    params = args if isinstance(args, KernelArgs) else KernelArgs(args)
    (err,) = api().cuLaunchKernelEx(cfg, fn.cu, params.address, 0)
    if err:
        what = _describe(fn, grid, block, shared_bytes, cluster, pdl, cluster_policy)
        raise CudaError(f"{what} failed: {error_name(err)}")


def max_active_clusters(fn: Function, block: tuple[int, int, int], shared_bytes: int, cluster_size: int) -> int:
    """cuOccupancyMaxActiveClusters: how many clusters of `cluster_size` CTAs (along x) of `fn` (compiled with
    `__cluster_dims__`) can be resident at once (clusters must fit inside one GPC: can be less than SMs / size)."""
    cfg = launch_config((cluster_size, 1, 1), block, shared_bytes)
    return int(call("cuOccupancyMaxActiveClusters", fn.cu, cfg,
                    what=f"cuOccupancyMaxActiveClusters({fn.name}, cluster={cluster_size}, smem={shared_bytes})"))


def max_active_blocks_per_sm(fn: Function, threads: int, shared_bytes: int) -> int:
    """cuOccupancyMaxActiveBlocksPerMultiprocessor: resident CTAs of `fn` per SM (kernels without clusters)."""
    return int(call("cuOccupancyMaxActiveBlocksPerMultiprocessor", fn.cu, int(threads), int(shared_bytes),
                    what=f"cuOccupancyMaxActiveBlocksPerMultiprocessor({fn.name}, threads={threads}, "
                         f"smem={shared_bytes})"))


def mem_alloc(nbytes: int) -> int:
    """cuMemAlloc: a device allocation (tools that run without torch); free it with `mem_free`."""
    return int(call("cuMemAlloc", int(nbytes), what=f"cuMemAlloc({nbytes})"))


def mem_free(ptr: int) -> None:
    """cuMemFree."""
    call("cuMemFree", api().CUdeviceptr(ptr))


def memcpy_htod(dst: int, src: Any) -> None:
    """cuMemcpyHtoD of a contiguous host buffer (a numpy array) to device address `dst`."""
    view = memoryview(src).cast("B")
    call("cuMemcpyHtoD", api().CUdeviceptr(dst), view, view.nbytes, what=f"cuMemcpyHtoD({view.nbytes} bytes)")


def memcpy_dtoh(dst: Any, src: int) -> None:
    """cuMemcpyDtoH from device address `src` into a contiguous, writable host buffer (a numpy array)."""
    view = memoryview(dst).cast("B")
    call("cuMemcpyDtoH", view, api().CUdeviceptr(src), view.nbytes, what=f"cuMemcpyDtoH({view.nbytes} bytes)")


def memset_d8_async(ptr: int, value: int, nbytes: int, stream: int = 0) -> None:
    """cuMemsetD8Async: `nbytes` bytes at device address `ptr` set to `value`, in stream order."""
    (err,) = api().cuMemsetD8Async(ptr, value, nbytes, stream)
    if err:
        raise CudaError(f"cuMemsetD8Async({nbytes} bytes) failed: {error_name(err)}")


def synchronize() -> None:
    """cuCtxSynchronize: wait for all work in the current context."""
    call("cuCtxSynchronize")
