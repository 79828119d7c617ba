// What the nine ladder rungs (rung*_*.cu beside this file) share: the PTX wrappers of tcforge's header library
// (include/tcforge: mbarrier, TMA, wgmma fences, cluster, cp.async, setmaxnreg), the two wgmma instructions they
// issue and the batch of them that one stage of K makes, the TMA ring of rungs 2-9 (its shared-memory layout, its
// barriers, the producer's loads and the consumers' k-loop), the two epilogues (direct stores: rungs 1-4; staged TMA
// stores: rungs 5-9), the persistent rungs' tile order and split-K's work units and reduction. A rung includes only
// this header: the rung file plus this one read alone. Every kernel reads fp16 A (M x K, row-major) and B (N x K,
// row-major: K-major, i.e. the product is A @ B^T) and writes C (M x N, row-major) as fp32, or bf16 when compiled
// with -DOUT_BF16=1.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <tcforge/cluster.cuh>
#include <tcforge/cp_async.cuh>
#include <tcforge/mbarrier.cuh>
#include <tcforge/smem.cuh>
#include <tcforge/sync.cuh>
#include <tcforge/tma.cuh>
#include <tcforge/wgmma.cuh>

#ifndef OUT_BF16
#define OUT_BF16 0
#endif
#if OUT_BF16
using out_t = __nv_bfloat16;
#else
using out_t = float;
#endif
constexpr int OUT_BYTES = sizeof(out_t);
constexpr int EPI_N = 128 / OUT_BYTES;   // C columns in one 128-byte row of a staged sub-tile (rungs 5-9)

using namespace tcf;   // the PTX wrappers: include/tcforge/*.cuh (names mirror the PTX instructions)

// ---------------------------------------------------------------- what the header library does not have (yet)
// the swizzle TMA applies (and wgmma expects): 16-byte chunk bits [4, 4 + b) XOR address bits [7, 7 + b); `mask` is
// 0x70 for the 128-byte swizzle, 0x30 for 64 bytes (rung 1 lays its cp.async copies out this way)
__device__ __forceinline__ uint32_t swizzle(uint32_t off, uint32_t mask) { return off ^ ((off >> 3) & mask); }
#define TCF_F8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                  "+f"(d[i + 6]), "+f"(d[i + 7])
#define TCF_F64(i) TCF_F8(i), TCF_F8(i + 8), TCF_F8(i + 16), TCF_F8(i + 24), TCF_F8(i + 32), TCF_F8(i + 40), \
                   TCF_F8(i + 48), TCF_F8(i + 56)
#define TCF_R64_LO "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, " \
  "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
  "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TCF_R64_HI "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, " \
  "%83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, "   \
  "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, "    \
  "%122, %123, %124, %125, %126, %127"
// wgmma_m64n{N}k16_f32_f16(d, desc_a, desc_b, scale_d = 1): D (64 x N fp32; this thread's N / 2 values) += A (64 x 16
// fp16) * B (N x 16 fp16)^T, both K-major in shared memory behind their descriptors; scale_d 0: D = A * B^T
#define TCF_WGMMA_F16(N, DA, DB, SD, REGS, ...)                                                                  \
  __device__ __forceinline__ void wgmma_m64n##N##k16_f32_f16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, \
                                                             int scale_d = 1) {                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SD ", 0;\n"                                                 \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" REGS "}, " DA ", " DB                 \
                 ", p, 1, 1, 0, 0;\n}\n"                                                                            \
                 : __VA_ARGS__ : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                         \
  }
TCF_WGMMA_F16(128, "%64", "%65", "%66", TCF_R64_LO, TCF_F64(0))
TCF_WGMMA_F16(256, "%128", "%129", "%130", TCF_R64_LO ", " TCF_R64_HI, TCF_F64(0), TCF_F64(64))
// the m64nNk16 wgmma whose N the accumulator picks: 64 floats a thread for N = 128, 128 for N = 256
template <int R>
__device__ __forceinline__ void wgmma_f16(float (&d)[R], uint64_t desc_a, uint64_t desc_b) {
  static_assert(R == 64 || R == 128, "the ladder issues m64n128 and m64n256 wgmmas");
  if constexpr (R == 64) wgmma_m64n128k16_f32_f16(d, desc_a, desc_b);
  else wgmma_m64n256k16_f32_f16(d, desc_a, desc_b);
}

