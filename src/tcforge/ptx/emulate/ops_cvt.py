"""`cvt`: integer <-> integer (extend, truncate, .sat), float <-> float (f16/bf16/f32/f64 with rounding modes, ftz,
sat, relu, satfinite), float -> integer (rni/rzi/rmi/rpi, saturating, the PTX ISA's NaN results), integer -> float
(one rounding in every mode, 64-bit sources included), packed f16x2/bf16x2 from two f32, e4m3x2/e5m2x2 from f16x2
or two f32 and back (satfinite, relu), and the saturating integer packs (cvt.pack.sat)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tcforge import numerics as nx
from tcforge.ptx.emulate.rounding import (
    bf16_bits_to_f64,
    f16_bits_to_f64,
    flush_f32,
    int_to_f64_round_odd,
    round_f64_to_bf16,
    round_f64_to_f16,
    round_f64_to_f32,
    round_fraction_f64,
)
from tcforge.ptx.emulate.state import SINT, TYPE_BYTES, UINT, view_dtype

_INT = {"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64"}
_FLOAT = {"f16", "bf16", "f32", "f64"}
_IMODES = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
_F8 = {"e4m3x2": (3, 7, 448.0), "e5m2x2": (2, 15, 57344.0)}  # mantissa bits, exponent bias, largest finite
_H_MAX = {"f16": 65504.0, "bf16": (2 - 2.0 ** -7) * 2.0 ** 127}  # the largest finite values


def _to_f64(x: np.ndarray, t: str) -> np.ndarray:
    if t == "f16":
        return f16_bits_to_f64(x)
    if t == "bf16":
        return bf16_bits_to_f64(x)
    if t == "f32":
        return x.view(np.float32).astype(np.float64)
    return x.view(np.float64)


def _int_range(t: str, bits: int | None = None) -> tuple[int, int]:
    """(lowest, highest) of integer type t, or of its `bits`-wide namesake (u4, s2: the packs)."""
    n = bits or 8 * TYPE_BYTES[t]
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if t[0] == "s" else (0, (1 << n) - 1)


_PACK_BITS = {"u2": 2, "s2": 2, "u4": 4, "s4": 4, "u8": 8, "s8": 8, "u16": 16, "s16": 16}


def _pack(ctx, st, parts):
    """cvt.pack.sat.T.s32{.b32} d, a, b{, c}: a and b clamped to T's range, b in the low bits, a above it, and (for
    the types narrower than 16 bits) the low bits of c above both, so that packs chain into one register."""
    ctype = next((p for p in parts[3:] if p in _PACK_BITS), None)
    if parts[1:3] != ["pack", "sat"] or ctype is None or "s32" not in parts[4:]:
        ctx.unsupported(st, f"{st.opcode} (cvt.pack.sat.{{u,s}}{{2,4,8,16}}.s32 is emulated)")
    n = _PACK_BITS[ctype]
    lo, hi = _int_range(ctype, n)
    ops = st.operands
    ra, rb = ctx.src_full(ops[1], "s32"), ctx.src_full(ops[2], "s32")
    rc = ctx.src_full(ops[3], "b32") if n < 16 and len(ops) > 3 else None
    w = ctx.dst(ops[0], "b32")
    field = np.int64((1 << n) - 1)

    def run(m):
        a = np.clip(ra().view(np.int32).astype(np.int64), lo, hi) & field
        b = np.clip(rb().view(np.int32).astype(np.int64), lo, hi) & field
        d = b | (a << n)
        if rc is not None:
            d |= rc().astype(np.int64) << (2 * n)
        w((d & 0xFFFFFFFF).astype(np.uint32), m)
    return run


def build(ctx, st, parts):
    if len(parts) > 1 and parts[1] == "pack":
        return _pack(ctx, st, parts)
    mods = [p for p in parts[1:-2]]
    dt, at = parts[-2], parts[-1]
    known = {"rn", "rna", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "satfinite", "relu"}
    if any(m not in known for m in mods):
        ctx.unsupported(st, f"cvt modifier .{next(m for m in mods if m not in known)}")
    sat, ftz, relu, satfinite = "sat" in mods, "ftz" in mods, "relu" in mods, "satfinite" in mods
    mode = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), "rn")
    imode = next((m for m in mods if m in _IMODES), None)
    d = st.operands[0]
    if dt == "tf32":
        rmode = next((m for m in mods if m in ("rna", "rn", "rz")), None)
        if at != "f32" or relu or sat or ftz or rmode is None or (satfinite and rmode != "rna"):
            ctx.unsupported(st, ".".join(parts))
        ra, w = ctx.src_full(st.operands[1], "b32"), ctx.dst(d, "b32")
        return lambda m: w(_to_tf32(ra(), rmode, satfinite), m)
    if dt in _F8 and at in ("f16x2", "f32"):
        if mode != "rn" or not satfinite:
            ctx.unsupported(st, f"cvt to {dt} other than .rn.satfinite")
        if at == "f16x2":
            ra, w = ctx.src_full(st.operands[1], "b32"), ctx.dst(d, "b16")
            return lambda m: w(_f8x2(dt, f16_bits_to_f64(ra() & np.uint32(0xFFFF)),
                                     f16_bits_to_f64(ra() >> np.uint32(16)), relu), m)
        ra, rb = ctx.src_full(st.operands[1], "f32"), ctx.src_full(st.operands[2], "f32")
        w = ctx.dst(d, "b16")
        return lambda m: w(_f8x2(dt, _to_f64(rb(), "f32"), _to_f64(ra(), "f32"), relu), m)
    if dt == "f16x2" and at in _F8:
        ra, w = ctx.src_full(st.operands[1], "b16"), ctx.dst(d, "b32")

        def unpack(m):
            x = ra()
            lo, hi = (_f8_to_f16(at, ((x >> np.uint16(s)) & np.uint16(0xFF)).astype(np.uint8), relu) for s in (0, 8))
            w(lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16)), m)
        return unpack
    if dt in ("f16x2", "bf16x2") and at == "f32":
        ra, rb = ctx.src_full(st.operands[1], "f32"), ctx.src_full(st.operands[2], "f32")
        w = ctx.dst(d, "b32")
        one = _float_to_float(dt[:-2], "f32", mode, ftz, sat, relu, satfinite)

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
            f = _float_to_float(dt, at, mode, ftz, sat, relu, satfinite)
        return lambda m: w(f(ra()), m)
    if dt in _INT and at in _FLOAT:
        return _float_int(ctx, st, dt, at, imode, ftz)
    if dt in _FLOAT and at in _INT:
        return _int_float(ctx, st, dt, at, mode)
    ctx.unsupported(st, f"cvt.{dt}.{at}")


def _to_tf32(x: np.ndarray, mode: str, satfinite: bool) -> np.ndarray:
    """cvt.{rna,rn,rz}{.satfinite}.tf32.f32 on f32 bits, as the H100 gives them (the corpus's cu_tf32_cvt): the value
    rounded to 10 fraction bits (ties away from zero for rna, to even for rn) in an f32 container with the low 13 bits
    zero; overflow to infinity. rna keeps a NaN's sign and top payload bits (a payload only in the low 13 becomes
    infinity) and .satfinite then subtracts one tf32 step from every infinite or NaN result (infinity -> the largest
    finite value); rn and rz give NaN as 0x7fffe000."""
    x = np.asarray(x, np.uint32)
    sign, mag = x & np.uint32(0x80000000), x & np.uint32(0x7FFFFFFF)
    low = mag & np.uint32(0x1FFF)
    keep = mag & ~np.uint32(0x1FFF)
    if mode == "rna":
        up = low >= np.uint32(0x1000)
    elif mode == "rn":
        up = (low > np.uint32(0x1000)) | ((low == np.uint32(0x1000)) & ((keep >> np.uint32(13)) & np.uint32(1) == 1))
    else:
        up = np.zeros(x.shape, bool)
    r = sign | np.where(mag < np.uint32(0x7F800000), keep + np.where(up, np.uint32(0x2000), np.uint32(0)), keep)
    if mode != "rna":
        return np.where(mag > np.uint32(0x7F800000), np.uint32(0x7FFFE000), r)
    if satfinite:
        r = np.where((r & np.uint32(0x7FFFFFFF)) >= np.uint32(0x7F800000), r - np.uint32(0x2000), r)
    return r


def _float_int(ctx, st, dt, at, imode, ftz):
    """Float -> integer: rounded (rni default), clamped; NaN -> 0, or 1 << (w - 1) for 64-bit or f64 (the ISA)."""
    ra, w = ctx.src_full(st.operands[1], at), ctx.dst(st.operands[0], dt)
    lo, hi = _int_range(dt)
    rnd = _IMODES[imode or "rni"]
    nbits = 8 * TYPE_BYTES[dt]
    nan_value = 1 << (nbits - 1) if (nbits == 64 or at == "f64") else 0
    ut = UINT[TYPE_BYTES[dt]]

    def f2i(m):
        x = ra()
        if ftz and at == "f32":
            x = flush_f32(x.view(np.float32)).view(np.uint32)
        v = rnd(_to_f64(x, at))
        nan = np.isnan(v)
        v = np.clip(np.where(nan, 0.0, v), lo, hi)
        if nbits == 64:  # float64 cannot hold 2^63 - 1 / 2^64 - 1 exactly: saturate explicitly
            big = v >= float(hi)
            r = np.where(big, hi, np.where(big, 0, v).astype(np.int64 if dt[0] == "s" else np.uint64))
            r = np.asarray(r).astype(view_dtype(dt)).view(ut)
        else:
            r = v.astype(np.int64).astype(view_dtype(dt)).view(ut)
        w(np.where(nan, ut(nan_value), r), m)
    return f2i


def _int_float(ctx, st, dt, at, mode):
    """Integer -> float with one rounding in rn/rz/rm/rp (64-bit sources through float64 rounded to odd)."""
    ra, w = ctx.src_full(st.operands[1], at), ctx.dst(st.operands[0], dt)
    vd = view_dtype(at)
    wide = TYPE_BYTES[at] == 8

    def i2f(m):
        x = ra().view(vd)
        if dt == "f64":
            r = x.astype(np.float64)
            if wide and mode != "rn":
                big = np.flatnonzero(np.abs(r) >= 2.0 ** 53)
                r = r.copy()
                for i in big:
                    r[i] = round_fraction_f64(Fraction(int(x[i])), mode)
            w(r.view(np.uint64), m)
            return
        odd = int_to_f64_round_odd(x) if wide else x.astype(np.float64)
        if dt == "f32":
            w(round_f64_to_f32(odd, mode).view(np.uint32), m)
        elif dt == "f16":
            w(round_f64_to_f16(odd, mode), m)
        else:
            w(round_f64_to_bf16(odd, mode), m)
    return i2f


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


# an f64 NaN in a narrower format: sign and leading fraction bits (how many) kept, with the format's quiet NaN OR'd in
_NARROW_NAN = {"f32": (np.uint32(0x7FC00000), 23), "f16": (np.uint16(0x7E00), 10), "bf16": (np.uint16(0x7FC0), 7)}


def _float_to_float(dt, at, mode, ftz, sat, relu=False, satfinite=False):
    """One float -> float conversion on bit patterns, as ptxas 13.0 lowers it for sm_90 (measured on the H100)."""
    # f64 -> f32/f16/bf16 keeps a NaN's sign and leading payload bits, quieted (F2F); f16 -> f64 quiets a NaN and keeps
    # its payload; bf16 -> f32 is a 16-bit shift (NaN bits kept); cvt.ftz.f64.f32 goes through FMUL.FTZ (a NaN
    # becomes 0x7fffffff first); cvt.*.ftz.f16.f32 drops the .ftz (F2F.F16.F32 without it: f32 subnormals round)
    if dt == "f16" and at == "f32":
        ftz = False
    if dt == "f32" and at == "bf16" and not (sat or relu or satfinite):
        return lambda x: x.astype(np.uint32) << np.uint32(16)

    def f(x):
        if at == "f32" and ftz:
            x = flush_f32(x.view(np.float32)).view(np.uint32)
            if dt == "f64":
                x = np.where((x & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000), np.uint32(0x7FFFFFFF), x)
        if dt == "f16" and at == "f32" and mode == "rn" and not (sat or relu or satfinite):
            return nx.f32_to_f16_rn(x.view(np.float32))
        out = _narrow(x, dt, at, mode, ftz, sat, relu, satfinite)
        if at == "f64" and dt in _NARROW_NAN and not sat:
            nan, mbits = _NARROW_NAN[dt]
            width = 8 * nan.dtype.itemsize
            payload = (x & np.uint64((1 << 52) - 1)) >> np.uint64(52 - mbits)  # the leading fraction bits
            keep = (payload | ((x >> np.uint64(63)) << np.uint64(width - 1))).astype(nan.dtype) | nan
            out = np.where((x & np.uint64(0x7FFFFFFFFFFFFFFF)) > np.uint64(0x7FF0000000000000), keep, out)
        if at == "f16" and dt == "f64":
            out = np.where(np.isnan(out.view(np.float64)), out | np.uint64(1 << 51), out)
        return out
    return f


def _narrow(x, dt, at, mode, ftz, sat, relu, satfinite):
    """The conversion's value path (float64 in between; NaN canonical)."""
    v = _to_f64(x, at)
    if relu:  # negative values and -0 become +0; NaN stays NaN (canonical below)
        v = np.where(np.isnan(v) | (v > 0), v, 0.0)
    if sat:
        v = np.where(np.isnan(v) | (v <= 0), 0.0, np.minimum(v, 1.0))
    if satfinite and dt in _H_MAX:  # out of range and infinities clamp to the largest finite value
        nan = np.isnan(v)
        rounded = round_f64_to_f16(v, mode) if dt == "f16" else round_f64_to_bf16(v, mode)
        inf = (rounded & np.uint16(0x7FFF)) == np.uint16(0x7C00 if dt == "f16" else 0x7F80)
        v = np.where(inf & ~nan, np.copysign(_H_MAX[dt], v), v)
    if dt == "f16":
        return round_f64_to_f16(v, mode)
    if dt == "bf16":
        return round_f64_to_bf16(v, mode)
    if dt == "f32":
        r = round_f64_to_f32(v, mode)
        if ftz:
            r = flush_f32(r)
        bits = np.asarray(r, np.float32).view(np.uint32)
        return np.where(np.isnan(r), np.uint32(0x7FFFFFFF), bits)
    return v.view(np.uint64)


