"""The integer and float op families: arithmetic, bit ops, logic, comparisons; f32, f64, f16 and bf16."""

from __future__ import annotations

import numpy as np

from tools.emulate_families_ptx import (
    BF16_EDGES,
    F16_EDGES,
    MODES,
    Family,
    Kernel,
    bf16s,
    choose,
    core_edges,
    cross,
    f16s,
    f32s,
    f64s,
    float_triples,
    ints,
    rbits,
    type_width,
)

# ---- integer families ------------------------------------------------------------------------------------------------

INT_TYPES = ("u16", "s16", "u32", "s32", "u64", "s64")


def _abc(k: Kernel, rng, widths=(16, 32, 64), names="abc", nonzero: str = "") -> dict:
    """Operands a, b, c per width (edge values of a and b crossed in the first rows); `nonzero` names no-zero ones."""
    ops = {}
    for w in widths:
        cols = {x: ints(rng, k.threads, w) for x in names}
        cross([cols[names[0]], cols[names[1]]], [core_edges(w), core_edges(w)])
        for x in nonzero:
            z = cols[x] == 0
            cols[x][z] = rbits(rng, int(z.sum()), w) | np.uint64(1)
        for x in names:
            ops[x, w] = k.operand(f"{x}{w}", w, cols[x], "u")
    return ops


def fam_int_arith(rng) -> Family:
    """add sub mul mad (lo/hi/wide, sat), mul24/mad24, carry chains (.cc, addc/subc/madc), sad, dp4a/dp2a."""
    k = Kernel("int_arith", 2048)
    o = _abc(k, rng)
    for t in INT_TYPES:
        w = type_width(t)
        a, b, c = o["a", w], o["b", w], o["c", w]
        for op in ("add", "sub"):
            k.inst(f"{op}.{t}", w, [a, b])
        for mode in ("lo", "hi"):
            k.inst(f"mul.{mode}.{t}", w, [a, b])
            k.inst(f"mad.{mode}.{t}", w, [a, b, c])
        if w < 64:
            k.inst(f"mul.wide.{t}", 2 * w, [a, b])
            k.inst(f"mad.wide.{t}", 2 * w, [a, b, o["c", 2 * w]])
        k.inst(f"sad.{t}", w, [a, b, c])
    a, b, c = o["a", 32], o["b", 32], o["c", 32]
    for op in ("add.sat.s32", "sub.sat.s32", "mad.hi.sat.s32", "mul24.lo.u32", "mul24.hi.u32", "mul24.lo.s32",
               "mul24.hi.s32", "mad24.lo.u32", "mad24.hi.u32", "mad24.lo.s32", "mad24.hi.s32", "mad24.hi.sat.s32"):
        k.inst(op, 32, [a, b, c] if op.startswith("mad") else [a, b])
    for t in ("u32", "s32", "u64", "s64"):
        w = type_width(t)
        a, b, c = o["a", w], o["b", w], o["c", w]
        for first, chain in (("add.cc", "addc"), ("sub.cc", "subc")):
            d0, d1, d2, cf = (k.reg(w) for _ in range(4))
            k.emit(f"{first}.{t} {d0}, {a}, {b};", f"{chain}.cc.{t} {d1}, {c}, {a};", f"{chain}.{t} {d2}, {b}, {c};")
            k.store(f"{first}.{t}", d0, w, [a, b])
            k.store(f"{chain}.cc.{t} after {first}", d1, w, [a, b, c])
            k.store(f"{chain}.{t} after {chain}.cc", d2, w, [a, b, c])
            k.emit(f"{first}.{t} {d0}, {b}, {c};", f"{chain}.{t} {cf}, 0, 0;")
            k.store(f"{chain}.{t} 0, 0 (the flag of {first} b, c)", cf, w, [b, c])
        m0, m1, m2, cf = (k.reg(w) for _ in range(4))
        k.emit(f"mad.lo.cc.{t} {m0}, {a}, {b}, {c};", f"madc.hi.cc.{t} {m1}, {a}, {b}, {c};",
               f"madc.lo.{t} {m2}, {b}, {c}, {a};")
        k.store(f"mad.lo.cc.{t}", m0, w, [a, b, c])
        k.store(f"madc.hi.cc.{t} after mad.lo.cc", m1, w, [a, b, c])
        k.store(f"madc.lo.{t} after madc.hi.cc", m2, w, [a, b, c])
        k.emit(f"mad.hi.cc.{t} {m0}, {b}, {c}, {a};", f"addc.{t} {cf}, 0, 0;")
        k.store(f"addc.{t} 0, 0 (the flag of mad.hi.cc b, c, a)", cf, w, [a, b, c])
    a, b, c = o["a", 32], o["b", 32], o["c", 32]
    for ta in ("u32", "s32"):
        for tb in ("u32", "s32"):
            k.inst(f"dp4a.{ta}.{tb}", 32, [a, b, c])
            for mode in ("lo", "hi"):
                k.inst(f"dp2a.{mode}.{ta}.{tb}", 32, [a, b, c])
    return k.family()


