// Hardware-truth kernels for tcforge.numerics, built for sm_90a (H200) with nvcc 13.0:
//   nvcc -cubin -O3 -gencode=arch=compute_90a,code=sm_90a -I ../../src/tcforge/include truth_kernels.cu \
//        -o truth_kernels.cubin
// Every kernel is extern "C" and launched from tools/truth/generate.py through CuPy. The RNG and the mma input
// families mirror src/tcforge/numerics/truth.py exactly (the generator compares both on the device).
#include <cuda_fp16.h>
#include <stdint.h>

#include "tcforge/fp8.cuh"

typedef unsigned long long u64;

// ---------------------------------------------------------------- counter-based RNG (twin of truth.py)
__device__ __forceinline__ uint32_t mix32(uint32_t x) {
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16; return x;
}
__device__ __forceinline__ uint32_t rng_key(uint32_t seed, uint32_t stream) { return mix32(mix32(seed) ^ stream); }
__device__ __forceinline__ uint32_t rng_at(uint32_t key, uint32_t idx) { return mix32(mix32(idx ^ key) + key); }

extern "C" __global__ void k_rng_words(uint32_t seed, uint32_t stream, uint32_t start, uint32_t n, uint32_t* out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = rng_at(rng_key(seed, stream), start + i);
}

// ---------------------------------------------------------------- mma input families (twin of truth.py)
__device__ __forceinline__ uint32_t popcount8(uint32_t x) { return __popc(x & 0xFFu); }
__device__ __forceinline__ uint32_t finite_code(uint32_t c) { return ((c & 0x7Fu) == 0x7Fu) ? (c ^ 1u) : c; }
__device__ __forceinline__ uint32_t e4m3_from(uint32_t w, uint32_t ef) {
    ef = ef < 15u ? ef : 15u; return finite_code((w & 0x80u) | (ef << 3) | (w & 7u));
}
__device__ __forceinline__ uint32_t f16_from(uint32_t w, uint32_t ef) {
    ef = ef < 30u ? ef : 30u; return (w & 0x8000u) | (ef << 10) | (w & 0x3FFu);
}

__device__ uint32_t ab_code(int kind, uint32_t w, uint32_t p0) {
    uint32_t e8 = (w >> 8) & 0xFFu;
    switch (kind) {
    case 0: return finite_code(w & 0xFFu);
    case 1: return e4m3_from(w, 3u + popcount8(e8));
    case 2: return e4m3_from(w, 11u + (e8 & 3u) + ((e8 >> 2) & 1u));
    case 3: return e4m3_from(w, (e8 & 3u) + ((e8 >> 2) & 1u));
    case 4: return ((e8 & 63u) == 0u) ? ((w & 0x80u) | 0x7Fu) : (w & 0xFFu);
    case 5: return (((p0 >> 1) & 1u) == 1u) ? finite_code(w & 0xFFu) : e4m3_from(w, 3u + popcount8(e8));
    case 6: {
        uint32_t span = p0 & 15u, top = 8u + ((p0 >> 8) & 7u);
        uint32_t drop = (e8 * (span + 1u)) >> 8;
        return e4m3_from(w, drop >= top ? 0u : top - drop);
    }
    case 7: return e4m3_from(w, 6u + (e8 & 3u));
    case 8: {
        uint32_t big = e4m3_from(w, 10u + (e8 & 3u) + ((e8 >> 2) & 3u));
        return (((w >> 16) & 31u) == 0u) ? ((w & 0x80u) | 0x7Fu) : big;
    }
    }
    return 0u;
}

__device__ uint32_t c_bits(int kind, uint32_t w, uint32_t p0) {
    uint32_t e8 = (w >> 16) & 0xFFu;
    switch (kind) {
    case 0: { uint32_t b = w & 0xFFFFu; return ((b & 0x7C00u) == 0x7C00u) ? (b ^ 0x4000u) : b; }
    case 1: return f16_from(w, 11u + popcount8(e8));
    case 2: return f16_from(w, 26u + (e8 & 3u) + ((e8 >> 2) & 1u));
    case 3: return f16_from(w, e8 & 3u);
    case 4: {
        uint32_t sel = (w >> 24) & 7u;
        const uint32_t tab[8] = {0x0000u, 0x8000u, 0x7C00u, 0xFC00u, 0u, 0x3C00u, 0xBC00u, 0u};
        if (sel == 4u) return (w & 0x8000u) | 0x7C00u | (w & 0x3FFu) | 1u;
        if (sel == 7u) return f16_from(w, 8u + (e8 & 15u));
        return tab[sel];
    }
    case 5: return w & 0x8000u;
    case 6: {
        int efc = 1 + (int)((p0 >> 16) % 30u);
        int ef = efc + (int)(e8 & 3u) - 1;
        ef = ef < 1 ? 1 : (ef > 30 ? 30 : ef);
        return f16_from(w, (uint32_t)ef);
    }
    case 7: return f16_from(w, 20u + ((p0 >> 4) % 11u));
    case 8: {
        uint32_t sel = (w >> 24) & 7u;
        const uint32_t tab[8] = {0x7C00u, 0xFC00u, 0x7BFFu, 0xFBFFu, 0x7E00u, 0x0000u, 0x8000u, 0u};
        if (sel == 7u) return f16_from(w, 20u + (e8 & 7u));
        return tab[sel];
    }
    }
    return 0u;
}