// ---------------------------------------------------------------- one stage's wgmmas (a warpgroup's 64 rows)
// D = 0 before a tile's first k-tile
template <int R>
__device__ __forceinline__ void zero_acc(float (&acc)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = 0.f;
}
// before a batch of wgmmas: no access to the accumulators moves past this point, then wgmma.fence
template <int R>
__device__ __forceinline__ void wgmma_begin(float (&acc)[R]) {
  warpgroup_fence_operand(acc);
  wgmma_fence();
}
// after it: commit the batch as one group and return once at most WAIT groups are still running
template <int WAIT, int R>
__device__ __forceinline__ void wgmma_end(float (&acc)[R]) {
  wgmma_commit_group();
  wgmma_wait_group<WAIT>();
  warpgroup_fence_operand(acc);
}
// every wgmma of this warpgroup complete: the accumulators may be read
template <int R>
__device__ __forceinline__ void wgmma_wait_all(float (&acc)[R]) {
  wgmma_wait_group<0>();
  warpgroup_fence_operand(acc);
}
// one stage as one group: acc (64 x 2R) += A (64 rows at `a`) * B (2R rows at `b`)^T, K-major rows of 2 BK bytes in
// 8-row core groups, swizzle code SWZ; BK / 16 wgmmas of 32 bytes of K, descriptors built per wgmma from the addresses
template <int BK, uint32_t SWZ, int WAIT, int R>
__device__ __forceinline__ void mma_stage(float (&acc)[R], uint32_t a, uint32_t b) {
  wgmma_begin(acc);
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks)
    wgmma_f16(acc, make_smem_desc(a + ks * 32, 16, 8 * 2 * BK, SWZ), make_smem_desc(b + ks * 32, 16, 8 * 2 * BK, SWZ));
  wgmma_end<WAIT>(acc);
}

// ---------------------------------------------------------------- epilogues
// wgmma's accumulator fragment: thread t of the warpgroup holds, for each 8-column group j of the 64 x N tile,
// d[4j + 2h + e] = D[16 * warp + lane / 4 + 8h][8j + 2 * (lane % 4) + e] (warp = t / 32, lane = t % 32, h, e in {0, 1})
__device__ __forceinline__ void store_pair_global(out_t* dst, float x, float y) {
  if constexpr (OUT_BF16) *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(x, y);
  else *reinterpret_cast<float2*>(dst) = make_float2(x, y);
}
__device__ __forceinline__ void store_pair_shared(uint32_t addr, float x, float y) {
  if constexpr (OUT_BF16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
    st_shared_b32(addr, *reinterpret_cast<const uint32_t*>(&v));
  } else {
    st_shared_v2_f32(addr, x, y);
  }
}

// rungs 1-4: each thread writes its fragment of a 64 x (2R) tile at (row0, col0) of C straight to global memory
template <int R>
__device__ __forceinline__ void store_acc_direct(const float (&d)[R], out_t* C, int ldc, int row0, int col0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < R / 4; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + warp * 16 + lane / 4 + 8 * h, col = col0 + 8 * j + 2 * (lane % 4);
      store_pair_global(C + (int64_t)row * ldc + col, d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
}

// rungs 5-9: the same tile staged one warp's 16 rows x 128 bytes at a time (EPI_N columns) in two alternating 2 KB
// buffers swizzled as the C tensor map's 128-byte swizzle expects, each written to C by one TMA store from lane 0
// (C map box {EPI_N, 16}). `bufs`: this warp's 4 KB, 1024-byte aligned. A buffer is rewritten once the store that
// last used it has read it; the caller waits for all stores (cp_async_bulk_wait_group<0>) before the kernel exits.
constexpr int EPI_WARP_BYTES = 2 * 16 * 128;
template <int R>
__device__ __forceinline__ void store_acc_tma(const float (&d)[R], const TmaDesc* mapC, uint32_t bufs, int row0,
                                              int col0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  constexpr int JS = EPI_N / 8;   // 8-column groups per sub-tile
#pragma unroll
  for (int c = 0; c < R / 4 / JS; ++c) {
    const uint32_t buf = bufs + (c % 2) * (16 * 128);
    if (lane == 0) cp_async_bulk_wait_group_read<1>();
    __syncwarp();
#pragma unroll
    for (int jj = 0; jj < JS; ++jj)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t r = lane / 4 + 8 * h, byte = (8 * jj + 2 * (lane % 4)) * OUT_BYTES;
        const float* f = &d[4 * (c * JS + jj) + 2 * h];
        store_pair_shared(buf + swizzle(r * 128 + byte, 0x70), f[0], f[1]);
      }
    fence_proxy_async_shared_cta();   // this lane's staging writes, before the TMA unit reads them
    __syncwarp();
    if (lane == 0) {
      cp_async_bulk_tensor_2d_s2g(mapC, col0 + c * EPI_N, row0 + warp * 16, buf);
      cp_async_bulk_commit_group();
    }
  }
}

