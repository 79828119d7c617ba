// Hardware-truth kernels for the Hopper tensor-core forms of tcforge.numerics.tensorcore (wgmma m64n8k32 FP8,
// wgmma m64n8k16 f16/bf16, mma.sync m16n8k32 FP8 -> f32/f16 and m16n8k16 f16/bf16), built for sm_90a:
//   nvcc -cubin -O3 -gencode=arch=compute_90a,code=sm_90a -I src/tcforge/include tools/truth/wgmma_kernels.cu \
//        -o wgmma_kernels.cubin
// Launched from tools/truth/tc_truth.py through CuPy. k_gen_tc mirrors tcforge.numerics.truth.tc_tile_inputs
// (the input families) exactly; built with -DTC_HOST_TWIN the same generator runs on the host (no GPU) and writes
// the tiles to stdout, so the twin can be checked on a CPU machine.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef unsigned long long u64;

// ---------------------------------------------------------------- counter-based RNG (twin of truth.py)
__host__ __device__ __forceinline__ uint32_t mix32(uint32_t x) {
  x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16; return x;
}
__host__ __device__ __forceinline__ uint32_t rng_key(uint32_t seed, uint32_t stream) {
  return mix32(mix32(seed) ^ stream);
}
__host__ __device__ __forceinline__ uint32_t rng_at(uint32_t key, uint32_t idx) { return mix32(mix32(idx ^ key) + key); }

// ---------------------------------------------------------------- formats (ids: tensorcore.FORMAT_IDS)
struct Fmt { int E, M, B, ieee, T, nbytes; };
__host__ __device__ __forceinline__ Fmt fmt_of(int id) {
  switch (id) {
  case 0: return {4, 3, 7, 0, 15, 1};      // e4m3 (no inf; S.1111.111 is NaN)
  case 1: return {5, 2, 15, 1, 30, 1};     // e5m2
  case 2: return {5, 10, 15, 1, 30, 2};    // f16
  case 3: return {8, 7, 127, 1, 254, 2};   // bf16
  default: return {8, 23, 127, 1, 254, 4}; // f32
  }
}
__host__ __device__ __forceinline__ int fmt_emax(Fmt f) { return f.T - f.B; }
__host__ __device__ __forceinline__ uint32_t popcount8(uint32_t x) {
  x &= 0xFFu; uint32_t n = 0; for (int i = 0; i < 8; ++i) n += (x >> i) & 1u; return n;
}
__host__ __device__ __forceinline__ uint32_t f_finite(Fmt f, uint32_t code) {
  if (f.ieee) {
    uint32_t ef = (code >> f.M) & ((1u << f.E) - 1u);
    return ef == (1u << f.E) - 1u ? code ^ (1u << (f.M + f.E - 1)) : code;
  }
  return (code & 0x7Fu) == 0x7Fu ? code ^ 1u : code;
}
__host__ __device__ __forceinline__ uint32_t f_sign(Fmt f, uint32_t w) { return (w >> 31) << (f.E + f.M); }
__host__ __device__ __forceinline__ uint32_t f_mk(Fmt f, uint32_t w, uint32_t ef) {
  ef = ef < (uint32_t)f.T ? ef : (uint32_t)f.T;
  return f_finite(f, f_sign(f, w) | (ef << f.M) | (w & ((1u << f.M) - 1u)));
}
__host__ __device__ __forceinline__ uint32_t f_any(Fmt f, uint32_t w) {
  return (f.E + f.M < 31) ? (w & ((1u << (1 + f.E + f.M)) - 1u)) : w;
}
__host__ __device__ __forceinline__ uint32_t f_any_below(Fmt f, uint32_t w, uint32_t top) {
  uint32_t code = f_any(f, w), emask = ((1u << f.E) - 1u) << f.M;
  uint32_t ef = ((code >> f.M) & ((1u << f.E) - 1u)) % (top + 1u);
  return f_finite(f, (code & ~emask) | (ef << f.M));
}
__host__ __device__ __forceinline__ uint32_t f_nan(Fmt f, uint32_t w) {
  if (!f.ieee) return f_sign(f, w) | 0x7Fu;
  return f_sign(f, w) | (((1u << f.E) - 1u) << f.M) | (1u << (f.M - 1)) | (w & 1u);
}
__host__ __device__ __forceinline__ uint32_t f_inf(Fmt f, uint32_t w) {
  if (!f.ieee) return f_sign(f, w) | 0x7Eu;
  return f_sign(f, w) | (((1u << f.E) - 1u) << f.M);
}
__host__ __device__ __forceinline__ uint32_t f_max(Fmt f, uint32_t w) {
  uint32_t mant = (1u << f.M) - (f.ieee ? 1u : 2u);
  return f_sign(f, w) | ((uint32_t)f.T << f.M) | mant;
}
__host__ __device__ __forceinline__ uint32_t f_mkc(Fmt f, uint32_t w, long long ec) {
  long long ef = ec + f.B;
  ef = ef < 1 ? 1 : (ef > f.T ? f.T : ef);
  return f_mk(f, w, (uint32_t)ef);
}
__host__ __device__ __forceinline__ uint32_t operand_top(Fmt f, Fmt fc) {
  int t = f.B + (fmt_emax(fc) + 1) / 2;
  return (uint32_t)(t < f.T ? t : f.T);
}

