"""Floating-point instructions: add sub mul fma mad div rcp sqrt min max abs neg copysign testp for f32 (every
rounding mode through round-to-odd float64, ftz, sat) and f64 (numpy IEEE for .rn, exact rationals for the directed
modes and fma's stray lanes), f16/f16x2 (tcforge.numerics; ftz, sat, relu, NaN, xorsign.abs), bf16/bf16x2 (exact
float64, one rounding; relu, NaN, xorsign.abs), and the MUFU approximations rcp/rsqrt/ex2/div.approx.f32 (with and
without .ftz) and div.full.f32 (tcforge.numerics.approx, inside ptxas's sm_90 lowering)."""

from __future__ import annotations

from functools import partial

import numpy as np

from tcforge import numerics as nx
from tcforge.numerics import mufu_tables
from tcforge.ptx.emulate.rounding import (
    bf16_bits_to_f64,
    div_round_odd,
    f16_bits_to_f64,
    f64_rounded,
    flush_f32,
    fma_f64_rn,
    fma_round_odd,
    round_f64_to_bf16,
    round_f64_to_f16,
    round_f64_to_f32,
    sqrt_round_odd,
    sum_round_odd,
)

_F32_NAN = np.uint32(0x7FFFFFFF)
_H_NAN = np.uint16(0x7FFF)  # the canonical f16 and bf16 NaN
_MODES = ("rn", "rz", "rm", "rp")
_KNOWN = {"rn", "rz", "rm", "rp", "ftz", "sat", "approx", "full", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2",
          "NaN", "xorsign", "abs", "relu"}
_TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def _mode(parts: list[str]) -> str:
    return next((p for p in parts if p in _MODES), "rn")


def _f32_canon(r: np.ndarray) -> np.ndarray:
    bits = np.asarray(r, dtype=np.float32).view(np.uint32)
    return np.where(np.isnan(r), _F32_NAN, bits)


def build(ctx, st, parts):
    """Builder for every float form of add/sub/mul/fma/mad/div/min/max/abs/neg/rcp/sqrt/rsqrt/ex2/testp/copysign."""
    op, ptype = parts[0], parts[-1]
    if op == "testp":
        return _testp(ctx, st, parts)
    unknown = [p for p in parts[1:] if p not in _KNOWN]
    if unknown:
        ctx.unsupported(st, f"modifier .{unknown[0]} of {op}.{ptype}")
    if op == "mad":
        op = "fma"
    if op == "copysign" and ptype in ("f32", "f64"):
        return _copysign(ctx, st, ptype)
    if ptype in ("f16", "f16x2", "bf16", "bf16x2"):
        return _half(ctx, st, parts, op, ptype)
    if ptype == "f32":
        return _f32(ctx, st, parts, op)
    if ptype == "f64":
        return _f64(ctx, st, parts, op)
    ctx.unsupported(st, f"{op}.{ptype}")


def _reads(ctx, st, k, ptype):
    return [ctx.src_full(x, ptype) for x in st.operands[1:1 + k]]


def _testp(ctx, st, parts):
    """testp.op.f32/f64: finite, infinite, number, notanumber, normal (zeros included), subnormal."""
    op, ptype = parts[1], parts[-1]
    if op not in _TESTP or ptype not in ("f32", "f64"):
        ctx.unsupported(st, ".".join(parts))
    (ra,) = _reads(ctx, st, 1, ptype)
    w = ctx.dst(st.operands[0], "pred")
    ft = np.float32 if ptype == "f32" else np.float64
    tiny = np.finfo(ft).tiny

    def run(m):
        x = ra().view(ft)
        nan, inf = np.isnan(x), np.isinf(x)
        sub = (np.abs(x) < tiny) & (x != 0)
        w({"finite": ~nan & ~inf, "infinite": inf, "number": ~nan, "notanumber": nan, "normal": ~nan & ~inf & ~sub,
           "subnormal": sub}[op], m)
    return run


def _copysign(ctx, st, ptype):
    """copysign.f32/f64 d, a, b: b with the sign bit of a (bitwise: NaN payloads kept)."""
    ra, rb = _reads(ctx, st, 2, ptype)
    w = ctx.dst(st.operands[0], ptype)
    ut = np.uint32 if ptype == "f32" else np.uint64
    sign = ut(1 << (8 * np.dtype(ut).itemsize - 1))
    return lambda m: w((ra() & sign) | (rb() & ~sign), m)


