"""Warp-synchronous instructions: shfl.sync (up/down/bfly/idx with clamp and segment mask, member masks), vote.sync
(all/any/uni/ballot), redux.sync (add/min/max .u32/.s32, and/or/xor .b32), match.any/all.sync, elect.sync,
activemask, bar.warp.sync. A source lane outside the executing set or the member mask, or an executing lane outside
its member mask, is an error (undefined on the GPU)."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.operands import Not, Pair

_BITS = (np.uint32(1) << np.arange(32, dtype=np.uint32))


def _full_mask(ctx, m):
    return np.ones(ctx.n, bool) if m is None else m


def _members(rm, m, ctx, fail, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(running lanes, member mask, running lanes' warp bits) of a warp-wide op; fails where the member mask names a
    lane that is not executing."""
    act = _full_mask(ctx, m)
    member = rm().astype(np.uint32)
    actbits = warp_bits(act)
    missing = act & ((member & ~actbits) != 0)
    if missing.any():
        k = int(np.argmax(missing))
        fail(k, f"{what}: member mask {int(member[k]):#010x} names lanes that are not executing "
                f"(executing: {int(actbits[k]):#010x})")
    return act, member, actbits


def warp_bits(active: np.ndarray) -> np.ndarray:
    """Per lane: the bitmask of the lanes of its warp in `active` (bool per lane)."""
    w = (active.reshape(-1, 32) * _BITS).sum(axis=1, dtype=np.uint64).astype(np.uint32)
    return np.repeat(w, 32)


def shfl_source(mode: str, lane: np.ndarray, b: np.ndarray, c) -> tuple[np.ndarray, np.ndarray]:
    """The PTX ISA's source lane j and predicate p of shfl.sync per lane (`b`: int64 lane operands; `c`: the clamp
    and segment mask, per lane or one value): j is the own lane where p is false."""
    bval, cval, seg = b & 31, c & 31, (c >> 8) & 31
    maxl = (lane & seg) | (cval & ~seg)
    if mode == "up":
        j = lane - bval
        ok = j >= maxl
    elif mode == "down":
        j = lane + bval
        ok = j <= maxl
    elif mode == "bfly":
        j = lane ^ bval
        ok = j <= maxl
    else:
        j = (lane & seg) | (bval & ~seg)
        ok = j <= maxl
    return np.where(ok, j, lane), ok


def b_shfl(ctx, st, parts):
    mode = parts[2]
    d = st.operands[0]
    dd, dp = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    ra, rb, rc, rm = (ctx.src_full(x, t) for x, t in zip(st.operands[1:5], ("b32", "u32", "u32", "u32"), strict=True))
    w, wp = ctx.dst(dd, "b32"), (ctx.dst(dp, "pred") if dp is not None else None)
    lane = ctx.laneid.astype(np.int64)
    base = np.arange(ctx.n, dtype=np.int64) - lane
    fail = ctx.failer(st)

    def run(m):
        j, pval = shfl_source(mode, lane, rb().astype(np.int64), rc().astype(np.int64))
        src = base + j
        act = _full_mask(ctx, m)
        member = rm().astype(np.int64)
        in_mask = ((member >> lane) & 1) != 0
        src_in = ((member >> j) & 1) != 0
        bad = act & ~(act[src] & src_in)
        if m is not None or not in_mask.all():
            if bad.any():
                k = int(np.argmax(bad))
                why = "inactive" if not act[src[k]] else "outside the member mask"
                fail(k, f"shfl.sync.{mode} reads lane {int(j[k])}, which is {why} (member mask {int(member[k]):#010x})")
            out = act & ~in_mask
            if out.any():
                k = int(np.argmax(out))
                fail(k, f"shfl.sync executed by lane {int(lane[k])}, which is not in its member mask "
                        f"{int(member[k]):#010x}")
        w(ra()[src], m)
        if wp is not None:
            wp(pval, m)
    return run


def b_vote(ctx, st, parts):
    mode = parts[2]
    d, a, mask = st.operands[:3]
    neg = isinstance(a, Not)
    ra = ctx.src_full(a.reg if neg else a, "pred")
    rm = ctx.src_full(mask, "u32")
    w = ctx.dst(d, "b32" if mode == "ballot" else "pred")
    fail = ctx.failer(st)

    def run(m):
        act, member, actbits = _members(rm, m, ctx, fail, "vote.sync")
        p = ra()
        if neg:
            p = ~p
        ballot = warp_bits(p & act) & member
        if mode == "ballot":
            w(ballot, m)
        elif mode == "any":
            w(ballot != 0, m)
        elif mode == "all":
            w(ballot == (member & actbits), m)
        else:
            w((ballot == 0) | (ballot == (member & actbits)), m)
    return run


