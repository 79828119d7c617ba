"""Control flow and versioned definitions of one function: basic blocks, loops, def/use sets, reaching definitions.

Registers are reused across phases, so a register name alone does not identify a value: `reaching(reg, pos)` gives the
definitions (statement positions, 0-based) that reach a use at `pos` along the control flow, -1 standing for the
function entry (a value live on entry). Walks follow predecessors block by block, so loops and branches are honoured.
"""

from __future__ import annotations

from bisect import bisect_left

from tcforge.ptx.ir import Function, Statement
from tcforge.ptx.opcodes import is_branch, root, writes_first_operand
from tcforge.ptx.operands import Addr, Not, Pair, Paren, Reg, Sel, Sym, Vec, iter_regs

SPECIAL_PREFIXES = (
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%gridid", "%clock",
    "%lanemask", "%pm", "%envreg", "%globaltimer", "%dynamic_smem_size", "%total_smem_size", "%cluster", "%nclusterid",
    "%is_explicit_cluster", "%aggr_smem_size", "%current_graph_exec", "%reserved_smem_offset",
)


def is_special(name: str) -> bool:
    """True for PTX special registers (`%tid.x`, `%laneid`, `%ctaid.y`, `%clock64`, ...)."""
    return name.startswith(SPECIAL_PREFIXES)


def _dest_regs(op) -> list[str]:
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, (Vec, Paren)):
        out: list[str] = []
        for it in op.items:
            out.extend(_dest_regs(it))
        return out
    if isinstance(op, Pair):
        return _dest_regs(op.first) + _dest_regs(op.second)
    if isinstance(op, Sel):  # a video instruction's masked destination: written whole (merged with c)
        return [op.reg.name]
    return []


def defs_uses(st: Statement) -> tuple[list[str], list[str]]:
    """Registers a statement writes and reads (special registers included in the reads)."""
    if st.label is not None:
        return [], []
    ops = st.operands
    uses: list[str] = [st.guard[0]] if st.guard else []
    defs: list[str] = []
    op = st.opcode
    if not ops:
        return defs, uses
    if op.startswith("wgmma.mma_async"):
        d = _dest_regs(ops[0])
        defs.extend(d)
        uses.extend(d)
        rest = ops[1:]
    elif writes_first_operand(op) and not isinstance(ops[0], Addr):
        defs.extend(_dest_regs(ops[0]))
        if isinstance(ops[0], (Vec, Paren)):
            uses.extend(r.name for r in iter_regs(ops[0]) if r.name not in defs)
        rest = ops[1:]
    else:
        rest = ops
    for o in rest:
        if isinstance(o, Reg):
            uses.append(o.name)
        elif isinstance(o, (Sym,)):
            continue
        elif isinstance(o, Not):
            uses.append(o.reg.name)
        else:
            uses.extend(r.name for r in iter_regs(o))
    return defs, uses


def branch_targets(st: Statement) -> list[str]:
    """Labels a branch statement may jump to."""
    if root(st.opcode) not in ("bra", "brx"):
        return []
    return [o.name for o in st.operands if isinstance(o, Sym)]


