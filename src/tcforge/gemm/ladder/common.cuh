// What the nine ladder rungs (rung*_*.cu beside this file) share: the PTX wrappers of tcforge's header library
// (include/tcforge: mbarrier, TMA, wgmma fences, cluster, cp.async, setmaxnreg), the two wgmma instructions they
// issue, the two epilogues (direct stores: rungs 1-4; staged TMA stores: rungs 5-9), the persistent rungs' tile
// order and the split-K reduction. A rung includes only this header: the rung file plus this one read alone.
// Every kernel reads fp16 A (M x K, row-major) and B (N x K, row-major: K-major, i.e. the product is A @ B^T) and
// writes C (M x N, row-major) as fp32, or bf16 when compiled with -DOUT_BF16=1.
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
__device__ __forceinline__ void st_shared_b32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
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
// C[i] = the sum of the fp32 partial planes ws[z * total + i], z = 0 .. splits - 1 in order (a grid-stride loop)
__device__ __forceinline__ void reduce_splits(const float* __restrict__ ws, out_t* __restrict__ C, int64_t total,
                                              int splits) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    float s = 0.f;
    for (int z = 0; z < splits; ++z) s += ws[z * total + i];
    C[i] = (out_t)s;
  }
}