def _rm_zero(r: np.ndarray, exact: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """.rm: an exact zero sum is -0 unless both addends are +0 (IEEE 754); r the rounded result, x and y the addends."""
    pos_zeros = (x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
    return np.where((exact == 0) & ~pos_zeros, np.copysign(np.zeros_like(r), -1), r)


def _f32(ctx, st, parts, op):
    mode, ftz, sat = _mode(parts), "ftz" in parts, "sat" in parts
    w = ctx.dst(st.operands[0], "f32")
    approx = "approx" in parts or "full" in parts

    def fin(r):
        r = np.asarray(r, dtype=np.float32)
        if sat:  # [+0, 1]; NaN -> +0
            r = np.where(np.isnan(r) | (r <= 0), np.float32(0), np.minimum(r, np.float32(1)))
        return _f32_canon(r)

    def pre(x):
        x = x.view(np.float32)
        return flush_f32(x) if ftz else x

    if approx:
        table = {"rcp": nx.rcp_approx_ftz_f32, "rsqrt": nx.rsqrt_approx_ftz_f32, "ex2": nx.ex2_approx_ftz_f32}
        if op == "div" and ftz and "approx" in parts:
            ra, rb = _reads(ctx, st, 2, "f32")
            return lambda m: w(np.asarray(nx.div_approx_ftz_f32(ra().view(np.float32), rb().view(np.float32)))
                               .view(np.uint32), m)
        if op in table and ftz:
            (ra,) = _reads(ctx, st, 1, "f32")
            f = table[op]
            return lambda m: w(np.asarray(f(ra().view(np.float32))).view(np.uint32), m)
        measured = _MEASURED_F32.get((op, ftz)) if "approx" in parts else None
        if measured is not None:
            _require_table(ctx, st, parts, op)
            (ra,) = _reads(ctx, st, 1, "f32")
            return lambda m: w(np.asarray(measured(ra().view(np.float32))).view(np.uint32), m)
        seq = _MUFU_SEQUENCES.get((op, "full" if "full" in parts else "approx", ftz))
        if seq is not None:
            rs = _reads(ctx, st, 2 if op == "div" else 1, "f32")
            return lambda m: w(seq(*(r().view(np.float32) for r in rs)).view(np.uint32), m)
        ctx.unsupported(st, f"{'.'.join(parts)} (MUFU models: rcp/rsqrt/ex2/div/sqrt/lg2/sin/cos .approx.f32 with or "
                            "without .ftz, tanh.approx.f32, div.full.f32)")
    if op in ("add", "sub", "mul"):
        ra, rb = _reads(ctx, st, 2, "f32")
        if mode == "rn" and not ftz:
            f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
            return lambda m: w(fin(f(pre(ra()), pre(rb()))), m)

        def rounded(m):
            x, y = pre(ra()).astype(np.float64), pre(rb()).astype(np.float64)
            if op == "sub":
                y = -y
            exact = x * y if op == "mul" else sum_round_odd(x, y)  # f32 products are exact in float64
            r = round_f64_to_f32(exact, mode, ftz)
            if mode == "rm" and op != "mul":
                r = _rm_zero(r, exact, x, y)
            w(fin(r), m)
        return rounded
    if op == "fma":
        ra, rb, rc = _reads(ctx, st, 3, "f32")

        def fma(m):
            x, y, z = (pre(f()).astype(np.float64) for f in (ra, rb, rc))
            p = x * y
            exact = fma_round_odd(p, z)
            r = round_f64_to_f32(exact, mode, ftz)
            if mode == "rm":
                r = _rm_zero(r, exact, p, z)
            w(fin(r), m)
        return fma
    if op in ("div", "rcp", "sqrt"):
        k = 2 if op == "div" else 1
        rs = _reads(ctx, st, k, "f32")
        if mode == "rn" and not ftz:
            f = {"div": lambda a, b: a / b, "rcp": lambda a: np.float32(1) / a, "sqrt": np.sqrt}[op]
            return lambda m: w(fin(f(*(pre(r()) for r in rs))), m)

        def rounded_q(m):
            v = [pre(r()).astype(np.float64) for r in rs]
            odd = div_round_odd(*v) if op == "div" else div_round_odd(1.0, v[0]) if op == "rcp" else \
                sqrt_round_odd(v[0])
            w(fin(round_f64_to_f32(odd, mode, ftz)), m)
        return rounded_q
    if op in ("min", "max"):
        ra, rb = _reads(ctx, st, 2, "f32")
        nanprop, xorsign = "NaN" in parts, "xorsign" in parts

        def mm(m):
            a, b = pre(ra()), pre(rb())
            sx = (a.view(np.uint32) ^ b.view(np.uint32)) & np.uint32(0x80000000)
            if "abs" in parts:
                a, b = np.abs(a), np.abs(b)
            r = _min_max(a, b, op == "max", nanprop)
            bits = _f32_canon(r)
            if xorsign:
                bits = np.where(np.isnan(r), bits, (bits & np.uint32(0x7FFFFFFF)) | sx)
            w(bits, m)
        return mm
    if op in ("abs", "neg"):
        (ra,) = _reads(ctx, st, 1, "f32")
        bit = np.uint32(0x80000000)

        def an(m):  # ptxas: FADD |a|, -RZ / FADD -a, -RZ, so a NaN comes back as the canonical NaN
            x = ra()
            if ftz:
                x = flush_f32(x.view(np.float32)).view(np.uint32)
            r = x & ~bit if op == "abs" else x ^ bit
            w(np.where((x & ~bit) > np.uint32(0x7F800000), _F32_NAN, r), m)
        return an
    ctx.unsupported(st, f"{'.'.join(parts)}")


# The f32 MUFU forms ptxas 13.0 lowers to a MUFU op between exact scalings (sm_90 SASS, read with cuobjdump):
# the MUFU op's measured model (tcforge.numerics.approx) and each FMUL / FMUL.FTZ in float32 rn, NaN canonical.
_TINY, _HUGE = np.float32(2.0 ** -126), np.float32(2.0 ** 126)


def _fmul(x: np.ndarray, y: np.ndarray | float, ftz: bool = False) -> np.ndarray:
    """FMUL (mul.rn.f32) or FMUL.FTZ on float32 values; NaN results are 0x7fffffff."""
    if ftz:
        return np.asarray(nx.f32_mul_ftz(x, np.broadcast_to(np.float32(y), np.shape(x)).astype(np.float32)))
    with np.errstate(all="ignore"):
        r = np.multiply(x, np.float32(y) if np.isscalar(y) else y, dtype=np.float32)
    return np.where(np.isnan(r), _F32_NAN.view(np.float32), r)


def _div_full(a: np.ndarray, b: np.ndarray, ftz: bool = False) -> np.ndarray:
    """div.full.f32: |b| > 2^126 scales both by 1/4, |b| < 2^-126 (not .ftz) by 2^24; MUFU.RCP(b) * a."""
    big = np.abs(b) > _HUGE
    a, b = np.where(big, _fmul(a, 0.25, ftz), a), np.where(big, _fmul(b, 0.25, ftz), b)
    if not ftz:
        small = np.abs(b) < _TINY
        a, b = np.where(small, _fmul(a, 2.0 ** 24), a), np.where(small, _fmul(b, 2.0 ** 24), b)
    return _fmul(np.asarray(nx.rcp_approx_ftz_f32(b.astype(np.float32))), a.astype(np.float32), ftz)


def _div_approx(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """div.approx.f32: |b| < 2^-126 scales both by 2^24; MUFU.RCP(b) * a."""
    small = np.abs(b) < _TINY
    a, b = np.where(small, _fmul(a, 2.0 ** 24), a), np.where(small, _fmul(b, 2.0 ** 24), b)
    return _fmul(np.asarray(nx.rcp_approx_ftz_f32(b.astype(np.float32))), a.astype(np.float32))


def _rcp_approx(x: np.ndarray) -> np.ndarray:
    """rcp.approx.f32: s = 1/4 for |x| > 2^126, 2^24 for |x| < 2^-126, else 1; s * MUFU.RCP(x * s)."""
    ax = np.abs(x)
    s = np.where(ax > _HUGE, np.float32(0.25), np.where(ax < _TINY, np.float32(2.0 ** 24), np.float32(1)))
    return _fmul(s, np.asarray(nx.rcp_approx_ftz_f32(_fmul(x, s))))


def _rsqrt_approx(x: np.ndarray) -> np.ndarray:
    """rsqrt.approx.f32: |x| < 2^-126 gives MUFU.RSQ(x * 2^24) * 2^12, else MUFU.RSQ(x)."""
    small = np.abs(x) < _TINY
    r = np.asarray(nx.rsqrt_approx_ftz_f32(np.where(small, _fmul(x, 2.0 ** 24), x).astype(np.float32)))
    return np.where(small, _fmul(r, 4096.0), r)


def _sqrt_approx(x: np.ndarray) -> np.ndarray:
    """sqrt.approx.f32: |x| < 2^-126 gives MUFU.SQRT(x * 2^24) * 2^-12, else MUFU.SQRT(x)."""
    small = np.abs(x) < _TINY
    r = np.asarray(mufu_tables.sqrt_approx_ftz_f32(np.where(small, _fmul(x, 2.0 ** 24), x).astype(np.float32)))
    return np.where(small, _fmul(r, 2.0 ** -12), r)


def _lg2_approx(x: np.ndarray) -> np.ndarray:
    """lg2.approx.f32: |x| < 2^-126 gives MUFU.LG2(x * 2^24) - 24 (FADD), else MUFU.LG2(x)."""
    small = np.abs(x) < _TINY
    r = np.asarray(mufu_tables.lg2_approx_ftz_f32(np.where(small, _fmul(x, 2.0 ** 24), x).astype(np.float32)))
    with np.errstate(all="ignore"):
        return np.where(small, (r - np.float32(24)).astype(np.float32), r)


def _ex2_approx(x: np.ndarray) -> np.ndarray:
    """ex2.approx.f32: x < -126 gives MUFU.EX2(x / 2) squared by an FMUL (subnormal results), else MUFU.EX2(x)."""
    low = x < np.float32(-126)
    r = np.asarray(nx.ex2_approx_ftz_f32(np.where(low, _fmul(x, 0.5), x).astype(np.float32)))
    return np.where(low, _fmul(r, r), r)


def _require_table(ctx, st, parts, table: str, source: str = "tools/truth/mufu.py") -> None:
    """Refuse the instruction in one line while the shipped archive lacks the measured table it runs on."""
    if not mufu_tables.available(table):
        ctx.unsupported(st, f"{'.'.join(parts)} (MUFU.{table.upper()}'s table is not measured yet: {source})")


_MEASURED_F32 = {  # (op, .ftz): the f32 MUFU forms on numerics.mufu_tables; sin / cos lower alike with or without .ftz
    ("sqrt", True): mufu_tables.sqrt_approx_ftz_f32, ("sqrt", False): _sqrt_approx,
    ("lg2", True): mufu_tables.lg2_approx_ftz_f32, ("lg2", False): _lg2_approx,
    **{(op, ftz): partial(mufu_tables.trig_approx_f32, op) for op in ("sin", "cos") for ftz in (True, False)},
    ("tanh", False): mufu_tables.tanh_approx_f32,  # tanh.approx.f32 has no .ftz form; subnormals give themselves
}
_MUFU_SEQUENCES = {("div", "full", False): _div_full, ("div", "full", True): lambda a, b: _div_full(a, b, True),
                   ("div", "approx", False): _div_approx, ("rcp", "approx", False): _rcp_approx,
                   ("rsqrt", "approx", False): _rsqrt_approx, ("ex2", "approx", False): _ex2_approx}


def _min_max(a: np.ndarray, b: np.ndarray, want_max: bool, nanprop: bool) -> np.ndarray:
    """PTX min/max on float arrays: -0 < +0; one NaN gives the other operand (.NaN: NaN), two NaN give NaN."""
    f = np.fmax if want_max else np.fmin
    r = f(a, b)
    z = (a == 0) & (b == 0)
    if z.any():
        sa, sb = np.signbit(a), np.signbit(b)
        neg = (sa & sb) if want_max else (sa | sb)
        r = np.where(z, np.where(neg, -np.zeros_like(r), np.zeros_like(r)), r)
    if nanprop:
        r = np.where(np.isnan(a) | np.isnan(b), np.full_like(r, np.nan), r)
    return r


def fma_f64_bits(a: np.ndarray, b: np.ndarray, c: np.ndarray, mode: str = "rn") -> np.ndarray:
    """fma.{mode}.f64 on f64 bits (uint64), as the device gives it: one rounding; a finite product beyond the f64
    range does not overflow inside the fma (an infinite c decides); NaN operands by the device's DFMA rules."""
    xs = [x.view(np.float64) for x in (a, b, c)]
    r = fma_f64_rn(*xs) if mode == "rn" else f64_rounded("fma", mode, *xs)
    r = np.where(np.isfinite(xs[0]) & np.isfinite(xs[1]) & np.isinf(xs[2]), xs[2], r)
    return _f64_nan(np.asarray(r, np.float64), xs, _F64_NAN_ORDER.get("fma", (0,)))


def _f64_seed(seed, u: np.ndarray) -> np.ndarray:
    """A MUFU f64 seed on f64 bits: the op on the high word, over a zero low word."""
    return seed((u >> np.uint64(32)).astype(np.uint32)).astype(np.uint64) << np.uint64(32)


def _rsqrt_approx_f64(u: np.ndarray) -> np.ndarray:
    """rsqrt.approx.f64 as ptxas lowers it: y = MUFU.RSQ64H, then y + (0.375 e + 0.5) (y e) with e = 1 - x y^2 (DMUL,
    DFMA); +-0 gives +-inf, NaN x + x, a negative NaN, +inf +0, a subnormal x the same on x * 2^54, times 2^27."""
    x = u.view(np.float64)

    def newton(v: np.ndarray) -> np.ndarray:
        y = _f64_seed(mufu_tables.rsq64h, v.view(np.uint64)).view(np.float64)
        with np.errstate(all="ignore"):
            e = fma_f64_rn(v, -(y * y), np.float64(1))
            return fma_f64_rn(fma_f64_rn(e, np.float64(0.375), np.float64(0.5)), y * e, y)

    hi = (u >> np.uint64(32)).astype(np.uint32)
    special = (hi - np.uint32(0x00100000)) >= np.uint32(0x7FE00000)
    with np.errstate(all="ignore"):
        scaled = newton(np.where(special, x * 2.0 ** 54, x))
        out = np.where(special, scaled * 2.0 ** 27, scaled).view(np.uint64)
    sign = u & np.uint64(1 << 63)
    out = np.where(special & (hi >> np.uint32(31) == 1), np.uint64(0xFFF8000000000000), out)
    out = np.where(np.isposinf(x), np.uint64(0), out)
    out = np.where(np.isnan(x), u | _Q64, out)
    return np.where(x == 0, sign | np.uint64(0x7FF0000000000000), out).astype(np.uint64)


def _f64_approx(ctx, st, parts, op, w):
    """rcp.approx.ftz.f64 (MUFU.RCP64H), rsqrt.approx.ftz.f64 (MUFU.RSQ64H) and rsqrt.approx.f64 (its sequence)."""
    ftz = "ftz" in parts
    key = {"rcp": "rcp64h", "rsqrt": "rsq64h"}.get(op)
    if key is None or (op == "rcp" and not ftz):
        ctx.unsupported(st, f"{'.'.join(parts)} (f64 approximations: rcp.approx.ftz.f64, rsqrt.approx{{.ftz}}.f64)")
    _require_table(ctx, st, parts, key)
    (ra,) = _reads(ctx, st, 1, "f64")
    if ftz:
        seed = mufu_tables.rcp64h if op == "rcp" else mufu_tables.rsq64h
        return lambda m: w(_f64_seed(seed, ra()), m)
    return lambda m: w(_rsqrt_approx_f64(ra()), m)


def _f64(ctx, st, parts, op):
    mode = _mode(parts)
    w = ctx.dst(st.operands[0], "f64")
    if "approx" in parts:
        return _f64_approx(ctx, st, parts, op, w)
    k = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "min": 2, "max": 2, "abs": 1, "neg": 1, "sqrt": 1,
         "rcp": 1}.get(op)
    if k is None:
        ctx.unsupported(st, f"{op}.f64")
    rs = _reads(ctx, st, k, "f64")
    order = _F64_NAN_ORDER.get(op, (0,))

    def vals():
        return [r().view(np.float64) for r in rs]

    def out(r, xs):
        return _f64_nan(np.asarray(r, np.float64), xs, order)
    if op in ("min", "max"):
        def mm(m):
            a, b = rs[0](), rs[1]()
            r = np.asarray(_min_max(a.view(np.float64), b.view(np.float64), op == "max", False), np.float64)
            both = _is_nan64(a) & _is_nan64(b)  # DSETP.MIN/MAX + SEL: two NaN give b, quieted
            w(np.where(both, b | _Q64, r.view(np.uint64)), m)
        return mm
    if op in ("abs", "neg"):
        bit = np.uint64(1 << 63)

        def an(m):  # ptxas: DADD -RZ, |a| / DADD -RZ, -a, so a NaN comes back quieted with its own sign
            x = rs[0]()
            w(np.where(_is_nan64(x), x | _Q64, x & ~bit if op == "abs" else x ^ bit), m)
        return an
    if op == "fma":
        return lambda m: w(fma_f64_bits(*[r() for r in rs], mode), m)
    if mode != "rn":
        def directed(m):
            xs = vals()
            w(out(f64_rounded(op, mode, *xs), xs), m)
        return directed
    f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "sqrt": np.sqrt,
         "rcp": lambda a: 1.0 / a}[op]

    def rn(m):
        xs = vals()
        with np.errstate(all="ignore"):
            r = f(*xs)
        w(out(r, xs), m)
    return rn


_Q64 = np.uint64(1 << 51)  # the f64 quiet bit
_F64_INVALID = np.uint64(0xFFF8000000000000)  # the NaN an invalid f64 operation (inf - inf, 0 * inf, ...) makes
# which NaN operand an f64 result carries (measured on the H100): DADD/DMUL/DFMA take SASS operand B, then C, then
# A (ptxas 13.0 keeps the PTX order a, b, c); the div.rn.f64 sequence a, then b
_F64_NAN_ORDER = {"add": (1, 0), "sub": (1, 0), "mul": (1, 0), "fma": (1, 2, 0), "div": (0, 1)}


def _is_nan64(x: np.ndarray) -> np.ndarray:
    """NaN test on f64 bit patterns."""
    return (x & np.uint64(0x7FFFFFFFFFFFFFFF)) > np.uint64(0x7FF0000000000000)


def _f64_nan(r: np.ndarray, inputs: list[np.ndarray], order: tuple[int, ...]) -> np.ndarray:
    """f64 result bits: a NaN result is the first NaN operand in `order`, quieted, else 0xfff8000000000000."""
    bits = r.view(np.uint64)
    nan = np.isnan(r)
    if not nan.any():
        return bits
    pick = np.full(r.shape, _F64_INVALID)
    for i in reversed(order):
        xb = np.broadcast_to(inputs[i].view(np.uint64), r.shape)
        pick = np.where(_is_nan64(xb), xb | _Q64, pick)
    return np.where(nan, pick, bits)


def atom_add_f64(old: np.ndarray, x: np.ndarray, global_space: bool) -> np.ndarray:
    """The word atom/red .add.f64 leaves (rn) on f64 bits; NaN rules measured on the H100 per state space."""
    # global memory: a NaN operand x is stored as it is (payload and signalling bit kept), else a NaN old word stays;
    # shared memory: old's NaN first, then x's, both quieted; an invalid sum (inf - inf) is 0xfff8000000000000
    with np.errstate(all="ignore"):
        r = (old.view(np.float64) + x.view(np.float64)).view(np.uint64)
    if global_space:
        r = np.where(_is_nan64(r), _F64_INVALID, r)
        return np.where(_is_nan64(x), x, np.where(_is_nan64(old), old, r))
    return _f64_nan(r.view(np.float64), [old, x], (0, 1))


_F16 = {"add": (nx.f16_add, nx.f16x2_add, 2), "sub": (nx.f16_sub, nx.f16x2_sub, 2),
        "mul": (nx.f16_mul, nx.f16x2_mul, 2),
        "fma": (nx.f16_fma, nx.f16x2_fma, 3), "min": (nx.f16_min, nx.f16x2_min, 2),
        "max": (nx.f16_max, nx.f16x2_max, 2), "neg": (nx.f16_neg, nx.f16x2_neg, 1),
        "abs": (nx.f16_abs, nx.f16x2_abs, 1)}
_HALF_OPS = ("add", "sub", "mul", "fma", "min", "max", "neg", "abs")


def _half(ctx, st, parts, op, ptype):
    """f16/f16x2/bf16/bf16x2 add sub mul fma (rn, f16 ftz/sat, relu), min max (ftz, NaN, xorsign.abs), neg abs."""
    kind = ptype[:-2] if ptype.endswith("x2") else ptype
    mods = {p for p in parts[1:-1]}
    if op in ("tanh", "ex2") and "approx" in mods:
        return _half_mufu(ctx, st, parts, f"{op}_{kind}", ptype.endswith("x2"))
    if op not in _HALF_OPS or _mode(parts) != "rn" or "approx" in mods or (kind == "bf16" and mods & {"ftz", "sat"}):
        ctx.unsupported(st, f"{'.'.join(parts)}")
    k = {"fma": 3, "neg": 1, "abs": 1}.get(op, 2)
    packed = ptype.endswith("x2")
    st_t = "b32" if packed else "b16"
    rs = [ctx.src_full(x, st_t) for x in st.operands[1:1 + k]]
    w = ctx.dst(st.operands[0], st_t)
    if kind == "f16" and not (mods - {"rn"}):  # the measured numerics models
        scalar, pair, _ = _F16[op]
        f = pair if packed else scalar
        return lambda m: w(f(*(r() for r in rs)), m)
    lane = _half_lane(op, kind, mods)

    def run(m):
        vals = [np.asarray(r()) for r in rs]
        if not packed:
            w(lane([v.astype(np.uint16) for v in vals]), m)
            return
        lo = lane([(v & np.uint32(0xFFFF)).astype(np.uint16) for v in vals])
        hi = lane([(v >> np.uint32(16)).astype(np.uint16) for v in vals])
        w(lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16)), m)
    return run