#define TC_MIX 0x9E3779B9u

__host__ __device__ uint32_t tc_ab(Fmt f, int fam, uint32_t w, uint32_t p0, uint32_t top, int which) {
  uint32_t w2 = mix32(w ^ TC_MIX), e8 = (w >> 23) & 0xFFu;
  switch (fam) {
  case 0: return f_any_below(f, w, top);
  case 1: return f_mk(f, w, (uint32_t)(f.B - 4) + popcount8(e8));
  case 2: return f_mk(f, w, top - 4u + (e8 & 3u) + ((e8 >> 2) & 1u));
  case 3:
    if ((p0 & 1u) == 0u) return f_mk(f, w, (e8 & 3u) + ((e8 >> 2) & 1u));
    if (which) return f_mk(f, w, (uint32_t)(f.B - 4) + popcount8(e8));
    return f_mk(f, w, (e8 & 3u) == 3u ? 1u : 0u);
  case 4: {
    uint32_t r = w2 & 127u;
    if (r == 0u) return f_nan(f, w);
    if (r <= 2u) return f_inf(f, w);
    if (r <= 10u) return f_sign(f, w);
    return f_finite(f, f_any(f, w));
  }
  case 5:
    if (((p0 >> 1) & 1u) == 1u) return f_any_below(f, w, top);
    return f_mk(f, w, (uint32_t)(f.B - 4) + popcount8(e8));
  case 6: {
    uint32_t lim = top < 31u ? top : 31u;
    uint32_t span = (p0 & 31u) % (lim + 1u), tile_top = top - ((p0 >> 8) & 7u);
    uint32_t drop = (e8 * (span + 1u)) >> 8;
    return f_mk(f, w, drop >= tile_top ? 0u : tile_top - drop);
  }
  case 7: return f_mk(f, w, (uint32_t)(f.B - 1) + (e8 & 3u));
  default: {
    uint32_t r = w2 & 127u;
    if (r == 0u) return f_nan(f, w);
    if (r <= 4u) return f_inf(f, w);
    return f_mk(f, w, top - 5u + (e8 & 3u) + ((e8 >> 2) & 3u));
  }
  }
}

