// PTX wrappers of the enc5 kernels: f16 arithmetic with explicit rounding (never contracted or reassociated by
// ptxas), non-coherent global loads; the e4m3 <-> f16 conversions and the cp.async copies and groups come from the
// shared library (tcforge/fp8.cuh, tcforge/cp_async.cuh).
#pragma once
#include <cstdint>

#include "tcforge/cp_async.cuh"
#include "tcforge/fp8.cuh"
#include "tcforge/smem.cuh"

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
// two f16x2 words -> one u32 of four e4m3: (lo word) | (hi word) << 16
__device__ __forceinline__ uint32_t q4(uint32_t lo, uint32_t hi) {
    return pack2(tcf::cvt_rn_satfinite_e4m3x2_f16x2(lo), tcf::cvt_rn_satfinite_e4m3x2_f16x2(hi));
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
// tcf::cp_async_cg_16 (16 bytes, L2 only) from a generic shared-memory pointer
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    tcf::cp_async_cg_16(tcf::smem_u32(smem), gmem);
}
__device__ __forceinline__ uint2 ldg8(const uint8_t* p) {
    uint2 v; asm("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p)); return v;
}
// tcf::cp_async_ca_8 (8 bytes through L1, only where `on`) from a generic shared-memory pointer
__device__ __forceinline__ void cp_async8(void* smem, const void* gmem, bool on = true) {
    tcf::cp_async_ca_8(tcf::smem_u32(smem), gmem, on);
}
