"""Every memory operand of a function as a symbolic access (kind, state space, base, address, bytes per thread), and
the memory-traffic table (in the style of the enc5 analysis's §4): runs of like accesses grouped per stage."""

from __future__ import annotations

from dataclasses import dataclass

from tcforge.ptx.ir import Function
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
    fragment: bool = False  # a wmma tile: `width` is the warp's whole tile span, the per-thread layout is opaque

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
    """Symbolic accesses of every ld/st/atom/red/ldmatrix/stmatrix/cp.async/wmma.load/wmma.store/tex/suld/sust
    statement."""
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
        if r == "wmma" and (op.startswith("wmma.load") or op.startswith("wmma.store")):
            addr = next((o for o in ops if isinstance(o, Addr)), None)
            if addr is None:
                continue
            val = ev.address(addr, pos)
            sp = next((p for p in op.split(".") if p in ("global", "shared", "local")), "generic")
            width = _wmma_bytes(op, ev.operand(ops[-1], pos) if len(ops) >= 3 else None)
            if op.startswith("wmma.load"):
                out.append(Access(pos, "load", sp, op, val, val.base(), width, _dest_names(ops[0]), fragment=True))
            else:
                out.append(Access(pos, "store", sp, op, val, val.base(), width, fragment=True))
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


def _wmma_bytes(op: str, ldm) -> int:
    """Byte span of a wmma tile load/store: (leading count - 1) * ldm + contiguous length, in elements of the
    fragment's type (s4 / u4 / b1: bits, the stride cut to whole 32-bit words as ptxas does, the span rounded up to
    bytes)."""
    import re

    from tcforge.ptx.opcodes import SUBBYTE_BITS, TYPE_BYTES

    m = re.search(r"\.m(\d+)n(\d+)k(\d+)", op)
    parts = op.split(".")
    bits = next((SUBBYTE_BITS.get(p) or 8 * TYPE_BYTES[p] for p in reversed(parts)
                 if p in TYPE_BYTES or p in SUBBYTE_BITS), 16)
    if m is None:
        return 16 * 16 * bits // 8
    mm, nn, kk = (int(x) for x in m.groups())
    frag = parts[2] if len(parts) > 2 else "d"  # wmma.load.a / .b / .c, wmma.store.d
    rows, cols = {"a": (mm, kk), "b": (kk, nn)}.get(frag, (mm, nn))
    lead, length = (rows, cols) if "row" in parts else (cols, rows)
    stride = ldm.c if ldm is not None and ldm.is_const and ldm.c > 0 else length
    if bits < 8:
        stride -= stride % (32 // bits)
    return -(-((lead - 1) * stride * bits + length * bits) // 8)


def _cp_size(ops: tuple) -> int:
    from tcforge.ptx.operands import Imm

    for o in ops:
        if isinstance(o, Imm) and isinstance(o.value, int) and o.value in (4, 8, 16):
            return o.value
    return 16


# the memory-traffic table ---------------------------------------------------------------------------------------------


def _stage_name(an, pos: int) -> str:
    if pos <= an.prologue[1] if hasattr(an, "prologue") else False:
        return "prologue"
    for pr in an.phases:
        if pr.phase.first_pos <= pos <= pr.phase.last_pos:
            return f"P{pr.phase.index}"
        if pr.epilogue[0] <= pos <= pr.epilogue[1]:
            return f"E{pr.phase.index}"
    return "prologue"


def traffic_rows(an) -> list[dict]:
    """Rows: stage, kind, space, opcode, base, per-thread terms (run-time values collapse into `<run-time>`),
    count, first/last statement, offsets lo..hi (thread whose terms are zero, hi exclusive), step when the offsets
    form a progression, bytes per thread, and the MMA operands the loaded registers feed (`P13 B`)."""
    rows: list[dict] = []
    cur: dict | None = None
    offsets: list[int] = []
    for a in an.accesses:
        if a.kind == "query":
            continue
        off = a.offset
        terms = {at.name: k for at, k in off.t.items() if at.kind != "opaque"}
        terms = {k: terms[k] for k in off.terms_text() if k in terms}
        if any(at.kind == "opaque" for at in off.t):
            terms["<run-time>"] = 1
        key = (_stage_name(an, a.pos), a.kind, a.space, a.opcode, a.base_name, tuple(sorted(terms.items())))
        consumers = an.operand_loads.get(a.pos, set()) if a.kind == "load" else set()
        if cur is not None and cur["_key"] == key:
            cur["consumer"].update(consumers)
            cur["count"] += 1
            cur["last"] = a.pos + 1
            cur["bytes"] += a.width
            offsets.append(off.c)
            cur["_end"] = max(cur["_end"], off.c + a.width)
            continue
        if cur is not None:
            _close(cur, offsets)
            rows.append(cur)
        cur = {"_key": key, "stage": key[0], "kind": a.kind, "space": a.space, "opcode": a.opcode,
               "base": a.base_name, "terms": terms, "count": 1, "first": a.pos + 1, "last": a.pos + 1,
               "bytes": a.width, "_end": off.c + a.width, "consumer": set(consumers)}
        offsets = [off.c]
    if cur is not None:
        _close(cur, offsets)
        rows.append(cur)
    return rows


def _close(row: dict, offsets: list[int]) -> None:
    row["lo"] = min(offsets)
    row["hi"] = row.pop("_end")
    steps = {b - a for a, b in zip(offsets, offsets[1:], strict=False)}
    row["step"] = steps.pop() if len(steps) == 1 else None
    row.pop("_key")
    row["consumer"] = sorted(row["consumer"], key=lambda c: (int(c.split()[0][1:]), c))