__host__ __device__ uint32_t tc_c(Fmt f, Fmt fa, Fmt fb, int fam, uint32_t w, uint32_t p0) {
  uint32_t w2 = mix32(w ^ TC_MIX);
  long long e8 = (long long)((w >> 23) & 0xFFu);
  int ta = (int)operand_top(fa, f), tb = (int)operand_top(fb, f);
  long long top_ab = (ta - fa.B) + (tb - fb.B);
  uint32_t sel = (w2 >> 8) & 7u, pos = 0u, neg = 0x80000000u;
  switch (fam) {
  case 0: return f_finite(f, f_any(f, w));
  case 1: return f_mkc(f, w, (long long)popcount8((uint32_t)e8) - 2);
  case 2: return f_mkc(f, w, top_ab - 3 + (e8 & 7));
  case 3: {
    uint32_t sel3 = (w2 >> 8) & 3u;
    if (sel3 <= 1u) return f_sign(f, w) | ((((uint32_t)e8 & 3u) == 3u ? 1u : 0u) << f.M) | (w & ((1u << f.M) - 1u));
    if (sel3 == 2u) return f_mkc(f, w, 1 - fa.B - 4 + (e8 & 7));
    return f_sign(f, w);
  }
  case 4: {
    uint32_t one = (uint32_t)f.B << f.M;
    switch (sel) {
    case 0: return f_sign(f, pos);
    case 1: return f_sign(f, neg);
    case 2: return f_inf(f, pos);
    case 3: return f_inf(f, neg);
    case 4: return f_nan(f, w);
    case 5: return one;
    case 6: return one | f_sign(f, neg);
    default: return f_mkc(f, w, -4 + (e8 & 15));
    }
  }
  case 5: return f_sign(f, w);
  case 6: {
    long long shift = (long long)((p0 >> 8) & 7u);
    long long ec = top_ab - 2 * shift + 2 - (long long)((p0 >> 16) % 40u) + (e8 & 3) - 1;
    return f_mkc(f, w, ec);
  }
  case 7: return f_mkc(f, w, 5 + (long long)((p0 >> 4) % (f.M == 10 ? 11u : 26u)));
  default:
    switch (sel) {
    case 0: return f_inf(f, pos);
    case 1: return f_inf(f, neg);
    case 2: return f_max(f, pos);
    case 3: return f_max(f, neg);
    case 4: return f_nan(f, w);
    case 5: return f_sign(f, pos);
    case 6: return f_sign(f, neg);
    default: return f_mkc(f, w, top_ab - 4 + (e8 & 7));
    }
  }
}

#define TC_TILE_SLOTS 4096u
#define TC_SLOT_A 0u
#define TC_SLOT_B 2048u
#define TC_SLOT_C 3072u
#define TC_SLOT_P 4032u