def fam_int_divrem(rng) -> Family:
    """div and rem, signed and unsigned, 16/32/64-bit (no division by zero: machine-specific in PTX)."""
    k = Kernel("int_divrem", 2048)
    o = _abc(k, rng, names="ab", nonzero="b")
    for t in INT_TYPES:
        for op in ("div", "rem"):
            k.inst(f"{op}.{t}", type_width(t), [o["a", type_width(t)], o["b", type_width(t)]])
    return k.family()


def fam_int_minmax(rng) -> Family:
    """min/max (incl. .relu and the 16x2 SIMD forms), abs, neg."""
    k = Kernel("int_minmax", 2048)
    o = _abc(k, rng, names="ab")
    for t in INT_TYPES:
        w = type_width(t)
        for op in ("min", "max"):
            k.inst(f"{op}.{t}", w, [o["a", w], o["b", w]])
        if t[0] == "s":
            k.inst(f"abs.{t}", w, [o["a", w]])
            k.inst(f"neg.{t}", w, [o["a", w]])
    a, b = o["a", 32], o["b", 32]
    for op in ("min", "max"):
        for t in ("relu.s32", "u16x2", "s16x2", "relu.s16x2"):
            k.inst(f"{op}.{t}", 32, [a, b])
    return k.family()


SHIFT_EDGES = [0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257, 0x10000, 0x10001, 0x10010,
               0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFE0, 0x100020]


def fam_int_shift(rng) -> Family:
    """shl/shr (b/u/s, 16/32/64-bit) by register and immediate amounts (>= the width too), shf.l/r clamp/wrap."""
    n = 2048
    k = Kernel("int_shift", n)
    a = {w: k.operand(f"a{w}", w, ints(rng, n, w), "u") for w in (16, 32, 64)}
    b32 = k.operand("b32", 32, ints(rng, n, 32), "u")
    amount = choose(rng, n, [(0.5, rng.integers(0, 70, n).astype(np.uint64)),
                              (0.3, rng.choice(np.array(SHIFT_EDGES, np.uint64), n)), (0.2, rbits(rng, n, 32))])
    s = k.operand("s", 32, amount, "u")
    for w in (16, 32, 64):
        for op in (f"shl.b{w}", f"shr.b{w}", f"shr.u{w}", f"shr.s{w}"):
            k.inst(op, w, [a[w], s])
        for imm in (0, 1, w - 1, w, w + 1, 2 * w + 3):
            for op in (f"shl.b{w}", f"shr.u{w}", f"shr.s{w}"):
                k.inst(op, w, [a[w], imm], label=f"{op} by {imm}")
    for d in ("l", "r"):
        for mode in ("clamp", "wrap"):
            k.inst(f"shf.{d}.{mode}.b32", 32, [a[32], b32, s])
            for imm in (0, 5, 31, 32, 33):
                k.inst(f"shf.{d}.{mode}.b32", 32, [a[32], b32, imm], label=f"shf.{d}.{mode}.b32 by {imm}")
    return k.family()


