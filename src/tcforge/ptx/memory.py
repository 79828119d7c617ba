"""Every memory operand of a function as a symbolic access: kind, state space, base, address, bytes per thread."""

from __future__ import annotations

from dataclasses import dataclass

from tcforge.ptx.module import Function
from tcforge.ptx.opcodes import access_bytes, memory_space, root
from tcforge.ptx.operands import Addr, Reg, Vec
from tcforge.ptx.symbolic import Atom, Evaluator, Lin


@dataclass
class Access:
    """One memory operand. `addr` is the full symbolic address; `base` its pointer atom (None if absolute/unknown)."""

    pos: int
    kind: str  # load, store, atomic, texture, surface-load, surface-store, shared-copy
    space: str
    opcode: str
    addr: Lin
    base: Atom | None
    width: int
    dests: tuple[str, ...] = ()

    @property
    def offset(self) -> Lin:
        """The address without its base atom: constant plus per-thread terms."""
        return self.addr.without(self.base)

    @property
    def base_name(self) -> str:
        """Name of the base atom (`param+40`, a shared symbol) or `absolute`."""
        return self.base.name if self.base is not None else "absolute"


def _dest_names(op) -> tuple[str, ...]:
    if isinstance(op, Reg):
        return (op.name,)
    if isinstance(op, Vec):
        return tuple(x.name if isinstance(x, Reg) else "_" for x in op.items)
    return ()


def collect_accesses(fn: Function, ev: Evaluator) -> list[Access]:
    """Symbolic accesses of every ld/st/atom/red/ldmatrix/stmatrix/cp.async/tex/suld/sust statement."""
    out: list[Access] = []
    for pos, st in enumerate(fn.statements):
        if st.label is not None or not st.operands:
            continue
        op = st.opcode
        r = root(op)
        ops = st.operands
        if r in ("tex", "tld4", "suld", "sust", "sured", "txq", "suq"):
            addr_ops = [o for o in ops if isinstance(o, Addr)]
            if not addr_ops:
                continue
            a = addr_ops[0]
            val = ev.address(Addr(a.base, a.offset), pos)
            kind = {"tex": "texture", "tld4": "texture", "suld": "surface-load"}.get(r, "surface-store")
            if r in ("txq", "suq"):
                kind = "query"
            out.append(Access(pos, kind, "texture" if r in ("tex", "tld4", "txq") else "surface", op, val, val.base(),
                              access_bytes(op), _dest_names(ops[0]) if kind in ("texture", "surface-load") else ()))
            continue
        space = memory_space(op)
        if space is None:
            continue
        if r == "cp":
            addrs = [o for o in ops if isinstance(o, Addr)]
            if len(addrs) >= 2:
                dst = ev.address(addrs[0], pos)
                src = ev.address(addrs[1], pos)
                width = _cp_size(st.operands)
                out.append(Access(pos, "load", "global", op, src, src.base(), width))
                out.append(Access(pos, "store", "shared", op, dst, dst.base(), width))
            continue
        addr_ops = [(i, o) for i, o in enumerate(ops) if isinstance(o, Addr)]
        if not addr_ops:
            continue
        i, a = addr_ops[0]
        val = ev.address(a, pos)
        if r in ("st", "stmatrix"):
            kind = "store"
        elif r == "red" or r == "atom":
            kind = "atomic"
        elif r == "prefetch":
            kind = "prefetch"
        else:
            kind = "load"
        if space == "generic":
            b = val.base()
            if b is not None and b.kind == "param-block":
                space = "param"
        width = access_bytes(op)
        if r == "ldmatrix" or r == "stmatrix":
            width = 16
        dests = _dest_names(ops[0]) if kind in ("load", "atomic") and i > 0 else ()
        out.append(Access(pos, kind, space, op, val, val.base(), width, dests))
    return out


def _cp_size(ops: tuple) -> int:
    from tcforge.ptx.operands import Imm

    for o in ops:
        if isinstance(o, Imm) and isinstance(o.value, int) and o.value in (4, 8, 16):
            return o.value
    return 16
