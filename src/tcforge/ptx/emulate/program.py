"""The executable form of a kernel: the entry and every `.func` it calls laid out in one statement list, each
statement compiled once into (kind, closure, target, statement, guard). An instruction that cannot be built (out of
scope, unsupported) compiles to a closure that raises when a thread executes it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcforge.ptx.emulate import (
    ops_async,
    ops_bits,
    ops_cvt,
    ops_float,
    ops_int,
    ops_matrix,
    ops_mem,
    ops_printf,
    ops_sync,
    ops_tcgen05,
    ops_tensormap,
    ops_tex,
    ops_video,
    ops_wgmma,
    ops_wmma,
)
from tcforge.ptx.emulate.machine import OUT_OF_SCOPE, EmulationError
from tcforge.ptx.operands import Imm, Paren, Sym

PLAIN, LABEL, BRA, CALL, RET, EXIT, BAR, WAIT, CWAIT, BRX = range(10)  # WAIT: mbarrier try_wait / test_wait; CWAIT:
# cluster; BRX: brx.idx, a branch to the index-th label of a .branchtargets list

BUILDERS: dict = {}
for _mod in (ops_int, ops_bits, ops_float, ops_cvt, ops_mem, ops_sync, ops_matrix, ops_wgmma, ops_async, ops_tex,
             ops_tensormap, ops_wmma, ops_video, ops_tcgen05):
    BUILDERS.update(_mod.BUILDERS)
_NOOPS = {"brkpt", "nanosleep", "pmevent", "trap"}


@dataclass
class Program:
    """Statements of the entry (from index 0) and its callees; `functions` maps a name to (start, Function)."""

    code: list
    functions: dict
    blocks: dict | None = None

    def block(self, p: int) -> tuple[tuple, int]:
        """The closures of the straight-line run from `p` (labels skipped) and the index where it ends."""
        if self.blocks is None:
            self.blocks = {}
        hit = self.blocks.get(p)
        if hit is None:
            fns, q = [], p
            while q < len(self.code) and self.code[q][0] in (PLAIN, LABEL):
                if self.code[q][0] == PLAIN:
                    fns.append(self.code[q][1])
                q += 1
            hit = self.blocks[p] = (tuple(fns), q)
        return hit


def reachable(module, entry) -> list:
    """The entry and the `.func` bodies reachable from it by `call`, entry first; recursion is an error."""
    bodies = {f.name: f for f in module.functions if f.has_body}
    callees: dict[str, list] = {}

    def calls(fn) -> list:
        if fn.name not in callees:
            out = []
            for st in fn.statements:
                if st.opcode.startswith("call"):
                    target = next((o.name for o in st.operands if isinstance(o, Sym)), None)
                    if target in bodies and all(target != t for t, _ in out):
                        out.append((target, st))
            callees[fn.name] = out
        return callees[fn.name]

    order: list = []
    state: dict[str, int] = {}  # 1: on the current path, 2: finished

    def visit(fn) -> None:
        state[fn.name] = 1
        order.append(fn)
        for target, st in calls(fn):
            if state.get(target) == 1:
                raise EmulationError(f"{module.file}:{st.line}: recursive call of {target!r} is not supported")
            if target not in state:
                visit(bodies[target])
        state[fn.name] = 2

    visit(entry)
    return order


def _guard(ctx, st):
    if st.guard is None:
        return None
    name, neg = st.guard
    regs = ctx.regs

    def g(m):
        p = regs[name]
        t = ~p if neg else p
        return t if m is None else (t & m)
    return g


def _raiser(exc):
    def run(m):
        raise exc
    return run


def _compile(ctx, st):
    parts = st.opcode.split(".")
    root = parts[0]
    full = st.opcode
    if root in OUT_OF_SCOPE or any(full.startswith(p + ".") or full == p for p in OUT_OF_SCOPE):
        ctx.out_of_scope(st)
    if root in _NOOPS:
        if root == "trap":
            def trap(m):
                lane = int(ctx.lanes(m)[0])
                ctx.failer(st)(lane, "trap executed")
            return trap
        return lambda m: None
    if root == "bar" and len(parts) > 1 and parts[1] == "warp":
        return lambda m: None
    b = BUILDERS.get(root)
    if b is None:
        ctx.unsupported(st, f"instruction {full!r}")
    return b(ctx, st, parts)


def _plain(ctx, st):
    try:
        fn = _compile(ctx, st)
    except EmulationError as exc:
        return _raiser(exc)
    return _guarded(_guard(ctx, st), fn)


def _guarded(g, fn):
    """`fn` run on the lanes where the statement's guard `g` holds (None: no guard)."""
    if g is None:
        return fn

    def guarded(m):
        t = g(m)
        if not t.any():
            return
        fn(None if (m is None and t.all()) else t)
    return guarded