def fam_int_bits(rng) -> Family:
    """bfe/bfi (register and immediate position/length), popc, clz, brev, bfind (.shiftamt), bmsk, szext."""
    n = 2048
    k = Kernel("int_bits", n)
    a = {w: k.operand(f"a{w}", w, ints(rng, n, w), "u") for w in (32, 64)}
    b = {w: k.operand(f"b{w}", w, ints(rng, n, w), "u") for w in (32, 64)}
    fields = [0, 1, 7, 8, 15, 16, 31, 32, 33, 40, 63, 64, 65, 100, 128, 200, 255]
    pos = k.operand("pos", 32, choose(rng, n, [(0.6, rng.integers(0, 70, n).astype(np.uint64)),
                                                (0.4, rng.choice(np.array(fields, np.uint64), n))]), "u")
    ln = k.operand("len", 32, choose(rng, n, [(0.6, rng.integers(0, 70, n).astype(np.uint64)),
                                               (0.4, rng.choice(np.array(fields, np.uint64), n))]), "u")
    for w in (32, 64):
        for t in (f"u{w}", f"s{w}"):
            k.inst(f"bfe.{t}", w, [a[w], pos, ln])
            for p, q in ((0, 8), (4, 12), (w - 4, 8), (w, 3), (3, 0)):
                k.inst(f"bfe.{t}", w, [a[w], p, q], label=f"bfe.{t} {p}, {q}")
        k.inst(f"bfi.b{w}", w, [a[w], b[w], pos, ln])
        for p, q in ((0, 8), (5, 12), (w - 4, 8), (w, 3), (3, 0)):
            k.inst(f"bfi.b{w}", w, [a[w], b[w], p, q], label=f"bfi.b{w} {p}, {q}")
        k.inst(f"popc.b{w}", 32, [a[w]])
        k.inst(f"clz.b{w}", 32, [a[w]])
        k.inst(f"brev.b{w}", w, [a[w]])
        for t in (f"u{w}", f"s{w}"):
            k.inst(f"bfind.{t}", 32, [a[w]])
            k.inst(f"bfind.shiftamt.{t}", 32, [a[w]])
    for mode in ("clamp", "wrap"):
        k.inst(f"bmsk.{mode}.b32", 32, [pos, ln])
        for t in ("u32", "s32"):
            k.inst(f"szext.{mode}.{t}", 32, [a[32], pos])
    return k.family()


def fam_int_prmt(rng) -> Family:
    """prmt in the generic form (sign-replicating selectors) and every mode, register and immediate selectors."""
    n = 2048
    k = Kernel("int_prmt", n)
    a = k.operand("a", 32, ints(rng, n, 32), "u")
    b = k.operand("b", 32, ints(rng, n, 32), "u")
    c = k.operand("c", 32, choose(rng, n, [(0.6, rbits(rng, n, 32)), (0.2, rbits(rng, n, 16)),
                                            (0.2, rng.integers(0, 8, n).astype(np.uint64))]), "u")
    k.inst("prmt.b32", 32, [a, b, c])
    for mode in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        k.inst(f"prmt.b32.{mode}", 32, [a, b, c])
        for sel in range(4):
            k.inst(f"prmt.b32.{mode}", 32, [a, b, sel], label=f"prmt.b32.{mode} {sel}")
    for sel in (0x3210, 0x7654, 0x0123, 0x4444, 0x8888, 0xFEDC, 0x1F2E, 0x5140, 0x12345, 0x89AB):
        k.inst("prmt.b32", 32, [a, b, sel], label=f"prmt.b32 {sel:#x}")
    return k.family()


