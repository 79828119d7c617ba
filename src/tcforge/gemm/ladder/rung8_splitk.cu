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
            const __grid_constant__ TmaDesc mapC, int M, int N, int K, int splits) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t full_bar = ring + BAR_OFFSET, empty_bar = full_bar + STAGES * 8;
  const uint32_t rank = cluster_ctarank();
  const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int num_mc = M / (BM * CLUSTER), num_n = N / BN, units = num_mc * num_n * splits;
  const int num_kt = K / BK, per = (num_kt + splits - 1) / splits;   // (the host leaves no split empty)
  __builtin_assume(per > 0);
  // unit u: tile u / splits (grouped order), k-tiles [kt0, kt1) of split u % splits
  auto unit = [&](int u, int& mc, int& n, int& kt0, int& kt1) {
    grouped_tile(u / splits, num_mc, num_n, GROUP_M, mc, n);
    kt0 = (u % splits) * per;
    kt1 = min(num_kt, kt0 + per);
  };
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
      for (int u = cluster; u < units; u += clusters) {
        int mc, n, kt0, kt1;
        unit(u, mc, n, kt0, kt1);
        const int m0 = (mc * CLUSTER + rank) * BM, n0 = n * BN;
        for (int kt = kt0; kt < kt1; ++kt, ++it) {
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
    for (int u = cluster; u < units; u += clusters) {
      int mc, n, kt0, kt1;
      unit(u, mc, n, kt0, kt1);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
      for (int kt = kt0; kt < kt1; ++kt, ++it) {
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
        if (kt > kt0) release(it - 1);
      }
      wgmma_wait_group<0>();
      warpgroup_fence_operand(acc);
      release(it - 1);   // the tile's last slot: the producer is already loading the next tile
      const int row0 = (u % splits) * M + (mc * CLUSTER + rank) * BM + row;   // plane u % splits (splits = 1: C)
      store_acc_tma(acc, &mapC, ring + EPI_OFFSET + warp * EPI_WARP_BYTES, row0, n * BN);
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
