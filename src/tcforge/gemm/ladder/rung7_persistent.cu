// Rung 7 — a persistent grid: each cluster walks many tiles in grouped order, its ring running on across them.
//
// Over rung 6: the grid is no longer one cluster per 256 x 256 cluster tile but one round of resident clusters
// (the host launches min(tiles, SMs / 2) clusters); cluster c takes tiles c, c + clusters, ... in grouped order
// (8 cluster rows at a time, so the clusters running together share B's columns in L2). The ring's stage and phase
// count on across tiles (`it`), so the producer loads the next tile's first stages while the consumers are still in
// this tile's epilogue — which is itself asynchronous (TMA stores) — and the wave tail of the one-tile-per-cluster
// grid turns into a few clusters running one tile more. Each tile starts from zeroed accumulators; after its last
// k-tile the consumers also free that last slot (rung 6 never refilled it).
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
            const __grid_constant__ TmaDesc mapC, int M, int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  const Ring ring(smem_raw);
  const uint32_t rank = cluster_ctarank();
  const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int num_mc = M / (BM * CLUSTER), num_n = N / BN, tiles = num_mc * num_n;
  const int num_kt = K / BK;
  __builtin_assume(num_kt > 0);
  if (threadIdx.x == 0) ring.init(4 * CONSUMERS * CLUSTER, &mapA, &mapB, &mapC);
  barrier_cluster_sync();

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // ------------------------------------------------ producer: every k-tile of every tile of this cluster
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;   // k-tiles loaded so far: the ring position runs on from tile to tile
      for (int u = cluster; u < tiles; u += clusters) {
        int mc, n;
        grouped_tile(u, num_mc, num_n, GROUP_M, mc, n);
        const int m0 = (mc * CLUSTER + rank) * BM, n0 = n * BN;
        for (int kt = 0; kt < num_kt; ++kt, ++it) ring.load(it, &mapA, &mapB, kt, m0, n0, rank);
      }
    }
  } else {
    // ------------------------------------------------ consumers: the same tiles, the same ring positions
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row = (wg - 1) * 64, warp = threadIdx.x / 32 - 4;
    float acc[BN / 2];
    int it = 0;
    for (int u = cluster; u < tiles; u += clusters) {
      int mc, n;
      grouped_tile(u, num_mc, num_n, GROUP_M, mc, n);
      zero_acc(acc);
      for (int kt = 0; kt < num_kt; ++kt, ++it) {
        ring.mma<DESC_SWIZZLE>(acc, row, it);
        if (kt > 0) ring.release((it - 1) % STAGES);
      }
      wgmma_wait_all(acc);
      ring.release((it - 1) % STAGES);   // the tile's last slot: the producer is already loading the next tile
      store_acc_tma(acc, &mapC, ring.epi(warp), (mc * CLUSTER + rank) * BM + row, n * BN);
    }
    if (threadIdx.x % 32 == 0) cp_async_bulk_wait_group<0>();
  }
  barrier_cluster_sync();
}