def _round_integral(imode, t, ftz, sat):
    rnd = _IMODES.get(imode)

    def f(x):
        v = _to_f64(x, t)
        if t == "f32" and ftz:
            v = flush_f32(v.astype(np.float32)).astype(np.float64)
        if rnd is not None:
            v = rnd(v)
        if sat:
            v = np.where(np.isnan(v) | (v <= 0), 0.0, np.minimum(v, 1.0))
        if t == "f32":
            r = v.astype(np.float32)
            return np.where(np.isnan(r), np.uint32(0x7FFFFFFF), r.view(np.uint32))
        if t == "f64":
            return v.view(np.uint64)
        return round_f64_to_f16(v, "rn") if t == "f16" else round_f64_to_bf16(v, "rn")
    return f


def _f8_code(kind: str, v: np.ndarray, relu: bool) -> np.ndarray:
    """float64 -> e4m3 / e5m2 codes: nearest even, satfinite clamp, NaN -> 0x7f; relu: negative -> +0."""
    mbits, bias, top = _F8[kind]
    nan = np.isnan(v)
    if relu:
        v = np.where(nan | (v > 0), v, 0.0)
    sign = np.where(np.signbit(v) & ~nan, 0x80, 0).astype(np.int64)
    mag = np.abs(np.where(nan, 0.0, v))
    emin = 1 - bias
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.maximum(np.frexp(np.where(np.isinf(mag), top, mag))[1] - 1, emin)
        q = np.exp2((e - mbits).astype(np.float64))
        r = np.minimum(np.rint(np.where(np.isinf(mag), top, mag) / q) * q, top)  # exact: power-of-two scaling
    er = np.frexp(r)[1] - 1
    normal = r >= 2.0 ** emin
    efield = np.where(normal, er + bias, 0)
    mant = np.where(normal, r / np.exp2(er.astype(np.float64)) - 1.0, r / 2.0 ** emin) * (1 << mbits)
    code = (efield.astype(np.int64) << mbits) | np.rint(mant).astype(np.int64)
    return np.where(nan, 0x7F, sign | code).astype(np.uint16)


def _f8x2(kind: str, lo: np.ndarray, hi: np.ndarray, relu: bool) -> np.ndarray:
    """Two float64 values -> one 16-bit e4m3x2 / e5m2x2 word (`hi` in the upper byte)."""
    return (_f8_code(kind, lo, relu) | (_f8_code(kind, hi, relu) << np.uint16(8))).astype(np.uint16)


def _f8_to_f16(kind: str, code: np.ndarray, relu: bool) -> np.ndarray:
    """e4m3 / e5m2 codes -> f16 bits (exact; NaN -> 0x7fff; relu: negative -> +0)."""
    if kind == "e4m3x2":
        h = nx.e4m3_to_f16(code)
    else:
        h = code.astype(np.uint16) << np.uint16(8)
        h = np.where((h & np.uint16(0x7FFF)) > np.uint16(0x7C00), np.uint16(0x7FFF), h)
    h = np.asarray(h, np.uint16)
    if relu:
        h = np.where(((h & np.uint16(0x8000)) != 0) & ((h & np.uint16(0x7FFF)) <= np.uint16(0x7C00)),
                     np.uint16(0), h)
    return h.astype(np.uint16)


BUILDERS = {"cvt": build}
