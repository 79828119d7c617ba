// Rung 3 — a 128x256 tile over two consumer warpgroups, registers moved to them with setmaxnreg.
//
// Over rung 2: the tile doubles along N and the consumers double. Each of the two consumer warpgroups owns 64 rows
// by all 256 columns: one m64n256k16 wgmma per 16 columns of K, 128 fp32 accumulators a thread. A is now read once
// per 256 columns of C instead of 128, and every trip round the ring's barriers carries twice the MMA work. The
// producer warpgroup needs few registers: `setmaxnreg` gives it 40 and each consumer 232 (the block's 64 K registers
// allow 168 a thread at launch). B arrives as one 32 x 256 box; a stage's slot is freed by the 8 consumer warps.
// Shapes: M % 128 == 0, N % 256 == 0, K % 32 == 0. Grid (M / 128, N / 256), 384 threads.
#include "common.cuh"

constexpr int BM = 128;
constexpr int BN = 256;
constexpr int BK = 32;
constexpr int CLUSTER = 1;
constexpr int STAGES = 4;
constexpr int CONSUMERS = 2;              // consumer warpgroups, 64 rows each
constexpr int THREADS = 128 * (1 + CONSUMERS);
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int ROW_BYTES = BK * 2;
constexpr int A_TILE = BM * ROW_BYTES;
constexpr int B_TILE = BN * ROW_BYTES;
constexpr int STAGE_BYTES = A_TILE + B_TILE;
constexpr int BAR_OFFSET = STAGES * STAGE_BYTES;
constexpr int SMEM_BYTES = BAR_OFFSET + 2 * STAGES * 8 + 1024;
constexpr uint32_t DESC_SWIZZLE = 2;
extern "C" __constant__ int ladder_info[7] = {BM, BN, BK, CLUSTER, THREADS, SMEM_BYTES, BN};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
ladder_gemm(const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB, out_t* __restrict__ C, int M,
            int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t full_bar = ring + BAR_OFFSET, empty_bar = full_bar + STAGES * 8;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int num_kt = K / BK;
  // K >= BK (the host checks): with a zero-trip path the accumulators would be zeroed on two paths into the k-loop,
  // and ptxas then serialises every wgmma (remark C7515)
  __builtin_assume(num_kt > 0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full_bar + s * 8, 1);
      mbarrier_init(empty_bar + s * 8, 4 * CONSUMERS);
    }
    fence_mbarrier_init_release_cluster();
    prefetch_tensormap(&mapA);
    prefetch_tensormap(&mapB);
  }
  __syncthreads();

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // ------------------------------------------------ producer
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < num_kt; ++kt) {
        const int s = kt % STAGES;
        mbarrier_wait_parity(empty_bar + s * 8, ((kt / STAGES) & 1) ^ 1);
        const uint32_t full = full_bar + s * 8, a = ring + s * STAGE_BYTES;
        mbarrier_arrive_expect_tx(full, STAGE_BYTES);
        cp_async_bulk_tensor_2d_g2s(a, &mapA, kt * BK, m0, full);
        cp_async_bulk_tensor_2d_g2s(a + A_TILE, &mapB, kt * BK, n0, full);
      }
    }
  } else {
    // ------------------------------------------------ consumers: rows [64 (wg - 1), 64 wg) of the tile
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row = (wg - 1) * 64;
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
    for (int kt = 0; kt < num_kt; ++kt) {
      const int s = kt % STAGES;
      mbarrier_wait_parity(full_bar + s * 8, (kt / STAGES) & 1);
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
      if (kt > 0 && threadIdx.x % 32 == 0) mbarrier_arrive(empty_bar + ((kt - 1) % STAGES) * 8);
    }
    wgmma_wait_group<0>();
    warpgroup_fence_operand(acc);
    store_acc_direct(acc, C, N, m0 + row, n0);
  }
}