__host__ __device__ __forceinline__ void put(uint8_t* p, uint32_t v, int nbytes) {
  for (int i = 0; i < nbytes; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

// element j of tile (local lt, global tile): A [row*K + k] for j < M*K, then B [k*N + col], then C [row*N + col]
__host__ __device__ void gen_tc_element(int ia, int ib, int ic, int fam, uint32_t M, uint32_t N, uint32_t K,
                                        uint32_t key, uint32_t tile, uint32_t lt, uint32_t j,
                                        uint8_t* A, uint8_t* B, uint8_t* C) {
  Fmt fa = fmt_of(ia), fb = fmt_of(ib), fc = fmt_of(ic);
  uint32_t base = tile * TC_TILE_SLOTS;
  uint32_t p0 = rng_at(key, base + TC_SLOT_P);
  uint32_t half = K / 2u;
  bool mode1 = (p0 & 1u) == 1u;
  if (j < M * K) {
    uint32_t row = j / K, k = j % K, src = k;
    bool copy = false;
    if (fam == 5) {
      copy = mode1 ? ((k & 2u) != 0u) : (k >= half);
      src = mode1 ? (k & ~2u) : (k & (half - 1u));
    }
    uint32_t w = rng_at(key, base + TC_SLOT_A + row * K + src);
    uint32_t code = tc_ab(fa, fam, w, p0, operand_top(fa, fc), 0);
    if (copy) code ^= 1u << (fa.E + fa.M);
    if (fam == 3 && (p0 & 2u) && ((p0 >> (8u + (row & 15u))) & 1u))
      code = ((p0 >> (24u + (row & 7u))) & 1u) << (fa.E + fa.M);  // a zero row: -0 where p0 bit 24 + row % 8
    put(A + ((u64)lt * M * K + j) * fa.nbytes, code, fa.nbytes);
  } else if (j < M * K + K * N) {
    uint32_t jj = j - M * K, k = jj / N, col = jj % N, src = k;
    if (fam == 5) src = mode1 ? (k & ~2u) : (k & (half - 1u));
    uint32_t code = tc_ab(fb, fam, rng_at(key, base + TC_SLOT_B + src * N + col), p0, operand_top(fb, fc), 1);
    if (fam == 3 && (p0 & 2u)) code &= ~(1u << (fb.E + fb.M));  // B >= 0 in the zero-row tiles
    put(B + ((u64)lt * K * N + jj) * fb.nbytes, code, fb.nbytes);
  } else {
    uint32_t jj = j - M * K - K * N;
    uint32_t code = tc_c(fc, fa, fb, fam, rng_at(key, base + TC_SLOT_C + jj), p0);
    put(C + ((u64)lt * M * N + jj) * fc.nbytes, code, fc.nbytes);
  }
}

extern "C" __global__ void k_gen_tc(int ia, int ib, int ic, int fam, uint32_t M, uint32_t N, uint32_t K,
                                    uint32_t seed, uint32_t stream, uint32_t tile0, uint32_t ntiles,
                                    uint8_t* A, uint8_t* B, uint8_t* C) {
  u64 per = (u64)M * K + (u64)K * N + (u64)M * N;
  u64 gid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= (u64)ntiles * per) return;
  uint32_t lt = (uint32_t)(gid / per), j = (uint32_t)(gid % per);
  gen_tc_element(ia, ib, ic, fam, M, N, K, rng_key(seed, stream), tile0 + lt, lt, j, A, B, C);
}

#ifdef TC_HOST_TWIN
// host twin: ia ib ic fam M N K seed stream tile0 ntiles -> A, B, C bytes on stdout
int main(int argc, char** argv) {
  if (argc != 12) { fprintf(stderr, "usage: ia ib ic fam M N K seed stream tile0 ntiles\n"); return 2; }
  int ia = atoi(argv[1]), ib = atoi(argv[2]), ic = atoi(argv[3]), fam = atoi(argv[4]);
  uint32_t M = (uint32_t)strtoul(argv[5], 0, 0), N = (uint32_t)strtoul(argv[6], 0, 0);
  uint32_t K = (uint32_t)strtoul(argv[7], 0, 0), seed = (uint32_t)strtoul(argv[8], 0, 0);
  uint32_t stream = (uint32_t)strtoul(argv[9], 0, 0), tile0 = (uint32_t)strtoul(argv[10], 0, 0);
  uint32_t nt = (uint32_t)strtoul(argv[11], 0, 0);
  size_t na = (size_t)nt * M * K * fmt_of(ia).nbytes, nb = (size_t)nt * K * N * fmt_of(ib).nbytes;
  size_t nc = (size_t)nt * M * N * fmt_of(ic).nbytes;
  uint8_t *A = (uint8_t*)calloc(na, 1), *B = (uint8_t*)calloc(nb, 1), *C = (uint8_t*)calloc(nc, 1);
  uint32_t key = rng_key(seed, stream), per = M * K + K * N + M * N;
  for (uint32_t lt = 0; lt < nt; ++lt)
    for (uint32_t j = 0; j < per; ++j) gen_tc_element(ia, ib, ic, fam, M, N, K, key, tile0 + lt, lt, j, A, B, C);
  fwrite(A, 1, na, stdout); fwrite(B, 1, nb, stdout); fwrite(C, 1, nc, stdout);
  free(A); free(B); free(C);
  return 0;
}
#else
#include "tcforge/smem.cuh"
#include "tcforge/wgmma.cuh"

// ---------------------------------------------------------------- wgmma m64n8 (A and B from shared memory)
// One instruction per form; D f32: 4 registers per thread, D f16: 2 (f16x2). Operand tiles are K-major, 32 bytes of
// k per row. Layout mode 0 (no swizzle): 8-row x 16-byte core matrices, K-adjacent core matrices 128 bytes apart,
// 8-row groups 256 bytes apart; mode 1 (32-byte swizzle): rows 32 bytes apart, byte address bit 4 ^= bit 7. The
// descriptor's leading / stride byte offsets and the mode are kernel arguments: the generator runs an exactly
// representable probe first and keeps the first assignment the hardware reads as intended.
#define WG_F32(NAME, SHAPE_TYPES, TAIL)                                                                          \
  struct NAME {                                                                                                  \
    static __device__ __forceinline__ void run(float (&d)[4], uint64_t da, uint64_t db) {                        \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                                                   \
                   "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {%0, %1, %2, %3}, %4, %5, p, 1, 1" TAIL ";\n}\n" \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                              \
                   : "l"(da), "l"(db), "r"(1));                                                                 \
    }                                                                                                            \
  };
