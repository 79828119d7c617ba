"""`emulate(ptx_text, entry, grid, block, args, numerics)`: run a kernel's PTX on the CPU; returns the global
buffers it wrote (numpy arrays, same dtype and shape as given).

`args` maps names to values:
- a kernel parameter's name -> its value: a number for a scalar parameter; for a pointer (`.u64`) parameter either a
  numpy array (it becomes a global buffer of that name) or the name (str) of a buffer given elsewhere in `args`; for
  a by-value struct (`.param .align A .b8 name[N]`) its N bytes (bytes or a uint8 array);
- a tensor-map parameter (`.param .align 64 .b8 name[128]`, a `__grid_constant__ CUtensorMap`) -> a `TensorMap`
  over a buffer given elsewhere in `args` (or its text form, `TensorMap.parse`);
- a texture or surface handle (a `.u64` parameter used by tex / suld / sust ...) -> a `Texture` / `Surface` over a
  buffer given elsewhere in `args` (or its text form, `Texture.parse` / `Surface.parse`);
- `"PARAM@OFFSET"` -> a buffer name: the buffer's address is written (u64) at byte OFFSET of struct parameter PARAM
  (a `Texture` / `Surface`: its handle; a `TensorMap`: its 128 bytes, 64-byte aligned, as CUTLASS's Params carry
  them);
- any other name -> a numpy array: a global buffer.
Module-scope `.global` and `.const` variables not given in `args` are buffers holding their initializers (zeros
without one); an array given under a `.const` variable's name is its contents (as cudaMemcpyToSymbol sets them).
"""

from __future__ import annotations

import re

import numpy as np

from tcforge.ptx.emulate.launch import MAX_BATCH_LANES, launch
from tcforge.ptx.emulate.machine import EmulationError
from tcforge.ptx.emulate.memory import Memory
from tcforge.ptx.emulate.ops_tex import HANDLE_BASE, Surface, Texture
from tcforge.ptx.emulate.state import TYPE_BYTES, view_dtype
from tcforge.ptx.emulate.tensor_map import TensorMap
from tcforge.ptx.module import read_module

NUMERICS = ("hopper", "ada")


def arg_name(v) -> str | None:
    """The name an argument value gives (a str, or a 0-d unicode array from an .npz), else None."""
    if isinstance(v, str):
        return v
    if isinstance(v, np.ndarray) and v.dtype.kind == "U" and v.ndim == 0:
        return str(v)
    return None


def _dims(v, what: str) -> tuple[int, int, int]:
    t = tuple(int(x) for x in (v if isinstance(v, (tuple, list)) else (v,)))
    t = t + (1,) * (3 - len(t))
    if len(t) != 3 or any(x <= 0 for x in t):
        raise EmulationError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return t


_MODULES: dict = {}  # PTX text -> its Module, the last 8 texts launched


def parsed_module(ptx_text: str | bytes, file: str = "<ptx>"):
    """read_module, kept for the next use of the same text (a Module is not changed once read, and messages name
    the first reader's file; a corpus of many kernels in one module parses it once)."""
    module = _MODULES.get(ptx_text)
    if module is None:
        module = read_module(ptx_text, file)
        if len(_MODULES) >= 8:
            _MODULES.pop(next(iter(_MODULES)))
        _MODULES[ptx_text] = module
    return module


