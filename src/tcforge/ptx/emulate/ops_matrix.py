"""Warp-wide matrix instructions: movmatrix, ldmatrix, stmatrix (m8n8 b16, x1/x2/x4, .trans) and mma.sync through
tcforge.numerics (m16n8k32 e4m3 -> f16 in either model; on Hopper every form of numerics.tensorcore: m16n8k16
f16/bf16 -> f32, f16 -> f16, m16n8k32 e4m3/e5m2 -> f32 or f16 (m16n8k16 as that lowering at half the K),
m16n8k8 as one k8 step of the k16 datapath, tf32
m16n8k4 / k8 on the f16 -> f32 datapath) or, for integers (m8n8k16 / m16n8k16 / m16n8k32 s8 / u8, m8n8k32 /
m16n8k32 / m16n8k64 s4 / u4 -> s32, .satfinite too; b1 m8n8k128 / m16n8k128 / m16n8k256 .and.popc / .xor.popc),
exact integer sums in either model; m8n8k4 f64 as chained fma.rn.f64; m8n8k4 f16 (any A/B layout) as the FFMA
sequence ptxas lowers it to, in either model; sparse mma.sp (2:4 A) through the dense forms over each row's kept
products. Fragment layouts are the PTX ISA's: lane = 4 * groupID + threadID_in_group."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcforge import numerics as nx
from tcforge.numerics.tensorcore import HOPPER_FORMS, Form, tc_mma
from tcforge.ptx.emulate.ops_float import _f32_canon, fma_f64_bits
from tcforge.ptx.emulate.ops_mem import _access, address
from tcforge.ptx.emulate.rounding import fma_round_odd, round_f64_to_f32
from tcforge.ptx.operands import Imm, Vec


def _regs(op):
    return list(op.items) if isinstance(op, Vec) else [op]


def _halves(x: np.ndarray) -> np.ndarray:
    """(W, 32) uint32 -> (W, 32, 2) uint16 [lo, hi]."""
    return np.ascontiguousarray(x).view(np.uint16).reshape(x.shape[0], 32, 2)


def _words(h: np.ndarray) -> np.ndarray:
    """(W, 32, 2) uint16 -> (W, 32) uint32."""
    return np.ascontiguousarray(h.astype(np.uint16)).view(np.uint32).reshape(h.shape[0], 32)


def _fragment_to_matrix(h: np.ndarray) -> np.ndarray:
    """(W, 32, 2) halves of an m8n8 b16 fragment -> (W, 8, 8) matrix (lane 4r + t holds (r, 2t), (r, 2t + 1))."""
    return h.reshape(h.shape[0], 8, 8)


def _scatter(ctx, warps, res, w, m):
    full = np.zeros(ctx.n, res.dtype)
    full.reshape(-1, 32)[warps] = res
    w(full, m)


def b_movmatrix(ctx, st, parts):
    if "trans" not in parts or "m8n8" not in parts:
        ctx.unsupported(st, ".".join(parts))
    d, a = st.operands[:2]
    ra, w = ctx.src_full(a, "b32"), ctx.dst(d, "b32")

    def run(m):
        warps = ctx.warps(m, st)
        x = ra().reshape(-1, 32)[warps]
        mat = _fragment_to_matrix(_halves(x)).transpose(0, 2, 1)
        _scatter(ctx, warps, _words(mat.reshape(-1, 32, 2)), w, m)
    return run


def _count(parts):
    return next((int(p[1:]) for p in parts if p in ("x1", "x2", "x4")), 1)


def b_ldmatrix(ctx, st, parts):
    if "m8n8" not in parts or parts[-1] != "b16":
        ctx.unsupported(st, ".".join(parts))
    cnt, trans = _count(parts), "trans" in parts
    d, a = st.operands[:2]
    ws = [ctx.dst(x, "b32") for x in _regs(d)]
    load = _access(ctx, st, "shared", address(ctx, st, a, "shared"), 2, 8, False)

    def run(m):
        warps = ctx.warps(m, st)
        lanes = (warps[:, None] * 32 + np.arange(8 * cnt)[None, :]).reshape(-1)
        rows = load(lanes).reshape(len(warps), cnt, 8, 8)  # [warp, matrix, row, col]
        if trans:
            rows = rows.transpose(0, 1, 3, 2)
        for j, w in enumerate(ws):
            _scatter(ctx, warps, _words(rows[:, j].reshape(-1, 32, 2)), w, m)
    return run


def b_stmatrix(ctx, st, parts):
    if "m8n8" not in parts or parts[-1] != "b16":
        ctx.unsupported(st, ".".join(parts))
    cnt, trans = _count(parts), "trans" in parts
    a, s = st.operands[:2]
    rs = [ctx.src_full(x, "b32") for x in _regs(s)]
    store = _access(ctx, st, "shared", address(ctx, st, a, "shared"), 2, 8, True)

    def run(m):
        warps = ctx.warps(m, st)
        mats = np.stack([_fragment_to_matrix(_halves(r().reshape(-1, 32)[warps])) for r in rs], axis=1)
        if trans:
            mats = mats.transpose(0, 1, 3, 2)
        lanes = (warps[:, None] * 32 + np.arange(8 * cnt)[None, :]).reshape(-1)
        store(lanes, mats.reshape(-1, 8))
    return run


def _elements(r, esize):
    """(W, 32) words -> (W, 8, 16 / esize) elements [groupID, 4 / esize * threadID_in_group + i] (esize 0.5 and
    0.125: 4-bit and 1-bit elements, lowest bits first, as uint8)."""
    r = np.ascontiguousarray(r)
    if esize == 4:  # 32-bit elements (tf32): one per register, k = threadID_in_group
        return r.reshape(r.shape[0], 8, 4)
    if esize < 1:
        bits = int(8 * esize)
        per = 32 // bits
        shifts = bits * np.arange(per, dtype=np.uint32)
        return ((r[..., None] >> shifts) & ((1 << bits) - 1)).astype(np.uint8).reshape(r.shape[0], 8, 4 * per)
    return r.view(np.uint8 if esize == 1 else np.uint16).reshape(r.shape[0], 8, int(16 // esize))


def _gather_a(regs, esize):
    """A fragment (4 regs of (W, 32) words: rows g, g + 8 of the first K half, then of the second; 2 regs: one K
    half; 1 reg: an m8n8 A) -> (W, 16 or 8, K) elements [row, k]."""
    blocks = [_elements(r, esize) for r in regs]
    if len(blocks) == 1:
        return blocks[0]
    top = np.concatenate(blocks[0::2], axis=2)
    bot = np.concatenate(blocks[1::2], axis=2)
    return np.concatenate([top, bot], axis=1)


def _gather_b(regs, esize):
    """B fragment (2 regs, or 1: one K half) -> (W, K, 8) [k, col]."""
    return np.concatenate([_elements(r, esize) for r in regs], axis=2).transpose(0, 2, 1)


def _gather_c(regs):
    """f16 C fragment (2 regs) -> (W, 16, 8)."""
    return np.concatenate([_halves(r).reshape(r.shape[0], 8, 8) for r in regs], axis=1)


def _gather_c32(regs):
    """32-bit C fragment (4 regs: rows g, g, g + 8, g + 8; 2 regs: rows g; columns 2t, 2t + 1) -> (W, 16 or 8, 8)
    uint32."""
    pairs = [np.stack(regs[i:i + 2], axis=-1).reshape(regs[0].shape[0], 8, 8) for i in range(0, len(regs), 2)]
    return np.concatenate(pairs, axis=1)


def _store_d(ctx, warps, ws, d: np.ndarray, m) -> None:
    """Write D (W, 16 or 8, 8) to its fragment registers `ws`: 32-bit elements (f32, s32) one per register, f16
    elements two per register."""
    regs = _split_d32(d) if d.dtype == np.uint32 else \
        [_words(d[:, 8 * i:8 * i + 8].reshape(-1, 32, 2)) for i in range(len(ws))]
    for w, x in zip(ws, regs, strict=True):
        _scatter(ctx, warps, np.ascontiguousarray(x), w, m)


def _split_d32(d):
    """(W, 16 or 8, 8) uint32 -> the 4 (or 2) 32-bit D registers, (W, 32) each."""
    halves = [d[:, i:i + 8].reshape(d.shape[0], 32, 2) for i in range(0, d.shape[1], 8)]
    return [h[..., j] for h in halves for j in (0, 1)]


_MMA_TYPES = ("f16", "e4m3", "e5m2", "bf16", "f32", "s8", "u8", "s4", "u4", "b1", "tf32", "f64", "s32")


_INT_FORMS = {("m8n8k16", 1), ("m16n8k16", 1), ("m16n8k32", 1), ("m8n8k32", 0.5), ("m16n8k32", 0.5),
              ("m16n8k64", 0.5), ("m8n8k128", 0.125), ("m16n8k128", 0.125), ("m16n8k256", 0.125)}  # (shape, bytes)
_INT_BYTES = {"s8": 1, "u8": 1, "s4": 0.5, "u4": 0.5, "b1": 0.125}


def _int_values(x, kind):
    """Elements (uint8 bits) -> int64 values of s8 / u8 / s4 / u4."""
    v = x.astype(np.int64)
    if kind == "s8":
        return np.where(v >= 128, v - 256, v)
    return np.where(v >= 8, v - 16, v) if kind == "s4" else v


def _int_mma(ctx, st, parts, shape, types):
    """(element bytes, function) of an integer mma.sync (m8n8k16 / m16n8k16 / m16n8k32 s8 / u8, m8n8k32 / m16n8k32
    / m16n8k64 s4 / u4, b1 m8n8k128 / m16n8k128 / m16n8k256 with .and.popc or .xor.popc; s32 C and D): the exact
    sum C + A·B (b1: C + the popcount of A's row AND / XOR B's column), wrapped to 32 bits, or with .satfinite
    clamped to the s32 range. Exact integer arithmetic leaves no order to model: a wrapped sum is the same in any
    order and width, and the corpus shows the clamp is of the exact sum."""
    esize = _INT_BYTES.get(types[1])
    b1 = types[1] == "b1"
    op = next((p for p in parts if p in ("and", "xor")), None)
    if esize is None or _INT_BYTES.get(types[2]) != esize or (shape, esize) not in _INT_FORMS or \
            b1 != (op is not None and "popc" in parts) or (b1 and "satfinite" in parts):
        ctx.unsupported(st, f"{'.'.join(parts)} (integer mma.sync is modelled for m8n8k16 / m16n8k16 / m16n8k32 "
                            "with s8 / u8, m8n8k32 / m16n8k32 / m16n8k64 with s4 / u4 and, with .and.popc or "
                            ".xor.popc, m8n8k128 / m16n8k128 / m16n8k256 b1 operands)")
    ta, tb, sat = types[1], types[2], "satfinite" in parts

    def products(A, B):
        if not b1:
            return int_products(A, B, ta, tb)
        hit = (A[:, :, :, None] & B[:, None, :, :]) if op == "and" else (A[:, :, :, None] ^ B[:, None, :, :])
        return hit.sum(axis=2, dtype=np.int64)

    return esize, lambda A, B, C: s32_sum(C, products(A, B), sat)


def int_products(A: np.ndarray, B: np.ndarray, ta: str, tb: str) -> np.ndarray:
    """The exact products A·B (int64) of integer element codes (..., M, K) x (..., K, N) of types ta, tb."""
    return np.einsum("...mk,...kn->...mn", _int_values(A, ta), _int_values(B, tb))


def s32_sum(c: np.ndarray, products: np.ndarray, sat: bool) -> np.ndarray:
    """s32 D words: C (words) + the exact products' sum, clamped to the s32 range with .satfinite, else wrapped."""
    d = c.view(np.int32).astype(np.int64) + products
    if sat:
        d = np.clip(d, -(2**31), 2**31 - 1)
    return (d & 0xFFFFFFFF).astype(np.uint32)


