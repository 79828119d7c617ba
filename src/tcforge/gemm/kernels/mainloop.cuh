// The main loop's parts: the ring's slots and positions, the wgmma descriptors of a stage, one k-tile of wgmmas.
// (The loops that run them: producer.cuh, and the consumer branch of gemm_sm90.cu.)
// 128-byte (mask 0x70), 64-byte (0x30) or 32-byte (0x10) swizzle of a byte offset inside a tile of such rows
__device__ __forceinline__ uint32_t swz(uint32_t off, uint32_t mask) { return off ^ ((off >> 3) & mask); }


// ---------------------------------------------------------------- ring slots
// Consumers release a ring slot after wgmma.wait_group: the slot was only read through the async proxy, so the
// arrive needs no release fence (RELAXED drops the MEMBAR that the default .release puts before it).
__device__ __forceinline__ void arrive_cluster(uint32_t bar, uint32_t cta) {
  // arrive on the barrier at the same offset in CTA `cta` of this cluster (itself included)
  if constexpr (RELAXED) mbarrier_arrive_relaxed_cluster(bar, cta);
  else mbarrier_arrive_cluster(bar, cta);
}
__device__ __forceinline__ void arrive_local(uint32_t bar) {
  if constexpr (RELAXED) mbarrier_arrive_relaxed_cta(bar);
  else mbarrier_arrive(bar);
}
// a consumer warp frees a ring slot: one arrive on its empty barrier in every CTA of the cluster (their producers
// multicast into this CTA's slot too), and with LOCAL_EMPTY one on this CTA's local empty barrier
__device__ __forceinline__ void release_slot(uint32_t empty_bar) {
  if constexpr (CM > 1) {
#pragma unroll
    for (int c = 0; c < CM; ++c) arrive_cluster(empty_bar, c);
    if constexpr (LOCAL_EMPTY) arrive_local(empty_bar + LOCAL_OFF);
  } else {
    arrive_local(empty_bar);
  }
}
// a consumer waits for a stage to be full; with cp.async operands (CPA) it then fences the proxies: the copies wrote
// the stage through the generic proxy, the wgmmas read it through the async proxy
__device__ __forceinline__ void wait_full(uint32_t bar, uint32_t parity) {
  mbarrier_wait_parity(bar, parity);
  if constexpr (CPA != 0) fence_proxy_async_shared_cta();
}
// ---------------------------------------------------------------- descriptors of one stage
__device__ __forceinline__ uint64_t desc_a(uint32_t a_stage, int wg, int mi, int ks) {
  if constexpr (A_MN)   // the 64-column slab of this m64 block: BK rows of 128 bytes
    return make_smem_desc(a_stage + ((wg * WG_A * WG_ROWS) / 64 + mi) * (BK * 128) + ks * 16 * 128, BK * 128, 1024, 1);
  return make_smem_desc(a_stage + (wg * WG_A * WG_ROWS + mi * 64) * BK_BYTES + ks * 32, 16, 8 * BK_BYTES, K_SWZ);
}
__device__ __forceinline__ uint64_t desc_b(uint32_t b_stage, int ks) {
  if constexpr (B_KMAJOR) return make_smem_desc(b_stage + ks * 32, 16, 8 * BK_BYTES, K_SWZ);
  else return make_smem_desc(b_stage + ks * 16 * 128, B_SLAB, 1024, 1);
}

// one k-tile of MMAs for consumer warpgroup `wg` on stage buffers at a_stage / b_stage, each wgmma's descriptors
// built from the addresses (rungs 1-8; rung 9's hoisted builds, TMA only, take mma_stage_desc below)
// (`first`: the segment's first k-tile — stream-K builds then start each m-block with scale-d 0, no zeroing)
__device__ __forceinline__ void mma_stage(float (&acc)[MI][ACC_N], uint32_t a_stage, uint32_t b_stage, int wg,
                                          bool first) {
#pragma unroll
  for (int ks = 0; ks < KSTEPS; ++ks) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const uint64_t da = desc_a(a_stage, wg, mi, ks), db = desc_b(b_stage, ks);
      if constexpr (STREAMK) wgmma_tile_sd(acc[mi], da, db, !(first && ks == 0));
      else wgmma_tile(acc[mi], da, db);
    }
  }
}

// A k-tile's ring position: its stage and the parity of that stage's barrier phase. The builds before rung 9 take
// both from a running k-tile count (it % STAGES, it / STAGES); rung 9 (HOIST) tracks them in a RingPos, advanced by a
// compare instead of the division that costs per k-tile when STAGES is not a power of two. (One Ring<HOIST> type with
// stage(it) / phase(it) methods for both measured different SASS for every TMA build: the loops keep the two forms
// side by side, chosen by `if constexpr`.)
using Stage = std::conditional_t<HOIST != 0, uint32_t, int>;   // a stage index as each form computes it
struct RingPos {
  uint32_t s = 0, ph = 0;
  __device__ __forceinline__ void next() {
    if (++s == STAGES) s = 0, ph ^= 1;
  }
  __device__ __forceinline__ void skip(uint32_t n) {   // n k-tiles at once (a ping-pong tile of the other warpgroup)
    const uint32_t t = s + n;
    ph ^= (t / STAGES) & 1;
    s = t % STAGES;
  }
};
// one k-tile of MMAs from stage descriptors da / db (the stage's base descriptors): every wgmma's pair is the stage's
// plus a compile-time step on the 14-bit address field, so the loop adds constants and nothing else per wgmma
__device__ __forceinline__ void mma_stage_desc(float (&acc)[MI][ACC_N], uint64_t da, uint64_t db, bool first) {
#pragma unroll
  for (int ks = 0; ks < KSTEPS; ++ks) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      constexpr int A_KSTEP = A_MN ? 2048 : 32, B_KSTEP = B_KMAJOR ? 32 : 2048;
      const uint64_t a = da + (uint64_t)((mi * 64 * BK_BYTES + ks * A_KSTEP) >> 4);
      const uint64_t b = db + (uint64_t)((ks * B_KSTEP) >> 4);
      if constexpr (STREAMK) wgmma_tile_sd(acc[mi], a, b, !(first && ks == 0));
      else wgmma_tile(acc[mi], a, b);
    }
  }
}

template <int R> __device__ __forceinline__ void zero(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) d[i] = 0.f;
}

