"""Registers of every thread of a batch of CTAs as numpy arrays (one array per register, lanes along the axis),
stored as raw bits by width: .pred -> bool, 8/16/32/64-bit types -> uint8/16/32/64. Operand readers and writers
for one instruction type are built once per statement (closures over the register file)."""

from __future__ import annotations

import struct

import numpy as np

from tcforge.ptx.operands import Imm, Not, Reg, Sink, Sym

# PTX type -> bytes (pred: 0)
TYPE_BYTES = {"pred": 0, "b8": 1, "u8": 1, "s8": 1, "e4m3": 1, "e5m2": 1,
              "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
              "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4, "e4m3x2": 2, "e5m2x2": 2,
              "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
FLOAT = {2: np.float16, 4: np.float32, 8: np.float64}


def storage(ptype: str):
    """numpy storage dtype of a register of PTX type `ptype`."""
    n = TYPE_BYTES[ptype]
    return np.bool_ if n == 0 else UINT[n]


def view_dtype(ptype: str):
    """The numpy dtype whose arithmetic is the type's: signed ints, floats, unsigned for b/u."""
    n = TYPE_BYTES[ptype]
    if ptype == "pred":
        return np.bool_
    if ptype[0] == "s":
        return SINT[n]
    if ptype in ("f16", "f32", "f64"):
        return FLOAT[n]
    return UINT[n]


def imm_bits(value: int | float, ptype: str):
    """An immediate as a numpy scalar of the type's storage (floats as their bit pattern)."""
    n = TYPE_BYTES[ptype]
    if ptype == "pred":
        return np.bool_(bool(value))
    if isinstance(value, float):
        if n == 8:
            return np.uint64(struct.unpack("<Q", struct.pack("<d", value))[0])
        if n == 4:
            return np.float32(value).view(np.uint32)
        if n == 2:
            return np.float16(value).view(np.uint16)
        raise ValueError(f"float immediate for .{ptype}")
    if ptype in ("f32", "f64", "f16") and isinstance(value, int):
        return imm_bits(float(value), ptype)  # PTX allows integer literals in float instructions
    return UINT[n](int(value) & ((1 << (8 * n)) - 1))


class Group:
    """The lane mask the executor is running now and, when its lanes are one contiguous range, that range (masked
    writes under exactly this mask become slice copies); `free` when every lane outside it has exited, so that a
    register write under exactly this mask may replace the whole array (an exited lane's registers are never read)."""

    def __init__(self) -> None:
        self.mask: np.ndarray | None = None
        self.lo = 0
        self.hi = -1
        self.free = False

    def set(self, mask: np.ndarray | None, exited: np.ndarray | None = None) -> None:
        """Record the running mask (None: every lane) and whether only exited lanes lie outside it."""
        self.mask, self.hi = mask, -1
        self.free = mask is not None and exited is not None and bool((mask | exited).all())
        if mask is not None:
            idx = np.flatnonzero(mask)
            if len(idx) and idx[-1] - idx[0] + 1 == len(idx):
                self.lo, self.hi = int(idx[0]), int(idx[-1]) + 1


class Regs(dict):
    """name -> array of `n` lanes. Missing registers read as zeros of their declared type."""

    def __init__(self, n: int, types: dict[str, str], group: Group | None = None) -> None:
        super().__init__()
        self.n = n
        self.types = types
        self.group = group or Group()

    def type_of(self, name: str) -> str | None:
        """Declared PTX type of a register (ranges `%r<N>` resolved by prefix)."""
        t = self.types.get(name)
        if t is None:
            i = len(name)
            while i > 0 and name[i - 1].isdecimal():
                i -= 1
            t = self.types.get(name[:i] + "<>")
        return t

    def __missing__(self, name: str) -> np.ndarray:
        t = self.type_of(name) or "b64"
        arr = np.zeros(self.n, dtype=storage(t))
        self[name] = arr
        return arr


def reader(op, ptype: str, regs: Regs, consts: dict):
    """A function `() -> array or scalar` giving the operand's bits at the width of `ptype` (storage dtype).
    `consts` maps symbols (shared / local / global variables, kernel parameters) to their address."""
    dt = storage(ptype)
    if isinstance(op, Reg):
        name = op.name
        rt = regs.type_of(name)
        if rt is not None and storage(rt) != dt and ptype != "pred":
            if TYPE_BYTES[rt] < TYPE_BYTES[ptype] and ptype[0] == "s":
                sd, wide = SINT[TYPE_BYTES[rt]], SINT[TYPE_BYTES[ptype]]
                return lambda: regs[name].view(sd).astype(wide).view(dt)
            return lambda: regs[name].astype(dt)
        return lambda: regs[name]
    if isinstance(op, Not):
        name = op.reg.name
        return lambda: ~regs[name]
    if isinstance(op, Imm):
        v = imm_bits(op.value, ptype)
        return lambda: v
    if isinstance(op, Sym):
        if op.name not in consts:
            raise KeyError(op.name)
        width = max(TYPE_BYTES[ptype], 1)
        v = UINT[width]((consts[op.name] + op.offset) & ((1 << (8 * width)) - 1))
        return lambda: v
    raise TypeError(f"operand {op!r} is not a value")


def writer(op, ptype: str, regs: Regs):
    """A function `(value, mask)` storing bits of type `ptype` into a register (mask None: every lane). A register
    wider than the type receives the value zero- or sign-extended (ld.s8 into a .s32 register). Values must be fresh
    arrays (never another register's array): a masked write updates the register's array in place."""
    if isinstance(op, Sink) or op is None:
        return lambda v, m: None
    if not isinstance(op, Reg):
        raise TypeError(f"destination {op!r} is not a register")
    name = op.name
    rt = regs.type_of(name) or ptype
    dt = storage(rt)
    n = regs.n
    group = regs.group
    ext = None
    if rt != "pred" and ptype != "pred" and TYPE_BYTES[rt] > TYPE_BYTES[ptype] and ptype[0] == "s":
        sd, wide = SINT[TYPE_BYTES[ptype]], SINT[TYPE_BYTES[rt]]
        ext = (sd, wide)

    def write(v, m):
        if type(v) is not np.ndarray or v.dtype != dt or ext is not None or v.ndim == 0:
            v = np.asarray(v)
            if ext is not None:
                v = v.astype(storage(ptype), copy=False).view(ext[0]).astype(ext[1]).view(dt)
            elif v.dtype != dt:
                v = v.astype(dt)
            if v.ndim == 0:
                v = np.full(n, v, dtype=dt)
        if m is None or (m is group.mask and group.free):
            regs[name] = v
        else:
            old = regs[name]
            if m is group.mask and group.hi >= 0 and old.flags.writeable:
                old[group.lo:group.hi] = v[group.lo:group.hi]
            elif old.flags.writeable:  # every register owns its array (mov copies), so update in place
                np.copyto(old, v, where=m)
            else:
                regs[name] = np.where(m, v, old)

    return write


def viewer(op, ptype: str, regs: Regs, consts: dict):
    """Like `reader`, but the value comes as the type's arithmetic dtype (signed ints, floats)."""
    vd = view_dtype(ptype)
    f = reader(op, ptype, regs, consts)
    if isinstance(op, (Imm, Sym)):
        v = f().view(vd) if ptype != "pred" else f()
        return lambda: v
    if vd is storage(ptype):
        return f
    return lambda: f().view(vd)