// one thread per (tile, element); element 0..511 A [row*32+k], 512..767 B [k*8+col], 768..895 C [row*8+col]
extern "C" __global__ void k_gen_mma(int kind, uint32_t seed, uint32_t tile0, uint32_t ntiles,
                                     uint8_t* A, uint8_t* B, uint16_t* C) {
    u64 gid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= (u64)ntiles * 896u) return;
    uint32_t lt = (uint32_t)(gid / 896u), j = (uint32_t)(gid % 896u);
    uint32_t tile = tile0 + lt, base = tile * 1024u;
    uint32_t key = rng_key(seed, (uint32_t)kind);
    uint32_t p0 = rng_at(key, base + 896u);
    if (j < 512u) {
        uint32_t row = j >> 5, k = j & 31u, src = k;
        bool copy = false;
        if (kind == 5) {
            if ((p0 & 1u) == 0u) { copy = k >= 16u; src = k & 15u; }
            else { copy = (k & 2u) != 0u; src = k & ~2u; }
        }
        uint32_t c = ab_code(kind, rng_at(key, base + row * 32u + src), p0);
        if (copy) c ^= 0x80u;
        A[(u64)lt * 512u + j] = (uint8_t)c;
    } else if (j < 768u) {
        uint32_t jj = j - 512u, k = jj >> 3, col = jj & 7u, src = k;
        if (kind == 5) src = ((p0 & 1u) == 0u) ? (k & 15u) : (k & ~2u);
        B[(u64)lt * 256u + jj] = (uint8_t)ab_code(kind, rng_at(key, base + 512u + src * 8u + col), p0);
    } else {
        uint32_t jj = j - 768u;
        C[(u64)lt * 128u + jj] = (uint16_t)c_bits(kind, rng_at(key, base + 768u + jj), p0);
    }
}

// ---------------------------------------------------------------- the mma itself: one warp per 16x8x32 tile
extern "C" __global__ void k_mma(const uint8_t* A, const uint8_t* B, const uint16_t* C, uint16_t* D, uint32_t ntiles) {
    uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31u;
    if (warp >= ntiles) return;
    const uint8_t* a = A + (u64)warp * 512u;
    const uint8_t* b = B + (u64)warp * 256u;
    const uint16_t* c = C + (u64)warp * 128u;
    uint16_t* d = D + (u64)warp * 128u;
    uint32_t g = lane >> 2, t = lane & 3u;
    uint32_t ra[4], rb[2], rc[2], rd[2];
    for (int r = 0; r < 4; ++r) {
        uint32_t row = g + 8u * (r & 1), k0 = 4u * t + 16u * (r >> 1), v = 0;
        for (int i = 0; i < 4; ++i) v |= (uint32_t)a[row * 32u + k0 + i] << (8 * i);
        ra[r] = v;
    }
    for (int r = 0; r < 2; ++r) {
        uint32_t k0 = 4u * t + 16u * r, v = 0;
        for (int i = 0; i < 4; ++i) v |= (uint32_t)b[(k0 + i) * 8u + g] << (8 * i);
        rb[r] = v;
    }
    for (int r = 0; r < 2; ++r) {
        uint32_t row = g + 8u * r;
        rc[r] = (uint32_t)c[row * 8u + 2u * t] | ((uint32_t)c[row * 8u + 2u * t + 1u] << 16);
    }
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};\n"
                 : "=r"(rd[0]), "=r"(rd[1])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(rc[0]), "r"(rc[1]));
    for (int r = 0; r < 2; ++r) {
        uint32_t row = g + 8u * r;
        d[row * 8u + 2u * t] = (uint16_t)(rd[r] & 0xFFFFu);
        d[row * 8u + 2u * t + 1u] = (uint16_t)(rd[r] >> 16);
    }
}

