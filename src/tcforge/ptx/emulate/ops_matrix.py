"""Warp-wide matrix instructions: movmatrix, ldmatrix, stmatrix (m8n8 b16, x1/x2/x4, .trans) and mma.sync through
tcforge.numerics (m16n8k32 e4m3 -> f16 in the chosen model; m16n8k16 f16 -> f16 on Hopper). Fragment layouts are
the PTX ISA's: lane = 4 * groupID + threadID_in_group."""

from __future__ import annotations

import numpy as np

from tcforge import numerics as nx
from tcforge.numerics.hmma import mma_m16n8k16_f16_f16
from tcforge.ptx.emulate.ops_mem import _access, address
from tcforge.ptx.operands import Vec


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


def _gather_a(regs, esize):
    """A fragment (4 regs of (W, 32) words) -> (W, 16, 8 * 4 / esize) elements [row, k]."""
    per = 4 // esize
    dt = np.uint8 if esize == 1 else np.uint16
    blocks = [np.ascontiguousarray(r).view(dt).reshape(r.shape[0], 8, 4 * per) for r in regs]
    top = np.concatenate([blocks[0], blocks[2]], axis=2)
    bot = np.concatenate([blocks[1], blocks[3]], axis=2)
    return np.concatenate([top, bot], axis=1)


def _gather_b(regs, esize):
    """B fragment (2 regs) -> (W, K, 8) [k, col]."""
    per = 4 // esize
    dt = np.uint8 if esize == 1 else np.uint16
    blocks = [np.ascontiguousarray(r).view(dt).reshape(r.shape[0], 8, 4 * per) for r in regs]
    return np.concatenate(blocks, axis=2).transpose(0, 2, 1)


def _gather_c(regs):
    """f16 C fragment (2 regs) -> (W, 16, 8)."""
    return np.concatenate([_halves(r).reshape(r.shape[0], 8, 8) for r in regs], axis=1)


def b_mma(ctx, st, parts):
    shape = next((p for p in parts if p.startswith("m16n8") or p.startswith("m8n8")), "")
    types = [p for p in parts if p in ("f16", "e4m3", "e5m2", "bf16", "f32", "s8", "u8", "tf32", "f64", "s32")]
    d, a, b, c = st.operands[:4]
    if shape == "m16n8k32" and types == ["f16", "e4m3", "e4m3", "f16"]:
        esize, fn = 1, (lambda A, B, C: nx.mma_m16n8k32_e4m3_f16(A, B, C, ctx.model))
    elif shape == "m16n8k16" and types == ["f16", "f16", "f16", "f16"]:
        if ctx.model != "hopper":
            ctx.unsupported(st, "mma.m16n8k16.f16 under numerics 'ada' (only a Hopper model exists)")
        esize, fn = 2, mma_m16n8k16_f16_f16
    else:
        ctx.unsupported(st, f"{'.'.join(parts)} (tcforge.numerics has no model of this shape and type)")
    ra = [ctx.src_full(x, "b32") for x in _regs(a)]
    rb = [ctx.src_full(x, "b32") for x in _regs(b)]
    rc = [ctx.src_full(x, "b32") for x in _regs(c)]
    ws = [ctx.dst(x, "b32") for x in _regs(d)]

    def run(m):
        warps = ctx.warps(m, st)
        A = _gather_a([r().reshape(-1, 32)[warps] for r in ra], esize)
        B = _gather_b([r().reshape(-1, 32)[warps] for r in rb], esize)
        C = _gather_c([r().reshape(-1, 32)[warps] for r in rc])
        D = fn(A, B, C)  # (W, 16, 8)
        for i, w in enumerate(ws):
            _scatter(ctx, warps, _words(D[:, 8 * i:8 * i + 8].reshape(-1, 32, 2)), w, m)
    return run


BUILDERS = {"movmatrix": b_movmatrix, "ldmatrix": b_ldmatrix, "stmatrix": b_stmatrix, "mma": b_mma}
