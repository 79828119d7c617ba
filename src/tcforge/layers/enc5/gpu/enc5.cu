// enc5 as one fused CUDA kernel (sm_90a): one CTA per 8x8 token window, 8 warps (one per head) for phases 1-12,
// warps 0..3 (16 query rows each) for phases 13-61. Bit-identical to tcforge.layers.enc5.reference: every mma is
// mma.sync m16n8k32 e4m3 (MODE_HOPPER) or an exact-integer emulation of the Ada datapath (MODE_ADA); every epilogue
// uses explicit-rounding PTX in the reference's operation order (no contraction, no reassociation).
//
// Operand staging follows the pack convention of the weight image: a requantised f16 accumulator pair becomes the A
// (or B) fragment of the next mma in the same lane, so no mma pays a cross-lane shuffle (only P12's V operand goes
// through movmatrix.trans, as in the original).
#include <cstdint>

#define ENC5_HOPPER 0
#define ENC5_ADA 1

// Unroll factors of the three serial loops (k-steps of P1-P10, heads of P13-P20, MLP chunks); 1 keeps the loops
// rolled (the shipped choice: no spills). ENC5_FULL_UNROLL unrolls all three (PTX for `tcforge spec`'s 61 phases).
#ifdef ENC5_FULL_UNROLL
#define ENC5_KS_UNROLL 5
#define ENC5_J_UNROLL 8
#define ENC5_MLP_UNROLL 20
#define ENC5_SPLIT_J_UNROLL 8
#define ENC5_SPLIT_MLP_UNROLL 20
#endif
#ifndef ENC5_SPLIT_J_UNROLL
#define ENC5_SPLIT_J_UNROLL 2  // heads of the split kernel's P13-P20
#endif
#ifndef ENC5_KS_UNROLL
#define ENC5_KS_UNROLL 1
#endif
#ifndef ENC5_J_UNROLL
#if defined(ENC5_VARIANT) && (ENC5_VARIANT == 0 || ENC5_VARIANT == 3)
#define ENC5_J_UNROLL 2  // hopper (and its timing twin): heads of P13-P20 in pairs, no register copies of Wo
#else
#define ENC5_J_UNROLL 1  // debug dump and ada: no registers to spare
#endif
#endif
#ifndef ENC5_MLP_UNROLL
#define ENC5_MLP_UNROLL 1
#endif
// 1: fc1's A fragments (E20's output, the same in every MLP chunk) are unpacked to f16 once and the two HMMA of
// each mma issued by hand (mma_hopper_f16a); 0: plain m16n8k32 e4m3 mma. Hopper only. Off: measured 1.3% faster
// alone (register prefetch) but 4.5% slower together with the shared-memory weight ring (docs/enc5-native.md).
#ifndef ENC5_FC1_F16A
#define ENC5_FC1_F16A 0
#endif
// 1: the prologue stages P1-P10's A fragments already unpacked to f16 (two uint4 per lane and fragment, 30 KB), so
// the 8 head warps do not each unpack the same 48 A words per k-step. Hopper only.
#ifndef ENC5_QV_F16A
#define ENC5_QV_F16A 1
#endif
// 1: the MLP's fc1/fc2 weights go through a 3-stage cp.async ring in shared memory (the dead 30 KB of P1-P10's
// staged operand), filled once per CTA instead of once per warp, and read with ld.shared right before use: frees the
// 80 registers of the per-warp register prefetch. Needs ENC5_QV_F16A (the ring is 3 x 10240 B). On for hopper and
// its timing twin; the debug dump keeps the register prefetch (with the ring it would spill).
#ifndef ENC5_MLP_SMEM
#if defined(ENC5_VARIANT) && (ENC5_VARIANT == 0 || ENC5_VARIANT == 3)
#define ENC5_MLP_SMEM 1
#else
#define ENC5_MLP_SMEM 0
#endif
#endif
#if ENC5_MLP_SMEM && !ENC5_QV_F16A
#error "ENC5_MLP_SMEM needs ENC5_QV_F16A (the weight ring lives in the 30 KB operand buffer)"
#endif
#define ENC5_PRAGMA(x) _Pragma(#x)
#define ENC5_UNROLL(n) ENC5_PRAGMA(unroll n)

// Parameter block: the original's 144-byte layout. +88 and +112 hold plain global pointers (RGBA16F texels and the
// output surface, both (ey, ex, 4) f16) instead of a texture/surface handle; +24 is a debug dump (0 = none); the
// batched launch runs frame blockIdx.z with per-frame strides derived from the extents. +56 (unused by the original)
// carries the split forms' window order (split_window).
struct __align__(8) Enc5Params {
    uint32_t ex, ey;            // +0
    const uint8_t* input;       // +8   5 planes x ey x ex x 32 e4m3
    uint64_t unused16;          // +16
    uint16_t* debug;            // +24  debug stage dump (nullptr: none)
    uint64_t unused32;          // +32
    const uint8_t* weights;     // +40  431,136-byte weight image
    uint8_t* arena;             // +48  5 planes x ey x ex x 32 e4m3 (written by E60)
    uint16_t order[4][3];       // +56  split forms: dispatch-order swaps (a, b, n) of cluster ranges (n = 0: none)
    uint16_t ox, oy;            // +80  block-origin offsets
    uint32_t unused84;          // +84
    const uint16_t* texture;    // +88  RGBA16F texels (ey, ex, 4)
    uint64_t unused96[2];       // +96
    uint16_t* surface;          // +112 RGBA16F surface (ey, ex, 4)
    uint64_t unused120[3];      // +120
};
static_assert(sizeof(Enc5Params) == 144, "parameter block must be 144 bytes");

// ---------------------------------------------------------------------------------------------------------------
// PTX arithmetic with explicit rounding (never contracted or reassociated by ptxas)
// ---------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t hadd2(uint32_t a, uint32_t b) {
    uint32_t d; asm("add.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
}
__device__ __forceinline__ uint32_t hsub2(uint32_t a, uint32_t b) {
    uint32_t d; asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
}
__device__ __forceinline__ uint32_t hmul2(uint32_t a, uint32_t b) {
    uint32_t d; asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
}
__device__ __forceinline__ uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t d; asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d;
}
__device__ __forceinline__ uint32_t hmax2(uint32_t a, uint32_t b) {
    uint32_t d; asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
}
__device__ __forceinline__ uint32_t hmin2(uint32_t a, uint32_t b) {
    uint32_t d; asm("min.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
}
__device__ __forceinline__ uint32_t hneg2(uint32_t a) {
    uint32_t d; asm("neg.f16x2 %0, %1;" : "=r"(d) : "r"(a)); return d;
}
__device__ __forceinline__ uint32_t habs2(uint32_t a) {
    uint32_t d; asm("abs.f16x2 %0, %1;" : "=r"(d) : "r"(a)); return d;
}
__device__ __forceinline__ uint16_t hadd(uint16_t a, uint16_t b) {
    uint16_t d; asm("add.rn.f16 %0, %1, %2;" : "=h"(d) : "h"(a), "h"(b)); return d;
}
__device__ __forceinline__ uint16_t hsub(uint16_t a, uint16_t b) {
    uint16_t d; asm("sub.rn.f16 %0, %1, %2;" : "=h"(d) : "h"(a), "h"(b)); return d;
}
__device__ __forceinline__ uint16_t hmul(uint16_t a, uint16_t b) {
    uint16_t d; asm("mul.rn.f16 %0, %1, %2;" : "=h"(d) : "h"(a), "h"(b)); return d;
}
__device__ __forceinline__ uint16_t hfma(uint16_t a, uint16_t b, uint16_t c) {
    uint16_t d; asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(d) : "h"(a), "h"(b), "h"(c)); return d;
}
__device__ __forceinline__ uint16_t hmax(uint16_t a, uint16_t b) {
    uint16_t d; asm("max.f16 %0, %1, %2;" : "=h"(d) : "h"(a), "h"(b)); return d;
}
__device__ __forceinline__ uint16_t lo16(uint32_t w) { return (uint16_t)(w & 0xFFFFu); }
__device__ __forceinline__ uint16_t hi16(uint32_t w) { return (uint16_t)(w >> 16); }
__device__ __forceinline__ uint32_t pack2(uint16_t lo, uint16_t hi) { return (uint32_t)lo | ((uint32_t)hi << 16); }

// cvt.f32.f16 -> op.approx.ftz.f32 -> cvt.rn.f16.f32
__device__ __forceinline__ uint16_t h_rcp_approx(uint16_t x) {
    uint16_t d;
    asm("{ .reg .f32 f; cvt.f32.f16 f, %1; rcp.approx.ftz.f32 f, f; cvt.rn.f16.f32 %0, f; }" : "=h"(d) : "h"(x));
    return d;
}
__device__ __forceinline__ uint16_t h_rsqrt_approx(uint16_t x) {
    uint16_t d;
    asm("{ .reg .f32 f; cvt.f32.f16 f, %1; rsqrt.approx.ftz.f32 f, f; cvt.rn.f16.f32 %0, f; }" : "=h"(d) : "h"(x));
    return d;
}
// e4m3 <-> f16
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint16_t x) {
    uint32_t d; asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(x)); return d;
}
__device__ __forceinline__ uint16_t f16x2_to_e4m3x2(uint32_t x) {
    uint16_t d; asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(d) : "r"(x)); return d;
}
// two f16x2 words -> one u32 of four e4m3: (lo word) | (hi word) << 16
__device__ __forceinline__ uint32_t q4(uint32_t lo, uint32_t hi) {
    return pack2(f16x2_to_e4m3x2(lo), f16x2_to_e4m3x2(hi));
}
__device__ __forceinline__ uint32_t movtrans(uint32_t x) {
    uint32_t d; asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(x)); return d;
}
__device__ __forceinline__ uint4 ldg16(const uint8_t* p) {
    uint4 v;
    asm("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ uint32_t ldg4(const uint8_t* p) {
    uint32_t v; asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p)); return v;
}
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
__device__ __forceinline__ void bar_mlp() { asm volatile("bar.sync 1, 128;" ::: "memory"); }  // warps 0..3

// ---------------------------------------------------------------------------------------------------------------
// The mma: native sm_90a (Hopper model) or the exact-integer Ada model
// ---------------------------------------------------------------------------------------------------------------
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

// Ada emulation of one m16n8k32: gather the lane's two A rows and two B columns (k in mma order) by shuffles.
__device__ __noinline__ void mma_ada(uint32_t& d0, uint32_t& d1, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                     uint32_t b0, uint32_t b1, uint32_t c0, uint32_t c1) {
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    uint32_t r0[8], r1[8], n0[8], n1[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int sa = 4 * g + i, sb0 = 8 * t + i, sb1 = 8 * t + 4 + i;
        r0[i] = __shfl_sync(0xFFFFFFFFu, a0, sa);
        r1[i] = __shfl_sync(0xFFFFFFFFu, a1, sa);
        r0[4 + i] = __shfl_sync(0xFFFFFFFFu, a2, sa);
        r1[4 + i] = __shfl_sync(0xFFFFFFFFu, a3, sa);
        n0[i] = __shfl_sync(0xFFFFFFFFu, b0, sb0);
        n0[4 + i] = __shfl_sync(0xFFFFFFFFu, b1, sb0);
        n1[i] = __shfl_sync(0xFFFFFFFFu, b0, sb1);
        n1[4 + i] = __shfl_sync(0xFFFFFFFFu, b1, sb1);
    }
    d0 = pack2(ada_element(r0, n0, lo16(c0)), ada_element(r0, n1, hi16(c0)));
    d1 = pack2(ada_element(r1, n0, lo16(c1)), ada_element(r1, n1, hi16(c1)));
}

// The Hopper lowering issued by hand: ptxas turns one m16n8k32 e4m3 mma into an f16 HMMA.16816 over the bytes with
// k%4 in {0,1} (the low half of every operand word, C = +0), a second one over k%4 in {2,3} (the high halves)
// accumulating onto it, and an f16x2 add of C. Writing the two m16n8k16 f16 mma ourselves gives the same SASS
// operations on the same f16 values, so the bits are the same; the gain is that a caller can unpack an A fragment
// once and reuse it (ptxas does not hoist the unpack out of a loop).
__device__ __forceinline__ uint32_t e4m3_lo_to_f16x2(uint32_t w) {  // bytes 0, 1 -> f16x2
    uint32_t d; asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.rn.f16x2.e4m3x2 %0, l; }" : "=r"(d) : "r"(w)); return d;
}
__device__ __forceinline__ uint32_t e4m3_hi_to_f16x2(uint32_t w) {  // bytes 2, 3 -> f16x2
    uint32_t d; asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.rn.f16x2.e4m3x2 %0, h; }" : "=r"(d) : "r"(w)); return d;
}
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
        af[0][i] = e4m3_lo_to_f16x2(w[i]);
        af[1][i] = e4m3_hi_to_f16x2(w[i]);
    }
}
// d = (HMMA(A_hi, B_hi, HMMA(A_lo, B_lo, +0))) + c: the m16n8k32 e4m3 mma with a pre-unpacked A
__device__ __forceinline__ void mma_hopper_f16a(uint32_t& d0, uint32_t& d1, const uint32_t (&af)[2][4], uint32_t b0,
                                                uint32_t b1, uint32_t c0, uint32_t c1) {
    uint32_t t0, t1;
    hmma16816(t0, t1, af[0], e4m3_lo_to_f16x2(b0), e4m3_lo_to_f16x2(b1), 0u, 0u);
    hmma16816(t0, t1, af[1], e4m3_hi_to_f16x2(b0), e4m3_hi_to_f16x2(b1), t0, t1);
    d0 = hadd2(t0, c0);
    d1 = hadd2(t1, c1);
}

