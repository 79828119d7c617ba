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
// registers a thread after setmaxnreg: 40 x 128 + 232 x 256 fit the 64 K of the SM (168 a thread at launch)
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr uint32_t DESC_SWIZZLE = 2;
// shared memory (common.cuh): 4 slots of 24 KB (A's 128 rows, B's 256 rows, 64 bytes each), then the barriers
using Ring = TmaRing<BM, BN, BK, STAGES>;
extern "C" __constant__ int ladder_info[7] = {BM, BN, BK, CLUSTER, THREADS, Ring::SMEM_BYTES, BN};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
ladder_gemm(const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB, out_t* __restrict__ C, int M,
            int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  const Ring ring(smem_raw);
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int num_kt = K / BK;
  // K >= BK (the host checks): with a zero-trip path the accumulators would be zeroed on two paths into the k-loop,
  // and ptxas then serialises every wgmma (remark C7515)
  __builtin_assume(num_kt > 0);
  if (threadIdx.x == 0) ring.init(4 * CONSUMERS, &mapA, &mapB);   // a slot is freed by the 8 consumer warps
  __syncthreads();

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // ------------------------------------------------ producer: its registers handed to the consumers
    setmaxnreg_dec<PRODUCER_REGS>();
    // k-tile kt at ring position kt: slot kt % STAGES, on that slot's pass kt / STAGES
    if (threadIdx.x == 0)
      for (int kt = 0; kt < num_kt; ++kt) ring.load(kt, &mapA, &mapB, kt, m0, n0);
  } else {
    // ------------------------------------------------ consumers: rows [64 (wg - 1), 64 wg) of the tile
    setmaxnreg_inc<CONSUMER_REGS>();   // 232 registers: room for the 128 accumulators and the wgmma pipeline
    const int row = (wg - 1) * 64;
    float acc[BN / 2];   // 64 x 256 fp32: one m64n256k16 wgmma per 16 columns of K
    zero_acc(acc);
    // each k-tile's wgmmas are one group and one group stays in flight: when ring.mma returns, the group of the k-tile
    // before has completed and its slot goes back to the producer
    for (int kt = 0; kt < num_kt; ++kt) {
      ring.mma<DESC_SWIZZLE>(acc, row, kt);
      ring.release((kt - 1) % STAGES, kt > 0);   // the stage before's wgmmas are done: free its slot
    }
    wgmma_wait_all(acc);
    store_acc_direct(acc, C, N, m0 + row, n0);   // each thread's fragment of the 64 x 256 tile, straight to C
  }
}