#define WG_F16(NAME, SHAPE_TYPES, TAIL)                                                                          \
  struct NAME {                                                                                                  \
    static __device__ __forceinline__ void run(uint32_t (&d)[2], uint64_t da, uint64_t db) {                     \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                                   \
                   "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {%0, %1}, %2, %3, p, 1, 1" TAIL ";\n}\n"         \
                   : "+r"(d[0]), "+r"(d[1])                                                                      \
                   : "l"(da), "l"(db), "r"(1));                                                                 \
    }                                                                                                            \
  };
WG_F32(WgF32_e4m3_e4m3, "m64n8k32.f32.e4m3.e4m3", "")
WG_F32(WgF32_e4m3_e5m2, "m64n8k32.f32.e4m3.e5m2", "")
WG_F32(WgF32_e5m2_e4m3, "m64n8k32.f32.e5m2.e4m3", "")
WG_F32(WgF32_e5m2_e5m2, "m64n8k32.f32.e5m2.e5m2", "")
WG_F32(WgF32_f16, "m64n8k16.f32.f16.f16", ", 0, 0")
WG_F32(WgF32_bf16, "m64n8k16.f32.bf16.bf16", ", 0, 0")
WG_F16(WgF16_e4m3_e4m3, "m64n8k32.f16.e4m3.e4m3", "")
WG_F16(WgF16_e4m3_e5m2, "m64n8k32.f16.e4m3.e5m2", "")
WG_F16(WgF16_e5m2_e4m3, "m64n8k32.f16.e5m2.e4m3", "")
WG_F16(WgF16_e5m2_e5m2, "m64n8k32.f16.e5m2.e5m2", "")
WG_F16(WgF16_f16, "m64n8k16.f16.f16.f16", ", 0, 0")

__device__ __forceinline__ uint32_t kmajor_off(uint32_t row, uint32_t kb, uint32_t mode) {
  if (mode == 0u) return (row >> 3) * 256u + (kb >> 4) * 128u + (row & 7u) * 16u + (kb & 15u);
  return tcf::swizzle32(row * 32u + kb);
}

// A: 64 rows x 32 bytes (row-major [m][k] in global); B: [k][n] in global, 8 rows (n) x 32 bytes of k in shared
template <int ES>
__device__ __forceinline__ void wg_load(const uint8_t* A, const uint8_t* B, uint32_t tile, uint8_t* sa, uint8_t* sb,
                                        uint32_t mode) {
  const uint8_t* a = A + (u64)tile * 2048u;
  const uint8_t* b = B + (u64)tile * 256u;
  for (uint32_t i = threadIdx.x; i < 2048u; i += 128u) sa[kmajor_off(i >> 5, i & 31u, mode)] = a[i];
  for (uint32_t i = threadIdx.x; i < 256u; i += 128u) {
    uint32_t n = i >> 5, kb = i & 31u, k = kb / ES, byte = kb % ES;
    sb[kmajor_off(n, kb, mode)] = b[(k * 8u + n) * ES + byte];
  }
  tcf::fence_proxy_async_shared_cta();
  __syncthreads();
}