// ---------------------------------------------------------------- the TMA ring (rungs 2-9)
// A TMA rung's shared memory from a 1024-byte aligned base (the same offset in every CTA of a cluster): STAGES slots
// (A's BM rows, then B's BN rows, K-major rows of 2 BK bytes: the swizzle span), EPI_BYTES of epilogue staging, then a
// "full" and an "empty" mbarrier per slot. The k-tile at ring position `pos` (k-tiles loaded before it) goes to slot
// pos % STAGES, on that slot's pass pos / STAGES: the barriers' phase parity is (pos / STAGES) & 1.
template <int BM, int BN, int BK, int STAGES, int CLUSTER = 1, int EPI_BYTES = 0>
struct TmaRing {
  static constexpr int ROW_BYTES = BK * 2;
  static constexpr int A_TILE = BM * ROW_BYTES;            // bytes of one slot's A; its B follows
  static constexpr int STAGE_BYTES = A_TILE + BN * ROW_BYTES;
  static constexpr int B_ROWS = BN / CLUSTER;              // rows of B each CTA loads (and multicasts: CLUSTER > 1)
  static constexpr int EPI_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int BAR_OFFSET = EPI_OFFSET + EPI_BYTES;
  static constexpr int SMEM_BYTES = BAR_OFFSET + 2 * STAGES * 8 + 1024;   // + slack to align the base
  static_assert(SMEM_BYTES <= 227 * 1024, "a block may have 227 KB of shared memory");

  uint32_t base;
  __device__ __forceinline__ explicit TmaRing(const uint8_t* smem) : base((smem_u32(smem) + 1023) & ~1023u) {}
  __device__ __forceinline__ uint32_t a(int s) const { return base + s * STAGE_BYTES; }
  __device__ __forceinline__ uint32_t b(int s) const { return base + s * STAGE_BYTES + A_TILE; }
  __device__ __forceinline__ uint32_t full(int s) const { return base + BAR_OFFSET + s * 8; }
  __device__ __forceinline__ uint32_t empty(int s) const { return base + BAR_OFFSET + STAGES * 8 + s * 8; }
  // consumer warp `warp`'s two staging buffers (store_acc_tma)
  __device__ __forceinline__ uint32_t epi(int warp) const { return base + EPI_OFFSET + warp * EPI_WARP_BYTES; }

