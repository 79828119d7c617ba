// The cp.async baseline (rung 1, USE_TMA = 0): every thread copies its chunks of each stage with cp.async (zero-
// filling what lies outside the matrices), then every warpgroup issues its wgmmas; a STAGES-deep cp.async pipeline,
// the epilogue straight from registers. No producer warpgroup, no mbarrier, no cluster.
__device__ __forceinline__ void cp_async_gemm(const Ctx& x) {
  const Schedule& sc = x.sched;
  const uint32_t a_ring = x.a_ring, b_ring = x.b_ring;
  const void* const A = x.A;
  const void* const B = x.B;
  const int M = x.M, N = x.N, K = x.K;
  const long long lda = x.lda, ldb = x.ldb;
  const int wg = threadIdx.x / 128;
  griddepcontrol_wait();
  const float alpha = load_alpha(x.scale_a, x.scale_b);
  const uint8_t* Ab = reinterpret_cast<const uint8_t*>(x.A);
  const uint8_t* Bb = reinterpret_cast<const uint8_t*>(x.B);
  float acc[MI][ACC_N];
  for (int u = blockIdx.x; u < sc.units; u += gridDim.x) {
    const Unit w = unit_of(u, 0, sc.num_mc, sc.num_nc, sc.num_kt, sc.splits, sc.group_m);
    const int m0 = w.m_tile * BM, n0 = w.n_tile * BN;
    auto load_stage = [&](int kt, int s) {
      const int k0 = kt * BK;
      constexpr int A_CHUNKS = A_TILE / 16, ROW_CHUNKS = BK_BYTES / 16;
#pragma unroll
      for (int i = 0; i < (A_CHUNKS + NTHREADS - 1) / NTHREADS; ++i) {
        const int c = threadIdx.x + i * NTHREADS;
        if (c < A_CHUNKS) {
          if constexpr (A_MN) {   // A stored (K, M) with row stride lda: 64-column slabs, as an MN-major B
            constexpr int MCH = BM / 8;   // 16-byte chunks along M
            const int kr = c / MCH, mc = c % MCH;
            const int gm = m0 + mc * 8;
            const bool ok = (k0 + kr < K) && (gm < M);
            const void* src = ok ? Ab + ((int64_t)(k0 + kr) * lda + gm) * IN_BYTES : A;
            cp_async_cg_16(a_ring + s * A_TILE + (mc / 8) * (BK * 128) + swz(kr * 128 + (mc % 8) * 16, 0x70u), src, ok);
          } else {
            const int r = c / ROW_CHUNKS, kc = c % ROW_CHUNKS;
            const int gk = k0 + kc * (16 / IN_BYTES);
            const bool ok = (m0 + r < M) && (gk < K);
            const void* src = ok ? Ab + ((int64_t)(m0 + r) * lda + gk) * IN_BYTES : A;
            cp_async_cg_16(a_ring + s * A_TILE + swz(r * BK_BYTES + kc * 16, K_SWZ_MASK), src, ok);
          }
        }
      }
      constexpr int B_CHUNKS = B_TILE / 16;
#pragma unroll
      for (int i = 0; i < (B_CHUNKS + NTHREADS - 1) / NTHREADS; ++i) {
        const int c = threadIdx.x + i * NTHREADS;
        if (c < B_CHUNKS) {
          if constexpr (B_KMAJOR) {
            const int r = c / ROW_CHUNKS, kc = c % ROW_CHUNKS;
            const int gk = k0 + kc * (16 / IN_BYTES);
            const bool ok = (n0 + r < N) && (gk < K);
            const void* src = ok ? Bb + ((int64_t)(n0 + r) * ldb + gk) * IN_BYTES : B;
            cp_async_cg_16(b_ring + s * B_TILE + swz(r * BK_BYTES + kc * 16, K_SWZ_MASK), src, ok);
          } else {
            constexpr int NCH = BN / 8;   // 16-byte chunks along N
            const int kr = c / NCH, nc = c % NCH;
            const int gn = n0 + nc * 8;
            const bool ok = (k0 + kr < K) && (gn < N);
            const void* src = ok ? Bb + ((int64_t)(k0 + kr) * ldb + gn) * IN_BYTES : B;
            cp_async_cg_16(b_ring + s * B_TILE + (nc / 8) * B_SLAB + swz(kr * 128 + (nc % 8) * 16, 0x70u), src, ok);
          }
        }
      }
    };
    const int nk = w.kt1 - w.kt0;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) zero(acc[mi]);
#pragma unroll
    for (int p = 0; p < STAGES - 1; ++p) {
      if (p < nk) load_stage(w.kt0 + p, p);
      cp_async_commit_group();
    }
    for (int i = 0; i < nk; ++i) {
      const int s = i % STAGES;
      cp_async_wait_group<STAGES - 2>();
      fence_proxy_async_shared_cta();   // cp.async wrote through the generic proxy; wgmma reads through the async proxy
      __syncthreads();
      if (i + STAGES - 1 < nk) load_stage(w.kt0 + i + STAGES - 1, (i + STAGES - 1) % STAGES);
      cp_async_commit_group();
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) warpgroup_fence_operand(acc[mi]);
      wgmma_fence();
      mma_stage(acc, a_ring + s * A_TILE, b_ring + s * B_TILE, wg, i == 0);
      wgmma_commit_group();
      wgmma_wait_group<0>();
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) warpgroup_fence_operand(acc[mi]);
    }
    cp_async_wait_group<0>();
    __syncthreads();
    // this CTA's last unit is loaded: the next PDL launch may be scheduled
    if (threadIdx.x == 0 && u + (int)gridDim.x >= sc.units) griddepcontrol_launch_dependents();
    const int split = u % sc.splits;
    epilogue_direct(acc, reinterpret_cast<uint8_t*>(x.C) + split * x.ws_stride * OUT_BYTES, M, N, x.ldc,
                    m0 + wg * WG_ROWS, n0, alpha);
  }
}