// ---------------------------------------------------------------- conversions
// (e4m3 <-> f16 pairs through tcforge/fp8.cuh)

extern "C" __global__ void k_cvt_tables(uint16_t* lo, uint16_t* hi, uint32_t* dec) {
    uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= 65536u) return;
    lo[v] = tcf::cvt_rn_satfinite_e4m3x2_f16x2(v);
    hi[v] = tcf::cvt_rn_satfinite_e4m3x2_f16x2(v << 16);
    dec[v] = tcf::cvt_rn_f16x2_e4m3x2((uint16_t)v);
}

// all 2^32 f16x2 words: the pair result must be (hi table's upper byte) | (lo table's lower byte)
extern "C" __global__ void k_cvt_pair_check(const uint16_t* lo, const uint16_t* hi, u64* nbad, uint32_t* bad) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    uint32_t local = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += stride) {
        uint32_t x = (uint32_t)i;
        uint32_t pred = (hi[x >> 16] & 0xFF00u) | (lo[x & 0xFFFFu] & 0x00FFu);
        uint32_t got = tcf::cvt_rn_satfinite_e4m3x2_f16x2(x);
        if (got != pred) {
            u64 slot = atomicAdd(nbad, 1ull);
            if (slot < 1024u) { bad[2 * slot] = x; bad[2 * slot + 1] = got; }
            ++local;
        }
    }
    (void)local;
}

// ---------------------------------------------------------------- f16 / f32 element-wise ops
extern "C" __global__ void k_f16_ops(const uint16_t* x, const uint16_t* y, const uint16_t* z, uint16_t* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint16_t a = x[i], b = y[i], c = z[i], r;
    asm("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b)); out[0 * (u64)n + i] = r;
    asm("sub.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b)); out[1 * (u64)n + i] = r;
    asm("mul.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b)); out[2 * (u64)n + i] = r;
    asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(a), "h"(b), "h"(c)); out[3 * (u64)n + i] = r;
    asm("max.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b)); out[4 * (u64)n + i] = r;
    asm("min.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b)); out[5 * (u64)n + i] = r;
    asm("neg.f16 %0, %1;" : "=h"(r) : "h"(a)); out[6 * (u64)n + i] = r;
    asm("abs.f16 %0, %1;" : "=h"(r) : "h"(a)); out[7 * (u64)n + i] = r;
}

extern "C" __global__ void k_f16x2_ops(const uint32_t* x, const uint32_t* y, const uint32_t* z, uint32_t* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t a = x[i], b = y[i], c = z[i], r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); out[0 * (u64)n + i] = r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); out[1 * (u64)n + i] = r;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); out[2 * (u64)n + i] = r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); out[3 * (u64)n + i] = r;
    asm("max.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); out[4 * (u64)n + i] = r;
    asm("min.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); out[5 * (u64)n + i] = r;
    asm("neg.f16x2 %0, %1;" : "=r"(r) : "r"(a)); out[6 * (u64)n + i] = r;
    asm("abs.f16x2 %0, %1;" : "=r"(r) : "r"(a)); out[7 * (u64)n + i] = r;
}

extern "C" __global__ void k_f32_ops(const float* x, const float* y, uint16_t* cvt, float* mul, float* add, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], r; uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(a)); cvt[i] = h;
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); mul[i] = r;
    asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); add[i] = r;
}

// ---------------------------------------------------------------- MUFU approximations
__device__ __forceinline__ float hw_rcp(float x) { float r; asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ __forceinline__ float hw_rsqrt(float x) { float r; asm volatile("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ __forceinline__ float hw_ex2(float x) { float r; asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ __forceinline__ float hw_div(float a, float b) { float r; asm volatile("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }

extern "C" __global__ void k_unary(const float* x, float* rcp, float* rsq, float* ex2, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    rcp[i] = hw_rcp(v); rsq[i] = hw_rsqrt(v); ex2[i] = hw_ex2(v);
}

extern "C" __global__ void k_div(const float* a, const float* b, float* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = hw_div(a[i], b[i]);
}

// tables: rcp over [1,2) (2^23), rsqrt over [1,4) (2^24), ex2 at f/2^24 for f in [0, 2^24)
extern "C" __global__ void k_tables(uint32_t* trcp, uint32_t* trsq, uint32_t* tex2) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << 24)) return;
    if (i < (1u << 23)) trcp[i] = __float_as_uint(hw_rcp(__uint_as_float(0x3F800000u | i)));
    trsq[i] = __float_as_uint(hw_rsqrt(__uint_as_float(((127u + (i >> 23)) << 23) | (i & 0x7FFFFFu))));
    tex2[i] = __float_as_uint(hw_ex2((float)i * 5.9604644775390625e-8f));
}