def _mma_model(ctx, st, parts):
    """(A/B element bytes, function (A, B, C) -> D) of an mma.sync form under the emulation's numerics."""
    shape = next((p for p in parts if p.startswith(("m8n8", "m16n8"))), "")
    types = [p for p in parts if p in _MMA_TYPES]
    if len(types) == 4 and types[0] == types[3] == "s32" and {"row", "col"} <= set(parts):
        return _int_mma(ctx, st, parts, shape, types)
    name = f"mma.{shape}.{'.'.join(types[:3])}"
    if len(types) != 4 or types[0] != types[3] or not {"row", "col"} <= set(parts) or name not in _FORMS:
        ctx.unsupported(st, f"{'.'.join(parts)} (tcforge.numerics has no model of this shape and type; "
                            f"Hopper mma.sync forms: {', '.join(_MMA_FORMS)})")
    esize = {"e4m3": 1, "e5m2": 1, "tf32": 4}.get(types[1], 2)
    if name == "mma.m16n8k32.f16.e4m3.e4m3":  # both models (the e4m3 model of numerics/mma.py: the same bits)
        return esize, lambda A, B, C: nx.mma_m16n8k32_e4m3_f16(A, B, C, ctx.model)
    if ctx.model != "hopper":
        ctx.unsupported(st, f"{'.'.join(parts)} under numerics {ctx.model!r} (only a Hopper model exists; the Ada "
                            "model has mma.m16n8k32 e4m3 -> f16)")
    form = _FORMS[name]
    return esize, lambda A, B, C: tc_mma(form, A, B, C)