def _half_mufu(ctx, st, parts, op: str, packed: bool):
    """tanh.approx.f16 / .bf16, ex2.approx.f16, ex2.approx.ftz.bf16 and their x2 forms: one lookup per 16-bit lane in
    the measured table (`numerics.mufu_tables`)."""
    if (op == "ex2_bf16") != ("ftz" in parts) or not {"approx", "ftz"}.issuperset(parts[1:-1]):
        ctx.unsupported(st, f"{'.'.join(parts)} (tanh.approx.f16/bf16, ex2.approx.f16, ex2.approx.ftz.bf16 and x2)")
    _require_table(ctx, st, parts, op, "the corpus entry cu_mufu16_all")
    (ra,) = _reads(ctx, st, 1, "b32" if packed else "b16")
    w = ctx.dst(st.operands[0], "b32" if packed else "b16")
    if not packed:
        return lambda m: w(mufu_tables.half_op(op, ra()), m)

    def run(m):
        v = np.asarray(ra())
        lo = mufu_tables.half_op(op, (v & np.uint32(0xFFFF)).astype(np.uint16)).astype(np.uint32)
        w(lo | (mufu_tables.half_op(op, (v >> np.uint32(16)).astype(np.uint16)).astype(np.uint32) << np.uint32(16)), m)
    return run


