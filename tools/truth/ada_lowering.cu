// Ada on Hopper: the proof kernel of the wgmma lowering of Ada's FP8 mma (docs/numerics.md, "Ada on Hopper").
// Built for sm_90a and launched from tools/truth/ada_lowering.py through CuPy:
//   nvcc -cubin -O3 -gencode=arch=compute_90a,code=sm_90a -I src/tcforge/include \
//        -I src/tcforge/layers/enc5/gpu/kernels tools/truth/ada_lowering.cu -o ada_lowering.cubin
//
// Ada's `mma.sync.m16n8k32.row.col.f16.e4m3.e4m3.f16` is two 16-term blocks (k 0..15 with C, then k 16..31 onto
// the first block's f16 result). The lowering runs each block as one `wgmma.mma_async.m64n8k32.f16.e4m3.e4m3`, the
// second accumulating onto the first, in two forms: "padded" (A and B of a step hold that half in k 0..15 and zeros
// in k 16..31) and "shared B" (B whole in both steps; A keeps its own k of the step's half, zeros elsewhere); then the
// one rule wgmma does not apply: a zero result is -0 when C is -0 and all 32 products are negative zeros.
//
// One warpgroup per block handles four Ada tiles at a time (grid-stride): it generates their inputs in shared memory
// with the truth generators (the mma truth's families of truth_kernels.cu or the tensor-core families of
// wgmma_kernels.cu, twins of tcforge.numerics.truth), or copies given tiles (the published vectors), writes the
// operands in the wgmma layout the H100 truth used ((LBO, SBO, swizzle) = (16, 256, 32-byte)), and issues for each
// tile q one wgmma pair per form with A = the four tiles' rows (64) and B = tile q's columns: warp q's rows are tile
// q's output. Every output of both forms is compared with ada_element (enc5_mma.cuh, the exact-integer Ada model of
// the enc5 kernels); mismatches, special-value coverage and the first mismatching outputs are counted with atomics,
// and the inputs and outputs of the first `keep` tiles are written out for the CPU check.
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tcforge/fp8.cuh"
#include "tcforge/smem.cuh"
#include "tcforge/wgmma.cuh"

namespace mt {  // the mma truth's input families (ab_code, c_bits; its kernels come along unused)
#include "truth_kernels.cu"
}
#include "wgmma_kernels.cu"  // RNG, the tensor-core families (gen_tc_element), kmajor_off, WgF16_e4m3_e4m3
#include "enc5_mma.cuh"      // ada_element

#define ADA_SET_MMA 0    // truth.mma_tile_inputs: stream = kind, 1024 counter slots per tile
#define ADA_SET_TC 1     // truth.tc_tile_inputs of mma.m16n8k32.f16.e4m3.e4m3: 4096 counter slots per tile
#define ADA_SET_GIVEN 2  // tiles read from gA, gB, gC
#define ADA_QUAD 4u      // Ada tiles per warpgroup step (one per warp)
#define ADA_ELEMS 896u   // A 512 + B 256 + C 128 elements per tile
#define ADA_MAXREC 64u   // mismatch records kept per family (a thread records its first mismatch only)
#define ADA_REC_WORDS 8u

// counters (u64): kept per launch, summed by the host
// (bad / raw: padded form; _S: shared-B form; the coverage counts are of the padded form's outputs)
enum {
  CNT_TILES, CNT_BAD_OUT, CNT_BAD_TILES, CNT_RAW_BAD, CNT_FIXUPS, CNT_BAD_OUT_S, CNT_BAD_TILES_S, CNT_RAW_BAD_S,
  CNT_NAN, CNT_INF, CNT_NEGZERO, CNT_POSZERO, CNT_SUBNORMAL, CNT_NREC, CNT_CHECKSUM, CNT_N
};

