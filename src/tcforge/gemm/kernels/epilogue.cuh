// Epilogues: one consumer warpgroup's accumulators to C. Direct (registers to global memory), staged (registers to
// 128-byte-swizzled shared memory, then a TMA store per warp and sub-tile), transposed (the swapped product), and
// the deferred / spread forms that hold a tile's C in registers while the next tile's wgmmas run.
// one TMA store of a staged box, in a bulk group of its own
__device__ __forceinline__ void tma_store(const TmaDesc* map, int c0, int c1, uint32_t src) {
  cp_async_bulk_tensor_2d_s2g(map, c0, c1, src);
  cp_async_bulk_commit_group();
}
// ---------------------------------------------------------------- output conversion
// PLANE: an fp32 split-K plane, whatever the output type (the in-kernel split-K build's planes mode)
template <bool PLANE = false>
__device__ __forceinline__ void store_pair(void* C, int64_t idx, float x, float y, bool two) {
  if constexpr (OUT_BYTES == 4 || PLANE) {
    float* c = reinterpret_cast<float*>(C) + idx;
    if (two) *reinterpret_cast<float2*>(c) = make_float2(x, y); else c[0] = x;
  } else if constexpr (OUT_KIND == 1) {
    __half* c = reinterpret_cast<__half*>(C) + idx;
    if (two) *reinterpret_cast<__half2*>(c) = __floats2half2_rn(x, y); else c[0] = __float2half_rn(x);
  } else {
    __nv_bfloat16* c = reinterpret_cast<__nv_bfloat16*>(C) + idx;
    if (two) *reinterpret_cast<__nv_bfloat162*>(c) = __floats2bfloat162_rn(x, y); else c[0] = __float2bfloat16_rn(x);
  }
}
__device__ __forceinline__ uint32_t pack_pair(float x, float y) {
  if constexpr (OUT_KIND == 1) { __half2 h = __floats2half2_rn(x, y); return *reinterpret_cast<uint32_t*>(&h); }
  else { __nv_bfloat162 h = __floats2bfloat162_rn(x, y); return *reinterpret_cast<uint32_t*>(&h); }
}

// the per-tensor fp8 scales' product; 16-bit inputs take no scales (validate.py refuses them), so no multiply
__device__ __forceinline__ float scaled(float x, float alpha) {
  if constexpr (IN_KIND == 2) return x * alpha;
  else return x;
}
// ---------------------------------------------------------------- epilogues (one consumer warpgroup's rows)
// (columns from J0 * 8 on: the staged epilogue's tail when BN is not a whole number of 128-byte sub-tiles)
template <bool PLANE = false, int J0 = 0>
__device__ __forceinline__ void epilogue_direct(float (&acc)[MI][ACC_N], void* C, int M, int N, int64_t ldc,
                                                int row0, int col0, float alpha) {
  const int lt = threadIdx.x % 128, warp = lt / 32, lane = lt % 32;
  const bool pair_ok = (ldc % 2) == 0;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int j = J0; j < BN / 8; ++j) {
      const int col = col0 + j * 8 + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + mi * 64 + warp * 16 + lane / 4 + h * 8;
        if (row < M && col < N) {
          const float x = acc[mi][j * 4 + h * 2] * alpha, y = acc[mi][j * 4 + h * 2 + 1] * alpha;
          if constexpr (TRANS_C) {   // C^T: this (row, col) is C[col][row]; the pair runs down a column of C
            store_pair<PLANE>(C, (int64_t)col * ldc + row, x, 0.f, false);
            if (col + 1 < N) store_pair<PLANE>(C, (int64_t)(col + 1) * ldc + row, y, 0.f, false);
          } else {
            const bool two = pair_ok && col + 1 < N;
            store_pair<PLANE>(C, (int64_t)row * ldc + col, x, y, two);
            if (!two && col + 1 < N) store_pair<PLANE>(C, (int64_t)row * ldc + col + 1, y, 0.f, false);
          }
        }
      }
    }
  }
}

