"""TMA descriptors: `cuTensorMapEncodeTiled` from Python into a 64-byte-aligned 128-byte buffer passed by value."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

from tcforge.errors import TcforgeError
from tcforge.runtime import driver

# CUtensorMapDataType values (cuda.h)
DTYPE_UINT8 = 0
DTYPE_FLOAT16 = 6
DTYPE_FLOAT32 = 7
DTYPE_BFLOAT16 = 9
SWIZZLE_BYTES = {0: 0, 32: 1, 64: 2, 128: 3}  # CUtensorMapSwizzle
L2_PROMOTION_128B = 2
L2_PROMOTION_256B = 3


class TensorMap:
    """An encoded CUtensorMap; `param_buffer` is what `driver.launch` passes for a `__grid_constant__` parameter."""

    def __init__(self) -> None:
        self._raw = ctypes.create_string_buffer(128 + 64)
        off = (-ctypes.addressof(self._raw)) % 64
        self.param_buffer = (ctypes.c_ubyte * 128).from_buffer(self._raw, off)

    @classmethod
    def zeros(cls) -> TensorMap:
        """A placeholder for kernels that take a map they do not use in this variant."""
        return cls()


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
) -> TensorMap:
    """Encode a tiled tensor map (dims innermost first; strides in bytes for dims 1..rank-1); OOB reads fill zeros."""
    check_tiled_args(dims, strides_bytes, box, elem_bytes, swizzle, address)
    rank = len(dims)
    tm = TensorMap()
    c_dims = (ctypes.c_uint64 * rank)(*dims)
    c_strides = (ctypes.c_uint64 * max(1, rank - 1))(*strides_bytes)
    c_box = (ctypes.c_uint32 * rank)(*box)
    c_estr = (ctypes.c_uint32 * rank)(*([1] * rank))
    driver.check(
        driver.lib().cuTensorMapEncodeTiled(
            ctypes.byref(tm.param_buffer),
            ctypes.c_int(dtype),
            ctypes.c_uint32(rank),
            ctypes.c_void_p(address),
            c_dims,
            c_strides,
            c_box,
            c_estr,
            ctypes.c_int(0),  # interleave none
            ctypes.c_int(SWIZZLE_BYTES[swizzle]),
            ctypes.c_int(l2_promotion),
            ctypes.c_int(0),  # OOB fill: zeros
        ),
        f"cuTensorMapEncodeTiled(dims={list(dims)}, strides={list(strides_bytes)}, box={list(box)}, swizzle={swizzle})",
    )
    return tm
