// The mma of the enc5 kernels: native sm_90a m16n8k32 e4m3 (the Hopper model), the Hopper lowering issued by hand
// (two m16n8k16 f16 HMMA over an A fragment unpacked once), and the exact-integer Ada model of one output
// (ada_element: the reference the GPU proof of the ada form's wgmma lowering checks against, tools/truth).
#pragma once
#include "enc5_ptx.cuh"

constexpr int ENC5_HOPPER = 0;  // numerics modes (tcforge.layers.enc5.reference.MODELS)
constexpr int ENC5_ADA = 1;

__device__ __forceinline__ void mma_hopper(uint32_t& d0, uint32_t& d1, uint32_t a0, uint32_t a1, uint32_t a2,
                                           uint32_t a3, uint32_t b0, uint32_t b1, uint32_t c0, uint32_t c1) {
    asm("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
        : "=r"(d0), "=r"(d1)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1));
}

// One Ada 16-term block on the e4m3 codes of words ra[0..3] (row) and rb[0..3] (column), accumulator acc (finite f16).
// Terms: products with exponent ea + eb (ea = max(floor(log2|a|), -6)) and the accumulator (exponent
// max(floor(log2|acc|), -14)); each cut toward zero to 13 bits below the largest exponent M; exact integer sum; one
// rounding to f16 (cvt.rn.f16.f32 of an exactly representable f32).
__device__ __forceinline__ uint16_t ada_block(const uint32_t* ra, const uint32_t* rb, uint16_t acc) {
    int sig[16], ex[16];
    int m = -1000;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const uint32_t ca = (ra[i >> 2] >> (8 * (i & 3))) & 0xFFu;
        const uint32_t cb = (rb[i >> 2] >> (8 * (i & 3))) & 0xFFu;
        const int fa = (ca >> 3) & 15, fb = (cb >> 3) & 15;
        const int sa = fa ? (8 | (ca & 7)) : (ca & 7);
        const int sb = fb ? (8 | (cb & 7)) : (cb & 7);
        const int e = (fa ? fa - 7 : -6) + (fb ? fb - 7 : -6);
        int p = sa * sb;
        ex[i] = e;
        sig[i] = ((ca ^ cb) & 0x80u) ? -p : p;
        if (p != 0) m = max(m, e);
    }
    const int fc = (acc >> 10) & 31;
    const int mc = acc & 1023;
    const bool acc_nz = (acc & 0x7FFF) != 0;
    const int ec = fc ? fc - 15 : -14;
    const int sc = fc ? (1024 | mc) : mc;
    if (acc_nz) m = max(m, ec);
    if (m == -1000) return 0;  // nothing nonzero: +0
    int s = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int sh = ex[i] - m + 7;  // term / 2^(M-13) = sig * 2^(E - 6 - M + 13)
        const int mag = abs(sig[i]);
        const int v = mag == 0 ? 0 : (sh >= 0 ? (mag << sh) : (sh > -31 ? (mag >> -sh) : 0));
        s += sig[i] < 0 ? -v : v;
    }
    if (acc_nz) {
        const int sh = ec - m + 3;  // acc / 2^(M-13) = sc * 2^(ec - 10 - M + 13)
        const int v = sh >= 0 ? (sc << sh) : (sh > -31 ? (sc >> -sh) : 0);
        s += (acc & 0x8000) ? -v : v;
    }
    const float f = __int2float_rn(s) * __int_as_float((m - 13 + 127) << 23);  // exact: |s| < 2^20, M - 13 >= -27
    uint16_t d;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(d) : "f"(f));
    return d;
}

__device__ __forceinline__ bool e4m3_word_has_nan(uint32_t w) {
    // a byte x is NaN iff (x & 0x7F) == 0x7F
    const uint32_t low = w & 0x7F7F7F7Fu;
    return ((low + 0x01010101u) & 0x80808080u) != 0;
}

__device__ uint16_t ada_element(const uint32_t* ra, const uint32_t* rb, uint16_t c) {
    bool nan = ((c & 0x7FFF) > 0x7C00);
    bool allnegzero = true;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        nan |= e4m3_word_has_nan(ra[i]) | e4m3_word_has_nan(rb[i]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const uint32_t ca = (ra[i] >> (8 * j)) & 0xFFu, cb = (rb[i] >> (8 * j)) & 0xFFu;
            const bool zero = ((ca & 0x7F) == 0) || ((cb & 0x7F) == 0);
            allnegzero &= zero && (((ca ^ cb) & 0x80u) != 0);
        }
    }
    if (nan) return 0x7FFF;
    const bool c_inf = (c & 0x7FFF) == 0x7C00;
    if (c_inf) return c;
    const uint16_t b1 = ada_block(ra, rb, c);
    if ((b1 & 0x7FFF) == 0x7C00) return b1;
    uint16_t d = ada_block(ra + 4, rb + 4, b1);
    if (d == 0 && c == 0x8000 && allnegzero) d = 0x8000;
    return d;
}

// The Hopper lowering issued by hand: ptxas turns one m16n8k32 e4m3 mma into an f16 HMMA.16816 over the bytes with
// k%4 in {0,1} (the low half of every operand word, C = +0), a second one over k%4 in {2,3} (the high halves)
// accumulating onto it, and an f16x2 add of C. Writing the two m16n8k16 f16 mma ourselves gives the same SASS
// operations on the same f16 values, so the bits are the same; the gain is that a caller can unpack an A fragment
// once and reuse it (ptxas does not hoist the unpack out of a loop).
__device__ __forceinline__ void hmma16816(uint32_t& d0, uint32_t& d1, const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
                                          uint32_t c0, uint32_t c1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
        : "=r"(d0), "=r"(d1)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c0), "r"(c1));
}
// A fragment of one e4m3 m16n8k32 split into the f16 A fragments of the two HMMA: [0] low halves, [1] high halves
__device__ __forceinline__ void unpack_a(uint32_t (&af)[2][4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3) {
    const uint32_t w[4] = {a0, a1, a2, a3};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        af[0][i] = tcf::cvt_rn_f16x2_e4m3x2_lo(w[i]);
        af[1][i] = tcf::cvt_rn_f16x2_e4m3x2_hi(w[i]);
    }
}
// d = (HMMA(A_hi, B_hi, HMMA(A_lo, B_lo, +0))) + c: the m16n8k32 e4m3 mma with a pre-unpacked A
__device__ __forceinline__ void mma_hopper_f16a(uint32_t& d0, uint32_t& d1, const uint32_t (&af)[2][4], uint32_t b0,
                                                uint32_t b1, uint32_t c0, uint32_t c1) {
    uint32_t t0, t1;
    hmma16816(t0, t1, af[0], tcf::cvt_rn_f16x2_e4m3x2_lo(b0), tcf::cvt_rn_f16x2_e4m3x2_lo(b1), 0u, 0u);
    hmma16816(t0, t1, af[1], tcf::cvt_rn_f16x2_e4m3x2_hi(b0), tcf::cvt_rn_f16x2_e4m3x2_hi(b1), t0, t1);
    d0 = hadd2(t0, c0);
    d1 = hadd2(t1, c1);
}

template <int MODE>
__device__ __forceinline__ void mma(uint32_t& d0, uint32_t& d1, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                    uint32_t b0, uint32_t b1, uint32_t c0, uint32_t c1) {
    static_assert(MODE == ENC5_HOPPER, "the ada form issues wgmma (ada.cu)");
    mma_hopper(d0, d1, a0, a1, a2, a3, b0, b1, c0, c1);
}
