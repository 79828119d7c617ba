// Rung 2 — TMA loads into an mbarrier ring, a producer warpgroup and a consumer warpgroup (warp specialisation).
//
// Over rung 1: the copies move to the TMA unit. A tensor map per operand (encoded on the host) describes the global
// matrix, its box and its 64-byte swizzle; one producer thread arms a stage's "full" mbarrier with the bytes to
// expect and issues two bulk tensor copies (A: 32 x 128 box, B: 32 x 128 box), which complete on that barrier.
// The roles split into warpgroups: warpgroup 0 produces, warpgroup 1 consumes — it waits on a stage's full barrier,
// issues its wgmmas (the whole 128 x 128 tile: two m64n128 per 16 columns of K, 128 fp32 accumulators a thread),
// and once the wgmmas of the stage before have completed (wait_group 1, so one stage's MMAs stay in flight) frees
// that stage's slot with one arrive per warp on its "empty" barrier, which the producer waits for before refilling.
// No thread computes an address per chunk and no block-wide barrier sits in front of the MMAs. 4 stages.
// Shapes: M % 128 == 0, N % 128 == 0, K % 32 == 0. Grid (M / 128, N / 128), 256 threads.
#include "common.cuh"

constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 32;                    // 64-byte rows, 64-byte swizzle (TMA and wgmma)
constexpr int CLUSTER = 1;
constexpr int STAGES = 4;
constexpr int THREADS = 256;              // warpgroup 0 produces, warpgroup 1 consumes
constexpr uint32_t DESC_SWIZZLE = 2;
constexpr int CONSUMER_WARPS = 4;         // arrivals that free a slot
using Ring = TmaRing<BM, BN, BK, STAGES>;   // the slots, then a full and an empty barrier each (common.cuh)
extern "C" __constant__ int ladder_info[7] = {BM, BN, BK, CLUSTER, THREADS, Ring::SMEM_BYTES, BN};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
ladder_gemm(const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB, out_t* __restrict__ C, int M,
            int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  const Ring ring(smem_raw);
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int num_kt = K / BK;
  if (threadIdx.x == 0) ring.init(CONSUMER_WARPS, &mapA, &mapB);   // one arrive per consumer warp frees a slot
  __syncthreads();

  if (threadIdx.x / 128 == 0) {
    // ------------------------------------------------ producer: one thread drives the TMA unit
    if (threadIdx.x == 0)
      for (int kt = 0; kt < num_kt; ++kt)   // k-tile kt into slot kt % STAGES, on that slot's pass kt / STAGES
        ring.load(kt, &mapA, &mapB, kt, m0, n0);
  } else {
    // ------------------------------------------------ consumer: the whole 128 x 128 tile as two 64-row halves
    float acc[2][BN / 2];
    zero_acc(acc[0]);
    zero_acc(acc[1]);
    for (int kt = 0; kt < num_kt; ++kt) {
      const int s = kt % STAGES;
      mbarrier_wait_parity(ring.full(s), (kt / STAGES) & 1);
      const uint32_t a = ring.a(s), b = ring.b(s);
      warpgroup_fence_operand(acc[0]);
      warpgroup_fence_operand(acc[1]);
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < BK / 16; ++ks)
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
          wgmma_m64n128k16_f32_f16(acc[mi], make_smem_desc(a + mi * 64 * Ring::ROW_BYTES + ks * 32, 16,
                                                           8 * Ring::ROW_BYTES, DESC_SWIZZLE),
                                   make_smem_desc(b + ks * 32, 16, 8 * Ring::ROW_BYTES, DESC_SWIZZLE));
      wgmma_commit_group();
      wgmma_wait_group<1>();   // the previous stage's wgmmas are done: its slot may be refilled
      warpgroup_fence_operand(acc[0]);
      warpgroup_fence_operand(acc[1]);
      ring.release((kt - 1) % STAGES, kt > 0);
    }
    wgmma_wait_group<0>();
    warpgroup_fence_operand(acc[0]);
    warpgroup_fence_operand(acc[1]);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) store_acc_direct(acc[mi], C, N, m0 + mi * 64, n0);
  }
}
