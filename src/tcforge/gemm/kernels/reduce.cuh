// Partial sums of split tiles: a consumer warpgroup's fp32 accumulators through a workspace slot (stream-K's
// partial pieces, the in-kernel split-K) or through the peer CTA's shared memory (the pair split-K).
// the float4 `ld(j)` (j = m-block * ACC_N / 4 + i: this thread's j-th of a slot) added to the accumulators; FROM_ZERO
// sums (0 + acc) + p, the order of tcf_splitk_reduce's planes (bits equal to theirs, -0 included)
template <bool FROM_ZERO, typename Load> __device__ __forceinline__ void add_slot(float (&acc)[MI][ACC_N], Load ld) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < ACC_N / 4; ++i) {
      const float4 p = ld(mi * ACC_N / 4 + i);
      float* a = &acc[mi][4 * i];
      if constexpr (FROM_ZERO) {
        a[0] = (0.f + a[0]) + p.x, a[1] = (0.f + a[1]) + p.y, a[2] = (0.f + a[2]) + p.z, a[3] = (0.f + a[3]) + p.w;
      } else {
        a[0] += p.x, a[1] += p.y, a[2] += p.z, a[3] += p.w;
      }
    }
}
// one consumer warpgroup's accumulators into its workspace slot (one per cluster, CTA rank and consumer warpgroup;
// L2 only: another SM reads them)
__device__ __forceinline__ void store_slot(float (&acc)[MI][ACC_N], float* slot) {
  float4* dst = reinterpret_cast<float4*>(slot) + threadIdx.x % 128;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < ACC_N / 4; ++i)
      __stcg(dst + (mi * ACC_N / 4 + i) * 128,
             make_float4(acc[mi][4 * i], acc[mi][4 * i + 1], acc[mi][4 * i + 2], acc[mi][4 * i + 3]));
}
__device__ __forceinline__ void sk_store_partial(float (&acc)[MI][ACC_N], float* slot, int* flag, int wg) {
  const int lt = threadIdx.x % 128;
  store_slot(acc, slot);
  bar_sync(5 + wg, 128);   // every thread's stores precede the release below
  if (lt == 0) st_release_gpu_b32(flag, 1);
}
__device__ __forceinline__ void sk_add_partial(float (&acc)[MI][ACC_N], const float* slot, int* flag, int wg) {
  const int lt = threadIdx.x % 128;
  if (lt == 0) {
    uint32_t v = 0;
    do {
      v = ld_acquire_gpu_b32(flag);
    } while (v == 0);
    st_relaxed_gpu_b32(flag, 0);   // ready for the next launch
  }
  bar_sync(5 + wg, 128);   // the acquire above precedes every thread's loads
  const float4* src = reinterpret_cast<const float4*>(slot) + lt;
  add_slot<false>(acc, [&](int j) { return __ldcg(src + j * 128); });
}

