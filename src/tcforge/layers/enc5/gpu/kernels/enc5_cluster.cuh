// Cluster hand-offs of the 2-CTA-cluster forms beyond the shared library (tcforge/cluster.cuh, mbarrier.cuh, tma.cuh,
// smem.cuh): the expect-tx arrival predicated inside the asm, so the MLP loop body stays one basic block.
//
// The forms wait with tcf::mbarrier_wait_parity (default .acquire.cta): the waited-for bytes are in this CTA's own
// shared memory, written by the partner's st.async (whose complete_tx releases at cluster scope) — the pattern CUTLASS
// uses for TMA and DSMEM pipelines. The formally matching .acquire.cluster emits an L1 invalidate (CCTL.IVALL) per wait
// and cost ~0.7 us per frame in the MLP loop.
#pragma once
#include <cstdint>

#include "tcforge/cluster.cuh"
#include "tcforge/mbarrier.cuh"
#include "tcforge/smem.cuh"
#include "tcforge/tma.cuh"

__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes, bool on = true) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n"
                 " @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1; }"
                 ::"r"(bar), "r"(bytes), "r"((uint32_t)on) : "memory");
}
// the same shared-memory offset in the partner CTA (mapa)
__device__ __forceinline__ uint32_t map_peer(uint32_t addr, uint32_t rank) {
    return tcf::mapa_shared_cluster(addr, rank);
}
// 16 bytes into the partner's shared memory, completing as many bytes of its mbarrier's transaction count
__device__ __forceinline__ void st_async16(uint32_t addr, uint4 v, uint32_t bar) {
    tcf::st_async_v4_b32(addr, v.x, v.y, v.z, v.w, bar);
}
