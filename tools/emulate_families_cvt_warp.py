"""The conversion, warp (shfl, vote, match, redux) and atomic (atom, red; global and shared) op families."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.ops_sync import shfl_source
from tools.emulate_families_ptx import (
    F16_EDGES,
    F32_EDGES,
    F64_EDGES,
    MODES,
    Family,
    Kernel,
    Opnd,
    align,
    bf16s,
    bitmask,
    choose,
    f16s,
    f32s,
    f64s,
    float_triples,
    ints,
    rbits,
    type_width,
)

# ---- conversion families ---------------------------------------------------------------------------------------------

INT8 = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")


def _range(t: str) -> tuple[int, int]:
    w = type_width(t)
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)


def _reg_w(t: str) -> int:
    return max(16, type_width(t))


def _int_sources(k: Kernel, rng) -> dict:
    return {t: k.operand(t, _reg_w(t), ints(rng, k.threads, type_width(t)), t) for t in INT8}


def fam_cvt_int(rng) -> Family:
    """cvt between every pair of integer types (.sat where it can saturate; 8-bit results in wider registers)."""
    k = Kernel("cvt_int", 2048)
    src = _int_sources(k, rng)
    for dt in INT8:
        for at in INT8:
            if dt == at:
                continue
            k.inst(f"cvt.{dt}.{at}", _reg_w(dt), [src[at]])
            lo_d, hi_d = _range(dt)
            lo_s, hi_s = _range(at)
            if lo_s < lo_d or hi_s > hi_d:
                k.inst(f"cvt.sat.{dt}.{at}", _reg_w(dt), [src[at]])
    for dt, at in (("s8", "s32"), ("u8", "s32"), ("s16", "u32"), ("s8", "u64")):
        k.inst(f"cvt.{dt}.{at}", 32, [src[at]], label=f"cvt.{dt}.{at} into b32")
        k.inst(f"cvt.sat.{dt}.{at}", 32, [src[at]], label=f"cvt.sat.{dt}.{at} into b32")
        k.inst(f"cvt.{dt}.{at}", 64, [src[at]], label=f"cvt.{dt}.{at} into b64")
    return k.family()


F2I_F32 = [0x3F000000, 0x3FC00000, 0x40200000, 0xBF000000, 0xBFC00000, 0x42FF0000, 0x43000000, 0x42FF8000,
           0xC3000000, 0xC3008000, 0xC3010000, 0x437F0000, 0x437F8000, 0x43800000, 0x46FFFE00, 0x47000000,
           0x46FFFF00, 0xC7000000, 0xC7000080, 0x477FFF00, 0x477FFF80, 0x47800000, 0x4EFFFFFF, 0x4F000000,
           0xCF000000, 0xCF000001, 0x4F7FFFFF, 0x4F800000, 0x5EFFFFFF, 0x5F000000, 0xDF000000, 0xDF000001,
           0x5F7FFFFF, 0x5F800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000001,
           0x80000001, 0x00800000, 0x3EFFFFFF, 0x3F7FFFFF, 0xBF7FFFFF, 0x4B000001, 0xCB000001]
F2I_F64 = [0x3FE0000000000000, 0x3FF8000000000000, 0xBFE0000000000000, 0x41DFFFFFFFC00000, 0x41DFFFFFFFE00000,
           0x41E0000000000000, 0xC1E0000000000000, 0xC1E0000000200000, 0xC1E0000000100000, 0x41EFFFFFFFE00000,
           0x41EFFFFFFFF00000, 0x41F0000000000000, 0x43DFFFFFFFFFFFFF, 0x43E0000000000000, 0xC3E0000000000000,
           0xC3E0000000000001, 0x43EFFFFFFFFFFFFF, 0x43F0000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
           0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x0000000000000001, 0x40DFFFE000000000,
           0x40E0000000000000, 0xC0E0001000000000, 0x406FF00000000000, 0x4070000000000000, 0xC060100000000000,
           0x4330000000000001, 0x3FDFFFFFFFFFFFFF, 0x40EFFFF000000000, 0x40F0000000000000]


def _float_sources(k: Kernel, rng, f32_edges=F32_EDGES, f64_edges=F64_EDGES) -> dict:
    n = k.threads
    return {"f16": k.operand("f16", 16, f16s(rng, n), "f16"), "bf16": k.operand("bf16", 16, bf16s(rng, n), "bf16"),
            "f32": k.operand("f32", 32, f32s(rng, n, f32_edges), "f32"),
            "f64": k.operand("f64", 64, f64s(rng, n, f64_edges), "f64")}


def fam_cvt_f2i(rng) -> Family:
    """cvt from f16/bf16/f32/f64 to every integer type with rni/rzi/rmi/rpi, .ftz for f32, .sat."""
    k = Kernel("cvt_f2i", 2048)
    src = _float_sources(k, rng, F32_EDGES + F2I_F32 * 3, F64_EDGES + F2I_F64 * 3)
    for at, a in src.items():
        for dt in INT8:
            if at == "bf16" and type_width(dt) == 8:
                continue  # ptxas: no bf16 <-> 8-bit conversions
            for mode in ("rni", "rzi", "rmi", "rpi"):
                k.inst(f"cvt.{mode}.{dt}.{at}", _reg_w(dt), [a])
            if at == "f32":
                k.inst(f"cvt.rzi.ftz.{dt}.f32", _reg_w(dt), [a])
        if at != "bf16":  # ptxas: no .sat with a bf16 source
            k.inst(f"cvt.rni.sat.s32.{at}", 32, [a])
            k.inst(f"cvt.rzi.sat.u16.{at}", 16, [a])
    return k.family()


def fam_cvt_i2f(rng) -> Family:
    """cvt from every integer type to f16/bf16/f32/f64 with rn/rz/rm/rp."""
    k = Kernel("cvt_i2f", 2048)
    src = _int_sources(k, rng)
    for at in INT8:
        for dt, w in (("f16", 16), ("bf16", 16), ("f32", 32), ("f64", 64)):
            if dt == "bf16" and type_width(at) == 8:
                continue  # ptxas: no bf16 <-> 8-bit conversions
            for mode in MODES:
                k.inst(f"cvt.{mode}.{dt}.{at}", w, [src[at]])
    return k.family()


def fam_cvt_ff(rng) -> Family:
    """cvt between f16/bf16/f32/f64 with rounding modes, ftz, sat, relu, satfinite; rounding to integral values."""
    k = Kernel("cvt_ff", 2048, version="8.1")
    src = _float_sources(k, rng)
    f16, bf16, f32, f64 = src["f16"], src["bf16"], src["f32"], src["f64"]
    for mode in MODES:
        for mods in ("", ".ftz", ".sat", ".ftz.sat"):
            k.inst(f"cvt.{mode}{mods}.f16.f32", 16, [f32])
            k.inst(f"cvt.{mode}{mods}.f32.f64", 32, [f64])
        k.inst(f"cvt.{mode}.f16.f64", 16, [f64])
        k.inst(f"cvt.{mode}.bf16.f32", 16, [f32])
        k.inst(f"cvt.{mode}.bf16.f64", 16, [f64])
        k.inst(f"cvt.{mode}.bf16.f16", 16, [f16])
        k.inst(f"cvt.{mode}.f16.bf16", 16, [bf16])
    for mode in ("rn", "rz"):
        for mods in (".relu", ".satfinite", ".relu.satfinite"):
            k.inst(f"cvt.{mode}{mods}.f16.f32", 16, [f32])
            k.inst(f"cvt.{mode}{mods}.bf16.f32", 16, [f32])
    for op, w, a in (("cvt.f32.f16", 32, f16), ("cvt.ftz.f32.f16", 32, f16), ("cvt.f64.f16", 64, f16),
                     ("cvt.f32.bf16", 32, bf16), ("cvt.f64.bf16", 64, bf16), ("cvt.f64.f32", 64, f32),
                     ("cvt.ftz.f64.f32", 64, f32), ("cvt.ftz.f32.f32", 32, f32), ("cvt.sat.f32.f32", 32, f32),
                     ("cvt.ftz.sat.f32.f32", 32, f32), ("cvt.sat.f64.f64", 64, f64)):
        k.inst(op, w, [a])
    for mode in ("rni", "rzi", "rmi", "rpi"):
        k.inst(f"cvt.{mode}.f32.f32", 32, [f32])
        k.inst(f"cvt.{mode}.ftz.f32.f32", 32, [f32])
        k.inst(f"cvt.{mode}.f64.f64", 64, [f64])
        k.inst(f"cvt.{mode}.f16.f16", 16, [f16])
        k.inst(f"cvt.{mode}.bf16.bf16", 16, [bf16])
    return k.family()


E8_F16 = [0x5F00, 0x5F40, 0x5F3F, 0x5F41, 0x5F80, 0xDF40, 0x7B00, 0x7B80, 0x7B7F, 0x7B81, 0x7BFF, 0xFB80, 0x7C00,
          0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0x0001, 0x8001, 0x1800, 0x1C00, 0x1A00, 0x1E00, 0x0100, 0x0080, 0x0180,
          0x3C40, 0x3CC0, 0x3C80, 0x3D00, 0x3900, 0x2000, 0x1400, 0x1200, 0x0000, 0x8000, 0x4000, 0x5C00, 0x5E00]


def fam_cvt_pack(rng) -> Family:
    """f16x2/bf16x2 from two f32 (rn/rz, relu, satfinite); e4m3x2/e5m2x2 from f16x2 or two f32 and back (relu)."""
    n = 2048
    k = Kernel("cvt_pack", n, version="8.1")
    a = k.operand("a", 32, f32s(rng, n, F32_EDGES + F2I_F32), "f32")
    b = k.operand("b", 32, f32s(rng, n, F32_EDGES + F2I_F32), "f32")
    lo, hi = f16s(rng, n, F16_EDGES + E8_F16 * 4), f16s(rng, n, F16_EDGES + E8_F16 * 4)
    h = k.operand("h", 32, lo.astype(np.uint64) | hi.astype(np.uint64) << np.uint64(16), "f16x2")
    e = k.operand("e", 16, rbits(rng, n, 16), "b16")
    for t in ("f16x2", "bf16x2"):
        for mode in ("rn", "rz"):
            for mods in ("", ".relu", ".satfinite", ".relu.satfinite"):
                k.inst(f"cvt.{mode}{mods}.{t}.f32", 32, [a, b])
    for t in ("e4m3x2", "e5m2x2"):
        for relu in ("", ".relu"):
            k.inst(f"cvt.rn.satfinite{relu}.{t}.f16x2", 16, [h])
            k.inst(f"cvt.rn.satfinite{relu}.{t}.f32", 16, [a, b])
            k.inst(f"cvt.rn{relu}.f16x2.{t}", 32, [e])
    return k.family()


# ---- warp families -------------------------------------------------------------------------------------------------

def _member_masks(rng, warps: int) -> np.ndarray:
    """One member mask per warp: full warps, random subsets, single lanes, contiguous runs, alternate lanes."""
    m = np.empty(warps, np.uint64)
    for i in range(warps):
        kind = i % 6
        if kind == 0:
            m[i] = 0xFFFFFFFF
        elif kind == 1:
            m[i] = 1 << int(rng.integers(0, 32))
        elif kind == 2:
            lo, ln = int(rng.integers(0, 31)), int(rng.integers(1, 33))
            m[i] = (((1 << ln) - 1) << lo) & 0xFFFFFFFF or 1
        elif kind == 3:
            m[i] = 0x55555555 if rng.integers(0, 2) else 0xAAAAAAAA
        else:
            bits = rng.random(32) < rng.uniform(0.3, 0.95)
            bits[int(rng.integers(0, 32))] = True
            m[i] = int((bits * (1 << np.arange(32, dtype=np.uint64))).sum())
    return m


SHFL_C = {"up": [0x0, 0x1800, 0x1C00, 0x1F00, 0x0A05, 0x1003],
          "down": [0x1F, 0x181F, 0x1C1F, 0x101F, 0x0007, 0x0A15, 0x1F1F],
          "bfly": [0x1F, 0x181F, 0x1C1F, 0x0011, 0x0A15, 0x1F1F],
          "idx": [0x1F, 0x181F, 0x1C1F, 0x101F, 0x000B, 0x0A15, 0x1F1F]}


def _warp_setup(k: Kernel, rng):
    n = k.threads
    warps = n // 32
    masks = _member_masks(rng, warps)
    lane = np.arange(n) % 32
    member = np.repeat(masks, 32)
    inm = ((member >> lane.astype(np.uint64)) & np.uint64(1)).astype(bool)
    m = k.operand("member", 32, member, "u")
    pin = k.pred_operand("in_member", inm)
    pfull = k.pred_operand("full", member == 0xFFFFFFFF)
    return lane, member, inm, m, pin, pfull


def fam_shfl(rng) -> Family:
    """shfl.sync up/down/bfly/idx, clamps and segment masks, random member masks, lane operands, p, in a branch."""
    n = 2048
    k = Kernel("shfl", n, block=256)
    lane, member, inm, m, pin, pfull = _warp_setup(k, rng)
    a = k.operand("a", 32, rbits(rng, n, 32), "u")
    for mode, cs in SHFL_C.items():
        for c in cs:
            b = rng.integers(0, 32, n).astype(np.int64)
            for _ in range(12):
                j, _ok = shfl_source(mode, lane, b, c)
                src_in = ((member >> j.astype(np.uint64)) & np.uint64(1)).astype(bool)
                bad = inm & ~src_in
                if not bad.any():
                    break
                wide = rng.integers(0, 1 << 32, n).astype(np.int64)
                b = np.where(bad, np.where(rng.random(n) < 0.8, rng.integers(0, 32, n), wide), b)
            j, _ok = shfl_source(mode, lane, b, c)
            src_in = ((member >> j.astype(np.uint64)) & np.uint64(1)).astype(bool)
            b = np.where(inm & ~src_in, lane if mode == "idx" else 0, b)
            bo = k.operand(f"b_{mode}_{c:#x}", 32, b.astype(np.uint64), "u")
            d, p = k.reg(32), k.reg(1)
            k.emit(f"@{pin} shfl.sync.{mode}.b32 {d}|{p}, {a}, {bo}, {c:#x}, {m};")
            k.store(f"shfl.sync.{mode}.b32 d (c={c:#x})", d, 32, [a, bo, m], guard=pin.reg)
            k.store(f"shfl.sync.{mode}.b32 p (c={c:#x})", p, 1, [a, bo, m], guard=pin.reg)
        for bimm in (1, 3, 17):
            d = k.reg(32)
            k.emit(f"@{pfull} shfl.sync.{mode}.b32 {d}, {a}, {bimm}, {cs[0]:#x}, 0xffffffff;")
            k.store(f"shfl.sync.{mode}.b32 {bimm}, {cs[0]:#x}, full", d, 32, [a], guard=pfull.reg)
    b = k.operand("b_branch", 32, np.where(inm, lane, 0).astype(np.uint64), "u")
    d = k.reg(32)
    k.emit(f"@!{pin} bra SKIP_SHFL;", f"shfl.sync.idx.b32 {d}, {a}, {b}, 0x1f, {m};")
    k.store("shfl.sync.idx.b32 in a branch", d, 32, [a, b, m])
    k.emit("SKIP_SHFL:")
    return k.family()


def fam_vote(rng) -> Family:
    """vote.sync ballot/any/all/uni (!p), match.any/all.sync, redux.sync on random member masks; activemask."""
    n = 2048
    k = Kernel("vote", n, block=256)
    lane, member, inm, m, pin, pfull = _warp_setup(k, rng)
    warps = n // 32
    pat = rng.integers(0, 5, warps).repeat(32)
    rnd = rng.random(n) < rng.uniform(0.1, 0.9, warps).repeat(32)
    one = lane == rng.integers(0, 32, warps).repeat(32)
    pv = np.select([pat == 0, pat == 1, pat == 2, pat == 3], [np.ones(n, bool), np.zeros(n, bool), one, ~one], rnd)
    p = k.pred_operand("p", pv)
    small = rng.integers(0, 4, n).astype(np.uint64)
    v = k.operand("v", 32, choose(rng, n, [(0.5, small), (0.5, ints(rng, n, 32))]), "u")
    v64 = k.operand("v64", 64, choose(rng, n, [(0.5, small), (0.5, ints(rng, n, 64))]), "u")
    for neg in ("", "!"):
        for mode in ("ballot", "any", "all", "uni"):
            t, w = ("b32", 32) if mode == "ballot" else ("pred", 1)
            d = k.reg(w)
            k.emit(f"@{pin} vote.sync.{mode}.{t} {d}, {neg}{p}, {m};")
            k.store(f"vote.sync.{mode}.{t} {neg}p", d, w, [p, m], guard=pin.reg)
            d = k.reg(w)
            k.emit(f"@{pfull} vote.sync.{mode}.{t} {d}, {neg}{p}, 0xffffffff;")
            k.store(f"vote.sync.{mode}.{t} {neg}p, full", d, w, [p], guard=pfull.reg)
    for t, x in (("b32", v), ("b64", v64)):
        d = k.reg(32)
        k.emit(f"@{pin} match.any.sync.{t} {d}, {x}, {m};")
        k.store(f"match.any.sync.{t}", d, 32, [x, m], guard=pin.reg)
        d, q = k.reg(32), k.reg(1)
        k.emit(f"@{pin} match.all.sync.{t} {d}|{q}, {x}, {m};")
        k.store(f"match.all.sync.{t} d", d, 32, [x, m], guard=pin.reg)
        k.store(f"match.all.sync.{t} p", q, 1, [x, m], guard=pin.reg)
    for op in ("add.u32", "add.s32", "min.u32", "min.s32", "max.u32", "max.s32", "and.b32", "or.b32", "xor.b32"):
        d = k.reg(32)
        k.emit(f"@{pin} redux.sync.{op} {d}, {v}, {m};")
        k.store(f"redux.sync.{op}", d, 32, [v, m], guard=pin.reg)
    d = k.reg(32)
    k.emit("bar.warp.sync -1;", f"activemask.b32 {d};")  # reconverged: every lane of the (full) warp
    k.store("activemask.b32 converged", d, 32, [])
    d = k.reg(32)
    k.emit(f"@!{pin} bra SKIP_ACTIVE;", f"activemask.b32 {d};")
    k.store("activemask.b32 in a branch", d, 32, [pin])
    k.emit("SKIP_ACTIVE:")
    return k.family()


# ---- atomics -------------------------------------------------------------------------------------------------------

def _atom_ops(rng, n):
    """(op.type, width, old values, operand b, operand c or None, kind) for the private-slot atomics."""
    out = []
    for t in ("u32", "s32", "u64"):
        w = type_width(t)
        out.append((f"add.{t}", w, ints(rng, n, w), ints(rng, n, w), None, t))
    for op in ("min", "max"):
        for t in ("u32", "s32", "u64", "s64"):
            w = type_width(t)
            out.append((f"{op}.{t}", w, ints(rng, n, w), ints(rng, n, w), None, t))
    for op in ("and", "or", "xor", "exch"):
        for w in (32, 64):
            out.append((f"{op}.b{w}", w, ints(rng, n, w), ints(rng, n, w), None, f"b{w}"))
    for w in (16, 32, 64):
        old = ints(rng, n, w)
        cmp = np.where(rng.random(n) < 0.5, old, ints(rng, n, w))
        out.append((f"cas.b{w}", w, old, cmp, ints(rng, n, w), f"b{w}"))
    lim = choose(rng, n, [(0.5, rng.integers(0, 20, n).astype(np.uint64)), (0.5, ints(rng, n, 32))])
    old = np.where(rng.random(n) < 0.6, (lim + rng.integers(-2, 3, n).astype(np.int64).astype(np.uint64)) &
                   np.uint64(0xFFFFFFFF), ints(rng, n, 32))
    out.append(("inc.u32", 32, old, lim, None, "u32"))
    out.append(("dec.u32", 32, old, lim, None, "u32"))
    fa, fb, _ = float_triples(rng, n, 32)
    out.append(("add.f32", 32, fa, fb, None, "f32"))
    da, db, _ = float_triples(rng, n, 64)
    out.append(("add.f64", 64, da, db, None, "f64"))
    for t, gen in (("f16", f16s), ("bf16", bf16s)):
        out.append((f"add.noftz.{t}", 16, gen(rng, n), gen(rng, n), None, t))
        lo = gen(rng, n).astype(np.uint64) | gen(rng, n).astype(np.uint64) << np.uint64(16)
        hi = gen(rng, n).astype(np.uint64) | gen(rng, n).astype(np.uint64) << np.uint64(16)
        out.append((f"add.noftz.{t}x2", 32, lo, hi, None, f"{t}x2"))
    return out


CONTENDED = [("add.u32", 32), ("add.u64", 64), ("min.s32", 32), ("max.u32", 32), ("min.u64", 64), ("max.s64", 64),
             ("and.b32", 32), ("or.b32", 32), ("xor.b64", 64), ("inc.u32", 32), ("dec.u32", 32)]


def _contended_init(rng, ctas: int) -> np.ndarray:
    acc = np.zeros((ctas, 8 * len(CONTENDED)), np.uint8)
    for i, (op, w) in enumerate(CONTENDED):
        v = ints(rng, ctas, w)
        if op in ("inc.u32", "dec.u32"):
            v = rng.integers(0, 1000, ctas).astype(np.uint64)
        acc[:, 8 * i:8 * i + 8] = v.reshape(ctas, 1).view(np.uint8)
    return acc


def _contended_atoms(k: Kernel, rng, space: str, row: str) -> None:
    """Every thread of a CTA on the CTA's row of CONTENDED words at `row` in `space`: atom (even ops) or red (odd),
    and the meta line naming each word."""
    for i, (op, w) in enumerate(CONTENDED):
        x = _contended_operand(k, rng, i, op, w)
        if i % 2:
            k.emit(f"red.{space}.{op} [{row}+{8 * i}], {x};")
        else:
            r = k.reg(w)
            k.emit(f"atom.{space}.{op} {r}, [{row}+{8 * i}], {x};")
    k.extra_meta["acc"] = [f"{'red' if i % 2 else 'atom'}.{space}.{op} by a whole CTA"
                           for i, (op, _) in enumerate(CONTENDED)]  # p_acc: a row per CTA, 8 bytes per op


def _contended_operand(k: Kernel, rng, i: int, op: str, w: int) -> Opnd:
    n = k.threads
    if op in ("inc.u32", "dec.u32"):
        return k.operand(f"x_{op}", 32, np.full(n, 997, np.uint64), "u")
    v = ints(rng, n, w) if not op.startswith(("and", "or")) else ~(np.uint64(1) << rng.integers(0, w, n)
                                                                   .astype(np.uint64)) & np.uint64(bitmask(w))
    if op.startswith("or"):
        v = np.uint64(1) << rng.integers(0, w, n).astype(np.uint64)
    return k.operand(f"x_{op}", w, v, "u")


def fam_atom_global(rng) -> Family:
    """atom/red in global memory (and generic): every op and type on a word per thread; a CTA's reductions on one."""
    n, block = 256, 128
    k = Kernel("atom_global", n, block=block)
    for op, w, old, b, c, kind in _atom_ops(rng, n):
        bo = k.operand(f"b_{op}", w, b, kind)
        co = k.operand(f"c_{op}", w, c, kind) if c is not None else None
        rw = 16 if w == 16 else w
        for inst in ("atom", "red"):
            if inst == "red" and op.startswith(("cas", "exch")):
                continue
            off = k.slot(f"{inst}.global.{op} memory", w, [bo] + ([co] if co else []), kind, init=old)
            srcs = f"{bo}, {co}" if co else f"{bo}"
            if inst == "atom":
                r = k.reg(rw)
                k.emit(f"atom.global.{op} {r}, [%rd2+{off}], {srcs};")
                k.store(f"atom.global.{op} returned", r, w, [bo] + ([co] if co else []), kind)
            else:
                k.emit(f"red.global.{op} [%rd2+{off}], {srcs};")
    for op, w in (("add.u32", 32), ("max.s64", 64)):
        bo = k.operand(f"b_generic_{op}", w, ints(rng, n, w), op[-3:])
        off = k.slot(f"atom.{op} generic memory", w, [bo], init=ints(rng, n, w))
        g, r = k.reg(64), k.reg(w)
        k.emit(f"cvta.global.u64 {g}, %rd2;", f"atom.{op} {r}, [{g}+{off}], {bo};")
        k.store(f"atom.{op} generic returned", r, w, [bo])
    ctas = n // block
    k.extra["p_acc"] = _contended_init(rng, ctas)
    acc, t = k.reg(64), k.reg(64)
    k.emit(f"ld.param.u64 {acc}, [p_acc];", f"mul.wide.u32 {t}, %r2, {8 * len(CONTENDED)};",
           f"add.s64 {acc}, {acc}, {t};")
    _contended_atoms(k, rng, "global", acc)
    return k.family()