template <int MODE>
__device__ __forceinline__ void mma(uint32_t& d0, uint32_t& d1, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                    uint32_t b0, uint32_t b1, uint32_t c0, uint32_t c1) {
    if constexpr (MODE == ENC5_ADA) {
        mma_ada(d0, d1, a0, a1, a2, a3, b0, b1, c0, c1);
    } else {
        mma_hopper(d0, d1, a0, a1, a2, a3, b0, b1, c0, c1);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Constants and weight-image map (enc5.md §3, tcforge.layers.enc5.layout)
// ---------------------------------------------------------------------------------------------------------------
constexpr int HEAD_SLOT = 27648;
constexpr int OFF_Q = 320, OFF_V = 5440, OFF_SBIAS = 10560, OFF_WO = 22848;
constexpr int OFF_PROJ_BIAS = 221504, OFF_MLP_GAIN = 221824, OFF_OUT_BIAS = 232448;
constexpr int OFF_HEAD = 428544, OFF_HEAD_BIAS = 431104;
constexpr uint32_t C_SCALE = 0x24662466u, C_CLAMP_HI = 0x38733873u, C_CLAMP_LO = 0xB873B873u;
constexpr uint32_t C_CUBIC1 = 0x3B6B3B6Bu, C_CUBIC0 = 0x3D803D80u;
constexpr uint16_t C_EPS = 0x0800;
constexpr uint32_t C_ACT_A = 0x36983698u, C_ACT_B = 0x2D302D30u, C_HALF = 0x38003800u, C_TWO = 0x40004000u;

// debug dump offsets (f16 elements per window; tcforge.layers.enc5.gpu.layout.debug_layout)
constexpr int DBG_D9 = 0, DBG_D10 = 24576, DBG_S11 = 49152, DBG_O12 = 98304, DBG_D20 = 114688, DBG_D21 = 124928;
constexpr int DBG_D22 = 126976, DBG_D60 = 137216, DBG_D61 = 147456, DBG_TOTAL = 148480;

// shared memory: staged 96x160 operand (6 m-tiles x 5 k-steps of A fragments), the 8 heads' O (E12), D61 (E61)
struct __align__(16) Smem {
#if ENC5_QV_F16A
    uint4 a[2 * 30 * 32];     // 30720 B: [5*mi + ks][lane] e4m3 (ada); [2*(5*mi + ks) + half][lane] f16 (hopper)
#else
    uint4 a[30 * 32];         // 15360 B: [5*mi + ks][lane]
#endif
    uint4 o[8 * 4 * 32];      // 16384 B: [head][m-tile][lane]
    uint32_t d61[64 * 8];     // 2048 B: 64 tokens x 16 f16
};

// MLP chunk i: fc1 at base, its bias at base + 5120, fc2 at base + 5184 (chunks 1..19 repeat with stride 10304)
__device__ __forceinline__ int chunk_base(int i) { return 222144 + 10304 * i + (i > 0 ? 320 : 0); }

// ENC5_MLP_SMEM: chunk c's fc1 (5120 B) and fc2 (5120 B) tiles -> ring stage (640 uint4), 5 cp.async per thread of
// warps 0..3 (tid 0..127); one commit group per chunk
__device__ __forceinline__ void ring_fill(uint4* stage, const uint8_t* W, int c, int tid) {
    const uint8_t* src = W + chunk_base(c);
#pragma unroll
    for (int q = 0; q < 5; ++q) {
        const int j = tid + 128 * q;
        cp_async16(stage + j, src + (j < 320 ? 16 * j : 5184 + 16 * (j - 320)));
    }
    cp_async_commit();
}

// odd MLP phase: hid = An . fc1 + bias (16x32x160: 4 chains of 5 k-steps); fc1 tiles n-major (tile = 5 nt16 + ks)
template <int MODE>
__device__ __forceinline__ void fc1_chunk(uint32_t (&hid)[4][2], const uint32_t (&an)[5][4], const uint4 (&f1)[10],
                                          const uint32_t (&bias)[4]) {
#pragma unroll
    for (int n = 0; n < 4; ++n) hid[n][0] = hid[n][1] = bias[n];
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint4 b0 = f1[ks], b1 = f1[5 + ks];
        mma<MODE>(hid[0][0], hid[0][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b0.x, b0.y, hid[0][0], hid[0][1]);
        mma<MODE>(hid[1][0], hid[1][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b0.z, b0.w, hid[1][0], hid[1][1]);
        mma<MODE>(hid[2][0], hid[2][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b1.x, b1.y, hid[2][0], hid[2][1]);
        mma<MODE>(hid[3][0], hid[3][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b1.z, b1.w, hid[3][0], hid[3][1]);
    }
}

// The same phase with E20's A fragments unpacked to f16 once (hopper only, ENC5_FC1_F16A): saves the 40 loop-invariant
// A unpacks per chunk that ptxas re-issues in every MLP iteration.
__device__ __forceinline__ void fc1_chunk_f16a(uint32_t (&hid)[4][2], const uint32_t (&anf)[5][2][4],
                                               const uint4 (&f1)[10], const uint32_t (&bias)[4]) {
#pragma unroll
    for (int n = 0; n < 4; ++n) hid[n][0] = hid[n][1] = bias[n];
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint4 b0 = f1[ks], b1 = f1[5 + ks];
        mma_hopper_f16a(hid[0][0], hid[0][1], anf[ks], b0.x, b0.y, hid[0][0], hid[0][1]);
        mma_hopper_f16a(hid[1][0], hid[1][1], anf[ks], b0.z, b0.w, hid[1][0], hid[1][1]);
        mma_hopper_f16a(hid[2][0], hid[2][1], anf[ks], b1.x, b1.y, hid[2][0], hid[2][1]);
        mma_hopper_f16a(hid[3][0], hid[3][1], anf[ks], b1.z, b1.w, hid[3][0], hid[3][1]);
    }
}

// the MLP's clamped cubic activation of one f16x2 word: y = min(max(x, -2), 2); g = 0.5 + y (0.412 - 0.081 |y|);
// x g
__device__ __forceinline__ uint32_t mlp_gate(uint32_t xv) {
    const uint32_t y = hmin2(hmax2(xv, hneg2(C_TWO)), C_TWO);
    const uint32_t sv = hsub2(C_ACT_A, hmul2(C_ACT_B, habs2(y)));
    const uint32_t gv = hadd2(C_HALF, hmul2(y, sv));
    return hmul2(xv, gv);
}

// clamped cubic activation of fc1's output, in place: y = min(max(x, -2), 2); g = 0.5 + y (0.412 - 0.081 |y|);
// out = x g; then requantised to fc2's e4m3 A fragment hq[0..3]
__device__ __forceinline__ void mlp_activation(uint32_t (&hid)[4][2], uint32_t (&hq)[4]) {
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            hid[n][r] = mlp_gate(hid[n][r]);
        }
    hq[0] = q4(hid[0][0], hid[2][0]);
    hq[1] = q4(hid[0][1], hid[2][1]);
    hq[2] = q4(hid[1][0], hid[3][0]);
    hq[3] = q4(hid[1][1], hid[3][1]);
}

// store one 16x8 f16 accumulator tile (regs r0: row g, r1: row g+8; cols 2t, 2t+1) into a logical row-major matrix
__device__ __forceinline__ void dbg_tile(uint16_t* base, int ld, int row0, int col0, uint32_t r0, uint32_t r1) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    *reinterpret_cast<uint32_t*>(base + (row0 + g) * ld + col0 + 2 * t) = r0;
    *reinterpret_cast<uint32_t*>(base + (row0 + g + 8) * ld + col0 + 2 * t) = r1;
}

// f16 sum of squares of one row's 20 n-tile words (in-lane sequential, butterfly over lane bits 0 and 1, lo + hi)
__device__ __forceinline__ uint16_t row_sumsq(const uint32_t* w) {
    uint32_t acc = hmul2(w[0], w[0]);
#pragma unroll
    for (int n = 1; n < 20; ++n) acc = hadd2(acc, hmul2(w[n], w[n]));
    acc = hadd2(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 1));
    acc = hadd2(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 2));
    return hadd(lo16(acc), hi16(acc));
}

// RMS norm of one row held as 20 n-tile words, in place: x = f16(f16(x * inv) * gain[c]); gain(n) is the lane's
// gain word of n-tile n (from global memory here, from shared memory in the split kernel)
template <class Gain>
__device__ __forceinline__ void rms_norm_row_with(uint32_t* w, Gain gain) {
    const uint16_t inv = h_rsqrt_approx(hadd(row_sumsq(w), C_EPS));
    const uint32_t inv2 = pack2(inv, inv);
#pragma unroll
    for (int n = 0; n < 20; ++n) w[n] = hmul2(hmul2(w[n], inv2), gain(n));
}
__device__ __forceinline__ void rms_norm_row(uint32_t* w, const uint8_t* gain_lane) {
    rms_norm_row_with(w, [gain_lane](int n) { return ldg4(gain_lane + 16 * n); });
}

// E61 for one token (one thread): 9-way f32 softmax of its D61 row, paired f16x2 fold of the 9 clamped-centre taps,
// guarded surface write
// Prologue, one m-tile (16 of the 96 staged rows: 64 window tokens in raster order, then the halo top, bottom, left,
// right): this lane's two rows' input words, dequantised, RMS-normalised with the W+0 gain and requantised into the
// m-tile's e4m3 A-fragment words st[row half][plane p: word t | word t + 4 at 5 + p] (both kernel forms)
__device__ __forceinline__ void stage_mtile_rows(uint32_t (&st)[2][10], const uint8_t* __restrict__ in, size_t plane,
                                                 const uint8_t* __restrict__ W, int ex, int ey, int x0, int y0, int mi,
                                                 int g, int t) {
    uint32_t word[2][10];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        int dx, dy;
        if (mi < 4) { dx = g; dy = 2 * mi + h; }
        else if (mi == 4) { dx = g; dy = h ? 8 : -1; }
        else { dx = h ? 8 : -1; dy = g; }
        const int x = x0 + dx, y = y0 + dy;
        const bool inside = x >= 0 && x < ex && y >= 0 && y < ey;
        const uint8_t* rec = in + 32 * ((size_t)y * ex + x) + 4 * t;
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            word[h][p] = inside ? ldg4(rec + p * plane) : 0u;
            word[h][5 + p] = inside ? ldg4(rec + p * plane + 16) : 0u;
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        uint32_t x[20];  // n-tile words: n = 4p + q
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            x[4 * p + 0] = e4m3x2_to_f16x2(lo16(word[h][p]));
            x[4 * p + 1] = e4m3x2_to_f16x2(lo16(word[h][5 + p]));
            x[4 * p + 2] = e4m3x2_to_f16x2(hi16(word[h][p]));
            x[4 * p + 3] = e4m3x2_to_f16x2(hi16(word[h][5 + p]));
        }
        rms_norm_row(x, W + 4 * t);
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            st[h][p] = q4(x[4 * p], x[4 * p + 2]);
            st[h][5 + p] = q4(x[4 * p + 1], x[4 * p + 3]);
        }
    }
}

__device__ __forceinline__ void enc5_e61(const uint32_t* d61s, int tok, int x0, int y0, int ex, int ey,
                                         const uint16_t* __restrict__ tex, uint16_t* __restrict__ surf) {
    const int px = x0 + (tok & 7), py = y0 + (tok >> 3);
    if (px < 0 || px >= ex || py < 0 || py >= ey) return;
    uint16_t val[9];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const uint32_t w = d61s[tok * 8 + i];
        val[2 * i] = lo16(w);
        val[2 * i + 1] = hi16(w);
    }
    val[8] = lo16(d61s[tok * 8 + 4]);
    uint16_t mx = val[0];
#pragma unroll
    for (int i = 1; i < 9; ++i) mx = hmax(mx, val[i]);
    float e32[9];
    float total;
#pragma unroll
    for (int i = 0; i < 9; ++i) {
        const uint16_t d = hsub(val[i], mx);
        float f;
        asm("{ .reg .f32 a; cvt.f32.f16 a, %1; mul.rn.ftz.f32 a, a, 0f3FB8AA3B; ex2.approx.ftz.f32 %0, a; }"
            : "=f"(f) : "h"(d));
        e32[i] = f;
    }
    total = e32[0];
#pragma unroll
    for (int i = 1; i < 9; ++i) asm("add.rn.ftz.f32 %0, %0, %1;" : "+f"(total) : "f"(e32[i]));
    uint16_t rr;
    asm("{ .reg .f32 q; div.approx.ftz.f32 q, 0f3F800000, %1; cvt.rn.f16.f32 %0, q; }" : "=h"(rr) : "f"(total));
    uint16_t pw[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) {
        uint16_t e16;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(e16) : "f"(e32[i]));
        pw[i] = hmul(e16, rr);
    }
    // 9 taps around the clamped centre, raster order; paired f16x2 fold, then the 9th tap
    const int cx = min(max(px, 1), ex - 2), cy = min(max(py, 1), ey - 2);
    uint32_t accp[4] = {0u, 0u, 0u, 0u};  // per channel: (even tap, odd tap) halves
    uint16_t tap8[4];
#pragma unroll
    for (int i = 0; i < 9; i += 2) {
        uint16_t ta[4], tb[4];
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ti = i + k;
            if (ti > 8) break;
            const int sx = cx + (ti % 3) - 1, sy = cy + (ti / 3) - 1;
            uint2 texel = make_uint2(0u, 0u);
            if (sx >= 0 && sx < ex && sy >= 0 && sy < ey)
                texel = *reinterpret_cast<const uint2*>(tex + 4 * ((size_t)sy * ex + sx));
            uint16_t* dst = k ? tb : ta;
            dst[0] = lo16(texel.x); dst[1] = hi16(texel.x); dst[2] = lo16(texel.y); dst[3] = hi16(texel.y);
        }
        if (i < 8) {
            const uint32_t pp = pack2(pw[i], pw[i + 1]);
#pragma unroll
            for (int c = 0; c < 4; ++c) accp[c] = hfma2(pp, pack2(ta[c], tb[c]), accp[c]);
        } else {
#pragma unroll
            for (int c = 0; c < 4; ++c) tap8[c] = ta[c];
        }
    }
    uint16_t out[4];
#pragma unroll
    for (int c = 0; c < 3; ++c) out[c] = hfma(pw[8], tap8[c], hadd(lo16(accp[c]), hi16(accp[c])));
    out[3] = 0;
    *reinterpret_cast<uint2*>(surf + 4 * ((size_t)py * ex + px)) = make_uint2(pack2(out[0], out[1]), pack2(out[2], out[3]));
}

// the same with the gain row in shared memory (word 4n + t)
__device__ __forceinline__ void rms_norm_row_smem(uint32_t* w, const uint32_t* gain_lane) {
    rms_norm_row_with(w, [gain_lane](int n) { return gain_lane[4 * n]; });
}