  // one thread, before the block (cluster) syncs: the barriers (`frees` warp arrivals free a slot), maps prefetched
  template <class... Map>
  __device__ __forceinline__ void init(uint32_t frees, const Map*... maps) const {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full(s), 1);          // the producer's arrive.expect_tx (+ the bytes)
      mbarrier_init(empty(s), frees);
    }
    fence_mbarrier_init_release_cluster();
    (prefetch_tensormap(maps), ...);
  }

  // producer thread, slot s free: arm its full barrier with the whole stage's bytes, load k-tile kt of A's rows from m0
  // and of this CTA's B_ROWS rows of B from n0 + rank * B_ROWS (multicast into every CTA of the cluster if CLUSTER > 1)
  __device__ __forceinline__ void fill(int s, const TmaDesc* mapA, const TmaDesc* mapB, int kt, int m0, int n0,
                                       uint32_t rank) const {
    const uint32_t bar = full(s), dst = a(s);
    mbarrier_arrive_expect_tx(bar, STAGE_BYTES);
    cp_async_bulk_tensor_2d_g2s(dst, mapA, kt * BK, m0, bar);
    if constexpr (CLUSTER == 1)
      cp_async_bulk_tensor_2d_g2s(dst + A_TILE, mapB, kt * BK, n0, bar);
    else
      cp_async_bulk_tensor_2d_g2s_multicast(dst + A_TILE + rank * B_ROWS * ROW_BYTES, mapB, kt * BK, n0 + rank * B_ROWS,
                                            bar, (1 << CLUSTER) - 1);
  }
  // producer thread: k-tile kt at ring position `pos` once its slot is free (the first pass finds every slot free)
  __device__ __forceinline__ void load(int pos, const TmaDesc* mapA, const TmaDesc* mapB, int kt, int m0, int n0,
                                       uint32_t rank = 0) const {
    const int s = pos % STAGES;
    mbarrier_wait_parity(empty(s), ((pos / STAGES) & 1) ^ 1);
    fill(s, mapA, mapB, kt, m0, n0, rank);
  }

  // consumer warpgroup (A's rows [row, row + 64)): the k-tile at ring position `pos` once landed, its wgmmas one group;
  // returns once the group before has completed (one stays in flight): the slot of position pos - 1 may be released
  template <uint32_t SWZ, int R>
  __device__ __forceinline__ void mma(float (&acc)[R], int row, int pos) const {
    const int s = pos % STAGES;
    mbarrier_wait_parity(full(s), (pos / STAGES) & 1);
    mma_stage<BK, SWZ, 1>(acc, a(s) + row * ROW_BYTES, b(s));
  }
  // consumer warp, if `when`: slot s is read (its wgmmas complete); lane 0 arrives on its empty barrier in each CTA
  __device__ __forceinline__ void release(int s, bool when = true) const {
    if (when && threadIdx.x % 32 == 0) {
      if constexpr (CLUSTER == 1) {
        mbarrier_arrive(empty(s));
      } else {
#pragma unroll
        for (int c = 0; c < CLUSTER; ++c) mbarrier_arrive_cluster(empty(s), c);
      }
    }
  }
};

// ---------------------------------------------------------------- tile order of the persistent rungs (7-9)
// cluster tile u of num_mc x num_n in grouped order: `group` cluster rows at a time, down each column of the group
// before the next column, so the clusters running at once share B's columns (and A's rows) in L2
__device__ __forceinline__ void grouped_tile(int u, int num_mc, int num_n, int group, int& mc, int& n) {
  const int per_group = group * num_n, first = (u / per_group) * group;
  const int rows = min(num_mc - first, group);
  mc = first + (u % per_group) % rows;
  n = (u % per_group) / rows;
}

// ---------------------------------------------------------------- split-K (rungs 8-9)
// the work units of a split-K grid: unit u is cluster tile u / splits of num_mc x num_n (grouped order, GROUP cluster
// rows at a time) and split u % splits of its num_kt k-tiles, `per` to a split (the host leaves no split empty)
template <int GROUP>
struct SplitUnits {
  int num_mc, num_n, splits, count, num_kt, per;
  __device__ __forceinline__ SplitUnits(int num_mc_, int num_n_, int splits_, int num_kt_)
      : num_mc(num_mc_), num_n(num_n_), splits(splits_), count(num_mc_ * num_n_ * splits_), num_kt(num_kt_),
        per((num_kt_ + splits_ - 1) / splits_) {}
  // unit u: its cluster tile (mc, n) and its k-tiles [kt0, kt1)
  __device__ __forceinline__ void unit(int u, int& mc, int& n, int& kt0, int& kt1) const {
    grouped_tile(u / splits, num_mc, num_n, GROUP, mc, n);
    kt0 = (u % splits) * per;
    kt1 = min(num_kt, kt0 + per);
  }
};
// the reduction: C[i] = the sum of the fp32 partial planes ws[z * total + i], z = 0 .. splits - 1 in order
// (a grid-stride loop)
__device__ __forceinline__ void reduce_splits(const float* __restrict__ ws, out_t* __restrict__ C, int64_t total,
                                              int splits) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    float s = 0.f;
    for (int z = 0; z < splits; ++z) s += ws[z * total + i];
    C[i] = (out_t)s;
  }
}