// swapped product: the warpgroup's 64 x BN accumulator tile is C^T; C's rows col0.. (BN of them) take it transposed,
// staged as BN rows of 128 bytes per 128 bytes of C columns (64 16-bit or 32 fp32 values: 1 or 2 buffers)
__device__ __forceinline__ void epilogue_tma_trans(float (&acc)[MI][ACC_N], const TmaDesc* mapC, uint8_t* epi, int wg,
                                                   int row0, int col0, float alpha) {
  const int lt = threadIdx.x % 128, warp = lt / 32, lane = lt % 32;
  constexpr int CHUNKS = WG_ROWS * OUT_BYTES / 128;
  uint8_t* bufs = epi + wg * EPI_BUFS * EPI_BUF;
  if (lt == 0) cp_async_bulk_wait_group_read<0>();   // the previous tile's stores have read every buffer
  bar_sync(1 + wg, 128);
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t r = warp * 16 + lane / 4 + h * 8;   // the C column (inside this warpgroup's 64)
      const uint32_t c = j * 8 + 2 * (lane % 4);          // the C row (inside the tile's BN)
      // 32-bit shared-window addresses (with 64-bit generic pointers the 16-bit builds of BN > 64 spilled)
      const uint32_t sbuf = smem_u32(bufs + (r * OUT_BYTES / 128) * EPI_BUF);
      const uint32_t byte = (r * OUT_BYTES) % 128;
      const float x = acc[0][j * 4 + h * 2] * alpha, y = acc[0][j * 4 + h * 2 + 1] * alpha;
      if constexpr (OUT_BYTES == 4) {
        st_shared_f32(sbuf + swz(c * 128 + byte, 0x70u), x);
        st_shared_f32(sbuf + swz((c + 1) * 128 + byte, 0x70u), y);
      } else {
        const uint32_t p = pack_pair(x, y);
        st_shared_u16(sbuf + swz(c * 128 + byte, 0x70u), p & 0xFFFFu);
        st_shared_u16(sbuf + swz((c + 1) * 128 + byte, 0x70u), p >> 16);
      }
    }
  }
  fence_proxy_async_shared_cta();
  bar_sync(1 + wg, 128);
  if (lt == 0) {
#pragma unroll
    for (int q = 0; q < CHUNKS; ++q) tma_store(mapC, row0 + q * EPI_N, col0, smem_u32(bufs + q * EPI_BUF));
  }
}

// the staged epilogue's loop over this warpgroup's rows, one 128-byte-wide sub-tile at a time: each warp stages its
// 16 rows of a sub-tile (`stage(rows, mi, c, fxor)` writes m-block mi's rows of sub-tile c) and stores them with its
// own TMA store (box EPI_N x 16), so no warp waits for another. Staging rows are 128 bytes whose 16-byte chunks are
// XORed with row % 8 (TMA's 128-byte swizzle); every row a thread writes has row % 8 == its fragment row, so the XOR
// is a per-thread constant. 16-bit C: stmatrix, lane L giving the row address of matrix L / 8 (fragment jj + L / 16,
// rows + 8 * ((L / 8) % 2)); fp32 C: a float2 per fragment row with st.shared.v2 (the 8 bytes at column 2 * (lane % 4))
// (sub-tiles C0 .. C1 - 1 only, for the deferred epilogue's parts)
template <int C0 = 0, int C1 = EPI_SUBS, class Stage>
__device__ __forceinline__ void epilogue_staged(uint32_t lane, uint32_t warp, const TmaDesc* mapC, uint8_t* epi,
                                                int wg, int row0, int col0, uint32_t& epi_count, Stage stage) {
  const uint32_t frow = OUT_BYTES == 4 ? lane / 4 : (lane % 8) + 8 * ((lane / 8) % 2);   // row inside 16
  const uint32_t fxor = OUT_BYTES == 4 ? ((((lane % 4) / 2) ^ (lane / 4)) << 4) | (8 * (lane % 2))
                                       : (((lane / 16) ^ (lane % 8)) << 4);
  const uint32_t warp_rows = smem_u32(epi) + wg * EPI_BUFS * EPI_BUF + warp * 16 * 128;   // 16 rows, 1024-aligned
#pragma unroll
  for (int c = C0; c < C1; ++c) {
    const uint32_t buf = warp_rows + (epi_count % EPI_BUFS) * EPI_BUF;
    if (lane == 0) cp_async_bulk_wait_group_read<(EPI_BUFS - 1) * MI>();   // this warp's store that last used it has read it
    __syncwarp();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) stage(buf + (mi * 64 + frow) * 128, mi, c, fxor);
    fence_proxy_async_shared_cta();   // each thread's staging writes, before the async proxy reads them
    __syncwarp();
    if (lane == 0) {
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) tma_store(mapC, col0 + c * EPI_N, row0 + mi * 64 + warp * 16, buf + mi * 64 * 128);
    }
    ++epi_count;
  }
}

