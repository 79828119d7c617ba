"""Floating-point instructions: add sub mul fma mad div min max abs neg for f32/f64 (numpy IEEE, other rounding
modes through round-to-odd float64), f16/f16x2 (tcforge.numerics), bf16/bf16x2 (exact float64, one rounding), and
the MUFU approximations rcp/rsqrt/ex2/div.approx.ftz.f32 (tcforge.numerics.approx)."""

from __future__ import annotations

import numpy as np

from tcforge import numerics as nx
from tcforge.ptx.emulate.rounding import (
    bf16_bits_to_f64,
    f64_to_bf16_rn,
    flush_f32,
    fma_round_odd,
    round_f64_to_f32,
    sum_round_odd,
)

_F32_NAN = np.uint32(0x7FFFFFFF)
_MODES = ("rn", "rz", "rm", "rp")
_KNOWN = {"rn", "rz", "rm", "rp", "ftz", "sat", "approx", "full", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2",
          "NaN", "xorsign", "abs"}


def _mode(parts: list[str]) -> str:
    return next((p for p in parts if p in _MODES), "rn")


def _f32_canon(r: np.ndarray) -> np.ndarray:
    bits = np.asarray(r, dtype=np.float32).view(np.uint32)
    return np.where(np.isnan(r), _F32_NAN, bits)


def build(ctx, st, parts):
    """Builder for every float form of add/sub/mul/fma/mad/div/min/max/abs/neg/rcp/sqrt/rsqrt/ex2/..."""
    op, ptype = parts[0], parts[-1]
    unknown = [p for p in parts[1:] if p not in _KNOWN]
    if unknown:
        ctx.unsupported(st, f"modifier .{unknown[0]} of {op}.{ptype}")
    if op == "mad":
        op = "fma"
    if ptype in ("f16", "f16x2"):
        return _f16(ctx, st, parts, op, ptype)
    if ptype in ("bf16", "bf16x2"):
        return _bf16(ctx, st, parts, op, ptype)
    if ptype == "f32":
        return _f32(ctx, st, parts, op)
    if ptype == "f64":
        return _f64(ctx, st, parts, op)
    ctx.unsupported(st, f"{op}.{ptype}")


def _reads(ctx, st, k, ptype):
    return [ctx.src_full(x, ptype) for x in st.operands[1:1 + k]]


def _f32(ctx, st, parts, op):
    mode, ftz, sat = _mode(parts), "ftz" in parts, "sat" in parts
    w = ctx.dst(st.operands[0], "f32")
    approx = "approx" in parts or "full" in parts

    def fin(r):
        r = np.asarray(r, dtype=np.float32)
        if sat:
            r = np.where(np.isnan(r), np.float32(0), np.clip(r, np.float32(0), np.float32(1)))
        if ftz:
            r = flush_f32(r)
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
        ctx.unsupported(st, f"{'.'.join(parts)} (only rcp/rsqrt/ex2/div .approx.ftz.f32 have a MUFU model)")
    if op in ("add", "sub", "mul"):
        ra, rb = _reads(ctx, st, 2, "f32")
        if mode == "rn":
            f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
            return lambda m: w(fin(f(pre(ra()), pre(rb()))), m)

        def directed(m):
            x, y = pre(ra()).astype(np.float64), pre(rb()).astype(np.float64)
            exact = x * y if op == "mul" else sum_round_odd(x, -y if op == "sub" else y)
            w(fin(round_f64_to_f32(exact, mode)), m)
        return directed
    if op == "fma":
        ra, rb, rc = _reads(ctx, st, 3, "f32")

        def fma(m):
            x, y, z = (pre(f()).astype(np.float64) for f in (ra, rb, rc))
            w(fin(round_f64_to_f32(fma_round_odd(x * y, z), mode)), m)
        return fma
    if op in ("div", "rcp", "sqrt"):
        if mode != "rn":
            ctx.unsupported(st, f"{op}.{mode}.f32")
        k = 2 if op == "div" else 1
        rs = _reads(ctx, st, k, "f32")
        f = {"div": lambda a, b: a / b, "rcp": lambda a: np.float32(1) / a, "sqrt": np.sqrt}[op]
        return lambda m: w(fin(f(*(pre(r()) for r in rs))), m)
    if op in ("min", "max"):
        ra, rb = _reads(ctx, st, 2, "f32")
        f = np.fmin if op == "min" else np.fmax
        nanprop = "NaN" in parts

        def mm(m):
            x, y = pre(ra()), pre(rb())
            r = f(x, y)
            # -0 < +0 for min/max
            z = (x == 0) & (y == 0)
            if z.any():
                xs, ys = np.signbit(x), np.signbit(y)
                neg = (xs | ys) if op == "min" else (xs & ys)
                r = np.where(z, np.where(neg, np.float32(-0.0), np.float32(0.0)), r)
            if nanprop:
                r = np.where(np.isnan(x) | np.isnan(y), np.float32(np.nan), r)
            w(fin(r), m)
        return mm
    if op in ("abs", "neg"):
        (ra,) = _reads(ctx, st, 1, "f32")
        bit = np.uint32(0x80000000)

        def an(m):
            x = ra()
            if ftz:
                x = flush_f32(x.view(np.float32)).view(np.uint32)
            w(x & ~bit if op == "abs" else x ^ bit, m)
        return an
    ctx.unsupported(st, f"{'.'.join(parts)}")


