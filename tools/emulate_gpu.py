"""Run a PTX kernel on the GPU with the emulator's argument convention (docs/emulate.md): the GPU side of
`tcforge.ptx.emulate.emulate`, for comparing the two bit for bit (tools/emulate_corpus.py).

    out = run(ptx_text, "k", grid=(2, 1, 1), block=(128, 1, 1), args={"k_param_0": x, "k_param_1": 256})

Pointer parameters given as numpy arrays become device buffers (any other array in `args` too, addressable by name
through `"PARAM@OFFSET"` or a pointer parameter naming it), scalars are passed by value in the parameter's PTX type,
struct parameters as their bytes, a `TensorMap` (or its text form) as the CUtensorMap the driver encodes for that
buffer's device address, a `Texture` / `Surface` (or its text form) as the handle of an object over a CUDA array
filled from its buffer (a surface's array is copied back into the buffer after the launch). Returns every buffer
after the launch. The PTX is JIT-compiled by the driver
(cuModuleLoadData), so PTX for sm_80/sm_89 runs on sm_90.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tcforge.ptx.emulate.api import arg_name, object_arg, parsed_module
from tcforge.ptx.emulate.ops_tex import ADDRESS_MODES, Surface, Texture
from tcforge.ptx.emulate.state import view_dtype
from tcforge.ptx.emulate.tensor_map import TensorMap
from tcforge.runtime import driver, tensormap


def device_name(device: int = 0) -> str:
    """The GPU's name (cuDeviceGetName)."""
    driver.ensure_context(device)
    raw = driver.call("cuDeviceGetName", 256, driver.call("cuDeviceGet", device))
    return bytes(raw).split(b"\0", 1)[0].decode()


def _param_bytes(fn, args: dict, addr: dict[str, int], handles: dict) -> list[bytes]:
    """Each parameter's bytes: pointers as buffer addresses, scalars in their PTX type, structs as given."""
    fixups: dict[str, list[tuple[int, str]]] = {}
    for key, v in args.items():
        if "@" in key:
            pname, off = key.rsplit("@", 1)
            fixups.setdefault(pname, []).append((int(off), key if key in handles else arg_name(v)))
    out = []
    for p in fn.params:
        if p.name not in args:
            raise KeyError(f"missing argument {p.name!r} of {fn.name}")
        v = object_arg(args[p.name])
        if isinstance(v, TensorMap):
            raw = bytearray(_encode_map(v, addr))
        elif isinstance(v, (Texture, Surface)):
            raw = bytearray(np.uint64(handles[p.name]).tobytes())
        elif p.array is not None:
            raw = bytearray(bytes(np.asarray(v, dtype=np.uint8).reshape(-1)) if not isinstance(v, bytes) else v)
        elif arg_name(v) is not None or (isinstance(v, np.ndarray) and v.ndim >= 1):
            raw = bytearray(np.uint64(addr[arg_name(v) or p.name]).tobytes())
        else:
            raw = bytearray(np.asarray(v).astype(view_dtype(p.type)).tobytes())
        for off, target in fixups.get(p.name, []):
            raw[off:off + 8] = np.uint64(handles[target] if target in handles else addr[target]).tobytes()
        if len(raw) != p.size:
            raise ValueError(f"argument {p.name!r}: {len(raw)} bytes for a {p.size}-byte parameter")
        out.append(bytes(raw))
    return out


_CU_DTYPES = {"u8": tensormap.DTYPE_UINT8, "e4m3": tensormap.DTYPE_UINT8, "e5m2": tensormap.DTYPE_UINT8,
              "f16": tensormap.DTYPE_FLOAT16, "f32": tensormap.DTYPE_FLOAT32, "bf16": tensormap.DTYPE_BFLOAT16,
              "u32": tensormap.DTYPE_UINT32, "s32": tensormap.DTYPE_INT32}


def _encode_map(v: TensorMap, addr: dict[str, int]) -> bytes:
    """The driver's CUtensorMap for the emulator's tensor-map description."""
    if v.dtype not in _CU_DTYPES:
        raise ValueError(f"tensor map element type {v.dtype!r}: the GPU side encodes {', '.join(_CU_DTYPES)}")
    if v.im2col:
        return tensormap.encode_im2col(_CU_DTYPES[v.dtype], addr[v.buffer], v.dims, v.strides, v.lower, v.upper,
                                       v.box[0], v.box[1], v.traversal or (1,) * (len(v.dims) - 2),
                                       swizzle=v.swizzle, oob_nan=v.fill == "nan").raw()
    return tensormap.encode_tiled(_CU_DTYPES[v.dtype], v.elem_bytes, addr[v.buffer], list(v.dims), list(v.strides),
                                  list(v.box), swizzle=v.swizzle, oob_nan=v.fill == "nan").raw()


_CU_FORMATS = {"u8": "UNSIGNED_INT8", "s8": "SIGNED_INT8", "u16": "UNSIGNED_INT16", "s16": "SIGNED_INT16",
               "u32": "UNSIGNED_INT32", "s32": "SIGNED_INT32", "f16": "HALF", "f32": "FLOAT"}


def _copy3d(img, array, host: np.ndarray, to_array: bool) -> None:
    """cuMemcpy3D between a host buffer (dense texels) and an image's array."""
    cu = driver.api()
    w, h, d = img.extents
    m = cu.CUDA_MEMCPY3D()
    host_side = ("dst" if not to_array else "src")
    arr_side = ("src" if not to_array else "dst")
    setattr(m, f"{host_side}MemoryType", cu.CUmemorytype.CU_MEMORYTYPE_HOST)
    setattr(m, f"{host_side}Host", host.ctypes.data)
    setattr(m, f"{host_side}Pitch", w * img.texel_bytes)
    setattr(m, f"{host_side}Height", h)
    setattr(m, f"{arr_side}MemoryType", cu.CUmemorytype.CU_MEMORYTYPE_ARRAY)
    setattr(m, f"{arr_side}Array", array)
    m.WidthInBytes, m.Height, m.Depth = w * img.texel_bytes, h, d * img.layers
    driver.call("cuMemcpy3D", m)


