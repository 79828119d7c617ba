"""`cvt`: integer <-> integer (extend, truncate, .sat), float <-> float (f16/bf16/f32/f64 with rounding modes, ftz,
sat), float -> integer (rni/rzi/rmi/rpi, saturating, NaN -> 0), integer -> float, packed f16x2/bf16x2 from two f32,
and the e4m3x2 conversions of tcforge.numerics."""

from __future__ import annotations

import numpy as np

from tcforge import numerics as nx
from tcforge.ptx.emulate.rounding import bf16_bits_to_f64, f64_to_bf16_rn, flush_f32, round_f64_to_f16, round_f64_to_f32
from tcforge.ptx.emulate.state import SINT, TYPE_BYTES, UINT, view_dtype

_INT = {"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64"}
_FLOAT = {"f16", "bf16", "f32", "f64"}
_IMODES = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _to_f64(x: np.ndarray, t: str) -> np.ndarray:
    if t == "f16":
        return x.view(np.float16).astype(np.float64)
    if t == "bf16":
        return bf16_bits_to_f64(x)
    if t == "f32":
        return x.view(np.float32).astype(np.float64)
    return x.view(np.float64)


def _int_range(t: str) -> tuple[int, int]:
    n = 8 * TYPE_BYTES[t]
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if t[0] == "s" else (0, (1 << n) - 1)


def build(ctx, st, parts):
    mods = [p for p in parts[1:-2]]
    dt, at = parts[-2], parts[-1]
    known = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "satfinite", "relu"}
    if any(m not in known for m in mods):
        ctx.unsupported(st, f"cvt modifier .{next(m for m in mods if m not in known)}")
    sat, ftz = "sat" in mods, "ftz" in mods
    mode = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), "rn")
    imode = next((m for m in mods if m in _IMODES), None)
    d = st.operands[0]
    if dt == "e4m3x2" and at == "f16x2":
        ra, w = ctx.src_full(st.operands[1], "b32"), ctx.dst(d, "b16")
        if mods != ["rn", "satfinite"]:
            ctx.unsupported(st, "cvt to e4m3x2 other than .rn.satfinite")
        return lambda m: w(nx.cvt_rn_satfinite_e4m3x2_f16x2(ra()), m)
    if dt == "f16x2" and at == "e4m3x2":
        ra, w = ctx.src_full(st.operands[1], "b16"), ctx.dst(d, "b32")
        return lambda m: w(nx.cvt_rn_f16x2_e4m3x2(ra()), m)
    if dt in ("f16x2", "bf16x2") and at == "f32":
        ra, rb = ctx.src_full(st.operands[1], "f32"), ctx.src_full(st.operands[2], "f32")
        w = ctx.dst(d, "b32")
        one = _float_to_float(dt[:-2], "f32", mode, ftz, sat, "relu" in mods)

        def pack(m):
            hi, lo = one(ra()), one(rb())
            w(lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16)), m)
        return pack
    if dt in _INT and at in _INT:
        return _int_int(ctx, st, dt, at, sat)
    if dt in _FLOAT and at in _FLOAT:
        ra, w = ctx.src_full(st.operands[1], at), ctx.dst(d, dt)
        if dt == at:
            f = _round_integral(imode, at, ftz, sat)
        else:
            f = _float_to_float(dt, at, mode, ftz, sat, "relu" in mods)
        return lambda m: w(f(ra()), m)
    if dt in _INT and at in _FLOAT:
        ra, w = ctx.src_full(st.operands[1], at), ctx.dst(d, dt)
        lo, hi = _int_range(dt)
        rnd = _IMODES[imode or "rni"]

        def f2i(m):
            x = ra()
            if ftz and at == "f32":
                x = flush_f32(x.view(np.float32)).view(np.uint32)
            v = rnd(_to_f64(x, at))
            nan = np.isnan(v)
            v = np.clip(np.where(nan, 0.0, v), lo, hi)
            if TYPE_BYTES[dt] == 8:  # float64 cannot hold 2^63 - 1 / 2^64 - 1 exactly: saturate explicitly
                big = v >= float(hi)
                r = np.where(big, hi, np.where(big, 0, v).astype(np.int64 if dt[0] == "s" else np.uint64))
                w(np.asarray(r).astype(view_dtype(dt)).view(UINT[8]), m)
                return
            w(v.astype(np.int64).astype(view_dtype(dt)).view(UINT[TYPE_BYTES[dt]]), m)
        return f2i
    if dt in _FLOAT and at in _INT:
        ra, w = ctx.src_full(st.operands[1], at), ctx.dst(d, dt)
        vd = view_dtype(at)

        def i2f(m):
            x = ra().view(vd)
            if dt == "f64":
                w(x.astype(np.float64).view(np.uint64), m)
                return
            if TYPE_BYTES[at] == 8 and mode != "rn":
                ctx.unsupported(st, "cvt of a 64-bit integer to float with a directed rounding")
            exact = x.astype(np.float64) if TYPE_BYTES[at] < 8 else x
            if dt == "f32":
                r = x.astype(np.float32) if TYPE_BYTES[at] == 8 else round_f64_to_f32(exact, mode)
                w(np.asarray(r, np.float32).view(np.uint32), m)
            elif dt == "f16":
                w(round_f64_to_f16(np.asarray(exact, np.float64), mode), m)
            else:
                if mode != "rn":
                    ctx.unsupported(st, "cvt to bf16 with a directed rounding")
                w(f64_to_bf16_rn(np.asarray(exact, np.float64)), m)
        return i2f
    ctx.unsupported(st, f"cvt.{dt}.{at}")