// lane and warp (inside the warpgroup) read here (volatile), not hoisted out of the tile loop: kept live across the
// mainloop, the epilogue's addresses cost the stream-K builds a spill
__device__ __forceinline__ void lane_and_warp(uint32_t& lane, uint32_t& warp) {
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(warp));
  warp = (warp % 128) / 32;
}

// this warpgroup's rows of C through the staged epilogue (C^T through epilogue_tma_trans for the swapped product;
// sub-tiles before C1 only: the spread fp32 epilogue's first half)
template <int C1 = EPI_SUBS>
__device__ __forceinline__ void epilogue_tma(float (&acc)[MI][ACC_N], const TmaDesc* mapC, uint8_t* epi, int wg,
                                             int row0, int col0, float alpha, uint32_t& epi_count, void* C, int M,
                                             int N, int64_t ldc) {
  if constexpr (TRANS_C) {
    epilogue_tma_trans(acc, mapC, epi, wg, row0, col0, alpha);
    return;
  }
  uint32_t lane, warp;
  lane_and_warp(lane, warp);
  constexpr int JS = EPI_N / 8;   // 8-column fragments per sub-tile
  // a BN that is not a whole number of sub-tiles (144: 4.5 fp32 / 2.25 16-bit ones): the last columns go straight
  // from registers to C (a sub-tile store would write the next tile's columns)
  if constexpr (BN % EPI_N != 0) epilogue_direct<false, (BN / EPI_N) * JS>(acc, C, M, N, ldc, row0, col0, alpha);
  epilogue_staged<0, C1>(lane, warp, mapC, epi, wg, row0, col0, epi_count, [&](uint32_t rows, int mi, int c,
                                                                                uint32_t fxor) {
    if constexpr (OUT_BYTES == 4) {
#pragma unroll
      for (int jj = 0; jj < JS; ++jj) {
        const float* f = &acc[mi][(c * JS + jj) * 4];
        const uint32_t off = (jj * 32) ^ fxor;
        st_shared_v2_f32(rows + off, scaled(f[0], alpha), scaled(f[1], alpha));
        st_shared_v2_f32(rows + 8 * 128 + off, scaled(f[2], alpha), scaled(f[3], alpha));
      }
    } else {
#pragma unroll
      for (int jj = 0; jj < JS; jj += 2) {
        const float* f = &acc[mi][(c * JS + jj) * 4];   // fragments jj and jj + 1: 8 values
        stmatrix_m8n8_x4_b16(rows + ((jj * 16) ^ fxor), pack_pair(scaled(f[0], alpha), scaled(f[1], alpha)),
                    pack_pair(scaled(f[2], alpha), scaled(f[3], alpha)),
                    pack_pair(scaled(f[4], alpha), scaled(f[5], alpha)),
                    pack_pair(scaled(f[6], alpha), scaled(f[7], alpha)));
      }
    }
  });
}

