"""Execution of a Program over the lanes of a batch of CTAs: each step runs the lanes at the lowest program counter
together (so lanes that branched apart reconverge where their paths meet, and loops run until the last lane leaves),
straight-line runs execute without re-deciding, predication and divergent branches are lane masks, `bar.sync` blocks
lanes until every live thread of the CTA (or the barrier's count, `bar.arrive` arrivals included) has arrived, and
`call`/`ret` keep per-lane return addresses and per-call parameter frames. An `mbarrier.try_wait` whose phase has
not completed (and a `test_wait` a lane has spun on SPIN_LIMIT times) and `barrier.cluster.wait` block their
threads too; when no thread can run, each blocked one is looked at again (a barrier's count reached, an mbarrier
phase completed, every thread of the cluster arrived) and nothing to release is a deadlock, reported with what each
side waits for."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.machine import EmulationError
from tcforge.ptx.emulate.program import BAR, BRA, BRX, CALL, CWAIT, EXIT, LABEL, PLAIN, RET, WAIT

_FAR = np.iinfo(np.int64).max
MAX_DEPTH = 16
SPIN_LIMIT = 64  # false test_wait answers in a row after which a lane waits for the phase like try_wait


class _Stats:
    def __init__(self) -> None:
        self.warp_instructions = 0
        self.steps = 0


def run(program, ctx) -> _Stats:
    """Execute every lane of `ctx` to completion; returns instruction counts."""
    n = ctx.n
    code = program.code
    pc = np.zeros(n, np.int64)
    done = ctx.padding.copy()
    blocked = np.zeros(n, bool)
    bar_id = np.zeros(n, np.int64)
    bar_count = np.zeros(n, np.int64)  # 0: every live thread of the CTA
    bar_pred = np.zeros(n, bool)  # bar.red: each waiting thread's predicate
    spins = np.zeros(n, np.int64)  # consecutive false answers of a test_wait per lane
    ret_pc = np.zeros((MAX_DEPTH, n), np.int64)
    call_site = np.zeros((MAX_DEPTH, n), np.int64)
    stats = _Stats()
    program.block(0)
    blocks = program.blocks
    while True:
        live = ~(done | blocked)
        if not live.any():
            if blocked.any():
                _release(ctx, code, pc, done, blocked, bar_id, bar_count, bar_pred)
                continue
            break
        p0 = int(pc[live].min())
        group = live & (pc == p0)
        others = live & ~group
        q = int(pc[others].min()) if others.any() else _FAR
        m = None if group.all() else group
        ctx.group.set(m, done)
        gcount = int(np.count_nonzero(group))
        nwarps = int(np.count_nonzero(group.reshape(-1, 32).any(axis=1)))
        p = p0
        steps = 0
        while p < q:
            kind, fn, arg, st, guard = code[p]
            if kind <= LABEL:
                fns, end = blocks[p] if p in blocks else program.block(p)
                if end <= q:
                    for f in fns:
                        f(m)
                    steps += len(fns)
                    p = end
                    continue
                if kind == PLAIN:
                    fn(m)
                    steps += 1
                p += 1
                continue
            steps += 1
            taken = None
            if guard is not None:
                t = guard(m)
                k = int(np.count_nonzero(t))
                if k == 0:
                    p += 1
                    continue
                if k != gcount:
                    taken = t
            if kind == BRA:
                if taken is None:
                    p = arg
                    continue
                pc[taken] = arg
                pc[group & ~taken] = p + 1
                p = -1
                break
            sel = group if taken is None else taken
            if kind == BRX:  # each lane to the label its index names
                index, targets = arg
                at = np.flatnonzero(sel)
                i = index()[at].astype(np.int64)
                if (i >= len(targets)).any():
                    k = int(at[int(np.argmax(i >= len(targets)))])
                    raise EmulationError(f"{ctx.file}:{st.line}: thread {ctx.thread(k)}: brx.idx index "
                                         f"{int(index()[k])} outside its {len(targets)} targets")
                pc[at] = targets[i]
                if taken is not None:
                    pc[group & ~taken] = p + 1
                p = -1
                break
            if kind == WAIT:
                ready = arg[0](sel) & sel
                wait = sel & ~ready
                if arg[3]:  # test_wait answers now; a lane that keeps spinning on it waits for the phase instead
                    arg[1](sel, ready)
                    spins[ready] = 0
                    spins[wait] += 1
                    wait &= spins >= SPIN_LIMIT
                    spins[wait] = 0
                elif ready.any():
                    arg[1](ready, True)
                if not wait.any() and taken is None:
                    p += 1
                    continue
                p = _park(blocked, wait, group, pc, p)
                break
            if kind == CWAIT:
                early = sel & (ctx.cluster_arrived <= ctx.cluster_passed)
                if early.any():
                    k = int(np.argmax(early))
                    raise EmulationError(f"{ctx.file}:{st.line}: thread {ctx.thread(k)}: barrier.cluster.wait without "
                                         "a barrier.cluster.arrive before it")
                p = _park(blocked, sel, group, pc, p)
                break
            if kind == BAR:
                bar_id[sel] = arg[0]()[sel]
                bar_count[sel] = arg[1]()[sel]
                if len(arg) == 3:  # bar.red
                    bar_pred[sel] = arg[2][1]()[sel]
                p = _park(blocked, sel, group, pc, p)
                break
            if kind == EXIT or (kind == RET and _depth(ctx, sel) == 0):
                p = _park(done, sel, group, pc, p)
                break
            if kind == CALL:
                _call(ctx, program, st, arg, sel, p, ret_pc, call_site)
                if taken is not None:
                    pc[sel] = arg[0]
                    pc[group & ~taken] = p + 1
                    p = -1
                    break
                p = arg[0]
                continue
            if kind == RET:
                _ret(ctx, program, code, sel, pc, ret_pc, call_site)
                if taken is not None:
                    pc[group & ~taken] = p + 1
                p = -1
                break
        ctx.instructions += steps * nwarps
        stats.warp_instructions += steps * nwarps
        stats.steps += steps
        if p >= 0:
            pc[group] = p
    return stats


def _depth(ctx, sel) -> int:
    d = ctx.depth[sel]
    return int(d.max()) if d.size else 0


def _call(ctx, program, st, arg, sel, p, ret_pc, call_site) -> None:
    start, callee, args, rets = arg
    d = ctx.depth[sel]
    if d.min() != d.max():
        raise EmulationError(f"{ctx.file}:{st.line}: call from lanes at different call depths is not supported")
    d0 = int(d[0])
    if d0 + 1 >= MAX_DEPTH:
        raise EmulationError(f"{ctx.file}:{st.line}: call depth exceeds {MAX_DEPTH}")
    fn = program.functions[callee][1]
    if len(args) != len(fn.params):
        raise EmulationError(f"{ctx.file}:{st.line}: call of {callee!r} passes {len(args)} arguments, "
                             f"it takes {len(fn.params)}")
    while len(ctx.frames) <= d0 + 1:
        ctx.frames.append({})
    caller, frame = ctx.frames[d0], ctx.frames[d0 + 1]
    for name, prm in zip(args, fn.params, strict=True):
        src = caller.get(name)
        if src is None:
            raise EmulationError(f"{ctx.file}:{st.line}: call argument {name!r} was never stored (st.param)")
        dst = frame.get(prm.name)
        if dst is None or dst.shape[1] < src.shape[1]:
            dst = frame[prm.name] = np.zeros_like(src)
        dst[sel, :src.shape[1]] = src[sel]
    ret_pc[d0][sel] = p + 1
    call_site[d0][sel] = p
    while len(ctx.sp_at_call) <= d0:
        ctx.sp_at_call.append(np.zeros(ctx.n, np.int64))
    ctx.sp_at_call[d0][sel] = ctx.sp[sel]  # what the callee allocates is freed at its return
    ctx.depth[sel] = d0 + 1


def _ret(ctx, program, code, sel, pc, ret_pc, call_site) -> None:
    d = ctx.depth[sel]
    lanes = np.flatnonzero(sel)
    for depth in np.unique(d):
        dl = lanes[d[lanes] == depth] if len(np.unique(d)) > 1 else lanes
        dd = int(depth) - 1
        for site in np.unique(call_site[dd][dl]):
            sl = dl[call_site[dd][dl] == site]
            _, _, (start, callee, args, rets), st, _ = code[int(site)]
            callee_fn = ctx.frames[dd + 1] if len(ctx.frames) > dd + 1 else None
            fn_returns = [r.name for r in program.functions[callee][1].returns]
            for caller_name, callee_name in zip(rets, fn_returns, strict=False):
                src = callee_fn.get(callee_name) if callee_fn is not None else None
                if src is None:
                    continue
                dst = ctx.frames[dd].get(caller_name)
                if dst is None or dst.shape[1] < src.shape[1]:
                    new = np.zeros_like(src)
                    if dst is not None:
                        new[:, :dst.shape[1]] = dst
                    dst = ctx.frames[dd][caller_name] = new
                dst[sl, :src.shape[1]] = src[sl]
            pc[sl] = ret_pc[dd][sl]
            ctx.sp[sl] = ctx.sp_at_call[dd][sl]
            ctx.depth[sl] = dd


def _park(flag: np.ndarray, lanes: np.ndarray, group: np.ndarray, pc: np.ndarray, p: int) -> int:
    """Stop `lanes` at statement p with `flag` set (blocked, or done) and move the rest of the group past it; returns
    -1, the run loop's "pick the next group"."""
    flag[lanes] = True
    pc[lanes] = p
    pc[group & ~lanes] = p + 1
    return -1