def _half_lane(op: str, kind: str, mods: set):
    """A function (list of uint16 bit arrays) -> uint16 bits for one 16-bit lane of a half-precision instruction."""
    ftz, sat, relu = "ftz" in mods, "sat" in mods, "relu" in mods
    to_f64 = f16_bits_to_f64 if kind == "f16" else bf16_bits_to_f64
    exp_mask = np.uint16(0x7C00 if kind == "f16" else 0x7F80)

    def is_nan(b):
        return (b & np.uint16(0x7FFF)) > exp_mask

    def flush(b):  # .ftz: subnormal inputs read as zero of their sign
        return np.where(((b & exp_mask) == 0) & ftz, b & np.uint16(0x8000), b).astype(np.uint16)

    def rnd(v):
        return round_f64_to_f16(v, "rn", ftz) if kind == "f16" else round_f64_to_bf16(v, "rn")

    def lane(vals):
        x = [flush(v) for v in vals]
        if op in ("neg", "abs"):  # NaN inputs give the canonical NaN (f16: measured; bf16: assumed the same)
            r = x[0] ^ np.uint16(0x8000) if op == "neg" else x[0] & np.uint16(0x7FFF)
            return np.where(is_nan(x[0]), _H_NAN, r).astype(np.uint16)
        if op in ("min", "max"):
            return _minmax16(x[0], x[1], op == "max", is_nan, "NaN" in mods, "xorsign" in mods, "abs" in mods)
        v = [to_f64(b) for b in x]
        if op == "add":
            exact = sum_round_odd(v[0], v[1])
        elif op == "sub":
            exact = sum_round_odd(v[0], -v[1])
        elif op == "mul":
            exact = v[0] * v[1]  # 11 x 11 (8 x 8) significand bits: exact
        else:
            exact = fma_round_odd(v[0] * v[1], v[2])
        r = rnd(exact)
        if sat or relu:
            rv = to_f64(r)
            nan = np.isnan(rv)
            if sat:  # [+0, 1]; NaN -> +0
                r = np.where(nan | (rv <= 0), np.uint16(0), np.where(rv >= 1, rnd(np.ones_like(rv)), r))
            else:  # negative (and -0) -> +0; NaN -> canonical NaN
                r = np.where(nan, _H_NAN, np.where(rv <= 0, np.uint16(0), r))
        return np.asarray(r).astype(np.uint16)
    return lane