// ---------------------------------------------------------------------------------------------------------------
// Phase pieces shared by the one-CTA kernel (enc5_body) and the 2-CTA-cluster kernel (enc5_split_body)
// ---------------------------------------------------------------------------------------------------------------
// P1-P10 for head h: D9 = staged . Q_h, D10 = staged . V_h (96x32, K = 160 in 5 chained steps); the next k-step's
// B tiles in flight. F16A: the staged A is already unpacked to f16 (two uint4 per lane and fragment; hand-issued
// HMMA pairs); else e4m3 fragments and the mode's m16n8k32 mma.
template <int MODE, bool F16A>
__device__ __forceinline__ void project_qv(uint32_t (&q)[6][4][2], uint32_t (&v)[6][4][2], const uint4* a_stage,
                                           const uint8_t* W, int h, int lane) {
#pragma unroll
    for (int mi = 0; mi < 6; ++mi)
#pragma unroll
        for (int n = 0; n < 4; ++n) q[mi][n][0] = q[mi][n][1] = v[mi][n][0] = v[mi][n][1] = 0u;
    const uint8_t* wq = W + HEAD_SLOT * h + OFF_Q + 16 * lane;
    const uint8_t* wv = W + HEAD_SLOT * h + OFF_V + 16 * lane;
    uint4 nb[4] = {ldg16(wq), ldg16(wq + 512), ldg16(wv), ldg16(wv + 512)};  // next k-step's B (prefetched)
ENC5_UNROLL(ENC5_KS_UNROLL)
    for (int ks = 0; ks < 5; ++ks) {
        const uint4 bq0 = nb[0], bq1 = nb[1], bv0 = nb[2], bv1 = nb[3];
        const int kn = ks < 4 ? ks + 1 : ks;
        nb[0] = ldg16(wq + 1024 * kn); nb[1] = ldg16(wq + 1024 * kn + 512);
        nb[2] = ldg16(wv + 1024 * kn); nb[3] = ldg16(wv + 1024 * kn + 512);
        const uint32_t bq[4][2] = {{bq0.x, bq0.y}, {bq0.z, bq0.w}, {bq1.x, bq1.y}, {bq1.z, bq1.w}};
        const uint32_t bv[4][2] = {{bv0.x, bv0.y}, {bv0.z, bv0.w}, {bv1.x, bv1.y}, {bv1.z, bv1.w}};
#pragma unroll
        for (int mi = 0; mi < 6; ++mi) {
            if constexpr (F16A) {
                const uint4 lo = a_stage[(2 * (5 * mi + ks)) * 32 + lane];
                const uint4 hi = a_stage[(2 * (5 * mi + ks) + 1) * 32 + lane];
                const uint32_t af[2][4] = {{lo.x, lo.y, lo.z, lo.w}, {hi.x, hi.y, hi.z, hi.w}};
#pragma unroll
                for (int n = 0; n < 4; ++n) {
                    mma_hopper_f16a(q[mi][n][0], q[mi][n][1], af, bq[n][0], bq[n][1], q[mi][n][0], q[mi][n][1]);
                    mma_hopper_f16a(v[mi][n][0], v[mi][n][1], af, bv[n][0], bv[n][1], v[mi][n][0], v[mi][n][1]);
                }
                continue;
            }
            const uint4 a = a_stage[(5 * mi + ks) * 32 + lane];
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                mma<MODE>(q[mi][n][0], q[mi][n][1], a.x, a.y, a.z, a.w, bq[n][0], bq[n][1], q[mi][n][0], q[mi][n][1]);
                mma<MODE>(v[mi][n][0], v[mi][n][1], a.x, a.y, a.z, a.w, bv[n][0], bv[n][1], v[mi][n][0], v[mi][n][1]);
            }
        }
    }
}

// E10: D9 -> Q8 fragments of all 96 rows (P11's A for rows 0..63, its B = keys for all 96); E11 (part): V^T by
// movmatrix.trans, requantised -> P12's B fragments [k-step s][n-tile j][2]
__device__ __forceinline__ void requant_qv(uint32_t (&q8)[6][4], uint32_t (&vb)[3][4][2], const uint32_t (&q)[6][4][2],
                                           const uint32_t (&v)[6][4][2]) {
#pragma unroll
    for (int mi = 0; mi < 6; ++mi) {
        q8[mi][0] = q4(q[mi][0][0], q[mi][2][0]);
        q8[mi][1] = q4(q[mi][0][1], q[mi][2][1]);
        q8[mi][2] = q4(q[mi][1][0], q[mi][3][0]);
        q8[mi][3] = q4(q[mi][1][1], q[mi][3][1]);
    }
#pragma unroll
    for (int s = 0; s < 3; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            // key block a = 8 keys: m-tile a >> 1, half a & 1
            const int a0 = 4 * s, a1 = 4 * s + 1, a2 = 4 * s + 2, a3 = 4 * s + 3;
            const uint32_t t0 = movtrans(v[a0 >> 1][j][a0 & 1]);
            const uint32_t t1 = movtrans(v[a1 >> 1][j][a1 & 1]);
            const uint32_t t2 = movtrans(v[a2 >> 1][j][a2 & 1]);
            const uint32_t t3 = movtrans(v[a3 >> 1][j][a3 & 1]);
            vb[s][j][0] = q4(t0, t2);
            vb[s][j][1] = q4(t1, t3);
        }
}

// P11 for query m-tile mi: S = Q8[mi] . Q8^T + bias (s holds the score bias on entry); Q's own fragments are the B
template <int MODE>
__device__ __forceinline__ void p11_scores(uint32_t (&s)[12][2], const uint32_t (&q8)[6][4], int mi) {
#pragma unroll
    for (int j = 0; j < 12; ++j) {
        const int km = j >> 1, kh = j & 1;  // key rows 8j..8j+7 = m-tile km, half kh
        mma<MODE>(s[j][0], s[j][1], q8[mi][0], q8[mi][1], q8[mi][2], q8[mi][3], q8[km][kh], q8[km][2 + kh],
                  s[j][0], s[j][1]);
    }
}

// E11 in place: cubic exponent, then row sums ((w0+w2)+(w4+w6))+(w8+w10) + the same over odd n-tiles, butterfly,
// lo + hi; rcp; p = e * rcp
__device__ __forceinline__ void e11_softmax(uint32_t (&s)[12][2]) {
#pragma unroll
    for (int j = 0; j < 12; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const uint32_t m = hmin2(hmax2(hmul2(s[j][r], C_SCALE), C_CLAMP_LO), C_CLAMP_HI);
            const uint32_t tt = hfma2(m, hneg2(m), C_CUBIC1);
            const uint32_t u = hfma2(m, tt, C_CUBIC0);
            s[j][r] = (u << 5) & 0x7FE07FE0u;
        }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const uint32_t ev = hadd2(hadd2(hadd2(s[0][r], s[2][r]), hadd2(s[4][r], s[6][r])), hadd2(s[8][r], s[10][r]));
        const uint32_t od = hadd2(hadd2(hadd2(s[1][r], s[3][r]), hadd2(s[5][r], s[7][r])), hadd2(s[9][r], s[11][r]));
        uint32_t tot = hadd2(ev, od);
        tot = hadd2(tot, __shfl_xor_sync(0xFFFFFFFFu, tot, 1));
        tot = hadd2(tot, __shfl_xor_sync(0xFFFFFFFFu, tot, 2));
        const uint16_t rc = h_rcp_approx(hadd(lo16(tot), hi16(tot)));
        const uint32_t rc2 = pack2(rc, rc);
#pragma unroll
        for (int j = 0; j < 12; ++j) s[j][r] = hmul2(s[j][r], rc2);
    }
}

// P12: O = P . V (K = 96: 3 steps), C = 0
template <int MODE>
__device__ __forceinline__ void p12_pv(uint32_t (&o)[4][2], const uint32_t (&s)[12][2], const uint32_t (&vb)[3][4][2]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) o[j][0] = o[j][1] = 0u;
#pragma unroll
    for (int ks = 0; ks < 3; ++ks) {
        const uint32_t pa0 = q4(s[4 * ks][0], s[4 * ks + 2][0]);
        const uint32_t pa1 = q4(s[4 * ks][1], s[4 * ks + 2][1]);
        const uint32_t pa2 = q4(s[4 * ks + 1][0], s[4 * ks + 3][0]);
        const uint32_t pa3 = q4(s[4 * ks + 1][1], s[4 * ks + 3][1]);
#pragma unroll
        for (int j = 0; j < 4; ++j)
            mma<MODE>(o[j][0], o[j][1], pa0, pa1, pa2, pa3, vb[ks][j][0], vb[ks][j][1], o[j][0], o[j][1]);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------------------------
template <int MODE, bool DEBUG, bool TIMING = false>
__device__ __forceinline__ void enc5_body(const Enc5Params& prm) {
    __shared__ Smem sm;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.z;
    const int g = lane >> 2, t = lane & 3;
    const int ex = (int)prm.ex, ey = (int)prm.ey;
    const size_t frame = blockIdx.z;
    const size_t plane = (size_t)32 * ex * ey;  // bytes per arena plane
    const uint8_t* __restrict__ in = prm.input + frame * 5 * plane;
    uint8_t* __restrict__ arena = prm.arena + frame * 5 * plane;
    const uint16_t* __restrict__ tex = prm.texture + frame * (size_t)4 * ex * ey;
    uint16_t* __restrict__ surf = prm.surface + frame * (size_t)4 * ex * ey;
    const uint8_t* __restrict__ W = prm.weights;
    const int window = blockIdx.x + gridDim.x * blockIdx.y;
    uint16_t* dbg = nullptr;
    if constexpr (DEBUG) dbg = prm.debug + ((size_t)frame * gridDim.x * gridDim.y + window) * DBG_TOTAL;
    // TIMING: per warp, clock64 at the phase boundaries (slots 0..11) and %globaltimer at start / end (12, 13)
    unsigned long long* stamps = nullptr;
    if constexpr (TIMING)
        stamps = reinterpret_cast<unsigned long long*>(prm.debug) +
                 (((size_t)frame * gridDim.x * gridDim.y + window) * 8 + threadIdx.z) * 16;
#define STAMP(k)                                                                                     \
    do {                                                                                             \
        if constexpr (TIMING) {                                                                      \
            if ((threadIdx.x & 31) == 0) {                                                           \
                stamps[k] = clock64();                                                               \
                if ((k) == 0 || (k) == 11) {                                                         \
                    unsigned long long gt;                                                           \
                    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));                           \
                    stamps[(k) == 0 ? 12 : 13] = gt;                                                 \
                }                                                                                    \
                if ((k) == 0) {                                                                      \
                    unsigned smid;                                                                   \
                    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));                                \
                    stamps[14] = smid;                                                               \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
    } while (0)
    STAMP(0);
    constexpr bool qv_f16a = MODE == ENC5_HOPPER && ENC5_QV_F16A;
    const int x0 = 8 * (int)blockIdx.x - (int)prm.ox;
    const int y0 = 8 * (int)blockIdx.y - (int)prm.oy;

    // ---- prologue: 96 staged rows (64 window tokens in raster order, then the halo: top, bottom, left, right);
    // dequantise, RMS-normalise with the W+0 gain, requantise, stage as A fragments. Warp w < 6 stages m-tile w.
    if (warp < 6) {
        const int mi = warp;
        uint32_t st[2][10];
        stage_mtile_rows(st, in, plane, W, ex, ey, x0, y0, mi, g, t);
#pragma unroll
        for (int p = 0; p < 5; ++p)
        {
            if constexpr (qv_f16a) {
                uint32_t af[2][4];
                unpack_a(af, st[0][p], st[1][p], st[0][5 + p], st[1][5 + p]);
                sm.a[(2 * (5 * mi + p)) * 32 + lane] = make_uint4(af[0][0], af[0][1], af[0][2], af[0][3]);
                sm.a[(2 * (5 * mi + p) + 1) * 32 + lane] = make_uint4(af[1][0], af[1][1], af[1][2], af[1][3]);
            } else {
                sm.a[(5 * mi + p) * 32 + lane] = make_uint4(st[0][p], st[1][p], st[0][5 + p], st[1][5 + p]);
            }
        }
    }
    STAMP(1);
    __syncthreads();

    STAMP(2);
    // ---- P1-P10: head h = warp: D9 = staged . Q_h, D10 = staged . V_h (96x32, K = 160 in 5 chained steps)
    const int h = warp;
    uint32_t q[6][4][2], v[6][4][2];
    project_qv<MODE, qv_f16a>(q, v, sm.a, W, h, lane);
    if constexpr (DEBUG) {
#pragma unroll
        for (int mi = 0; mi < 6; ++mi)
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                dbg_tile(dbg + DBG_D9 + h * 3072, 32, 16 * mi, 8 * n, q[mi][n][0], q[mi][n][1]);
                dbg_tile(dbg + DBG_D10 + h * 3072, 32, 16 * mi, 8 * n, v[mi][n][0], v[mi][n][1]);
            }
    }

    STAMP(3);
    // ---- E10: requantise D9 -> Q8 fragments of all 96 rows (A of P11 for rows 0..63, B = keys for all 96)
    uint32_t q8[6][4], vb[3][4][2];
    requant_qv(q8, vb, q, v);

    // ---- P11 / E11 / P12 / E12 per query m-tile mi (rows are independent: same bits as the whole-block order)
    const uint8_t* sbias = W + HEAD_SLOT * h + OFF_SBIAS + 16 * lane;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
        uint32_t s[12][2];
#pragma unroll
        for (int jp = 0; jp < 6; ++jp) {
            const uint4 c = ldg16(sbias + 512 * (4 * jp + mi));
            s[2 * jp][0] = c.x; s[2 * jp][1] = c.y; s[2 * jp + 1][0] = c.z; s[2 * jp + 1][1] = c.w;
        }
        p11_scores<MODE>(s, q8, mi);
        if constexpr (DEBUG) {
#pragma unroll
            for (int j = 0; j < 12; ++j) dbg_tile(dbg + DBG_S11 + h * 6144, 96, 16 * mi, 8 * j, s[j][0], s[j][1]);
        }
        e11_softmax(s);
        uint32_t o[4][2];
        p12_pv<MODE>(o, s, vb);
        if constexpr (DEBUG) {
#pragma unroll
            for (int j = 0; j < 4; ++j) dbg_tile(dbg + DBG_O12 + h * 2048, 32, 16 * mi, 8 * j, o[j][0], o[j][1]);
        }
        // E12: O -> e4m3 A fragments of P13 + h, staged per head and m-tile
        sm.o[(4 * h + mi) * 32 + lane] =
            make_uint4(q4(o[0][0], o[2][0]), q4(o[0][1], o[2][1]), q4(o[1][0], o[3][0]), q4(o[1][1], o[3][1]));
    }
    STAMP(4);
    uint4 wob[10];  // head 0's Wo, loaded while the other warps finish P12
    if (warp < 4) {
#pragma unroll
        for (int n2 = 0; n2 < 10; ++n2) wob[n2] = ldg16(W + OFF_WO + 16 * lane + 512 * n2);
    }
    __syncthreads();
    if (warp >= 4) STAMP(11);
    if (warp >= 4) return;

    STAMP(5);
    // ---- warps 0..3: query rows 16z..16z+15 = tokens (x0 + g, y0 + 2z) and (x0 + g, y0 + 2z + 1)
    const int z = warp;
    const int tx = x0 + g;
    const int ty[2] = {y0 + 2 * z, y0 + 2 * z + 1};
    bool in_frame[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) in_frame[r] = tx >= 0 && tx < ex && ty[r] >= 0 && ty[r] < ey;

    // P13's C = proj_bias[c] + residual (the dequantised raw input)
    uint32_t acc[20][2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const uint8_t* rec = in + 32 * ((size_t)ty[r] * ex + tx) + 4 * t;
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            const uint32_t w0 = in_frame[r] ? ldg4(rec + p * plane) : 0u;
            const uint32_t w1 = in_frame[r] ? ldg4(rec + p * plane + 16) : 0u;
            acc[4 * p + 0][r] = e4m3x2_to_f16x2(lo16(w0));
            acc[4 * p + 1][r] = e4m3x2_to_f16x2(lo16(w1));
            acc[4 * p + 2][r] = e4m3x2_to_f16x2(hi16(w0));
            acc[4 * p + 3][r] = e4m3x2_to_f16x2(hi16(w1));
        }
    }