def _k8(name: str) -> Form:
    """m16n8k8 16-bit forms: one 8-term step of the m16n8k16 form's datapath (HMMA.1688; pinned by the corpus)."""
    f = HOPPER_FORMS[name]
    return replace(f, name=name.replace("k16", "k8"), k=8, groups=(tuple(range(8)),),
                   sass=f.sass.replace("16816", "1688"), source=f"{f.source}; k8 as one step of k16's datapath")


def _tf32(k: int) -> Form:
    """m16n8k4 / m16n8k8 tf32 -> f32: the f16 -> f32 form's datapath (one k-term step) on tf32 values, each an f32
    register whose low 13 bits the tensor core does not read (numerics' tf32 format; pinned by the corpus's
    mma_tf32_* entries)."""
    f = HOPPER_FORMS["mma.m16n8k16.f32.f16.f16"]
    return replace(f, name=f"mma.m16n8k{k}.f32.tf32.tf32", k=k, a="tf32", b="tf32", groups=(tuple(range(k)),),
                   sass=f"HMMA.168{k}.F32.TF32", source=f"{f.source}; tf32 on the same datapath")


def _fp8_k16(name: str) -> Form:
    """m16n8k16 e4m3 / e5m2 (the k32 FP8 form's lowering at half the K: two HMMA.1688 steps from +0 over k % 4 in
    {0, 1}, then {2, 3}, then C added; ptxas 13.0's SASS, pinned by the corpus's mma_fp8_k16_* entries)."""
    f = HOPPER_FORMS[name]
    return replace(f, name=name.replace("k32", "k16"), k=16, groups=tuple(
        tuple(k for k in range(16) if (k % 4 < 2) == low) for low in (True, False)),
        sass=f.sass.replace("HMMA.16816", "HMMA.1688"), source=f"{f.source}; k16 as the k32 lowering's half")


