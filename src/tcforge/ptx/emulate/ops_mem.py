"""Memory instructions: ld / ldu / st (global, shared, local, param, generic; vectors; ld.const of module .const
variables, which live among the global buffers), ld.global.nc, cp.async (performed at issue; commit/wait groups are
then satisfied), atom / red (in lane order), cvta, isspacep, and the no-op hints (prefetch, fence, membar,
createpolicy)."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.memory import (
    GLOBAL_BASE,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    RANK_SHIFT,
    SHARED_WINDOW,
    STACK_BYTES,
    WINDOW_SIZE,
)
from tcforge.ptx.emulate.ops_float import atom_add_f64, atom_add_float
from tcforge.ptx.emulate.state import TYPE_BYTES, UINT, view_dtype
from tcforge.ptx.operands import Addr, Imm, Reg, Sym, Vec

_SPACES = ("global", "shared", "local", "param", "const")
_WINDOWS = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "param": PARAM_WINDOW, "global": 0, "const": 0}


def space_of(parts: list[str]) -> str:
    """The state space named in an opcode ('generic' when none)."""
    for p in parts[1:]:
        s = p.split("::", 1)[0]
        if s in _SPACES:
            return s
    return "generic"


def _vec(parts: list[str]) -> int:
    for p in parts:
        if p in ("v2", "v4", "v8"):
            return int(p[1:])
    return 1


def address(ctx, st, op: Addr, space: str):
    """A function `lanes -> int64 addresses` for a memory operand (space addresses; generic for 'generic')."""
    off = op.offset
    base = op.base
    if base is None:
        return lambda lanes: np.full(len(lanes), off, np.int64)
    if isinstance(base, Reg):
        r = ctx.src(base, "u64")

        def from_reg(lanes):
            v = r()
            a = v[lanes].astype(np.int64) if np.ndim(v) else np.full(len(lanes), int(v), np.int64)
            return a + off if off else a
        return from_reg
    name = base.name
    if name in ctx.consts:
        a = ctx.consts[name] + base.offset + off
        return lambda lanes: np.full(len(lanes), a, np.int64)
    ctx.fail_static(st, f"unknown symbol {name!r} in address")


def _param_access(ctx, st, op: Addr, width: int, count: int, store: bool):
    """ld/st.param on a named parameter: the kernel's block (read-only) or a call frame's per-thread bytes."""
    base = op.base
    if not isinstance(base, Sym) or base.name in ctx.kernel_params:
        addr = address(ctx, st, op, "param")
        if store:
            ctx.fail_static(st, "st.param to the kernel's parameter block")

        def kload(lanes):
            flat, offs = ctx.mem.locate("param", addr(lanes[:1]), lanes[:1], width * count, ctx.failer(st), False)
            vals = ctx.mem.read(flat, offs, width, count)
            return np.broadcast_to(vals, (len(lanes), count))
        return kload
    name, off = base.name, base.offset + op.offset
    size = off + width * count

    if store:
        def fstore(lanes, vals):
            buf = ctx.frame_param(name, size, lanes)
            raw = np.ascontiguousarray(vals.astype(UINT[width])).view(np.uint8).reshape(len(lanes), -1)
            buf[lanes, off:off + width * count] = raw
        return fstore

    def fload(lanes):
        buf = ctx.frame_param(name, size, lanes)
        raw = np.ascontiguousarray(buf[lanes, off:off + width * count])
        return raw.view(UINT[width]).reshape(len(lanes), count)
    return fload


def _access(ctx, st, space, addr_fn, width, count, store, align: int = 0):
    """load(lanes) -> (k, count) or store(lanes, values) through address resolution of any space (aligned to the
    access's size, or to `align`)."""
    fail = ctx.failer(st)
    mem = ctx.mem
    size = width * count

    def resolve(lanes):
        a = addr_fn(lanes)
        if space != "generic":
            return [(space, np.arange(len(lanes)), a)]
        return [(sp, idx, sa) for sp, (idx, sa) in mem.split_generic(a).items()] or \
            [("global", np.arange(len(lanes)), a)]

    if mem.record is not None:  # decided once per statement: no cost when nobody records
        plain, record = resolve, mem.record

        def resolve(lanes):
            parts = plain(lanes)
            for sp, idx, a in parts:
                record(st.line, sp, a, ctx.thread_ids(lanes[idx]), size, store)
            return parts

    if store:
        def do_store(lanes, vals):
            for sp, idx, a in resolve(lanes):
                flat, offs = mem.locate(sp, a, lanes[idx], size, fail, True, align)
                mem.write(flat, offs, width, vals[idx])
        return do_store

    def do_load(lanes):
        parts = resolve(lanes)
        if len(parts) == 1:
            sp, idx, a = parts[0]
            flat, offs = mem.locate(sp, a, lanes, size, fail, False, align)
            return mem.read(flat, offs, width, count)
        out = np.zeros((len(lanes), count), UINT[width])
        for sp, idx, a in parts:
            flat, offs = mem.locate(sp, a, lanes[idx], size, fail, False, align)
            out[idx] = mem.read(flat, offs, width, count)
        return out
    return do_load


def b_ld(ctx, st, parts):
    ptype = parts[-1]
    space = space_of(parts)
    count = _vec(parts)
    width = TYPE_BYTES[ptype]
    d, a = st.operands[:2]
    if space == "const":  # module .const variables are read-only buffers among the global ones
        space = "global"
    if space == "param":
        load = _param_access(ctx, st, a, width, count, False)
    else:
        load = _access(ctx, st, space, address(ctx, st, a, space), width, count, False)
    dests = list(d.items) if isinstance(d, Vec) else [d]
    ws = [ctx.dst(x, ptype) for x in dests]
    n = ctx.n
    dt = UINT[width]

    def run(m):
        lanes = ctx.lanes(m)
        vals = load(lanes)
        if m is None:
            for i, w in enumerate(ws):
                w(vals[:, i], None)
            return
        for i, w in enumerate(ws):
            full = np.zeros(n, dt)
            full[lanes] = vals[:, i]
            w(full, m)
    return run


def b_st(ctx, st, parts):
    ptype = parts[-1]
    space = space_of(parts)
    count = _vec(parts)
    width = TYPE_BYTES[ptype]
    a, s = st.operands[:2]
    if space == "param":
        store = _param_access(ctx, st, a, width, count, True)
    else:
        if space == "const":
            ctx.fail_static(st, "st to the .const space")
        store = _access(ctx, st, space, address(ctx, st, a, space), width, count, True)
    srcs = list(s.items) if isinstance(s, Vec) else [s]
    rs = [ctx.src_full(x, ptype) for x in srcs]

    def run(m):
        lanes = ctx.lanes(m)
        vals = np.stack([r()[lanes] for r in rs], axis=1)
        store(lanes, vals)
    return run


def b_cp_async(ctx, st, parts):
    if parts[1] != "async" or "bulk" in parts or "mbarrier" in parts:  # those: ops_async.b_cp
        ctx.out_of_scope(st)
    if parts[2] in ("commit_group", "wait_group", "wait_all"):
        return lambda m: None
    ops = st.operands
    dst, src, size = ops[0], ops[1], ops[2]
    nbytes = int(size.value)
    src_size = None
    ignore = None
    for extra in ops[3:]:
        if isinstance(extra, Imm):
            src_size = ctx.src(extra, "u32")
        elif isinstance(extra, Reg) and ctx.regs.type_of(extra.name) == "pred":
            ignore = ctx.src(extra, "pred")
        elif isinstance(extra, Reg):
            if "L2::cache_hint" in parts:
                continue
            src_size = ctx.src_full(extra, "u32")
    load = _access(ctx, st, "global", address(ctx, st, src, "global"), 1, nbytes, False)
    store = _access(ctx, st, "shared", address(ctx, st, dst, "shared"), 1, nbytes, True)

    def run(m):
        lanes = ctx.lanes(m)
        keep = np.full(len(lanes), nbytes, np.int64)
        if src_size is not None:
            v = src_size()
            keep = np.minimum(keep, (v[lanes] if np.ndim(v) else np.full(len(lanes), v)).astype(np.int64))
        if ignore is not None:
            keep = np.where(ignore()[lanes], 0, keep)
        vals = np.zeros((len(lanes), nbytes), np.uint8)
        rd = keep > 0
        if rd.any():
            vals[rd] = load(lanes[rd])
        vals[np.arange(nbytes)[None, :] >= keep[:, None]] = 0
        store(lanes, vals)
    return run


_ATOM = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"}


def reduce_values(op: str, ptype: str, global_space: bool, old: np.ndarray, x: np.ndarray,
                  y: np.ndarray | None = None) -> np.ndarray:
    """The words an atom / red (or a bulk reduction) of `op` leaves from `old` and operand `x` (`y`: cas's new
    value), as raw bits of `ptype`; f32 / f64 add follow the state space's rules."""
    vd, dt = view_dtype(ptype), UINT[TYPE_BYTES[ptype]]
    if op == "add" and ptype in ("f32", "f16", "f16x2", "bf16", "bf16x2"):  # f32: subnormals flushed in global
        return atom_add_float(ptype, global_space, old, x)
    if op == "add" and ptype == "f64":
        return atom_add_f64(old, x, global_space)
    o, v = old.view(vd), x.view(vd)
    if op == "add":
        r = o + v
    elif op == "min":
        r = np.minimum(o, v)
    elif op == "max":
        r = np.maximum(o, v)
    elif op == "and":
        r = o & v
    elif op == "or":
        r = o | v
    elif op == "xor":
        r = o ^ v
    elif op == "exch":
        r = v
    elif op == "inc":
        r = np.where(o >= v, 0, o + 1)
    elif op == "dec":
        r = np.where((o == 0) | (o > v), v, o - 1)
    else:
        r = np.where(o == v, y.view(vd), o)
    return np.asarray(r).astype(vd).view(dt)


def b_atom(ctx, st, parts):
    ptype = parts[-1]
    op = next((p for p in parts if p in _ATOM), None)
    half = ptype in ("f16", "f16x2", "bf16", "bf16x2")
    if op is None or (half and (op != "add" or "noftz" not in parts)) or _vec(parts) > 1:
        ctx.unsupported(st, f"{'.'.join(parts)}")
    space = space_of(parts)
    red = parts[0] == "red"
    ops = st.operands
    d = None if red else ops[0]
    a = ops[0] if red else ops[1]
    b = ops[1] if red else ops[2]
    c = ops[3] if (op == "cas" and not red) else None
    width = TYPE_BYTES[ptype]
    addr_fn = address(ctx, st, a, space)
    load = _access(ctx, st, space, addr_fn, width, 1, False)
    store = _access(ctx, st, space, addr_fn, width, 1, True)
    rb, rc = ctx.src_full(b, ptype), (ctx.src_full(c, ptype) if c is not None else None)
    w = ctx.dst(d, ptype) if d is not None else None
    dt = UINT[width]
    global_space = space != "shared"  # generic addresses as global memory (assumed)
    mem, fail = ctx.mem, ctx.failer(st)
    # global and shared locations are known up front: lanes go in rounds, the r-th lane at each location in round
    # r, which keeps lane order wherever lanes meet; other spaces (and recorded runs) one lane at a time
    rounds = space in ("global", "shared") and mem.record is None

    def run(m):
        lanes = ctx.lanes(m)
        xb = rb()
        yc = rc() if rc is not None else None
        olds = np.zeros(len(lanes), dt)
        if rounds:  # every lane's location resolved (and checked) once, then read and written per round
            flat, offs = mem.locate(space, addr_fn(lanes), lanes, width, fail, True)
            order = np.argsort(offs, kind="stable")
            first = np.r_[True, offs[order][1:] != offs[order][:-1]]
            rank = np.empty(len(lanes), np.int64)
            rank[order] = np.arange(len(lanes)) - np.maximum.accumulate(np.where(first, np.arange(len(lanes)), 0))
            for r in range(int(rank.max(initial=-1)) + 1):
                sel = np.flatnonzero(rank == r)
                old = mem.read(flat, offs[sel], width, 1)[:, 0]
                new = reduce_values(op, ptype, global_space, old, xb[lanes[sel]],
                                    yc[lanes[sel]] if yc is not None else None)
                mem.write(flat, offs[sel], width, new[:, None])
                olds[sel] = old
        else:
            for i, ln in enumerate(lanes):  # one lane at a time, in lane order
                one = lanes[i:i + 1]
                old = load(one)[:, 0]
                new = reduce_values(op, ptype, global_space, old, xb[ln:ln + 1],
                                    yc[ln:ln + 1] if yc is not None else None)
                store(one, new[:, None])
                olds[i] = old[0]
        if w is not None:
            full = np.zeros(ctx.n, dt)
            full[lanes] = olds
            w(full, m)
    return run


def b_cvta(ctx, st, parts):
    ptype = parts[-1]
    to = "to" in parts
    space = next((p for p in parts[1:] if p in _WINDOWS), None)
    if space is None:
        ctx.unsupported(st, f"{'.'.join(parts)}")
    d, a = st.operands[:2]
    ra, w = ctx.src(a, ptype), ctx.dst(d, ptype)
    base = UINT[TYPE_BYTES[ptype]](_WINDOWS[space] & ((1 << (8 * TYPE_BYTES[ptype])) - 1))
    if to:
        return lambda m: w(ra() - base, m)
    return lambda m: w(ra() + base, m)


def b_alloca(ctx, st, parts):
    """alloca.type ptr, size{, align}: `size` bytes of the thread's stack (the top STACK_BYTES of its local memory,
    there when the program allocates), the stack pointer moved down and aligned to max(align, 8); ptr is the
    local-state-space address. Freed by stackrestore and by the return of the function that allocated."""
    ptype = parts[-1]
    d, size = st.operands[:2]
    align = max(int(st.operands[2].value), 8) if len(st.operands) > 2 else 8
    rs, w = ctx.src_full(size, ptype), ctx.dst(d, ptype)
    fail = ctx.failer(st)

    def run(m):
        want = ctx.sp - np.asarray(rs()).astype(np.int64)
        new = want - want % align
        sel = np.ones(ctx.n, bool) if m is None else m
        low = sel & (new < ctx.stack_floor)
        if low.any():
            j = int(np.argmax(low))
            fail(j, f"alloca of {int(ctx.sp[j] - want[j])} bytes overflows the thread's stack ({STACK_BYTES} bytes, "
                    f"{int(ctx.sp[j] - ctx.stack_floor)} left)")
        ctx.sp = np.where(sel, new, ctx.sp)
        w(ctx.sp.astype(UINT[TYPE_BYTES[ptype]]), m)
    return run


def b_stacksave(ctx, st, parts):
    """stacksave.type d: the thread's stack pointer (a local-state-space address)."""
    w = ctx.dst(st.operands[0], parts[-1])
    ut = UINT[TYPE_BYTES[parts[-1]]]
    return lambda m: w(ctx.sp.astype(ut), m)


def b_stackrestore(ctx, st, parts):
    """stackrestore.type a: the stack pointer set to a (what stacksave gave), freeing what was allocated since."""
    ra = ctx.src_full(st.operands[0], parts[-1])

    def run(m):
        a = np.asarray(ra()).astype(np.int64)
        ctx.sp = a.copy() if m is None else np.where(m, a, ctx.sp)
    return run


def b_isspacep(ctx, st, parts):
    """isspacep.space p, a: whether generic address a lies in global memory (the buffers, and the parameter block as
    the GPU answers), the parameter block, the thread's local memory, the CTA's shared memory (.shared /
    .shared::cta: its own window, also reached through its cluster rank) or any shared memory of the cluster
    (.shared::cluster)."""
    space = ".".join(parts[1:])
    if space not in ("global", "local", "param", "param::entry", "shared", "shared::cta", "shared::cluster"):
        ctx.unsupported(st, f"{st.opcode} (isspacep of global, local, param, shared, shared::cta, shared::cluster)")
    d, a = st.operands[:2]
    ra, w = ctx.src_full(a, "u64"), ctx.dst(d, "pred")
    mem = ctx.mem

    def run(m):
        x = ra().astype(np.int64)
        if space == "global":  # a kernel parameter's generic address is global too (H100: cu_fns_spaces)
            w((x >= GLOBAL_BASE) | ((x >= PARAM_WINDOW) & (x < PARAM_WINDOW + WINDOW_SIZE)), m)
            return
        base = {"local": LOCAL_WINDOW, "param": PARAM_WINDOW, "param::entry": PARAM_WINDOW}.get(space, SHARED_WINDOW)
        rel = x - base
        inside = (rel >= 0) & (rel < WINDOW_SIZE)
        if base == SHARED_WINDOW:
            rank, off = rel >> RANK_SHIFT, rel & ((1 << RANK_SHIFT) - 1)
            inside &= off < mem.shared_size
            if space == "shared::cluster":
                inside &= rank <= ctx.cluster_size
            else:
                inside &= (rank == 0) | (rank == ctx.specials["%cluster_ctarank"].astype(np.int64) + 1)
        w(inside, m)
    return run


def b_nop(ctx, st, parts):
    if parts[0] == "createpolicy":
        w = ctx.dst(st.operands[0], "b64")
        return lambda m: w(np.uint64(0), m)
    return lambda m: None


# st and cp are dispatched by ops_async (st.async, the bulk copies, cp.async.mbarrier), which hands the rest here
BUILDERS = {"ld": b_ld, "ldu": b_ld, "atom": b_atom, "red": b_atom, "cvta": b_cvta,
            "prefetch": b_nop, "prefetchu": b_nop, "fence": b_nop, "membar": b_nop, "createpolicy": b_nop,
            "discard": b_nop, "applypriority": b_nop, "isspacep": b_isspacep, "alloca": b_alloca,
            "stacksave": b_stacksave, "stackrestore": b_stackrestore}
