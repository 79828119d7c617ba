"""MUFU.TANH (`tanh.approx.f32`) measured on the GPU for a table model:

    python3 -m tools.truth.mufu_tanh --out FILE.npz    # on the GPU (CuPy); seconds
    python3 -m tools.truth.mufu --pack FILE.npz        # here: ship the tables once the check found no mismatch

Hypothesis (from every result of three binades): the result is odd in x, x itself below 2^-8, 1.0 from 8 on, and in
between a function of the binade E = -8..2 and the mantissa's top bits only: T_E[m >> k_E], the input bucketed in
2^k_E mantissas. Per binade every one of the 2^23 results is taken, k_E read off as the largest power of two
dividing every mantissa where the result changes, and T_E as the results at the buckets' starts (`tanh_k`,
`tanh_t_d1`: first differences of the concatenated tables' bit patterns, int32, binade after binade). Then all
2^32 inputs are checked on the device against that model (infinities -> +-1, NaN -> 0x7fffffff, zeros and
subnormals -> x, all assumed and counted): `tanh_mismatches`, `tanh_bad_by_exp` (by sign and exponent field, 512),
`tanh_first` (the first 1024 (input, result) pairs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tcforge.numerics.mufu_tables import TANH_BINADES

_SRC = r"""
extern "C" __global__ void tanh_binade(int e, unsigned* out)
{
    unsigned m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= (1u << 23)) return;
    float x = __uint_as_float((unsigned(127 + e) << 23) | m), r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    out[m] = __float_as_uint(r);
}

extern "C" __global__ void tanh_verify(const unsigned* table, const unsigned* base, const int* shift,
                                       unsigned long long start, unsigned* bad_by_exp, unsigned* bad,
                                       unsigned* first)
{
    unsigned u = unsigned(start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
    float x = __uint_as_float(u), r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    unsigned got = __float_as_uint(r), sign = u & 0x80000000u, ef = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu, want;
    int e = int(ef) - 127;
    if (ef == 0xFFu) want = m ? 0x7FFFFFFFu : (sign | 0x3F800000u);
    else if (e >= 3) want = sign | 0x3F800000u;
    else if (e <= -9) want = u;
    else want = sign | table[base[e + 8] + (m >> shift[e + 8])];
    if (got != want) {
        atomicAdd(&bad_by_exp[u >> 23], 1u);
        unsigned k = atomicAdd(bad, 1u);
        if (k < 1024) { first[2 * k] = u; first[2 * k + 1] = got; }
    }
}
"""

def measure(out: Path) -> int:
    """Take the tables, check all 2^32 inputs against them, write `out`; 0 when no input differs."""
    import cupy as cp

    mod = cp.RawModule(code=_SRC)
    tables, shifts = [], []
    for e in TANH_BINADES:
        y = cp.zeros(1 << 23, cp.uint32)
        mod.get_function("tanh_binade")(((1 << 23) // 256,), (256,), (np.int32(e), y))
        changes = cp.flatnonzero(y[1:] != y[:-1]) + 1
        k = 23 if changes.size == 0 else int(cp.bitwise_and(changes, -changes).min().get()).bit_length() - 1
        shifts.append(k)
        tables.append(y[:: 1 << k].get())
    base = np.cumsum([0] + [len(t) for t in tables[:-1]]).astype(np.uint32)
    table = np.concatenate(tables)
    by_exp, count, pairs = cp.zeros(512, cp.uint32), cp.zeros(1, cp.uint32), cp.zeros(2048, cp.uint32)
    chunk, lead = 1 << 30, (cp.asarray(table), cp.asarray(base), cp.asarray(np.array(shifts, np.int32)))
    for start in range(0, 1 << 32, chunk):  # the tables go to the device once
        mod.get_function("tanh_verify")((chunk // 256,), (256,), (*lead, np.uint64(start), by_exp, count, pairs))
    bad = int(count.get()[0])
    d1 = np.diff(table.astype(np.int64), prepend=np.int64(0)).astype(np.int32)
    np.savez_compressed(out, tanh_k=np.array(shifts), tanh_binades=np.array(TANH_BINADES), tanh_t_d1=d1,
                        tanh_mismatches=np.array(bad), tanh_bad_by_exp=by_exp.get(),
                        tanh_first=pairs.get()[: 2 * min(bad, 1024)].reshape(-1, 2),
                        gpu=np.array(cp.cuda.runtime.getDeviceProperties(0)["name"].decode()))
    print(f"{out}: bucket bits per binade {dict(zip(TANH_BINADES, shifts, strict=True))}, {len(table)} buckets; "
          f"{bad} of 2^32 inputs differ from the model")
    if bad:
        rows = np.flatnonzero(by_exp.get())
        print("  mismatches by sign and exponent field:", {int(r): int(by_exp.get()[r]) for r in rows[:24]})
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.truth.mufu_tanh", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    return measure(ap.parse_args(argv).out)


if __name__ == "__main__":
    sys.exit(main())
