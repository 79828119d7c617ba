"""Integer arithmetic and moves: add sub mul mad (lo/hi/wide, sat; add.u16x2 / .s16x2), mul24 mad24, the carry
chains (add.cc addc sub.cc subc mad.cc madc), sad, dp4a dp2a, div rem, min max (relu, 16x2 SIMD), abs neg, and mov
(incl. vector pack/unpack). The bit, compare and select instructions are in ops_bits.py."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.state import SINT, TYPE_BYTES, UINT, storage, view_dtype
from tcforge.ptx.operands import Reg, Vec

_U64 = np.uint64


def _type(parts: list[str]) -> str:
    return parts[-1]


def _binary(ctx, st, fn_of, ptype, dtype_in=None, dtype_out=None):
    """d = f(a, b) over views of dtype_in; result stored as `dtype_out` type bits."""
    d, a, b = st.operands[:3]
    ra, rb = ctx.srcv(a, dtype_in or ptype), ctx.srcv(b, dtype_in or ptype)
    w = ctx.dst(d, dtype_out or ptype)
    vin, vst = view_dtype(dtype_in or ptype), storage(dtype_out or ptype)
    if vin is vst or vst is np.bool_:
        return lambda m: w(fn_of(ra(), rb()), m)

    def run(m):
        w(fn_of(ra(), rb()).view(vst), m)
    return run


def _mulhi64(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """High 64 bits of a 64x64 product (unsigned, or signed with the usual correction)."""
    a = np.asarray(a).astype(_U64)
    b = np.asarray(b).astype(_U64)
    m32 = _U64(0xFFFFFFFF)
    al, ah, bl, bh = a & m32, a >> _U64(32), b & m32, b >> _U64(32)
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> _U64(32)) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> _U64(32)) + (hl >> _U64(32)) + (mid >> _U64(32))
    if signed:
        hi = hi - np.where(a >> _U64(63), b, _U64(0)) - np.where(b >> _U64(63), a, _U64(0))
    return hi


def _mul_parts(parts: list[str], ptype: str):
    """(function of (a, b) storage bits -> result bits, result type) for mul.{lo,hi,wide}."""
    n = TYPE_BYTES[ptype]
    signed = ptype[0] == "s"
    ut, st_ = UINT[n], SINT[n]
    if "wide" in parts:
        wt = ("s" if signed else "u") + str(16 * n)
        if signed:
            return (lambda a, b: a.view(st_).astype(SINT[2 * n]) * b.view(st_).astype(SINT[2 * n])), wt
        return (lambda a, b: a.astype(UINT[2 * n]) * b.astype(UINT[2 * n])), wt
    if "hi" in parts:
        if n == 8:
            return (lambda a, b: _mulhi64(a, b, signed)), ptype
        if signed:
            return (lambda a, b: ((a.view(st_).astype(np.int64) * b.view(st_).astype(np.int64)) >> (8 * n))
                    .astype(st_)), ptype
        return (lambda a, b: ((a.astype(_U64) * b.astype(_U64)) >> _U64(8 * n)).astype(ut)), ptype
    return (lambda a, b: a * b), ptype


def b_mul(ctx, st, parts):
    ptype = _type(parts)
    if ptype in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
        return ctx.float_op(st, parts)
    f, out = _mul_parts(parts, ptype)
    return _binary(ctx, st, f, ptype, ptype, out) if out == ptype else _wide(ctx, st, f, ptype, out)


def _wide(ctx, st, f, ptype, out):
    d, a, b = st.operands[:3]
    ra, rb, w = ctx.src(a, ptype), ctx.src(b, ptype), ctx.dst(d, out)
    return lambda m: w(f(ra(), rb()), m)


def b_mad(ctx, st, parts):
    ptype = _type(parts)
    if ptype in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
        return ctx.float_op(st, ["fma"] + parts[1:])
    if "cc" in parts or parts[0] == "madc":
        return _carry_chain(ctx, st, parts)
    if "sat" in parts:  # mad.hi.sat.s32: the high word plus c, saturated
        d, a, b, c = st.operands[:4]
        ra, rb, rc, w = ctx.srcv(a, "s32"), ctx.srcv(b, "s32"), ctx.srcv(c, "s32"), ctx.dst(d, "s32")

        def sat(m):
            r = ((np.asarray(ra()).astype(np.int64) * np.asarray(rb()).astype(np.int64)) >> 32) + rc()
            w(np.clip(r, -(1 << 31), (1 << 31) - 1).astype(np.int32), m)
        return sat
    f, out = _mul_parts(parts, ptype)
    d, a, b, c = st.operands[:4]
    ra, rb, rc, w = ctx.src(a, ptype), ctx.src(b, ptype), ctx.src(c, out), ctx.dst(d, out)
    vo = storage(out)
    return lambda m: w(np.asarray(f(ra(), rb())).view(vo) + rc(), m)


def _simple(op):
    def build(ctx, st, parts):
        ptype = _type(parts)
        if ptype in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
            return ctx.float_op(st, parts)
        if "cc" in parts or parts[0] in ("addc", "subc"):
            return _carry_chain(ctx, st, parts)
        if ptype in ("u16x2", "s16x2"):  # add.{u,s}16x2 (sm_90): each 16-bit lane wraps on its own
            def halves(a, b):
                lo = (a + b) & np.uint32(0xFFFF)
                hi = ((a >> np.uint32(16)) + (b >> np.uint32(16))) << np.uint32(16)
                return (lo | hi).astype(np.uint32)
            return _binary(ctx, st, halves, "b32")
        if "sat" in parts:
            def sat(a, b):
                r = op(a.astype(np.int64), b.astype(np.int64))
                return np.clip(r, -(1 << 31), (1 << 31) - 1).astype(np.int32)
            return _binary(ctx, st, sat, ptype)
        return _binary(ctx, st, op, ptype)
    return build


def b_minmax(ctx, st, parts):
    ptype = _type(parts)
    if ptype in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
        return ctx.float_op(st, parts)
    fn = np.minimum if parts[0] == "min" else np.maximum
    relu = "relu" in parts
    if ptype in ("u16x2", "s16x2"):  # two 16-bit lanes, low half first
        d, a, b = st.operands[:3]
        ra, rb, w = ctx.src_full(a, "b32"), ctx.src_full(b, "b32"), ctx.dst(d, "b32")
        ht = np.int16 if ptype[0] == "s" else np.uint16

        def half(x, k):
            return (x >> np.uint32(16 * k)).astype(np.uint16).view(ht)

        def simd(m):
            x, y = ra(), rb()
            out = np.zeros(len(x), np.uint32)
            for k in range(2):
                r = fn(half(x, k), half(y, k))
                if relu:
                    r = np.maximum(r, ht(0))
                out |= r.view(np.uint16).astype(np.uint32) << np.uint32(16 * k)
            w(out, m)
        return simd
    if relu:  # max/min.relu.s32: negative results become 0
        return _binary(ctx, st, lambda x, y: np.maximum(fn(x, y), 0).astype(x.dtype), ptype)
    return _binary(ctx, st, fn, ptype)


_CF = "%cc.cf"  # the condition code's carry flag CC.CF: one bool per lane, kept with the function's registers


def _carry_chain(ctx, st, parts):
    """add.cc/addc/sub.cc/subc/mad.cc/madc (.u32/.s32/.u64/.s64): the carry (borrow) chain through CC.CF."""
    # .cc writes the carry out of the unsigned addition (the borrow of a subtraction) to CC.CF; addc/madc add
    # CC.CF, subc subtracts b + CC.CF
    ptype = _type(parts)
    ut = UINT[TYPE_BYTES[ptype]]
    root = parts[0]
    mad, sub = root in ("mad", "madc"), root in ("sub", "subc")
    use_cf, set_cf = root in ("addc", "subc", "madc"), "cc" in parts
    ops = st.operands
    ra, rb = ctx.src_full(ops[1], ptype), ctx.src_full(ops[2], ptype)
    rc = ctx.src_full(ops[3], ptype) if mad else None
    w = ctx.dst(ops[0], ptype)
    mul = _mul_parts([p for p in parts if p not in ("cc",)], ptype)[0] if mad else None
    regs = ctx.regs

    def run(m):
        a, b = np.asarray(ra()).astype(ut), np.asarray(rb()).astype(ut)
        if mad:
            a, b = np.asarray(mul(a, b)).view(ut), np.asarray(rc()).astype(ut)
        cf = regs.get(_CF)
        cin = (cf if cf is not None else np.zeros(len(a), bool)).astype(ut) if use_cf else ut(0)
        if sub:
            t = a - b
            d = t - cin
            cout = (a < b) | (t < cin)
        else:
            t = a + b
            d = t + cin
            cout = (t < a) | (d < t)
        w(d, m)
        if set_cf:
            old = regs.get(_CF)
            regs[_CF] = cout if m is None or old is None else np.where(m, cout, old)
    return run


def b_mul24(ctx, st, parts):
    """mul24/mad24 .lo/.hi (.sat): 24-bit a and b multiplied to 48 bits, bits 31..0 or 47..16, plus c for mad24."""
    # the operands' low 24 bits, sign-extended for .s32 (the upper 8 bits assumed ignored)
    signed, hi, mad, sat = parts[-1] == "s32", "hi" in parts, parts[0] == "mad24", "sat" in parts
    ops = st.operands
    ra, rb = ctx.src_full(ops[1], "u32"), ctx.src_full(ops[2], "u32")
    rc = ctx.src_full(ops[3], "u32") if mad else None
    w = ctx.dst(ops[0], "u32")

    def v24(x):
        x = np.asarray(x).astype(np.int64) & 0xFFFFFF
        return np.where(x & 0x800000, x - (1 << 24), x) if signed else x

    def run(m):
        p = v24(ra()) * v24(rb())
        r = (p >> 16 if hi else p) & 0xFFFFFFFF
        if mad:
            c = np.asarray(rc()).astype(np.int64)
            if sat:
                r = np.where(r >= 1 << 31, r - (1 << 32), r) + np.where(c >= 1 << 31, c - (1 << 32), c)
                r = np.clip(r, -(1 << 31), (1 << 31) - 1)
            else:
                r = r + c
        w((r & 0xFFFFFFFF).astype(np.uint32), m)
    return run


def b_dp(ctx, st, parts):
    """dp4a / dp2a.lo/.hi with .u32/.s32 operand types: byte (and half-word) dot products accumulated into c."""
    four = parts[0] == "dp4a"
    ta, tb = parts[-2], parts[-1]
    ops = st.operands
    ra, rb, rc = (ctx.src_full(x, "u32") for x in ops[1:4])
    w = ctx.dst(ops[0], "u32")
    b_sel = 2 if "hi" in parts else 0

    def lanes(x, width, count, signed):
        x = np.asarray(x).astype(np.int64)
        out = []
        for i in range(count):
            v = (x >> (width * i)) & ((1 << width) - 1)
            out.append(np.where(signed & (v >> (width - 1) == 1), v - (1 << width), v))
        return out

    def run(m):
        va = lanes(ra(), 8 if four else 16, 4 if four else 2, ta == "s32")
        vb = lanes(rb(), 8, 4, tb == "s32")
        acc = np.asarray(rc()).astype(np.int64)
        for i in range(len(va)):
            acc = acc + va[i] * vb[i if four else b_sel + i]
        w((acc & 0xFFFFFFFF).astype(np.uint32), m)
    return run


def b_divrem(ctx, st, parts):
    ptype = _type(parts)
    if ptype in ("f32", "f64"):
        return ctx.float_op(st, parts)
    signed = ptype[0] == "s"
    dt = view_dtype(ptype)

    def div(a, b):
        bz = b == 0
        bb = np.where(bz, 1, b)
        if signed:
            q = np.trunc(a.astype(np.float64) / bb).astype(np.int64) if TYPE_BYTES[ptype] < 8 else _sdiv64(a, bb)
            r = q if parts[0] == "div" else a.astype(np.int64) - q * bb.astype(np.int64)
            out = np.where(bz, -1 if parts[0] == "div" else a.astype(np.int64), r)
        else:
            out = a // bb if parts[0] == "div" else a % bb
            out = np.where(bz, np.array(-1).astype(dt) if parts[0] == "div" else a, out)
        return np.asarray(out).astype(dt)
    return _binary(ctx, st, div, ptype)


def _sdiv64(a, b):
    """Signed 64-bit quotient rounded toward zero, on unsigned magnitudes (INT64_MIN has no int64 magnitude)."""
    a, b = a.astype(np.int64), b.astype(np.int64)
    ua, ub = a.view(_U64), b.view(_U64)
    ma = np.where(a < 0, ~ua + _U64(1), ua)
    mb = np.where(b < 0, ~ub + _U64(1), ub)
    q = ma // mb
    return np.where((a < 0) ^ (b < 0), ~q + _U64(1), q).view(np.int64)


def b_absneg(ctx, st, parts):
    """abs/neg: the integer forms here, the float ones to the float builders."""
    ptype = _type(parts)
    if ptype in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
        return ctx.float_op(st, parts)
    d, a = st.operands[:2]
    ra, w = ctx.src(a, ptype), ctx.dst(d, ptype)
    vd = view_dtype(ptype)
    n = TYPE_BYTES[ptype]
    fn = {"abs": lambda x: np.abs(x.view(vd)), "neg": lambda x: -(x.view(SINT[n]))}[parts[0]]
    return lambda m: w(fn(ra()), m)


def b_mov(ctx, st, parts):
    ptype = _type(parts)
    d, a = st.operands[:2]
    n = TYPE_BYTES[ptype]
    if isinstance(a, Vec):  # pack: first element lowest
        k = len(a.items)
        ew = n // k
        et = "b" + str(8 * ew)
        rs = [ctx.src(x, et) for x in a.items]
        w = ctx.dst(d, ptype)
        ut = UINT[n]

        def pack(m):
            r = ut(0)
            for i, f in enumerate(rs):
                r = r | (np.asarray(f()).astype(ut) << ut(8 * ew * i))
            w(r, m)
        return pack
    if isinstance(d, Vec):  # unpack
        k = len(d.items)
        ew = n // k
        et = "b" + str(8 * ew)
        ws = [ctx.dst(x, et) for x in d.items]
        ra = ctx.src(a, ptype)
        ut, et_ = UINT[n], UINT[ew]

        def unpack(m):
            x = np.asarray(ra())
            for i, f in enumerate(ws):
                f(((x >> ut(8 * ew * i)) & ut((1 << (8 * ew)) - 1)).astype(et_), m)
        return unpack
    ra = ctx.src(a, ptype)
    w = ctx.dst(d, ptype)
    if isinstance(a, Reg):  # a register's array is never shared with another register
        return lambda m: w(ra().copy(), m)
    return lambda m: w(ra(), m)


def b_sad(ctx, st, parts):
    """sad: d = c + |a - b| (a, b, c and d of the instruction's type; the sum wraps)."""
    ptype = _type(parts)
    d, a, b, c = st.operands[:4]
    ra, rb, rc, w = ctx.srcv(a, ptype), ctx.srcv(b, ptype), ctx.src(c, ptype), ctx.dst(d, ptype)
    vst = storage(ptype)

    def run(m):
        x, y = ra(), rb()
        diff = np.where(x < y, y.view(vst) - x.view(vst), x.view(vst) - y.view(vst))
        w(diff + rc(), m)
    return run


BUILDERS = {
    "add": _simple(np.add), "sub": _simple(np.subtract), "mul": b_mul, "mad": b_mad, "mul24": b_mul24,
    "min": b_minmax, "max": b_minmax, "div": b_divrem, "rem": b_divrem, "abs": b_absneg, "neg": b_absneg,
    "mov": b_mov, "sad": b_sad, "addc": _simple(np.add), "subc": _simple(np.subtract), "madc": b_mad,
    "mad24": b_mul24, "dp4a": b_dp, "dp2a": b_dp,
}
