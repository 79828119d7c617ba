// Rung 8 — split-K: where the tiles would leave SMs idle, each tile's K is shared among several clusters.
//
// Over rung 7: a work unit is a (tile, split) pair; split z of `splits` covers k-tiles [z * per, (z + 1) * per) and
// writes its fp32 partial tile into plane z of a workspace (C's tensor map then spans splits x M rows of fp32, and
// the unit's rows start at z * M); a second kernel, ladder_splitk_reduce, adds the planes in order and writes C in
// its type. The host splits only where the cluster tiles fill at most half of the SMs' clusters and each split keeps
// at least 4 k-tiles (ladder.choose_splits); otherwise splits = 1 and this is rung 7 (C written directly). The split
// build of a bf16-output launch is the fp32 build (its reduction is the bf16 one). Small-M and long-K shapes are
// what it is for: at 4096^3 there are more tiles than clusters and nothing is split.
// Shapes: M % 256 == 0, N % 256 == 0, K % 64 == 0. Grid (2 x clusters) CTAs in clusters of 2, 384 threads.
#include "common.cuh"

constexpr int BM = 128;
constexpr int BN = 256;
constexpr int BK = 64;
constexpr int CLUSTER = 2;                // CTAs per cluster, along M
constexpr int STAGES = 4;
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (1 + CONSUMERS);
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int GROUP_M = 8;                // cluster rows per raster group
constexpr uint32_t DESC_SWIZZLE = 1;
using Ring = TmaRing<BM, BN, BK, STAGES, CLUSTER, CONSUMERS * 4 * EPI_WARP_BYTES>;
extern "C" __constant__ int ladder_info[7] = {BM, BN, BK, CLUSTER, THREADS, Ring::SMEM_BYTES, Ring::B_ROWS};

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
ladder_gemm(const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB,
            const __grid_constant__ TmaDesc mapC, int M, int N, int K, int splits) {
  extern __shared__ uint8_t smem_raw[];
  const Ring ring(smem_raw);
  const uint32_t rank = cluster_ctarank();
  const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  // unit u: cluster tile u / splits (grouped order), k-tiles [kt0, kt1) of split u % splits
  const SplitUnits<GROUP_M> work(M / (BM * CLUSTER), N / BN, splits, K / BK);
  __builtin_assume(work.per > 0);   // (the host leaves no split empty)
  if (threadIdx.x == 0) ring.init(4 * CONSUMERS * CLUSTER, &mapA, &mapB, &mapC);
  barrier_cluster_sync();

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // ------------------------------------------------ producer: every k-tile of every unit of this cluster
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;   // k-tiles loaded so far: the ring position
      for (int u = cluster; u < work.count; u += clusters) {
        int mc, n, kt0, kt1;
        work.unit(u, mc, n, kt0, kt1);
        const int m0 = (mc * CLUSTER + rank) * BM, n0 = n * BN;
        for (int kt = kt0; kt < kt1; ++kt, ++it) ring.load(it, &mapA, &mapB, kt, m0, n0, rank);
      }
    }
  } else {
    // ------------------------------------------------ consumers: the same units, the same ring positions
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row = (wg - 1) * 64, warp = threadIdx.x / 32 - 4;
    float acc[BN / 2];
    int it = 0;
    for (int u = cluster; u < work.count; u += clusters) {
      int mc, n, kt0, kt1;
      work.unit(u, mc, n, kt0, kt1);
      zero_acc(acc);
      for (int kt = kt0; kt < kt1; ++kt, ++it) {
        ring.mma<DESC_SWIZZLE>(acc, row, it);
        if (kt > kt0) ring.release((it - 1) % STAGES);
      }
      wgmma_wait_all(acc);
      ring.release((it - 1) % STAGES);   // the unit's last slot: the producer is already loading the next unit
      const int row0 = (u % splits) * M + (mc * CLUSTER + rank) * BM + row;   // plane u % splits (splits = 1: C)
      store_acc_tma(acc, &mapC, ring.epi(warp), row0, n * BN);
    }
    if (threadIdx.x % 32 == 0) cp_async_bulk_wait_group<0>();
  }
  barrier_cluster_sync();
}

// C = the sum of the splits' fp32 planes, converted to C's type
extern "C" __global__ void ladder_splitk_reduce(const float* __restrict__ ws, out_t* __restrict__ C, long long total,
                                                int splits) {
  reduce_splits(ws, C, total, splits);
}
