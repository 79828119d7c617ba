"""The asynchronous proxy and the cluster: mbarrier objects (init, arrive with counts and transaction bytes,
expect_tx / complete_tx, test_wait / try_wait by state or parity, pending_count, inval), the Hopper TMA
(`cp.async.bulk.tensor` tile loads into shared memory, multicast over the cluster, and stores to global memory) and
plain `cp.async.bulk` copies, `st.async`, bulk groups, distributed shared memory (`mapa`, `getctarank`), the
cluster barrier's arrive half, `setmaxnreg` and `griddepcontrol` (a lone launch has no grid to wait for).

An asynchronous copy is performed when it is issued and completes its transaction bytes at once; a `try_wait`
whose phase has not completed blocks its threads until other threads complete it (control). The mbarrier object
lives in its 8 bytes of shared memory: pending arrivals (bits 0-20), expected arrivals (21-41), transaction bytes
(42-62, signed) and the phase parity (63) — the GPU's encoding is not public and no kernel reads it.

Tensor maps are the emulator's own 128-byte encoding (`TensorMap.encode`), given as the kernel's tensor-map
parameter in place of the driver's opaque CUtensorMap."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.machine import EmulationError
from tcforge.ptx.emulate.memory import RANK_SHIFT, SHARED_WINDOW, WINDOW_SIZE
from tcforge.ptx.emulate.ops_mem import _access, address, b_cp_async, reduce_values, space_of
from tcforge.ptx.emulate.ops_mem import b_st as b_st_plain
from tcforge.ptx.emulate.state import TYPE_BYTES, UINT
from tcforge.ptx.emulate.tensor_map import IM2COL_BITS, NAN_FILL, TensorMap, box_elements, swizzled
from tcforge.ptx.operands import Addr, Imm, Sink, Vec

_M21 = (1 << 21) - 1
_RANK_MASK = (1 << RANK_SHIFT) - 1


# ---- the mbarrier word --------------------------------------------------------------------------------------------
def _fields(w: int) -> tuple[int, int, int, int]:
    """(pending arrivals, expected arrivals, transaction bytes, phase parity) of an mbarrier word."""
    tx = (w >> 42) & _M21
    return w & _M21, (w >> 21) & _M21, tx - (1 << 21) if tx >> 20 else tx, w >> 63


def _word(pending: int, expected: int, tx: int, phase: int) -> int:
    return pending | expected << 21 | (tx & _M21) << 42 | phase << 63


def _settle(pending: int, expected: int, tx: int, phase: int) -> int:
    """The word after an update: the phase completes when no arrival and no transaction byte is pending."""
    if pending == 0 and tx == 0:
        return _word(expected, expected, 0, phase ^ 1)
    return _word(pending, expected, tx, phase)


def describe_word(w: int) -> str:
    pending, expected, tx, phase = _fields(w)
    return f"phase parity {phase}, {pending} of {expected} arrivals and {tx} transaction bytes pending"


class _Barriers:
    """Reads and updates of the mbarrier words named by an instruction's address operand."""

    def __init__(self, ctx, st, op: Addr, space: str) -> None:
        """`space`: the instruction's state space (space_of); shared, else the address is generic."""
        self.ctx, self.fail = ctx, ctx.failer(st)
        self.space = "shared" if space == "shared" else "generic"
        self.addr = address(ctx, st, op, self.space)

    def locate(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(uint64 view of the batch's shared memory, word index) of each lane's barrier."""
        a = self.addr(lanes)
        if self.space == "generic":
            in_shared = (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + WINDOW_SIZE)
            if not in_shared.all():
                j = int(np.argmin(in_shared))
                self.fail(int(lanes[j]), f"mbarrier at generic address {int(a[j]):#x}, which is not shared memory")
            a = a - SHARED_WINDOW
        flat, offs = self.ctx.mem.locate("shared", a, lanes, 8, self.fail, True)
        return flat.view(np.uint64), offs // 8

    def update(self, lanes: np.ndarray, step) -> np.ndarray:
        """Apply `step(word, lanes at this barrier) -> word` barrier by barrier (lanes in lane order); returns each
        lane's word from before its barrier's update."""
        words, idx = self.locate(lanes)
        before = words[idx].copy()
        for i in np.unique(idx):
            at = lanes[idx == i]
            words[i] = np.uint64(step(int(words[i]), at))
        return before


def complete_tx(words: np.ndarray, i: int, nbytes: int) -> None:
    """`nbytes` transaction bytes arrive at the barrier word `words[i]`."""
    pending, expected, tx, phase = _fields(int(words[i]))
    words[i] = np.uint64(_settle(pending, expected, tx - nbytes, phase))


def arrive_one(words: np.ndarray, i: int, fail) -> None:
    """One arrival at the barrier word `words[i]`; `fail(message)` where it has none pending."""
    pending, expected, tx, phase = _fields(int(words[i]))
    if pending == 0:
        fail(f"an arrive on an mbarrier with no arrivals pending ({describe_word(int(words[i]))})")
    words[i] = np.uint64(_settle(pending - 1, expected, tx, phase))


def _count(ctx, op, default: int):
    """Per-lane reader of an optional count operand."""
    if op is None:
        return lambda lanes: np.full(len(lanes), default, np.int64)
    r = ctx.src_full(op, "u32")
    return lambda lanes: r()[lanes].astype(np.int64)


def b_mbarrier(ctx, st, parts):
    kind = parts[1]
    ops = list(st.operands)
    if kind == "pending_count":
        rs, w = ctx.src_full(ops[1], "b64"), ctx.dst(ops[0], "u32")
        return lambda m: w((rs() & np.uint64(_M21)).astype(np.uint32), m)
    addr_op = next((i for i, o in enumerate(ops) if isinstance(o, Addr)), None)
    if addr_op is None:
        ctx.fail_static(st, "expected a barrier address operand [addr]")
    bars = _Barriers(ctx, st, ops[addr_op], space_of(parts))
    dest = ctx.dst(ops[0], "b64") if addr_op == 1 and not isinstance(ops[0], Sink) else None
    extra = ops[addr_op + 1] if len(ops) > addr_op + 1 else None
    fail = ctx.failer(st)
    if kind == "init":
        count = _count(ctx, extra, 0)

        def init(m):
            lanes = ctx.lanes(m)
            c = count(lanes)
            if ((c < 1) | (c > _M21)).any():
                j = int(np.argmax((c < 1) | (c > _M21)))
                fail(int(lanes[j]), f"mbarrier.init count {int(c[j])} outside 1..{_M21}")
            per = dict(zip(lanes.tolist(), c.tolist(), strict=True))
            bars.update(lanes, lambda w, at: _word(per[int(at[-1])], per[int(at[-1])], 0, 0))
        return init
    if kind == "inval":
        def inval(m):
            bars.update(ctx.lanes(m), lambda w, at: 0)
        return inval
    if kind in ("expect_tx", "complete_tx"):
        txr = _count(ctx, extra, 0)
        sign = 1 if kind == "expect_tx" else -1

        def tx_op(m):
            lanes = ctx.lanes(m)
            per = dict(zip(lanes.tolist(), txr(lanes).tolist(), strict=True))

            def step(w, at):
                pending, expected, tx, phase = _fields(w)
                return _settle(pending, expected, tx + sign * sum(per[int(x)] for x in at), phase)
            bars.update(lanes, step)
        return tx_op
    if kind not in ("arrive", "arrive_drop"):
        ctx.unsupported(st, f"instruction {st.opcode!r}")
    expect = "expect_tx" in parts
    if expect:  # arrive.expect_tx: [addr], txCount (one arrival)
        txr, cnt = _count(ctx, extra, 0), _count(ctx, None, 1)
    else:
        txr, cnt = _count(ctx, None, 0), _count(ctx, extra, 1)
    drop, no_complete = kind == "arrive_drop", "noComplete" in parts

    def arrive(m):
        lanes = ctx.lanes(m)
        per = dict(zip(lanes.tolist(), zip(cnt(lanes).tolist(), txr(lanes).tolist(), strict=True), strict=True))

        def step(w, at):
            pending, expected, tx, phase = _fields(w)
            c = sum(per[int(x)][0] for x in at)
            tx += sum(per[int(x)][1] for x in at)
            if c > pending:
                fail(int(at[0]), f"{len(at)} thread(s) arrive {c} times on an mbarrier with {pending} arrivals "
                                 f"pending ({describe_word(w)})")
            if drop:
                expected -= c
            new = _settle(pending - c, expected, tx, phase)
            if no_complete and _fields(new)[3] != phase:
                fail(int(at[0]), "mbarrier.arrive.noComplete completes the phase")
            return new
        before = bars.update(lanes, step)
        if dest is not None:
            full = np.zeros(ctx.n, np.uint64)
            full[lanes] = before
            dest(full, m)
    return arrive


def b_test_wait(ctx, st, parts):
    """test_wait / try_wait{.parity} p, [addr], state|parity: whether the phase named has completed (a parity P
    has completed while the barrier's phase parity is not P; a state from arrive, when the phase changed since).
    Returns (ready(mask) -> bool per lane, write(mask, values), describe(lane), spins): control runs it —
    try_wait blocks until ready, test_wait answers at once (`spins`) but parks a lane that keeps spinning on it."""
    ops = st.operands
    bars = _Barriers(ctx, st, ops[1], space_of(parts))
    parity = "parity" in parts
    rs = ctx.src_full(ops[2], "u32" if parity else "b64")
    w = ctx.dst(ops[0], "pred")

    def ready(m) -> np.ndarray:
        lanes = ctx.lanes(m)
        words, idx = bars.locate(lanes)
        phase = (words[idx] >> np.uint64(63)).astype(np.int64)
        want = rs()[lanes].astype(np.int64) & 1 if parity else (rs()[lanes] >> np.uint64(63)).astype(np.int64)
        out = np.zeros(ctx.n, bool)
        out[lanes] = phase != want
        return out

    def describe(lane: int) -> str:
        words, idx = bars.locate(np.array([lane]))
        what = (f"the phase of parity {int(rs()[lane]) & 1}" if parity
                else f"the phase of state {int(rs()[lane]):#x}")
        return f"waits on the mbarrier at shared {int(bars.addr(np.array([lane]))[0]):#x} for {what} " \
               f"({describe_word(int(words[idx[0]]))})"

    def write(m, values) -> None:
        full = np.zeros(ctx.n, bool)
        full[:] = values
        w(full, m)

    return ready, write, describe, parts[1] == "test_wait"


# ---- TMA ----------------------------------------------------------------------------------------------------------

class _Tma:
    """Tensor-map reads of an instruction: the map's bytes at each lane's address, decoded once per map."""

    def __init__(self, ctx, st, op) -> None:
        self.ctx, self.st, self.fail = ctx, st, ctx.failer(st)
        self.addr = address(ctx, st, op, "generic")
        self.load = _access(ctx, st, "generic", self.addr, 1, 128, False, align=64)  # CUtensorMap's alignment
        self.cache: dict[bytes, tuple[TensorMap, int]] = {}

    def map(self, lane: int) -> tuple[TensorMap, int]:
        one = np.array([lane])
        raw = bytes(self.load(one)[0])
        hit = self.cache.get(raw)
        if hit is None:
            try:
                hit = self.cache[raw] = TensorMap.decode(raw, f"<map at {int(self.addr(one)[0]):#x}>")
            except EmulationError as exc:  # a ValueError too: first
                self.fail(lane, str(exc))
            except ValueError:
                self.fail(lane, "the tensor-map operand does not hold a tensor map made by tcforge.ptx.emulate."
                                "TensorMap (pass one as the kernel's tensor-map parameter)")
        return hit


def _coords(ctx, vec: Vec, ptype: str = "s32"):
    """`coords(lane)`: a vector operand's values at one lane (tensor coordinates, or im2col offsets as u16)."""
    rs = [ctx.src_full(x, ptype) for x in vec.items]
    if ptype == "u16":
        return lambda lane: np.array([int(r()[lane]) & 0xFFFF for r in rs], np.int64)
    return lambda lane: np.array([int(r()[lane].astype(np.uint32).view(np.int32)) for r in rs], np.int64)


def _shared_base(ctx, fail, lane: int, addr: int, nbytes: int, align: int, what: str) -> tuple[int, int]:
    """(batch CTA index, offset) of `nbytes` of shared memory at shared::cluster address `addr`, checked."""
    mem = ctx.mem
    cta, off = mem.shared_cta(np.array([addr], np.int64), np.array([lane]), fail)
    cta, off = int(cta[0]), int(off[0])
    if off % align or off < 0 or off + nbytes > mem.shared_size:
        fail(lane, f"{what}: {nbytes} bytes at shared {addr:#x} (offset {off:#x}) must lie in the CTA's "
                   f"{mem.shared_size} bytes, {align}-byte aligned")
    return cta, off


def _word_index(ctx, fail, lane: int, addr: int) -> tuple[np.ndarray, int]:
    cta, off = _shared_base(ctx, fail, lane, addr, 8, 8, "mbarrier")
    return ctx.mem.shared.view(np.uint64), (cta * ctx.mem.shared_size + off) // 8


def _global_bytes(ctx, fail, lane: int, addrs: np.ndarray, size: int, store: bool) -> np.ndarray:
    """Byte indices into global memory of `size`-byte elements at `addrs` (bounds-checked)."""
    lanes = np.full(len(addrs), lane)
    flat, offs = ctx.mem.locate("global", addrs, lanes, size, fail, store)
    return offs[:, None] + np.arange(size)


def _shared_box(ctx, fail, lane: int, addr: int, tm: TensorMap) -> tuple[np.ndarray, np.ndarray]:
    """(batch shared-memory byte indices (elements, bytes), offsets in the CTA's shared memory) of a tensor map's
    box at shared::cluster `addr`, in the box's order with the map's swizzle."""
    cta, off = _shared_base(ctx, fail, lane, addr, tm.box_bytes, 128, "cp.async.bulk.tensor")
    es = tm.elem_bytes
    at = swizzled(off + np.arange(tm.box_bytes // es, dtype=np.int64) * es, tm.swizzle)
    return (cta * ctx.mem.shared_size + at)[:, None] + np.arange(es), at


def _note(ctx, st, lane: int, space: str, addrs: np.ndarray, size: int, store: bool) -> None:
    """Report one thread's asynchronous-copy accesses to `record` (shared: offsets in the target CTA)."""
    if ctx.mem.record is not None and len(addrs):
        ids = ctx.thread_ids(np.full(len(addrs), lane))
        ctx.mem.record(st.line, space, np.asarray(addrs, np.int64), ids, size, store)


def _targets(ctx, mask_r, lane: int, addr: int) -> list[int]:
    """The shared::cluster addresses a copy to `addr` lands at: itself, or the same offset in each CTA of a
    `.multicast::cluster` mask."""
    if mask_r is None:
        return [addr]
    mask = int(mask_r()[lane])
    return [(r + 1) << RANK_SHIFT | (addr & _RANK_MASK) for r in range(ctx.cluster_size) if mask >> r & 1]


def b_cp_bulk(ctx, st, parts):
    """cp.async.bulk{.tensor.Nd}: shared::cluster <- global (mbarrier complete_tx, optionally multicast), global <-
    shared::cta (bulk_group), shared::cluster <- shared::cta; prefetches and the bulk groups' commit / wait."""
    if "prefetch" in parts or parts[3] in ("commit_group", "wait_group"):
        return lambda m: None
    if parts[3] != "tensor":
        return _bulk_copy(ctx, st, parts)
    ops = list(st.operands)
    if parts[5].split("::")[0] == "shared":
        return _tma_load(ctx, st, ops, parts)
    return _tma_store(ctx, st, ops, parts)


def _boxes(ctx, st, tmap, parts, offsets: Vec | None = None):
    """`boxes(m)`: for each executing lane, (lane, map, the box's global element addresses, in-bounds mask) of the
    operand `[map, {coords}]`; `.im2col` copies take their pixels' `{offsets}`, `.im2col_no_offs` ones none."""
    tma, coords = _Tma(ctx, st, Addr(tmap.base, tmap.offset)), _coords(ctx, tmap.index)
    im2col = "im2col" in parts or "im2col_no_offs" in parts
    offs = _coords(ctx, offsets, "u16") if offsets is not None else None
    fail = ctx.failer(st)

    def boxes(m):
        for lane in ctx.lanes(m).tolist():
            tm, base = tma.map(lane)
            rank = len(tm.dims)
            if tm.im2col != im2col:
                kind = {True: "an im2col", False: "a tiled"}
                fail(lane, f"{kind[im2col]} copy through {kind[tm.im2col]} tensor map")
            if len(tmap.index.items) != rank:
                fail(lane, f"{len(tmap.index.items)} coordinates for a rank-{rank} tensor map")
            at = coords(lane)
            o = offs(lane) if offs is not None else None
            if o is not None and (len(o) != rank - 2 or (o >> IM2COL_BITS[rank]).any()):
                fail(lane, f"im2col offsets {tuple(o.tolist())}: a rank-{rank} map takes {rank - 2}, each "
                           f"0..{(1 << IM2COL_BITS[rank]) - 1}")
            try:
                elements = box_elements(tm, base, at, o)
            except ValueError as exc:
                fail(lane, str(exc))
            yield (lane, tm, *elements)
    return boxes


def _tma_load(ctx, st, ops, parts):
    """[dst], [map, {coords}], [mbar]{, {im2colOffsets}}{, ctaMask}: the box into each destination CTA, its bytes on
    that CTA's barrier at the same offset."""
    dst, tmap, bar = ops[0], ops[1], ops[2]
    rd, rb = address(ctx, st, dst, "shared"), address(ctx, st, bar, "shared")
    im2col = "im2col" in parts
    boxes = _boxes(ctx, st, tmap, parts, ops[3] if im2col else None)
    mask_r = ctx.src_full(ops[3 + im2col], "u16") if "multicast::cluster" in parts else None
    fail = ctx.failer(st)

    def run(m):
        mem = ctx.mem
        for lane, tm, gaddr, ok in boxes(m):
            vals = np.zeros((len(gaddr), tm.elem_bytes), np.uint8)
            if tm.fill == "nan":
                vals[:] = np.frombuffer(NAN_FILL[tm.dtype].to_bytes(tm.elem_bytes, "little"), np.uint8)
            if ok.any():
                vals[ok] = mem.gmem[_global_bytes(ctx, fail, lane, gaddr[ok], tm.elem_bytes, False)]
                _note(ctx, st, lane, "global", gaddr[ok], tm.elem_bytes, False)
            one = np.array([lane])
            for d, b in zip(_targets(ctx, mask_r, lane, int(rd(one)[0])), _targets(ctx, mask_r, lane,
                                                                                   int(rb(one)[0])), strict=True):
                at, offs = _shared_box(ctx, fail, lane, d, tm)
                mem.shared[at] = vals
                _note(ctx, st, lane, "shared", offs, tm.elem_bytes, True)
                complete_tx(*_word_index(ctx, fail, lane, b), tm.box_bytes)
    return run


def _tma_store(ctx, st, ops, parts):
    """[map, {coords}], [src]: the box's in-bounds elements from the CTA's shared memory to global memory."""
    tmap, src = ops[0], ops[1]
    rs = address(ctx, st, src, "shared")
    boxes = _boxes(ctx, st, tmap, parts)
    fail = ctx.failer(st)

    def run(m):
        mem = ctx.mem
        for lane, tm, gaddr, ok in boxes(m):
            if ok.any():
                at, offs = _shared_box(ctx, fail, lane, int(rs(np.array([lane]))[0]), tm)
                mem.gmem[_global_bytes(ctx, fail, lane, gaddr[ok], tm.elem_bytes, True)] = mem.shared[at[ok]]
                _note(ctx, st, lane, "shared", offs[ok], tm.elem_bytes, False)
                _note(ctx, st, lane, "global", gaddr[ok], tm.elem_bytes, True)
    return run


def _bulk_copy(ctx, st, parts):
    """[dst], [src], size{, [mbar]}{, ctaMask}: bytes global or shared::cta -> shared::cluster (complete_tx on the
    destination's barrier), or shared::cta -> global."""
    ops = list(st.operands)
    dst, src, size = ops[0], ops[1], ops[2]
    dst_space, src_space = parts[3].split("::")[0], parts[4].split("::")[0]
    rd, rsrc = address(ctx, st, dst, dst_space), address(ctx, st, src, src_space)
    rn = ctx.src_full(size, "u32")
    bar = ops[3] if len(ops) > 3 and isinstance(ops[3], Addr) else None
    rb = address(ctx, st, bar, "shared") if bar is not None else None
    mask_r = ctx.src_full(ops[4], "u16") if "multicast::cluster" in parts else None
    fail = ctx.failer(st)

    def span(lane: int, addr: int, n: int, space: str, store: bool) -> tuple[np.ndarray, int]:
        if space == "global":  # both ends checked against one buffer
            first = _global_bytes(ctx, fail, lane, np.array([addr, addr + n - 16], np.int64), 16, store)[:, 0]
            _note(ctx, st, lane, "global", addr + np.arange(0, n, 16), 16, store)
            return ctx.mem.gmem, int(first[0])
        cta, off = _shared_base(ctx, fail, lane, addr, n, 16, "cp.async.bulk")
        _note(ctx, st, lane, "shared", off + np.arange(0, n, 16), 16, store)
        return ctx.mem.shared, cta * ctx.mem.shared_size + off

    def run(m):
        for lane in ctx.lanes(m).tolist():
            n, one = int(rn()[lane]), np.array([lane])
            if n % 16 or n == 0:
                fail(lane, f"cp.async.bulk of {n} bytes: a positive multiple of 16 is required")
            flat, i = span(lane, int(rsrc(one)[0]), n, src_space, False)
            data = flat[i:i + n].copy()
            if dst_space == "global":
                flat, i = span(lane, int(rd(one)[0]), n, "global", True)
                flat[i:i + n] = data
                continue
            bars = _targets(ctx, mask_r, lane, int(rb(one)[0])) if rb is not None else None
            for j, d in enumerate(_targets(ctx, mask_r, lane, int(rd(one)[0]))):
                flat, i = span(lane, d, n, "shared", True)
                flat[i:i + n] = data
                if bars is not None:
                    complete_tx(*_word_index(ctx, fail, lane, bars[j]), n)
    return run


_REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
# a tensor map's element type as the reduction's PTX type
_MAP_TYPES = {"u16": "u16", "u32": "u32", "s32": "s32", "u64": "u64", "s64": "s64", "f16": "f16", "bf16": "bf16",
              "f32": "f32", "f64": "f64"}


def b_cp_reduce(ctx, st, parts):
    """cp.reduce.async.bulk{.tensor.Nd}: each element of a shared::cta source combined into its destination
    (global memory through a tensor map's box — in-bounds elements only — or a plain span of global or
    shared::cluster memory, the latter completing on an mbarrier) by add / min / max / inc / dec / and / or / xor;
    done at issue, in element order."""
    op = next((p for p in parts if p in _REDUCE_OPS), None)
    if op is None:
        ctx.out_of_scope(st)
    ops = list(st.operands)
    fail = ctx.failer(st)
    if parts[4] == "tensor":
        boxes, rs = _boxes(ctx, st, ops[0], parts), address(ctx, st, ops[1], "shared")

        def run_tensor(m):
            mem = ctx.mem
            for lane, tm, gaddr, ok in boxes(m):
                ptype = _MAP_TYPES.get(tm.dtype)
                if ptype is None:
                    fail(lane, f"a {op} reduction through a {tm.dtype} tensor map is not emulated")
                if ok.any():
                    at, offs = _shared_box(ctx, fail, lane, int(rs(np.array([lane]))[0]), tm)
                    g = _global_bytes(ctx, fail, lane, gaddr[ok], tm.elem_bytes, True)
                    _combine(mem.gmem, g, mem.shared[at[ok]], op, ptype)
                    _note(ctx, st, lane, "shared", offs[ok], tm.elem_bytes, False)
                    _note(ctx, st, lane, "global", gaddr[ok], tm.elem_bytes, True)
        return run_tensor
    ptype = parts[-1]
    if ptype not in TYPE_BYTES:
        ctx.unsupported(st, st.opcode)
    es = TYPE_BYTES[ptype]
    dst_space = parts[4].split("::")[0]
    rd, rsrc, rn = address(ctx, st, ops[0], dst_space), address(ctx, st, ops[1], "shared"), ctx.src_full(ops[2], "u32")
    rb = address(ctx, st, ops[3], "shared") if dst_space == "shared" and len(ops) > 3 else None

    def run_plain(m):
        mem = ctx.mem
        for lane in ctx.lanes(m).tolist():
            n, one = int(rn()[lane]), np.array([lane])
            if n % 16 or n == 0:
                fail(lane, f"cp.reduce.async.bulk of {n} bytes: a positive multiple of 16 is required")
            cta, off = _shared_base(ctx, fail, lane, int(rsrc(one)[0]), n, 16, "cp.reduce.async.bulk")
            src = mem.shared[cta * mem.shared_size + off + np.arange(n)].reshape(-1, es)
            d = int(rd(one)[0])
            _note(ctx, st, lane, "shared", off + np.arange(0, n, es), es, False)
            if dst_space == "global":
                g = _global_bytes(ctx, fail, lane, d + np.arange(0, n, es), es, True)
                _combine(mem.gmem, g, src, op, ptype)
                _note(ctx, st, lane, "global", d + np.arange(0, n, es), es, True)
            else:
                dcta, doff = _shared_base(ctx, fail, lane, d, n, 16, "cp.reduce.async.bulk")
                at = (dcta * mem.shared_size + doff + np.arange(n)).reshape(-1, es)
                _combine(mem.shared, at, src, op, ptype)
                _note(ctx, st, lane, "shared", doff + np.arange(0, n, es), es, True)
                if rb is not None:
                    complete_tx(*_word_index(ctx, fail, lane, int(rb(one)[0])), n)
    return run_plain


def _combine(flat: np.ndarray, at: np.ndarray, src: np.ndarray, op: str, ptype: str) -> None:
    """flat[at] (elements x bytes) = flat[at] `op` src (elements x bytes), as `ptype` words; f32 add keeps
    subnormals in either space (the H100 corpus's bulk_reduce_add_f32, where an atom to global memory flushes them)."""
    dt = UINT[TYPE_BYTES[ptype]]
    old = np.ascontiguousarray(flat[at]).view(dt).reshape(-1)
    x = np.ascontiguousarray(src).view(dt).reshape(-1)
    flat[at] = reduce_values(op, ptype, False, old, x).view(np.uint8).reshape(at.shape)


def b_st_async(ctx, st, parts):
    """st.async.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b, [mbar]: a store into a CTA of
    the cluster whose bytes complete on that CTA's barrier."""
    ptype = parts[-1]
    count = next((int(p[1:]) for p in parts if p in ("v2", "v4")), 1)
    width = TYPE_BYTES[ptype]
    a, val, bar = st.operands[:3]
    store = _access(ctx, st, "shared", address(ctx, st, a, "shared"), width, count, True)
    srcs = list(val.items) if isinstance(val, Vec) else [val]
    rs = [ctx.src_full(x, ptype) for x in srcs]
    bars = _Barriers(ctx, st, bar, "shared")
    nbytes = width * count

    def run(m):
        lanes = ctx.lanes(m)
        store(lanes, np.stack([r()[lanes] for r in rs], axis=1))

        def step(w, at):
            pending, expected, tx, phase = _fields(w)
            return _settle(pending, expected, tx - nbytes * len(at), phase)
        bars.update(lanes, step)
    return run


# ---- the cluster ----------------------------------------------------------------------------------------------
def b_mapa(ctx, st, parts):
    """mapa{.shared::cluster}.u32/.u64 d, a, rank: a's address in the shared memory of CTA `rank`."""
    ptype = parts[-1]
    generic = "shared::cluster" not in parts
    d, a, b = st.operands[:3]
    ra, rb, w = ctx.src_full(a, ptype), ctx.src_full(b, "u32"), ctx.dst(d, ptype)
    fail = ctx.failer(st)

    def run(m):
        lanes = ctx.lanes(m)
        av, rank = ra()[lanes].astype(np.int64), rb()[lanes].astype(np.int64)
        bad = rank >= ctx.cluster_size
        if bad.any():
            j = int(np.argmax(bad))
            fail(int(lanes[j]), f"mapa to CTA rank {int(rank[j])} of a cluster of {ctx.cluster_size}")
        if generic:
            inside = (av >= SHARED_WINDOW) & (av < SHARED_WINDOW + WINDOW_SIZE)
            if not inside.all():
                j = int(np.argmin(inside))
                fail(int(lanes[j]), f"mapa of generic address {int(av[j]):#x}, which is not shared memory")
            av = av - SHARED_WINDOW
        out = (rank + 1) << RANK_SHIFT | (av & _RANK_MASK)
        full = np.zeros(ctx.n, np.uint64)
        full[lanes] = out + (SHARED_WINDOW if generic else 0)
        w(full, m)
    return run


def b_getctarank(ctx, st, parts):
    d, a = st.operands[:2]
    generic = "shared::cluster" not in parts
    ra, w = ctx.src_full(a, parts[-1]), ctx.dst(d, "u32")

    def run(m):
        lanes = ctx.lanes(m)
        av = ra()[lanes].astype(np.int64) - (SHARED_WINDOW if generic else 0)
        cta, _ = ctx.mem.shared_cta(av, lanes, ctx.failer(st))
        full = np.zeros(ctx.n, np.uint32)
        full[lanes] = cta % ctx.cluster_size
        w(full, m)
    return run


def cluster_arrive(ctx, st):
    """barrier.cluster.arrive: the thread's arrival on the cluster barrier's current phase (its wait: control)."""
    def run(m):
        lanes = ctx.lanes(m)
        early = ctx.cluster_arrived[lanes] > ctx.cluster_passed[lanes]
        if early.any():
            ctx.failer(st)(int(lanes[np.argmax(early)]), "barrier.cluster.arrive twice without a wait between")
        ctx.cluster_arrived[lanes] += 1
    return run


def b_setmaxnreg(ctx, st, parts):
    n = st.operands[0]
    if not isinstance(n, Imm) or not (24 <= int(n.value) <= 256 and int(n.value) % 8 == 0):
        ctx.fail_static(st, "setmaxnreg takes an immediate register count, a multiple of 8 in 24..256")
    return lambda m: None


def b_noop(ctx, st, parts):
    return lambda m: None


def b_cp(ctx, st, parts):
    """Every `cp`: the bulk copies here; `cp.async.mbarrier.arrive{.noinc}` as an arrival (the copies are done at
    issue; without .noinc the pending count is raised by one first, so the arrival takes nothing); cp.async in
    ops_mem."""
    if parts[1] == "reduce":
        return b_cp_reduce(ctx, st, parts)
    if len(parts) > 2 and parts[2] == "bulk":
        return b_cp_bulk(ctx, st, parts)
    if len(parts) > 2 and parts[2] == "mbarrier":
        return b_mbarrier(ctx, st, ["mbarrier", "arrive", *parts[4:]]) if "noinc" in parts else lambda m: None
    return b_cp_async(ctx, st, parts)


def b_st(ctx, st, parts):
    """Every `st`: st.async here, the others in ops_mem."""
    return b_st_async(ctx, st, parts) if parts[1] == "async" else b_st_plain(ctx, st, parts)


BUILDERS = {"mbarrier": b_mbarrier, "mapa": b_mapa, "getctarank": b_getctarank, "setmaxnreg": b_setmaxnreg,
            "griddepcontrol": b_noop, "cp": b_cp, "st": b_st}