def _make_image(img, host: np.ndarray) -> tuple[object, object]:
    """(CUtexObject or CUsurfObject, CUarray): a texture or surface object over a new array holding `host`'s
    texels."""
    cu = driver.api()
    plain = len(img.dims) - img.layered
    desc = cu.CUDA_ARRAY3D_DESCRIPTOR()
    w, h, d = img.extents
    desc.Width, desc.Height = w, h if plain > 1 else 0
    desc.Depth = img.layers if img.layered else (d if plain > 2 else 0)
    desc.Format = getattr(cu.CUarray_format, f"CU_AD_FORMAT_{_CU_FORMATS[img.ctype]}")
    desc.NumChannels = img.channels
    desc.Flags = (cu.CUDA_ARRAY3D_SURFACE_LDST if isinstance(img, Surface) else 0) | \
        (cu.CUDA_ARRAY3D_LAYERED if img.layered else 0)
    array = driver.call("cuArray3DCreate", desc)
    _copy3d(img, array, np.ascontiguousarray(host), True)
    res = cu.CUDA_RESOURCE_DESC()
    res.resType = cu.CUresourcetype.CU_RESOURCE_TYPE_ARRAY
    res.res.array.hArray = array
    if isinstance(img, Surface):
        return driver.call("cuSurfObjectCreate", res), array
    td = cu.CUDA_TEXTURE_DESC()
    td.addressMode = [cu.CUaddress_mode(ADDRESS_MODES.index(m)) for m in (*img.address, "clamp", "clamp")[:3]]
    td.filterMode = cu.CUfilter_mode(0 if img.filter == "point" else 1)
    td.flags = (cu.CU_TRSF_READ_AS_INTEGER if not img.floats else 0) | \
        (cu.CU_TRSF_NORMALIZED_COORDINATES if img.normalized else 0)
    td.borderColor = [float(b) for b in img.border]
    return driver.call("cuTexObjectCreate", res, td, None), array


_SPLIT: dict[int, dict[str, str]] = {}  # modules the driver refused whole: their entries' texts, loaded one by one


def _load(ptx: str, entry: str):
    """The module holding `entry`: the whole PTX, or, where the driver refuses it (one kernel it cannot JIT fails
    every other), the entry alone with the module's declarations and functions (tools/jit_entries.py)."""
    key = hash(ptx)
    if key not in _SPLIT:
        try:
            return driver.Module(ptx.encode() + b"\0")
        except driver.CudaError:  # cuModuleLoadData refused the module
            from tools.jit_entries import split

            _SPLIT[key] = split(ptx)
    return driver.Module(_SPLIT[key][entry].encode() + b"\0")


def run(ptx: str, entry: str, grid, block, args: dict, dynamic_shared: int = 0, device: int = 0) -> dict:
    """Launch `entry` of `ptx` once on the GPU with `args`; returns {buffer name: array after the launch}."""
    fn = parsed_module(ptx).function(entry)
    dims = [tuple(int(x) for x in (d if isinstance(d, (tuple, list)) else (d,))) for d in (grid, block)]
    grid, block = ((*d, 1, 1)[:3] for d in dims)
    structs = {p.name for p in fn.params if p.array is not None}
    buffers = {k: np.ascontiguousarray(v) for k, v in args.items()
               if isinstance(v, np.ndarray) and v.ndim >= 1 and "@" not in k and k not in structs}
    driver.ensure_context(device)
    module = _load(ptx, entry)
    kernel = module.function(entry)
    if dynamic_shared > 48 * 1024:
        kernel.set_max_dynamic_shared(dynamic_shared)
    addr = {k: driver.mem_alloc(max(v.nbytes, 16)) for k, v in buffers.items()}
    pnames = {p.name for p in fn.params}
    images = {k: v for k, v in ((k, object_arg(v)) for k, v in args.items())  # by parameter, or PARAM@OFFSET
              if isinstance(v, (Texture, Surface)) and (k in pnames or "@" in k)}
    made: dict[str, tuple[object, object]] = {}
    try:
        for k, img in images.items():
            made[k] = _make_image(img, buffers[img.buffer])
        for k, v in buffers.items():
            if v.nbytes:
                driver.memcpy_htod(addr[k], v)
        handles = {k: int(h) for k, (h, _) in made.items()}
        values = [(ctypes.c_uint8 * len(b)).from_buffer_copy(b) for b in _param_bytes(fn, args, addr, handles)]
        driver.launch(kernel, grid, block, values, shared_bytes=int(dynamic_shared))
        driver.synchronize()
        out = {}
        for k, v in buffers.items():
            host = np.empty_like(v)
            if v.nbytes:
                driver.memcpy_dtoh(host, addr[k])
            out[k] = host
        for k, img in images.items():
            if isinstance(img, Surface):
                _copy3d(img, made[k][1], out[img.buffer], False)
        return out
    finally:
        for k, (h, array) in made.items():
            driver.call("cuSurfObjectDestroy" if isinstance(images[k], Surface) else "cuTexObjectDestroy", h)
            driver.call("cuArrayDestroy", array)
        for a in addr.values():
            driver.mem_free(a)
        driver.call("cuModuleUnload", module.cu)
