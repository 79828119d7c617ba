// Rung 1 — cp.async by every thread into a swizzled 3-stage ring, wgmma from shared memory (128x128 tile).
//
// The start of the ladder (the write-up's phase 1, on Hopper's wgmma instead of tcgen05). One CTA of 256 threads
// (two warpgroups) computes a 128 x 128 tile of C = A @ B^T. Every thread copies 16-byte chunks of A and B with
// cp.async into a ring of 3 stages, each stage 32 columns of K: rows of 64 bytes, stored with the 64-byte swizzle
// that TMA would apply and that the wgmma descriptors name. Once a stage has landed (cp.async.wait_group, a proxy
// fence, __syncthreads) each warpgroup multiplies its 64 rows by all 128 columns: two m64n128k16 wgmmas, then it
// waits for them (wait_group 0) before the next stage. The epilogue stores each thread's fragment to global memory.
// What limits it: per stage every thread computes ~150 addresses and the whole block meets at a barrier before any
// MMA is issued, so the tensor core idles while the copies are issued and the barrier drains.
// Shapes: M % 128 == 0, N % 128 == 0, K % 32 == 0. Grid (M / 128, N / 128), 256 threads.
#include "common.cuh"

constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 32;                    // 64 bytes of K per row: the swizzle span (64-byte swizzle)
constexpr int CLUSTER = 1;
constexpr int STAGES = 3;
constexpr int THREADS = 256;              // two warpgroups, each owning 64 rows of the tile
constexpr int ROW_BYTES = BK * 2;
constexpr int A_TILE = BM * ROW_BYTES;    // bytes of one stage of A
constexpr int B_TILE = BN * ROW_BYTES;
constexpr int STAGE_BYTES = A_TILE + B_TILE;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;   // + slack to align the ring to 1024 bytes
constexpr uint32_t SWIZZLE_MASK = 0x30;   // 64-byte swizzle: chunk bits [4, 6) ^= address bits [7, 9)
constexpr uint32_t DESC_SWIZZLE = 2;      // wgmma descriptor code of the 64-byte swizzle
// what the host reads back (tcforge.gemm.ladder): tile, cluster CTAs, threads, dynamic shared memory, B box rows
extern "C" __constant__ int ladder_info[7] = {BM, BN, BK, CLUSTER, THREADS, SMEM_BYTES, 0};

// one stage: rows [row0, row0 + ROWS) of a K-major matrix, K columns [k0, k0 + BK), 16 bytes per cp.async
template <int ROWS>
__device__ __forceinline__ void load_tile(uint32_t dst, const __half* src, int ld, int row0, int k0) {
  constexpr int CHUNKS = ROWS * ROW_BYTES / 16, ROW_CHUNKS = ROW_BYTES / 16;
#pragma unroll
  for (int i = 0; i < CHUNKS / THREADS; ++i) {
    const int c = threadIdx.x + i * THREADS, r = c / ROW_CHUNKS, kc = c % ROW_CHUNKS;
    const __half* from = src + (int64_t)(row0 + r) * ld + k0 + kc * 8;
    cp_async_cg_16(dst + swizzle(r * ROW_BYTES + kc * 16, SWIZZLE_MASK), from, true);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
ladder_gemm(const __half* __restrict__ A, const __half* __restrict__ B, out_t* __restrict__ C, int M, int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;
  const int wg = threadIdx.x / 128;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int num_kt = K / BK;
  auto load_stage = [&](int kt) {
    const uint32_t stage = ring + (kt % STAGES) * STAGE_BYTES;
    load_tile<BM>(stage, A, K, m0, kt * BK);
    load_tile<BN>(stage + A_TILE, B, K, n0, kt * BK);
  };

  float acc[BN / 2];
  zero_acc(acc);
  // fill all stages but one; one commit group per stage (empty groups past the end keep the count uniform)
#pragma unroll
  for (int kt = 0; kt < STAGES - 1; ++kt) {
    if (kt < num_kt) load_stage(kt);
    cp_async_commit_group();
  }
  for (int kt = 0; kt < num_kt; ++kt) {
    cp_async_wait_group<STAGES - 2>();   // this thread's copies of stage kt have landed
    fence_proxy_async_shared_cta();          // written by the generic proxy, read by wgmma through the async proxy
    __syncthreads();                     // ... everyone's copies; and stage kt - 1 is no longer read by anyone
    if (kt + STAGES - 1 < num_kt) load_stage(kt + STAGES - 1);   // into the slot stage kt - 1 used
    cp_async_commit_group();
    const uint32_t a = ring + (kt % STAGES) * STAGE_BYTES + wg * 64 * ROW_BYTES, b = a - wg * 64 * ROW_BYTES + A_TILE;
    // this warpgroup's 64 rows by all 128 columns: BK / 16 m64n128k16 wgmmas, waited for before the next stage
    mma_stage<BK, DESC_SWIZZLE, 0>(acc, a, b);
  }
  store_acc_direct(acc, C, N, m0 + wg * 64, n0);
}
