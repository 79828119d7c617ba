"""The whole analysis of one entry: statements, control flow, symbolic memory, phases with shapes and operand byte
ranges, epilogue stages, parameter block, image extents, cut ABI and memory traffic, as plain data (`to_dict`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tcforge.ptx.dataflow import DataFlow, is_special
from tcforge.ptx.inline import inline_calls
from tcforge.ptx.ir import Function, Module, PTXSyntaxError
from tcforge.ptx.memory import Access, collect_accesses, traffic_rows
from tcforge.ptx.opcodes import is_barrier, is_mma
from tcforge.ptx.phases import MMA, MMAFormatError, Phase, decode_mma, group_phases, shape_phase
from tcforge.ptx.symbolic import PARAM_VALUE, Evaluator, Lin, block_bounds
from tcforge.ptx.trace import Evidence, Tracer, classify, summarise

FORMAT = "tcforge.spec/1"


@dataclass
class OperandBytes:
    """Bytes of an MMA operand (B = weight, C = bias) loaded through one pointer parameter."""

    base: str
    lo: int
    hi: int
    terms: dict[str, int]
    loads: list[int]
    extent: int | None

    def to_dict(self) -> dict:
        """The JSON form: base, thread-zero lo/hi (hi exclusive) and per-thread terms."""
        return {"base": self.base, "lo": self.lo, "hi": self.hi, "terms": dict(self.terms)}


@dataclass
class PhaseReport:
    """A phase with everything the report prints about it."""

    phase: Phase
    first: int
    last: int
    first_line: int
    last_line: int
    instruction: str
    weight: OperandBytes | None
    bias: OperandBytes | None
    epilogue: tuple[int, int]
    ops: Counter
    sources: dict[str, Counter] = field(default_factory=dict)
    stages: list[Evidence] = field(default_factory=list)
    calls: tuple[str, ...] = ()

    @property
    def epilogue_count(self) -> int:
        """Statements between this phase and the next (or the end of the body)."""
        return max(0, self.epilogue[1] - self.epilogue[0] + 1)


class Analysis:
    """Runs every pass over one function; attributes hold the results."""

    def __init__(self, module: Module, fn: Function, rule: str = "stream",
                 block: tuple[int, ...] | None = None) -> None:
        inlined = inline_calls(module, fn)
        fn = inlined.fn
        self.module, self.fn, self.rule, self.block = module, fn, rule, block
        self.call_chains = inlined.chains
        stmts = fn.statements
        self.flow = DataFlow(fn)
        self.ev = Evaluator(fn, self.flow, block)
        self.ev.module_shared = {d.name for d in module.decls if d.space == "shared"}
        self.accesses: list[Access] = collect_accesses(fn, self.ev)
        self.accesses_by_pos: dict[int, list[Access]] = {}
        for a in self.accesses:
            self.accesses_by_pos.setdefault(a.pos, []).append(a)
        self.barrier_positions = [i for i, s in enumerate(stmts) if s.label is None and is_barrier(s.opcode)]
        self.shared_load_positions: dict[str, list[int]] = {}
        for a in self.accesses:
            if a.kind == "load" and a.space == "shared":
                self.shared_load_positions.setdefault(a.base_name, []).append(a.pos)
        mma_pos = [i for i, s in enumerate(stmts) if s.label is None and is_mma(s.opcode)]
        # MMAs that read shared memory through descriptors (wgmma, tcgen05): they consume shared staging
        self.descriptor_mma_positions = [p for p in mma_pos if not stmts[p].opcode.startswith("mma.")]
        groups = group_phases(fn, self.flow, mma_pos, rule)
        self.phase_of: dict[int, int] = {}
        for gi, g in enumerate(groups):
            for p in g:
                self.phase_of[p] = gi + 1
        self.tracer = Tracer(fn, self.flow, self.accesses, self.phase_of)
        self.phases: list[PhaseReport] = []
        self.operand_loads: dict[int, set[str]] = {}
        for gi, g in enumerate(groups):
            self.phases.append(self._phase(gi + 1, g))
        n = len(stmts)
        for i, pr in enumerate(self.phases):
            lo = pr.phase.last_pos + 1
            hi = self.phases[i + 1].phase.first_pos - 1 if i + 1 < len(self.phases) else n - 1
            pr.epilogue = (lo, hi)
            pr.ops = Counter(stmts[p].opcode for p in range(lo, hi + 1) if stmts[p].label is None)
        for pr in self.phases:
            pr.stages = classify(self, *pr.epilogue)
        first = self.phases[0].phase.first_pos if self.phases else n
        self.prologue = (0, first - 1)
        self.prologue_stages = classify(self, 0, first - 1)
        self.traffic = traffic_rows(self)

    # ---- phases -------------------------------------------------------------------------------------------
    def _decode(self, p: int) -> MMA:
        st = self.fn.statements[p]
        idesc = None
        if st.opcode.startswith("tcgen05.mma") and len(st.operands) > 3:
            v = self.ev.operand(st.operands[3], p)
            idesc = v.c if v.is_const else None
        try:
            return decode_mma(st, idesc)
        except MMAFormatError as exc:
            raise PTXSyntaxError(self.module.file, st.line, st.col, str(exc)) from None

    def operand_key(self, mm: MMA, role: str):
        """Identity of an A or B operand: register versions, or symbolic values of descriptors/addresses."""
        regs = mm.a if role == "a" else mm.b
        key = []
        for r in regs:
            if isinstance(r, str) and (r.startswith("%") or r in self.flow.def_pos) and not is_special(r):
                if (mm.family != "mma.sync") and not (role == "a" and mm.a_is_register and mm.family == "wgmma"):
                    key.append(repr(self.ev.value(r, mm.pos)))
                else:
                    key.append((r, self.flow.reaching(r, mm.pos)))
            elif not isinstance(r, str):
                key.append(repr(self.ev.address(r, mm.pos)) if hasattr(r, "offset") else repr(r))
            else:
                key.append(r)
        return tuple(key)

    def predicate(self, op, pos: int) -> bool | None:
        """Value of a predicate operand read at `pos` when its `setp` compares two constants, else None."""
        from tcforge.ptx.operands import Not, Reg

        neg = isinstance(op, Not)
        reg = op.reg if neg else op
        if not isinstance(reg, Reg):
            return None
        defs = self.flow.reaching(reg.name, pos)
        if len(defs) != 1 or defs[0] < 0:
            return None
        st = self.fn.statements[defs[0]]
        if not st.opcode.startswith("setp.") or st.guard is not None or len(st.operands) != 3:
            return None
        a, b = (self.ev.operand(o, defs[0]) for o in st.operands[1:])
        if not (a.is_const and b.is_const):
            return None
        cmp = st.opcode.split(".")[1]
        table = {"eq": a.c == b.c, "ne": a.c != b.c, "lt": a.c < b.c, "le": a.c <= b.c, "gt": a.c > b.c,
                 "ge": a.c >= b.c, "lo": a.c < b.c, "ls": a.c <= b.c, "hi": a.c > b.c, "hs": a.c >= b.c}
        if cmp not in table:
            return None
        return table[cmp] != neg

    def _phase(self, index: int, positions: list[int]) -> PhaseReport:
        stmts = self.fn.statements
        mmas = [self._decode(p) for p in positions]
        ph = Phase(index, mmas)
        shape_phase(ph, self.flow, self.operand_key, self.predicate)
        starts = {ph.mmas[c[0]].pos for c in ph.chains}
        weight = self._operand_bytes([(mm, mm.b) for mm in mmas if mm.b_is_register])
        bias = self._operand_bytes([(mm, mm.c) for mm in mmas if mm.c is not None and mm.pos in starts])
        sources: dict[str, Counter] = {"A": Counter(), "B": Counter(), "C": Counter()}
        for mm in mmas:
            for role, regs in (("A", mm.a), ("B", mm.b), ("C", mm.c if mm.pos in starts else None)):
                if regs is None:
                    continue
                for r in regs:
                    if isinstance(r, str) and r.startswith("%"):
                        sources[role][summarise(self.tracer.origins(r, mm.pos))] += 1
                        got = self.tracer.load_of(r, mm.pos)
                        if got is not None:
                            self.operand_loads.setdefault(got[0].pos, set()).add(f"P{index} {role}")
        ops = sorted({mm_st.opcode for mm_st in (stmts[p] for p in positions)})
        calls = max((self.call_chains[p] for p in positions), key=len)
        return PhaseReport(ph, positions[0] + 1, positions[-1] + 1, stmts[positions[0]].line,
                           stmts[positions[-1]].end_line, ops[0] if len(ops) == 1 else " | ".join(ops),
                           weight, bias, (0, -1), Counter(), sources, calls=calls)

    def _operand_bytes(self, items: list[tuple[MMA, tuple]]) -> OperandBytes | None:
        per_base: dict[str, list[tuple[Access, int]]] = {}
        for mm, regs in items:
            for r in regs:
                if not isinstance(r, str) or not r.startswith("%"):
                    continue
                got = self.tracer.load_of(r, mm.pos)
                if got is None:
                    continue
                acc, i = got
                if acc.base is None or acc.base.kind != PARAM_VALUE:
                    continue
                per_base.setdefault(acc.base.name, []).append(got)
        if not per_base:
            return None
        base, recs = max(per_base.items(), key=lambda kv: len(kv[1]))
        lo = hi = None
        terms: dict[str, int] = {}
        extent: int | None = 0
        for acc, i in recs:
            elem = max(1, acc.width // max(1, len(acc.dests)))
            off = acc.offset
            zero = off.at_zero()
            start, end = zero + i * elem, zero + (i + 1) * elem
            if acc.fragment:  # wmma: the warp's tile, whatever register this is
                start, end, elem, i = zero, zero + acc.width, acc.width, 0
            lo = start if lo is None else min(lo, start)
            hi = end if hi is None else max(hi, end)
            for k, v in off.terms_text().items():
                terms.setdefault(k, v)
            b = off.bounds()
            extent = None if b is None or extent is None else max(extent, b[1] + i * elem + elem)
        loads = sorted({acc.pos + 1 for acc, _ in recs})
        return OperandBytes(base, lo, hi, terms, loads, extent)

    # ---- parameter block, extents, cut ABI ----------------------------------------------------------------
    def param_reads(self) -> list[dict]:
        """Every parameter-block offset read (ld.param or a load through a derived parameter pointer), with type."""
        found: dict[int, dict] = {}
        for a in self.accesses:
            if a.kind != "load" or a.base is None or a.base.kind != "param-block":
                continue
            off = a.addr.without(a.base)
            if not off.is_const:
                continue
            ty = ".".join(p for p in a.opcode.split(".")[1:] if p not in ("param", "global", "weak", "ca", "nc"))
            rec = found.setdefault(off.c, {"offset": off.c, "type": ty, "statements": []})
            rec["statements"].append(a.pos + 1)
        return [found[k] for k in sorted(found)]

    def image_extent(self) -> dict[str, int | None]:
        """Per pointer parameter: exclusive end of every byte any thread reads through it (None: unbounded)."""
        out: dict[str, int | None] = {}
        for a in self.accesses:
            if a.kind not in ("load", "atomic") or a.base is None or a.base.kind != PARAM_VALUE:
                continue
            b = a.offset.bounds()
            end = None if b is None else b[1] + a.width
            name = a.base.name
            if name in out and (out[name] is None or end is None):
                out[name] = None
            else:
                out[name] = end if name not in out else max(out[name], end)
        return dict(sorted(out.items(), key=lambda kv: int(kv[0].split("+")[1]) if "+" in kv[0] else 0))

    def cut_abi(self) -> dict:
        """Cached `_cut_abi`."""
        if getattr(self, "_abi", None) is None:
            self._abi = self._cut_abi()
        return self._abi

    def _cut_abi(self) -> dict:
        """Launch bounds, special registers, parameter block, shared declarations, and the MMA region's live-in and
        live-out registers (reaching definitions across the region's boundary)."""
        stmts = self.fn.statements
        specials = sorted({u for us in self.flow.uses for u in us if is_special(u)})
        shared = [{"name": d.name, "bytes": d.size, "align": d.align} for d in self.fn.decls + self.module.decls
                  if d.space == "shared"]
        res = {
            "launch_bounds": {k: list(v) for k, v in self.fn.directives.items() if k in ("maxntid", "reqntid",
                                                                                          "minnctapersm", "maxnreg")},
            "special_registers": specials,
            "param_block_bytes": self.fn.param_block_size,
            "param_offsets": [r["offset"] for r in self.param_reads()],
            "shared": shared,
        }
        if not self.phases:
            res["region"] = None
            return res
        lo, hi = self.phases[0].phase.first_pos, self.phases[-1].phase.last_pos
        live_in: set[str] = set()
        written: set[str] = set()
        for p in range(lo, hi + 1):
            for u in self.flow.uses[p]:
                if is_special(u) or u in live_in:
                    continue
                if any(d < lo or d > hi for d in self.flow.reaching(u, p)):
                    live_in.add(u)
            written.update(self.flow.defs[p])
        live_out: set[str] = set()
        for p in range(hi + 1, len(stmts)):
            for u in self.flow.uses[p]:
                if u in written and u not in live_out and any(lo <= d <= hi for d in self.flow.reaching(u, p)):
                    live_out.add(u)
        p1 = self.phases[0]
        res["region"] = {
            "first": lo + 1, "last": hi + 1, "first_line": stmts[lo].line, "last_line": stmts[hi].end_line,
            "mma": sum(len(pr.phase.mmas) for pr in self.phases), "phases": len(self.phases),
            "live_in": sorted(live_in, key=_reg_order), "live_out": sorted(live_out, key=_reg_order),
            "phase1_inputs": {k: dict(v) for k, v in p1.sources.items()},
        }
        return res

    def loops(self) -> list[dict]:
        """Back edges as header/latch statement numbers and file lines."""
        st = self.fn.statements
        out = []
        for latch, header in self.flow.loops:
            h = self.flow.block_starts[header]
            t = self.flow.block_ends[latch]
            out.append({"header": h + 1, "latch": t + 1, "first_line": st[h].line, "last_line": st[t].end_line})
        return out

    # ---- output ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The stable JSON document (see docs/spec.md)."""
        stmts = self.fn.statements
        phases = []
        for pr in self.phases:
            ph = pr.phase
            phases.append({
                "index": ph.index, "first": pr.first, "last": pr.last,
                "M": ph.M, "N": ph.N, "K": ph.K, "mma": len(ph.mmas), "chains": len(ph.chains), "grid": ph.grid,
                "instruction": pr.instruction,
                "weight": pr.weight.to_dict() if pr.weight else None,
                "bias": pr.bias.to_dict() if pr.bias else None,
                "epilogue": pr.epilogue_count, "ops": dict(sorted(pr.ops.items())),
                "first_line": pr.first_line, "last_line": pr.last_line,
                "chain_length": ph.chain_length, "a_operands": ph.a_count, "b_operands": ph.b_count,
                "operand_extent": {"weight": pr.weight.extent if pr.weight else None,
                                   "bias": pr.bias.extent if pr.bias else None},
                "epilogue_range": [pr.epilogue[0] + 1, pr.epilogue[1] + 1] if pr.epilogue_count else None,
                "sources": {k: dict(v) for k, v in pr.sources.items()},
                "stages": [str(e) for e in pr.stages],
                "calls": list(pr.calls),
            })
        return {
            "format": FORMAT,
            "file": self.module.file,
            "entry": self.fn.name,
            "statements": len(stmts),
            "lines": [self.fn.line, self.fn.end_line],
            "phase_rule": self.rule,
            "block": list(block_bounds(self.fn, self.block)[0]),
            "param_offsets": [r["offset"] for r in self.param_reads()],
            "params": self.param_reads(),
            "phases": phases,
            "image_extent": self.image_extent(),
            "prologue": {"first": 1, "last": self.prologue[1] + 1, "stages": [str(e) for e in self.prologue_stages]},
            "cut_abi": self.cut_abi(),
            "loops": self.loops(),
            "traffic": self.traffic,
        }


def _reg_order(name: str) -> tuple:
    import re

    m = re.match(r"(%?[A-Za-z_]+)(\d*)$", name)
    return (m.group(1), int(m.group(2) or 0)) if m else (name, 0)


def analyse(module: Module, entry: str | None = None, rule: str = "stream",
            block: tuple[int, ...] | None = None) -> Analysis:
    """Analyse one entry of a parsed module (the only entry when `entry` is None); `block` is the launch's block
    shape (bounds %tid.*), default from .reqntid or the .maxntid thread count."""
    return Analysis(module, module.function(entry), rule, block)


__all__ = ["FORMAT", "Analysis", "Lin", "OperandBytes", "PhaseReport", "analyse"]