def fam_int_logic(rng) -> Family:
    """and/or/xor/not/cnot on b16/b32/b64 and predicates, lop3 with all 256 truth tables."""
    n = 256
    k = Kernel("int_logic", n)
    o = _abc(k, rng, names="abc")
    for w in (16, 32, 64):
        a, b = o["a", w], o["b", w]
        for op in ("and", "or", "xor"):
            k.inst(f"{op}.b{w}", w, [a, b])
        for op in ("not", "cnot"):
            k.inst(f"{op}.b{w}", w, [a])
    p = k.pred_operand("p", rng.integers(0, 2, n))
    q = k.pred_operand("q", rng.integers(0, 2, n))
    for op in ("and", "or", "xor"):
        k.inst(f"{op}.pred", 1, [p, q])
    k.inst("not.pred", 1, [p])
    a, b, c = o["a", 32], o["b", 32], o["c", 32]
    for lut in range(256):
        k.inst("lop3.b32", 32, [a, b, c, lut], label=f"lop3.b32 {lut:#04x}")
    return k.family()


def fam_setp_int(rng) -> Family:
    """setp with every integer comparison and type, the .and/.or/.xor combinations and p|q, selp, slct.s32."""
    n = 2048
    k = Kernel("setp_int", n)
    o = _abc(k, rng, names="ab")
    c = k.pred_operand("c", rng.integers(0, 2, n))
    for w in (16, 32, 64):
        a, b = o["a", w], o["b", w]
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
            k.inst(f"setp.{cmp}.s{w}", 1, [a, b])
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
            k.inst(f"setp.{cmp}.u{w}", 1, [a, b])
        for cmp in ("eq", "ne"):
            k.inst(f"setp.{cmp}.b{w}", 1, [a, b])
    a, b = o["a", 32], o["b", 32]
    for bop in ("and", "or", "xor"):
        for neg in ("", "!"):
            p, q = k.reg(1), k.reg(1)
            k.emit(f"setp.lt.{bop}.s32 {p}|{q}, {a}, {b}, {neg}{c};")
            k.store(f"setp.lt.{bop}.s32 p (c={neg}c)", p, 1, [a, b, c])
            k.store(f"setp.lt.{bop}.s32 q (c={neg}c)", q, 1, [a, b, c])
    for w in (16, 32, 64):
        for t in (f"b{w}", f"u{w}", f"s{w}"):
            k.inst(f"selp.{t}", w, [o["a", w], o["b", w], c])
        k.inst(f"slct.b{w}.s32", w, [o["a", w], o["b", w], o["a", 32]])
        k.inst(f"slct.s{w}.s32", w, [o["b", w], o["a", w], o["b", 32]])
    return k.family()


# ---- float families ------------------------------------------------------------------------------------------------

CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def _f32_abc(k: Kernel, rng):
    a, b, c = float_triples(rng, k.threads, 32)
    return tuple(k.operand(x, 32, v, "f32") for x, v in zip("abc", (a, b, c), strict=True))


def fam_f32_arith(rng) -> Family:
    """f32 add/sub/mul/fma/mad in rn/rz/rm/rp with ftz, sat and both."""
    k = Kernel("f32_arith", 4096)
    a, b, c = _f32_abc(k, rng)
    for mode in MODES:
        for mods in ("", ".ftz", ".sat", ".ftz.sat"):
            for op in ("add", "sub", "mul"):
                k.inst(f"{op}.{mode}{mods}.f32", 32, [a, b])
            k.inst(f"fma.{mode}{mods}.f32", 32, [a, b, c])
    for op in ("add.f32", "sub.f32", "mul.f32", "add.ftz.f32", "mul.ftz.f32", "mul.sat.f32"):
        k.inst(op, 32, [a, b])
    k.inst("mad.rn.f32", 32, [a, b, c])
    k.inst("mad.rz.ftz.sat.f32", 32, [a, b, c])
    return k.family()


