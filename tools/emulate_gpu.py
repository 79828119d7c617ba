"""Run a PTX kernel on the GPU with the emulator's argument convention (docs/emulate.md): the GPU side of
`tcforge.ptx.emulate.emulate`, for comparing the two bit for bit (tools/emulate_corpus.py).

    out = run(ptx_text, "k", grid=(2, 1, 1), block=(128, 1, 1), args={"k_param_0": x, "k_param_1": 256})

Pointer parameters given as numpy arrays become device buffers (any other array in `args` too, addressable by name
through `"PARAM@OFFSET"` or a pointer parameter naming it), scalars are passed by value in the parameter's PTX type,
struct parameters as their bytes, a `TensorMap` (or its text form) as the CUtensorMap the driver encodes for that
buffer's device address. Returns every buffer after the launch. The PTX is JIT-compiled by the driver
(cuModuleLoadData), so PTX for sm_80/sm_89 runs on sm_90.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tcforge.ptx.emulate.api import as_tensor_map
from tcforge.ptx.emulate.ops_async import TensorMap
from tcforge.ptx.emulate.state import view_dtype
from tcforge.ptx.module import read_module
from tcforge.runtime import driver, tensormap


def _name(v) -> str | None:
    """The buffer a value names (a str or a 0-d unicode array), else None."""
    if isinstance(v, str):
        return v
    return str(v) if isinstance(v, np.ndarray) and v.dtype.kind == "U" and v.ndim == 0 else None


def device_name(device: int = 0) -> str:
    """The GPU's name (cuDeviceGetName)."""
    driver.ensure_context(device)
    raw = driver.call("cuDeviceGetName", 256, driver.call("cuDeviceGet", device))
    return bytes(raw).split(b"\0", 1)[0].decode()


def _param_bytes(fn, args: dict, addr: dict[str, int]) -> list[bytes]:
    """Each parameter's bytes: pointers as buffer addresses, scalars in their PTX type, structs as given."""
    fixups: dict[str, list[tuple[int, str]]] = {}
    for key, v in args.items():
        if "@" in key:
            pname, off = key.rsplit("@", 1)
            fixups.setdefault(pname, []).append((int(off), _name(v)))
    out = []
    for p in fn.params:
        if p.name not in args:
            raise KeyError(f"missing argument {p.name!r} of {fn.name}")
        v = as_tensor_map(args[p.name])
        if isinstance(v, TensorMap):
            raw = bytearray(_encode_map(v, addr))
        elif p.array is not None:
            raw = bytearray(bytes(np.asarray(v, dtype=np.uint8).reshape(-1)) if not isinstance(v, bytes) else v)
        elif _name(v) is not None or (isinstance(v, np.ndarray) and v.ndim >= 1):
            raw = bytearray(np.uint64(addr[_name(v) or p.name]).tobytes())
        else:
            raw = bytearray(np.asarray(v).astype(view_dtype(p.type)).tobytes())
        for off, target in fixups.get(p.name, []):
            raw[off:off + 8] = np.uint64(addr[target]).tobytes()
        if len(raw) != p.size:
            raise ValueError(f"argument {p.name!r}: {len(raw)} bytes for a {p.size}-byte parameter")
        out.append(bytes(raw))
    return out


_CU_DTYPES = {"u8": tensormap.DTYPE_UINT8, "e4m3": tensormap.DTYPE_UINT8, "e5m2": tensormap.DTYPE_UINT8,
              "f16": tensormap.DTYPE_FLOAT16, "f32": tensormap.DTYPE_FLOAT32, "bf16": tensormap.DTYPE_BFLOAT16}


def _encode_map(v: TensorMap, addr: dict[str, int]) -> bytes:
    """The driver's CUtensorMap for the emulator's tensor-map description."""
    if v.dtype not in _CU_DTYPES:
        raise ValueError(f"tensor map element type {v.dtype!r}: the GPU side encodes {', '.join(_CU_DTYPES)}")
    return tensormap.encode_tiled(_CU_DTYPES[v.dtype], v.elem_bytes, addr[v.buffer], list(v.dims), list(v.strides),
                                  list(v.box), swizzle=v.swizzle).raw()


def run(ptx: str, entry: str, grid, block, args: dict, dynamic_shared: int = 0, device: int = 0) -> dict:
    """Launch `entry` of `ptx` once on the GPU with `args`; returns {buffer name: array after the launch}."""
    fn = read_module(ptx).function(entry)
    dims = [tuple(int(x) for x in (d if isinstance(d, (tuple, list)) else (d,))) for d in (grid, block)]
    grid, block = ((*d, 1, 1)[:3] for d in dims)
    structs = {p.name for p in fn.params if p.array is not None}
    buffers = {k: np.ascontiguousarray(v) for k, v in args.items()
               if isinstance(v, np.ndarray) and v.ndim >= 1 and "@" not in k and k not in structs}
    driver.ensure_context(device)
    module = driver.Module(ptx.encode() + b"\0")
    kernel = module.function(entry)
    if dynamic_shared > 48 * 1024:
        kernel.set_max_dynamic_shared(dynamic_shared)
    addr = {k: driver.mem_alloc(max(v.nbytes, 16)) for k, v in buffers.items()}
    try:
        for k, v in buffers.items():
            if v.nbytes:
                driver.memcpy_htod(addr[k], v)
        values = [(ctypes.c_uint8 * len(b)).from_buffer_copy(b) for b in _param_bytes(fn, args, addr)]
        driver.launch(kernel, grid, block, values, shared_bytes=int(dynamic_shared))
        driver.synchronize()
        out = {}
        for k, v in buffers.items():
            host = np.empty_like(v)
            if v.nbytes:
                driver.memcpy_dtoh(host, addr[k])
            out[k] = host
        return out
    finally:
        for a in addr.values():
            driver.mem_free(a)
        driver.call("cuModuleUnload", module.cu)