// the held part of this warpgroup's tile (scaled): 16-bit C as pairs in half the accumulators' registers, so the
// next tile's wgmmas can start before it is staged (p[q] holds acc[2q], acc[2q + 1], the pairs stmatrix takes from a
// fragment); fp32 C (spread) its last DEFER_SUBS sub-tiles as they are (p[i] holds acc[ACC_N - DEFER_WORDS + i])
__device__ __forceinline__ void hold_acc(float (&acc)[MI][ACC_N], uint32_t (&p)[DEFER_WORDS], float alpha) {
  if constexpr (OUT_BYTES == 4) {
#pragma unroll
    for (int i = 0; i < DEFER_WORDS; ++i) p[i] = __float_as_uint(scaled(acc[0][ACC_N - DEFER_WORDS + i], alpha));
  } else {
#pragma unroll
    for (int q = 0; q < ACC_N / 2; ++q) p[q] = pack_pair(scaled(acc[0][2 * q], alpha), scaled(acc[0][2 * q + 1], alpha));
  }
}
// epilogue_tma from the held words, sub-tiles C0 .. C1 - 1 of them (the tile's last DEFER_SUBS; called under the
// next tile's wgmmas; MI == 1); col0 is the tile's
template <int C0 = 0, int C1 = DEFER_SUBS>
__device__ __forceinline__ void epilogue_tma_held(const uint32_t (&p)[DEFER_WORDS], const TmaDesc* mapC, uint8_t* epi,
                                                    int wg, int row0, int col0, uint32_t& epi_count) {
  uint32_t lane, warp;
  lane_and_warp(lane, warp);
  constexpr int HELD0 = EPI_SUBS - DEFER_SUBS;   // the first held sub-tile's index in the tile
  epilogue_staged<C0 + HELD0, C1 + HELD0>(lane, warp, mapC, epi, wg, row0, col0, epi_count,
                                          [&](uint32_t rows, int, int c, uint32_t fxor) {
    constexpr int JS = EPI_N / 8;
    if constexpr (OUT_BYTES == 4) {
#pragma unroll
      for (int jj = 0; jj < JS; ++jj) {
        const uint32_t* f = &p[((c - HELD0) * JS + jj) * 4];
        const uint32_t off = (jj * 32) ^ fxor;
        st_shared_v2_f32(rows + off, __uint_as_float(f[0]), __uint_as_float(f[1]));
        st_shared_v2_f32(rows + 8 * 128 + off, __uint_as_float(f[2]), __uint_as_float(f[3]));
      }
    } else {
#pragma unroll
      for (int jj = 0; jj < JS; jj += 2) {
        const int q = ((c - HELD0) * JS + jj) * 2;
        stmatrix_m8n8_x4_b16(rows + ((jj * 16) ^ fxor), p[q], p[q + 1], p[q + 2], p[q + 3]);
      }
    }
  });
}
// held sub-tile d (a run-time index) through epilogue_tma_held<d, d + 1>: the words are indexed at compile time
template <int D = 0>
__device__ __forceinline__ void epilogue_tma_held_one(int d, const uint32_t (&p)[DEFER_WORDS], const TmaDesc* mapC,
                                                      uint8_t* epi, int wg, int row0, int col0, uint32_t& epi_count) {
  if constexpr (D < DEFER_SUBS) {
    if (d == D) epilogue_tma_held<D, D + 1>(p, mapC, epi, wg, row0, col0, epi_count);
    else epilogue_tma_held_one<D + 1>(d, p, mapC, epi, wg, row0, col0, epi_count);
  }
}

__device__ __forceinline__ float load_alpha(const float* sa, const float* sb) {
  if constexpr (SPLITK) return 1.f;   // applied by the reduction
  float a = 1.f;
  if (sa) a *= *sa;
  if (sb) a *= *sb;
  return a;
}

