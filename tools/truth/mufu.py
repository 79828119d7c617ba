"""MUFU ops without a model yet, measured on the GPU for models in the style of numerics/approx.py:

    python3 -m tools.truth.mufu --out FILE.npz     # on the GPU (CuPy); seconds
    python3 -m tools.truth.mufu --pack FILE.npz    # here: ship the tables whose whole-domain check passed
    python3 -m tools.truth.mufu --pack CORPUS.npz  # here: ship tanh / ex2 f16 / bf16 from cu_mufu16_all's run

- SQRT, hypothesis (as MUFU.RSQ): x = 1.m * 2^E, p = E & 1, result = T[p, m] * 2^((E - p) / 2) with T over [1, 4).
  Measured: `sqrt_corr` (int8, 2^24) = T - float32(sqrt(float64(1.m * 2^p))) in ulps, then every one of the 2^32
  inputs checked on the device against that model (specials: +-0 and subnormals -> +-0, negative -> NaN,
  +inf -> +inf, NaN -> 0x7fffffff, all assumed and counted): `sqrt_mismatches`, `sqrt_first` (input, device result).
- Study data for models to be fitted on the CPU (uint32 results): LG2 at every 16th mantissa of E = 0 (`lg2_e0`)
  and every 1024th at a spread of exponents (`lg2_sampled`, rows = `lg2_exponents`); `tanh.approx.f32` and
  `sin` / `cos.approx.ftz.f32` at every 1024th mantissa of E = -14..4 (`*_sampled`, rows = `study_exponents`;
  MUFU.TANH's tables come from tools/truth/mufu_tanh.py, which this tool's --pack takes too).
- MUFU.RCP64H and MUFU.RSQ64H (`rcp.approx.ftz.f64`, `rsqrt.approx.ftz.f64`: ptxas reads the input's high word only
  and returns the result's high word over a zero low word), functions of 32 bits: hypothesis as for the f32 ops,
  a table over the 20-bit mantissa (rsqrt: and the exponent's parity) and exact exponent scaling. Measured:
  `rcp64h_corr` (int16, 2^20) and `rsq64h_corr` (int16, 2^21) = table - the high word of the f64 nearest the exact
  value, then all 2^32 high words checked on the device against that model (specials assumed as for f32: +-0 and
  subnormals -> +-inf, rcp of +-inf -> +-0, NaN -> 0x7fffffff, rsqrt of a negative -> NaN, results below the
  normal range -> +-0): mismatches per sign-and-exponent (`*_bad_by_exp`, 4096) and the first 1024 (input, result);
  `*_rows` the results at 16 mantissas of every sign-and-exponent, for fitting what the model gets wrong.
- LG2 (`lg2.approx.ftz.f32`), hypothesis from the study data: one fraction table F in sign-magnitude fixed point,
  result = (E + F[m]) rounded toward zero; the rows E = 0 (F from below) and E = -1 (F from above, as 1 + row) over
  all 2^23 mantissas (`lg2_t0_d1`, `lg2_t1_d1`: first differences of the bit patterns, int32), then all 2^32 inputs
  checked against that model (±0 and subnormals -> -inf, negatives and NaN -> NaN, +inf -> +inf):
  `lg2_mismatches`, `lg2_bad_by_exp` (by sign and exponent, 512), `lg2_first`.
- SIN / COS (`sin` / `cos.approx.ftz.f32`: FMUL.RZ by 1/2pi, then MUFU.SIN / COS), hypothesis from the study data:
  the result is T[q] of the revolutions' fraction truncated to 25 bits, q = trunc(frac(|r|) * 2^25), odd in x for sin
  and even for cos. Every non-negative finite input fills its bucket (`*_conflicts`: a bucket given two values), then
  all 2^32 inputs are checked (infinities and NaN -> NaN). Written beside FILE as FILE_sin.npz / FILE_cos.npz:
  `*_t_d1` (first differences of the 2^25 bit patterns, unreached buckets holding the value before), `*_reached`,
  `*_mismatches`, `*_bad_by_exp`, `*_first`. --pack ships one quarter of sin's table (`trig_quarter_d1`, 2^23
  buckets) once the whole tables that numerics.mufu_tables.trig_table derives from it equal sin's and cos's measured
  ones on every bucket an f32 input reaches (`reached_buckets`); the sin file goes first.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import cache
from pathlib import Path

import numpy as np

from tcforge.numerics import mufu_tables
from tcforge.numerics.approx import TABLES_PATH
from tcforge.numerics.mufu_tables import HALF_OPS, TANH_BINADES

_SRC = r"""
extern "C" __global__ void sqrt_corr(signed char* corr, unsigned* clipped)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;  // i = p << 23 | m
    if (i >= (1u << 24)) return;
    float x = __uint_as_float(((127u + (i >> 23)) << 23) | (i & 0x7fffffu)), r;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    int d = int(__float_as_uint(r)) - int(__float_as_uint(__double2float_rn(sqrt(double(x)))));
    if (d > 127 || d < -128) atomicAdd(clipped, 1u);
    corr[i] = (signed char)(d > 127 ? 127 : (d < -128 ? -128 : d));
}