// The accumulator of one thread in the m64n8 D fragment (rows 16w + g and 16w + g + 8, columns 2t and 2t + 1), read
// from and written to a tile's row-major 64x8 C / D: four f32 registers, or two f16x2 registers.
struct AccF32 {
  using elem = float;
  float r[4];
  __device__ __forceinline__ void load(const elem* c, uint32_t w, uint32_t g, uint32_t t) {
    for (int i = 0; i < 4; ++i) r[i] = c[(16u * w + g + 8u * (i >> 1)) * 8u + 2u * t + (i & 1)];
  }
  __device__ __forceinline__ void store(elem* d, uint32_t w, uint32_t g, uint32_t t) const {
    for (int i = 0; i < 4; ++i) d[(16u * w + g + 8u * (i >> 1)) * 8u + 2u * t + (i & 1)] = r[i];
  }
};
struct AccF16 {
  using elem = uint16_t;
  uint32_t r[2];
  __device__ __forceinline__ void load(const elem* c, uint32_t w, uint32_t g, uint32_t t) {
    for (int i = 0; i < 2; ++i) {
      const uint32_t row = 16u * w + g + 8u * i;
      r[i] = (uint32_t)c[row * 8u + 2u * t] | ((uint32_t)c[row * 8u + 2u * t + 1u] << 16);
    }
  }
  __device__ __forceinline__ void store(elem* d, uint32_t w, uint32_t g, uint32_t t) const {
    for (int i = 0; i < 2; ++i) {
      const uint32_t row = 16u * w + g + 8u * i;
      d[row * 8u + 2u * t] = (uint16_t)(r[i] & 0xFFFFu);
      d[row * 8u + 2u * t + 1u] = (uint16_t)(r[i] >> 16);
    }
  }
};

// One wgmma m64n8 per tile (grid-stride): operands into shared memory, C into registers, D out.
template <class OP, int ES, class ACC>
__device__ __forceinline__ void wg_tiles(const uint8_t* A, const uint8_t* B, const uint8_t* C, uint8_t* D,
                                         uint32_t ntiles, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  using elem = typename ACC::elem;
  __shared__ __align__(1024) uint8_t sa[2048];
  __shared__ __align__(1024) uint8_t sb[256];
  const uint32_t w = threadIdx.x >> 5, lane = threadIdx.x & 31u, g = lane >> 2, t = lane & 3u;
  const uint64_t da = tcf::make_smem_desc(tcf::smem_u32(sa), lbo, sbo, mode ? 3u : 0u);
  const uint64_t db = tcf::make_smem_desc(tcf::smem_u32(sb), lbo, sbo, mode ? 3u : 0u);
  for (uint32_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    wg_load<ES>(A, B, tile, sa, sb, mode);
    ACC acc;
    acc.load(reinterpret_cast<const elem*>(C) + (u64)tile * 512u, w, g, t);
    tcf::warpgroup_fence_operand(acc.r);
    tcf::wgmma_fence();
    OP::run(acc.r, da, db);
    tcf::wgmma_commit_group();
    tcf::wgmma_wait_group<0>();
    tcf::warpgroup_fence_operand(acc.r);
    acc.store(reinterpret_cast<elem*>(D) + (u64)tile * 512u, w, g, t);
    __syncthreads();
  }
}

#define WG_KERNEL(KNAME, ACC, OP, ES)                                                                          \
  extern "C" __global__ void __launch_bounds__(128) KNAME(const uint8_t* A, const uint8_t* B, const uint8_t* C, \
                                                          uint8_t* D, uint32_t ntiles, uint32_t lbo,          \
                                                          uint32_t sbo, uint32_t mode) {                      \
    wg_tiles<OP, ES, ACC>(A, B, C, D, ntiles, lbo, sbo, mode);                                                 \
  }
