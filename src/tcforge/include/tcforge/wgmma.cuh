// Hopper warpgroup MMA: shared-memory matrix descriptors, fence / commit / wait, keeping accumulators in place.
// (The wgmma.mma_async instruction itself is generated per tile shape and type: tcforge.gemm.codegen.wgmma_wrapper.)
#pragma once
#include <stdint.h>

namespace tcf {

// wgmma shared-memory matrix descriptor: start address, leading / stride byte offsets (all >> 4), swizzle code
// (1: 128-byte, 2: 64-byte, 3: 32-byte)
__device__ __forceinline__ uint64_t make_smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t swz) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
         ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | ((uint64_t)swz << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// at most N committed wgmma groups of this warpgroup still running
template <int N> __device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// a compiler fence on accumulator registers: no read or write of them moves across it (around async wgmma)
template <int R> __device__ __forceinline__ void warpgroup_fence_operand(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// the same for packed f16x2 accumulators
template <int R> __device__ __forceinline__ void warpgroup_fence_operand(uint32_t (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}
// byte offset of `off` (row * 32 + k byte) in a K-major tile of 32-byte rows under the 32-byte swizzle (swizzle code
// 3; the tile 256-byte aligned): address bit 4 ^= bit 7
__device__ __forceinline__ uint32_t swizzle32(uint32_t off) { return off ^ (((off >> 7) & 1u) << 4); }

}  // namespace tcf