// element j of tile T of a family set into the raw tile buffers (A [row][k] bytes, B [k][n] bytes, C [row][n])
__device__ __forceinline__ void gen_element(int set, int fam, uint32_t seed0, uint32_t stream, uint32_t per_seed_log2,
                                            uint32_t T, uint32_t lt, uint32_t j, const uint8_t* gA,
                                            const uint8_t* gB, const uint16_t* gC, uint8_t* A, uint8_t* B,
                                            uint16_t* C) {
  if (set == ADA_SET_GIVEN) {
    if (j < 512u) A[lt * 512u + j] = gA[(u64)T * 512u + j];
    else if (j < 768u) B[lt * 256u + (j - 512u)] = gB[(u64)T * 256u + (j - 512u)];
    else C[lt * 128u + (j - 768u)] = gC[(u64)T * 128u + (j - 768u)];
    return;
  }
  const uint32_t seed = seed0 + (T >> per_seed_log2), tile = T & ((1u << per_seed_log2) - 1u);
  const uint32_t key = rng_key(seed, stream);
  if (set == ADA_SET_TC) {
    gen_tc_element(0, 0, 2, fam, 16u, 8u, 32u, key, tile, lt, j, A, B, reinterpret_cast<uint8_t*>(C));
    return;
  }
  // the element mapping of k_gen_mma (truth_kernels.cu); `run` compares the result with truth.mma_tile_inputs
  const uint32_t base = tile * 1024u, p0 = rng_at(key, base + 896u);
  if (j < 512u) {
    const uint32_t row = j >> 5, k = j & 31u, mode = p0 & 1u;
    const bool copy = fam == 5 && (mode == 0u ? k >= 16u : (k & 2u) != 0u);
    const uint32_t src = fam == 5 ? (mode == 0u ? (k & 15u) : (k & ~2u)) : k;
    const uint32_t code = mt::ab_code(fam, rng_at(key, base + row * 32u + src), p0);
    A[lt * 512u + j] = (uint8_t)(copy ? code ^ 0x80u : code);
  } else if (j < 768u) {
    const uint32_t jj = j - 512u, k = jj >> 3, col = jj & 7u;
    const uint32_t src = fam == 5 ? ((p0 & 1u) == 0u ? (k & 15u) : (k & ~2u)) : k;
    B[lt * 256u + jj] = (uint8_t)mt::ab_code(fam, rng_at(key, base + 512u + src * 8u + col), p0);
  } else {
    const uint32_t jj = j - 768u;
    C[lt * 128u + jj] = (uint16_t)mt::c_bits(fam, rng_at(key, base + 768u + jj), p0);
  }
}

// The IEEE zero sign the wgmma steps never produce (they write +0 for every zero result): true when each of the 32
// products of row words ra and column words rb is a negative zero (a zero factor and opposite signs).
__device__ __forceinline__ bool products_all_negzero(const uint32_t* ra, const uint32_t* rb) {
  bool all = true;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t nza = ((ra[i] & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) & 0x80808080u;  // bit 7 of a byte: code nonzero
    const uint32_t nzb = ((rb[i] & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) & 0x80808080u;
    all &= (nza & nzb) == 0u && ((ra[i] ^ rb[i]) & 0x80808080u) == 0x80808080u;
  }
  return all;
}

__device__ __forceinline__ uint32_t pick4(const uint32_t (&v)[4], uint32_t w) {
  return w == 0u ? v[0] : (w == 1u ? v[1] : (w == 2u ? v[2] : v[3]));
}

__device__ __forceinline__ u64 warp_sum(u64 x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xFFFFFFFFu, x, o);
  return x;
}

// One lowering over a quad of tiles: for each tile q, block 1 (A descriptor da1, B db1[q]) onto C, block 2 (da2,
// db2[q]) onto its f16 result, all eight wgmma in one group (the pairs share an accumulator and run in order). Warp w's
// rows of the pair whose B is tile w's are tile w's output: dw = its rows g and g + 8 (f16x2, columns 2t, 2t + 1).
__device__ __forceinline__ void lower_quad(uint32_t (&dw)[2], const uint32_t (&cw)[2], uint32_t w, uint64_t da1,
                                           uint64_t da2, const uint64_t (&db1)[ADA_QUAD],
                                           const uint64_t (&db2)[ADA_QUAD]) {
  uint32_t acc[ADA_QUAD][2];
#pragma unroll
  for (uint32_t q = 0; q < ADA_QUAD; ++q) {
    acc[q][0] = q == w ? cw[0] : 0u;  // the other warps' rows of pair q are unused: they start at +0
    acc[q][1] = q == w ? cw[1] : 0u;
    tcf::warpgroup_fence_operand(acc[q]);
  }
  tcf::wgmma_fence();
#pragma unroll
  for (uint32_t q = 0; q < ADA_QUAD; ++q) {
    WgF16_e4m3_e4m3::run(acc[q], da1, db1[q]);  // block 1: k 0..15 onto C
    WgF16_e4m3_e4m3::run(acc[q], da2, db2[q]);  // block 2: k 16..31 onto block 1's f16 result
  }
  tcf::wgmma_commit_group();
  tcf::wgmma_wait_group<0>();
#pragma unroll
  for (uint32_t q = 0; q < ADA_QUAD; ++q) tcf::warpgroup_fence_operand(acc[q]);
  const uint32_t r0[ADA_QUAD] = {acc[0][0], acc[1][0], acc[2][0], acc[3][0]};
  const uint32_t r1[ADA_QUAD] = {acc[0][1], acc[1][1], acc[2][1], acc[3][1]};
  dw[0] = pick4(r0, w);
  dw[1] = pick4(r1, w);
}

