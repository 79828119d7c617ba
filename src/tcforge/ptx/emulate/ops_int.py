"""Integer and bit instructions: add sub mul mad div rem abs neg min max, and or xor not cnot lop3, shl shr shf,
bfe bfi prmt popc clz brev bfind, selp setp (integer and float compares) and mov (incl. vector pack/unpack)."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.state import SINT, TYPE_BYTES, UINT, storage, view_dtype
from tcforge.ptx.operands import Imm, Reg, Vec

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
        ctx.unsupported(st, "extended-precision mad.cc / madc")
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
            ctx.unsupported(st, "carry-chain arithmetic (.cc / addc / subc)")
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
    return _binary(ctx, st, np.minimum if parts[0] == "min" else np.maximum, ptype)


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
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return np.where((a < 0) ^ (b < 0), -q, q)


def b_unary(ctx, st, parts):
    ptype = _type(parts)
    if ptype in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
        return ctx.float_op(st, parts)
    d, a = st.operands[:2]
    ra, w = ctx.src(a, ptype), ctx.dst(d, ptype)
    vd = view_dtype(ptype)
    n = TYPE_BYTES[ptype]
    fn = {"abs": lambda x: np.abs(x.view(vd)), "neg": lambda x: (-(x.view(SINT[n]))) if n else ~x,
          "not": lambda x: ~x, "cnot": lambda x: (x == 0).astype(x.dtype),
          "popc": lambda x: _popc(x, n), "clz": lambda x: _clz(x, n), "brev": lambda x: _brev(x, n),
          "bfind": lambda x: _bfind(x, n, ptype[0] == "s", "shiftamt" in parts)}[parts[0]]
    if ptype == "pred":
        fn = {"not": lambda x: ~x}[parts[0]]
    out = ctx.dst(d, "u32") if parts[0] in ("popc", "clz", "bfind") else w
    return lambda m: out(fn(ra()), m)


def _popc(x, n):
    x = np.asarray(x).astype(_U64)
    c = np.zeros(x.shape, np.uint32)
    for i in range(8 * n):
        c += ((x >> _U64(i)) & _U64(1)).astype(np.uint32)
    return c


def _clz(x, n):
    x = np.asarray(x).astype(_U64)
    r = np.full(x.shape, 8 * n, np.uint32)
    for i in range(8 * n):
        r = np.where(((x >> _U64(i)) & _U64(1)) != 0, np.uint32(8 * n - 1 - i), r)
    return r


def _bfind(x, n, signed, shiftamt):
    x = np.asarray(x).astype(UINT[n])
    if signed:
        x = np.where(x >> UINT[n](8 * n - 1), ~x, x)
    lz = _clz(x, n)
    pos = np.where(lz == 8 * n, np.uint32(0xFFFFFFFF), np.uint32(8 * n - 1) - lz)
    if shiftamt:
        pos = np.where(lz == 8 * n, pos, np.uint32(8 * n - 1) - pos)
    return pos


def _brev(x, n):
    x = np.asarray(x).astype(_U64)
    r = np.zeros(x.shape, _U64)
    for i in range(8 * n):
        r |= ((x >> _U64(i)) & _U64(1)) << _U64(8 * n - 1 - i)
    return r.astype(UINT[n])


def b_shift(ctx, st, parts):
    ptype = _type(parts)
    d, a, b = st.operands[:3]
    ra, rb, w = ctx.src(a, ptype), ctx.src(b, "u32"), ctx.dst(d, ptype)
    n = TYPE_BYTES[ptype]
    bits = 8 * n
    vd = view_dtype(ptype) if parts[0] == "shr" else UINT[n]
    top = UINT[n](bits - 1)
    if isinstance(b, Imm):
        k = int(b.value)
        rv = ctx.srcv(a, ptype) if parts[0] == "shr" else ctx.src(a, ptype)
        if k >= bits and not (parts[0] == "shr" and vd is SINT[n]):
            return lambda m: w(UINT[n](0), m)
        sh = vd(min(k, bits - 1))
        if parts[0] == "shl":
            return lambda m: w(rv() << sh, m)
        if vd is SINT[n]:
            return lambda m: w((rv() >> sh).view(UINT[n]), m)
        return lambda m: w(rv() >> sh, m)

    def run(m):
        x = ra().view(vd)
        s = np.asarray(rb()).astype(UINT[n])
        if parts[0] == "shl":
            r = np.where(s >= bits, UINT[n](0), x << np.minimum(s, top))
        elif vd is SINT[n]:
            r = x >> np.minimum(s, top).astype(SINT[n])
        else:
            r = np.where(s >= bits, UINT[n](0), x >> np.minimum(s, top))
        w(np.asarray(r).astype(vd, copy=False).view(UINT[n]), m)
    return run


def b_shf(ctx, st, parts):
    d, a, b, c = st.operands[:4]
    ra, rb, rc, w = ctx.src(a, "b32"), ctx.src(b, "b32"), ctx.src(c, "u32"), ctx.dst(d, "b32")
    left, wrap = "l" in parts, "wrap" in parts

    def run(m):
        x = (np.asarray(rb()).astype(_U64) << _U64(32)) | np.asarray(ra()).astype(_U64)
        n = np.asarray(rc()).astype(_U64)
        n = n & _U64(31) if wrap else np.minimum(n, _U64(32))
        r = ((x << n) >> _U64(32)) if left else (x >> n)
        w((r & _U64(0xFFFFFFFF)).astype(np.uint32), m)
    return run


def b_logic(ctx, st, parts):
    ptype = _type(parts)
    op = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[parts[0]]
    return _binary(ctx, st, op, ptype)


def b_lop3(ctx, st, parts):
    d, a, b, c, lut = st.operands[:5]
    ra, rb, rc, w = (ctx.src(a, "b32"), ctx.src(b, "b32"), ctx.src(c, "b32"), ctx.dst(d, "b32"))
    table = int(lut.value)

    def run(m):
        x, y, z = ra(), rb(), rc()
        r = np.uint32(0)
        for i in range(8):
            if table >> i & 1:
                r = r | ((x if i & 4 else ~x) & (y if i & 2 else ~y) & (z if i & 1 else ~z))
        w(r, m)
    return run


def b_bfe(ctx, st, parts):
    ptype = _type(parts)
    d, a, b, c = st.operands[:4]
    ra, rb, rc, w = ctx.src(a, ptype), ctx.src(b, "u32"), ctx.src(c, "u32"), ctx.dst(d, ptype)
    bits = 8 * TYPE_BYTES[ptype]
    signed = ptype[0] == "s"

    def run(m):
        x = np.asarray(ra()).astype(_U64)
        pos = (np.asarray(rb()) & 0xFF).astype(np.int64)
        ln = (np.asarray(rc()) & 0xFF).astype(np.int64)
        p = np.minimum(pos, bits)
        shifted = np.where(p >= bits, _U64(0), x >> np.minimum(p, bits - 1).astype(_U64))
        eff = np.clip(np.minimum(ln, bits - p), 0, bits)
        mask = np.where(eff >= 64, ~_U64(0), (_U64(1) << np.minimum(eff, 63).astype(_U64)) - _U64(1))
        field = shifted & mask
        if signed:
            idx = np.minimum(pos + ln - 1, bits - 1).clip(0).astype(_U64)
            sbit = ((x >> idx) & _U64(1)) & (ln != 0)
            field = np.where(sbit != 0, field | ~mask, field)
        w((field & _U64((1 << bits) - 1)).astype(UINT[bits // 8]), m)
    return run


def b_bfi(ctx, st, parts):
    ptype = _type(parts)
    d, a, b, c, e = st.operands[:5]
    ra, rb, rc, re_, w = (ctx.src(a, ptype), ctx.src(b, ptype), ctx.src(c, "u32"), ctx.src(e, "u32"),
                          ctx.dst(d, ptype))
    bits = 8 * TYPE_BYTES[ptype]

    def run(m):
        x, y = np.asarray(ra()).astype(_U64), np.asarray(rb()).astype(_U64)
        pos = (np.asarray(rc()) & 0xFF).astype(np.int64)
        ln = (np.asarray(re_()) & 0xFF).astype(np.int64)
        eff = np.clip(np.minimum(ln, bits - pos), 0, bits)
        mask = np.where(eff >= 64, ~_U64(0), (_U64(1) << np.minimum(eff, 63).astype(_U64)) - _U64(1))
        sh = np.minimum(pos, 63).astype(_U64)
        r = np.where(pos >= bits, y, (y & ~(mask << sh)) | ((x & mask) << sh))
        w((r & _U64((1 << bits) - 1)).astype(UINT[bits // 8]), m)
    return run


_PRMT_MODES = {"f4e": lambda s: [(s + i) & 7 for i in range(4)], "b4e": lambda s: [(s - i) & 7 for i in range(4)],
               "rc8": lambda s: [s & 3] * 4, "ecl": lambda s: [min(i, s & 3) for i in range(4)],
               "ecr": lambda s: [max(i, s & 3) for i in range(4)],
               "rc16": lambda s: [(s & 1) * 2, (s & 1) * 2 + 1, (s & 1) * 2, (s & 1) * 2 + 1]}


def b_prmt(ctx, st, parts):
    d, a, b, c = st.operands[:4]
    ra, rb, rc, w = ctx.src(a, "b32"), ctx.src(b, "b32"), ctx.src(c, "b32"), ctx.dst(d, "b32")
    mode = next((p for p in parts[1:] if p in _PRMT_MODES), None)

    def run(m):
        x = (np.asarray(rb()).astype(_U64) << _U64(32)) | np.asarray(ra()).astype(_U64)
        s = np.asarray(rc()).astype(np.uint32)
        out = np.uint32(0)
        if mode is None:
            for i in range(4):
                sel = (s >> np.uint32(4 * i)) & np.uint32(0xF)
                byte = ((x >> (sel & np.uint32(7)).astype(_U64) * _U64(8)) & _U64(0xFF)).astype(np.uint32)
                sign = np.where((byte >> np.uint32(7)) & np.uint32(1), np.uint32(0xFF), np.uint32(0))
                byte = np.where(sel & np.uint32(8), sign, byte)
                out = out | (byte << np.uint32(8 * i))
        else:
            s2 = np.asarray(s) & np.uint32(3)
            for sv in np.unique(s2):
                sels = _PRMT_MODES[mode](int(sv))
                r = np.uint32(0)
                for i, sel in enumerate(sels):
                    r = r | (((x >> _U64(8 * sel)) & _U64(0xFF)).astype(np.uint32) << np.uint32(8 * i))
                out = np.where(s2 == sv, r, out)
        w(out, m)
    return run


def b_selp(ctx, st, parts):
    ptype = _type(parts)
    d, a, b, c = st.operands[:4]
    ra, rb, rc, w = ctx.src(a, ptype), ctx.src(b, ptype), ctx.src(c, "pred"), ctx.dst(d, ptype)
    return lambda m: w(np.where(rc(), ra(), rb()), m)


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def compare(cmp: str, x: np.ndarray, y: np.ndarray, is_float: bool) -> np.ndarray:
    """PTX comparison `cmp` of two arrays (floats: ordered forms false on NaN, `u` forms true on NaN)."""
    if cmp == "num":
        return ~(np.isnan(x) | np.isnan(y))
    if cmp == "nan":
        return np.isnan(x) | np.isnan(y)
    if cmp.endswith("u") and is_float:
        return _CMP[cmp[:-1]](x, y) | np.isnan(x) | np.isnan(y)
    r = _CMP[cmp](x, y)
    if cmp == "ne" and is_float:
        r = r & ~(np.isnan(x) | np.isnan(y))
    return r


def b_setp(ctx, st, parts):
    ptype = _type(parts)
    cmp = parts[1]
    bop = next((p for p in parts[2:] if p in _BOOL), None)
    ops = st.operands
    dst = ops[0]
    dp, dq = (dst.first, dst.second) if hasattr(dst, "first") else (dst, None)
    a, b = ops[1], ops[2]
    rc = ctx.src(ops[3], "pred") if bop is not None else None
    is_float = ptype in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2")
    if ptype in ("f16x2", "bf16x2"):
        ra, rb = ctx.src(a, "b32"), ctx.src(b, "b32")
        wp, wq = ctx.dst(dp, "pred"), ctx.dst(dq, "pred")
        conv = ctx.half_values(ptype[:-2])

        def run2(m):
            x, y = np.asarray(ra()), np.asarray(rb())
            lo = compare(cmp, conv(x & np.uint32(0xFFFF)), conv(y & np.uint32(0xFFFF)), True)
            hi = compare(cmp, conv(x >> np.uint32(16)), conv(y >> np.uint32(16)), True)
            if rc is not None:
                lo, hi = _BOOL[bop](lo, rc()), _BOOL[bop](hi, rc())
            wp(lo, m)
            wq(hi, m)
        return run2
    if not is_float and rc is None and dq is None:
        f = _CMP[cmp]
        xa, xb = ctx.srcv(a, ptype), ctx.srcv(b, ptype)
        wp0 = ctx.dst(dp, "pred")
        return lambda m: wp0(f(xa(), xb()), m)
    ra, rb = ctx.src(a, ptype), ctx.src(b, ptype)
    if ptype == "bf16":
        conv = ctx.half_values("bf16")
        vd = None
    else:
        vd = view_dtype(ptype)
    wp = ctx.dst(dp, "pred")
    wq = ctx.dst(dq, "pred") if dq is not None else None

    def run(m):
        x, y = ra(), rb()
        if vd is None:
            x, y = conv(x), conv(y)
        else:
            x, y = x.view(vd), y.view(vd)
        t = compare(cmp, x, y, is_float)
        if rc is not None:
            c = rc()
            wp(_BOOL[bop](t, c), m)
            if wq is not None:
                wq(_BOOL[bop](~t, c), m)
        else:
            wp(t, m)
            if wq is not None:
                wq(~t, m)
    return run


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


BUILDERS = {
    "add": _simple(np.add), "sub": _simple(np.subtract), "mul": b_mul, "mad": b_mad, "mul24": None,
    "min": b_minmax, "max": b_minmax, "div": b_divrem, "rem": b_divrem,
    "abs": b_unary, "neg": b_unary, "not": b_unary, "cnot": b_unary, "popc": b_unary, "clz": b_unary,
    "brev": b_unary, "bfind": b_unary,
    "shl": b_shift, "shr": b_shift, "shf": b_shf, "and": b_logic, "or": b_logic, "xor": b_logic, "lop3": b_lop3,
    "bfe": b_bfe, "bfi": b_bfi, "prmt": b_prmt, "selp": b_selp, "setp": b_setp, "mov": b_mov,
}
BUILDERS = {k: v for k, v in BUILDERS.items() if v is not None}