def _arrive(ctx, st, bid, cnt, counted: bool = True):
    """`bar.arrive id{, count}`: the executing threads count towards barrier `id` of their CTA without waiting
    (control._release completes a barrier when its waiting threads and these arrivals reach the count, or, without
    one, every live thread of the CTA)."""

    def arrive(m):
        lanes = np.arange(ctx.n) if m is None else np.flatnonzero(m)
        ids, counts = bid()[lanes], cnt()[lanes]
        if counted and ((counts == 0).any() or (counts % 32).any()):
            raise EmulationError(f"{ctx.file}:{st.line}: bar.arrive needs a thread count that is a multiple of 32")
        keys, k = np.unique(np.stack([lanes // ctx.lanes_per_cta, ids]), axis=1, return_counts=True)
        for (cta, bar), add in zip(keys.T.tolist(), k.tolist(), strict=True):
            ctx.bar_arrived[(cta, bar)] = ctx.bar_arrived.get((cta, bar), 0) + add
    return _guarded(_guard(ctx, st), arrive)


def build_program(module, entry, ctx, layout) -> Program:
    """Compile the entry and its callees for the lanes of `ctx`; `layout(fn)` gives the function's symbol map."""
    fns = reachable(module, entry)
    code: list = []
    functions: dict = {}
    labels: dict[tuple[str, str], int] = {}
    starts: dict[str, int] = {}
    pos = 0  # index every statement first so branches and calls resolve
    for fn in fns:
        starts[fn.name] = pos
        for i, st in enumerate(fn.statements):
            if st.is_label:
                labels[(fn.name, st.label)] = pos + i
        pos += len(fn.statements) + 1  # + an implicit ret at the end of every body
    for fn in fns:
        ctx.regs = ctx.new_regs(fn.reg_types)
        ctx.consts = layout(fn)
        functions[fn.name] = (starts[fn.name], fn)
        for st in fn.statements:
            code.append(_statement(ctx, module, fn, st, labels, starts))
        code.append((RET, None, None, _End(fn), None))
    return Program(code, functions)


def _brx(ctx, module, fn, st, labels, g):
    """brx.idx index, tlist: (BRX, None, (index reader, target pcs), ...); a list or label not found fails when run."""
    ops = st.operands
    table = fn.branch_tables.get(ops[1].name) if len(ops) == 2 and isinstance(ops[1], Sym) else None
    if "idx" not in st.opcode.split(".") or table is None or any((fn.name, t) not in labels for t in table):
        return (PLAIN, _raiser(EmulationError(f"{module.file}:{st.line}: brx.idx expects an index and a "
                                              ".branchtargets list of this function's labels")), None, st, None)
    targets = np.array([labels[(fn.name, t)] for t in table], np.int64)
    return (BRX, None, (ctx.src_full(ops[0], "u32"), targets), st, g)


class _End:
    """The implicit `ret` closing a body."""

    def __init__(self, fn) -> None:
        self.line, self.opcode, self.guard = fn.end_line, "ret", None


def _statement(ctx, module, fn, st, labels, starts):
    if st.is_label:
        return (LABEL, None, None, st, None)
    parts = st.opcode.split(".")
    root = parts[0]
    g = _guard(ctx, st)
    if root == "bra":
        target = st.operands[0]
        if not isinstance(target, Sym) or (fn.name, target.name) not in labels:
            return (PLAIN, _raiser(EmulationError(f"{module.file}:{st.line}: branch target {target!r} not found")),
                    None, st, None)
        return (BRA, None, labels[(fn.name, target.name)], st, g)
    if root == "brx":
        return _brx(ctx, module, fn, st, labels, g)
    if root in ("ret", "exit"):
        return (RET if root == "ret" else EXIT, None, None, st, g)
    if root == "call":
        ops = list(st.operands)
        rets: tuple = ()
        if ops and isinstance(ops[0], Paren):
            rets = tuple(o.name for o in ops.pop(0).items)
        callee = ops[0].name if ops and isinstance(ops[0], Sym) else None
        args = tuple(o.name for o in ops[1].items) if len(ops) > 1 and isinstance(ops[1], Paren) else ()
        if callee == "vprintf" and callee not in starts:  # CUDA's device printf
            try:
                return (PLAIN, _guarded(g, ops_printf.b_vprintf(ctx, st, args, rets)), None, st, None)
            except EmulationError as exc:
                return (PLAIN, _raiser(exc), None, st, None)
        if callee not in starts:
            return (PLAIN, _raiser(EmulationError(f"{module.file}:{st.line}: call of {callee!r}, which has no body "
                                                  "in this module (indirect or external calls are not supported)")),
                    None, st, None)
        return (CALL, None, (starts[callee], callee, args, rets), st, g)
    if root == "mbarrier" and len(parts) > 1 and parts[1] in ("try_wait", "test_wait"):
        try:
            return (WAIT, None, ops_async.b_test_wait(ctx, st, parts), st, g)
        except EmulationError as exc:
            return (PLAIN, _raiser(exc), None, st, None)
    if root == "barrier" and len(parts) > 2 and parts[1] == "cluster":
        if parts[2] == "arrive":
            return (PLAIN, _guarded(g, ops_async.cluster_arrive(ctx, st)), None, st, None)
        if parts[2] == "wait":
            return (CWAIT, None, None, st, g)
    if root in ("bar", "barrier") and not (len(parts) > 1 and parts[1] == "warp") and "cluster" not in parts:
        quals = [q for q in parts[1:] if q != "cta"]
        kind = quals[0] if quals else "sync"
        if kind == "red":
            return _bar_red(ctx, module, st, quals, g)
        bid = st.operands[0] if st.operands else Imm(0, "0")
        cnt = st.operands[1] if len(st.operands) > 1 else Imm(0, "0")
        if kind == "arrive" and len(st.operands) in (1, 2):
            return (PLAIN, _arrive(ctx, st, ctx.src_full(bid, "u32"), ctx.src_full(cnt, "u32"), len(st.operands) == 2),
                    None, st, None)
        if kind not in ("sync", "aligned") and not (root == "barrier" and kind == "sync"):
            err = EmulationError(f"{module.file}:{st.line}: {st.opcode} is not supported by the emulator "
                                 "(bar.sync / barrier.sync / bar.red / bar.arrive)")
            return (PLAIN, _raiser(err), None, st, None)
        return (BAR, None, (ctx.src_full(bid, "u32"), ctx.src_full(cnt, "u32")), st, g)
    return (PLAIN, _plain(ctx, st), None, st, None)


RED_OPS = {"popc": "u32", "and": "pred", "or": "pred"}


def _bar_red(ctx, module, st, quals, g):
    """`bar.red.popc.u32 d, a{, b}, {!}c` / `.and.pred` / `.or.pred`: a barrier (as bar.sync a{, b}) whose released
    threads all receive the count of, or the and / or over, their predicates c (control._release)."""
    op = next((q for q in quals if q in RED_OPS), None)
    ops = st.operands
    if op is None or RED_OPS[op] not in quals or len(ops) not in (3, 4):
        return (PLAIN, _raiser(EmulationError(f"{module.file}:{st.line}: {st.opcode} with {len(ops)} operands: "
                                              "expected bar.red.popc.u32 / .and.pred / .or.pred d, a{, b}, {!}c")),
                None, st, None)
    cnt = ops[2] if len(ops) == 4 else Imm(0, "0")
    red = (op, ctx.src_full(ops[-1], "pred"), ctx.dst(ops[0], RED_OPS[op]))
    return (BAR, None, (ctx.src_full(ops[1], "u32"), ctx.src_full(cnt, "u32"), red), st, g)