// ---------------------------------------------------------------- split-K inside the kernel (no planes, no reduction)
// Every split of a tile slice (one consumer warpgroup's rows of one CTA) stores its fp32 partial in the slice's slot
// for that split and counts itself in on the slice's counter; the split that arrives last adds all slots in split
// order starting from 0 (the order of tcf_splitk_reduce: bit-identical results) and stores the tile through the
// normal epilogue, resetting the counter for the next launch. Nobody waits. Returns whether this warpgroup stores.
constexpr int FS_SLICES = PINGPONG ? 1 : NC;   // counters per CTA tile: one per warpgroup that owns rows of it
__device__ __forceinline__ bool fused_split_arrive(float (&acc)[MI][ACC_N], float* slots, int* counter, int split,
                                                   int splits, int wg, volatile int* last) {
  const int lt = threadIdx.x % 128;
  store_slot(acc, slots + (int64_t)split * SK_SLOT);
  bar_sync(5 + wg, 128);   // every thread's stores precede the count below
  if (lt == 0) {
    const int old = atom_add_acq_rel_gpu_s32(counter, 1);
    const int is_last = old == splits - 1;
    if (is_last) st_relaxed_gpu_b32(counter, 0);
    *last = is_last;
  }
  bar_sync(5 + wg, 128);   // the acquire above precedes every thread's loads
  if (!*last) return false;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < ACC_N; ++i) acc[mi][i] = 0.f;
  // the loads are latency-bound (one SM reads every split's slot): per batch up to 16 float4 per thread in flight
  // (8 beside 128 accumulators: no spill), several slots per batch when a slot holds fewer
  constexpr int C4 = ACC_N / 4;                          // float4 per thread per m-block in one slot
  constexpr int G = C4 <= 16 && MI * ACC_N <= 64 ? C4 : (C4 < 8 ? C4 : 8);   // float4 of one slot per batch
  constexpr int U = G == C4 && C4 < 8 ? 8 / C4 : 1;      // slots per batch
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int g = 0; g < C4; g += G) {
      const float4* src = reinterpret_cast<const float4*>(slots) + (mi * C4 + g) * 128 + lt;
#pragma unroll 1
      for (int z = 0; z < splits; z += U, src += U * (SK_SLOT / 4)) {
        float4 p[U][G];
#pragma unroll
        for (int v = 0; v < U; ++v)
#pragma unroll
          for (int i = 0; i < G; ++i)
            if (z + v < splits) p[v][i] = __ldcg(src + v * (SK_SLOT / 4) + i * 128);
#pragma unroll
        for (int v = 0; v < U; ++v) {   // in split order
          if (z + v < splits) {
#pragma unroll
            for (int i = 0; i < G; ++i) {
              acc[mi][4 * (g + i)] += p[v][i].x;
              acc[mi][4 * (g + i) + 1] += p[v][i].y;
              acc[mi][4 * (g + i) + 2] += p[v][i].z;
              acc[mi][4 * (g + i) + 3] += p[v][i].w;
            }
          }
        }
      }
    }
  return true;
}

// ---------------------------------------------------------------- split-K of two CTAs in a cluster (DSMEM)
// Split 1 (cluster rank 1) waits until split 0's receive slot for its warpgroup is free, then stores its fp32
// partial into it with st.async, each store completing bytes on split 0's "landed" mbarrier; split 0 arms that
// barrier with the slot's bytes, waits, adds the partial to its own in split order from 0 (0 + p0 + p1: the planes'
// bits) and frees the slot with one remote arrive. Returns whether this warpgroup stores the tile.
__device__ __forceinline__ bool pair_split_exchange(float (&acc)[MI][ACC_N], uint32_t slot, uint32_t landed,
                                                    uint32_t freed, uint32_t phase, int wg) {
  const int lt = threadIdx.x % 128;
  if (cluster_ctarank() == 1) {
    // split 0 has read this slot's previous partial (at once the first time)
    mbarrier_wait_parity_acquire_cluster(freed, phase ^ 1);
    const uint32_t dst = mapa_shared_cluster(slot, 0) + lt * 16, bar = mapa_shared_cluster(landed, 0);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int i = 0; i < ACC_N / 4; ++i)
        st_async_v4_f32(dst + (uint32_t)((mi * ACC_N / 4 + i) * 128 * 16), acc[mi][4 * i], acc[mi][4 * i + 1],
                        acc[mi][4 * i + 2], acc[mi][4 * i + 3], bar);
    return false;
  }
  if (lt == 0) mbarrier_arrive_expect_tx(landed, SK_SLOT * 4);   // the one arrival of the phase, plus the bytes to land
  mbarrier_wait_parity(landed, phase);
  const float4* src = reinterpret_cast<const float4*>(__cvta_shared_to_generic(slot)) + lt;
  add_slot<true>(acc, [&](int j) { return src[j * 128]; });
  bar_sync(5 + wg, 128);   // every thread has read the slot before split 1 may write it again
  if (lt == 0) mbarrier_arrive_release_cluster(mapa_shared_cluster(freed, 1));
  return true;
}

