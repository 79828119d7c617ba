"""MUFU.SQRT and MUFU.LG2 (`sqrt.approx.ftz.f32`, `lg2.approx.ftz.f32`) measured on the GPU, for models in the style
of numerics/approx.py:

    python3 -m tools.truth.mufu_f32 --out FILE.npz     # on the GPU (CuPy); seconds

- SQRT, hypothesis (as MUFU.RSQ): x = 1.m * 2^E, p = E & 1, result = T[p, m] * 2^((E - p) / 2) with T over [1, 4).
  Measured: `sqrt_corr` (int8, 2^24) = T - float32(sqrt(float64(1.m * 2^p))) in ulps, then every one of the 2^32
  inputs checked on the device against that model (specials: +-0 and subnormals -> +-0, negative -> NaN,
  +inf -> +inf, NaN -> 0x7fffffff, all assumed and counted): `sqrt_mismatches`, `sqrt_first` (input, device result).
- Study data for models to be fitted on the CPU (uint32 results): LG2 at every 16th mantissa of E = 0 (`lg2_e0`)
  and every 1024th at a spread of exponents (`lg2_sampled`, rows = `lg2_exponents`); `tanh.approx.f32` and
  `sin` / `cos.approx.ftz.f32` at every 1024th mantissa of E = -14..4 (`*_sampled`, rows = `study_exponents`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

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
    """Run the captures and the whole-domain check on the GPU; write `out`; 0 when the SQRT model holds."""
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
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    np.savez_compressed(out, sqrt_corr=corr.get(), sqrt_clipped=clipped.get(), sqrt_mismatches=np.array(mismatches),
                        sqrt_first=first.get()[:2 * min(mismatches, 256)].reshape(-1, 2), **study,
                        lg2_exponents=np.array(LG2_EXPONENTS), study_exponents=np.array(STUDY_EXPONENTS),
                        gpu=np.array(name))
    values, counts = np.unique(corr.get(), return_counts=True)
    spread = ", ".join(f"{int(v):+d} x{int(n)}" for v, n in zip(values, counts, strict=True))
    print(f"{name}: sqrt corrections {spread} (clipped {int(clipped.get()[0])}); whole-domain check: {mismatches} "
          f"mismatches of 2^32; study data captured; {time.time() - t0:.1f} s -> {out}")
    return 0 if mismatches == 0 else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.truth.mufu_f32", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the .npz to write")
    return measure(ap.parse_args(argv).out)


if __name__ == "__main__":
    sys.exit(main())