_FORMS = {n: f for n, f in HOPPER_FORMS.items() if f.op == "mma"} | {
    n.replace("k16", "k8"): _k8(n) for n in HOPPER_FORMS if n.startswith("mma.m16n8k16.")} | {
    f"mma.m16n8k{k}.f32.tf32.tf32": _tf32(k) for k in (4, 8)} | {
    n.replace("k32", "k16"): _fp8_k16(n) for n in HOPPER_FORMS if n.startswith("mma.m16n8k32.")}
_MMA_FORMS = tuple(n[4:] for n in _FORMS)


def _ffma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """FFMA (fma.rn.f32) on float32 values whose product is exact in float64 (f16 operands)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return round_f64_to_f32(fma_round_odd(x.astype(np.float64) * y, z.astype(np.float64)), "rn")


def _m884_f16(a: np.ndarray, b: np.ndarray, c: np.ndarray, d_type: str) -> np.ndarray:
    """D of m8n8k4 f16 products (A [.., 8, 4], B [.., 4, 8] f16 bits; C f16 or f32 bits) as ptxas lowers the form for
    sm_80, sm_89 and sm_90 alike — no tensor-core op: f16 -> f32 conversions (exact), then per element of D
    f32 D: s = FFMA(a3, b3, FFMA(a2, b2, FFMA(a1, b1, FFMA(a0, b0, +0)))), D = FADD(C, s);
    f16 D: D = F2FP.F16(FADD(FADD(C, FFMA(a1, b1, FMUL(a0, b0))), FFMA(a3, b3, FMUL(a2, b2)))).
    NaN results are the canonical 0x7fffffff (f16: 0x7fff)."""
    av, bv = a.view(np.float16).astype(np.float32), b.view(np.float16).astype(np.float32)
    cv = c.view(np.float32) if c.dtype == np.uint32 else c.view(np.float16).astype(np.float32)
    ak, bk = [av[..., :, k, None] for k in range(4)], [bv[..., k, None, :] for k in range(4)]
    with np.errstate(invalid="ignore", over="ignore"):
        if d_type == "f32":
            acc = np.zeros(cv.shape, np.float32)
            for k in range(4):
                acc = _ffma(ak[k], bk[k], acc)
            return _f32_canon(np.add(cv, acc, dtype=np.float32))
        pair = [_ffma(ak[k + 1], bk[k + 1], np.multiply(ak[k], bk[k], dtype=np.float32)) for k in (0, 2)]
        return nx.f32_to_f16_rn(np.add(np.add(cv, pair[0], dtype=np.float32), pair[1], dtype=np.float32))


# m8n8k4's quad pairs: logical thread t (0-7) of quad pair q is lane 4q + t % 4 + 16 (t // 4); element i of its
# fragment sits at (row, column) below (PTX ISA, "Matrix Fragments for mma.m8n8k4 with .f16 floating point type")
_QP_LANE = 4 * np.arange(4)[:, None] + (np.arange(8) & 3) + 16 * (np.arange(8) >> 2)
_T, _I4, _I8 = np.arange(8)[:, None], np.arange(4), np.arange(8)
_QP_PLACE = {  # operand -> (rows, columns), each (8 threads, elements): A [m, k], B [k, n], C / D [m, n]
    ("a", "row"): (np.broadcast_to(_T, (8, 4)), np.broadcast_to(_I4, (8, 4))),
    ("a", "col"): (_I4 + 4 * (_T >> 2), np.broadcast_to(_T & 3, (8, 4))),
    ("b", "col"): (np.broadcast_to(_I4, (8, 4)), np.broadcast_to(_T, (8, 4))),
    ("b", "row"): (np.broadcast_to(_T & 3, (8, 4)), _I4 + 4 * (_T >> 2)),
    ("c", "f16"): (np.broadcast_to(_T, (8, 8)), np.broadcast_to(_I8, (8, 8))),
    ("c", "f32"): ((_T & 1) + (_I8 & 2) + 4 * (_T >> 2), (_T & 2) + (_I8 & 1) + (_I8 & 4)),
}


def _qp_matrix(elems: np.ndarray, place: tuple, shape: tuple) -> np.ndarray:
    """(W, 32, E) fragment elements per lane -> (W, 4, *shape) matrices, one per quad pair."""
    x = elems[:, _QP_LANE]  # (W, 4, 8, E)
    out = np.zeros((*x.shape[:2], *shape), x.dtype)
    out[:, :, place[0], place[1]] = x
    return out


def _mma_m884(ctx, st, parts):
    """mma.sync m8n8k4 f16 (A and B .row or .col; f16 C and D, f32 C and D, or f16 C and f32 D): four independent
    8x8x4 products, one per quad pair (lanes 4q..4q+3 hold rows / columns 0-3, lanes 16+4q.. rows / columns 4-7),
    each as ptxas's FFMA sequence (_m884_f16) under either numerics model."""
    types = [p for p in parts if p in _MMA_TYPES]
    lay = [p for p in parts if p in ("row", "col")]
    if len(types) != 4 or types[1:3] != ["f16", "f16"] or [types[0], types[3]] not in (["f16", "f16"],
                                                                                    ["f32", "f32"], ["f32", "f16"]) \
            or len(lay) != 2:
        ctx.unsupported(st, f"{'.'.join(parts)} (m8n8k4 mma.sync is modelled for f16 A and B with f16 C and D, f32 C "
                            "and D, or f16 C and f32 D)")
    d_type, c_type = types[0], types[3]
    d, a, b, c = st.operands[:4]
    for what, op, t in (("D", d, d_type), ("A", a, "f16"), ("B", b, "f16"), ("C", c, c_type)):
        want = 8 if t == "f32" else 4 if what in "CD" else 2
        if len(_regs(op)) != want:
            ctx.fail_static(st, f"{what} of m8n8k4 {t} is {want} registers per thread, got {len(_regs(op))}")
    ra, rb = ([ctx.src_full(x, "b32") for x in _regs(o)] for o in (a, b))
    rc = [ctx.src_full(x, "b32") for x in _regs(c)]
    ws = [ctx.dst(x, "b32") for x in _regs(d)]
    pa, pb, pc, pd = (_QP_PLACE[k] for k in (("a", lay[0]), ("b", lay[1]), ("c", c_type), ("c", d_type)))

    def lanes(regs, warps, words=False):  # (W, 32, elements): each register's 16-bit halves in order, or its word
        w = np.stack([r().reshape(-1, 32)[warps] for r in regs], axis=-1)
        return w if words else w.view(np.uint16)

    def run(m):
        warps = ctx.warps(m, st)
        A, B = _qp_matrix(lanes(ra, warps), pa, (8, 4)), _qp_matrix(lanes(rb, warps), pb, (4, 8))
        C = _qp_matrix(lanes(rc, warps, c_type == "f32"), pc, (8, 8))
        D = _m884_f16(A, B, C, d_type)[:, :, pd[0], pd[1]]  # (W, 4, 8, E) back in fragment order
        out = np.zeros((D.shape[0], 32, D.shape[-1]), D.dtype)
        out[:, _QP_LANE] = D
        words = np.ascontiguousarray(out).view(np.uint32)
        for i, w in enumerate(ws):
            _scatter(ctx, warps, np.ascontiguousarray(words[..., i]), w, m)
    return run