#pragma unroll
    for (int n = 0; n < 20; ++n) {
        const uint32_t b = ldg4(W + OFF_PROJ_BIAS + 16 * n + 4 * t);
        acc[n][0] = hadd2(b, acc[n][0]);
        acc[n][1] = hadd2(b, acc[n][1]);
    }

    // ---- P13-P20: acc += O_j . Wo_j (16x160x32 each); Wo_{j+1} loads in flight during phase j
ENC5_UNROLL(ENC5_J_UNROLL)
    for (int j = 0; j < 8; ++j) {
        const uint4 a = sm.o[(4 * j + z) * 32 + lane];
        uint4 b[10];
#pragma unroll
        for (int n2 = 0; n2 < 10; ++n2) b[n2] = wob[n2];
        const int jn = j < 7 ? j + 1 : j;
#pragma unroll
        for (int n2 = 0; n2 < 10; ++n2) wob[n2] = ldg16(W + OFF_WO + HEAD_SLOT * jn + 16 * lane + 512 * n2);
#pragma unroll
        for (int n2 = 0; n2 < 10; ++n2) {
            mma<MODE>(acc[2 * n2][0], acc[2 * n2][1], a.x, a.y, a.z, a.w, b[n2].x, b[n2].y, acc[2 * n2][0],
                      acc[2 * n2][1]);
            mma<MODE>(acc[2 * n2 + 1][0], acc[2 * n2 + 1][1], a.x, a.y, a.z, a.w, b[n2].z, b[n2].w,
                      acc[2 * n2 + 1][0], acc[2 * n2 + 1][1]);
        }
    }
    if constexpr (DEBUG) {
#pragma unroll
        for (int n = 0; n < 20; ++n) dbg_tile(dbg + DBG_D20, 160, 16 * z, 8 * n, acc[n][0], acc[n][1]);
    }

    STAMP(6);
    // chunk 0's fc1/fc2/bias loads go out before E20's norm
    constexpr bool mlp_smem = MODE == ENC5_HOPPER && ENC5_MLP_SMEM;
    uint4* ring = sm.a;  // mlp_smem: 3 stages x 640 uint4 (sm.a is dead since the barrier before P13)
    const int tid = lane + 32 * z;
    uint4 f1[10], f2[10];
    uint32_t bias1[4];
    if constexpr (mlp_smem) {
        ring_fill(ring, W, 0, tid);
        ring_fill(ring + 640, W, 1, tid);
    } else {
#pragma unroll
        for (int k = 0; k < 10; ++k) {
            f1[k] = ldg16(W + chunk_base(0) + 16 * lane + 512 * k);
            f2[k] = ldg16(W + chunk_base(0) + 5184 + 16 * lane + 512 * k);
        }
    }
#pragma unroll
    for (int n = 0; n < 4; ++n) bias1[n] = ldg4(W + chunk_base(0) + 5120 + 16 * n + 4 * t);
    // ---- E20: RMS norm of D20 -> e4m3 A fragments shared by every odd phase (5 k-steps)
    uint32_t an[5][4];
    {
        uint32_t nrm[2][20];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
            for (int n = 0; n < 20; ++n) nrm[r][n] = acc[n][r];
            rms_norm_row(nrm[r], W + OFF_MLP_GAIN + 4 * t);
        }
#pragma unroll
        for (int s = 0; s < 5; ++s) {
            an[s][0] = q4(nrm[0][4 * s], nrm[0][4 * s + 2]);
            an[s][1] = q4(nrm[1][4 * s], nrm[1][4 * s + 2]);
            an[s][2] = q4(nrm[0][4 * s + 1], nrm[0][4 * s + 3]);
            an[s][3] = q4(nrm[1][4 * s + 1], nrm[1][4 * s + 3]);
        }
    }
    constexpr bool fc1_f16a = MODE == ENC5_HOPPER && ENC5_FC1_F16A;
    uint32_t anf[5][2][4];
    if constexpr (fc1_f16a) {
#pragma unroll
        for (int s = 0; s < 5; ++s) unpack_a(anf[s], an[s][0], an[s][1], an[s][2], an[s][3]);
    }
    // E21: P22's C = out_bias[c] + D20
#pragma unroll
    for (int n = 0; n < 20; ++n) {
        const uint32_t b = ldg4(W + OFF_OUT_BIAS + 16 * n + 4 * t);
        acc[n][0] = hadd2(b, acc[n][0]);
        acc[n][1] = hadd2(b, acc[n][1]);
    }

    STAMP(7);
    // ---- P21-P60: 20 MLP chunks: hid_i = An . fc1_i + b1_i (odd phase); acc += e4m3(act(hid_i)) . fc2_i (even).
    // Software-pipelined: iteration i runs fc2_i and fc1_{i+1} in one basic block (independent mma, interleaved by
    // the scheduler); fc2_{i+1} / fc1_{i+2} loads are issued as soon as their registers are consumed.
    uint32_t hid[4][2];
    if constexpr (mlp_smem) {
        // chunk c lives in stage c % 3; iteration i reads fc2_i and fc1_{i+1}; its barrier also means every warp has
        // left iteration i-1, so stage (i+2) % 3 is free for chunk i+2 (needed one iteration later)
        cp_async_wait<1>();
        bar_mlp();
        {
            uint4 fb[10];
#pragma unroll
            for (int k = 0; k < 10; ++k) fb[k] = ring[32 * k + lane];
            if constexpr (fc1_f16a) fc1_chunk_f16a(hid, anf, fb, bias1);
            else fc1_chunk<MODE>(hid, an, fb, bias1);
        }
#pragma unroll
        for (int n = 0; n < 4; ++n) bias1[n] = ldg4(W + chunk_base(1) + 5120 + 16 * n + 4 * t);
        if constexpr (DEBUG) {
#pragma unroll
            for (int n = 0; n < 4; ++n) dbg_tile(dbg + DBG_D21, 32, 16 * z, 8 * n, hid[n][0], hid[n][1]);
        }
ENC5_UNROLL(ENC5_MLP_UNROLL)
        for (int i = 0; i < 20; ++i) {
            cp_async_wait<0>();
            bar_mlp();
            if (i < 18) ring_fill(ring + 640 * ((i + 2) % 3), W, i + 2, tid);
            uint32_t hq[4];
            mlp_activation(hid, hq);
            const uint4* s2 = ring + 640 * (i % 3) + 320;
#pragma unroll
            for (int n2 = 0; n2 < 10; ++n2) {
                const uint4 b = s2[32 * n2 + lane];
                mma<MODE>(acc[2 * n2][0], acc[2 * n2][1], hq[0], hq[1], hq[2], hq[3], b.x, b.y, acc[2 * n2][0],
                          acc[2 * n2][1]);
                mma<MODE>(acc[2 * n2 + 1][0], acc[2 * n2 + 1][1], hq[0], hq[1], hq[2], hq[3], b.z, b.w,
                          acc[2 * n2 + 1][0], acc[2 * n2 + 1][1]);
            }
            // fc1_{i+1} (on the last iteration a stale stage, unused: keeps the block branch-free)
            const uint4* s1 = ring + 640 * ((i + 1) % 3);
            uint4 fb[10];
#pragma unroll
            for (int k = 0; k < 10; ++k) fb[k] = s1[32 * k + lane];
            if constexpr (fc1_f16a) fc1_chunk_f16a(hid, anf, fb, bias1);
            else fc1_chunk<MODE>(hid, an, fb, bias1);
            const int n2i = i < 18 ? i + 2 : 19;
#pragma unroll
            for (int n = 0; n < 4; ++n) bias1[n] = ldg4(W + chunk_base(n2i) + 5120 + 16 * n + 4 * t);
            if constexpr (DEBUG) {
                if (i == 0) {
#pragma unroll
                    for (int n = 0; n < 20; ++n) dbg_tile(dbg + DBG_D22, 160, 16 * z, 8 * n, acc[n][0], acc[n][1]);
                }
            }
        }
    } else {
        if constexpr (fc1_f16a) fc1_chunk_f16a(hid, anf, f1, bias1);
            else fc1_chunk<MODE>(hid, an, f1, bias1);
#pragma unroll
        for (int k = 0; k < 10; ++k) f1[k] = ldg16(W + chunk_base(1) + 16 * lane + 512 * k);
#pragma unroll
        for (int n = 0; n < 4; ++n) bias1[n] = ldg4(W + chunk_base(1) + 5120 + 16 * n + 4 * t);
        if constexpr (DEBUG) {
#pragma unroll
            for (int n = 0; n < 4; ++n) dbg_tile(dbg + DBG_D21, 32, 16 * z, 8 * n, hid[n][0], hid[n][1]);
        }
ENC5_UNROLL(ENC5_MLP_UNROLL)
        for (int i = 0; i < 20; ++i) {
            uint32_t hq[4];
            mlp_activation(hid, hq);
            const uint32_t h0 = hq[0], h1 = hq[1], h2 = hq[2], h3 = hq[3];
            // fc2_i (the running residual)
#pragma unroll
            for (int n2 = 0; n2 < 10; ++n2) {
                mma<MODE>(acc[2 * n2][0], acc[2 * n2][1], h0, h1, h2, h3, f2[n2].x, f2[n2].y, acc[2 * n2][0],
                          acc[2 * n2][1]);
                mma<MODE>(acc[2 * n2 + 1][0], acc[2 * n2 + 1][1], h0, h1, h2, h3, f2[n2].z, f2[n2].w,
                          acc[2 * n2 + 1][0], acc[2 * n2 + 1][1]);
            }
            const int n1 = i < 19 ? i + 1 : 19, n2i = i < 18 ? i + 2 : 19;
#pragma unroll
            for (int k = 0; k < 10; ++k) f2[k] = ldg16(W + chunk_base(n1) + 5184 + 16 * lane + 512 * k);
            // fc1_{i+1} (chunk 19 recomputed, unused, on the last iteration: keeps the block branch-free)
            if constexpr (fc1_f16a) fc1_chunk_f16a(hid, anf, f1, bias1);
            else fc1_chunk<MODE>(hid, an, f1, bias1);
#pragma unroll
            for (int k = 0; k < 10; ++k) f1[k] = ldg16(W + chunk_base(n2i) + 16 * lane + 512 * k);
#pragma unroll
            for (int n = 0; n < 4; ++n) bias1[n] = ldg4(W + chunk_base(n2i) + 5120 + 16 * n + 4 * t);
            if constexpr (DEBUG) {
                if (i == 0) {
#pragma unroll
                    for (int n = 0; n < 20; ++n) dbg_tile(dbg + DBG_D22, 160, 16 * z, 8 * n, acc[n][0], acc[n][1]);
                }
            }
        }
    }
    if constexpr (DEBUG) {
#pragma unroll
        for (int n = 0; n < 20; ++n) dbg_tile(dbg + DBG_D60, 160, 16 * z, 8 * n, acc[n][0], acc[n][1]);
    }

    STAMP(8);
    // ---- E60: requantise D60 -> packed rows; guarded scatter to the 5-plane arena (word t and t|4 per plane)
    uint32_t y8[5][4];
#pragma unroll
    for (int s = 0; s < 5; ++s) {
        y8[s][0] = q4(acc[4 * s][0], acc[4 * s + 2][0]);
        y8[s][1] = q4(acc[4 * s][1], acc[4 * s + 2][1]);
        y8[s][2] = q4(acc[4 * s + 1][0], acc[4 * s + 3][0]);
        y8[s][3] = q4(acc[4 * s + 1][1], acc[4 * s + 3][1]);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (in_frame[r]) {
            uint8_t* rec = arena + 32 * ((size_t)ty[r] * ex + tx) + 4 * t;
#pragma unroll
            for (int p = 0; p < 5; ++p) {
                *reinterpret_cast<uint32_t*>(rec + p * plane) = y8[p][r];
                *reinterpret_cast<uint32_t*>(rec + p * plane + 16) = y8[p][2 + r];
            }
        }
    }

    STAMP(9);
    // ---- P61: head 16x16x160 on e4m3(D60), C = head bias
    uint32_t d61[2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n) d61[n][0] = d61[n][1] = ldg4(W + OFF_HEAD_BIAS + 16 * n + 4 * t);
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint4 b = ldg16(W + OFF_HEAD + 512 * ks + 16 * lane);
        mma<MODE>(d61[0][0], d61[0][1], y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], b.x, b.y, d61[0][0], d61[0][1]);
        mma<MODE>(d61[1][0], d61[1][1], y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], b.z, b.w, d61[1][0], d61[1][1]);
    }
    if constexpr (DEBUG) {
#pragma unroll
        for (int n = 0; n < 2; ++n) dbg_tile(dbg + DBG_D61, 16, 16 * z, 8 * n, d61[n][0], d61[n][1]);
    }
    // E61: D61 to shared (token-major), then one thread per token (warps 0, 1)
#pragma unroll
    for (int n = 0; n < 2; ++n) {
        sm.d61[(16 * z + g) * 8 + 4 * n + t] = d61[n][0];
        sm.d61[(16 * z + g + 8) * 8 + 4 * n + t] = d61[n][1];
    }
    STAMP(10);
    asm volatile("bar.sync 1, 128;" ::: "memory");
    if (warp >= 2) STAMP(11);
    if (warp >= 2) return;
    enc5_e61(sm.d61, 32 * warp + lane, x0, y0, ex, ey, tex, surf);
    STAMP(11);
}