// Two forms of the lowering run on every tile. "padded": step 1 A = [a(k 0..15) | 0], B = [b(k 0..15) | 0]; step 2
// A = [a(k 16..31) | 0], B = [b(k 16..31) | 0]. "shared B": B whole in both steps, A masked: step 1 [a(k 0..15) | 0],
// step 2 [0 | a(k 16..31)] (the form a GEMM's B tile feeds as it is).
extern "C" __global__ void __launch_bounds__(128, 5) k_ada_lowering(
    int set, int fam, uint32_t seed0, uint32_t stream, uint32_t per_seed_log2, uint32_t tile0, uint32_t ntiles,
    const uint8_t* gA, const uint8_t* gB, const uint16_t* gC, uint32_t keep, uint8_t* kA, uint8_t* kB,
    uint16_t* kC, uint16_t* kD, uint16_t* kDs, uint16_t* kAda, u64* counts, uint32_t* recs) {
  __shared__ __align__(1024) uint8_t sa_lo[2048];   // [a(k 0..15) | 0] of the four tiles' 64 rows
  __shared__ __align__(1024) uint8_t sa_hi[2048];   // [a(k 16..31) | 0]
  __shared__ __align__(1024) uint8_t sa_hi2[2048];  // [0 | a(k 16..31)]
  __shared__ __align__(1024) uint8_t sb_lo[ADA_QUAD][256];  // tile q's B, K-major (8 rows n x 32 bytes of k)
  __shared__ __align__(1024) uint8_t sb_hi[ADA_QUAD][256];
  __shared__ __align__(1024) uint8_t sb_all[ADA_QUAD][256];
  __shared__ __align__(16) uint32_t a_raw[ADA_QUAD * 16u * 8u];  // tile, row: its 32 codes in 8 words (k order)
  __shared__ __align__(16) uint32_t bt_raw[ADA_QUAD * 8u * 8u];  // tile, column: its 32 codes in 8 words
  __shared__ __align__(16) uint8_t b_raw[ADA_QUAD * 256u];       // tile, [k][n]
  __shared__ __align__(16) uint16_t c_raw[ADA_QUAD * 128u];      // tile, [row][n]
  const uint32_t tid = threadIdx.x, w = tid >> 5, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
  uint8_t* a_bytes = reinterpret_cast<uint8_t*>(a_raw);

  // the zero halves stay: each quad below writes only the 16-byte data chunks of every row
  for (uint32_t i = tid; i < 2048u; i += 128u) sa_lo[i] = sa_hi[i] = sa_hi2[i] = 0;
  for (uint32_t i = tid; i < ADA_QUAD * 256u; i += 128u) (&sb_lo[0][0])[i] = (&sb_hi[0][0])[i] = 0;
  const uint64_t da_lo = tcf::make_smem_desc(tcf::smem_u32(sa_lo), 16u, 256u, 3u);
  const uint64_t da_hi = tcf::make_smem_desc(tcf::smem_u32(sa_hi), 16u, 256u, 3u);
  const uint64_t da_hi2 = tcf::make_smem_desc(tcf::smem_u32(sa_hi2), 16u, 256u, 3u);
  uint64_t db_lo[ADA_QUAD], db_hi[ADA_QUAD], db_all[ADA_QUAD];
#pragma unroll
  for (uint32_t q = 0; q < ADA_QUAD; ++q) {
    db_lo[q] = tcf::make_smem_desc(tcf::smem_u32(sb_lo[q]), 16u, 256u, 3u);
    db_hi[q] = tcf::make_smem_desc(tcf::smem_u32(sb_hi[q]), 16u, 256u, 3u);
    db_all[q] = tcf::make_smem_desc(tcf::smem_u32(sb_all[q]), 16u, 256u, 3u);
  }

  uint32_t n_bad = 0, n_bad_tiles = 0, n_raw_bad = 0, n_fix = 0, n_bad_s = 0, n_bad_tiles_s = 0, n_raw_bad_s = 0;
  uint32_t n_nan = 0, n_inf = 0, n_neg0 = 0, n_pos0 = 0, n_sub = 0;
  u64 checksum = 0;
  bool recorded = false;
  const uint32_t nquads = ntiles / ADA_QUAD;
  for (uint32_t quad = blockIdx.x; quad < nquads; quad += gridDim.x) {
    const uint32_t T0 = tile0 + quad * ADA_QUAD;
    __syncthreads();  // the previous quad's readers are done with the raw buffers
    for (uint32_t e = tid; e < ADA_QUAD * ADA_ELEMS; e += 128u) {
      const uint32_t lt = e / ADA_ELEMS, j = e % ADA_ELEMS, T = T0 + lt;
      gen_element(set, fam, seed0, stream, per_seed_log2, T, lt, j, gA, gB, gC, a_bytes, b_raw, c_raw);
      if (T < keep) {
        if (j < 512u) kA[(u64)T * 512u + j] = a_bytes[lt * 512u + j];
        else if (j < 768u) kB[(u64)T * 256u + (j - 512u)] = b_raw[lt * 256u + (j - 512u)];
        else kC[(u64)T * 128u + (j - 768u)] = c_raw[lt * 128u + (j - 768u)];
      }
    }
    __syncthreads();
    {  // A: one 16-byte chunk per thread (row tid % 64, half tid / 64) into the wgmma layout
      const uint32_t r = tid & 63u, h = tid >> 6;
      const uint4 v = reinterpret_cast<const uint4*>(a_raw)[r * 2u + h];
      *reinterpret_cast<uint4*>((h ? sa_hi : sa_lo) + kmajor_off(r, 0u, 1u)) = v;
      if (h) *reinterpret_cast<uint4*>(sa_hi2 + kmajor_off(r, 16u, 1u)) = v;
    }
    for (uint32_t i = tid; i < ADA_QUAD * 8u * 8u; i += 128u) {  // columns of B as words: bt_raw[q][n][word]
      const uint32_t q = i >> 6, n = (i >> 3) & 7u, wd = i & 7u;
      const uint8_t* bq = b_raw + q * 256u;
      uint32_t v = 0;
#pragma unroll
      for (uint32_t b = 0; b < 4u; ++b) v |= (uint32_t)bq[(4u * wd + b) * 8u + n] << (8u * b);
      bt_raw[i] = v;
    }
    if (tid < ADA_QUAD * 8u * 2u) {  // B: one chunk per (tile, n, half), gathered from b_raw
      const uint32_t q = tid >> 4, n = (tid >> 1) & 7u, h = tid & 1u;
      const uint8_t* bq = b_raw + q * 256u;
      uint32_t v[4];
#pragma unroll
      for (uint32_t wd = 0; wd < 4u; ++wd) {
        v[wd] = 0;
#pragma unroll
        for (uint32_t b = 0; b < 4u; ++b) v[wd] |= (uint32_t)bq[(16u * h + 4u * wd + b) * 8u + n] << (8u * b);
      }
      const uint4 chunk = make_uint4(v[0], v[1], v[2], v[3]);
      *reinterpret_cast<uint4*>((h ? sb_hi[q] : sb_lo[q]) + kmajor_off(n, 0u, 1u)) = chunk;
      *reinterpret_cast<uint4*>(sb_all[q] + kmajor_off(n, 16u * h, 1u)) = chunk;
    }
    tcf::fence_proxy_async_shared_cta();
    __syncthreads();

    uint32_t cw[2], dp[2], ds[2];  // C, padded D, shared-B D of warp w's tile: rows g, g + 8
#pragma unroll
    for (uint32_t r = 0; r < 2u; ++r)
      cw[r] = reinterpret_cast<const uint32_t*>(c_raw)[(w * 128u + (g + 8u * r) * 8u) / 2u + t];
    lower_quad(dp, cw, w, da_lo, da_hi, db_lo, db_hi);
    lower_quad(ds, cw, w, da_lo, da_hi2, db_all, db_all);

    const uint32_t T = T0 + w;
    bool lane_bad = false, lane_bad_s = false;
#pragma unroll 1
    for (uint32_t o = 0; o < 4u; ++o) {  // rows g, g + 8 (o / 2) x columns 2t, 2t + 1 (o % 2)
      const uint32_t row = g + 8u * (o >> 1), col = 2u * t + (o & 1u), sh = 16u * (o & 1u);
      const uint32_t* ra = a_raw + (w * 16u + row) * 8u;
      const uint32_t* rb = bt_raw + (w * 8u + col) * 8u;
      const uint16_t c = c_raw[w * 128u + row * 8u + col];
      const uint16_t raw = (uint16_t)(((o >> 1) ? dp[1] : dp[0]) >> sh);
      const uint16_t raw_s = (uint16_t)(((o >> 1) ? ds[1] : ds[0]) >> sh);
      const bool neg0 = c == 0x8000u && products_all_negzero(ra, rb);  // the rule's only case: D is then +0
      const uint16_t low = neg0 && raw == 0u ? (uint16_t)0x8000u : raw;
      const uint16_t low_s = neg0 && raw_s == 0u ? (uint16_t)0x8000u : raw_s;
      const uint16_t ada = ada_element(ra, rb, c);
      n_fix += low != raw;
      n_raw_bad += raw != ada;
      n_raw_bad_s += raw_s != ada;
      n_nan += low == 0x7FFFu;
      n_inf += (low & 0x7FFFu) == 0x7C00u;
      n_neg0 += low == 0x8000u;
      n_pos0 += low == 0u;
      n_sub += (low & 0x7C00u) == 0u && (low & 0x3FFu) != 0u;
      checksum += mix32(mix32(T * 128u + row * 8u + col) ^ low);
      if (T < keep) {
        kD[(u64)T * 128u + row * 8u + col] = low;
        kDs[(u64)T * 128u + row * 8u + col] = low_s;
        kAda[(u64)T * 128u + row * 8u + col] = ada;
      }
      n_bad += low != ada;
      n_bad_s += low_s != ada;
      lane_bad |= low != ada;
      lane_bad_s |= low_s != ada;
      if ((low != ada || low_s != ada) && !recorded) {  // a thread's first mismatch only: a broken run stays fast
        recorded = true;
        const u64 slot = atomicAdd(&counts[CNT_NREC], 1ull);
        if (slot < ADA_MAXREC) {
          uint32_t* rec = recs + slot * ADA_REC_WORDS;
          rec[0] = T; rec[1] = row; rec[2] = col; rec[3] = c; rec[4] = low; rec[5] = ada; rec[6] = low_s;
          rec[7] = raw | ((uint32_t)raw_s << 16);
        }
      }
    }
    const bool any_bad = __any_sync(0xFFFFFFFFu, lane_bad), any_bad_s = __any_sync(0xFFFFFFFFu, lane_bad_s);
    n_bad_tiles += (any_bad && lane == 0u) ? 1u : 0u;
    n_bad_tiles_s += (any_bad_s && lane == 0u) ? 1u : 0u;
  }
  // per-warp sums, one atomic each
  const uint32_t vals[] = {n_bad, n_bad_tiles, n_raw_bad, n_fix, n_bad_s, n_bad_tiles_s, n_raw_bad_s,
                           n_nan, n_inf, n_neg0, n_pos0, n_sub};
  const int slots[] = {CNT_BAD_OUT, CNT_BAD_TILES, CNT_RAW_BAD, CNT_FIXUPS, CNT_BAD_OUT_S, CNT_BAD_TILES_S,
                       CNT_RAW_BAD_S, CNT_NAN, CNT_INF, CNT_NEGZERO, CNT_POSZERO, CNT_SUBNORMAL};
#pragma unroll
  for (int i = 0; i < 12; ++i) {
    const u64 s = warp_sum(vals[i]);
    if (lane == 0u && s) atomicAdd(&counts[slots[i]], s);
  }
  const u64 sum_cs = warp_sum(checksum);
  if (lane == 0u) atomicAdd(&counts[CNT_CHECKSUM], sum_cs);
  if (tid == 0u && blockIdx.x < nquads) {
    const u64 mine = (u64)((nquads - 1u - blockIdx.x) / gridDim.x + 1u) * ADA_QUAD;
    atomicAdd(&counts[CNT_TILES], mine);
  }
}