def _int_int(ctx, st, dt, at, sat):
    ra, w = ctx.src_full(st.operands[1], at), ctx.dst(st.operands[0], dt)
    vd, vs = view_dtype(dt), view_dtype(at)
    lo, hi = _int_range(dt)
    nd = TYPE_BYTES[dt]

    def run(m):
        x = ra().view(vs)
        if sat:
            if x.dtype == np.uint64:
                x = np.minimum(x, np.uint64(hi) if hi < (1 << 64) else x)
                r = x.astype(vd)
            else:
                r = np.clip(x.astype(np.int64), lo, min(hi, (1 << 63) - 1)).astype(vd)
        else:
            r = x.astype(SINT[TYPE_BYTES[at]] if at[0] == "s" else UINT[TYPE_BYTES[at]]).astype(vd)
        w(r.view(UINT[nd]), m)
    return run


def _float_to_float(dt, at, mode, ftz, sat, relu=False):
    def f(x):
        if at == "f32" and ftz:
            x = flush_f32(x.view(np.float32)).view(np.uint32)
        if dt == "f16" and at == "f32" and mode == "rn" and not sat and not relu:
            return nx.f32_to_f16_rn(x.view(np.float32))
        v = _to_f64(x, at)
        if relu:
            v = np.where(np.isnan(v), v, np.maximum(v, 0.0))
        if sat:
            v = np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0))
        if dt == "f16":
            return round_f64_to_f16(v, mode)
        if dt == "bf16":
            return f64_to_bf16_rn(v)
        if dt == "f32":
            r = round_f64_to_f32(v, mode)
            if ftz:
                r = flush_f32(r)
            bits = np.asarray(r, np.float32).view(np.uint32)
            return np.where(np.isnan(r), np.uint32(0x7FFFFFFF), bits)
        return v.view(np.uint64)
    return f


def _round_integral(imode, t, ftz, sat):
    rnd = _IMODES.get(imode)

    def f(x):
        v = _to_f64(x, t)
        if t == "f32" and ftz:
            v = flush_f32(v.astype(np.float32)).astype(np.float64)
        if rnd is not None:
            v = rnd(v)
        if sat:
            v = np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0))
        if t == "f32":
            return v.astype(np.float32).view(np.uint32)
        if t == "f64":
            return v.view(np.uint64)
        return round_f64_to_f16(v, "rn") if t == "f16" else f64_to_bf16_rn(v)
    return f


BUILDERS = {"cvt": build}