def _minmax16(x, y, want_max: bool, is_nan, nanprop: bool, xorsign: bool, absolute: bool) -> np.ndarray:
    """min/max on 16-bit float bits (f16 or bf16): -0 < +0, NaN rules of the PTX ISA, .xorsign.abs."""
    sx = (x ^ y) & np.uint16(0x8000)
    if absolute:
        x, y = x & np.uint16(0x7FFF), y & np.uint16(0x7FFF)
    nx_, ny = is_nan(x), is_nan(y)
    kx, ky = (np.where(b & 0x8000, -(b.astype(np.int32) & 0x7FFF) - 1, b.astype(np.int32)) for b in (x, y))
    r = np.where(kx > ky if want_max else kx < ky, x, y)
    if nanprop:
        r = np.where(nx_ | ny, _H_NAN, r)
    else:
        r = np.where(nx_ & ~ny, y, np.where(ny & ~nx_, x, r))
        r = np.where(nx_ & ny, _H_NAN, r)
    if xorsign:
        r = np.where(is_nan(r), r, (r & np.uint16(0x7FFF)) | sx)
    return r.astype(np.uint16)


def atom_add_float(ptype: str, ftz: bool, old: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The word atom/red .add leaves on f32 (ftz: global memory), f16, f16x2, bf16, bf16x2 bits (rn, NaN canonical)."""
    # the PTX ISA: atom.add.f32 flushes subnormal inputs and results in global memory, not in shared memory; the
    # .noftz half forms keep them
    if ptype == "f32":
        a, b = old.view(np.float32), x.view(np.float32)
        if ftz:
            a, b = flush_f32(a), flush_f32(b)
        r = round_f64_to_f32(a.astype(np.float64) + b.astype(np.float64), "rn", ftz)  # the f64 sum is exact
        return _f32_canon(r)
    lane = _half_lane("add", ptype[:-2] if ptype.endswith("x2") else ptype, {"rn"})
    if not ptype.endswith("x2"):
        return lane([old.astype(np.uint16), x.astype(np.uint16)])
    lo = lane([(v & np.uint32(0xFFFF)).astype(np.uint16) for v in (old, x)])
    hi = lane([(v >> np.uint32(16)).astype(np.uint16) for v in (old, x)])
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))


BUILDERS = {name: build for name in ("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "fma", "testp",
                                     "copysign")}