// ---------------------------------------------------------------------------------------------------------------
// The split kernel (hopper): one window per CTA pair (a 2-CTA cluster), 4 warps per CTA. Same operations on the
// same values as enc5_body; only where they run changes:
//   prologue   CTA r stages m-tiles 3r..3r+2 into both CTAs' shared memory (DSMEM stores);
//   P1-P12     CTA r, warp w runs head 4r + w; E12 writes O into both CTAs;
//   P13-P20    warp z of CTA r keeps query rows 16z..16z+15 and the n8-tiles n with n % 2 == r (10 of 20);
//   E20        the pair swaps its D20 halves, both CTAs normalise the full rows (the f16 sum is sequential over
//              all 160 columns) and both hold fc1's full A operand;
//   P21-P60    fc1 of chunk c: CTA r computes hidden n8-tiles r and r + 2 (2 of 4), which are exactly the e4m3 words
//              2r, 2r + 1 of fc2's A fragment; each lane sends its two words to the same lane of the partner warp
//              (st.async + mbarrier, 4 slots, fc1 runs two chunks ahead of fc2 so a send has an iteration to land);
//              fc2 accumulates the CTA's 10 n8-tiles; weights through a 6-stage cp.async ring of the CTA's halves;
//   E60        each CTA scatters its own arena words (word t from CTA 0, word t|4 from CTA 1); the pair swaps
//              the e4m3 rows; CTA r runs P61/E61 for tokens 32r..32r+31 (warps 2r, 2r+1).
// ---------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
// the same shared-memory offset in CTA `rank` of the cluster
__device__ __forceinline__ uint32_t map_peer(uint32_t addr, uint32_t rank) {
    uint32_t d; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(addr), "r"(rank)); return d;
}
__device__ __forceinline__ void st_peer16(uint32_t addr, uint4 v) {
    asm volatile("st.shared::cluster.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}
__device__ __forceinline__ void st_peer8(uint32_t addr, uint32_t a, uint32_t b) {
    asm volatile("st.shared::cluster.v2.u32 [%0], {%1,%2};" ::"r"(addr), "r"(a), "r"(b) : "memory");
}
// 8 / 16 bytes into the partner's shared memory, completing as many bytes of its mbarrier's transaction count;
// `on` predicates the store inside the asm (no branch: the MLP loop body stays one basic block)
__device__ __forceinline__ void st_async8(uint32_t addr, uint32_t a, uint32_t b, uint32_t bar, bool on = true) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                 " @p st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1,%2}, [%3]; }"
                 ::"r"(addr), "r"(a), "r"(b), "r"(bar), "r"((uint32_t)on) : "memory");
}
__device__ __forceinline__ void st_async16(uint32_t addr, uint4 v, uint32_t bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1,%2,%3,%4}, [%5];"
                 ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(bar) : "memory");
}
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes, bool on = true) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n"
                 " @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1; }"
                 ::"r"(bar), "r"(bytes), "r"((uint32_t)on) : "memory");
}
// Default .acquire.cta: the waited-for bytes are in this CTA's own shared memory, written by the partner's st.async
// (whose complete_tx releases at cluster scope) — the pattern CUTLASS uses for TMA and DSMEM pipelines. The formally
// matching .acquire.cluster emits an L1 invalidate (CCTL.IVALL) per wait and cost ~0.7 us per frame in the MLP loop.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{ .reg .pred p;\n"
        "LAB_WAIT:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        " @!p bra LAB_WAIT;\n"
        "}" ::"r"(bar), "r"(parity) : "memory");
}
// TMA bulk copy global -> this CTA's shared memory, completing `bytes` on the mbarrier (one thread issues it)
__device__ __forceinline__ void bulk_g2s(void* smem, const void* gmem, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(smem)), "l"(gmem), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ uint2 ldg8(const uint8_t* p) {
    uint2 v; asm("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p)); return v;
}
__device__ __forceinline__ void cp_async8(void* smem, const void* gmem, bool on = true) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n @p cp.async.ca.shared.global [%0], [%1], 8; }"
                 ::"r"(s), "l"(gmem), "r"((uint32_t)on) : "memory");
}

constexpr int SPLIT_RING = 6;        // ring stages (one MLP chunk's half-weights each)
constexpr int SPLIT_SLOTS = 4;       // fc2 A-word slots per warp
constexpr int SPLIT_STAGE = 640;     // uint2 per stage: 10 fc1 tiles + 10 fc2 tiles, 32 lanes
// one-shot mbarriers (phase 0 only, armed with their byte counts at kernel start) after the 16 hq slot barriers
constexpr int BAR_STAGED = SPLIT_SLOTS * 4, BAR_O = BAR_STAGED + 1, BAR_D20 = BAR_O + 1, BAR_Y8 = BAR_D20 + 4;
constexpr int BAR_CONST = BAR_Y8 + 4;  // the bulk copies of Wo, the bias/gain rows and P61's weights
constexpr int SPLIT_BARS = BAR_CONST + 1;
// ENC5_SPLIT_OCC3 (variant hopper_split_occ3, the 4K frame's form): at most 168 registers and 68,576 B of shared
// memory so that three CTAs fit one SM (135 4K windows = 270 CTAs > 2 x 132 slots); Wo then comes through a two-head
// register prefetch instead of shared memory. Its defaults below differ from the split build's: idle warps skip
// (ENC5_SPLIT_SKIP_DEAD), dispatch-order swaps (ENC5_SPLIT_ORDER_SWAPS), no score-bias prefetch, MLP chunks in pairs
#if defined(ENC5_VARIANT) && (ENC5_VARIANT == 7 || ENC5_VARIANT == 8)
#define ENC5_SPLIT_OCC3 1
#else
#define ENC5_SPLIT_OCC3 0
#endif
constexpr uint32_t CONST_BYTES = (ENC5_SPLIT_OCC3 ? 0 : 8 * 5120) + 3 * 320 + 32 + 2560;
struct __align__(16) SplitSmem {
    uint4 a[2 * 30 * 32];            // 30720 B: staged f16 operand (P1-P10); then the weight ring (6 x 5120 B)
    uint4 o[8 * 4 * 32];             // 16384 B: [head][m-tile][lane] e4m3 A fragments of P13-P20
    uint4 x[4 * 5 * 32];             // 10240 B: the partner's D20 words [warp][5][lane]; later its E60 rows
    uint2 hq[SPLIT_SLOTS * 4 * 32];  // 4096 B: the partner's fc2 A words [slot][warp][lane]
    uint32_t d61[64 * 8];            // 2048 B: D61, token-major
    uint32_t b1s[20 * 4 * 4];        // 1280 B: fc1 biases of the 20 chunks (4 n8-tiles x 4 words)
#if !ENC5_SPLIT_OCC3
    uint4 wo[8 * 10 * 32];           // 40960 B: Wo of P13-P20 as in the weight image [head][n8 pair m][lane]
#endif
    uint32_t cst[248];               // 992 B: proj_bias (words 0..79), mlp_gain (80..159), out_bias (160..239),
                                     //        head bias (240..247): word 4n + t = bytes 16n + 4t of each
    uint4 headw[5 * 32];             // 2560 B: P61's B fragments [k-step][lane]
    unsigned long long bar[SPLIT_BARS];  // 26 x 8 B (+ the window origin, padding to 256)
    int2 org;                            // (x0, y0): split_origin, written at the start by thread 96
    unsigned long long pad[31 - SPLIT_BARS];
};
// the launcher passes this many bytes of dynamic shared memory (tcforge.layers.enc5.gpu.kernel.SPLIT_SMEM_BYTES)
static_assert(sizeof(SplitSmem) == (ENC5_SPLIT_OCC3 ? 68576 : 109536),
              "SplitSmem size must match kernel.SPLIT_SMEM_BYTES");
#ifndef ENC5_SPLIT_FC1_F16A
#define ENC5_SPLIT_FC1_F16A 0  // 1: fc1's A (E20's output) unpacked to f16 once (ptxas already hoists it: off)
#endif
#ifndef ENC5_SPLIT_MLP_UNROLL
#define ENC5_SPLIT_MLP_UNROLL 2  // unroll of the split kernel's MLP loop (2: measured 3-6 % faster than 1)
#endif
#ifndef ENC5_SPLIT_LATE_RESID
#define ENC5_SPLIT_LATE_RESID 0  // 1: P13's residual words are loaded during the last P11 m-tile (10 registers fewer)
#endif
#ifndef ENC5_SPLIT_SB_AHEAD
// 0: each P11 m-tile loads its score bias when it starts (24 registers fewer): the 3-CTA build's default (4K, with the
// idle-warp skipping and dispatch order below: 40.1 vs 41.3 us)
#define ENC5_SPLIT_SB_AHEAD (!ENC5_SPLIT_OCC3)
#endif
#ifndef ENC5_SPLIT_F16B
// 1: the MLP's weight halves are unpacked to f16 once per CTA (each thread its own cp.async pieces) into a 4-chunk
// ring over Wo's shared memory (dead after P13-P20); fc1 and fc2 then issue the HMMA pair on f16 operands instead of
// every warp unpacking every B fragment (the same operations on the same f16 values: same bits)
#define ENC5_SPLIT_F16B 0
#endif
#ifndef ENC5_SPLIT_PAIRS
// 1: the MLP loop handles chunks in pairs (one barrier and fence point per two chunks): the 3-CTA build's default
// (4K: 39.1 vs 40.1 us; the split build: 19.9 vs 19.7 us at 720p, off)
#define ENC5_SPLIT_PAIRS ENC5_SPLIT_OCC3
#endif
#ifndef ENC5_SPLIT_SKIP_DEAD
// 1: a warp whose query m-tile (token rows y0 + 2z, y0 + 2z + 1) lies wholly outside the frame skips P13-P61 (the
// bottom window row of a 4K frame, 68 = 8 x 8 + 4 rows, has two such m-tiles): the SM that holds such a CTA has that
// much more issue and tensor throughput for its other CTAs. P1-P10 stay whole (those rows are keys of the others).
// The 3-CTA build's default (it runs the 4K frame, throughput-bound); the latency-bound split build gains nothing
// from it (its frame time is a full window's) and keeps the aligned barriers and one attention loop.
#define ENC5_SPLIT_SKIP_DEAD ENC5_SPLIT_OCC3
#endif

#ifndef ENC5_SPLIT_ATTN_SKIP
// 1 (with ENC5_SPLIT_SKIP_DEAD): dead m-tiles skip P11-P12 too, in a second copy of the attention loop taken only by
// windows with a dead m-tile (the first copy, without per-m-tile branches, serves every other window: per-m-tile
// branches cost ~2k cycles even when all four m-tiles are live)
#define ENC5_SPLIT_ATTN_SKIP 1
#endif

// bit z: query m-tile z (token rows y0 + 2z, y0 + 2z + 1) has a row inside the frame
__device__ __forceinline__ uint32_t live_mtiles(int y0, int ey) {
    uint32_t m = 0;
#pragma unroll
    for (int z = 0; z < 4; ++z) m |= (y0 + 2 * z + 1 >= 0 && y0 + 2 * z < ey) ? 1u << z : 0u;
    return m;
}

// chunk c's half-weights (n8-tiles with n % 2 == rank) -> ring stage: 640 pieces of 8 B, 5 per thread
__device__ __forceinline__ void split_ring_fill(uint2* stage, const uint8_t* W, int c, int tid, int rank,
                                                bool on = true) {
    const uint8_t* src = W + chunk_base(c) + 8 * rank;
#pragma unroll
    for (int q = 0; q < 5; ++q) {
        const int j = tid + 128 * q;
        const int tile = j >> 5, ln = j & 31;
        cp_async8(stage + j, src + (tile < 10 ? 512 * tile : 5184 + 512 * (tile - 10)) + 16 * ln, on);
    }
}

// fc1 of one chunk, the CTA's two hidden n8-tiles (rank, rank + 2): 2 chains of 5 k-steps; A = E20's full operand
// (e4m3 words, or with ENC5_SPLIT_FC1_F16A already unpacked to the two HMMA's f16 fragments)
template <typename A>
__device__ __forceinline__ void split_fc1(uint32_t (&hid)[2][2], const A& an, const uint2* stage, int lane,
                                          const uint32_t (&bias)[2]) {
    hid[0][0] = hid[0][1] = bias[0];
    hid[1][0] = hid[1][1] = bias[1];
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint2 b0 = stage[32 * ks + lane], b1 = stage[32 * (5 + ks) + lane];
#if ENC5_SPLIT_FC1_F16A
        mma_hopper_f16a(hid[0][0], hid[0][1], an[ks], b0.x, b0.y, hid[0][0], hid[0][1]);
        mma_hopper_f16a(hid[1][0], hid[1][1], an[ks], b1.x, b1.y, hid[1][0], hid[1][1]);
#else
        mma_hopper(hid[0][0], hid[0][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b0.x, b0.y, hid[0][0], hid[0][1]);
        mma_hopper(hid[1][0], hid[1][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b1.x, b1.y, hid[1][0], hid[1][1]);
#endif
    }
}

// d = HMMA(A_hi, B_hi, HMMA(A_lo, B_lo, +0)) + c on f16 operands: b = (lo b0, lo b1, hi b0, hi b1) of an e4m3 B
// fragment, af = unpack_a of the e4m3 A fragment (mma_hopper_f16a with B unpacked beforehand)
__device__ __forceinline__ void mma_hopper_f16ab(uint32_t& d0, uint32_t& d1, const uint32_t (&af)[2][4], uint4 b,
                                                 uint32_t c0, uint32_t c1) {
    uint32_t t0, t1;
    hmma16816(t0, t1, af[0], b.x, b.y, 0u, 0u);
    hmma16816(t0, t1, af[1], b.z, b.w, t0, t1);
    d0 = hadd2(t0, c0);
    d1 = hadd2(t1, c1);
}

// ENC5_SPLIT_F16B: this thread's 5 pieces of an e4m3 ring stage (the ones its own cp.async wrote, so no barrier is
// needed before) -> the f16 stage, piece j = tile * 32 + lane in both
__device__ __forceinline__ void split_unpack_stage(uint4* dst, const uint2* src, int tid) {
#pragma unroll
    for (int q = 0; q < 5; ++q) {
        const int j = tid + 128 * q;
        const uint2 v = src[j];
        dst[j] = make_uint4(e4m3_lo_to_f16x2(v.x), e4m3_lo_to_f16x2(v.y), e4m3_hi_to_f16x2(v.x), e4m3_hi_to_f16x2(v.y));
    }
}

// the chunk barrier of the split kernel's MLP (warps 0..3): not .aligned, since warps with rows to compute and idle
// warps (ENC5_SPLIT_SKIP_DEAD) reach it from different code (an .aligned barrier requires the same instruction)
#if ENC5_SPLIT_SKIP_DEAD
__device__ __forceinline__ void bar_ring() { asm volatile("barrier.sync 1, 128;" ::: "memory"); }
#else
__device__ __forceinline__ void bar_ring() { asm volatile("bar.sync 1, 128;" ::: "memory"); }  // one code path
#endif
// E61's barrier of the pair of P61 warps (2 rank, 2 rank + 1), not .aligned for the same reason
#if ENC5_SPLIT_SKIP_DEAD
__device__ __forceinline__ void bar_p61() { asm volatile("barrier.sync 2, 64;" ::: "memory"); }
#else
__device__ __forceinline__ void bar_p61() { asm volatile("bar.sync 2, 64;" ::: "memory"); }
#endif

// The MLP's weight-ring work of an idle warp (ENC5_SPLIT_SKIP_DEAD): the same cp.async groups and chunk barriers in
// the same order as the MLP loop of the warps with rows to compute, which has these steps written out (see there).
// Before the loop: chunks 0, 1 (F16B: and 2) and the bias table landed; F16B unpacks its pieces of chunks 0..2 into
// f16 stages 0..2 (r16: the f16 ring over sm.wo).
__device__ __forceinline__ void split_ring_start(uint4* r16, const uint2* ring, int tid) {
    cp_async_wait<2>();  // chunks 0, 1 (F16B: and 2) and the bias table landed (this thread's part)
    bar_ring();
#if ENC5_SPLIT_F16B
#pragma unroll
    for (int c = 0; c < 3; ++c) split_unpack_stage(r16 + 640 * c, ring + SPLIT_STAGE * c, tid);
    bar_ring();
#else
    (void)r16, (void)ring, (void)tid;
#endif
}

// iteration i of the MLP loop, before the slot wait: wait for the chunk the iteration reads, the chunk barrier (every
// warp finished the stage being refilled), the next copies
__device__ __forceinline__ void split_ring_step(uint4* r16, uint2* ring, const uint8_t* W, int i, int tid, int rank) {
#if ENC5_SPLIT_F16B
    // e4m3 stage (i + 5) % 6 last held chunk i - 1, which this thread unpacked in iteration i - 4; f16 stage
    // (i + 3) % 4 last held chunk i - 1 (fc1 read in iteration i - 3, fc2 in i - 1: before this barrier)
    cp_async_wait<1>();  // chunk i + 3 landed (the newest group, chunk i + 4, may still fly)
    bar_ring();           // and chunk i + 2's f16 pieces (unpacked in iteration i - 1) are visible
    split_ring_fill(ring + SPLIT_STAGE * ((i + 5) % SPLIT_RING), W, min(i + 5, 19), tid, rank, i + 5 < 20);
    cp_async_commit();
    // (clamped copies of chunk 19 on the last three iterations land in f16 stages nobody reads again)
    split_unpack_stage(r16 + 640 * ((i + 3) & 3), ring + SPLIT_STAGE * (min(i + 3, 19) % SPLIT_RING), tid);
#else
    (void)r16;
    // stage (i + 4) % 6 last held chunk i - 2, finished by every warp before this barrier
    cp_async_wait<1>();  // chunk i + 2 landed (the newest group, chunk i + 3, may still fly)
    bar_ring();
    split_ring_fill(ring + SPLIT_STAGE * ((i + 4) % SPLIT_RING), W, min(i + 4, 19), tid, rank, i + 4 < 20);
    cp_async_commit();  // possibly empty: one group per iteration keeps the count uniform
#endif
}

// iteration p of the ENC5_SPLIT_PAIRS loop (chunks c0 = 2p, c0 + 1), before the slot waits
__device__ __forceinline__ void split_ring_pair_step(uint2* ring, const uint8_t* W, int c0, int tid, int rank) {
    cp_async_wait<0>();  // chunks c0 + 2, c0 + 3 (the newest group) landed
    bar_ring();
    split_ring_fill(ring + SPLIT_STAGE * ((c0 + 4) % SPLIT_RING), W, min(c0 + 4, 19), tid, rank, c0 + 4 < 20);
    split_ring_fill(ring + SPLIT_STAGE * ((c0 + 5) % SPLIT_RING), W, min(c0 + 5, 19), tid, rank, c0 + 5 < 20);
    cp_async_commit();  // possibly empty: one group per iteration
}

// split_fc1 on an f16 stage (ENC5_SPLIT_F16B): A = E20's e4m3 words, unpacked per k-step (loop-invariant: hoisted)
__device__ __forceinline__ void split_fc1_f16(uint32_t (&hid)[2][2], const uint32_t (&an)[5][4], const uint4* stage,
                                              int lane, const uint32_t (&bias)[2]) {
    hid[0][0] = hid[0][1] = bias[0];
    hid[1][0] = hid[1][1] = bias[1];
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        uint32_t af[2][4];
        unpack_a(af, an[ks][0], an[ks][1], an[ks][2], an[ks][3]);
        const uint4 b0 = stage[32 * ks + lane], b1 = stage[32 * (5 + ks) + lane];
        mma_hopper_f16ab(hid[0][0], hid[0][1], af, b0, hid[0][0], hid[0][1]);
        mma_hopper_f16ab(hid[1][0], hid[1][1], af, b1, hid[1][0], hid[1][1]);
    }
}

