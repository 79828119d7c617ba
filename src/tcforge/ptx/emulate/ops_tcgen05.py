"""Blackwell tensor memory and its MMA (sm_100a `tcgen05`), the subset dense GEMMs use: `alloc` / `dealloc` /
`relinquish_alloc_permit`, `mma` (`.kind::f16`, `.kind::tf32` and `.kind::f8f6f4` (e4m3 / e5m2) to f32,
`.cta_group::1` M = 64 or 128 and `.cta_group::2` M = 256, both operands from shared-memory descriptors), `commit`
(one arrive on an mbarrier, or on the same offset in each CTA of a `.multicast::cluster` mask), `ld` / `st`
(`.32x32b` and `.16x32bx2`), and the fences and waits.

Built on the PTX ISA alone: no Blackwell GPU has checked any of it (Triton's own sm_100a matmuls give A @ B in
it). Tensor memory is 128 lanes x 512 columns of 32 bits per CTA; an address is lane << 16 | column. `alloc` takes
the lowest free aligned run of columns (a power of 2, 32..512) in the issuing warp's CTA and writes its address to
shared memory; the MMA runs when issued (a correct program reads D only after the commit's mbarrier phase), so
`commit` arrives at once. `.cta_group::2` pairs CTA ranks 2i and 2i + 1 and is issued from the even one: A rows
0..M/2-1 and B columns 0..N/2-1 come from its shared memory, the rest from the odd one's at the same offsets, and D
rows M/2.. land in the odd CTA's tensor memory. The arithmetic is tcforge.numerics' Hopper datapath of the same
types (wgmma's f16 / bf16 / tf32 / FP8 -> f32 step over K, C fused) — an assumption until a Blackwell GPU pins it;
exact where every sum is, whatever the hardware's grouping.

Descriptors (PTX ISA "Shared memory descriptor"): start, LBO, SBO (bits 0-13, 16-29, 32-45, each << 4), the fixed
0b001 at bits 46-48, base offset (49-51) and LBO mode (52) zero, swizzle at 61-63 (0 none, 2 128-byte, 4 64-byte,
6 32-byte); the layouts are wgmma's (ops_wgmma.descriptor_offsets). Instruction descriptor: D type at bits 4-5 (1:
f32), A / B types at 7-9 / 10-12 (f16 0, bf16 1, tf32 2; f8f6f4: e4m3 0, e5m2 1), negate A / B at 13 / 14, MN-major
A / B at 15 / 16, N >> 3 at 17-22, M >> 4 at 24-28; sparsity, saturation and the weight shift must be 0."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcforge.numerics.tensorcore import HOPPER_FORMS
from tcforge.numerics.tensorcore import tc_mma as _tc_mma
from tcforge.ptx.emulate.ops_async import _targets, _word_index, arrive_one
from tcforge.ptx.emulate.ops_mem import address
from tcforge.ptx.emulate.ops_wgmma import TF32_FORM, cached_offsets
from tcforge.ptx.operands import Addr, Imm, Vec

LANES, COLUMNS = 128, 512
_SWIZZLE = {0: 0, 2: 1, 4: 2, 6: 3}  # tcgen05 swizzle field -> wgmma's descriptor code (none, 128, 64, 32 bytes)
_TYPES = {"f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"}, "f8f6f4": {0: "e4m3", 1: "e5m2"}}  # kind -> idesc A / B
# type field -> type (K: 32 bytes of it); .kind::f8f6f4's 6- and 4-bit types are not modelled
_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}


def b_tcgen05(ctx, st, parts: list[str]):
    """Builder of the tcgen05 instructions this module models; the rest fail in one line when built."""
    kind = parts[1].split("::")[0]
    if kind in ("fence", "wait"):
        return lambda m: None
    if kind in ("alloc", "dealloc", "relinquish_alloc_permit"):
        return _alloc(ctx, st, parts, kind)
    if kind == "mma" and not any(p in ("ws", "sp") for p in parts):
        return _mma(ctx, st, parts)
    if kind == "commit":
        return _commit(ctx, st, parts)
    if kind in ("ld", "st") and ("32x32b" in parts or "16x32bx2" in parts):
        return _ld(ctx, st, parts) if kind == "ld" else _st(ctx, st, parts)
    ctx.unsupported(st, f"{st.opcode} (of tcgen05, alloc / dealloc / relinquish_alloc_permit, mma (.kind::f16 / "
                        "tf32 / f8f6f4, operands from descriptors), commit, ld / st .32x32b / .16x32bx2, fence and "
                        "wait are emulated)")


def _group(ctx, st, parts: list[str]) -> int:
    """The CTA group (1 or 2) an opcode names; 2 needs a cluster of an even size."""
    group = 2 if "cta_group::2" in parts else 1
    if group == 2 and ctx.mem.cluster_size % 2:
        ctx.fail_static(st, f"cta_group::2 pairs the CTAs of a cluster, but the cluster has {ctx.mem.cluster_size}")
    return group


def tmem(ctx) -> tuple[np.ndarray, np.ndarray]:
    """The batch's tensor memory (CTA, 128 lanes, 512 columns) of 32-bit words and its allocated columns (CTA, 512),
    made on first use (fresh per batch, as shared memory is)."""
    mem = ctx.mem
    if mem.tmem is None:
        ctas = ctx.n // ctx.lanes_per_cta
        mem.tmem = np.zeros((ctas, LANES, COLUMNS), np.uint32)
        mem.tmem_used = np.zeros((ctas, COLUMNS), bool)
    return mem.tmem, mem.tmem_used


# ---- allocation -------------------------------------------------------------------------------------------------
def _alloc(ctx, st, parts: list[str], kind: str):
    """alloc [dst], ncols / dealloc taddr, ncols / relinquish_alloc_permit: warp-collective, per CTA."""
    _group(ctx, st, parts)
    fail = ctx.failer(st)
    if kind == "relinquish_alloc_permit":
        def permit(m):
            ctx.warps(m, st)
        return permit
    ops = st.operands
    target = address(ctx, st, ops[0], "shared") if kind == "alloc" else ctx.src_full(ops[0], "u32")
    rn = ctx.src_full(ops[1], "u32")

    def run(m):
        words, used = tmem(ctx)
        for w in ctx.warps(m, st).tolist():
            lane = 32 * w
            cta, n = lane // ctx.lanes_per_cta, int(rn()[lane])
            if n < 32 or n > COLUMNS or n & (n - 1):
                fail(lane, f"{st.opcode}: {n} columns; a power of 2 in 32..512 is required")
            if kind == "dealloc":
                taddr = int(target()[lane])
                col = taddr & 0xFFFF
                if taddr >> 16 or col % n or not used[cta, col:col + n].all():
                    fail(lane, f"tcgen05.dealloc of {n} columns at tensor-memory address {taddr:#x}, which this "
                               "CTA did not allocate")
                used[cta, col:col + n] = False
                continue
            free = [c for c in range(0, COLUMNS, n) if not used[cta, c:c + n].any()]
            if not free:
                fail(lane, f"tcgen05.alloc of {n} columns: the CTA's tensor memory has no free aligned run left "
                           f"({int(used[cta].sum())} of {COLUMNS} columns allocated)")
            used[cta, free[0]:free[0] + n] = True
            one = np.array([lane])
            flat, offs = ctx.mem.locate("shared", target(one), one, 4, fail, True)
            flat[offs[0]:offs[0] + 4] = np.frombuffer(np.uint32(free[0]).tobytes(), np.uint8)
    return run


# ---- the MMA ----------------------------------------------------------------------------------------------------
def _idesc(ctx, st, lane: int, idesc: int, kind: str, group: int) -> tuple:
    """(A type, B type, M, N, negate A, negate B, MN-major A, MN-major B) of an instruction descriptor, checked."""
    fail = ctx.failer(st)
    types = _TYPES[kind]
    ta, tb = types.get((idesc >> 7) & 7), types.get((idesc >> 10) & 7)
    m, n = ((idesc >> 24) & 31) << 4, ((idesc >> 17) & 63) << 3
    what = f"instruction descriptor {idesc:#010x}"
    if idesc & 0b1111 or (idesc >> 30) or (idesc >> 23) & 1 or (idesc >> 29) & 1:
        fail(lane, f"{what}: sparsity, saturation, reserved bits and the weight shift must be 0 (dense .kind::{kind})")
    if (idesc >> 4) & 3 != 1:
        fail(lane, f"{what}: D type {(idesc >> 4) & 3}; the emulator models f32 D (1)")
    if ta is None or tb is None or (kind != "f8f6f4" and ta != tb):
        fail(lane, f"{what}: A / B types {(idesc >> 7) & 7} / {(idesc >> 10) & 7}; .kind::{kind} takes "
                   + ", ".join(f"{v} ({c})" for c, v in types.items()) + ("" if kind == "f8f6f4" else ", both alike"))
    shapes = {1: {64: 8, 128: 16}, 2: {256: 16}}[group]  # M -> N's step (N up to 256)
    step = shapes.get(m)
    if step is None or n % step or not step <= n <= 256:
        fail(lane, f"{what}: M = {m}, N = {n}; cta_group::{group} is emulated at M = "
                   + " or ".join(f"{mm} (N a multiple of {k} up to 256)" for mm, k in shapes.items()))
    mn_a, mn_b = bool(idesc >> 15 & 1), bool(idesc >> 16 & 1)
    if ta == "tf32" and (mn_a or mn_b):
        fail(lane, f"{what}: MN-major tf32 operands are not emulated")
    return ta, tb, m, n, bool(idesc >> 13 & 1), bool(idesc >> 14 & 1), mn_a, mn_b


def _d_lanes(m: int, base: int) -> np.ndarray | None:
    """Tensor-memory lanes of D's rows (the PTX ISA's data-path layouts): M = 128 per CTA row r at lane r (base 0);
    M = 64 (half the data path) row r at lane base + 32 (r / 16) + r % 16, base 0 or 16; None where base is wrong."""
    r = np.arange(m)
    if m == 64:
        return base + 32 * (r // 16) + r % 16 if base in (0, 16) else None
    return r if base == 0 else None


def _descriptor(ctx, st, lane: int, desc: int, which: str) -> int:
    """A tcgen05 shared-memory descriptor as wgmma's (start, LBO, SBO, swizzle code), checked."""
    fail = ctx.failer(st)
    if (desc >> 46) & 7 != 1 or (desc >> 49) & 15 or (desc >> 53) & 0xFF:
        fail(lane, f"{which} descriptor {desc:#x}: bits 46-48 must hold 0b001, and the base offset, the LBO mode "
                   "and bits 53-60 0")
    sw = _SWIZZLE.get(desc >> 61)
    if sw is None:
        fail(lane, f"{which} descriptor {desc:#x}: swizzle mode {desc >> 61} is not none (0), 128-byte (2), 64-byte "
                   "(4) or 32-byte (6)")
    return (desc & 0x3FFF_3FFF_3FFF) | sw << 62