def emulate(ptx_text: str | bytes, entry: str | None, grid, block, args: dict, numerics: str = "hopper", *,
            file: str = "<ptx>", dynamic_shared: int = 0, stats: dict | None = None,
            batch_lanes: int = MAX_BATCH_LANES, record=None, cluster=None) -> dict[str, np.ndarray]:
    """Execute `entry` over `grid` x `block` with `args` (module docstring); `numerics` picks the mma model.
    `cluster` (X, Y, Z) launches clusters of that shape (default: the kernel's `.reqnctapercluster`, else none).
    Returns {buffer name: array} for every global buffer the kernel stored to. `stats`, when given, receives
    warp instructions, seconds and instructions per second. `record`, when given, is called at every global and
    shared access (ld, st, atom, cp.async, ldmatrix, TMA, ...) as `record(line, space, addresses, ids, size,
    store)`: the PTX line, 'global' (device addresses) or 'shared' (offsets in the CTA's shared memory), one address
    per thread, {special register: values} of those threads (%tid.*, %ctaid.*, %laneid, %warpid), bytes per
    thread."""
    if numerics not in NUMERICS:
        raise EmulationError(f"numerics must be one of {', '.join(NUMERICS)}, got {numerics!r}")
    module = parsed_module(ptx_text, file)
    fn = module.function(entry)
    if fn.kind != "entry":
        raise EmulationError(f"{file}:{fn.line}: {fn.name!r} is a .func, not a kernel entry")
    grid, block = _dims(grid, "grid"), _dims(block, "block")
    pnames = {p.name for p in fn.params}
    fixups: dict[str, list[tuple[int, str]]] = {}
    buffers: dict[str, np.ndarray] = {}
    args = {k: object_arg(v) for k, v in args.items()}
    images: dict[int, tuple] = {}
    handles_at: list[tuple[str, int, Texture | Surface]] = []  # (struct parameter, offset, object)
    maps_at: list[tuple[str, int, TensorMap]] = []  # tensor maps inside a struct parameter (CUTLASS-style Params)
    for key, v in args.items():
        if "@" in key:
            pname, off = key.rsplit("@", 1)
            target = arg_name(v)
            objects = (Texture, Surface, TensorMap)
            if pname not in pnames or not off.isdecimal() or (target is None and not isinstance(v, objects)):
                raise EmulationError(f"argument {key!r}: expected PARAM@OFFSET -> buffer name, texture, surface or "
                                     f"tensor map, with PARAM one of {', '.join(sorted(pnames))}")
            if isinstance(v, TensorMap):
                maps_at.append((pname, int(off), v))
            elif isinstance(v, (Texture, Surface)):
                handles_at.append((pname, int(off), v))
            else:
                fixups.setdefault(pname, []).append((int(off), target))
        elif isinstance(v, np.ndarray) and v.ndim >= 1 and not (key in pnames and _is_struct(fn, key)):
            buffers[key] = v
    for d in module.decls:
        if d.space in ("global", "const") and d.name not in buffers and d.type not in ("texref", "surfref",
                                                                                      "samplerref"):
            buffers[d.name] = module_global(ptx_text, d, file)
    block_bytes = bytearray(fn.param_block_size)
    mem_names = set(buffers)
    for p in fn.params:
        if p.name not in args:
            raise EmulationError(f"missing argument {p.name!r} (.{p.type}{f'[{p.array}]' if p.array else ''} "
                                 f"parameter of {fn.name}); given: {', '.join(sorted(args)) or 'none'}")
        v = args[p.name]
        if isinstance(v, TensorMap):
            if p.array is None or p.size != 128:
                raise EmulationError(f"argument {p.name!r}: a tensor map needs a 128-byte struct parameter")
            fixups.setdefault(p.name, []).append((0, v.buffer))
            v = v.encode()
        if isinstance(v, (Texture, Surface)):  # a handle
            if p.array is not None or p.size != 8:
                raise EmulationError(f"argument {p.name!r}: a texture or surface handle needs a .u64 parameter")
            handles_at.append((p.name, 0, v))
        elif p.array is not None:
            raw = bytes(np.asarray(v, dtype=np.uint8).reshape(-1)) if not isinstance(v, bytes) else v
            if len(raw) != p.size:
                raise EmulationError(f"argument {p.name!r}: the struct parameter is {p.size} bytes, got {len(raw)}")
            block_bytes[p.offset:p.offset + p.size] = raw
        elif arg_name(v) is not None or (isinstance(v, np.ndarray) and v.ndim >= 1):
            target = arg_name(v) or p.name
            if target not in mem_names:
                raise EmulationError(f"argument {p.name!r} names buffer {target!r}, which is not given")
            if p.size != 8:
                raise EmulationError(f"argument {p.name!r}: a buffer address needs a 64-bit parameter, "
                                     f"this one is .{p.type}")
            fixups.setdefault(p.name, []).append((0, target))
        else:
            dt = view_dtype(p.type)
            block_bytes[p.offset:p.offset + p.size] = np.asarray(v).astype(dt).tobytes()
    for pname, off, obj in handles_at:
        p = next(q for q in fn.params if q.name == pname)
        where = pname if p.array is None else f"{pname}@{off}"
        if obj.buffer not in mem_names:
            raise EmulationError(f"argument {where}: its {type(obj).__name__.lower()} names buffer {obj.buffer!r}, "
                                 "which is not given")
        if off + 8 > p.size:
            raise EmulationError(f"argument {where}: offset past the {p.size}-byte parameter")
        handle = HANDLE_BASE + 16 * len(images)
        images[handle] = (obj, obj.buffer)
        block_bytes[p.offset + off:p.offset + off + 8] = np.uint64(handle).tobytes()
    for pname, off, tm in maps_at:
        p = next(q for q in fn.params if q.name == pname)
        if p.array is None or off + 128 > p.size or (p.offset + off) % 64:
            raise EmulationError(f"argument {pname}@{off}: a tensor map needs 128 bytes, 64-byte aligned, inside a "
                                 f"struct parameter ({pname} is {p.size} bytes at parameter offset {p.offset})")
        block_bytes[p.offset + off:p.offset + off + 128] = tm.encode()
        fixups.setdefault(pname, []).append((off, tm.buffer))
    for pname, fx in fixups.items():
        p = next(q for q in fn.params if q.name == pname)
        for off, target in fx:
            if target not in mem_names:
                raise EmulationError(f"argument {pname}@{off} names buffer {target!r}, which is not given")
            if off + 8 > p.size:
                raise EmulationError(f"argument {pname}@{off}: offset past the {p.size}-byte parameter")
    mem = Memory(buffers, bytes(block_bytes))
    mem.record = record
    mem.images = images
    for pname, fx in fixups.items():
        p = next(q for q in fn.params if q.name == pname)
        for off, target in fx:
            at = p.offset + off
            mem.param[at:at + 8] = np.frombuffer(np.uint64(mem.address(target)).tobytes(), np.uint8)
    info = launch(module, fn, grid, block, mem, numerics, dynamic_shared=dynamic_shared, batch_lanes=batch_lanes,
                  cluster=None if cluster is None else _dims(cluster, "cluster"))
    if stats is not None:
        stats.update(info)
    return {name: mem.result(name) for name in mem.names if name in mem.written}