WG_KERNEL(k_wgmma_f32_e4m3_e4m3, AccF32, WgF32_e4m3_e4m3, 1)
WG_KERNEL(k_wgmma_f32_e4m3_e5m2, AccF32, WgF32_e4m3_e5m2, 1)
WG_KERNEL(k_wgmma_f32_e5m2_e4m3, AccF32, WgF32_e5m2_e4m3, 1)
WG_KERNEL(k_wgmma_f32_e5m2_e5m2, AccF32, WgF32_e5m2_e5m2, 1)
WG_KERNEL(k_wgmma_f32_f16_f16, AccF32, WgF32_f16, 2)
WG_KERNEL(k_wgmma_f32_bf16_bf16, AccF32, WgF32_bf16, 2)
WG_KERNEL(k_wgmma_f16_e4m3_e4m3, AccF16, WgF16_e4m3_e4m3, 1)
WG_KERNEL(k_wgmma_f16_e4m3_e5m2, AccF16, WgF16_e4m3_e5m2, 1)
WG_KERNEL(k_wgmma_f16_e5m2_e4m3, AccF16, WgF16_e5m2_e4m3, 1)
WG_KERNEL(k_wgmma_f16_e5m2_e5m2, AccF16, WgF16_e5m2_e5m2, 1)
WG_KERNEL(k_wgmma_f16_f16_f16, AccF16, WgF16_f16, 2)

// ---------------------------------------------------------------- mma.sync: one warp per 16x8 tile
// fragments (PTX ISA): g = lane / 4, t = lane % 4. k32 8-bit A reg r: row g + 8(r&1), k = 4t + i + 16(r>>1);
// B reg r: k = 4t + i + 16r, col g. k16 16-bit A reg r: row g + 8(r&1), k = 2t + i + 8(r>>1); B reg r:
// k = 2t + i + 8r, col g. C/D f32 reg i: row g + 8(i>>1), col 2t + (i&1); C/D f16 reg r: row g + 8r, cols 2t, 2t+1.
template <int ES>
__device__ __forceinline__ void mma_frags(const uint8_t* a, const uint8_t* b, uint32_t g, uint32_t t,
                                          uint32_t (&ra)[4], uint32_t (&rb)[2]) {
  const uint32_t K = ES == 1 ? 32u : 16u, per = 4u / ES, kstep = ES == 1 ? 16u : 8u;
  for (int r = 0; r < 4; ++r) {
    uint32_t row = g + 8u * (r & 1), k0 = per * t + kstep * (r >> 1), v = 0;
    for (uint32_t i = 0; i < 4u; ++i) v |= (uint32_t)a[(row * K + k0 + i / ES) * ES + i % ES] << (8 * i);
    ra[r] = v;
  }
  for (int r = 0; r < 2; ++r) {
    uint32_t k0 = per * t + kstep * r, v = 0;
    for (uint32_t i = 0; i < 4u; ++i) v |= (uint32_t)b[((k0 + i / ES) * 8u + g) * ES + i % ES] << (8 * i);
    rb[r] = v;
  }
}

// One mma.sync per thread's fragment, D = A B + C in place (as the wgmma ops above).
#define MMA_F32(NAME, TYPES)                                                                                     \
  struct NAME {                                                                                                  \
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4],                            \
                                               const uint32_t (&b)[2]) {                                         \
      asm volatile("mma.sync.aligned." TYPES " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"          \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));                          \
    }                                                                                                            \
  };
#define MMA_F16(NAME, TYPES)                                                                                     \
  struct NAME {                                                                                                  \
    static __device__ __forceinline__ void run(uint32_t (&d)[2], const uint32_t (&a)[4],                         \
                                               const uint32_t (&b)[2]) {                                         \
      asm volatile("mma.sync.aligned." TYPES " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"                      \
                   : "+r"(d[0]), "+r"(d[1])                                                                      \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));                          \
    }                                                                                                            \
  };