def fam_f32_div(rng) -> Family:
    """f32 div/rcp/sqrt in rn/rz/rm/rp, with and without ftz."""
    n = 2048
    k = Kernel("f32_div", n)
    a, b, _ = float_triples(rng, n, 32)
    # quotients near the ftz / subnormal boundaries and exact quotients
    sel = np.arange(600, 800)
    b[sel] = (np.float32(2.0) ** rng.integers(100, 127, len(sel)).astype(np.float32)).view(np.uint32)
    sel = np.arange(800, 1000)
    a[sel] = (b[sel].view(np.float32) * rng.integers(-300, 300, len(sel)).astype(np.float32)).view(np.uint32)
    sq = f32s(rng, n)
    sq[:400] = (np.arange(400, dtype=np.float32) ** 2).view(np.uint32)  # perfect squares
    sq[400:500] = np.arange(100, dtype=np.uint32) * 7919  # subnormals
    a, b, s = k.operand("a", 32, a, "f32"), k.operand("b", 32, b, "f32"), k.operand("s", 32, sq, "f32")
    for mode in MODES:
        for ftz in ("", ".ftz"):
            k.inst(f"div.{mode}{ftz}.f32", 32, [a, b])
            k.inst(f"rcp.{mode}{ftz}.f32", 32, [b])
            k.inst(f"sqrt.{mode}{ftz}.f32", 32, [s])
            k.inst(f"rcp.{mode}{ftz}.f32", 32, [s], label=f"rcp.{mode}{ftz}.f32 (s)")
            k.inst(f"sqrt.{mode}{ftz}.f32", 32, [a], label=f"sqrt.{mode}{ftz}.f32 (a)")
    return k.family()