def fam_atom_shared(rng) -> Family:
    """atom/red in shared memory (and generic): every op and type on a word per thread; a CTA's reductions on one."""
    n, block = 256, 128
    k = Kernel("atom_shared", n, block=block)
    ops = _atom_ops(rng, n)
    per = align(sum(w // 8 for _, w, *_ in ops) + 16, 16)
    k.decls.append(f".shared .align 16 .b8 sm_priv[{block * per}];")
    k.decls.append(f".shared .align 16 .b8 sm_acc[{8 * len(CONTENDED)}];")
    base, t = k.reg(32), k.reg(32)
    k.emit(f"mov.u32 {base}, sm_priv;", f"mad.lo.u32 {base}, %r1, {per}, {base};")
    pos = 0
    for op, w, old, b, c, kind in ops:
        pos = align(pos, w // 8)
        bo = k.operand(f"b_{op}", w, b, kind)
        co = k.operand(f"c_{op}", w, c, kind) if c is not None else None
        oo = k.operand(f"old_{op}", w, old, kind)
        rw = 16 if w == 16 else w
        srcs = f"{bo}, {co}" if co else f"{bo}"
        ops_l = [oo, bo] + ([co] if co else [])
        for inst in ("atom", "red"):
            if inst == "red" and op.startswith(("cas", "exch")):
                continue
            k.emit(f"st.shared.b{w} [{base}+{pos}], {oo};")
            if inst == "atom":
                r = k.reg(rw)
                k.emit(f"atom.shared.{op} {r}, [{base}+{pos}], {srcs};")
                k.store(f"atom.shared.{op} returned", r, w, ops_l, kind)
            else:
                k.emit(f"red.shared.{op} [{base}+{pos}], {srcs};")
            f = k.reg(rw)
            k.emit(f"ld.shared.b{w} {f}, [{base}+{pos}];")
            k.store(f"{inst}.shared.{op} memory", f, w, ops_l, kind)
        pos += w // 8
    g, r, x = k.reg(64), k.reg(32), k.operand("b_generic", 32, ints(rng, n, 32), "u32")
    k.emit(f"cvta.shared.u64 {g}, sm_priv;", "cvt.u64.u32 %rd7, %r1;", f"mad.lo.u64 {g}, %rd7, {per}, {g};",
           f"st.u32 [{g}+{per - 8}], {x};", f"atom.add.u32 {r}, [{g}+{per - 8}], {x};")
    k.store("atom.add.u32 generic (shared) returned", r, 32, [x])
    f = k.reg(32)
    k.emit(f"ld.shared.u32 {f}, [{base}+{per - 8}];")
    k.store("atom.add.u32 generic (shared) memory", f, 32, [x])
    ctas = n // block
    k.extra["p_acc"] = _contended_init(rng, ctas)
    acc, p0 = k.reg(64), k.reg(1)
    k.emit(f"ld.param.u64 {acc}, [p_acc];", f"mul.wide.u32 %rd7, %r2, {8 * len(CONTENDED)};",
           f"add.s64 {acc}, {acc}, %rd7;", f"setp.eq.u32 {p0}, %r1, 0;", f"mov.u32 {t}, sm_acc;")
    for i in range(len(CONTENDED)):
        v = k.reg(64)
        k.emit(f"@{p0} ld.global.b64 {v}, [{acc}+{8 * i}];", f"@{p0} st.shared.b64 [{t}+{8 * i}], {v};")
    k.emit("bar.sync 0;")
    _contended_atoms(k, rng, "shared", t)
    k.emit("bar.sync 0;")
    for i in range(len(CONTENDED)):
        v = k.reg(64)
        k.emit(f"@{p0} ld.shared.b64 {v}, [{t}+{8 * i}];", f"@{p0} st.global.b64 [{acc}+{8 * i}], {v};")
    return k.family()
