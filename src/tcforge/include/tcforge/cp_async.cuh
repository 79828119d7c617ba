// cp.async (sm_80 copies through L1/L2 into shared memory, one thread's chunk at a time) and its groups.
#pragma once
#include <stdint.h>

namespace tcf {

// 16 bytes global -> shared, bypassing L1; `valid` false writes 16 zero bytes (source size 0)
__device__ __forceinline__ void cp_async_cg_16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
// 16 bytes global -> shared, bypassing L1 (the whole chunk always valid)
__device__ __forceinline__ void cp_async_cg_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
// 8 bytes global -> shared through L1, predicated inside the asm: a copy only where `on`
__device__ __forceinline__ void cp_async_ca_8(uint32_t dst, const void* src, bool on) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n @p cp.async.ca.shared.global [%0], [%1], 8; }" ::"r"(dst),
               "l"(src), "r"((uint32_t)on) : "memory");
}
__device__ __forceinline__ void cp_async_commit_group() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// an arrival on the mbarrier at `bar` once every cp.async this thread issued before has completed; .noinc: the
// barrier's expected count includes it (one per copying thread)
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
// wait until every cp.async this thread issued has completed
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
// at most N of this thread's cp.async groups still pending
template <int N> __device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace tcf