__device__ unsigned sqrt_model(unsigned u, const signed char* corr)
{
    unsigned s = u >> 31, e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    if (e == 255u) return m ? 0x7fffffffu : (s ? 0x7fffffffu : 0x7f800000u);
    if (e == 0u) return s << 31;
    if (s) return 0x7fffffffu;
    int E = int(e) - 127, p = E & 1, half = (E - p) / 2;
    unsigned i = (unsigned(p) << 23) | m;
    float x = __uint_as_float(((127u + unsigned(p)) << 23) | m);
    unsigned t = unsigned(int(__float_as_uint(__double2float_rn(sqrt(double(x))))) + int(corr[i]));
    return unsigned(int(t) + half * (1 << 23));
}

extern "C" __global__ void sqrt_verify(const signed char* corr, unsigned long long start, unsigned* bad,
                                       unsigned* first)
{
    unsigned u = unsigned(start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
    float r;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(__uint_as_float(u)));
    unsigned got = __float_as_uint(r);
    if (got != sqrt_model(u, corr)) {
        unsigned k = atomicAdd(bad, 1u);
        if (k < 256) { first[2 * k] = u; first[2 * k + 1] = got; }
    }
}

__device__ unsigned mufu64h(int op, unsigned hi)
{
    double x = __hiloint2double(int(hi), 0), r;
    if (op == 0) asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    else asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    return unsigned(__double2hiint(r));
}

__device__ double mufu64h_input(int op, unsigned i)  // i = p << 20 | m: 1.m * 2^p
{
    return __hiloint2double(int(((1023u + (i >> 20)) << 20) | (i & 0xfffffu)), 0);
}

extern "C" __global__ void f64_corr(int op, short* corr, unsigned* clipped)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = op == 0 ? 1u << 20 : 1u << 21;
    if (i >= n) return;
    double x = mufu64h_input(op, i);
    double exact = op == 0 ? 1.0 / x : 1.0 / sqrt(x);
    unsigned hi = unsigned(__double2hiint(x)), base = unsigned(__double2hiint(exact));
    int d = int(mufu64h(op, hi)) - int(base);
    if (d > 32767 || d < -32768) atomicAdd(clipped, 1u);
    corr[i] = short(d > 32767 ? 32767 : (d < -32768 ? -32768 : d));
}

__device__ unsigned f64_model(int op, unsigned u, const short* corr)
{
    unsigned s = u & 0x80000000u, e = (u >> 20) & 0x7ffu, m = u & 0xfffffu;
    if (e == 0x7ffu) return m ? 0x7fffffffu : (op == 1 && s ? 0x7fffffffu : s);
    if (e == 0u) return s | 0x7ff00000u;
    if (op == 1 && s) return 0x7fffffffu;
    int E = int(e) - 1023, p = op == 1 ? (E & 1) : 0, shift = op == 1 ? (E - p) / 2 : E;
    unsigned i = (unsigned(p) << 20) | m;
    double x = mufu64h_input(op, i), exact = op == 0 ? 1.0 / x : 1.0 / sqrt(x);
    unsigned t = unsigned(__double2hiint(exact) + int(corr[i]));
    int re = int((t >> 20) & 0x7ffu) - shift;
    if (re <= 0) return s;
    return s | (unsigned(re) << 20) | (t & 0xfffffu);
}