_REDUX = {"add": (np.add, 0, 0), "min": (np.minimum, 0xFFFFFFFF, 0x7FFFFFFF), "max": (np.maximum, 0, -0x80000000),
          "and": (np.bitwise_and, 0xFFFFFFFF, -1), "or": (np.bitwise_or, 0, 0), "xor": (np.bitwise_xor, 0, 0)}


def b_redux(ctx, st, parts):
    op, ptype = parts[2], parts[-1]
    if op not in _REDUX or ptype not in ("u32", "s32", "b32") or (op in ("add", "min", "max")) == (ptype == "b32"):
        ctx.unsupported(st, ".".join(parts))
    d, a, mask = st.operands[:3]
    ra, rm, w = ctx.src_full(a, "b32"), ctx.src_full(mask, "u32"), ctx.dst(d, "b32")
    fn, ident_u, ident_s = _REDUX[op]
    signed = ptype == "s32"
    fail = ctx.failer(st)

    def run(m):
        act, member, actbits = _members(rm, m, ctx, fail, "redux.sync")
        x = ra().reshape(-1, 1, 32)
        x = (x.view(np.int32) if signed else x).astype(np.int64)
        sel = ((member.reshape(-1, 32, 1) & _BITS) != 0)  # [warp, lane, source lane]
        vals = np.where(sel, x, ident_s if signed else ident_u)
        r = fn.reduce(vals, axis=2).reshape(-1)
        w((r & 0xFFFFFFFF).astype(np.uint32), m)
    return run


def b_match(ctx, st, parts):
    """match.any/all.sync .b32/.b64 d[|p], a, membermask: the member lanes with this a; all: mask (p) or 0."""
    mode, ptype = parts[1], parts[-1]
    if mode not in ("any", "all") or ptype not in ("b32", "b64"):
        ctx.unsupported(st, ".".join(parts))
    d = st.operands[0]
    dd, dp = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    ra, rm = ctx.src_full(st.operands[1], ptype), ctx.src_full(st.operands[2], "u32")
    w, wp = ctx.dst(dd, "b32"), (ctx.dst(dp, "pred") if dp is not None else None)
    fail = ctx.failer(st)

    def run(m):
        act, member, actbits = _members(rm, m, ctx, fail, "match.sync")
        x = ra().reshape(-1, 32)
        same = x[:, :, None] == x[:, None, :]  # [warp, lane, source lane]
        inmask = (member.reshape(-1, 32, 1) & _BITS) != 0
        if mode == "any":
            w(((same & inmask) * _BITS).sum(axis=2, dtype=np.uint64).astype(np.uint32).reshape(-1), m)
            return
        ok = ~(inmask & ~same).any(axis=2).reshape(-1)
        w(np.where(ok, member, np.uint32(0)), m)
        if wp is not None:
            wp(ok, m)
    return run


def b_elect(ctx, st, parts):
    """elect.sync d|p, membermask: the member lanes' leader is the lowest one (d: its laneid, p: true in it alone).
    The PTX ISA says only that the choice is deterministic; the corpus's `cu_elect` pins the lowest lane."""
    d = st.operands[0]
    dd, dp = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    rm = ctx.src_full(st.operands[1], "u32")
    w, wp = ctx.dst(dd, "b32"), (ctx.dst(dp, "pred") if dp is not None else None)
    fail = ctx.failer(st)

    def run(m):
        act, member, _ = _members(rm, m, ctx, fail, "elect.sync")
        lane = (np.arange(member.size) & 31).astype(np.uint32)
        outside = act & (((member >> lane) & 1) == 0)
        if outside.any():
            k = int(np.argmax(outside))
            fail(k, f"elect.sync executed by lane {int(lane[k])}, which is not in its member mask "
                    f"{int(member[k]):#010x}")
        low = member & (~member + np.uint32(1))  # the lowest set bit
        leader = np.log2(np.maximum(low, 1)).astype(np.uint32)
        w(leader, m)
        if wp is not None:
            wp(lane == leader, m)
    return run


def b_activemask(ctx, st, parts):
    w = ctx.dst(st.operands[0], "b32")
    return lambda m: w(warp_bits(_full_mask(ctx, m)), m)


def b_bar_warp(ctx, st, parts):
    return lambda m: None


BUILDERS = {"shfl": b_shfl, "vote": b_vote, "redux": b_redux, "match": b_match, "activemask": b_activemask,
            "elect": b_elect}