_F64_SHAPES = {"m8n8k4": (8, 4), "m16n8k4": (16, 4), "m16n8k8": (16, 8), "m16n8k16": (16, 16)}  # shape -> (M, K)


def _f64_place(lane: np.ndarray, v: np.ndarray, operand: str) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of f64 fragment register v of `lane` (PTX ISA; m8n8k4 is the m16n8 formula's first half): A
    (g + 8 (v & 1), t + 4 (v >> 1)), B (t + 4 v, g), C and D (g + 8 (v >> 1), 2 t + (v & 1))."""
    g, t = lane >> 2, lane & 3
    if operand == "a":
        return g + 8 * (v & 1), t + 4 * (v >> 1)
    if operand == "b":
        return t + 4 * v, g
    return g + 8 * (v >> 1), 2 * t + (v & 1)


def fma_chain_f64(A: np.ndarray, B: np.ndarray, C: np.ndarray, mode: str = "rn") -> np.ndarray:
    """f64 bits (uint64) of C + A·B as DMMA gives it: fmas chained in k order from C, each rounded in `mode` (A (W,
    M, K), B (W, K, N), C (W, M, N))."""
    D = C
    for i in range(A.shape[2]):
        D = fma_f64_bits(np.broadcast_to(A[:, :, i:i + 1], D.shape), np.broadcast_to(B[:, i:i + 1, :], D.shape), D,
                         mode)
    return D


def _mma_f64(ctx, st, parts):
    """mma.sync f64 (m8n8k4, and sm_90's m16n8k4 / k8 / k16): D = C + A·B as chained fma.rn.f64 in k order from C
    (the model the corpus's `mma_f64_*` entries pin), one f64 per register, fragments as _f64_place."""
    shape = next((p for p in parts if p in _F64_SHAPES), None)
    if shape is None or {"row", "col"} - set(parts) or [p for p in parts if p in _MMA_TYPES] != ["f64"] * 4:
        ctx.unsupported(st, f"{'.'.join(parts)} (f64 mma.sync is modelled for m8n8k4 and m16n8k4 / k8 / k16, "
                            ".row.col)")
    m, k = _F64_SHAPES[shape]
    d, a, b, c = st.operands[:4]
    for what, op, want in (("D", d, m // 4), ("A", a, m * k // 32), ("B", b, k // 4), ("C", c, m // 4)):
        if len(_regs(op)) != want:
            ctx.fail_static(st, f"{what} of {shape} f64 is {want} registers per thread, got {len(_regs(op))}")
    ra, rb, rc = ([ctx.src_full(x, "b64") for x in _regs(o)] for o in (a, b, c))
    ws = [ctx.dst(x, "b64") for x in _regs(d)]
    lane = np.arange(32)[:, None]
    pa, pb, pc = (_f64_place(lane, np.arange(n)[None, :], o) for n, o in ((len(ra), "a"), (len(rb), "b"),
                                                                           (len(rc), "c")))

    def gather(regs, warps, place, shape_):
        out = np.zeros((len(warps), *shape_), np.uint64)
        out[:, place[0], place[1]] = np.stack([r().reshape(-1, 32)[warps] for r in regs], axis=-1)
        return out

    def run(mask):
        warps = ctx.warps(mask, st)
        A, B = gather(ra, warps, pa, (m, k)), gather(rb, warps, pb, (k, 8))
        D = gather(rc, warps, pc, (m, 8))
        D = fma_chain_f64(A, B, D)
        out = D[:, pc[0], pc[1]]  # (W, 32, registers)
        for i, w in enumerate(ws):
            _scatter(ctx, warps, np.ascontiguousarray(out[..., i]), w, mask)
    return run


_SP_TYPES = {"f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1, "tf32": 4, "s4": 0.5, "u4": 0.5}  # bytes
_SP_K = {4: ("m16n8k8", "m16n8k16"), 2: ("m16n8k16", "m16n8k32"), 1: ("m16n8k32", "m16n8k64"),
         0.5: ("m16n8k64", "m16n8k128")}  # shapes by element bytes
_SP_UNIT = {4: 2.0, 2: 1.0, 1: 1.0, 0.5: 0.5}  # K in the metadata's units: 16-bit halves (tf32), elements, pairs


def _sp_columns(meta: np.ndarray, k: int, esize: int, sel: int) -> np.ndarray:
    """B rows (W, 16, K/2) that a 2:4 sparse A's compressed columns multiply, from the metadata words (W, 32) and
    the sparsity selector (as the H100 corpus's probes pin them): chunk j (dense k 4j..4j+3) of row r = g + 8h
    takes the nibble (i0 | i1 << 2: its two non-zero k, compressed columns 2j, 2j + 1) at position x % 8 of lane
    4g + sel·K/16 + x // 8, x = (j // c)·2c + h·c + j % c, c = 4 for 16-bit and 8 for 8-bit elements; tf32 (1:2)
    reads K as 2K 16-bit halves, a pair (0, 1) or (2, 3) naming one element; 4-bit elements (4:8) as K/2 8-bit
    pairs."""
    if esize == 4:
        return _sp_columns(meta, 2 * k, 2, sel)[..., 0::2] // 2
    if esize == 0.5:  # s4 / u4 (4:8): the 8-bit layout over pairs of elements, both of a kept pair kept
        units = _sp_columns(meta, k // 2, 1, sel)
        return np.stack([2 * units, 2 * units + 1], axis=-1).reshape(units.shape[0], 16, k // 2)
    c, nch = 8 // esize, k // 4
    r, j = np.arange(16)[:, None], np.arange(nch)[None, :]
    x = (j // c) * 2 * c + (r // 8) * c + j % c
    lane = 4 * (r % 8) + sel * (k // 16) + x // 8
    nib = (meta[:, lane] >> (4 * (x % 8)).astype(np.uint32)) & np.uint32(0xF)  # (W, 16, K/4)
    pick = np.stack([nib & 3, nib >> 2], axis=-1).astype(np.int64)
    return (4 * j[..., None] + pick).reshape(meta.shape[0], 16, k // 2)


def _sp_form(name: str, kc: int) -> Form:
    """A one-row form over kc compressed columns: the dense form's datapath, one step over the selected products
    (16-bit and tf32: one group of K/2, as the corpus shows; 8-bit: the FP8 lowering's two HMMA.SP steps from +0
    over the low and high bytes of each A register, then C added)."""
    f = _FORMS[name]
    groups = (tuple(range(kc)),) if f.operands_as is None else tuple(
        tuple(x for x in range(kc) if (x % 4 < 2) == low) for low in (True, False))
    return replace(f, name=f"{name} (sparse)", m=1, k=kc, groups=groups)


def _mma_sp(ctx, st, parts):
    """mma.sp{::ordered_metadata}.sync m16n8k16 / k32 f16 / bf16 and m16n8k32 / k64 e4m3 / e5m2 / s8 / u8 with 2:4
    sparse A: the compressed A (dense layout of half the K), B (the dense B layout continued over K), metadata and
    selector as _sp_columns; each row's D is the dense form's arithmetic over its selected products (integers: the
    exact sum, wrapped or clamped)."""
    shape = next((p for p in parts if p.startswith("m16n8")), "")
    types = [p for p in parts if p in _MMA_TYPES]
    esize = _SP_TYPES.get(types[1]) if len(types) == 4 else None
    ops = st.operands
    if esize is None or _SP_TYPES.get(types[2]) != esize or shape not in _SP_K[esize] or types[0] != types[3] or \
            {"row", "col"} - set(parts) or len(ops) != 6:
        ctx.unsupported(st, f"{'.'.join(parts)} (mma.sp is modelled for m16n8k16 / k32 f16 / bf16, m16n8k32 / k64 "
                            "e4m3 / e5m2 / s8 / u8, m16n8k64 / k128 s4 / u4 and m16n8k8 / k16 tf32, with a metadata "
                            "register and a selector)")
    k = int(shape.split("k")[1])
    sels = tuple(range(4 // int(k * _SP_UNIT[esize] // 16)))  # the quad's lanes holding metadata: 1, 2 or 4
    if not isinstance(ops[5], Imm) or ops[5].value not in sels:
        got = ops[5].text if isinstance(ops[5], Imm) else "a register"
        ctx.fail_static(st, f"the sparsity selector of sparse {shape} {types[1]} must be an immediate in "
                            f"{', '.join(map(str, sels))}, got {got}")
    sel, kc = int(ops[5].value), k // 2
    integer = types[0] == "s32"
    if not integer:
        step_k = {4: 8, 2: 16, 1: 32}[esize]  # K of the dense form whose arithmetic a row's kept products take
        name = f"mma.m16n8k{step_k}.{types[0]}.{types[1]}.{types[2]}"
        if name not in _FORMS:
            ctx.unsupported(st, f"{'.'.join(parts)} (no dense {name[4:]} form to take the arithmetic from)")
        if ctx.model != "hopper":
            ctx.unsupported(st, f"{'.'.join(parts)} under numerics {ctx.model!r} (only a Hopper model exists)")
        if esize == 1 and types[0] == "f16":
            ctx.unsupported(st, f"{'.'.join(parts)} (sm_90 has no FP8 mma.sp to f16; ptxas rejects it)")
        form = _sp_form(name, kc)
    elif types[1] not in _INT_BYTES or types[2] not in _INT_BYTES:
        ctx.unsupported(st, f"{'.'.join(parts)} (an s32 mma.sp takes s8 / u8 or s4 / u4 operands)")
    d, a, b, c, e = ops[:5]
    nab, ncd = int(k * esize // 16), 2 if types[0] == "f16" else 4  # A and B registers; C and D
    for what, op, want in (("D", d, ncd), ("A", a, nab), ("B", b, nab), ("C", c, ncd)):
        if len(_regs(op)) != want:
            ctx.fail_static(st, f"{what} of sparse {shape} {types[1]} is {want} registers per thread, got "
                                f"{len(_regs(op))}")
    ra, rb, rc = ([ctx.src_full(x, "b32") for x in _regs(o)] for o in (a, b, c))
    re_ = ctx.src_full(e, "b32")
    ws = [ctx.dst(x, "b32") for x in _regs(d)]
    sat = "satfinite" in parts

    def run(m):
        warps = ctx.warps(m, st)
        A = _gather_a([r().reshape(-1, 32)[warps] for r in ra], esize)  # (W, 16, K/2) compressed
        B = _gather_b([r().reshape(-1, 32)[warps] for r in rb], esize)  # (W, K, 8)
        cs = [r().reshape(-1, 32)[warps] for r in rc]
        C = _gather_c32(cs) if ncd == 4 else _gather_c(cs)
        cols = _sp_columns(re_().reshape(-1, 32)[warps], k, esize, sel)
        Bg = np.take_along_axis(B[:, None], cols[..., None], axis=2)  # (W, 16, K/2, 8): row r's B rows
        if integer:
            D = s32_sum(C, np.einsum("wrk,wrkn->wrn", _int_values(A, types[1]), _int_values(Bg, types[2])), sat)
        else:
            D = tc_mma(form, A[:, :, None], Bg, C[:, :, None])[:, :, 0]
        _store_d(ctx, warps, ws, D, m)
    return run


def b_mma(ctx, st, parts):
    if parts[1].startswith("sp"):
        return _mma_sp(ctx, st, parts)
    if "f64" in parts:
        return _mma_f64(ctx, st, parts)
    if "m8n8k4" in parts:
        return _mma_m884(ctx, st, parts)
    esize, fn = _mma_model(ctx, st, parts)
    d, a, b, c = st.operands[:4]
    ra = [ctx.src_full(x, "b32") for x in _regs(a)]
    rb = [ctx.src_full(x, "b32") for x in _regs(b)]
    rc = [ctx.src_full(x, "b32") for x in _regs(c)]
    ws = [ctx.dst(x, "b32") for x in _regs(d)]
    f32 = next(p for p in parts if p in _MMA_TYPES) != "f16"  # 32-bit D registers (f32, s32)

    def run(m):
        warps = ctx.warps(m, st)
        A = _gather_a([r().reshape(-1, 32)[warps] for r in ra], esize)
        B = _gather_b([r().reshape(-1, 32)[warps] for r in rb], esize)
        cs = [r().reshape(-1, 32)[warps] for r in rc]
        _store_d(ctx, warps, ws, fn(A, B, _gather_c32(cs) if f32 else _gather_c(cs)), m)
    return run


BUILDERS = {"movmatrix": b_movmatrix, "ldmatrix": b_ldmatrix, "stmatrix": b_stmatrix, "mma": b_mma}