def _release(ctx, code, pc, done, blocked, bar_id, bar_count, bar_pred) -> None:
    """Every live lane is blocked: release the mbarrier waits whose phase has completed, the cluster waits whose
    cluster has every live thread arrived, and the `bar` barriers whose count is reached; none at all is a
    deadlock."""
    b_all = np.flatnonzero(blocked)
    kinds = np.array([code[int(q)][0] for q in pc[b_all]])
    released = False
    for q in np.unique(pc[b_all[kinds == WAIT]]):
        ready_fn, write = code[int(q)][2][:2]
        mask = np.zeros(ctx.n, bool)
        mask[b_all[(kinds == WAIT) & (pc[b_all] == q)]] = True
        ready = ready_fn(mask) & mask
        if ready.any():
            write(ready, True)
            pc[ready] += 1
            blocked[ready] = False
            released = True
    if (kinds == CWAIT).any():
        released |= _release_cluster(ctx, pc, done, blocked, b_all[kinds == CWAIT])
    bars = np.zeros(ctx.n, bool)
    bars[b_all[kinds == BAR]] = True
    problem = _release_bar(ctx, code, pc, done, blocked, bars, bar_id, bar_count, bar_pred)
    if problem is None or released:
        return
    raise EmulationError(_deadlock(ctx, code, pc, b_all, kinds, problem, bar_id))