def fam_f32_misc(rng) -> Family:
    """f32 min/max (ftz, NaN, xorsign.abs), abs/neg (ftz), copysign; f64 min/max/abs/neg/copysign."""
    n = 2048
    k = Kernel("f32_misc", n)
    a, b, _ = _f32_abc(k, rng)
    for op in ("min", "max"):
        for mods in ("", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs", ".NaN.xorsign.abs", ".ftz.NaN.xorsign.abs"):
            k.inst(f"{op}{mods}.f32", 32, [a, b])
    for op in ("abs.f32", "neg.f32", "abs.ftz.f32", "neg.ftz.f32"):
        k.inst(op, 32, [a])
    k.inst("copysign.f32", 32, [a, b])
    x, y, _ = float_triples(rng, n, 64)
    x, y = k.operand("x", 64, x, "f64"), k.operand("y", 64, y, "f64")
    for op in ("min.f64", "max.f64"):
        k.inst(op, 64, [x, y])
    for op in ("abs.f64", "neg.f64"):
        k.inst(op, 64, [x])
    k.inst("copysign.f64", 64, [x, y])
    return k.family()


def fam_f32_approx(rng) -> Family:
    """The MUFU approximations the emulator models: rcp/rsqrt/ex2/div .approx.f32 (ftz or not), div.full.f32."""
    n = 2048
    k = Kernel("f32_approx", n)
    a, b, _ = float_triples(rng, n, 32)
    e = choose(rng, n, [(0.5, (rng.random(n) * 300 - 160).astype(np.float32).view(np.uint32).astype(np.uint64)),
                         (0.5, f32s(rng, n).astype(np.uint64))])
    # divisors around the scalings of ptxas's sequences: |d| > 2^126, |d| < 2^-126 (subnormals too), ordinary values
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    d = choose(rng, n, [
        (0.3, (sign * (1 + rng.random(n)) * 2.0 ** rng.integers(126, 128, n)).astype(np.float32).view(np.uint32)),
        (0.3, (sign * (1 + rng.random(n)) * 2.0 ** rng.integers(-149, -125, n)).astype(np.float32).view(np.uint32)),
        (0.4, f32s(rng, n))]).astype(np.uint64)
    a, b, e = k.operand("a", 32, a, "f32"), k.operand("b", 32, b, "f32"), k.operand("e", 32, e, "f32")
    d = k.operand("d", 32, d, "f32")
    for op in ("rcp", "rsqrt"):
        k.inst(f"{op}.approx.ftz.f32", 32, [a])
        k.inst(f"{op}.approx.ftz.f32", 32, [b], label=f"{op}.approx.ftz.f32 (b)")
    k.inst("ex2.approx.ftz.f32", 32, [e])
    k.inst("ex2.approx.ftz.f32", 32, [a], label="ex2.approx.ftz.f32 (a)")
    k.inst("div.approx.ftz.f32", 32, [a, b])
    for op in ("rcp", "rsqrt"):  # the non-ftz forms: the MUFU op between ptxas's exact scalings
        k.inst(f"{op}.approx.f32", 32, [a])
        k.inst(f"{op}.approx.f32", 32, [d], label=f"{op}.approx.f32 (d)")
    k.inst("ex2.approx.f32", 32, [e])
    k.inst("ex2.approx.f32", 32, [a], label="ex2.approx.f32 (a)")
    for op in ("div.approx.f32", "div.full.f32", "div.full.ftz.f32"):
        k.inst(op, 32, [a, b])
        k.inst(op, 32, [a, d], label=f"{op} (a, d)")
    return k.family()


def fam_f64(rng) -> Family:
    """f64 add/sub/mul/fma/div/sqrt/rcp in rn/rz/rm/rp."""
    n = 2048
    k = Kernel("f64", n)
    a, b, c = float_triples(rng, n, 64)
    s = f64s(rng, n)
    s[:300] = (np.arange(300, dtype=np.float64) ** 2).view(np.uint64)
    a, b, c, s = (k.operand(x, 64, v, "f64") for x, v in zip("abcs", (a, b, c, s), strict=True))
    for mode in MODES:
        for op in ("add", "sub", "mul", "div"):
            k.inst(f"{op}.{mode}.f64", 64, [a, b])
        k.inst(f"fma.{mode}.f64", 64, [a, b, c])
        k.inst(f"sqrt.{mode}.f64", 64, [s])
        k.inst(f"rcp.{mode}.f64", 64, [b])
    k.inst("add.f64", 64, [a, b])
    k.inst("mul.f64", 64, [a, b])
    k.inst("mad.rn.f64", 64, [a, b, c])
    return k.family()


def _half_ops(rng, k: Kernel, kind: str, prefix: str = ""):
    gen = f16s if kind == "f16" else bf16s
    n = k.threads
    x = [gen(rng, n) for _ in range(3)]
    edges = F16_EDGES if kind == "f16" else BF16_EDGES
    cross(x[:2], [edges, edges])
    s = [k.operand(f"{prefix}{v}", 16, x[i], kind) for i, v in enumerate("abc")]
    words = []
    for i, v in enumerate("xyz"):
        lo, hi = gen(rng, n), gen(rng, n)
        if i < 2:
            hi[: len(edges) ** 2] = x[1 - i][: len(edges) ** 2]
        words.append(k.operand(f"{prefix}{v}", 32, lo.astype(np.uint64) | hi.astype(np.uint64) << np.uint64(16),
                               kind + "x2"))
    return s, words


def fam_f16(rng) -> Family:
    """f16 and f16x2 add/sub/mul/fma/min/max/neg/abs with ftz, sat, relu, NaN, xorsign.abs."""
    k = Kernel("f16", 4096)
    (a, b, c), (x, y, z) = _half_ops(rng, k, "f16")
    for t, w, (p, q, r) in (("f16", 16, (a, b, c)), ("f16x2", 32, (x, y, z))):
        for op in ("add", "sub", "mul"):
            for mods in ("", ".rn", ".rn.ftz", ".rn.sat", ".rn.ftz.sat", ".ftz"):
                k.inst(f"{op}{mods}.{t}", w, [p, q])
        for mods in (".rn", ".rn.ftz", ".rn.sat", ".rn.ftz.sat", ".rn.relu", ".rn.ftz.relu"):
            k.inst(f"fma{mods}.{t}", w, [p, q, r])
        for op in ("min", "max"):
            for mods in ("", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs", ".NaN.xorsign.abs", ".ftz.xorsign.abs"):
                k.inst(f"{op}{mods}.{t}", w, [p, q])
        for op in ("neg", "abs", "neg.ftz", "abs.ftz"):
            k.inst(f"{op}.{t}", w, [p])
    return k.family()


def fam_bf16(rng) -> Family:
    """bf16 and bf16x2 add/sub/mul/fma (relu)/min/max (NaN, xorsign.abs)/neg/abs."""
    k = Kernel("bf16", 4096)
    (a, b, c), (x, y, z) = _half_ops(rng, k, "bf16")
    for t, w, (p, q, r) in (("bf16", 16, (a, b, c)), ("bf16x2", 32, (x, y, z))):
        for op in ("add", "sub", "mul"):
            for mods in ("", ".rn"):
                k.inst(f"{op}{mods}.{t}", w, [p, q])
        for mods in (".rn", ".rn.relu"):
            k.inst(f"fma{mods}.{t}", w, [p, q, r])
        for op in ("min", "max"):
            for mods in ("", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"):
                k.inst(f"{op}{mods}.{t}", w, [p, q])
        for op in ("neg", "abs"):
            k.inst(f"{op}.{t}", w, [p])
    return k.family()


def fam_setp_float(rng) -> Family:
    """setp with every float comparison on f32 (ftz), f64, f16 (ftz), bf16, f16x2, bf16x2; slct.f32; testp."""
    n = 2048
    k = Kernel("setp_float", n)
    a, b, _ = _f32_abc(k, rng)
    x, y, _ = float_triples(rng, n, 64)
    x, y = k.operand("x", 64, x, "f64"), k.operand("y", 64, y, "f64")
    (h, g, _), (hh, gg, _) = _half_ops(rng, k, "f16", "h_")
    (e, f, _), (ee, ff, _) = _half_ops(rng, k, "bf16", "bf_")
    c = k.pred_operand("q", rng.integers(0, 2, n))
    for cmp in CMPS:
        k.inst(f"setp.{cmp}.f32", 1, [a, b])
        k.inst(f"setp.{cmp}.ftz.f32", 1, [a, b])
        k.inst(f"setp.{cmp}.f64", 1, [x, y])
        k.inst(f"setp.{cmp}.f16", 1, [h, g])
        k.inst(f"setp.{cmp}.ftz.f16", 1, [h, g])
        k.inst(f"setp.{cmp}.bf16", 1, [e, f])
        for t, (p, q) in (("f16x2", (hh, gg)), ("bf16x2", (ee, ff))):
            d0, d1 = k.reg(1), k.reg(1)
            k.emit(f"setp.{cmp}.{t} {d0}|{d1}, {p}, {q};")
            k.store(f"setp.{cmp}.{t} lo", d0, 1, [p, q])
            k.store(f"setp.{cmp}.{t} hi", d1, 1, [p, q])
    for bop in ("and", "or", "xor"):
        p, q = k.reg(1), k.reg(1)
        k.emit(f"setp.ltu.{bop}.ftz.f32 {p}|{q}, {a}, {b}, !{c};")
        k.store(f"setp.ltu.{bop}.ftz.f32 p", p, 1, [a, b, c])
        k.store(f"setp.ltu.{bop}.ftz.f32 q", q, 1, [a, b, c])
        k.inst(f"setp.geu.{bop}.f16", 1, [h, g, c])
    for t in ("b32", "f32", "u32"):
        k.inst(f"slct.{t}.f32", 32, [b, a, a])
        k.inst(f"slct.ftz.{t}.f32", 32, [b, a, a])
    k.inst("slct.f64.f32", 64, [x, y, b])
    for op in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
        k.inst(f"testp.{op}.f32", 1, [a])
        k.inst(f"testp.{op}.f64", 1, [x])
    return k.family()