#define NBAD 8
// per (sign, exponent field) class: counts[512], bad[512][NBAD][2] (x, hw)
__device__ __forceinline__ void note_bad(u64* counts, uint32_t* bad, uint32_t cls, uint32_t n, uint32_t x, uint32_t hw) {
    u64 before = atomicAdd(&counts[cls], (u64)n);
    if (before < NBAD) { bad[(cls * NBAD + before) * 2] = x; bad[(cls * NBAD + before) * 2 + 1] = hw; }
}

__device__ __forceinline__ uint32_t model_rcp(uint32_t u, const uint32_t* tab) {
    uint32_t s = u & 0x80000000u, e = (u >> 23) & 255u, m = u & 0x7FFFFFu;
    if (e == 0u) return s | 0x7F800000u;
    if (e == 255u) return m ? 0x7FFFFFFFu : s;
    uint32_t t = tab[m];
    int re = (int)((t >> 23) & 255u) - ((int)e - 127);
    if (re <= 0) return s;
    return s | ((uint32_t)re << 23) | (t & 0x7FFFFFu);
}

__device__ __forceinline__ uint32_t model_rsqrt(uint32_t u, const uint32_t* tab) {
    uint32_t s = u & 0x80000000u, e = (u >> 23) & 255u, m = u & 0x7FFFFFu;
    if (e == 0u) return s | 0x7F800000u;
    if (e == 255u) return (m || s) ? 0x7FFFFFFFu : 0u;
    if (s) return 0x7FFFFFFFu;
    uint32_t p = (e + 1u) & 1u;
    int q = (int)e - 127 - (int)p;
    uint32_t t = tab[(p << 23) | m];
    int re = (int)((t >> 23) & 255u) - q / 2;
    return ((uint32_t)re << 23) | (t & 0x7FFFFFu);
}

// 2^32 sweep: each thread takes chunks of 64 consecutive inputs (same sign and exponent), counts mismatches per class
extern "C" __global__ void k_verify_rcp_rsqrt(const uint32_t* trcp, const uint32_t* trsq, u64* counts, uint32_t* bad) {
    u64 nchunks = 1ull << 26, stride = (u64)gridDim.x * blockDim.x;
    for (u64 ch = (u64)blockIdx.x * blockDim.x + threadIdx.x; ch < nchunks; ch += stride) {
        uint32_t x0 = (uint32_t)(ch << 6), cls = x0 >> 23;
        uint32_t n1 = 0, n2 = 0, b1x = 0, b1h = 0, b2x = 0, b2h = 0;
        for (uint32_t j = 0; j < 64u; ++j) {
            uint32_t x = x0 + j;
            uint32_t h1 = __float_as_uint(hw_rcp(__uint_as_float(x)));
            uint32_t h2 = __float_as_uint(hw_rsqrt(__uint_as_float(x)));
            if (h1 != model_rcp(x, trcp)) { if (!n1) { b1x = x; b1h = h1; } ++n1; }
            if (h2 != model_rsqrt(x, trsq)) { if (!n2) { b2x = x; b2h = h2; } ++n2; }
        }
        if (n1) note_bad(counts, bad, cls, n1, b1x, b1h);
        if (n2) note_bad(counts + 512, bad + 512 * NBAD * 2, cls, n2, b2x, b2h);
    }
}

// ex2 hypotheses: fixed point with F fraction bits (F = 20..24), conversion mode 0 truncate |x|, 1 floor, 2 nearest-even
#define NHYP 15
__device__ __forceinline__ uint32_t model_ex2(uint32_t u, const uint32_t* tab24, int F, int mode) {
    uint32_t s = u >> 31, e = (u >> 23) & 255u, m = u & 0x7FFFFFu;
    if (e == 255u) return m ? 0x7FFFFFFFu : (s ? 0u : 0x7F800000u);
    if (e == 0u) return 0x3F800000u;
    if (e >= 135u) return s ? 0u : 0x7F800000u;  // |x| >= 256
    u64 sig = (u64)(m | 0x800000u);
    int sh = (int)e - 127 - 23 + F;
    u64 mag;
    if (sh >= 0) mag = sig << sh;
    else {
        int r = -sh; if (r > 40) r = 40;
        u64 q = sig >> r, rem = sig & ((1ull << r) - 1ull), half = 1ull << (r - 1);
        if (mode == 0) mag = q;
        else if (mode == 1) mag = s ? q + (rem != 0ull) : q;
        else mag = q + ((rem > half) || (rem == half && (q & 1ull)));
    }
    long long X = s ? -(long long)mag : (long long)mag;
    long long i = X >> F;
    uint32_t f = (uint32_t)(X & ((1ll << F) - 1));
    uint32_t t = tab24[f << (24 - F)];
    long long re = (long long)((t >> 23) & 255u) + i;
    if (re >= 255) return 0x7F800000u;
    if (re <= 0) return 0u;
    return ((uint32_t)re << 23) | (t & 0x7FFFFFu);
}

