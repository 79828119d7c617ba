"""Def-use walks that follow the control flow: where an MMA operand register comes from.

`load_of` follows plain register copies back to a load (for the weight/bias byte ranges); `origins` walks every
dependency back to its roots (an earlier MMA's accumulator, a memory load, a parameter, a constant), noting whether the
path crossed an e4m3/e5m2 requantisation. Both are memoised per definition; there is no step limit.

`classify` names the stages of a statement range (the prologue or one phase's epilogue) with op evidence, in a
vocabulary that covers the enc5 analysis's epilogues: next-operand-loads, e4m3-requantise, cubic-softmax, ex2-softmax,
reciprocal, rms-norm, clamped-cubic, transpose, shared-staging, shared-store, guarded-scatter, global-store,
texture-read, surface-write, surface-read, warp-shuffle, barrier.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcforge.ptx.dataflow import DataFlow, is_special
from tcforge.ptx.ir import Function
from tcforge.ptx.memory import Access
from tcforge.ptx.opcodes import is_mma, root
from tcforge.ptx.operands import Imm

_COPY = ("mov.b32", "mov.u32", "mov.s32", "mov.b64", "mov.u64", "mov.s64", "mov.b16", "mov.u16", "mov.f32", "mov.f16")


def is_requantise(opcode: str) -> bool:
    """cvt to an 8-bit float format (`cvt.rn.satfinite.e4m3x2.f16x2`, e5m2, ...)."""
    return opcode.startswith("cvt") and ("e4m3" in opcode or "e5m2" in opcode or "e2m1" in opcode)


class Tracer:
    """Backward walks over reaching definitions."""

    def __init__(self, fn: Function, flow: DataFlow, accesses: list[Access], phase_of: dict[int, int]) -> None:
        self.fn, self.flow = fn, flow
        self.stmts = fn.statements
        self.load_at: dict[int, Access] = {}
        for a in accesses:
            if a.kind in ("load", "texture", "surface-load") and a.dests:
                self.load_at.setdefault(a.pos, a)
        self.phase_of = phase_of
        self._origins: dict[tuple[int, str], frozenset] = {}

    def load_of(self, reg: str, pos: int) -> tuple[Access, int] | None:
        """(load, element index) that `reg` holds at `pos`, following plain copies; None if not a loaded value."""
        for _ in range(64):
            defs = self.flow.reaching(reg, pos)
            if len(defs) != 1 or defs[0] < 0:
                return None
            d = defs[0]
            acc = self.load_at.get(d)
            if acc is not None:
                try:
                    return acc, acc.dests.index(reg)
                except ValueError:
                    return None
            st = self.stmts[d]
            if st.opcode in _COPY and st.guard is None and len(st.operands) == 2 and hasattr(st.operands[1], "name") \
                    and type(st.operands[1]).__name__ == "Reg" and not is_special(st.operands[1].name):
                reg, pos = st.operands[1].name, d
                continue
            return None
        return None

    def _terminal(self, d: int) -> frozenset | None:
        st = self.stmts[d]
        op = st.opcode
        if is_mma(op):
            return frozenset({(f"P{self.phase_of.get(d, 0)}", False)})
        acc = self.load_at.get(d)
        if acc is not None:
            if acc.space == "param":
                return frozenset({("param", False)})
            return frozenset({(f"{acc.space}:{acc.base_name}", False)})
        r = root(op)
        if r in ("ld", "ldu", "ldmatrix", "tex", "tld4", "suld", "atom", "tcgen05", "wmma"):
            return frozenset({(r, False)})
        if r in ("mov", "cvta") and any(type(o).__name__ == "Sym" for o in st.operands[1:]):
            sym = next(o for o in st.operands[1:] if type(o).__name__ == "Sym")
            return frozenset({(f"&{sym.name}", False)})  # the address of a variable (shared tile, descriptor base)
        return None

    def origins(self, reg: str, pos: int) -> frozenset:
        """Root labels ("P3", "global:param+40", "shared:smem", "param", "special", "const", "live-in") with an
        e4m3 flag, for the value `reg` holds when read at `pos`."""
        if is_special(reg):
            return frozenset({("special", False)})
        out: set = set()
        for d in self.flow.reaching(reg, pos):
            out |= self._def_origins(d, reg)
        return frozenset(out)

    def _deps(self, d: int) -> list[tuple[int, str]]:
        deps = []
        uses = self.flow.uses[d]
        if self.stmts[d].guard is not None:
            uses = uses[1:]
        for u in uses:
            if is_special(u):
                deps.append((-2, u))
                continue
            for dd in self.flow.reaching(u, d):
                deps.append((dd, u))
        return deps

    def _def_origins(self, d: int, reg: str) -> frozenset:
        if d < 0:
            return frozenset({("live-in", False)})
        memo = self._origins
        key = (d, reg)
        if key in memo:
            return memo[key]
        # origins depend only on the defining statement, so memoise per statement (reg kept for the key shape)
        stack = [(d, False)]
        on_stack: set[int] = set()
        while stack:
            s, expanded = stack.pop()
            if (s, "") in memo:
                continue
            term = self._terminal(s)
            if term is not None:
                memo[(s, "")] = term
                continue
            deps = self._deps(s)
            if not expanded:
                stack.append((s, True))
                on_stack.add(s)
                for dd, _ in deps:
                    if dd >= 0 and (dd, "") not in memo and dd not in on_stack:
                        stack.append((dd, False))
                continue
            res: set = set()
            for dd, _u in deps:
                if dd == -2:
                    res.add(("special", False))
                elif dd == -1:
                    res.add(("live-in", False))
                else:
                    res |= memo.get((dd, ""), frozenset())
            if not deps:
                res.add(("const", False))
            if is_requantise(self.stmts[s].opcode):
                res = {(lab, True) for lab, _ in res}
            memo[(s, "")] = frozenset(res)
            on_stack.discard(s)
        val = memo[(d, "")]
        memo[key] = val
        return val


def summarise(origins: frozenset) -> str:
    """One label for an origin set: roots joined by '+', constants dropped unless alone, ' (e4m3)' if requantised."""
    labels = sorted({lab for lab, _ in origins if lab not in ("const",)} or {"const"})
    s = "+".join(labels)
    if any(q for _, q in origins):
        s += " (e4m3)"
    return s


# epilogue stages ------------------------------------------------------------------------------------------------------

STAGES = ("next-operand-loads", "e4m3-requantise", "cubic-softmax", "ex2-softmax", "reciprocal", "rms-norm",
          "clamped-cubic", "transpose", "shared-staging", "shared-store", "guarded-scatter", "global-store",
          "texture-read", "surface-write", "surface-read", "warp-shuffle", "barrier")
_CUBIC_EXP_MASKS = (0x7FE07FE0, 0x7FE0)


@dataclass
class Evidence:
    """One stage found in a range: how many statements show it and the first of them (1-based)."""

    stage: str
    count: int
    first: int

    def __str__(self) -> str:
        return f"{self.stage}:{self.count}@s{self.first}"


def classify(an, lo: int, hi: int) -> list[Evidence]:
    """Stages of statement positions lo..hi (inclusive, 0-based) of analysis `an`, in vocabulary order."""
    stmts = an.fn.statements
    hits: dict[str, list[int]] = {s: [] for s in STAGES}
    acc_by_pos = an.accesses_by_pos
    shared_loads_after = an.shared_load_positions
    barrier_positions = an.barrier_positions
    for p in range(lo, hi + 1):
        st = stmts[p]
        if st.label is not None:
            continue
        op = st.opcode
        if is_requantise(op):
            hits["e4m3-requantise"].append(p)
        elif op.startswith("and.b32") and any(isinstance(o, Imm) and o.value in _CUBIC_EXP_MASKS for o in st.operands):
            hits["cubic-softmax"].append(p)
        elif op.startswith("ex2.approx"):
            hits["ex2-softmax"].append(p)
        elif op.startswith(("rcp.approx", "div.approx", "div.full", "rcp.rn")):
            hits["reciprocal"].append(p)
        elif op.startswith("rsqrt.approx"):
            hits["rms-norm"].append(p)
        elif op.startswith("abs.f16x2") or op.startswith("abs.bf16x2"):
            hits["clamped-cubic"].append(p)
        elif op.startswith("movmatrix"):
            hits["transpose"].append(p)
        elif op.startswith("shfl."):
            hits["warp-shuffle"].append(p)
        elif op.startswith(("bar.", "barrier.")):
            hits["barrier"].append(p)
        for a in acc_by_pos.get(p, ()):
            if a.kind == "load" and p in an.operand_loads:
                hits["next-operand-loads"].append(p)
            elif a.kind == "store" and a.space == "shared":
                later_bar = bool(barrier_positions) and barrier_positions[-1] > p
                later_ld = any(q > p for q in shared_loads_after.get(a.base_name, ())) or any(
                    q > p for q in an.descriptor_mma_positions)
                hits["shared-staging" if later_bar and later_ld else "shared-store"].append(p)
            elif a.kind in ("store", "atomic") and a.space in ("global", "generic"):
                guarded = st.guard is not None or an.flow.guarded_by_branch(p)
                hits["guarded-scatter" if guarded else "global-store"].append(p)
            elif a.kind == "texture":
                hits["texture-read"].append(p)
            elif a.kind == "surface-store":
                hits["surface-write"].append(p)
            elif a.kind == "surface-load":
                hits["surface-read"].append(p)
    out = []
    for s in STAGES:
        ps = sorted(set(hits[s]))
        if ps:
            out.append(Evidence(s, len(ps), ps[0] + 1))
    return out