def object_arg(v):
    """A TensorMap, Texture or Surface for its text form (`tensormap ...`, `texture ...`, `surface ...`: the CLI's
    .npz), anything else as it is."""
    name = arg_name(v)
    for prefix, parse in (("tensormap ", TensorMap.parse), ("texture ", Texture.parse), ("surface ", Surface.parse)):
        if name is not None and name.startswith(prefix):
            return parse(name)
    return v


def _is_struct(fn, name: str) -> bool:
    return any(p.name == name and p.array is not None for p in fn.params)


_INIT_INT = re.compile(r"(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?")


def _literal(tok: str, ptype: str, where: str) -> bytes:
    """One initializer element as the bytes of `ptype` (integers, 0f/0d bit patterns, decimal floats)."""
    dt, size = view_dtype(ptype), TYPE_BYTES[ptype]
    if re.fullmatch(r"0[fFdD][0-9a-fA-F]+", tok):
        return int(tok[2:], 16).to_bytes(size, "little")
    m = _INIT_INT.fullmatch(tok)
    if m:
        digits = m.group(2)
        v = int(digits, 8) if len(digits) > 1 and digits[0] == "0" and digits[1] in "01234567" else int(digits, 0)
        v = -v if m.group(1) else v
        if ptype[0] == "f":
            return np.asarray(v).astype(dt).tobytes()
        return (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    try:
        return np.asarray(float(tok)).astype(dt if ptype[0] == "f" else np.float64).tobytes()[:size]
    except ValueError:
        raise EmulationError(f"{where}: initializer element {tok!r} is not supported (numbers only)") from None


def module_global(ptx_text: str | bytes, decl, file: str = "<ptx>") -> np.ndarray:
    """The bytes (uint8) of a module-scope `.global` or `.const` variable: its initializer, zeros where it has
    none."""
    text = ptx_text.decode() if isinstance(ptx_text, bytes) else ptx_text
    start = 0
    for _ in range(decl.line - 1):  # the declaration's line, without splitting the whole module into lines
        start = text.index("\n", start) + 1
    end = text.find(";", start)
    head = text[start:end if end >= 0 else len(text)]
    where = f"{file}:{decl.line}: .{decl.space} {decl.name}"
    size = decl.size
    if "=" not in head:
        if size is None:
            raise EmulationError(f"{where} has no size")
        return np.zeros(size, np.uint8)
    ptype = decl.type or "b8"
    toks = [t for t in re.split(r"[\s,{}]+", head.split("=", 1)[1]) if t]
    raw = b"".join(_literal(t, ptype, where) for t in toks)
    size = len(raw) if size is None else size
    return np.frombuffer(raw[:size] + bytes(max(0, size - len(raw))), np.uint8).copy()