extern "C" __global__ void k_verify_ex2(const uint32_t* tab24, u64* counts, uint32_t* bad) {
    u64 nchunks = 1ull << 26, stride = (u64)gridDim.x * blockDim.x;
    for (u64 ch = (u64)blockIdx.x * blockDim.x + threadIdx.x; ch < nchunks; ch += stride) {
        uint32_t x0 = (uint32_t)(ch << 6), cls = x0 >> 23;
        uint32_t n[NHYP], bx[NHYP], bh[NHYP];
        #pragma unroll
        for (int h = 0; h < NHYP; ++h) { n[h] = 0; bx[h] = 0; bh[h] = 0; }
        for (uint32_t j = 0; j < 64u; ++j) {
            uint32_t x = x0 + j;
            uint32_t hw = __float_as_uint(hw_ex2(__uint_as_float(x)));
            #pragma unroll
            for (int h = 0; h < NHYP; ++h) {
                if (hw != model_ex2(x, tab24, 20 + h / 3, h % 3)) { if (!n[h]) { bx[h] = x; bh[h] = hw; } ++n[h]; }
            }
        }
        #pragma unroll
        for (int h = 0; h < NHYP; ++h)
            if (n[h]) note_bad(counts + h * 512, bad + h * 512 * NBAD * 2, cls, n[h], bx[h], bh[h]);
    }
}

// ---------------------------------------------------------------- ex2, second round: sign-magnitude fixed point
// positive table hw(f/2^23), negative table hw(-f/2^23), f in [0, 2^23)
extern "C" __global__ void k_ex2_tables(uint32_t* tpos, uint32_t* tneg) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << 23)) return;
    float v = (float)i * 1.1920928955078125e-7f;
    tpos[i] = __float_as_uint(hw_ex2(v));
    tneg[i] = __float_as_uint(hw_ex2(-v));
}

// model: X = trunc(|x| * 2^23), i = X >> 23, f = X mod 2^23; x >= 0: tpos[f] * 2^i, x < 0: tneg[f] * 2^-i (ftz, inf)
__device__ __forceinline__ uint32_t model_ex2_sm(uint32_t u, const uint32_t* tpos, const uint32_t* tneg) {
    uint32_t s = u >> 31, e = (u >> 23) & 255u, m = u & 0x7FFFFFu;
    if (e == 255u) return m ? 0x7FFFFFFFu : (s ? 0u : 0x7F800000u);
    if (e == 0u) return 0x3F800000u;
    if (e >= 134u) return s ? 0u : 0x7F800000u;
    uint32_t sig = m | 0x800000u;
    uint32_t X = (e >= 127u) ? (sig << (e - 127u)) : ((127u - e) >= 32u ? 0u : (sig >> (127u - e)));
    int i = (int)(X >> 23);
    uint32_t f = X & 0x7FFFFFu;
    uint32_t t = s ? tneg[f] : tpos[f];
    int re = (int)((t >> 23) & 255u) + (s ? -i : i);
    if (re >= 255) return 0x7F800000u;
    if (re <= 0) return 0u;
    return ((uint32_t)re << 23) | (t & 0x7FFFFFu);
}

extern "C" __global__ void k_verify_ex2_sm(const uint32_t* tpos, const uint32_t* tneg, u64* counts, uint32_t* bad) {
    u64 nchunks = 1ull << 26, stride = (u64)gridDim.x * blockDim.x;
    for (u64 ch = (u64)blockIdx.x * blockDim.x + threadIdx.x; ch < nchunks; ch += stride) {
        uint32_t x0 = (uint32_t)(ch << 6), cls = x0 >> 23, n = 0, bx = 0, bh = 0;
        for (uint32_t j = 0; j < 64u; ++j) {
            uint32_t x = x0 + j;
            uint32_t hw = __float_as_uint(hw_ex2(__uint_as_float(x)));
            if (hw != model_ex2_sm(x, tpos, tneg)) { if (!n) { bx = x; bh = hw; } ++n; }
        }
        if (n) note_bad(counts, bad, cls, n, bx, bh);
    }
}