def _release_cluster(ctx, pc, done, blocked, lanes) -> bool:
    """Release the barrier.cluster.wait lanes of clusters whose every live thread has arrived as often."""
    per = ctx.lanes_per_cta * ctx.cluster_size
    released = False
    for c in np.unique(lanes // per):
        members = np.arange(c * per, (c + 1) * per)
        waiting = lanes[lanes // per == c]
        need = ctx.cluster_passed[waiting] + 1
        live = members[~done[members]]
        ok = ctx.cluster_arrived[live].min() >= need.max() if len(live) else True
        if ok:
            ctx.cluster_passed[waiting] += 1
            pc[waiting] += 1
            blocked[waiting] = False
            released = True
    return released


def _release_bar(ctx, code, pc, done, blocked, bars, bar_id, bar_count, bar_pred) -> str | None:
    """Release `bar` barriers whose count is reached (bars: the lanes waiting at one); returns a description of
    what stays blocked when nothing could be released, else None."""
    lpc = ctx.lanes_per_cta
    released = False
    mixed = None
    for c in range(ctx.n // lpc):
        base = c * lpc
        b = np.flatnonzero(bars[base:base + lpc]) + base
        if not len(b):
            continue
        live = int(np.count_nonzero(~done[base:base + lpc]))
        ids = np.unique(bar_id[b])
        for i in ids:
            lanes = b[bar_id[b] == i]
            want = int(bar_count[lanes].max()) or live
            extra = ctx.bar_arrived.get((c, int(i)), 0)
            if len(lanes) + extra >= want:
                _reduce(ctx, code, pc, lanes, bar_pred)
                pc[lanes] += 1
                blocked[lanes] = False
                released = True
                if extra:
                    ctx.bar_arrived[(c, int(i))] = extra - max(0, want - len(lanes))
        if not released and len(ids) > 1 and mixed is None:
            a = b[bar_id[b] == ids[0]][0]
            z = b[bar_id[b] == ids[1]][0]
            mixed = (f"{ctx.file}:{code[int(pc[a])][3].line}: barrier not reached by all threads: thread "
                     f"{ctx.thread(a)} waits at barrier {ids[0]} while thread {ctx.thread(z)} waits at "
                     f"barrier {ids[1]} (line {code[int(pc[z])][3].line})")
    if released:
        return None
    return mixed or ""


def _deadlock(ctx, code, pc, b_all, kinds, problem: str, bar_id) -> str:
    """The message for blocked lanes that nothing releases."""
    if problem:
        return problem
    waits = b_all[kinds == WAIT]
    why = f"{code[int(pc[waits[0]])][2][2](int(waits[0]))}" if len(waits) else ""
    for kind in (BAR, WAIT, CWAIT):
        if (kinds == kind).any():
            a = int(b_all[kinds == kind][0])
            break
    line = code[int(pc[a])][3].line
    if kind == WAIT:
        return f"{ctx.file}:{line}: mbarrier wait never completes: thread {ctx.thread(a)} {why}, and no thread can run"
    tail = f" (thread {ctx.thread(int(waits[0]))} {why})" if len(waits) else ""
    if kind == CWAIT:
        return (f"{ctx.file}:{line}: barrier.cluster.wait never completes: thread {ctx.thread(a)} waits for threads "
                f"of its cluster that never arrive{tail}")
    return (f"{ctx.file}:{line}: barrier not reached by all threads: thread {ctx.thread(a)} waits at barrier "
            f"{int(bar_id[a])} for threads that never arrive{tail}")


def _reduce(ctx, code, pc, lanes, bar_pred) -> None:
    """The result of a bar.red for the threads it releases (all at the same bar.red, else an error)."""
    at = np.unique(pc[lanes])
    args = [code[int(p)][2] for p in at]
    if not any(len(a) == 3 for a in args):
        return
    if len(at) > 1:
        lines = sorted({code[int(p)][3].line for p in at})
        raise EmulationError(f"{ctx.file}:{lines[0]}: the threads of one barrier wait at different instructions "
                             f"(lines {', '.join(map(str, lines))}); a bar.red needs them all at the same one")
    op, _, write = args[0][2]
    p = bar_pred[lanes]
    value = int(np.count_nonzero(p)) if op == "popc" else bool(p.all() if op == "and" else p.any())
    full = np.zeros(ctx.n, np.uint32 if op == "popc" else bool)
    full[lanes] = value
    mask = np.zeros(ctx.n, bool)
    mask[lanes] = True
    write(full, mask)
