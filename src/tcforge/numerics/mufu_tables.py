"""MUFU ops from tables measured on the GPU and proved there on all 2^32 inputs by `tools/truth/mufu.py` (H100):
`sqrt.approx.ftz.f32` (MUFU.SQRT); the f64 seeds MUFU.RCP64H / MUFU.RSQ64H (`rcp.approx.ftz.f64`,
`rsqrt.approx.ftz.f64`: the high word in, the high word of the result out); MUFU.LG2 (`lg2.approx.ftz.f32`: the rows
E = 0 and E = -1, from which the exponent's sum rounded toward zero gives every other result); MUFU.SIN / COS (one
quarter revolution of 2^23 buckets, from which the symmetries give both ops' whole 2^25-bucket tables); MUFU.TANH
(`tanh.approx.f32`: 6,684,672 buckets over the binades 2^-8..8, `tools/truth/mufu_tanh.py`) — and the
half-precision `tanh.approx.f16` / `.bf16`, `ex2.approx.f16` and `ex2.approx.ftz.bf16`, whole 65,536-entry tables
read off the corpus entry `cu_mufu16_all`.

The model is the one the device tool checks, as for numerics/approx.py's ops: a table per mantissa (and exponent
parity for the square roots), stored as corrections to the nearest value of the exact function (rows of bit
patterns as first differences), with exact exponent scaling and the specials the tool counts. `available(op)` says
whether the shipped archive holds the op's table; the emulator refuses an instruction whose table it does not hold
(`python3 -m tools.truth.mufu --pack FILE` adds one)."""

from __future__ import annotations

from functools import cache

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.numerics.approx import TABLES_PATH, _bits, parity_inputs

HALF_OPS = ("tanh_f16", "ex2_f16", "tanh_bf16", "ex2_bf16")  # cu_mufu16_all's out0 columns, in order
_KEYS = {"sqrt": "sqrt_corr", "rcp64h": "rcp64h_corr", "rsq64h": "rsq64h_corr", "lg2_t0": "lg2_t0_d1",
         "lg2_t1": "lg2_t1_d1", "trig": "trig_quarter_d1", "tanh": "tanh_delta",
         **{op: f"{op}_table" for op in HALF_OPS}}
_NEEDS = {"lg2": ("lg2_t0", "lg2_t1"), "sin": ("trig",), "cos": ("trig",)}  # ops on other keys' tables
BUCKETS = 1 << 25  # sin / cos: buckets per revolution
TANH_BINADES = tuple(range(-8, 3))  # tanh: the binades 2^E <= |x| < 2^(E + 1) with a table (below: x; above: 1)
_NAN = np.uint32(0x7FFFFFFF)


def available(op: str) -> bool:
    """True when the shipped table archive holds `op`'s measured table (sqrt, rcp64h, rsq64h, lg2, sin, cos, tanh,
    HALF_OPS)."""
    if not TABLES_PATH.is_file():
        return False
    with np.load(TABLES_PATH) as z:
        return all(_KEYS[k] in z.files for k in _NEEDS.get(op, (op,)))