extern "C" __global__ void f64_verify(int op, const short* corr, unsigned long long start, unsigned* bad_by_exp,
                                      unsigned* bad, unsigned* first)
{
    unsigned u = unsigned(start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
    unsigned got = mufu64h(op, u);
    if (got != f64_model(op, u, corr)) {
        atomicAdd(&bad_by_exp[u >> 20], 1u);
        unsigned k = atomicAdd(bad, 1u);
        if (k < 1024) { first[2 * k] = u; first[2 * k + 1] = got; }
    }
}

extern "C" __global__ void f64_rows(int op, const unsigned* mants, unsigned* out)  // 4096 sign-exponents x 16
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 4096u * 16u) return;
    out[i] = mufu64h(op, ((i >> 4) << 20) | mants[i & 15u]);
}

__device__ unsigned lg2_ftz(unsigned u)
{
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(__uint_as_float(u)));
    return __float_as_uint(r);
}

extern "C" __global__ void lg2_row(int E, unsigned* out)  // every mantissa of exponent E
{
    unsigned m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m < (1u << 23)) out[m] = lg2_ftz((unsigned(127 + E) << 23) | m);
}

__device__ unsigned rz_fixed48(long long v)  // v * 2^-48 rounded toward zero to f32 bits
{
    unsigned s = v < 0 ? 0x80000000u : 0u;
    unsigned long long M = v < 0 ? (unsigned long long)(-v) : (unsigned long long)v;
    if (M == 0ull) return s;
    int p = 63 - __clzll((long long)M);
    unsigned long long mant = p >= 23 ? (M >> (p - 23)) : (M << (23 - p));
    return s | (unsigned(p - 48 + 127) << 23) | (unsigned(mant) & 0x7fffffu);
}

// LG2, hypothesis: one fraction table F (sign-magnitude fixed point), result = rz(E + F[m]); the E = 0 row gives F
// from below (rz), the E = -1 row gives 1 + row = F from above: E >= 1 from the first, E <= -2 from the second
__device__ unsigned lg2_model(unsigned u, const unsigned* t0, const unsigned* t1)
{
    unsigned s = u >> 31, e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    if (e == 255u) return (m || s) ? 0x7fffffffu : 0x7f800000u;
    if (e == 0u) return 0xff800000u;
    if (s) return 0x7fffffffu;
    int E = int(e) - 127;
    if (E == 0) return t0[m];
    if (E == -1) return t1[m];
    long long f = E > 0 ? (long long)ldexp((double)__uint_as_float(t0[m]), 48)
                        : (1ll << 48) + (long long)ldexp((double)__uint_as_float(t1[m]), 48);
    return rz_fixed48((long long)E * (1ll << 48) + f);
}

extern "C" __global__ void lg2_verify(const unsigned* t0, const unsigned* t1, unsigned long long start,
                                      unsigned* bad_by_exp, unsigned* bad, unsigned* first)
{
    unsigned u = unsigned(start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
    unsigned got = lg2_ftz(u);
    if (got != lg2_model(u, t0, t1)) {
        atomicAdd(&bad_by_exp[u >> 23], 1u);
        unsigned k = atomicAdd(bad, 1u);
        if (k < 1024) { first[2 * k] = u; first[2 * k + 1] = got; }
    }
}

__device__ unsigned trig_ftz(int op, unsigned u)  // op 0: sin, 1: cos (.approx.ftz.f32)
{
    float r;
    if (op == 0) asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(__uint_as_float(u)));
    else asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(__uint_as_float(u)));
    return __float_as_uint(r);
}

__device__ unsigned rev_bucket(unsigned u)  // trunc(frac(|x * (1/2pi)|, the product rounded toward zero) * 2^25)
{
    double r = fabs((double)__fmul_rz(__uint_as_float(u), 0.15915493667125701904f));
    return (unsigned)((r - floor(r)) * 33554432.0);
}