MMA_F32(MmaF32_e4m3_e4m3, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
MMA_F32(MmaF32_e4m3_e5m2, "m16n8k32.row.col.f32.e4m3.e5m2.f32")
MMA_F32(MmaF32_e5m2_e4m3, "m16n8k32.row.col.f32.e5m2.e4m3.f32")
MMA_F32(MmaF32_e5m2_e5m2, "m16n8k32.row.col.f32.e5m2.e5m2.f32")
MMA_F32(MmaF32_f16, "m16n8k16.row.col.f32.f16.f16.f32")
MMA_F32(MmaF32_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32")
MMA_F16(MmaF16_e4m3_e4m3, "m16n8k32.row.col.f16.e4m3.e4m3.f16")
MMA_F16(MmaF16_e4m3_e5m2, "m16n8k32.row.col.f16.e4m3.e5m2.f16")
MMA_F16(MmaF16_e5m2_e4m3, "m16n8k32.row.col.f16.e5m2.e4m3.f16")
MMA_F16(MmaF16_e5m2_e5m2, "m16n8k32.row.col.f16.e5m2.e5m2.f16")
MMA_F16(MmaF16_f16, "m16n8k16.row.col.f16.f16.f16.f16")

// One warp per 16x8 tile: its C (row-major, 128 elements) read as the m64n8 accumulator's first warp reads it.
template <class OP, int ES, class ACC>
__device__ __forceinline__ void mma_tile(const uint8_t* A, const uint8_t* B, const uint8_t* C, uint8_t* D,
                                         uint32_t ntiles) {
  using elem = typename ACC::elem;
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31u;
  if (warp >= ntiles) return;
  const uint32_t g = lane >> 2, t = lane & 3u, K = ES == 1 ? 32u : 16u;
  uint32_t ra[4], rb[2];
  mma_frags<ES>(A + (u64)warp * 16u * K * ES, B + (u64)warp * K * 8u * ES, g, t, ra, rb);
  ACC acc;
  acc.load(reinterpret_cast<const elem*>(C) + (u64)warp * 128u, 0u, g, t);
  OP::run(acc.r, ra, rb);
  acc.store(reinterpret_cast<elem*>(D) + (u64)warp * 128u, 0u, g, t);
}

#define MMA_KERNEL(KNAME, ACC, OP, ES)                                                                         \
  extern "C" __global__ void KNAME(const uint8_t* A, const uint8_t* B, const uint8_t* C, uint8_t* D,          \
                                   uint32_t ntiles) {                                                         \
    mma_tile<OP, ES, ACC>(A, B, C, D, ntiles);                                                                \
  }
MMA_KERNEL(k_mma_f32_e4m3_e4m3, AccF32, MmaF32_e4m3_e4m3, 1)
MMA_KERNEL(k_mma_f32_e4m3_e5m2, AccF32, MmaF32_e4m3_e5m2, 1)
MMA_KERNEL(k_mma_f32_e5m2_e4m3, AccF32, MmaF32_e5m2_e4m3, 1)
MMA_KERNEL(k_mma_f32_e5m2_e5m2, AccF32, MmaF32_e5m2_e5m2, 1)
MMA_KERNEL(k_mma_f32_f16_f16, AccF32, MmaF32_f16, 2)
MMA_KERNEL(k_mma_f32_bf16_bf16, AccF32, MmaF32_bf16, 2)
MMA_KERNEL(k_mma_f16_e4m3_e4m3, AccF16, MmaF16_e4m3_e4m3, 1)
MMA_KERNEL(k_mma_f16_e4m3_e5m2, AccF16, MmaF16_e4m3_e5m2, 1)
MMA_KERNEL(k_mma_f16_e5m2_e4m3, AccF16, MmaF16_e5m2_e4m3, 1)
MMA_KERNEL(k_mma_f16_e5m2_e5m2, AccF16, MmaF16_e5m2_e5m2, 1)
MMA_KERNEL(k_mma_f16_f16_f16, AccF16, MmaF16_f16, 2)
#endif