def _tile(ctx, st, lane: int, desc: int, cta: int, rows: int, mn_major: bool, esize: int, which: str) -> np.ndarray:
    """The (rows, 32) bytes a descriptor names in one CTA's shared memory (K-major rows of 32 bytes of K, or
    MN-major elements of `esize` bytes in wgmma's canonical MN-major layouts)."""
    mem = ctx.mem
    off, _, hi = cached_offsets(_descriptor(ctx, st, lane, desc, which), rows, mn_major, esize=esize)
    if hi >= mem.shared_size:
        ctx.failer(st)(lane, f"{which} descriptor {desc:#x} reads shared byte {hi:#x}, outside the "
                             f"CTA's {mem.shared_size} bytes")
    return mem.shared[cta * mem.shared_size + off]


def _mma(ctx, st, parts: list[str]):
    """mma.cta_group::N.kind::K [d], a-desc, b-desc, idesc, enable-input-d: D (+)= A·B, run when issued."""
    kind = next((p.split("::")[1] for p in parts if p.startswith("kind::")), None)
    ops = st.operands
    if kind not in _TYPES or len(ops) != 5 or not isinstance(ops[0], Addr) or isinstance(ops[1], Addr):
        ctx.unsupported(st, f"{st.opcode} (tcgen05.mma is emulated as .kind::f16 / tf32 / f8f6f4 [d-tmem], a-desc, "
                            "b-desc, idesc, enable-input-d: A from shared memory, no disable-output-lane or scale)")
    group = _group(ctx, st, parts)
    rd = address(ctx, st, ops[0], "shared")  # a tensor-memory address, read as the register's value
    ra, rb, ri = (ctx.src_full(o, t) for o, t in ((ops[1], "b64"), (ops[2], "b64"), (ops[3], "b32")))
    en = ops[4]
    ren = None if isinstance(en, Imm) else ctx.src_full(en, "pred")
    fail = ctx.failer(st)

    def run(m):
        words, used = tmem(ctx)
        for lane in ctx.lanes(m).tolist():
            one = np.array([lane])
            cta = lane // ctx.lanes_per_cta
            rank = cta % ctx.mem.cluster_size
            if group == 2 and rank % 2:
                fail(lane, "tcgen05.mma.cta_group::2 is issued from the even CTA of the pair; this CTA has rank "
                           f"{rank}")
            ctas = [cta, cta + 1] if group == 2 else [cta]
            ta, tb, mm, n, neg_a, neg_b, mn_a, mn_b = _idesc(ctx, st, lane, int(ri()[lane]), kind, group)
            taddr = int(rd(one)[0])
            col, half = taddr & 0xFFFF, mm // group
            rows = _d_lanes(half, taddr >> 16)
            if rows is None or not all(used[c, col:col + n].all() for c in ctas):
                fail(lane, f"tcgen05.mma: D at tensor-memory address {taddr:#x} (M = {mm}: lane 0"
                           f"{' or 16' if half == 64 else ''}, {n} columns) is not allocated in every CTA of the group")
            es = _BYTES[ta]
            a = np.concatenate([_tile(ctx, st, lane, int(ra()[lane]), c, half, mn_a, es, "A") for c in ctas])
            b = np.concatenate([_tile(ctx, st, lane, int(rb()[lane]), c, n // group, mn_b, es, "B") for c in ctas])
            dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[_BYTES[ta]]
            a, b = a.view(dt), b.view(dt)  # (M, K), (N, K)
            sign = dt(1 << (8 * _BYTES[ta] - 1))
            if neg_a:
                a = a ^ sign
            if neg_b:
                b = b ^ sign
            c = np.concatenate([words[x][rows, col:col + n] for x in ctas])
            if ren is None and not en.value or ren is not None and not ren()[lane]:
                c = np.zeros_like(c)
            form = TF32_FORM if ta == "tf32" else HOPPER_FORMS[f"wgmma.m64n8k{32 // _BYTES[ta]}.f32.{ta}.{tb}"]
            d = _tc_mma(replace(form, name=f"tcgen05.mma.kind::{kind} ({ta} x {tb}, the Hopper datapath)", op="mma",
                                m=mm, n=n), a, np.ascontiguousarray(b.T), c)
            for i, x in enumerate(ctas):
                words[x][rows, col:col + n] = d[i * half:(i + 1) * half]
    return run


# ---- commit and loads -------------------------------------------------------------------------------------------
def _commit(ctx, st, parts: list[str]):
    """commit{.cta_group::N}.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64 [mbar]{, mask}: one
    arrive (the MMAs issued before have completed: they ran when issued)."""
    _group(ctx, st, parts)
    ops = st.operands
    rb = address(ctx, st, ops[0], "shared")
    mask_r = ctx.src_full(ops[1], "u16") if "multicast::cluster" in parts else None
    fail = ctx.failer(st)

    def run(m):
        for lane in ctx.lanes(m).tolist():
            for b in _targets(ctx, mask_r, lane, int(rb(np.array([lane]))[0])):
                words, i = _word_index(ctx, fail, lane, b)
                arrive_one(words, i, lambda msg, lane=lane: fail(lane, f"tcgen05.commit: {msg}"))
    return run


def _access(ctx, st, parts: list[str], load: bool):
    """(register operands, reader of taddr, split) of an ld / st of shape .32x32b or .16x32bx2 (whose
    immHalfSplitoff follows the address), checked against its .num."""
    num = next((int(p[1:]) for p in parts if p[:1] == "x" and p[1:].isdigit()), None)
    ops = list(st.operands)
    split_shape = "16x32bx2" in parts
    if split_shape:
        imm = ops.pop(2 if load else 1)
        if not isinstance(imm, Imm):
            ctx.fail_static(st, "immHalfSplitoff must be an immediate")
    regs_op, addr_op = (ops[0], ops[1]) if load else (ops[1], ops[0])
    regs = list(regs_op.items) if isinstance(regs_op, Vec) else [regs_op]
    if num is None or len(regs) != num or any("pack::16b" in p for p in parts):
        ctx.unsupported(st, f"{st.opcode} (ld / st .32x32b or .16x32bx2 .xN with N registers, no (un)packing)")
    return regs, address(ctx, st, addr_op, "shared"), num, int(imm.value) if split_shape else None


def _cells(ctx, st, lanes: np.ndarray, taddr: np.ndarray, num: int, split: int | None, used: np.ndarray):
    """(CTA, tensor-memory lane per thread (32,), first column per thread (32,)) of one warp's access, checked: one
    address for the warp, lanes inside the warp's quarter (32 (w % 4) .. + 31), allocated columns. .32x32b: thread
    i at lane base + i; .16x32bx2: threads i and i + 16 at lane base + i, the second `split` columns further."""
    fail = ctx.failer(st)
    what = st.opcode.split(".")[1]
    if (taddr != taddr[0]).any():
        fail(int(lanes[int(np.argmax(taddr != taddr[0]))]), f"tcgen05.{what}: the address differs within the warp")
    cta, local_warp = lanes[0] // ctx.lanes_per_cta, (lanes[0] % ctx.lanes_per_cta) // 32
    row, col = int(taddr[0]) >> 16, int(taddr[0]) & 0xFFFF
    t = np.arange(32)
    rows, cols = (row + t, np.full(32, col)) if split is None else (row + t % 16, col + (t >= 16) * split)
    quarter = 32 * (local_warp % 4)
    last = int(cols.max()) + num
    if rows.min() < quarter or rows.max() > quarter + 31 or last > COLUMNS or not used[cta, col:last].all():
        fail(int(lanes[0]), f"tcgen05.{what} of lanes {int(rows.min())}..{int(rows.max())}, columns {col}..{last - 1}: "
                            f"warp {local_warp} reaches lanes {quarter}..{quarter + 31} of allocated columns")
    return cta, rows, cols


def _st(ctx, st, parts: list[str]):
    """st.sync.aligned.{32x32b, 16x32bx2}.xN.b32 [taddr]{, immHalfSplitoff}, {r...}: each thread's N registers to N
    consecutive columns of its tensor-memory lane (_cells)."""
    regs, ra, num, split = _access(ctx, st, parts, False)
    rs = [ctx.src_full(r, "b32") for r in regs]

    def run(m):
        words, used = tmem(ctx)
        vals = np.stack([r() for r in rs])  # (N, lanes)
        for w in ctx.warps(m, st).tolist():
            lanes = 32 * w + np.arange(32)
            cta, rows, cols = _cells(ctx, st, lanes, ra(lanes), num, split, used)
            words[cta, rows[:, None], cols[:, None] + np.arange(num)] = vals[:, lanes].T
    return run


def _ld(ctx, st, parts: list[str]):
    """ld.sync.aligned.{32x32b, 16x32bx2}.xN.b32 {r...}, [taddr]{, immHalfSplitoff}: each thread's N registers from
    N consecutive columns of its tensor-memory lane (_cells)."""
    regs, ra, num, split = _access(ctx, st, parts, True)
    ws = [ctx.dst(r, "b32") for r in regs]

    def run(m):
        words, used = tmem(ctx)
        out = np.zeros((num, ctx.n), np.uint32)
        for w in ctx.warps(m, st).tolist():
            lanes = 32 * w + np.arange(32)
            cta, rows, cols = _cells(ctx, st, lanes, ra(lanes), num, split, used)
            out[:, lanes] = words[cta, rows[:, None], cols[:, None] + np.arange(num)].T
        for j, wr in enumerate(ws):
            wr(out[j], m)
    return run


BUILDERS = {"tcgen05": b_tcgen05}
