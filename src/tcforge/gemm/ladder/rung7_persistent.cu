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
constexpr int ROW_BYTES = BK * 2;
constexpr int A_TILE = BM * ROW_BYTES;
constexpr int B_TILE = BN * ROW_BYTES;
constexpr int B_ROWS = BN / CLUSTER;
constexpr int STAGE_BYTES = A_TILE + B_TILE;
constexpr int EPI_OFFSET = STAGES * STAGE_BYTES;
constexpr int BAR_OFFSET = EPI_OFFSET + CONSUMERS * 4 * EPI_WARP_BYTES;
constexpr int SMEM_BYTES = BAR_OFFSET + 2 * STAGES * 8 + 1024;
constexpr uint32_t DESC_SWIZZLE = 1;
static_assert(SMEM_BYTES <= 227 * 1024, "a block may have 227 KB of shared memory");
extern "C" __constant__ int ladder_info[7] = {BM, BN, BK, CLUSTER, THREADS, SMEM_BYTES, B_ROWS};

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
ladder_gemm(const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB,
            const __grid_constant__ TmaDesc mapC, int M, int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t full_bar = ring + BAR_OFFSET, empty_bar = full_bar + STAGES * 8;
  const uint32_t rank = cluster_ctarank();
  const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int num_mc = M / (BM * CLUSTER), num_n = N / BN, tiles = num_mc * num_n;
  const int num_kt = K / BK;
  __builtin_assume(num_kt > 0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full_bar + s * 8, 1);
      mbarrier_init(empty_bar + s * 8, 4 * CONSUMERS * CLUSTER);
    }
    fence_mbarrier_init_release_cluster();
    prefetch_tensormap(&mapA);
    prefetch_tensormap(&mapB);
    prefetch_tensormap(&mapC);
  }
  barrier_cluster_sync();

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // ------------------------------------------------ producer: every k-tile of every tile of this cluster
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;   // k-tiles loaded so far: the ring position
      for (int u = cluster; u < tiles; u += clusters) {
        int mc, n;
        grouped_tile(u, num_mc, num_n, GROUP_M, mc, n);
        const int m0 = (mc * CLUSTER + rank) * BM, n0 = n * BN;
        for (int kt = 0; kt < num_kt; ++kt, ++it) {
          const int s = it % STAGES;
          mbarrier_wait_parity(empty_bar + s * 8, ((it / STAGES) & 1) ^ 1);
          const uint32_t full = full_bar + s * 8, a = ring + s * STAGE_BYTES;
          mbarrier_arrive_expect_tx(full, STAGE_BYTES);
          cp_async_bulk_tensor_2d_g2s(a, &mapA, kt * BK, m0, full);
          cp_async_bulk_tensor_2d_g2s_multicast(a + A_TILE + rank * B_ROWS * ROW_BYTES, &mapB, kt * BK,
                                                n0 + rank * B_ROWS, full, (1 << CLUSTER) - 1);
        }
      }
    }
  } else {
    // ------------------------------------------------ consumers: the same tiles, the same ring positions
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row = (wg - 1) * 64, warp = threadIdx.x / 32 - 4;
    auto release = [&](int it) {   // slot of k-tile `it` free in both CTAs
      if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int c = 0; c < CLUSTER; ++c) mbarrier_arrive_cluster(empty_bar + (it % STAGES) * 8, c);
    };
    float acc[BN / 2];
    int it = 0;
    for (int u = cluster; u < tiles; u += clusters) {
      int mc, n;
      grouped_tile(u, num_mc, num_n, GROUP_M, mc, n);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
      for (int kt = 0; kt < num_kt; ++kt, ++it) {
        const int s = it % STAGES;
        mbarrier_wait_parity(full_bar + s * 8, (it / STAGES) & 1);
        const uint32_t a = ring + s * STAGE_BYTES + row * ROW_BYTES, b = ring + s * STAGE_BYTES + A_TILE;
        warpgroup_fence_operand(acc);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)
          wgmma_m64n256k16_f32_f16(acc, make_smem_desc(a + ks * 32, 16, 8 * ROW_BYTES, DESC_SWIZZLE),
                                   make_smem_desc(b + ks * 32, 16, 8 * ROW_BYTES, DESC_SWIZZLE));
        wgmma_commit_group();
        wgmma_wait_group<1>();
        warpgroup_fence_operand(acc);
        if (kt > 0) release(it - 1);
      }
      wgmma_wait_group<0>();
      warpgroup_fence_operand(acc);
      release(it - 1);   // the tile's last slot: the producer is already loading the next tile
      store_acc_tma(acc, &mapC, ring + EPI_OFFSET + warp * EPI_WARP_BYTES, (mc * CLUSTER + rank) * BM + row, n * BN);
    }
    if (threadIdx.x % 32 == 0) cp_async_bulk_wait_group<0>();
  }
  barrier_cluster_sync();
}