def _f64(ctx, st, parts, op):
    mode = _mode(parts)
    w = ctx.dst(st.operands[0], "f64")
    if mode != "rn" or "approx" in parts:
        ctx.unsupported(st, f"{'.'.join(parts)} (f64: only round-to-nearest is modelled)")
    k = {"add": 2, "sub": 2, "mul": 2, "div": 2, "min": 2, "max": 2, "abs": 1, "neg": 1, "sqrt": 1, "rcp": 1}.get(op)
    if k is None:
        ctx.unsupported(st, f"{op}.f64")
    rs = _reads(ctx, st, k, "f64")
    f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "min": np.fmin, "max": np.fmax,
         "abs": np.abs, "neg": np.negative, "sqrt": np.sqrt, "rcp": lambda a: 1.0 / a}[op]
    return lambda m: w(np.asarray(f(*(r().view(np.float64) for r in rs)), dtype=np.float64).view(np.uint64), m)


_F16 = {"add": (nx.f16_add, nx.f16x2_add, 2), "sub": (nx.f16_sub, nx.f16x2_sub, 2),
        "mul": (nx.f16_mul, nx.f16x2_mul, 2),
        "fma": (nx.f16_fma, nx.f16x2_fma, 3), "min": (nx.f16_min, nx.f16x2_min, 2),
        "max": (nx.f16_max, nx.f16x2_max, 2), "neg": (nx.f16_neg, nx.f16x2_neg, 1),
        "abs": (nx.f16_abs, nx.f16x2_abs, 1)}


def _f16(ctx, st, parts, op, ptype):
    if op not in _F16 or _mode(parts) != "rn" or "ftz" in parts or "NaN" in parts or "approx" in parts:
        ctx.unsupported(st, f"{'.'.join(parts)} (f16: add/sub/mul/fma .rn, min/max/neg/abs are modelled)")
    scalar, packed, k = _F16[op]
    f = packed if ptype == "f16x2" else scalar
    st_t = "b32" if ptype == "f16x2" else "b16"
    rs = [ctx.src_full(x, st_t) for x in st.operands[1:1 + k]]
    w = ctx.dst(st.operands[0], st_t)
    if "sat" in parts:
        def sat(m):
            r = np.asarray(f(*(r() for r in rs)))
            w(_sat_f16(r, ptype == "f16x2"), m)
        return sat
    return lambda m: w(f(*(r() for r in rs)), m)


def _sat_f16(bits: np.ndarray, packed: bool) -> np.ndarray:
    def one(h):
        v = h.astype(np.uint16).view(np.float16)
        v = np.where(np.isnan(v), np.float16(0), np.clip(v, np.float16(0), np.float16(1)))
        return v.astype(np.float16).view(np.uint16)
    if not packed:
        return one(bits)
    lo, hi = one(bits & np.uint32(0xFFFF)), one(bits >> np.uint32(16))
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))


def _bf16(ctx, st, parts, op, ptype):
    if op not in ("add", "sub", "mul", "fma", "min", "max", "neg", "abs") or _mode(parts) != "rn":
        ctx.unsupported(st, f"{'.'.join(parts)}")
    k = {"fma": 3, "neg": 1, "abs": 1}.get(op, 2)
    packed = ptype == "bf16x2"
    st_t = "b32" if packed else "b16"
    rs = [ctx.src_full(x, st_t) for x in st.operands[1:1 + k]]
    w = ctx.dst(st.operands[0], st_t)

    def lane(vals):
        x = [bf16_bits_to_f64(v) for v in vals]
        if op == "add":
            r = sum_round_odd(x[0], x[1])
        elif op == "sub":
            r = sum_round_odd(x[0], -x[1])
        elif op == "mul":
            r = x[0] * x[1]  # 8 x 8 significand bits: exact
        elif op == "fma":
            r = fma_round_odd(x[0] * x[1], x[2])
        elif op in ("min", "max"):
            r = (np.fmin if op == "min" else np.fmax)(x[0], x[1])
        elif op == "neg":
            return vals[0] ^ np.uint16(0x8000)
        else:
            return vals[0] & np.uint16(0x7FFF)
        return f64_to_bf16_rn(r)

    def run(m):
        vals = [np.asarray(r()) for r in rs]
        if not packed:
            w(lane([v.astype(np.uint16) for v in vals]), m)
            return
        lo = lane([(v & np.uint32(0xFFFF)).astype(np.uint16) for v in vals])
        hi = lane([(v >> np.uint32(16)).astype(np.uint16) for v in vals])
        w(lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16)), m)
    return run


BUILDERS = {name: build for name in ("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "fma", "testp",
                                     "copysign")}