// SIN / COS, hypothesis from the study data: the result is a function T[q] of the bucket q, odd (sin) or even (cos)
// in x; every non-negative finite x fills its bucket (a second, different value counts as a conflict)
extern "C" __global__ void trig_fill(int op, unsigned long long start, unsigned* table, unsigned* conflicts)
{
    unsigned long long i = start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= 0x7f800000ull) return;
    unsigned u = unsigned(i), v = trig_ftz(op, u), q = rev_bucket(u);
    unsigned old = ((volatile unsigned*)table)[q];  // most inputs find their bucket filled: no atomic for them
    if (old == 0xffffffffu) old = atomicCAS(&table[q], 0xffffffffu, v);
    if (old != 0xffffffffu && old != v) atomicAdd(conflicts, 1u);
}

extern "C" __global__ void trig_verify(int op, const unsigned* table, unsigned long long start, unsigned* bad_by_exp,
                                       unsigned* bad, unsigned* first)
{
    unsigned u = unsigned(start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
    unsigned got = trig_ftz(op, u), want;
    if (((u >> 23) & 0xffu) == 255u) want = 0x7fffffffu;
    else {
        want = table[rev_bucket(u)];
        if (op == 0 && (u >> 31)) want ^= 0x80000000u;
    }
    if (got != want) {
        atomicAdd(&bad_by_exp[u >> 23], 1u);
        unsigned k = atomicAdd(bad, 1u);
        if (k < 1024) { first[2 * k] = u; first[2 * k + 1] = got; }
    }
}

// op 0: lg2, 1: tanh, 2: sin, 3: cos (.approx.ftz.f32) at every step-th mantissa of each exponent in exps
extern "C" __global__ void mufu_rows(int op, const int* exps, int n_exp, unsigned step, unsigned* out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, per = (1u << 23) / step;
    if (i >= per * unsigned(n_exp)) return;
    unsigned row = i / per, m = (i % per) * step;
    float x = __uint_as_float((unsigned(127 + exps[row]) << 23) | m), r;
    if (op == 0) asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    else if (op == 1) asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    else if (op == 2) asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    else asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    out[i] = __float_as_uint(r);
}
"""

LG2_EXPONENTS = (-126, -100, -24, -8, -2, -1, 1, 2, 3, 8, 23, 24, 100, 127)
STUDY_EXPONENTS = tuple(range(-14, 5))  # tanh / sin / cos: where they are neither x nor constant


def measure(out: Path) -> int:
    """Run the captures and the whole-domain checks on the GPU; write `out`; 0 when the SQRT model holds."""
    import cupy as cp

    mod = cp.RawModule(code=_SRC, options=("-std=c++17",))
    t0 = time.time()
    corr, clipped = cp.zeros(1 << 24, cp.int8), cp.zeros(1, cp.uint32)
    mod.get_function("sqrt_corr")(((1 << 24) // 256,), (256,), (corr, clipped))
    bad, first = cp.zeros(1, cp.uint32), cp.zeros(512, cp.uint32)
    chunk = 1 << 30
    for start in range(0, 1 << 32, chunk):
        mod.get_function("sqrt_verify")((chunk // 256,), (256,), (corr, np.uint64(start), bad, first))
    cp.cuda.runtime.deviceSynchronize()
    mismatches = int(bad.get()[0])
    def whole_domain(kernel: str, *lead) -> tuple[int, np.ndarray, np.ndarray]:
        """A verify kernel (lead arguments, start, bad_by_exp, bad, first) over all 2^32 inputs: (mismatches, the
        counts by sign and exponent field, the first 1024 (input, result) pairs)."""
        by_exp, count, pairs = cp.zeros(4096, cp.uint32), cp.zeros(1, cp.uint32), cp.zeros(2048, cp.uint32)
        for start in range(0, 1 << 32, chunk):
            mod.get_function(kernel)((chunk // 256,), (256,), (*lead, np.uint64(start), by_exp, count, pairs))
        k = int(count.get()[0])
        return k, by_exp.get(), pairs.get()[: 2 * min(k, 1024)].reshape(-1, 2)

    def rows(op: int, exps: tuple, step: int) -> np.ndarray:
        per = (1 << 23) // step
        res = cp.zeros(per * len(exps), cp.uint32)
        mod.get_function("mufu_rows")(((per * len(exps) + 255) // 256,), (256,),
                                      (np.int32(op), cp.asarray(np.array(exps, np.int32)), np.int32(len(exps)),
                                       np.uint32(step), res))
        return res.get().reshape(len(exps), per)

    study = {"lg2_sampled": rows(0, LG2_EXPONENTS, 1024), "lg2_e0": rows(0, (0,), 16)[0],
             "tanh_sampled": rows(1, STUDY_EXPONENTS, 1024), "sin_sampled": rows(2, STUDY_EXPONENTS, 1024),
             "cos_sampled": rows(3, STUDY_EXPONENTS, 1024)}
    f64 = {}
    mants = np.array([0, 1, 2, 0x7FFFF, 0x80000, 0x80001, 0xFFFFE, 0xFFFFF]
                     + list(np.random.default_rng(7).integers(3, 0xFFFFD, 8)), np.uint32)
    for op, key in ((0, "rcp64h"), (1, "rsq64h")):
        n = 1 << (20 + op)
        corr64, clip64 = cp.zeros(n, cp.int16), cp.zeros(1, cp.uint32)
        mod.get_function("f64_corr")(((n + 255) // 256,), (256,), (np.int32(op), corr64, clip64))
        k, by_exp, first64 = whole_domain("f64_verify", np.int32(op), corr64)
        rows64 = cp.zeros(4096 * 16, cp.uint32)
        mod.get_function("f64_rows")((4096 * 16 // 256,), (256,), (np.int32(op), cp.asarray(mants), rows64))
        f64 |= {f"{key}_corr": corr64.get(), f"{key}_clipped": clip64.get(), f"{key}_mismatches": np.array(k),
                f"{key}_bad_by_exp": by_exp, f"{key}_first": first64, f"{key}_rows": rows64.get().reshape(4096, 16)}
        c = corr64.get()
        print(f"{key}: corrections {int(c.min()):+d}..{int(c.max()):+d} (clipped {int(clip64.get()[0])}); "
              f"whole-domain check: {k} mismatches of 2^32 in {int((by_exp > 0).sum())} sign-exponents")
    f64["f64_row_mantissas"] = mants
    n23 = 1 << 23
    row0, row1 = cp.zeros(n23, cp.uint32), cp.zeros(n23, cp.uint32)  # E = 0 and E = -1
    mod.get_function("lg2_row")((n23 // 256,), (256,), (np.int32(0), row0))
    mod.get_function("lg2_row")((n23 // 256,), (256,), (np.int32(-1), row1))
    k, by_exp, first_l = whole_domain("lg2_verify", row0, row1)
    f64 |= {"lg2_t0_d1": _first_differences(row0.get()), "lg2_t1_d1": _first_differences(row1.get()),
            "lg2_mismatches": np.array(k), "lg2_clipped": np.array([0]), "lg2_bad_by_exp": by_exp[:512],
            "lg2_first": first_l}
    print(f"lg2: rows E = 0 and -1 captured; whole-domain check: {k} mismatches of 2^32 in "
          f"{int((by_exp > 0).sum())} sign-exponents")
    for op, key in ((0, "sin"), (1, "cos")):
        table, conflicts = cp.full(1 << 25, 0xFFFFFFFF, cp.uint32), cp.zeros(1, cp.uint32)
        for start in range(0, 0x7F800000, chunk):
            mod.get_function("trig_fill")((chunk // 256,), (256,), (np.int32(op), np.uint64(start), table, conflicts))
        k, by_exp, first_t = whole_domain("trig_verify", np.int32(op), table)
        t = table.get()
        reached = t != 0xFFFFFFFF
        filled = t[np.maximum.accumulate(np.where(reached, np.arange(t.size), 0))]  # unreached: the last value before
        arrays = {f"{key}_t_d1": _first_differences(filled), f"{key}_mismatches": np.array(k),
                  f"{key}_clipped": np.array([0]), f"{key}_conflicts": conflicts.get(),
                  f"{key}_reached": np.array(reached.sum()), f"{key}_bad_by_exp": by_exp[:512], f"{key}_first": first_t}
        np.savez_compressed(out.with_name(f"{out.stem}_{key}.npz"), **arrays)
        print(f"{key}: {int(reached.sum())} of 2^25 buckets reached, {int(conflicts.get()[0])} conflicts; whole-domain "
              f"check: {k} mismatches of 2^32 in {int((by_exp > 0).sum())} sign-exponents")
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    np.savez_compressed(out, sqrt_corr=corr.get(), sqrt_clipped=clipped.get(), sqrt_mismatches=np.array(mismatches),
                        sqrt_first=first.get()[:2 * min(mismatches, 256)].reshape(-1, 2), **study,
                        lg2_exponents=np.array(LG2_EXPONENTS), study_exponents=np.array(STUDY_EXPONENTS),
                        gpu=np.array(name), **f64)
    values, counts = np.unique(corr.get(), return_counts=True)
    spread = ", ".join(f"{int(v):+d} x{int(n)}" for v, n in zip(values, counts, strict=True))
    print(f"{name}: sqrt corrections {spread} (clipped {int(clipped.get()[0])}); whole-domain check: {mismatches} "
          f"mismatches of 2^32; study data captured; {time.time() - t0:.1f} s -> {out}")
    return 0 if mismatches == 0 else 1


def _first_differences(bits: np.ndarray) -> np.ndarray:
    """A row of result bit patterns as int32 first differences (the first entry as it is), as the archive keeps it."""
    return np.diff(bits.astype(np.int64), prepend=0).astype(np.int32)


def _pack_half(got: dict, tables: dict) -> int:
    """The half-precision tables from a corpus file holding `cu_mufu16_all` (x = every 16-bit pattern in order): the
    scalar forms' results as the table, once the x2 forms' lanes are checked to be the same lookups."""
    x, y = got["cu_mufu16_all/in/x"], got["cu_mufu16_all/in/y"]
    out0, out1 = got["cu_mufu16_all/gpu/out0"], got["cu_mufu16_all/gpu/out1"]
    if not np.array_equal(x, np.arange(1 << 16)):
        print("half-precision ops: not packed (x is not every 16-bit pattern in order)")
        return 0
    added = 0
    for col, op in enumerate(HALF_OPS):  # cu_mufu16_all's out0 columns
        table = (out0[:, col] & 0xFFFF).astype(np.uint16)
        pair = out1[:, col]
        lanes_ok = np.array_equal(pair & 0xFFFF, table[x]) and np.array_equal(pair >> 16, table[y])
        if not lanes_ok:
            print(f"{op}: not packed (the x2 form's lanes are not the scalar form's lookups)")
            continue
        tables[f"{op}_table"] = table
        added += 1
        print(f"{op}: packed (65536 results; the x2 form's lanes agree)")
    return added


@cache
def reached_buckets() -> np.ndarray:
    """Which of sin / cos's 2^25 buckets some finite f32 input reaches (bool): all below a quarter revolution (|r| <
    1/4 steps by at most 1.27 * 2^-26 there), and above it those that the inputs with 1/4 <= |r| < 2^24 reach
    (beyond, the fraction is 0); about 6 s."""
    reached = np.zeros(mufu_tables.BUCKETS, bool)
    reached[: mufu_tables.BUCKETS // 4] = True
    lo = int(np.float32(0.25 / float(mufu_tables.REVOLUTION)).view(np.uint32)) - 2
    hi = int(np.float32(2.0**24 / float(mufu_tables.REVOLUTION)).view(np.uint32)) + 2
    for start in range(lo, hi, 1 << 24):
        u = np.arange(start, min(start + (1 << 24), hi), dtype=np.uint32)
        reached[mufu_tables.revolution_bucket(u.view(np.float32))] = True
    return reached


def _pack_trig(op: str, table: np.ndarray, tables: dict) -> int:
    """sin's measured table gives the archive's quarter (`trig_quarter_d1`); either op's is checked against the whole
    table derived from that quarter on every reached bucket. 1 when it holds."""
    if op == "sin":
        quarter = table[: mufu_tables.BUCKETS // 4]
    elif "trig_quarter_d1" in tables:
        quarter = np.cumsum(tables["trig_quarter_d1"].astype(np.int64)).astype(np.uint32)
    else:
        print("cos: not packed (its table is checked against sin's quarter: pack the sin file first)")
        return 0
    reached = reached_buckets()
    differ = int((mufu_tables.trig_table(quarter, op) != table)[reached].sum())
    if differ:
        print(f"{op}: not packed ({differ} reached buckets differ from the table derived from sin's quarter)")
        return 0
    tables["trig_quarter_d1"] = _first_differences(quarter)
    tables.pop(f"{op}_t_d1", None)
    print(f"{op}: packed ({int(reached.sum())} reached buckets equal the table derived from sin's quarter, "
          f"{quarter.size} buckets)")
    return 1


def _pack_tanh(got: dict, tables: dict) -> int:
    """MUFU.TANH's bucket tables (tools/truth/mufu_tanh.py) as the first result's pattern, int16 first differences
    and the bucket bits per binade, once the whole-domain check found no mismatch; 1 when packed."""
    bad = int(got["tanh_mismatches"])
    if bad or list(got["tanh_binades"]) != list(TANH_BINADES):
        print(f"tanh: not packed ({bad} mismatches of 2^32, binades {list(got['tanh_binades'])})")
        return 0
    d1 = got["tanh_t_d1"].astype(np.int64)
    delta = np.concatenate([[0], d1[1:]])
    if delta.min() < -32768 or delta.max() > 32767:
        print("tanh: not packed (a first difference outside int16)")
        return 0
    tables.update(tanh_t0=np.uint32(d1[0]), tanh_delta=delta.astype(np.int16), tanh_k=got["tanh_k"].astype(np.int8))
    print(f"tanh: packed ({d1.size} buckets over binades {TANH_BINADES[0]}..{TANH_BINADES[-1]})")
    return 1


def pack(measured: Path, archive: Path) -> int:
    """Add the measured tables whose checks passed to the shipped archive (numerics/data): the MUFU tools' (whole-
    domain check without a mismatch: tools/truth/mufu.py, mufu_tanh.py) and, from a corpus file, the half-precision
    ones; 0 when all went in."""
    with np.load(measured) as z:
        got = {k: z[k] for k in z.files}
    with np.load(archive) as z:
        tables = {k: z[k] for k in z.files}
    added, wanted = 0, 0
    if "cu_mufu16_all/gpu/out0" in got:
        wanted += 4
        added += _pack_half(got, tables)
    if "tanh_mismatches" in got:  # tools/truth/mufu_tanh.py's file
        wanted += 1
        added += _pack_tanh(got, tables)
    for op, key in (("sqrt", "sqrt_corr"), ("rcp64h", "rcp64h_corr"), ("rsq64h", "rsq64h_corr"),
                    ("lg2", "lg2_t0_d1"), ("lg2", "lg2_t1_d1"), ("sin", "sin_t_d1"), ("cos", "cos_t_d1")):
        if f"{op}_mismatches" not in got:
            continue
        wanted += 1
        bad = int(got[f"{op}_mismatches"]) + int(np.asarray(got.get(f"{op}_conflicts", 0)).sum())
        clipped = int(np.asarray(got[f"{op}_clipped"]).sum())
        if bad or clipped:
            print(f"{op}: not packed ({bad} mismatches of 2^32, {clipped} clipped corrections)")
            continue
        if op in ("sin", "cos"):
            added += _pack_trig(op, np.cumsum(got[key].astype(np.int64)).astype(np.uint32), tables)
            continue
        corr = got[key].astype(np.int64)
        small = corr.min() >= -128 and corr.max() <= 127
        wide = op == "lg2"  # whole rows as first differences
        tables[key] = corr.astype(np.int32) if wide else corr.astype(np.int8 if small else np.int16)
        added += 1
        what = "first differences" if wide else f"corrections in {int(corr.min()):+d}..{int(corr.max()):+d}"
        print(f"{op}: packed ({corr.size} {what})")
    if not wanted:
        print(f"{measured}: neither a MUFU measurement nor a corpus file with cu_mufu16_all")
        return 2
    np.savez_compressed(archive, **tables)
    print(f"{archive}: {archive.stat().st_size / 1e6:.2f} MB")
    return 0 if added == wanted else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.truth.mufu", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="measure on the GPU and write this .npz")
    ap.add_argument("--pack", type=Path, metavar="MEASURED", help="add a measured .npz's checked tables to --archive")
    ap.add_argument("--archive", type=Path, default=TABLES_PATH, help="the table archive (default: the package's)")
    args = ap.parse_args(argv)
    if (args.out is None) == (args.pack is None):
        ap.error("give one of --out (measure) or --pack MEASURED")
    return measure(args.out) if args.out else pack(args.pack, args.archive)


if __name__ == "__main__":
    sys.exit(main())
