"""Bit, compare and select instructions: and or xor not cnot lop3, shl shr shf, bfe bfi bmsk szext prmt, popc clz brev
bfind fns; setp and set (integer and float compares; set writes all ones or 1.0), selp and slct."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.ops_int import _U64, _binary, _type
from tcforge.ptx.emulate.state import SINT, TYPE_BYTES, UINT, view_dtype
from tcforge.ptx.operands import Imm


def b_bit_unary(ctx, st, parts):
    """not cnot popc clz brev bfind (popc, clz and bfind write a u32; on a predicate only `not`)."""
    ptype = _type(parts)
    d, a = st.operands[:2]
    ra, w = ctx.src(a, ptype), ctx.dst(d, ptype)
    n = TYPE_BYTES[ptype]
    fn = {"not": lambda x: ~x, "cnot": lambda x: (x == 0).astype(x.dtype),
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

    if n == 4 and vd is not SINT[4]:  # 32-bit shl / unsigned shr by a register: one pass in 64 bits (>= 32 gives 0)
        left = parts[0] == "shl"

        def run32(m):
            s = np.minimum(np.asarray(rb(), np.uint32), np.uint32(32)).astype(np.uint64)
            x = np.asarray(ra(), np.uint32).astype(np.uint64)
            w(((x << s) if left else (x >> s)).astype(np.uint32), m)
        return run32

    def run(m):
        x = ra().view(vd)
        s = np.minimum(np.asarray(rb()), np.uint32(bits)).astype(UINT[n])  # the u32 amount, clamped before narrowing
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
    if ptype == "s32" and isinstance(b, Imm) and isinstance(c, Imm) and (b.value & 0xFF) >= 32 and c.value & 0xFF:
        # ptxas 13.0 folds bfe.s32 with immediate position >= 32 and length > 0 to -1 whatever a holds (measured on
        # the H100); a register position or length takes the PTX ISA's path (the sign bit a[31])
        return lambda m: w(np.uint32(0xFFFFFFFF), m)

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


def b_bmsk(ctx, st, parts):
    """bmsk.clamp/wrap.b32 d, a, b: a mask of b bits from bit a (the PTX ISA's pseudocode)."""
    clamp = "clamp" in parts
    ra, rb, w = ctx.src_full(st.operands[1], "u32"), ctx.src_full(st.operands[2], "u32"), ctx.dst(st.operands[0], "b32")

    def run(m):
        a, b = np.asarray(ra()).astype(np.int64), np.asarray(rb()).astype(np.int64)
        a1, b1 = a & 31, b & 31
        full = np.int64(0xFFFFFFFF)
        mask0 = (full << a1) & full
        total = a1 + b1
        mask1 = (full << np.minimum(total, 32)) & full
        mask0 = np.where(clamp & (a >= 32), 0, mask0)
        zero1 = (total >= 32) | (clamp & ((a >= 32) | (b >= 32)))
        mask1 = np.where(zero1, 0, np.where(b1 == 0, full, mask1))
        w((mask0 & ~mask1 & full).astype(np.uint32), m)
    return run


def b_szext(ctx, st, parts):
    """szext.clamp/wrap.u32/s32 d, a, b: a's low b bits zero- or sign-extended (the PTX ISA's pseudocode)."""
    clamp, signed = "clamp" in parts, parts[-1] == "s32"
    ra, rb, w = ctx.src_full(st.operands[1], "u32"), ctx.src_full(st.operands[2], "u32"), ctx.dst(st.operands[0], "b32")

    def run(m):
        a, b = np.asarray(ra()).astype(np.int64), np.asarray(rb()).astype(np.int64)
        b1 = b & 31
        large = clamp & (b >= 32)
        full = np.int64(0xFFFFFFFF)
        mask = np.where(large, 0, (full << b1) & full)
        sbit = (a >> ((b1 - 1) & 31)) & 1
        sbit = np.where((b1 == 0) | large | (not signed), 0, sbit)
        w(((a & ~mask) | np.where(sbit != 0, mask, 0)).astype(np.uint32), m)
    return run


_PRMT_MODES = {"f4e": lambda s: [(s + i) & 7 for i in range(4)], "b4e": lambda s: [(s - i) & 7 for i in range(4)],
               "rc8": lambda s: [s & 3] * 4, "ecl": lambda s: [max(i, s & 3) for i in range(4)],
               "ecr": lambda s: [min(i, s & 3) for i in range(4)],
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


def _comparisons(ctx, st, parts, ptype: str, a, b):
    """`lanes()`: the comparison of setp / set (parts[1]) on operands a, b of `ptype` (.ftz: subnormals as zero), one
    bool array per 16-bit lane of an f16x2 / bf16x2 pair (low first), else one."""
    cmp = parts[1]
    is_float = ptype in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2")
    tiny = {"f32": 2.0 ** -126, "f16": 2.0 ** -14, "f16x2": 2.0 ** -14}.get(ptype, 0.0) if "ftz" in parts else 0.0

    def flush(v):
        return np.where(np.abs(v) < tiny, np.zeros_like(v), v) if tiny else v
    if ptype in ("f16x2", "bf16x2"):
        ra, rb = ctx.src_full(a, "b32"), ctx.src_full(b, "b32")
        half = ctx.half_values(ptype[:-2])

        def pair():
            x, y = np.asarray(ra()), np.asarray(rb())
            return [compare(cmp, flush(half((x >> np.uint32(k)) & np.uint32(0xFFFF))),
                            flush(half((y >> np.uint32(k)) & np.uint32(0xFFFF))), True) for k in (0, 16)]
        return pair
    if not is_float:
        f, xa, xb = _CMP[cmp], ctx.srcv(a, ptype), ctx.srcv(b, ptype)
        return lambda: [np.asarray(f(xa(), xb()))]
    ra, rb = ctx.src(a, ptype), ctx.src(b, ptype)
    conv = ctx.half_values("bf16") if ptype == "bf16" else None
    vd = view_dtype(ptype)

    def one():
        x, y = ra(), rb()
        x, y = (conv(x), conv(y)) if conv is not None else (flush(x.view(vd)), flush(y.view(vd)))
        return [compare(cmp, x, y, True)]
    return one


def b_setp(ctx, st, parts):
    """setp.CmpOp{.BoolOp}{.ftz}.type p{|q}, a, b{, {!}c}: f16x2 / bf16x2 set p from the low and q from the high
    lane; otherwise q is the complement of the comparison (both combined with c)."""
    bop = next((p for p in parts[2:] if p in _BOOL), None)
    ops = st.operands
    dp, dq = (ops[0].first, ops[0].second) if hasattr(ops[0], "first") else (ops[0], None)
    lanes = _comparisons(ctx, st, parts, _type(parts), ops[1], ops[2])
    rc = ctx.src(ops[3], "pred") if bop is not None else None
    wp = ctx.dst(dp, "pred")
    wq = ctx.dst(dq, "pred") if dq is not None else None
    packed = _type(parts) in ("f16x2", "bf16x2")

    def run(m):
        ts = lanes()
        if wq is not None and not packed:
            ts = [ts[0], ~ts[0]]
        if rc is not None:
            c = rc()
            ts = [_BOOL[bop](t, c) for t in ts]
        wp(ts[0], m)
        if wq is not None:
            wq(ts[1], m)
    return run


# what set writes for true, per destination type (per 16-bit lane for f16x2 / bf16x2 sources); false is zero
_SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80, "u16": 0xFFFF,
             "s16": 0xFFFF}
_SET_TRUE_LANE = {"u32": 0xFFFF, "s32": 0xFFFF, "f16x2": 0x3C00, "bf16x2": 0x3F80}


def b_set(ctx, st, parts):
    """set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c}: all ones (integers) or 1.0 (floats) where the comparison
    (combined with c) holds, else 0; an f16x2 / bf16x2 source sets each 16-bit lane of d on its own."""
    dtype, stype = parts[-2], parts[-1]
    bop = next((p for p in parts[2:] if p in _BOOL), None)
    ops = st.operands
    packed = stype in ("f16x2", "bf16x2")
    true = (_SET_TRUE_LANE if packed else _SET_TRUE).get(dtype)
    if true is None:
        ctx.unsupported(st, f"{st.opcode} (set writes u32, s32, f32 or, from 16-bit sources, their types)")
    lanes = _comparisons(ctx, st, parts, stype, ops[1], ops[2])
    rc = ctx.src(ops[3], "pred") if bop is not None else None
    width = "b32" if packed or dtype in ("u32", "s32", "f32") else "b16"
    w, dt = ctx.dst(ops[0], width), UINT[TYPE_BYTES[width]]

    def run(m):
        out = np.zeros(ctx.n, dt)
        c = rc() if rc is not None else None
        for k, t in enumerate(lanes()):
            if c is not None:
                t = _BOOL[bop](t, c)
            out |= np.where(t, dt(true), dt(0)) << dt(16 * k)
        w(out, m)
    return run


def b_fns(ctx, st, parts):
    """fns.b32 d, mask, base, offset: the position of the |offset|-th set bit of mask counted from bit base upwards
    (offset > 0) or downwards (offset < 0), bit base itself when offset is 0 and it is set; 0xffffffff if none."""
    d, a, b, c = st.operands[:4]
    rm, rb, ro, w = ctx.src_full(a, "b32"), ctx.src_full(b, "u32"), ctx.src_full(c, "s32"), ctx.dst(d, "b32")
    pos = np.arange(32, dtype=np.int64)

    def run(m):
        mask, base = np.asarray(rm()).astype(np.uint32), rb().astype(np.int64)[:, None]
        off = ro().view(np.int32).astype(np.int64)[:, None]
        bits = (mask[:, None] >> pos.astype(np.uint32)) & 1 == 1
        up = bits & (pos >= base)
        down = bits & (pos <= base)
        rank_up = np.cumsum(up, axis=1)  # how many set bits from base up to each position
        rank_down = np.cumsum(down[:, ::-1], axis=1)[:, ::-1]
        hit = np.where(off > 0, up & (rank_up == off), np.where(off < 0, down & (rank_down == -off),
                                                               bits & (pos == base)))
        out = np.where(hit.any(axis=1), np.argmax(hit, axis=1), 0xFFFFFFFF).astype(np.uint32)
        w(out, m)
    return run


def b_slct(ctx, st, parts):
    """slct.dtype.s32 / slct{.ftz}.dtype.f32 d, a, b, c: a where c >= 0 (-0 included, NaN: b), else b."""
    dtype, ctype = parts[-2], parts[-1]
    d, a, b, c = st.operands[:4]
    ra, rb, w = ctx.src_full(a, dtype), ctx.src_full(b, dtype), ctx.dst(d, dtype)
    rc = ctx.src_full(c, ctype)

    def run(m):
        x = np.asarray(rc())
        if ctype == "f32":
            v = x.view(np.float32)
            ok = (v >= 0) | (("ftz" in parts) & (np.abs(v) < np.float32(2.0 ** -126)))
        else:
            ok = x.view(np.int32) >= 0
        w(np.where(ok, ra(), rb()), m)
    return run


BUILDERS = {
    "not": b_bit_unary, "cnot": b_bit_unary, "popc": b_bit_unary, "clz": b_bit_unary, "brev": b_bit_unary,
    "bfind": b_bit_unary, "shl": b_shift, "shr": b_shift, "shf": b_shf, "and": b_logic, "or": b_logic,
    "xor": b_logic, "lop3": b_lop3, "bfe": b_bfe, "bfi": b_bfi, "bmsk": b_bmsk, "szext": b_szext, "prmt": b_prmt,
    "selp": b_selp, "setp": b_setp, "set": b_set, "slct": b_slct, "fns": b_fns,
}