class DataFlow:
    """Basic blocks, successor/predecessor edges, loops and reaching definitions of one function body."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        stmts = fn.statements
        n = len(stmts)
        self.defs: list[list[str]] = []
        self.uses: list[list[str]] = []
        def_pos: dict[str, list[int]] = {}
        for i, st in enumerate(stmts):
            d, u = defs_uses(st)
            self.defs.append(d)
            self.uses.append(u)
            for r in d:
                lst = def_pos.get(r)
                if lst is None:
                    def_pos[r] = [i]
                elif lst[-1] != i:
                    lst.append(i)
        self.def_pos = def_pos
        # basic blocks
        starts = {0} if n else set()
        labels: dict[str, int] = {}
        for i, st in enumerate(stmts):
            if st.label is not None:
                starts.add(i)
                labels[st.label] = i
            elif is_branch(st.opcode) and root(st.opcode) != "call" and i + 1 < n:
                starts.add(i + 1)
        self.block_starts = sorted(starts)
        self.block_of = [0] * n
        for b, s in enumerate(self.block_starts):
            e = self.block_starts[b + 1] if b + 1 < len(self.block_starts) else n
            for i in range(s, e):
                self.block_of[i] = b
        nb = len(self.block_starts)
        self.block_ends = [(self.block_starts[b + 1] if b + 1 < nb else n) - 1 for b in range(nb)]
        self.succs: list[list[int]] = [[] for _ in range(nb)]
        self.preds: list[list[int]] = [[] for _ in range(nb)]
        for b in range(nb):
            last = stmts[self.block_ends[b]]
            r = root(last.opcode) if last.label is None else ""
            out: list[int] = []
            falls = True
            if r in ("bra", "brx"):
                targets = branch_targets(last)
                targets = [x for t in targets for x in fn.branch_tables.get(t, [t])]
                for t in targets:
                    if t in labels:
                        out.append(self.block_of[labels[t]])
                falls = last.guard is not None
            elif r in ("ret", "exit", "trap"):
                falls = last.guard is not None
            if falls and b + 1 < nb:
                out.append(b + 1)
            for s in dict.fromkeys(out):
                self.succs[b].append(s)
                self.preds[s].append(b)
        self.labels = labels
        self._memo: dict[tuple[str, int], tuple[int, ...]] = {}
        self.loops = self._find_loops()

    def _find_loops(self) -> list[tuple[int, int]]:
        """Back edges (latch block, header block) found by an iterative DFS from the entry block."""
        nb = len(self.block_starts)
        if not nb:
            return []
        state = [0] * nb  # 0 new, 1 on stack, 2 done
        loops: list[tuple[int, int]] = []
        stack = [(0, 0)]
        state[0] = 1
        while stack:
            b, k = stack[-1]
            if k < len(self.succs[b]):
                stack[-1] = (b, k + 1)
                s = self.succs[b][k]
                if state[s] == 0:
                    state[s] = 1
                    stack.append((s, 0))
                elif state[s] == 1:
                    loops.append((b, s))
            else:
                state[b] = 2
                stack.pop()
        return loops

    def _last_def_in_block(self, reg: str, b: int) -> int | None:
        lst = self.def_pos.get(reg)
        if not lst:
            return None
        end = self.block_ends[b]
        k = bisect_left(lst, end + 1) - 1
        if k >= 0 and lst[k] >= self.block_starts[b]:
            return lst[k]
        return None

    def reaching(self, reg: str, pos: int) -> tuple[int, ...]:
        """Definitions (statement positions; -1 = function entry) of `reg` that reach a read at position `pos`."""
        lst = self.def_pos.get(reg)
        b = self.block_of[pos]
        if lst:
            k = bisect_left(lst, pos) - 1
            if k >= 0 and lst[k] >= self.block_starts[b]:
                return (lst[k],)
        else:
            return (-1,)
        return self._entry(reg, b)

    def _entry(self, reg: str, b: int) -> tuple[int, ...]:
        key = (reg, b)
        got = self._memo.get(key)
        if got is not None:
            return got
        found: set[int] = set()
        if b == 0:
            found.add(-1)
        seen: set[int] = set()
        stack = list(self.preds[b])
        while stack:
            p = stack.pop()
            if p in seen:
                continue
            seen.add(p)
            d = self._last_def_in_block(reg, p)
            if d is not None:
                found.add(d)
                continue
            if p == 0:
                found.add(-1)
            stack.extend(self.preds[p])
        res = tuple(sorted(found)) or (-1,)
        self._memo[key] = res
        return res

    def guarded_by_branch(self, pos: int) -> bool:
        """True when the statement's block is entered only around a conditional branch (it can be skipped)."""
        b = self.block_of[pos]
        if len(self.preds[b]) != 1:
            return False
        for p in self.preds[b]:
            last = self.fn.statements[self.block_ends[p]]
            if last.label is None and root(last.opcode) == "bra" and last.guard is not None:
                return True
        return False