// the clamped cubic activation (as mlp_activation) on the CTA's two hidden tiles -> its two fc2 A words
__device__ __forceinline__ uint2 split_activation(uint32_t (&hid)[2][2]) {
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            hid[n][r] = mlp_gate(hid[n][r]);
        }
    return make_uint2(q4(hid[0][0], hid[1][0]), q4(hid[0][1], hid[1][1]));
}

// P13's residual: this CTA's input word (16 rank + 4 t) of every plane for the lane's two query tokens (tx, ty[r]),
// 0 outside the frame; in_frame[r] also guards E60's arena stores
__device__ __forceinline__ void split_load_resid(uint32_t (&resid)[2][5], bool (&in_frame)[2],
                                                 const uint8_t* __restrict__ in, size_t plane, int ex, int ey, int tx,
                                                 const int (&ty)[2], int t, int rank) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        in_frame[r] = tx >= 0 && tx < ex && ty[r] >= 0 && ty[r] < ey;
        const uint8_t* rec = in + 32 * ((size_t)ty[r] * ex + tx) + 4 * t + 16 * rank;
#pragma unroll
        for (int p = 0; p < 5; ++p) resid[r][p] = in_frame[r] ? ldg4(rec + p * plane) : 0u;
    }
}

#ifndef ENC5_SPLIT_ORDER_SWAPS
#define ENC5_SPLIT_ORDER_SWAPS (ENC5_SPLIT_OCC3 ? 4 : 0)  // dispatch-order swaps read from prm.order (0: none)
#endif
// P11 / E11 / P12 / E12 of the warp's head (as enc5_body) for the 4 query m-tiles; its O fragments into this CTA's
// and the partner's sm.o (o_lane = &sm.o[4 h * 32 + lane]). ALL: every m-tile is live, no per-m-tile branch (ptxas
// overlaps consecutive m-tiles); else a dead m-tile (bit clear in `live`) skips its work and sends zeros.
template <bool ALL>
__device__ __forceinline__ void split_attention(uint4 (&sb)[6], uint32_t (&resid)[2][5], bool (&in_frame)[2],
                                                const uint32_t (&q8)[6][4], const uint32_t (&vb)[3][4][2],
                                                const uint8_t* sbias, uint4* o_lane, int peer, uint32_t bar_o_peer,
                                                uint32_t live, const uint8_t* __restrict__ in, size_t plane, int ex,
                                                int ey, int tx, const int (&ty)[2], int t, int rank) {
    (void)sb, (void)resid, (void)in_frame, (void)sbias, (void)live, (void)in, (void)plane, (void)ex, (void)ey;
    (void)tx, (void)ty, (void)t, (void)rank;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
        // this m-tile's score bias (loaded one m-tile ahead; m-tile 0's before E10), the next one's now
        uint32_t s[12][2];
#pragma unroll
        for (int jp = 0; jp < 6; ++jp) {
#if ENC5_SPLIT_SB_AHEAD
            const uint4 c = sb[jp];
#else
            const uint4 c = ldg16(sbias + 512 * (4 * jp + mi));
#endif
            s[2 * jp][0] = c.x; s[2 * jp][1] = c.y; s[2 * jp + 1][0] = c.z; s[2 * jp + 1][1] = c.w;
        }
#if ENC5_SPLIT_SB_AHEAD
        if (mi < 3) {
#pragma unroll
            for (int jp = 0; jp < 6; ++jp) sb[jp] = ldg16(sbias + 512 * (4 * jp + mi + 1));
        }
#endif
#if ENC5_SPLIT_LATE_RESID
        if (mi == 3) split_load_resid(resid, in_frame, in, plane, ex, ey, tx, ty, t, rank);
#endif
        uint4 ov = make_uint4(0u, 0u, 0u, 0u);  // a dead m-tile's O: zeros, sent all the same (the byte count)
        if (ALL || ((live >> mi) & 1u)) {
            p11_scores<ENC5_HOPPER>(s, q8, mi);
            e11_softmax(s);
            uint32_t o[4][2];
            p12_pv<ENC5_HOPPER>(o, s, vb);
            ov = make_uint4(q4(o[0][0], o[2][0]), q4(o[0][1], o[2][1]), q4(o[1][0], o[3][0]), q4(o[1][1], o[3][1]));
        }
        uint4* dst = o_lane + mi * 32;
        *dst = ov;
        st_async16(map_peer(smem_addr(dst), peer), ov, bar_o_peer);
    }
}

// The window a cluster runs. Clusters are dispatched in launch order (x fastest), breadth-first over the SMs, so the
// last ones to start share SMs with the first; prm.order swaps ranges of that order so that windows with idle warps
// (ENC5_SPLIT_SKIP_DEAD) land on the SMs that hold the most CTAs (tcforge.layers.enc5.gpu.schedule computes them).
// Any swaps give the same bits: only where a window runs changes.
__device__ __forceinline__ int split_window(int cx, int cy, int nwx, const Enc5Params& prm) {
    const int c = cx + nwx * cy;
#pragma unroll
    for (int k = 0; k < ENC5_SPLIT_ORDER_SWAPS; ++k) {
        const int a = prm.order[k][0], b = prm.order[k][1], n = prm.order[k][2];
        if (c >= a && c < a + n) return b + (c - a);
        if (c >= b && c < b + n) return a + (c - b);
    }
    return c;
}

// The token origin (x0, y0) of the CTA's window (with dispatch-order swaps: of the window split_window assigns).
__device__ __forceinline__ int2 split_origin(const Enc5Params& prm) {
#if ENC5_SPLIT_ORDER_SWAPS
    const int nwx = (int)gridDim.x >> 1;
    const int w = split_window((int)blockIdx.x >> 1, (int)blockIdx.y, nwx, prm);
    return make_int2(8 * (w % nwx) - (int)prm.ox, 8 * (w / nwx) - (int)prm.oy);
#else
    return make_int2(8 * ((int)blockIdx.x >> 1) - (int)prm.ox, 8 * (int)blockIdx.y - (int)prm.oy);  // launch order
#endif
}

template <bool TIMING>
__device__ __forceinline__ void enc5_split_body(const Enc5Params& prm) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    SplitSmem& sm = *reinterpret_cast<SplitSmem*>(smem_raw);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.z;  // 0..3
    const int g = lane >> 2, t = lane & 3;
    const int rank = (int)cluster_ctarank(), peer = rank ^ 1;
    const int ex = (int)prm.ex, ey = (int)prm.ey;
    const size_t frame = blockIdx.z;
    const size_t plane = (size_t)32 * ex * ey;
    const uint8_t* __restrict__ in = prm.input + frame * 5 * plane;
    uint8_t* __restrict__ arena = prm.arena + frame * 5 * plane;
    const uint16_t* __restrict__ tex = prm.texture + frame * (size_t)4 * ex * ey;
    uint16_t* __restrict__ surf = prm.surface + frame * (size_t)4 * ex * ey;
    const uint8_t* __restrict__ W = prm.weights;
    unsigned long long* stamps = nullptr;
    if constexpr (TIMING) {
        const int nwx = (int)gridDim.x >> 1;
        const int window = split_window((int)blockIdx.x >> 1, (int)blockIdx.y, nwx, prm);
        stamps = reinterpret_cast<unsigned long long*>(prm.debug) +
                 (((size_t)frame * nwx * gridDim.y + window) * 8 + 4 * rank + warp) * 16;
        if (lane == 0) stamps[15] = (blockIdx.x >> 1) + nwx * blockIdx.y;  // the cluster's place in launch order
    }
    STAMP(0);
    // the window's token origin after the prologue: from shared memory when the order is permuted (held in registers
    // across the kernel it spilled the 3-CTA build), else in registers (the split build's code as before)
#if ENC5_SPLIT_ORDER_SWAPS
    auto window_origin = [&]() { return sm.org; };
#else
    const int x0 = 8 * ((int)blockIdx.x >> 1) - (int)prm.ox;
    const int y0 = 8 * (int)blockIdx.y - (int)prm.oy;
    auto window_origin = [&]() { return make_int2(x0, y0); };
#endif
    const int tid = lane + 32 * warp;
    const uint32_t bars = smem_addr(&sm.bar[0]);  // barrier k at bars + 8 k (the same offset in the partner)
    const uint32_t bars_peer = map_peer(bars, peer);
    if (tid == 96) {  // warp 3 (no prologue rows): warps 0..2 start their loads meanwhile
        if (ENC5_SPLIT_ORDER_SWAPS) sm.org = split_origin(prm);  // read after the prologue's __syncthreads
#pragma unroll
        for (int i = 0; i < SPLIT_BARS; ++i) mbar_init(bars + 8 * i, 1);
        // arm every phase known now: hq slots 0..3 (chunks 0..3), the one-shot hand-offs with their byte counts
#pragma unroll
        for (int i = 0; i < SPLIT_SLOTS * 4; ++i) mbar_expect(bars + 8 * i, 8 * 32);
        mbar_expect(bars + 8 * BAR_STAGED, 3 * 10 * 512);  // the partner's 3 staged m-tiles
        mbar_expect(bars + 8 * BAR_O, 4 * 4 * 512);        // the partner's 4 heads' O
#pragma unroll
        for (int w = 0; w < 4; ++w) mbar_expect(bars + 8 * (BAR_D20 + w), 5 * 512);  // warp w's D20 half
        mbar_expect(bars + 8 * (BAR_Y8 + 2 * rank), 5 * 256);       // E60 rows for the P61 warps 2r, 2r + 1
        mbar_expect(bars + 8 * (BAR_Y8 + 2 * rank + 1), 5 * 256);
        mbar_expect(bars + 8 * BAR_CONST, CONST_BYTES);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_arrive();  // (the only cluster barrier) both CTAs' barriers are initialised before any DSMEM store

    // ---- prologue: CTA r stages m-tiles 3r..3r+2 (warps 0..2) into both CTAs
    uint4 staged[10];
    const int mi_p = 3 * rank + warp;
    if (warp < 3) {
        uint32_t st[2][10];
        const int2 org = ENC5_SPLIT_ORDER_SWAPS ? split_origin(prm) : window_origin();
        stage_mtile_rows(st, in, plane, W, ex, ey, org.x, org.y, mi_p, g, t);
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            uint32_t af[2][4];
            unpack_a(af, st[0][p], st[1][p], st[0][5 + p], st[1][5 + p]);
            staged[2 * p] = make_uint4(af[0][0], af[0][1], af[0][2], af[0][3]);
            staged[2 * p + 1] = make_uint4(af[1][0], af[1][1], af[1][2], af[1][3]);
        }
    }
    cluster_wait();
    if (warp < 3) {
#pragma unroll
        for (int k = 0; k < 10; ++k) {
            uint4* dst = &sm.a[(10 * mi_p + k) * 32 + lane];
            *dst = staged[k];
            st_async16(map_peer(smem_addr(dst), peer), staged[k], bars_peer + 8 * BAR_STAGED);
        }
    }
    STAMP(1);
    __syncthreads();                       // this CTA's 3 m-tiles
    mbar_wait(bars + 8 * BAR_STAGED, 0);   // the partner's 3
    STAMP(2);
    if (tid == 96) {
        // what phases 13-61 read from the weight image, by the TMA engine while P1-P10 computes (at kernel start
        // the copies of all CTAs crowd the prologue's loads): Wo of the 8 heads (5120 contiguous bytes each),
        // proj_bias / mlp_gain / out_bias rows, P61's head bias and weights
        const uint32_t cb = bars + 8 * BAR_CONST;
#if !ENC5_SPLIT_OCC3
#pragma unroll
        for (int j = 0; j < 8; ++j) bulk_g2s(&sm.wo[320 * j], W + OFF_WO + HEAD_SLOT * j, 5120, cb);
#endif
        bulk_g2s(&sm.cst[0], W + OFF_PROJ_BIAS, 320, cb);
        bulk_g2s(&sm.cst[80], W + OFF_MLP_GAIN, 320, cb);
        bulk_g2s(&sm.cst[160], W + OFF_OUT_BIAS, 320, cb);
        bulk_g2s(&sm.cst[240], W + OFF_HEAD_BIAS, 32, cb);
        bulk_g2s(&sm.headw[0], W + OFF_HEAD, 2560, cb);
    }

    // ---- P1-P10: head h = 4 rank + warp
    const int h = 4 * rank + warp;
    uint32_t q[6][4][2], v[6][4][2];
    project_qv<ENC5_HOPPER, true>(q, v, sm.a, W, h, lane);
    STAMP(3);
    // P13's residual words (global loads issued here, a phase before use): query rows 16z..16z+15 of warp z; the
    // CTA's n8-tiles n = 2m + rank: n-tile 4p + q holds (lo w0, lo w1, hi w0, hi w1)[q], so q = rank, rank + 2 are
    // word w_rank
    const int z = warp;
    const int2 org = window_origin();
    const int tx = org.x + g;
    const int ty[2] = {org.y + 2 * z, org.y + 2 * z + 1};
    bool in_frame[2];
    uint32_t resid[2][5];
