// TMA (cp.async.bulk): tensor-map loads into shared memory (plain, multicast, CTA pair), stores back, bulk groups.
#pragma once
#include <stdint.h>

namespace tcf {

// a CUtensorMap as the kernel receives it (by value, __grid_constant__)
struct alignas(64) TmaDesc { uint64_t words[16]; };

__device__ __forceinline__ void prefetch_tensormap(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}
// box at {c0, c1} of `map` into this CTA's shared memory at `dst`, completing its bytes on mbarrier `bar`
__device__ __forceinline__ void cp_async_bulk_tensor_2d_g2s(uint32_t dst, const TmaDesc* map, int c0, int c1,
                                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// the same box into every CTA of `mask` (same offsets, each completing on its own barrier at `bar`'s offset)
__device__ __forceinline__ void cp_async_bulk_tensor_2d_g2s_multicast(uint32_t dst, const TmaDesc* map, int c0, int c1,
                                                                      uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
// sm_100: a CTA pair's load, whose completing mbarrier may be the peer CTA's (.cta_group::2)
__device__ __forceinline__ void cp_async_bulk_tensor_2d_g2s_cta_group_2(uint32_t dst, const TmaDesc* map, int c0,
                                                                        int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// shared memory at `src` to the box at {c0, c1} of `map`, in the current bulk group
__device__ __forceinline__ void cp_async_bulk_tensor_2d_s2g(const TmaDesc* map, int c0, int c1, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map), "r"(c0),
               "r"(c1), "r"(src) : "memory");
}
__device__ __forceinline__ void cp_async_bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// at most N bulk groups still reading their shared memory
template <int N> __device__ __forceinline__ void cp_async_bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// at most N bulk groups still pending (their global writes included)
template <int N> __device__ __forceinline__ void cp_async_bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// `bytes` contiguous bytes from global memory into this CTA's shared memory, completing on mbarrier `bar`
__device__ __forceinline__ void cp_async_bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar) : "memory");
}

}  // namespace tcf