def trig_lookup(quarter: np.ndarray, op: str, q: np.ndarray) -> np.ndarray:
    """sin's or cos's result bits at buckets q (of BUCKETS per revolution) from sin's first quarter revolution:
    sin[q] = sin[BUCKETS/2 - 1 - q] (each bucket mirrored about the quarter), sin[q + BUCKETS/2] = -sin[q], cos[q] =
    sin[q + BUCKETS/4] — as the H100 gives on every bucket an f32 input reaches."""
    quarter = np.asarray(quarter, np.uint32)
    if quarter.shape != (BUCKETS // 4,):
        raise TcforgeError(f"MUFU sin / cos: the quarter table has shape {quarter.shape}, not ({BUCKETS // 4},)")
    q = (np.asarray(q, np.int64) + (BUCKETS // 4 if op == "cos" else 0)) % BUCKETS
    j = q % (BUCKETS // 2)
    j = np.where(j >= BUCKETS // 4, BUCKETS // 2 - 1 - j, j)
    return quarter[j] ^ np.where(q >= BUCKETS // 2, np.uint32(0x80000000), np.uint32(0))


def trig_table(quarter: np.ndarray, op: str) -> np.ndarray:
    """sin's or cos's whole table (uint32 bits, BUCKETS) from sin's first quarter revolution (trig_lookup)."""
    return trig_lookup(quarter, op, np.arange(BUCKETS))


@cache
def _table(op: str) -> np.ndarray:
    """The op's full result table (uint32), expanded from its corrections."""
    if not available(op):
        raise TcforgeError(f"MUFU {op}: no measured table in {TABLES_PATH.name} yet (tools/truth/mufu.py)")
    with np.load(TABLES_PATH) as z:
        corr = z[_KEYS[op]].astype(np.int64)
        if op == "tanh":  # the first bucket's pattern, then first differences
            corr[0] += int(z["tanh_t0"])
    if op in HALF_OPS:
        return corr.astype(np.uint16)  # the whole table, one result per 16-bit input
    if op in ("lg2_t0", "lg2_t1", "trig", "tanh"):
        return np.cumsum(corr).astype(np.uint32)  # the row's bit patterns, from their first differences
    if op == "sqrt":
        base = np.sqrt(parity_inputs().astype(np.float64)).astype(np.float32).view(np.int32).astype(np.int64)
    else:
        i = np.arange(1 << (20 if op == "rcp64h" else 21), dtype=np.uint64)
        x = (((np.uint64(1023) + (i >> np.uint64(20))) << np.uint64(52)) | ((i & np.uint64(0xFFFFF)) << np.uint64(32)))
        xv = x.view(np.float64)
        exact = 1.0 / xv if op == "rcp64h" else 1.0 / np.sqrt(xv)
        base = (exact.view(np.uint64) >> np.uint64(32)).astype(np.int64)
    return (base + corr).astype(np.uint32)


def sqrt_approx_ftz_f32(x: object) -> np.ndarray:
    """`sqrt.approx.ftz.f32` (MUFU.SQRT): T[parity, mantissa] * 2^((E - parity) / 2); +-0 and subnormals give +-0,
    negatives NaN, +inf +inf."""
    u = _bits(x, "x")
    s, e, m = u >> np.uint32(31), (u >> np.uint32(23)) & np.uint32(255), u & np.uint32(0x7FFFFF)
    big_e = e.astype(np.int64) - 127
    p = big_e & 1
    t = _table("sqrt")[(p.astype(np.uint32) << np.uint32(23)) | m].astype(np.int64) + ((big_e - p) // 2 << 23)
    out = np.where(s == 1, _NAN, t.astype(np.uint32))
    out = np.where(e == 0, s << np.uint32(31), out)
    out = np.where(e == 255, np.where((m != 0) | (s == 1), _NAN, np.uint32(0x7F800000)), out)
    return out.astype(np.uint32).view(np.float32)


def _f64_seed(op: str, hi: np.ndarray) -> np.ndarray:
    s, e, m = hi & np.uint32(0x80000000), (hi >> np.uint32(20)) & np.uint32(0x7FF), hi & np.uint32(0xFFFFF)
    big_e = e.astype(np.int64) - 1023
    rsq = op == "rsq64h"
    p = (big_e & 1) if rsq else np.zeros_like(big_e)
    shift = (big_e - p) // 2 if rsq else big_e
    t = _table(op)[(p.astype(np.uint32) << np.uint32(20)) | m]
    re = ((t >> np.uint32(20)) & np.uint32(0x7FF)).astype(np.int64) - shift
    sign = np.uint32(0) if rsq else s
    out = np.where(re <= 0, sign, sign | (np.clip(re, 0, 2047).astype(np.uint32) << np.uint32(20)) | (t & 0xFFFFF))
    if rsq:
        out = np.where(s != 0, _NAN, out)
    out = np.where(e == 0, s | np.uint32(0x7FF00000), out)
    inf = np.where(rsq & (s != 0), _NAN, np.uint32(0) if rsq else s)
    return np.where(e == 0x7FF, np.where(m != 0, _NAN, inf), out).astype(np.uint32)


def rcp64h(hi: np.ndarray) -> np.ndarray:
    """MUFU.RCP64H on high words (uint32): the high word of `rcp.approx.ftz.f64`'s result."""
    return _f64_seed("rcp64h", np.asarray(hi, np.uint32))


def rsq64h(hi: np.ndarray) -> np.ndarray:
    """MUFU.RSQ64H on high words (uint32): the high word of `rsqrt.approx.ftz.f64`'s result."""
    return _f64_seed("rsq64h", np.asarray(hi, np.uint32))


def half_op(op: str, bits: np.ndarray) -> np.ndarray:
    """One of HALF_OPS on 16-bit float bits (uint16): the measured result of every input."""
    return _table(op)[np.asarray(bits, np.uint16)]


def _rz_fixed48(v: np.ndarray) -> np.ndarray:
    """v * 2^-48 (int64) rounded toward zero to f32 bits."""
    sign = np.where(v < 0, np.uint32(0x80000000), np.uint32(0))
    mag = np.abs(v)
    _, ex = np.frexp(mag.astype(np.float64))
    p = ex.astype(np.int64) - 1
    p = np.where((mag >> np.maximum(p, 0)) == 0, p - 1, p)  # the float conversion may have rounded up a power of 2
    p = np.maximum(p, 0)
    mant = np.where(p >= 23, mag >> np.maximum(p - 23, 0), mag << np.maximum(23 - p, 0)) & 0x7FFFFF
    out = sign | ((p - 48 + 127).astype(np.uint32) << np.uint32(23)) | mant.astype(np.uint32)
    return np.where(mag == 0, sign, out).astype(np.uint32)


def lg2_approx_ftz_f32(x: object) -> np.ndarray:
    """`lg2.approx.ftz.f32` (MUFU.LG2): (E + F[m]) rounded toward zero, F from the measured rows E = 0 (from below)
    and E = -1 (from above, 1 + row), exact in 2^-48 fixed point; ±0 and subnormals give -inf, negatives NaN."""
    u = _bits(x, "x")
    s, e, m = u >> np.uint32(31), (u >> np.uint32(23)) & np.uint32(255), u & np.uint32(0x7FFFFF)
    t0, t1 = _table("lg2_t0")[m], _table("lg2_t1")[m]
    big_e = e.astype(np.int64) - 127
    with np.errstate(all="ignore"):
        f0 = np.ldexp(t0.view(np.float32).astype(np.float64), 48).astype(np.int64)
        f1 = (1 << 48) + np.ldexp(t1.view(np.float32).astype(np.float64), 48).astype(np.int64)
    out = _rz_fixed48((big_e << 48) + np.where(big_e > 0, f0, f1))
    out = np.where(big_e == 0, t0, np.where(big_e == -1, t1, out))
    out = np.where(s == 1, _NAN, out)
    out = np.where(e == 0, np.uint32(0xFF800000), out)
    out = np.where(e == 255, np.where((m != 0) | (s == 1), _NAN, np.uint32(0x7F800000)), out)
    return out.astype(np.uint32).view(np.float32)


REVOLUTION = np.float32(0.15915493667125701904)  # 1/2pi as ptxas's FMUL.RZ ahead of MUFU.SIN / COS takes it


def revolution_bucket(x: np.ndarray) -> np.ndarray:
    """q = trunc(frac(|r|) * 2^25) of r = x * (1/2pi) rounded toward zero (FMUL.RZ), for float32 x."""
    with np.errstate(all="ignore"):
        p = np.abs(np.asarray(x, np.float32).astype(np.float64) * np.float64(REVOLUTION))  # exact: 24 x 24 bits
        r = p.astype(np.float32)
        r = np.where(r.astype(np.float64) > p, np.nextafter(r, np.float32(0)), r).astype(np.float64)
        q = np.floor((r - np.floor(r)) * 2.0**25)
    return np.where(np.isfinite(q), q, 0).astype(np.int64)


def trig_approx_f32(op: str, x: object) -> np.ndarray:
    """`sin` / `cos.approx(.ftz).f32` (FMUL.RZ by 1/2pi, MUFU.SIN / COS): T[q] of the revolution bucket, odd in x
    for sin and even for cos; infinities and NaN give NaN."""
    u = _bits(x, "x")
    t = trig_lookup(_table("trig"), op, revolution_bucket(u.view(np.float32)))
    if op == "sin":
        t = t ^ (u & np.uint32(0x80000000))
    return np.where((u & np.uint32(0x7F800000)) == np.uint32(0x7F800000), _NAN, t).astype(np.uint32).view(np.float32)


@cache
def _tanh_layout() -> tuple[np.ndarray, np.ndarray]:
    """(bucket bits k_E, first bucket of each binade's table) over TANH_BINADES."""
    with np.load(TABLES_PATH) as z:
        k = z["tanh_k"].astype(np.int64)
    return k, np.concatenate([[0], np.cumsum(1 << (23 - k))[:-1]])


def tanh_approx_f32(x: object) -> np.ndarray:
    """`tanh.approx.f32` (MUFU.TANH): odd in x; x itself below 2^-8 (zeros and subnormals too), 1 from 8 on
    (infinities too), NaN gives 0x7fffffff; in between T[E][m >> k_E], the binade E = -8..2 and the mantissa's top
    23 - k_E bits (17 at E = -8, 21 at E = 1) naming a bucket — the H100's results on all 2^32 inputs."""
    u = _bits(x, "x")
    mag, sign = u & np.uint32(0x7FFFFFFF), u & np.uint32(0x80000000)
    e = (mag >> np.uint32(23)).astype(np.int64) - 127
    k, first = _tanh_layout()
    row = np.clip(e - TANH_BINADES[0], 0, len(TANH_BINADES) - 1)
    inside = (e >= TANH_BINADES[0]) & (e <= TANH_BINADES[-1])
    idx = np.where(inside, first[row] + ((mag & np.uint32(0x7FFFFF)).astype(np.int64) >> k[row]), 0)
    y = np.where(inside, _table("tanh")[idx] | sign, np.where(e > TANH_BINADES[-1], sign | np.uint32(0x3F800000), u))
    return np.where(mag > np.uint32(0x7F800000), _NAN, y).astype(np.uint32).view(np.float32)