#if !ENC5_SPLIT_LATE_RESID
    split_load_resid(resid, in_frame, in, plane, ex, ey, tx, ty, t, rank);
#endif
    const uint8_t* sbias = W + HEAD_SLOT * h + OFF_SBIAS + 16 * lane;
    uint4 sb[6];
#if ENC5_SPLIT_SB_AHEAD
#pragma unroll
    for (int jp = 0; jp < 6; ++jp) sb[jp] = ldg16(sbias + 512 * (4 * jp));
#endif
    // ---- E10, E11 (V^T), P11 / E11 / P12 / E12 per query m-tile: as enc5_body
    uint32_t q8[6][4], vb[3][4][2];
    requant_qv(q8, vb, q, v);
#if ENC5_SPLIT_SKIP_DEAD
    if (ENC5_SPLIT_ATTN_SKIP && live_mtiles(window_origin().y, ey) != 0xFu) {  // a window with dead m-tiles
        split_attention<false>(sb, resid, in_frame, q8, vb, sbias, &sm.o[4 * h * 32 + lane], peer,
                               bars_peer + 8 * BAR_O, live_mtiles(window_origin().y, ey), in, plane, ex, ey, tx, ty, t,
                               rank);
    } else
#endif
    {
        split_attention<true>(sb, resid, in_frame, q8, vb, sbias, &sm.o[4 * h * 32 + lane], peer,
                              bars_peer + 8 * BAR_O, 0xFu, in, plane, ex, ey, tx, ty, t, rank);
    }
    STAMP(4);
    // P13's C part 1: the dequantised residual (raw words loaded before P11)
    uint32_t acc[10][2];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            acc[2 * p][r] = e4m3x2_to_f16x2(lo16(resid[r][p]));
            acc[2 * p + 1][r] = e4m3x2_to_f16x2(hi16(resid[r][p]));
        }
    __syncthreads();                  // this CTA's heads' O; every warp is past P1-P10 (sm.a is dead)
    mbar_wait(bars + 8 * BAR_O, 0);   // the partner's heads' O
    mbar_wait(bars + 8 * BAR_CONST, 0);  // the bulk copies (long done)
    uint2* ring = reinterpret_cast<uint2*>(sm.a);
#if ENC5_SPLIT_F16B
    static_assert(!ENC5_SPLIT_OCC3 && !ENC5_SPLIT_PAIRS && !ENC5_SPLIT_FC1_F16A, "F16B: the plain split MLP loop");
    // f16 stage c % 4 (chunk c's 20 tiles, fc1's 10 then fc2's 10) over sm.wo, written once every warp is past
    // P13-P20 (after the MLP's first chunk barrier)
    uint4* r16 = sm.wo;
#else
    uint4* r16 = nullptr;
#endif
    if (tid < 80) cp_async16(&sm.b1s[4 * tid], W + chunk_base(tid >> 2) + 5120 + 16 * (tid & 3));  // in group 0
#pragma unroll
    for (int c = 0; c < (ENC5_SPLIT_F16B ? 5 : 4); ++c) {  // F16B: one chunk further ahead (it is unpacked early)
        split_ring_fill(ring + SPLIT_STAGE * c, W, c, tid, rank);
        cp_async_commit();
    }
    STAMP(5);
#if ENC5_SPLIT_SKIP_DEAD
    // A warp whose 16 query rows lie outside the frame has nothing left to compute (every later stage is per row,
    // every store of its rows guarded): it only does its share of the MLP's weight ring (same groups, same chunk
    // barriers) and, as a P61 warp, meets its sibling at the E61 barrier (the partner's warp z, idle too, neither
    // sends nor awaits anything: the D20, chunk and E60 barriers of the pair stay unused)
    const uint32_t live = live_mtiles(window_origin().y, ey);
    if (!((live >> z) & 1u)) {
        split_ring_start(r16, ring, tid);
#if ENC5_SPLIT_PAIRS
#pragma unroll 1
        for (int p = 0; p < 10; ++p) split_ring_pair_step(ring, W, 2 * p, tid, rank);
#else
#pragma unroll 1
        for (int i = 0; i < 20; ++i) split_ring_step(r16, ring, W, i, tid, rank);
#endif
        if ((z >> 1) == rank) {  // P61 warp: the sibling's rows may be live
            bar_p61();
            if (z == 2 * rank && ((live >> z) & 3u)) {
                const int2 o = window_origin();
                enc5_e61(sm.d61, 32 * rank + lane, o.x, o.y, ex, ey, tex, surf);
            }
        }
        STAMP(11);
        return;
    }
#endif

    // ---- P13-P20 on the CTA's n8-tiles (C part 2: + proj_bias)
#pragma unroll
    for (int m = 0; m < 10; ++m) {
        const uint32_t b = sm.cst[4 * (2 * m + rank) + t];
        acc[m][0] = hadd2(b, acc[m][0]);
        acc[m][1] = hadd2(b, acc[m][1]);
    }
#if ENC5_SPLIT_OCC3
    // two heads' Wo halves in flight through registers
    uint2 wob[10], wo1[10];
#pragma unroll
    for (int m = 0; m < 10; ++m) {
        wob[m] = ldg8(W + OFF_WO + 16 * lane + 512 * m + 8 * rank);
        wo1[m] = ldg8(W + OFF_WO + HEAD_SLOT + 16 * lane + 512 * m + 8 * rank);
    }
ENC5_UNROLL(ENC5_SPLIT_J_UNROLL)
    for (int j = 0; j < 8; ++j) {
        const uint4 a = sm.o[(4 * j + z) * 32 + lane];
        uint2 b[10];
#pragma unroll
        for (int m = 0; m < 10; ++m) {
            b[m] = wob[m];
            wob[m] = wo1[m];
        }
        const int jn = j < 6 ? j + 2 : 7;
#pragma unroll
        for (int m = 0; m < 10; ++m) wo1[m] = ldg8(W + OFF_WO + HEAD_SLOT * jn + 16 * lane + 512 * m + 8 * rank);
#pragma unroll
        for (int m = 0; m < 10; ++m)
            mma_hopper(acc[m][0], acc[m][1], a.x, a.y, a.z, a.w, b[m].x, b[m].y, acc[m][0], acc[m][1]);
    }
#else
ENC5_UNROLL(ENC5_SPLIT_J_UNROLL)
    for (int j = 0; j < 8; ++j) {
        const uint4 a = sm.o[(4 * j + z) * 32 + lane];
        const uint2* wj = reinterpret_cast<const uint2*>(sm.wo + 320 * j + lane) + rank;  // the CTA's half
#pragma unroll
        for (int m = 0; m < 10; ++m) {
            const uint2 b = wj[2 * 32 * m];
            mma_hopper(acc[m][0], acc[m][1], a.x, a.y, a.z, a.w, b.x, b.y, acc[m][0], acc[m][1]);
        }
    }
#endif
    STAMP(6);
    // ---- E20: the warp pair swaps its D20 halves (into the partner's x); both normalise the full rows
    {
        uint4* xs = &sm.x[(5 * z) * 32 + lane];
#pragma unroll
        for (int k = 0; k < 5; ++k)
            st_async16(map_peer(smem_addr(xs + 32 * k), peer),
                       make_uint4(acc[2 * k][0], acc[2 * k][1], acc[2 * k + 1][0], acc[2 * k + 1][1]),
                       bars_peer + 8 * (BAR_D20 + z));
    }
    mbar_wait(bars + 8 * (BAR_D20 + z), 0);
    uint32_t an[5][4];
    {
        uint32_t nrm[2][20];
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            // n-tile 4k + q: q even from CTA 0, odd from CTA 1 (local tile 2k + (q >> 1)); selects, not indexing
            const uint4 pv = sm.x[(5 * z + k) * 32 + lane];
            const bool r0 = rank == 0;
            nrm[0][4 * k + 0] = r0 ? acc[2 * k][0] : pv.x;
            nrm[1][4 * k + 0] = r0 ? acc[2 * k][1] : pv.y;
            nrm[0][4 * k + 1] = r0 ? pv.x : acc[2 * k][0];
            nrm[1][4 * k + 1] = r0 ? pv.y : acc[2 * k][1];
            nrm[0][4 * k + 2] = r0 ? acc[2 * k + 1][0] : pv.z;
            nrm[1][4 * k + 2] = r0 ? acc[2 * k + 1][1] : pv.w;
            nrm[0][4 * k + 3] = r0 ? pv.z : acc[2 * k + 1][0];
            nrm[1][4 * k + 3] = r0 ? pv.w : acc[2 * k + 1][1];
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) rms_norm_row_smem(nrm[r], sm.cst + 80 + t);
#pragma unroll
        for (int s = 0; s < 5; ++s) {
            an[s][0] = q4(nrm[0][4 * s], nrm[0][4 * s + 2]);
            an[s][1] = q4(nrm[1][4 * s], nrm[1][4 * s + 2]);
            an[s][2] = q4(nrm[0][4 * s + 1], nrm[0][4 * s + 3]);
            an[s][3] = q4(nrm[1][4 * s + 1], nrm[1][4 * s + 3]);
        }
    }
#if ENC5_SPLIT_FC1_F16A
    uint32_t anf[5][2][4];
#pragma unroll
    for (int s = 0; s < 5; ++s) unpack_a(anf[s], an[s][0], an[s][1], an[s][2], an[s][3]);
#else
    const uint32_t (&anf)[5][4] = an;
#endif
    // E21: P22's C = out_bias + D20 (the CTA's tiles)
#pragma unroll
    for (int m = 0; m < 10; ++m) {
        const uint32_t b = sm.cst[160 + 4 * (2 * m + rank) + t];
        acc[m][0] = hadd2(b, acc[m][0]);
        acc[m][1] = hadd2(b, acc[m][1]);
    }
    STAMP(7);

    // ---- P21-P60. Iteration i: fc2_i (A: this CTA's words of chunk i from two iterations ago + the partner's,
    // slot i % 4), then fc1 of chunk i + 2 -> activation -> its words to the partner. One basic block per
    // iteration after the slot wait (predicated stores, no branches), so ptxas interleaves fc2 and fc1.
    const uint32_t hq_local = smem_addr(&sm.hq[32 * z + lane]);  // slot s: + 1024 s
    const uint32_t hq_peer = map_peer(hq_local, peer);
    const uint32_t bar_hq = bars + 8 * z, bar_hq_peer = bars_peer + 8 * z;  // slot s: + 32 s
    uint2 own[2];  // this CTA's fc2 A words of chunks i and i + 1 (registers rotate: no indexed arrays)
    uint32_t hid[2][2];
    // (the ring steps of this loop stay written out here, a second copy of split_ring_*: as calls of those functions
    // the same operations got a different ptxas schedule, 0.2-0.3 us slower per 720p frame in the split build; with
    // the stages and chunks computed here and passed in, the split build was byte-identical but the 3-CTA build
    // 40.03 instead of 39.41 us at 4K in the same process)
    cp_async_wait<2>();  // chunks 0, 1 (F16B: and 2) and the bias table landed (this thread's part)
    bar_ring();
#if ENC5_SPLIT_F16B
#pragma unroll
    for (int c = 0; c < 3; ++c) split_unpack_stage(r16 + 640 * c, ring + SPLIT_STAGE * c, tid);
    bar_ring();
#endif
    const uint32_t* b1 = sm.b1s + 4 * rank + t;  // chunk c: b1[16 c] (n-tile rank), b1[16 c + 8] (rank + 2)
    uint32_t bias1[2] = {b1[0], b1[8]};
#pragma unroll
    for (int c = 0; c < 2; ++c) {
#if ENC5_SPLIT_F16B
        split_fc1_f16(hid, an, r16 + 640 * c, lane, bias1);
#else
        split_fc1(hid, anf, ring + SPLIT_STAGE * c, lane, bias1);
#endif
        own[c] = split_activation(hid);
        st_async8(hq_peer + 1024 * c, own[c].x, own[c].y, bar_hq_peer + 32 * c);
        bias1[0] = b1[16 * (c + 1)];
        bias1[1] = b1[16 * (c + 1) + 8];
    }
#if ENC5_SPLIT_PAIRS
    // Chunks in pairs: iteration p runs fc2 of chunks 2p, 2p + 1 and fc1 of chunks 2p + 2, 2p + 3 in one basic block
    // after one barrier and the two slot waits (half the fence points of the chunk loop, twice the independent mma
    // between them). Ring: chunk c in stage c % 6; chunks 2p + 4, 2p + 5 load during iteration p into the stages of
    // chunks 2p - 2, 2p - 1 (finished in iteration p - 1); slots: at most 4 chunks unread at once (as above).
