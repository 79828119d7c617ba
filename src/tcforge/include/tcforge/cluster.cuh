// Thread-block clusters: CTA rank, cluster barrier, mapa and distributed-shared-memory stores.
#pragma once
#include <stdint.h>

namespace tcf {

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// the shared::cluster address of the same shared-memory offset in CTA `cta` of the cluster
__device__ __forceinline__ uint32_t mapa_shared_cluster(uint32_t addr, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}
// every thread of the cluster: arrive (release) and wait (acquire)
__device__ __forceinline__ void barrier_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void barrier_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void barrier_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// plain stores into a peer CTA's shared memory (a shared::cluster address)
__device__ __forceinline__ void st_shared_cluster_v4_u32(uint32_t addr, uint32_t a, uint32_t b, uint32_t c,
                                                         uint32_t d) {
  asm volatile("st.shared::cluster.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d)
               : "memory");
}
__device__ __forceinline__ void st_shared_cluster_v2_u32(uint32_t addr, uint32_t a, uint32_t b) {
  asm volatile("st.shared::cluster.v2.u32 [%0], {%1,%2};" ::"r"(addr), "r"(a), "r"(b) : "memory");
}
// asynchronous stores into a peer CTA's shared memory, completing their bytes on its mbarrier `bar` (shared::cluster)
__device__ __forceinline__ void st_async_v4_f32(uint32_t addr, float a, float b, float c, float d, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr),
               "f"(a), "f"(b), "f"(c), "f"(d), "r"(bar) : "memory");
}
__device__ __forceinline__ void st_async_v4_b32(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                                                uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1,%2,%3,%4}, [%5];" ::"r"(addr),
               "r"(a), "r"(b), "r"(c), "r"(d), "r"(bar) : "memory");
}
// `on` predicates the store inside the asm (no branch around it)
__device__ __forceinline__ void st_async_v2_b32(uint32_t addr, uint32_t a, uint32_t b, uint32_t bar, bool on = true) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
               " @p st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1,%2}, [%3]; }"
               ::"r"(addr), "r"(a), "r"(b), "r"(bar), "r"((uint32_t)on) : "memory");
}

}  // namespace tcf
