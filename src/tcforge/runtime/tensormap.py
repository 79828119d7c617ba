"""TMA descriptors: `cuTensorMapEncodeTiled` through cuda-python, copied into a 128-byte-aligned 128-byte buffer that
`driver.launch` passes by value for a `__grid_constant__ const CUtensorMap` parameter.

cuda-python's CUtensorMap lives inside a Python object, not 64-byte aligned as cuda.h asks of the encoder's output;
if the driver refuses that address, its entry point (from cuGetProcAddress) encodes straight into our buffer.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.runtime import driver

# CUtensorMapDataType values (cuda.h)
DTYPE_UINT8 = 0
DTYPE_UINT32 = 2
DTYPE_INT32 = 3
DTYPE_FLOAT16 = 6
DTYPE_FLOAT32 = 7
DTYPE_BFLOAT16 = 9
SWIZZLE_BYTES = {0: 0, 32: 1, 64: 2, 128: 3}  # CUtensorMapSwizzle
L2_PROMOTION_NONE = 0
L2_PROMOTION_64B = 1
L2_PROMOTION_128B = 2
L2_PROMOTION_256B = 3
MAP_BYTES = 128
MAP_ALIGN = 128  # alignas(CUtensorMap): 64 before CUDA 13, 128 since

_direct: Any = None  # the driver's cuTensorMapEncodeTiled as a ctypes function (resolved on first need)
_direct_im2col: Any = None  # the driver's cuTensorMapEncodeIm2col as a ctypes function (resolved on first need)
_replace: Any = None  # the driver's cuTensorMapReplaceAddress as a ctypes function (resolved on first need)
_use_direct = False  # set once cuda-python's output address was refused and the direct path then succeeded


class TensorMap:
    """An encoded CUtensorMap; `param_buffer` is what `driver.launch` passes for a `__grid_constant__` parameter."""

    __slots__ = ("_raw", "param_buffer", "encoded_by")

    def __init__(self) -> None:
        self._raw = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGN)
        off = (-ctypes.addressof(self._raw)) % MAP_ALIGN
        self.param_buffer = (ctypes.c_ubyte * MAP_BYTES).from_buffer(self._raw, off)
        self.encoded_by = ""  # "cuda-python" or "cuGetProcAddress" once encoded

    @classmethod
    def zeros(cls) -> TensorMap:
        """A placeholder for kernels that take a map they do not use in this variant."""
        return cls()

    def raw(self) -> bytes:
        """The 128 bytes the kernel receives."""
        return bytes(self.param_buffer)

    def rebased(self, address: int) -> TensorMap:
        """A copy of this map over another base address (the copy's base replaced; this map is left as it is)."""
        other = TensorMap()
        ctypes.memmove(other.param_buffer, self.param_buffer, MAP_BYTES)
        other.encoded_by = self.encoded_by
        other.replace_address(address)
        return other

    def replace_address(self, address: int) -> None:
        """The same map over another base address (cuTensorMapReplaceAddress on the parameter copy, in place; about
        half a microsecond against ~5 for a fresh encode). The base must be 16-byte aligned, as the encoder's."""
        if address % 16:
            raise TcforgeError(f"tensor map base address must be 16-byte aligned (got {address:#x})")
        err = _replacer()(ctypes.addressof(self.param_buffer), address)
        if err:
            driver.check(err, f"cuTensorMapReplaceAddress({address:#x})")


def check_tiled_args(
    dims: Sequence[int], strides_bytes: Sequence[int], box: Sequence[int], elem_bytes: int, swizzle: int, address: int
) -> None:
    """The encoder's documented constraints, checked in Python so the error says what to change."""
    rank = len(dims)
    if not 1 <= rank <= 5 or len(box) != rank or len(strides_bytes) != rank - 1:
        raise TcforgeError(
            f"tensor map rank mismatch: dims {list(dims)}, strides {list(strides_bytes)}, box {list(box)}"
        )
    if address % 16:
        raise TcforgeError(f"tensor map base address must be 16-byte aligned (got {address:#x})")
    for s in strides_bytes:
        if s % 16 or s <= 0 or s >= 2**40:
            raise TcforgeError(f"tensor map strides must be positive multiples of 16 bytes below 2^40 (got {s})")
    for d in dims:
        if not 1 <= d <= 2**32:
            raise TcforgeError(f"tensor map dims must be in [1, 2^32] (got {d})")
    for b in box:
        if not 1 <= b <= 256:
            raise TcforgeError(f"tensor map box dims must be in [1, 256] (got {list(box)})")
    if swizzle not in SWIZZLE_BYTES:
        raise TcforgeError(f"swizzle must be one of {sorted(SWIZZLE_BYTES)} bytes (got {swizzle})")
    inner = box[0] * elem_bytes
    if swizzle and inner > swizzle:
        raise TcforgeError(f"box inner extent {inner} B exceeds the {swizzle} B swizzle span")
    if inner % 16:
        raise TcforgeError(f"box inner extent must be a multiple of 16 bytes (got {inner})")


def encoder_args(
    dtype: int, address: int, dims: Sequence[int], strides_bytes: Sequence[int], box: Sequence[int], swizzle: int,
    l2_promotion: int, oob_nan: bool = False,
) -> tuple:
    """cuTensorMapEncodeTiled's arguments after the output, as cuda-python takes them (enums, cuuint32_t /
    cuuint64_t lists; element strides 1, no interleave, out-of-bounds reads fill zeros, or NaN for `oob_nan`)."""
    cu = driver.module()
    u32, u64 = cu.cuuint32_t, cu.cuuint64_t
    rank = len(dims)
    return (_enum(cu.CUtensorMapDataType, dtype), rank, int(address), [u64(int(d)) for d in dims],
            [u64(int(s)) for s in strides_bytes], [u32(int(b)) for b in box], [u32(1)] * rank,
            *_layout_args(swizzle, l2_promotion, oob_nan))


def _layout_args(swizzle: int, l2_promotion: int, oob_nan: bool) -> tuple:
    """Both encoders' last four arguments: no interleave, the swizzle, L2 promotion and out-of-bounds fill enums."""
    cu = driver.module()
    return (cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            _enum(cu.CUtensorMapSwizzle, SWIZZLE_BYTES[swizzle]), _enum(cu.CUtensorMapL2promotion, l2_promotion),
            cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA if oob_nan else
            cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)


_enums: dict[tuple[type, int], Any] = {}


def _enum(kind: type, value: int) -> Any:
    """cuda-python's enum member of a value (cached: building one costs about half a microsecond)."""
    member = _enums.get((kind, value))
    if member is None:
        member = _enums[(kind, value)] = kind(value)
    return member


def _driver_function(name: str, proto: Any) -> Any:
    """A driver entry point as a ctypes function of type `proto`, resolved through cuda-python's cuGetProcAddress."""
    cu = driver.api()
    flags = cu.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_DEFAULT
    out = cu.cuGetProcAddress(name.encode(), 12000, flags)
    driver.check(out[0], f"cuGetProcAddress({name})")
    return proto(int(out[1]))


def _direct_encoder() -> Any:
    """The driver's own cuTensorMapEncodeTiled (resolved through cuda-python's cuGetProcAddress), for our buffer."""
    global _direct
    if _direct is None:
        u32, u64, i32, vp = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p
        proto = ctypes.CFUNCTYPE(i32, vp, i32, u32, vp, ctypes.POINTER(u64), ctypes.POINTER(u64),
                                 ctypes.POINTER(u32), ctypes.POINTER(u32), i32, i32, i32, i32)
        _direct = _driver_function("cuTensorMapEncodeTiled", proto)
    return _direct


def _replacer() -> Any:
    """The driver's cuTensorMapReplaceAddress as a ctypes function (cuda-python's takes its own CUtensorMap object, not
    our aligned buffer), resolved once through cuGetProcAddress."""
    global _replace
    if _replace is None:
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        _replace = _driver_function("cuTensorMapReplaceAddress", proto)
    return _replace


def _encode_direct(tm: TensorMap, args: tuple) -> int:
    dt, rank, addr, *lists, il, sw, l2, oob = args
    dims, strides, box, estr = ([int(v) for v in values] for values in lists)
    return int(_direct_encoder()(
        ctypes.addressof(tm.param_buffer), int(dt), rank, addr, (ctypes.c_uint64 * rank)(*dims),
        (ctypes.c_uint64 * max(1, rank - 1))(*strides), (ctypes.c_uint32 * rank)(*box),
        (ctypes.c_uint32 * rank)(*estr), int(il), int(sw), int(l2), int(oob)))


def _describe(dims: Sequence[int], strides_bytes: Sequence[int], box: Sequence[int], swizzle: int) -> str:
    return (f"cuTensorMapEncodeTiled(dims={list(dims)}, strides={list(strides_bytes)}, box={list(box)}, "
            f"swizzle={swizzle})")


def encode_tiled(
    dtype: int,
    elem_bytes: int,
    address: int,
    dims: Sequence[int],
    strides_bytes: Sequence[int],
    box: Sequence[int],
    *,
    swizzle: int = 128,
    l2_promotion: int = L2_PROMOTION_256B,
    oob_nan: bool = False,
) -> TensorMap:
    """Encode a tiled tensor map (dims innermost first; strides in bytes for dims 1..rank-1); OOB reads fill zeros
    (NaN with `oob_nan`, float types only)."""
    check_tiled_args(dims, strides_bytes, box, elem_bytes, swizzle, address)
    args = encoder_args(dtype, address, dims, strides_bytes, box, swizzle, l2_promotion, oob_nan)
    return _encode("cuTensorMapEncodeTiled", args, lambda tm: _encode_direct(tm, args),
                   _describe(dims, strides_bytes, box, swizzle))


def _encode(name: str, args: tuple, direct: Any, what: str) -> TensorMap:
    """A map from cuda-python's encoder NAME, or, once cuda-python's unaligned output has been refused, from the
    driver's entry point writing into our aligned buffer (`direct(tm)` -> CUresult)."""
    global _use_direct
    tm = TensorMap()
    if not _use_direct:
        err, cu_map = getattr(driver.api(), name)(*args)
        if not err:
            ctypes.memmove(tm.param_buffer, cu_map.getPtr(), MAP_BYTES)
            tm.encoded_by = "cuda-python"
            return tm
        if err != driver.module().CUresult.CUDA_ERROR_INVALID_VALUE or cu_map.getPtr() % 64 == 0:
            driver.check(err, what)
    # cuda-python's unaligned output refused: encode in place
    driver.check(direct(tm), what)
    _use_direct = True
    tm.encoded_by = "cuGetProcAddress"
    return tm


def encode_im2col(
    dtype: int,
    address: int,
    dims: Sequence[int],
    strides_bytes: Sequence[int],
    lower: Sequence[int],
    upper: Sequence[int],
    channels: int,
    pixels: int,
    traversal: Sequence[int],
    *,
    swizzle: int = 0,
    l2_promotion: int = L2_PROMOTION_256B,
    oob_nan: bool = False,
) -> TensorMap:
    """Encode an im2col tensor map (`cuTensorMapEncodeIm2col`: dims C, W, [H, [D,]] N innermost first; the bounding
    box's corners and traversal strides per spatial dimension, W first; C and N element strides 1)."""
    cu = driver.module()
    u32, u64 = cu.cuuint32_t, cu.cuuint64_t
    rank = len(dims)
    estr = [1, *traversal, 1]
    args = (_enum(cu.CUtensorMapDataType, dtype), rank, int(address), [u64(int(d)) for d in dims],
            [u64(int(s)) for s in strides_bytes], [int(v) for v in lower], [int(v) for v in upper], channels, pixels,
            [u32(int(e)) for e in estr], *_layout_args(swizzle, l2_promotion, oob_nan))

    def direct(tm: TensorMap) -> int:
        global _direct_im2col
        if _direct_im2col is None:
            c = ctypes
            proto = c.CFUNCTYPE(c.c_int, c.c_void_p, c.c_int, c.c_uint32, c.c_void_p, c.POINTER(c.c_uint64),
                                c.POINTER(c.c_uint64), c.POINTER(c.c_int), c.POINTER(c.c_int), c.c_uint32, c.c_uint32,
                                c.POINTER(c.c_uint32), c.c_int, c.c_int, c.c_int, c.c_int)
            _direct_im2col = _driver_function("cuTensorMapEncodeIm2col", proto)
        c = ctypes
        return int(_direct_im2col(
            c.addressof(tm.param_buffer), int(dtype), rank, int(address), (c.c_uint64 * rank)(*dims),
            (c.c_uint64 * (rank - 1))(*strides_bytes), (c.c_int * len(lower))(*lower), (c.c_int * len(upper))(*upper),
            channels, pixels, (c.c_uint32 * rank)(*estr), 0, SWIZZLE_BYTES[swizzle], l2_promotion, int(oob_nan)))

    what = (f"cuTensorMapEncodeIm2col(dims={list(dims)}, strides={list(strides_bytes)}, lower={list(lower)}, "
            f"upper={list(upper)}, channels={channels}, pixels={pixels}, traversal={list(traversal)}, "
            f"swizzle={swizzle})")
    return _encode("cuTensorMapEncodeIm2col", args, direct, what)