#pragma unroll 1
    for (int p = 0; p < 10; ++p) {
        const int c0 = 2 * p;
        cp_async_wait<0>();  // chunks c0 + 2, c0 + 3 (the newest group) landed
        bar_ring();
        split_ring_fill(ring + SPLIT_STAGE * ((c0 + 4) % SPLIT_RING), W, min(c0 + 4, 19), tid, rank, c0 + 4 < 20);
        split_ring_fill(ring + SPLIT_STAGE * ((c0 + 5) % SPLIT_RING), W, min(c0 + 5, 19), tid, rank, c0 + 5 < 20);
        cp_async_commit();  // possibly empty: one group per iteration
        const int s0 = c0 & (SPLIT_SLOTS - 1), s1 = (c0 + 1) & (SPLIT_SLOTS - 1);
        mbar_wait(bar_hq + 32 * s0, (c0 >> 2) & 1);
        mbar_wait(bar_hq + 32 * s1, ((c0 + 1) >> 2) & 1);
        const uint2 pw0 = sm.hq[(s0 * 4 + z) * 32 + lane], pw1 = sm.hq[(s1 * 4 + z) * 32 + lane];
        mbar_expect(bar_hq + 32 * s0, 8 * 32, lane == 0 && c0 + 4 < 20);
        mbar_expect(bar_hq + 32 * s1, 8 * 32, lane == 0 && c0 + 5 < 20);
        const bool r0 = rank == 0;
        const uint2 m0 = own[0], m1 = own[1];
        const uint32_t hq0[4] = {r0 ? m0.x : pw0.x, r0 ? m0.y : pw0.y, r0 ? pw0.x : m0.x, r0 ? pw0.y : m0.y};
        const uint32_t hq1[4] = {r0 ? m1.x : pw1.x, r0 ? m1.y : pw1.y, r0 ? pw1.x : m1.x, r0 ? pw1.y : m1.y};
        const uint2* s2a = ring + SPLIT_STAGE * (c0 % SPLIT_RING) + 320;
        const uint2* s2b = ring + SPLIT_STAGE * ((c0 + 1) % SPLIT_RING) + 320;
#pragma unroll
        for (int m = 0; m < 10; ++m) {
            const uint2 b = s2a[32 * m + lane];
            mma_hopper(acc[m][0], acc[m][1], hq0[0], hq0[1], hq0[2], hq0[3], b.x, b.y, acc[m][0], acc[m][1]);
        }
#pragma unroll
        for (int m = 0; m < 10; ++m) {
            const uint2 b = s2b[32 * m + lane];
            mma_hopper(acc[m][0], acc[m][1], hq1[0], hq1[1], hq1[2], hq1[3], b.x, b.y, acc[m][0], acc[m][1]);
        }
        // fc1 of chunks c0 + 2, c0 + 3 (clamped to 19 on the last iteration: recomputed, unsent)
        const int ca = min(c0 + 2, 19), cb = min(c0 + 3, 19);
        uint32_t hid2[2][2];
        const uint32_t ba[2] = {b1[16 * ca], b1[16 * ca + 8]}, bb[2] = {b1[16 * cb], b1[16 * cb + 8]};
        split_fc1(hid, anf, ring + SPLIT_STAGE * (ca % SPLIT_RING), lane, ba);
        split_fc1(hid2, anf, ring + SPLIT_STAGE * (cb % SPLIT_RING), lane, bb);
        own[0] = split_activation(hid);
        own[1] = split_activation(hid2);
        const int sa = (c0 + 2) & (SPLIT_SLOTS - 1), sb2 = (c0 + 3) & (SPLIT_SLOTS - 1);
        st_async8(hq_peer + 1024 * sa, own[0].x, own[0].y, bar_hq_peer + 32 * sa, c0 + 2 < 20);
        st_async8(hq_peer + 1024 * sb2, own[1].x, own[1].y, bar_hq_peer + 32 * sb2, c0 + 3 < 20);
    }
#else
ENC5_UNROLL(ENC5_SPLIT_MLP_UNROLL)
    for (int i = 0; i < 20; ++i) {
#if ENC5_SPLIT_F16B
        // e4m3 stage (i + 5) % 6 last held chunk i - 1, which this thread unpacked in iteration i - 4; f16 stage
        // (i + 3) % 4 last held chunk i - 1 (fc1 read in iteration i - 3, fc2 in i - 1: before this barrier)
        cp_async_wait<1>();  // chunk i + 3 landed (the newest group, chunk i + 4, may still fly)
        bar_ring();          // and chunk i + 2's f16 pieces (unpacked in iteration i - 1) are visible
        split_ring_fill(ring + SPLIT_STAGE * ((i + 5) % SPLIT_RING), W, min(i + 5, 19), tid, rank, i + 5 < 20);
        cp_async_commit();
        // (clamped copies of chunk 19 on the last three iterations land in f16 stages nobody reads again)
        split_unpack_stage(r16 + 640 * ((i + 3) & 3), ring + SPLIT_STAGE * (min(i + 3, 19) % SPLIT_RING), tid);
#else
        // stage (i + 4) % 6 last held chunk i - 2, finished by every warp before this barrier
        cp_async_wait<1>();  // chunk i + 2 landed (the newest group, chunk i + 3, may still fly)
        bar_ring();
        split_ring_fill(ring + SPLIT_STAGE * ((i + 4) % SPLIT_RING), W, min(i + 4, 19), tid, rank, i + 4 < 20);
        cp_async_commit();  // possibly empty: one group per iteration keeps the count uniform
#endif
        const int slot = i & (SPLIT_SLOTS - 1);
        mbar_wait(bar_hq + 32 * slot, (i >> 2) & 1);
        const uint2 pw = sm.hq[(slot * 4 + z) * 32 + lane];
        mbar_expect(bar_hq + 32 * slot, 8 * 32, lane == 0 && i + 4 < 20);  // the slot's next phase: chunk i + 4
        const uint2 mine = own[0];
        own[0] = own[1];
        const bool r0 = rank == 0;
        const uint32_t hq[4] = {r0 ? mine.x : pw.x, r0 ? mine.y : pw.y, r0 ? pw.x : mine.x, r0 ? pw.y : mine.y};
#if ENC5_SPLIT_F16B
        uint32_t hqf[2][4];
        unpack_a(hqf, hq[0], hq[1], hq[2], hq[3]);
        const uint4* s2 = r16 + 640 * (i & 3) + 320;
#pragma unroll
        for (int m = 0; m < 10; ++m) mma_hopper_f16ab(acc[m][0], acc[m][1], hqf, s2[32 * m + lane], acc[m][0], acc[m][1]);
#else
        const uint2* s2 = ring + SPLIT_STAGE * (i % SPLIT_RING) + 320;
#pragma unroll
        for (int m = 0; m < 10; ++m) {
            const uint2 b = s2[32 * m + lane];
            mma_hopper(acc[m][0], acc[m][1], hq[0], hq[1], hq[2], hq[3], b.x, b.y, acc[m][0], acc[m][1]);
        }
#endif
        // fc1 of chunk i + 2 (on the last two iterations chunk 19 again, unsent: keeps the block branch-free)
        const int c2 = min(i + 2, 19);
#if ENC5_SPLIT_F16B
        split_fc1_f16(hid, an, r16 + 640 * (c2 & 3), lane, bias1);
#else
        split_fc1(hid, anf, ring + SPLIT_STAGE * (c2 % SPLIT_RING), lane, bias1);
#endif
        const uint2 w2 = split_activation(hid);
        own[1] = w2;
        const int sl = (i + 2) & (SPLIT_SLOTS - 1);
        st_async8(hq_peer + 1024 * sl, w2.x, w2.y, bar_hq_peer + 32 * sl, i + 2 < 20);
        const int cn = min(i + 3, 19);
        bias1[0] = b1[16 * cn];
        bias1[1] = b1[16 * cn + 8];
    }
#endif
    STAMP(8);
    // ---- E60: the CTA's words of every plane (word t from CTA 0, t|4 from CTA 1); rows to the partner's P61 warps
    uint32_t yo[5][2];
#pragma unroll
    for (int s = 0; s < 5; ++s) {
        yo[s][0] = q4(acc[2 * s][0], acc[2 * s + 1][0]);
        yo[s][1] = q4(acc[2 * s][1], acc[2 * s + 1][1]);
    }
#if ENC5_SPLIT_ORDER_SWAPS
    {
        const int2 o = window_origin();  // (tx, ty and in_frame of the residual load, recomputed: fewer registers)
        const int x = o.x + g;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int y = o.y + 2 * z + r;
            if (x >= 0 && x < ex && y >= 0 && y < ey) {
                uint8_t* rec = arena + 32 * ((size_t)y * ex + x) + 4 * t + 16 * rank;
#pragma unroll
                for (int p = 0; p < 5; ++p) *reinterpret_cast<uint32_t*>(rec + p * plane) = yo[p][r];
            }
        }
    }
#else
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (in_frame[r]) {
            uint8_t* rec = arena + 32 * ((size_t)ty[r] * ex + tx) + 4 * t + 16 * rank;
#pragma unroll
            for (int p = 0; p < 5; ++p) *reinterpret_cast<uint32_t*>(rec + p * plane) = yo[p][r];
        }
    }
#endif
    // The rows land in the partner's x, over the D20 words its warp 0 (rank 0) or 1 (rank 1) read in E20: safe because
    // this point is after our whole MLP loop, which needed the partner's chunk words, which it sent only after its
    // MLP barriers, which every warp (D20 read done) had passed. Moving those barriers would make this a race.
    if ((z >> 1) == peer) {  // the partner's warp z runs P61 for these rows
        uint2* xs = reinterpret_cast<uint2*>(sm.x) + (5 * z) * 32 + lane;
#pragma unroll
        for (int s = 0; s < 5; ++s)
            st_async8(map_peer(smem_addr(xs + 32 * s), peer), yo[s][0], yo[s][1], bars_peer + 8 * (BAR_Y8 + z));
        STAMP(11);
        return;  // every store into this CTA's shared memory is awaited by a warp that is still running
    }
    STAMP(9);
    // ---- P61 (warps 2 rank, 2 rank + 1): head 16x16x160 on the full e4m3 rows, C = head bias
    uint32_t d61[2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n) d61[n][0] = d61[n][1] = sm.cst[240 + 4 * n + t];
    mbar_wait(bars + 8 * (BAR_Y8 + z), 0);
    uint32_t y8[5][4];
    {
        const uint2* xs = reinterpret_cast<const uint2*>(sm.x) + (5 * z) * 32 + lane;
#pragma unroll
        for (int s = 0; s < 5; ++s) {
            const uint2 pv = xs[32 * s];
            const bool r0 = rank == 0;
            y8[s][0] = r0 ? yo[s][0] : pv.x;
            y8[s][1] = r0 ? yo[s][1] : pv.y;
            y8[s][2] = r0 ? pv.x : yo[s][0];
            y8[s][3] = r0 ? pv.y : yo[s][1];
        }
    }
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint4 b = sm.headw[32 * ks + lane];
        mma_hopper(d61[0][0], d61[0][1], y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], b.x, b.y, d61[0][0], d61[0][1]);
        mma_hopper(d61[1][0], d61[1][1], y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], b.z, b.w, d61[1][0], d61[1][1]);
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
        sm.d61[(16 * z + g) * 8 + 4 * n + t] = d61[n][0];
        sm.d61[(16 * z + g + 8) * 8 + 4 * n + t] = d61[n][1];
    }
    STAMP(10);
    bar_p61();  // warps 2 rank, 2 rank + 1
    if (z != 2 * rank) {
        STAMP(11);
        return;
    }
    const int2 o = window_origin();
    enc5_e61(sm.d61, 32 * rank + lane, o.x, o.y, ex, ey, tex, surf);
    STAMP(11);
}

// ENC5_VARIANT selects the one kernel a compile emits (0: hopper, 1: hopper with the debug dump, 2: ada);
// undefined: all three.
#if !defined(ENC5_VARIANT) || ENC5_VARIANT == 0
extern "C" __global__ void __launch_bounds__(256, 1) enc5_hopper(const __grid_constant__ Enc5Params prm) {
    enc5_body<ENC5_HOPPER, false>(prm);
}
#endif
#if !defined(ENC5_VARIANT) || ENC5_VARIANT == 1
extern "C" __global__ void __launch_bounds__(256, 1) enc5_hopper_debug(const __grid_constant__ Enc5Params prm) {
    enc5_body<ENC5_HOPPER, true>(prm);
}
#endif
#if defined(ENC5_VARIANT) && ENC5_VARIANT == 3
extern "C" __global__ void __launch_bounds__(256, 1) enc5_hopper_timing(const __grid_constant__ Enc5Params prm) {
    enc5_body<ENC5_HOPPER, false, true>(prm);
}
#endif
#if defined(ENC5_VARIANT) && ENC5_VARIANT == 4
// Single-tile check of the hand-issued lowering: warp w computes tile w with the native m16n8k32 e4m3 mma and with
// unpack_a + mma_hopper_f16a. Operands in fragment order: per tile and lane A 4 words, B 2 words, C 2 words.
extern "C" __global__ void enc5_tile_check(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d_native,
                                           uint32_t* d_split, int tiles) {
    const int lane = threadIdx.x & 31;
    const int tile = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (tile >= tiles) return;
    const size_t i = (size_t)tile * 32 + lane;
    const uint32_t a0 = a[4 * i], a1 = a[4 * i + 1], a2 = a[4 * i + 2], a3 = a[4 * i + 3];
    const uint32_t b0 = b[2 * i], b1 = b[2 * i + 1], c0 = c[2 * i], c1 = c[2 * i + 1];
    uint32_t n0, n1, s0, s1, af[2][4];
    mma_hopper(n0, n1, a0, a1, a2, a3, b0, b1, c0, c1);
    unpack_a(af, a0, a1, a2, a3);
    mma_hopper_f16a(s0, s1, af, b0, b1, c0, c1);
    d_native[2 * i] = n0; d_native[2 * i + 1] = n1;
    d_split[2 * i] = s0; d_split[2 * i + 1] = s1;
}
#endif
#if defined(ENC5_VARIANT) && ENC5_VARIANT == 5
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    enc5_hopper_split(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<false>(prm);
}
#endif
#if defined(ENC5_VARIANT) && ENC5_VARIANT == 6
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    enc5_hopper_split_timing(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<true>(prm);
}
#endif
#if defined(ENC5_VARIANT) && ENC5_VARIANT == 7
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 3)
    enc5_hopper_split_occ3(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<false>(prm);
}
#endif
#if defined(ENC5_VARIANT) && ENC5_VARIANT == 8
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 3)
    enc5_hopper_split_occ3_timing(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<true>(prm);
}
#endif
#if !defined(ENC5_VARIANT) || ENC5_VARIANT == 2
extern "C" __global__ void __launch_bounds__(256, 1) enc5_ada(const __grid_constant__ Enc5Params prm) {
    enc5_body<ENC5_ADA, false>(prm);
}
#endif
