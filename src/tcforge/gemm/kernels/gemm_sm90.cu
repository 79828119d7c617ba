// tcforge Hopper (sm_90a) GEMM: C[M,N] = alpha * A[M,K] @ B[K,N], one templated source for every ladder rung.
// The rung is chosen by the #defines that tcforge.gemm.codegen prepends (see variants.py for their meaning):
//   IN_KIND (0 fp16, 1 bf16, 2 e4m3)  OUT_KIND (0 fp32, 1 fp16, 2 bf16)  BM BN BK STAGES NC (consumer warpgroups)
//   USE_TMA (0: cp.async by all threads, 1: TMA producer warpgroup)  B_KMAJOR  CM (cluster size along M, B multicast)
//   CLUSTER_N (the CM CTAs of a cluster run along N instead and multicast A: tiles of one row band, small M; with
//   TRANS_C the band is 64 rows of B^T, the weights, and the CTAs take the problem's M in CM column tiles)
//   TMA_STORE (staged epilogue)  SPLITK (fp32 partials to a workspace)  HOIST (descriptors built once)  SETMAXNREG
//   RELAXED (slot releases without a release fence)
//   EPI_BUFS (staging buffers per consumer warpgroup: 2 = rungs 5-9; BN/EPI_N = the whole tile, stores never wait
//   inside a tile)  PRODUCER_REGS / CONSUMER_REGS (setmaxnreg targets)
//   PINGPONG (each consumer warpgroup owns whole tiles, alternating: one's epilogue overlaps the other's mainloop)
//   EPI_DEFER (16-bit C, unsplit tiles: a tile's accumulators are packed to 16-bit pairs in registers and staged and
//   stored only once the next tile's first wgmmas are issued, so the tensor core is idle for the pack, not the store)
//   EPI_SPREAD (with EPI_DEFER: the held sub-tiles are staged one per k-tile of the next tile, not all under its first,
//   so no k-tile waits for the whole tile's write burst; fp32 C too: its first half staged at the tile's end, the
//   second half held as scaled fp32 in the registers 16-bit C would pack into)
//   PROMOTE (fp8 only: each stage's products are summed by the tensor core in two N halves, then added into fp32
//   totals, as cuBLAS does without use_fast_accum)
//   STREAMK (persistent TMA builds: the units past the last full wave are shared k-tile by k-tile between all
//   clusters; a piece that ends before its unit's K does leaves its fp32 partial in a workspace slot, the cluster
//   whose piece ends the unit's K adds the partials and stores the tile)
//   SK_FUSED (split-K inside the kernel: the splits of a tile leave fp32 partials in workspace slots and count
//   themselves in; the one arriving last adds them in split order and stores the tile: no planes, no second launch)
//   SK_PAIR (with SK_FUSED, two splits only: the two CTAs of a tile form a cluster; split 1 writes its fp32 partial
//   straight into split 0's shared memory (st.async, completing on split 0's mbarrier), split 0 adds it and stores
//   the tile — no round trips through L2)
//   TRANS_C (swapped product: the kernel computes C^T = B^T A^T, its A operand being B — K-major from column-major
//   B, MN-major from row-major 16-bit B with A_MN — and its B operand A (K-major); M and N below are then the
//   problem's N and M, and the epilogue writes each accumulator tile transposed into row-major C: small M becomes
//   the wgmma's N instead of 64 padded rows)
// codegen also prepends wgmma_tile(): one m64nBNk(32 bytes) wgmma with this variant's types and B transpose (a BN
// over 256: two, n256 and n(BN - 256), the second's B from column 256 on), and with PROMOTE wgmma_half(): the same
// for BN/2 columns with scale-d as an argument.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

struct alignas(64) TmaDesc { uint64_t words[16]; };
#ifndef PROMOTE
#define PROMOTE 0
#endif
#ifndef STREAMK
#define STREAMK 0
#endif
#ifndef TRANS_C
#define TRANS_C 0
#endif
#ifndef A_MN
#define A_MN 0   // an MN-major A operand (16-bit only), loaded in 64-column slabs: a column-major a, or the swapped
                 // product's B^T from row-major B
#endif
#ifndef SK_FUSED
#define SK_FUSED 0
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 0   // the cluster's CTAs share a row band of A (each loads BM/CM rows and multicasts them) and
                      // take CM consecutive column tiles; B is loaded whole by every CTA
#endif
#ifndef SK_PAIR
#define SK_PAIR 0
#endif
#ifndef LOCAL_EMPTY
#define LOCAL_EMPTY 0   // in a cluster (two producer threads), the thread loading the operand this CTA alone reads
                        // waits on a local empty barrier (this CTA's consumers) instead of the cluster's
#endif
#ifndef TIMELINE
#define TIMELINE 0   // diagnostics: %globaltimer stamps per CTA into sk_ws (TL_SLOTS u64 per CTA; bench/gemm_timeline.py)
#endif
#ifndef STREAMK_TRACE
#define STREAMK_TRACE 0   // diagnostics: %globaltimer stamps per consumer warpgroup after sk_flags[1024]
#endif
#ifndef EPI_DEFER
#define EPI_DEFER 0
#endif
#ifndef EPI_SPREAD
#define EPI_SPREAD 0
#endif
#ifndef DIAG
#define DIAG 0   // diagnostics only (bench/gemm_bound.py; the product is not computed): bit 1 no loads after the ring's
                 // first fill, bit 2 no epilogue stores, bit 4 no wgmma — what the rest of the kernel costs alone
#endif

constexpr int IN_BYTES = (IN_KIND == 2) ? 1 : 2;
constexpr int OUT_BYTES = (OUT_KIND == 0 || SPLITK) ? 4 : 2;
constexpr int BK_BYTES = BK * IN_BYTES;            // bytes of one K-major tile row: the swizzle span
constexpr int A_TILE = BM * BK_BYTES;
constexpr int B_SLAB = BK * 128;                   // MN-major B: one 64-column slab, BK rows of 128 bytes
constexpr int B_SLABS = (BN + 63) / 64;            // MN-major B: slabs per stage (a BN of 144 loads and keeps 3)
constexpr int B_TILE = B_KMAJOR ? BN * BK_BYTES : B_SLABS * B_SLAB;   // B's bytes per stage
constexpr int B_MC = CLUSTER_N ? 1 : CM;           // CTAs B is multicast to (A's: CLUSTER_N ? CM : 1)
// K-major B: rows of one TMA box (a box holds at most 256 rows: this CTA's BN/B_MC rows in two boxes above that)
constexpr int B_BOX = BN / B_MC > 256 ? BN / B_MC / 2 : BN / B_MC;
constexpr int STAGE_TX = A_TILE + B_TILE;          // bytes landing in one CTA per stage (multicast halves included)
constexpr int WG_ROWS = PINGPONG ? BM : BM / NC;   // rows of C per consumer warpgroup
constexpr int MI = WG_ROWS / 64;                   // m64 wgmma blocks per consumer warpgroup
constexpr int ACC_N = BN / 2;                      // fp32 accumulators per thread per m64 block
constexpr int WG_K = 32 / IN_BYTES;                // K of one wgmma (32 bytes)
constexpr int KSTEPS = BK / WG_K;
constexpr int NTHREADS = USE_TMA ? 128 * (NC + 1) : 128 * NC;
constexpr int K_SWZ = BK_BYTES == 128 ? 1 : (BK_BYTES == 64 ? 2 : 3);   // wgmma descriptor swizzle code
constexpr uint32_t K_SWZ_MASK = BK_BYTES == 128 ? 0x70u : (BK_BYTES == 64 ? 0x30u : 0x10u);
constexpr int EPI_N = 128 / OUT_BYTES;             // staged epilogue: columns of one 128-byte sub-tile row
constexpr int EPI_SUBS = BN / EPI_N;               // staged epilogue: sub-tiles per warpgroup (whole ones)
// EPI_DEFER: the sub-tiles held in registers past a tile's end (16-bit C: all, as packed pairs; fp32 C, EPI_SPREAD
// only: the second half, scaled) and the 32-bit words a thread holds for them (16 per sub-tile either way). Holding
// 5 of 8 fp32 sub-tiles measured the same; 6 spill
constexpr int DEFER_SUBS = OUT_BYTES == 4 ? EPI_SUBS / 2 : EPI_SUBS;
constexpr int DEFER_WORDS = DEFER_SUBS * 16;
// one staging buffer: 128 bytes of C by the warpgroup's rows; the swapped product stages C^T as BN rows of 128 bytes,
// so a swapped tile wider than the warpgroup's 64 rows (BN = 128) takes BN-row buffers
constexpr int EPI_BUF = (TRANS_C && BN > WG_ROWS ? BN : WG_ROWS) * 128;
constexpr int RING_BYTES = STAGES * STAGE_TX;
constexpr int EPI_BYTES = TMA_STORE ? NC * EPI_BUFS * EPI_BUF : 0;
// an accumulator slot: one consumer warpgroup's MI * ACC_N fp32 per thread, stored [i / 4][thread] as float4 (split-K
// and stream-K workspace slots in L2, the pair split-K's receive slots in shared memory)
constexpr int SK_SLOT = 128 * MI * ACC_N;
constexpr int PAIR_BYTES = SK_PAIR ? NC * SK_SLOT * 4 : 0;   // split 0's receive slots (one per warpgroup)
constexpr int BAR_OFFSET = RING_BYTES + EPI_BYTES + PAIR_BYTES;
constexpr int PAIR_BARS = SK_PAIR ? 2 * NC : 0;   // per warpgroup: "partial landed" (split 0), "slot free" (split 1)
constexpr int LOCAL_OFF = (STAGES + PAIR_BARS) * 8;   // from a stage's cluster empty barrier to its local one
constexpr int SMEM_BYTES = BAR_OFFSET + (2 * STAGES + PAIR_BARS + (LOCAL_EMPTY ? STAGES : 0)) * 8 + 1024;   // + slack
static_assert(EPI_BUFS >= 2 && EPI_BUFS <= 8, "2..8 epilogue staging buffers per consumer warpgroup");
static_assert(MI >= 1 && WG_ROWS % 64 == 0, "each consumer warpgroup owns a multiple of 64 rows");
static_assert(ACC_N * MI <= 160, "accumulators: at most 160 registers per thread (ptxas has 168 with 384 threads)");
static_assert(BK % WG_K == 0, "BK must be a multiple of the wgmma K");
static_assert(BN % 8 == 0 && BN <= 320, "BN: a multiple of 8 up to 320 (over 256: two wgmmas per m64 block)");
static_assert(!B_KMAJOR || (BN / B_MC) % B_BOX == 0, "K-major B: this CTA's rows in whole boxes");
static_assert(B_KMAJOR || BN % (64 * B_MC) == 0 || (B_MC == 1 && USE_TMA),
              "an MN-major B tile of partial 64-column slabs: TMA path, no multicast (each CTA loads whole slabs)");
static_assert(!(IN_KIND == 2 && !B_KMAJOR), "fp8 wgmma needs K-major B");
constexpr bool DO_PROMOTE = PROMOTE && IN_KIND == 2;   // 16-bit inputs accumulate in fp32 already
static_assert(!DO_PROMOTE || (MI == 1 && !PINGPONG), "promotion: one m64 block per consumer warpgroup, no ping-pong");
static_assert(CM == 1 || USE_TMA, "clusters need the TMA path");
static_assert(!TIMELINE || (USE_TMA && !SPLITK && !SK_FUSED && !STREAMK && !PROMOTE && !PINGPONG && !DIAG && NC <= 3),
              "the timeline: an unsplit TMA build without stream-K, promotion, ping-pong or diagnostics, <= 3 consumers");
static_assert(!LOCAL_EMPTY || (CM > 1 && HOIST && !SK_PAIR && !TRANS_C),
              "a local empty barrier: a (non-swapped, non-pair) cluster build with two producer threads");
static_assert(!CLUSTER_N || (CM > 1 && BM % (8 * CM) == 0 && (!A_MN || BK % (8 * CM) == 0) && !SPLITK && !STREAMK &&
                             !SK_FUSED),
              "a cluster along N: A shared in whole 8-row groups per CTA (K-major: of BM rows; MN-major: of BK "
              "k-rows), unsplit, no stream-K");
static_assert(!STREAMK || (USE_TMA && !PINGPONG && !SPLITK && !DO_PROMOTE),
              "stream-K: TMA path, no ping-pong, no split-K build, no fp8 promotion");
static_assert(!SK_FUSED || (USE_TMA && !SPLITK && !STREAMK), "in-kernel split-K: TMA path, no planes, no stream-K");
static_assert(!SK_PAIR || (SK_FUSED && CM == 1 && !PINGPONG), "pair split-K: an in-kernel split-K build, no cluster");
static_assert(!TMA_STORE || USE_TMA, "the staged epilogue needs the TMA path");
static_assert(!EPI_DEFER || (USE_TMA && TMA_STORE && (OUT_BYTES == 2 || EPI_SPREAD) && MI == 1 && BN % EPI_N == 0 &&
                             !SPLITK && !STREAMK && !SK_FUSED && !PINGPONG && !TRANS_C && !DO_PROMOTE && DIAG == 0),
              "deferred epilogue: unsplit C of whole sub-tiles (fp32 C spread only), one m64 block per warpgroup");
static_assert(!EPI_SPREAD || (EPI_DEFER && DEFER_WORDS == ACC_N / 2), "a spread epilogue: a deferred one, 64 words held");
static_assert(!PINGPONG || (USE_TMA && NC == 2), "ping-pong needs the TMA path and two consumer warpgroups");
static_assert(!A_MN || IN_KIND != 2, "an MN-major A operand: 16-bit inputs only (fp8 wgmma reads K-major A)");
static_assert(!TRANS_C || (USE_TMA && B_KMAJOR && !PINGPONG && MI == 1 && BN <= 160),
              "swapped product: TMA path, K-major operands, no ping-pong, one m64 block of <= 160 columns");
static_assert(!TRANS_C || !TMA_STORE || WG_ROWS * OUT_BYTES / 128 <= EPI_BUFS,
              "swapped product: one staging buffer per 128 bytes of a warpgroup's 64 C columns");
constexpr int ORDER_BAR = 3;   // ping-pong: named barriers 3 and 4 hand the tensor core from one consumer to the other
constexpr int WG_A = PINGPONG ? 0 : 1;             // A-row offset factor of consumer warpgroup wg inside a tile
constexpr int READERS = (PINGPONG ? 1 : NC) * 4;   // consumer warps that read each stage in one CTA

// ---------------------------------------------------------------- small PTX wrappers
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t swz) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
         ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | ((uint64_t)swz << 62);
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
// the same wait with cluster-scope acquire: the phase was completed by another CTA of the cluster
__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// Consumers release a ring slot after wgmma.wait_group: the slot was only read through the async proxy, so the
// arrive needs no release fence (RELAXED drops the MEMBAR that the default .release puts before it).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
  // arrive on the barrier at the same offset in CTA `cta` of this cluster (itself included)
  if constexpr (RELAXED)
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar), "r"(cta) : "memory");
  else
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar), "r"(cta) : "memory");
}
__device__ __forceinline__ void mbar_arrive_local(uint32_t bar) {
  if constexpr (RELAXED) asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
  else asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// a consumer warp frees a ring slot: one arrive on its empty barrier in every CTA of the cluster (their producers
// multicast into this CTA's slot too), and with LOCAL_EMPTY one on this CTA's local empty barrier
__device__ __forceinline__ void release_slot(uint32_t empty_bar) {
  if constexpr (CM > 1) {
#pragma unroll
    for (int c = 0; c < CM; ++c) mbar_arrive_cluster(empty_bar, c);
    if constexpr (LOCAL_EMPTY) mbar_arrive_local(empty_bar + LOCAL_OFF);
  } else {
    mbar_arrive_local(empty_bar);
  }
}
__device__ __forceinline__ void tma_load(uint32_t dst, const TmaDesc* map, int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
__device__ __forceinline__ void tma_load_mc(uint32_t dst, const TmaDesc* map, int c0, int c1, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
__device__ __forceinline__ void tma_store(const TmaDesc* map, int c0, int c1, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map), "r"(c0),
               "r"(c1), "r"(src) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N> __device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void tma_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// programmatic dependent launch: launched with the PDL attribute, this grid may start while the kernel before it in
// the stream is still finishing; griddepcontrol.wait blocks until that kernel has completed and its writes are
// visible (at once for a normal launch), so every global access of the kernel comes after it. launch_dependents lets
// the next PDL launch be scheduled as soon as every CTA of this grid has issued it or exited (its CTAs then set up
// on SMs this grid frees, and wait in turn).
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void prefetch_tensormap(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
template <int R> __device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ uint32_t swz(uint32_t off, uint32_t mask) { return off ^ ((off >> 3) & mask); }

// ---------------------------------------------------------------- WGMMA_WRAPPER (generated)
//@@WGMMA@@

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
__device__ __forceinline__ void st_shared_f2(uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ void st_shared_f1(uint32_t addr, float x) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(x) : "memory");
}
__device__ __forceinline__ void st_shared_u16(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u16 [%0], %1;" ::"r"(addr), "h"((uint16_t)v) : "memory");
}
// four 8x8 b16 matrices from the mma fragment layout into shared memory (row addresses from lanes 8i..8i+7)
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3) : "memory");
}

// ---------------------------------------------------------------- work units (tiles x K splits), grouped order
struct Unit { int m_tile, n_tile, kt0, kt1; };
__device__ __forceinline__ Unit unit_of(int u, int rank, int num_mc, int num_n, int num_kt, int splits, int group_m) {
  const int split = u % splits;
  const int t = u / splits;
  const int per_group = group_m * num_n;
  const int first_m = (t / per_group) * group_m;
  const int gsize = min(num_mc - first_m, group_m);
  const int mc = first_m + (t % per_group) % gsize;
  const int n = (t % per_group) / gsize;
  const int kt_per = (num_kt + splits - 1) / splits;
  Unit r;
  r.m_tile = CLUSTER_N ? mc : mc * CM + rank;   // num_mc: clusters along M (CLUSTER_N: tiles)
  r.n_tile = CLUSTER_N ? n * CM + rank : n;     // num_n: tiles along N (CLUSTER_N: clusters)
  r.kt0 = split * kt_per;
  r.kt1 = min(num_kt, r.kt0 + kt_per);
  return r;
}

// ---------------------------------------------------------------- stream-K: the last units' k-tiles, shared
// Units [0, units - sk_units) run whole, round-robin over the clusters; the k-tiles of the last sk_units units form
// one range that cluster c covers from sk_begin(c) to sk_begin(c + 1). A range cut inside a unit leaves it in
// segments: the one that ends the unit's K (its "owner": the first segment of its cluster's range) stores the tile
// after adding the others' fp32 partials; every other segment starts the cluster's share or lies inside it, ends
// before K does and is the last of its cluster's range — so each cluster leaves at most one partial, in its
// workspace slot. A cluster runs its partial FIRST (owners wait for it), then its whole units, then its owner piece
// LAST: by then each partial it adds, run first in a range about as long, is stored — the owner only waits when a
// partial is longer than everything else in the owner's range (ranges shorter than a unit). Run in range order
// instead, an owner piece came first and waited for a partial up to a whole range long (measured 25 us at 3072^3).
// Owners wait only for partials, which never wait: no cycle, as long as every cluster is resident (the launcher
// sizes the grid so).
// TIMELINE slots: 0 entry, 1 set-up done, 2 / 3 the A / B producer thread's first load, 4 + 4 wg consumer warpgroup
// wg's first stage arrived, 5 + 4 wg its last unit's wgmmas done, 6 + 4 wg its stores done, 15 exit (thread 0)
constexpr int TL_SLOTS = 16;
__device__ __forceinline__ void tl_stamp(float* sk_ws, int i) {
  if constexpr (TIMELINE) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    reinterpret_cast<uint64_t*>(sk_ws)[blockIdx.x * TL_SLOTS + i] = t;
  }
}
__device__ __forceinline__ void sk_stamp(int* sk_flags, int wg, int i) {
  if constexpr (STREAMK_TRACE) {
    if (threadIdx.x % 128 == 0 && sk_flags != nullptr) {
      uint64_t t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      reinterpret_cast<uint64_t*>(sk_flags + 1024)[(blockIdx.x * NC + wg) * 8 + i] = t;
    }
  }
}
// (the launcher keeps clusters * sk_units * num_kt below 2^31)
__device__ __forceinline__ int sk_begin(int c, int sk_units, int num_kt, int clusters) {
  return c * sk_units * num_kt / clusters;
}
// cluster c's share: [begin, rest_end) run in order after its partial (k-tiles [partial_kt0, partial_kt1) of shared
// unit partial_tile; partial_kt1 == 0 when the share ends exactly at a unit's end)
struct SkShare { int begin, rest_end, partial_tile, partial_kt0, partial_kt1; };
__device__ __forceinline__ SkShare sk_share(int c, int sk_units, int num_kt, int clusters) {
  SkShare r;
  r.begin = sk_begin(c, sk_units, num_kt, clusters);
  const int end = sk_begin(c + 1, sk_units, num_kt, clusters);
  r.rest_end = end;
  r.partial_tile = 0;
  r.partial_kt0 = r.partial_kt1 = 0;
  if (end > r.begin && end % num_kt != 0) {
    const int t = end / num_kt;               // the unit the share ends in, before its K ends
    const int first = max(r.begin, t * num_kt);
    r.partial_tile = t;
    r.partial_kt0 = first - t * num_kt;
    r.partial_kt1 = end - t * num_kt;
    r.rest_end = first;
  }
  return r;
}
// the float4 `ld(j)` (j = m-block * ACC_N / 4 + i: this thread's j-th of a slot) added to the accumulators; FROM_ZERO
// sums (0 + acc) + p, the order of tcf_splitk_reduce's planes (bits equal to theirs, -0 included)
template <bool FROM_ZERO, typename Load> __device__ __forceinline__ void add_slot(float (&acc)[MI][ACC_N], Load ld) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < ACC_N / 4; ++i) {
      const float4 p = ld(mi * ACC_N / 4 + i);
      float* a = &acc[mi][4 * i];
      if constexpr (FROM_ZERO) {
        a[0] = (0.f + a[0]) + p.x, a[1] = (0.f + a[1]) + p.y, a[2] = (0.f + a[2]) + p.z, a[3] = (0.f + a[3]) + p.w;
      } else {
        a[0] += p.x, a[1] += p.y, a[2] += p.z, a[3] += p.w;
      }
    }
}
// one consumer warpgroup's accumulators into its workspace slot (one per cluster, CTA rank and consumer warpgroup;
// L2 only: another SM reads them)
__device__ __forceinline__ void store_slot(float (&acc)[MI][ACC_N], float* slot) {
  float4* dst = reinterpret_cast<float4*>(slot) + threadIdx.x % 128;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < ACC_N / 4; ++i)
      __stcg(dst + (mi * ACC_N / 4 + i) * 128,
             make_float4(acc[mi][4 * i], acc[mi][4 * i + 1], acc[mi][4 * i + 2], acc[mi][4 * i + 3]));
}
__device__ __forceinline__ void sk_store_partial(float (&acc)[MI][ACC_N], float* slot, int* flag, int wg) {
  const int lt = threadIdx.x % 128;
  store_slot(acc, slot);
  named_sync(5 + wg, 128);   // every thread's stores precede the release below
  if (lt == 0) asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(1) : "memory");
}
__device__ __forceinline__ void sk_add_partial(float (&acc)[MI][ACC_N], const float* slot, int* flag, int wg) {
  const int lt = threadIdx.x % 128;
  if (lt == 0) {
    uint32_t v = 0;
    do {
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    } while (v == 0);
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(0) : "memory");   // ready for the next launch
  }
  named_sync(5 + wg, 128);   // the acquire above precedes every thread's loads
  const float4* src = reinterpret_cast<const float4*>(slot) + lt;
  add_slot<false>(acc, [&](int j) { return __ldcg(src + j * 128); });
}

#if SK_FUSED
// ---------------------------------------------------------------- split-K inside the kernel (no planes, no reduction)
// Every split of a tile slice (one consumer warpgroup's rows of one CTA) stores its fp32 partial in the slice's slot
// for that split and counts itself in on the slice's counter; the split that arrives last adds all slots in split
// order starting from 0 (the order of tcf_splitk_reduce: bit-identical results) and stores the tile through the
// normal epilogue, resetting the counter for the next launch. Nobody waits. Returns whether this warpgroup stores.
constexpr int FS_SLICES = PINGPONG ? 1 : NC;   // counters per CTA tile: one per warpgroup that owns rows of it
__device__ __forceinline__ bool fused_split_arrive(float (&acc)[MI][ACC_N], float* slots, int* counter, int split,
                                                   int splits, int wg, volatile int* last) {
  const int lt = threadIdx.x % 128;
  store_slot(acc, slots + (int64_t)split * SK_SLOT);
  named_sync(5 + wg, 128);   // every thread's stores precede the count below
  if (lt == 0) {
    int old;
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
    const int is_last = old == splits - 1;
    if (is_last) asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(counter), "r"(0) : "memory");
    *last = is_last;
  }
  named_sync(5 + wg, 128);   // the acquire above precedes every thread's loads
  if (!*last) return false;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < ACC_N; ++i) acc[mi][i] = 0.f;
  // the loads are latency-bound (one SM reads every split's slot): per batch up to 16 float4 per thread in flight
  // (8 beside 128 accumulators: no spill), several slots per batch when a slot holds fewer
  constexpr int C4 = ACC_N / 4;                          // float4 per thread per m-block in one slot
  constexpr int G = C4 <= 16 && MI * ACC_N <= 64 ? C4 : (C4 < 8 ? C4 : 8);   // float4 of one slot per batch
  constexpr int U = G == C4 && C4 < 8 ? 8 / C4 : 1;      // slots per batch
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int g = 0; g < C4; g += G) {
      const float4* src = reinterpret_cast<const float4*>(slots) + (mi * C4 + g) * 128 + lt;
#pragma unroll 1
      for (int z = 0; z < splits; z += U, src += U * (SK_SLOT / 4)) {
        float4 p[U][G];
#pragma unroll
        for (int v = 0; v < U; ++v)
#pragma unroll
          for (int i = 0; i < G; ++i)
            if (z + v < splits) p[v][i] = __ldcg(src + v * (SK_SLOT / 4) + i * 128);
#pragma unroll
        for (int v = 0; v < U; ++v) {   // in split order
          if (z + v < splits) {
#pragma unroll
            for (int i = 0; i < G; ++i) {
              acc[mi][4 * (g + i)] += p[v][i].x;
              acc[mi][4 * (g + i) + 1] += p[v][i].y;
              acc[mi][4 * (g + i) + 2] += p[v][i].z;
              acc[mi][4 * (g + i) + 3] += p[v][i].w;
            }
          }
        }
      }
    }
  return true;
}
#endif

#if SK_PAIR
// ---------------------------------------------------------------- split-K of two CTAs in a cluster (DSMEM)
// Split 1 (cluster rank 1) waits until split 0's receive slot for its warpgroup is free, then stores its fp32
// partial into it with st.async, each store completing bytes on split 0's "landed" mbarrier; split 0 arms that
// barrier with the slot's bytes, waits, adds the partial to its own in split order from 0 (0 + p0 + p1: the planes'
// bits) and frees the slot with one remote arrive. Returns whether this warpgroup stores the tile.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t map_to(uint32_t addr, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}
__device__ __forceinline__ bool pair_split_exchange(float (&acc)[MI][ACC_N], uint32_t slot, uint32_t landed,
                                                    uint32_t freed, uint32_t phase, int wg) {
  const int lt = threadIdx.x % 128;
  if (cluster_rank() == 1) {
    mbar_wait_cluster(freed, phase ^ 1);   // split 0 has read this slot's previous partial (at once the first time)
    const uint32_t dst = map_to(slot, 0) + lt * 16, bar = map_to(landed, 0);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int i = 0; i < ACC_N / 4; ++i)
        asm volatile(
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(
                dst + (uint32_t)((mi * ACC_N / 4 + i) * 128 * 16)),
            "f"(acc[mi][4 * i]), "f"(acc[mi][4 * i + 1]), "f"(acc[mi][4 * i + 2]), "f"(acc[mi][4 * i + 3]),
            "r"(bar)
            : "memory");
    return false;
  }
  if (lt == 0) mbar_expect_tx(landed, SK_SLOT * 4);   // the one arrival of the phase, plus the bytes to land
  mbar_wait(landed, phase);
  const float4* src = reinterpret_cast<const float4*>(__cvta_shared_to_generic(slot)) + lt;
  add_slot<true>(acc, [&](int j) { return src[j * 128]; });
  named_sync(5 + wg, 128);   // every thread has read the slot before split 1 may write it again
  if (lt == 0)
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(map_to(freed, 1)) : "memory");
  return true;
}
#endif

// ---------------------------------------------------------------- descriptors of one stage
__device__ __forceinline__ uint64_t desc_a(uint32_t a_stage, int wg, int mi, int ks) {
  if constexpr (A_MN)   // the 64-column slab of this m64 block: BK rows of 128 bytes
    return make_desc(a_stage + ((wg * WG_A * WG_ROWS) / 64 + mi) * (BK * 128) + ks * 16 * 128, BK * 128, 1024, 1);
  return make_desc(a_stage + (wg * WG_A * WG_ROWS + mi * 64) * BK_BYTES + ks * 32, 16, 8 * BK_BYTES, K_SWZ);
}
__device__ __forceinline__ uint64_t desc_b(uint32_t b_stage, int ks) {
  if constexpr (B_KMAJOR) return make_desc(b_stage + ks * 32, 16, 8 * BK_BYTES, K_SWZ);
  else return make_desc(b_stage + ks * 16 * 128, B_SLAB, 1024, 1);
}

// one k-tile of MMAs for consumer warpgroup `wg` on stage buffers at a_stage / b_stage, each wgmma's descriptors
// built from the addresses (rungs 1-8; rung 9's hoisted builds, TMA only, take mma_stage_desc below)
// (`first`: the segment's first k-tile — stream-K builds then start each m-block with scale-d 0, no zeroing)
__device__ __forceinline__ void mma_stage(float (&acc)[MI][ACC_N], uint32_t a_stage, uint32_t b_stage, int wg,
                                          bool first) {
#pragma unroll
  for (int ks = 0; ks < KSTEPS; ++ks) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const uint64_t da = desc_a(a_stage, wg, mi, ks), db = desc_b(b_stage, ks);
      if constexpr (STREAMK) wgmma_tile_sd(acc[mi], da, db, !(first && ks == 0));
      else wgmma_tile(acc[mi], da, db);
    }
  }
}

template <int V> struct Ops { static constexpr int value = V; };   // the producer threads' loads (bit 0 A, bit 1 B)
#if HOIST
// A k-tile's ring position: its stage and the parity of that stage's barrier phase, advanced by a compare instead of
// the division (it % STAGES, it / STAGES) that a k-tile counter costs per k-tile when STAGES is not a power of two.
struct RingPos {
  uint32_t s = 0, ph = 0;
  __device__ __forceinline__ void next() {
    if (++s == STAGES) s = 0, ph ^= 1;
  }
  __device__ __forceinline__ void skip(uint32_t n) {   // n k-tiles at once (a ping-pong tile of the other warpgroup)
    const uint32_t t = s + n;
    ph ^= (t / STAGES) & 1;
    s = t % STAGES;
  }
};
// one k-tile of MMAs from stage descriptors da / db (the stage's base descriptors): every wgmma's pair is the stage's
// plus a compile-time step on the 14-bit address field, so the loop adds constants and nothing else per wgmma
__device__ __forceinline__ void mma_stage_desc(float (&acc)[MI][ACC_N], uint64_t da, uint64_t db, bool first) {
#pragma unroll
  for (int ks = 0; ks < KSTEPS; ++ks) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      constexpr int A_KSTEP = A_MN ? 2048 : 32, B_KSTEP = B_KMAJOR ? 32 : 2048;
      const uint64_t a = da + (uint64_t)((mi * 64 * BK_BYTES + ks * A_KSTEP) >> 4);
      const uint64_t b = db + (uint64_t)((ks * B_KSTEP) >> 4);
      if constexpr (STREAMK) wgmma_tile_sd(acc[mi], a, b, !(first && ks == 0));
      else wgmma_tile(acc[mi], a, b);
    }
  }
}
#endif

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
  if (lt == 0) tma_store_wait_read<0>();   // the previous tile's stores have read every buffer
  named_sync(1 + wg, 128);
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
        st_shared_f1(sbuf + swz(c * 128 + byte, 0x70u), x);
        st_shared_f1(sbuf + swz((c + 1) * 128 + byte, 0x70u), y);
      } else {
        const uint32_t p = pack_pair(x, y);
        st_shared_u16(sbuf + swz(c * 128 + byte, 0x70u), p & 0xFFFFu);
        st_shared_u16(sbuf + swz((c + 1) * 128 + byte, 0x70u), p >> 16);
      }
    }
  }
  fence_proxy_async();
  named_sync(1 + wg, 128);
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
    if (lane == 0) tma_store_wait_read<(EPI_BUFS - 1) * MI>();   // this warp's store that last used it has read it
    __syncwarp();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) stage(buf + (mi * 64 + frow) * 128, mi, c, fxor);
    fence_proxy_async();   // each thread's staging writes, before the async proxy reads them
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
        st_shared_f2(rows + off, scaled(f[0], alpha), scaled(f[1], alpha));
        st_shared_f2(rows + 8 * 128 + off, scaled(f[2], alpha), scaled(f[3], alpha));
      }
    } else {
#pragma unroll
      for (int jj = 0; jj < JS; jj += 2) {
        const float* f = &acc[mi][(c * JS + jj) * 4];   // fragments jj and jj + 1: 8 values
        stmatrix_x4(rows + ((jj * 16) ^ fxor), pack_pair(scaled(f[0], alpha), scaled(f[1], alpha)),
                    pack_pair(scaled(f[2], alpha), scaled(f[3], alpha)),
                    pack_pair(scaled(f[4], alpha), scaled(f[5], alpha)),
                    pack_pair(scaled(f[6], alpha), scaled(f[7], alpha)));
      }
    }
  });
}

#if EPI_DEFER
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
        st_shared_f2(rows + off, __uint_as_float(f[0]), __uint_as_float(f[1]));
        st_shared_f2(rows + 8 * 128 + off, __uint_as_float(f[2]), __uint_as_float(f[3]));
      }
    } else {
#pragma unroll
      for (int jj = 0; jj < JS; jj += 2) {
        const int q = ((c - HELD0) * JS + jj) * 2;
        stmatrix_x4(rows + ((jj * 16) ^ fxor), p[q], p[q + 1], p[q + 2], p[q + 3]);
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
#endif

__device__ __forceinline__ float load_alpha(const float* sa, const float* sb) {
  if constexpr (SPLITK) return 1.f;   // applied by the reduction
  float a = 1.f;
  if (sa) a *= *sa;
  if (sb) a *= *sb;
  return a;
}

template <int R> __device__ __forceinline__ void zero(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) d[i] = 0.f;
}

// ---------------------------------------------------------------- the kernel
#if CM > 1
#define TCF_CLUSTER __cluster_dims__(CM, 1, 1)
#elif SK_PAIR
#define TCF_CLUSTER __cluster_dims__(2, 1, 1)   // the two splits of a tile
#else
#define TCF_CLUSTER
#endif

extern "C" __global__ void TCF_CLUSTER __launch_bounds__(NTHREADS, 1)
tcf_gemm(const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB, const __grid_constant__ TmaDesc mapC,
         const void* __restrict__ A, const void* __restrict__ B, void* __restrict__ C, int M, int N, int K,
         long long lda, long long ldb, long long ldc, const float* scale_a, const float* scale_b, int splits,
         int group_m, float* __restrict__ sk_ws, int* __restrict__ sk_flags, int sk_units) {
  extern __shared__ uint8_t smem_raw[];
  if (TIMELINE && threadIdx.x == 0) tl_stamp(sk_ws, 0);
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  const uint32_t ring = smem_u32(smem);
  const uint32_t a_ring = ring, b_ring = ring + STAGES * A_TILE;
  const int num_m = (M + BM - 1) / BM, num_n = (N + BN - 1) / BN, num_kt = (K + BK - 1) / BK;
  const int num_mc = CLUSTER_N ? num_m : (num_m + CM - 1) / CM;
  const int num_nc = CLUSTER_N ? (num_n + CM - 1) / CM : num_n;   // what unit_of calls num_n
  const int units = num_mc * num_nc * splits;
  const int rank = CM > 1 ? (int)(blockIdx.x % CM) : 0;
  const int num_clusters = gridDim.x / CM;
  const int64_t ws_stride = SPLITK ? (int64_t)(TRANS_C ? N : M) * ldc : 0;   // one split's plane of C

#if USE_TMA
  // ------------------------------------------------ warp-specialised: warpgroup 0 produces, 1..NC consume
  const uint32_t full_bar = ring + BAR_OFFSET, empty_bar = full_bar + STAGES * 8;
  const int wg_id = threadIdx.x / 128;
  const int cluster = blockIdx.x / CM;
  const int dp_units = STREAMK ? units - sk_units : units;   // units run whole
  // this cluster's stream-K share in the order the producer loads it and the consumers run it (one walk for both,
  // so they cannot fall out of step): f(unit w, shared unit index t, is_partial) for the partial first (others wait
  // for it), then the whole units, then the owner piece (k-tiles [w.kt0, w.kt1) of shared unit t = unit
  // dp_units + t) last, when the partials it adds are most likely stored: each ran first in a range about as long
  auto sk_walk = [&](auto&& f) {
    const SkShare sh = sk_share(cluster, sk_units, num_kt, num_clusters);
    const bool part = sh.partial_kt1 > 0;
    const bool owner = sh.begin < sh.rest_end && sh.begin % num_kt != 0;   // the range starts inside a unit
    const int w0 = sh.begin / num_kt + (owner ? 1 : 0), nw = max(0, sh.rest_end / num_kt - w0);   // whole units
    const int n = (part ? 1 : 0) + nw + (owner ? 1 : 0);
    for (int i = 0; i < n; ++i) {   // one call site: the producer's TMA code is inlined once
      const int j = part ? i - 1 : i;
      int t = sh.begin / num_kt, kt0 = sh.begin % num_kt;   // the owner piece (last)
      if (j < 0) t = sh.partial_tile, kt0 = sh.partial_kt0;
      else if (j < nw) t = w0 + j, kt0 = 0;
      Unit w = unit_of(dp_units + t, rank, num_mc, num_nc, num_kt, 1, group_m);
      w.kt0 = kt0;
      w.kt1 = j < 0 ? sh.partial_kt1 : num_kt;
      f(w, t, j < 0);
    }
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_bar + s * 8, HOIST ? 2 : 1);   // rung 9: one arrival per producer thread
      mbar_init(empty_bar + s * 8, READERS * CM);   // one arrive per consumer warp of every CTA reading the slot
    }
    for (int i = 0; i < PAIR_BARS; ++i) mbar_init(empty_bar + (STAGES + i) * 8, 1);   // pair split-K
    if constexpr (LOCAL_EMPTY)
      for (int s = 0; s < STAGES; ++s) mbar_init(empty_bar + LOCAL_OFF + s * 8, READERS);   // this CTA's readers
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    prefetch_tensormap(&mapA);
    prefetch_tensormap(&mapB);
    if constexpr (TMA_STORE) prefetch_tensormap(&mapC);
  }
  if constexpr (CM > 1 || SK_PAIR) cluster_sync(); else __syncthreads();
  pdl_wait();   // everything above is this CTA's own set-up; from here on global memory is read and written
  if (TIMELINE && threadIdx.x == 0) tl_stamp(sk_ws, 1);

  if (wg_id == 0) {
    if constexpr (SETMAXNREG) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
    // rung 9: two producer threads in two warps, thread 0 loading A and thread 32 B, each arming the stage's full
    // barrier with its own operand's bytes (the barrier counts two arrivals): one thread issuing both ran a chain of
    // ~47 instructions per k-tile, the bound of the small tiles (docs/gemm.md, "The producer's instruction chain").
    // Earlier rungs: thread 0 loads both.
    // (OPS: bit 0 loads A, bit 1 B; a compile-time value, so each thread's loop holds its own loads only)
    auto producer = [&](auto ops) {
      constexpr int OPS = decltype(ops)::value;
      constexpr bool loads_a = (OPS & 1) != 0, loads_b = (OPS & 2) != 0;
      // the operand this CTA loads for itself alone (B in a cluster along N, A in one along M) waits for its own
      // consumers only (LOCAL_EMPTY); the multicast one for every CTA's, whose slots it writes
      constexpr bool own_only = LOCAL_EMPTY && (CLUSTER_N ? !loads_a : !loads_b);   // (LOCAL_EMPTY implies CM > 1)
      uint32_t it = 0;
#if HOIST
      RingPos rp;
#endif
      // load k-tiles [w.kt0, w.kt1) of one unit into the ring
      auto produce = [&](const Unit& w) {
        for (int kt = w.kt0; kt < w.kt1; ++kt, ++it) {
#if HOIST
          const uint32_t s = rp.s, parity = rp.ph ^ 1;
          rp.next();
#else
          const int s = it % STAGES;
          const uint32_t parity = ((it / STAGES) & 1) ^ 1;
#endif
          mbar_wait(empty_bar + s * 8 + (own_only ? LOCAL_OFF : 0), parity);
          const uint32_t fb = full_bar + s * 8;
          if constexpr ((DIAG & 1) != 0) {   // the consumers re-read the first fill's stages
            if (it >= STAGES) {
              mbar_arrive_local(fb);
              continue;
            }
          }
          mbar_expect_tx(fb, (loads_a ? A_TILE : 0) + (loads_b ? B_TILE : 0));
          if constexpr (!loads_a) {
          } else if constexpr (A_MN && CLUSTER_N) {   // this CTA's BK/CM k-rows of each slab, multicast to the cluster
            constexpr int K_ROWS = BK / CM;   // (a slab's 128-byte swizzle repeats every 8 rows: whole groups)
#pragma unroll
            for (int i = 0; i < BM / 64; ++i)
              tma_load_mc(a_ring + s * A_TILE + i * (BK * 128) + rank * K_ROWS * 128, &mapA, w.m_tile * BM + i * 64,
                          kt * BK + rank * K_ROWS, fb, (1 << CM) - 1);
          } else if constexpr (A_MN) {   // BM/64 boxes of {64, BK}: one slab per 64 rows of the tile
#pragma unroll
            for (int i = 0; i < BM / 64; ++i)
              tma_load(a_ring + s * A_TILE + i * (BK * 128), &mapA, w.m_tile * BM + i * 64, kt * BK, fb);
          } else if constexpr (CLUSTER_N) {   // this CTA's BM/CM rows of A, multicast to the cluster
            constexpr int A_ROWS = BM / CM;
            tma_load_mc(a_ring + s * A_TILE + rank * A_ROWS * BK_BYTES, &mapA, kt * BK, w.m_tile * BM + rank * A_ROWS,
                        fb, (1 << CM) - 1);
          } else {
            tma_load(a_ring + s * A_TILE, &mapA, kt * BK, w.m_tile * BM, fb);
          }
          const uint32_t bs = b_ring + s * B_TILE;
          if constexpr (!loads_b) {
          } else if constexpr (B_KMAJOR) {
            constexpr int ROWS = BN / B_MC;   // this CTA loads BN/B_MC rows of B (B_BOX at a time), multicasts them
#pragma unroll
            for (int i = 0; i < ROWS / B_BOX; ++i) {
              const int row = (B_MC > 1 ? rank : 0) * ROWS + i * B_BOX;
              if constexpr (B_MC > 1)
                tma_load_mc(bs + row * BK_BYTES, &mapB, kt * BK, w.n_tile * BN + row, fb, (1 << CM) - 1);
              else
                tma_load(bs + row * BK_BYTES, &mapB, kt * BK, w.n_tile * BN + row, fb);
            }
          } else {
            constexpr int SLABS = B_SLABS / B_MC;
#pragma unroll
            for (int i = 0; i < SLABS; ++i) {
              const int slab = (B_MC > 1 ? rank : 0) * SLABS + i;
              if constexpr (B_MC > 1)
                tma_load_mc(bs + slab * B_SLAB, &mapB, w.n_tile * BN + slab * 64, kt * BK, fb, (1 << CM) - 1);
              else
                tma_load(bs + slab * B_SLAB, &mapB, w.n_tile * BN + slab * 64, kt * BK, fb);
            }
          }
        }
      };
      if constexpr (TIMELINE) tl_stamp(sk_ws, loads_a ? 2 : 3);
      for (int u = cluster; u < dp_units; u += num_clusters)
        produce(unit_of(u, rank, num_mc, num_nc, num_kt, splits, group_m));
      if constexpr (STREAMK) sk_walk([&](const Unit& w, int, bool) { produce(w); });
      // every load of this CTA is issued: the next PDL launch may be scheduled once all CTAs are here (it sets up
      // on SMs as they free and waits for this grid). A trigger at the kernel's start measured the same
      // (docs/gemm.md, "Programmatic dependent launch"); this one leaves the next grid queued for less time.
      if constexpr (loads_a) pdl_launch_dependents();
      // the producer's tail (in a cluster, in place of a cluster barrier at the kernel's end): wait until every
      // CTA's consumers have released the last STAGES slots this thread filled. Then no peer's consumer will still
      // arrive on this CTA's empty barriers, and every multicast this CTA issued has landed in its peers (each peer
      // consumed it before releasing it), so the CTA may leave as soon as its own stores are done — the barrier held
      // it until the slowest thread of the cluster had stored its tile. A ring position never filled (fewer k-tiles
      // than stages) is a fresh slot: its wait returns at once, as in the first fill.
      if constexpr (CM > 1 && !own_only) {
        for (int i = 0; i < STAGES; ++i, ++it) {
#if HOIST
          mbar_wait(empty_bar + rp.s * 8, rp.ph ^ 1);
          rp.next();
#else
          mbar_wait(empty_bar + (it % STAGES) * 8, ((it / STAGES) & 1) ^ 1);
#endif
        }
      }
    };
    if (threadIdx.x == 0) producer(Ops<HOIST ? 1 : 3>{});
    else if (HOIST && threadIdx.x == 32) producer(Ops<2>{});
  } else {
    if constexpr (SETMAXNREG) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
    const int wg = wg_id - 1;
    const int lane = threadIdx.x % 32;
    const float alpha = load_alpha(scale_a, scale_b);
    // the A descriptor's warpgroup taken warp-uniform (a shuffle from lane 0), so the compiler keeps the hoisted
    // descriptors in uniform registers: from threadIdx it built every wgmma's descriptor in vector registers and
    // moved it over (R2UR), ~20 instructions per wgmma per warp. (wg itself stays as it was: made uniform for the
    // whole branch, it cost the stream-K builds without a cluster an 8-byte spill.)
    const uint64_t da0 = desc_a(a_ring, __shfl_sync(0xffffffffu, wg, 0), 0, 0), db0 = desc_b(b_ring, 0);
    uint32_t it = 0, epi_count = 0, pair_it = 0;
#if HOIST
    RingPos rp;   // the next k-tile's stage and phase (rung 9: no division per k-tile)
#endif
    float acc[MI][ACC_N];
#if EPI_DEFER
    uint32_t held[DEFER_WORDS];   // the previous tile's held C until the next tile's k-tiles have staged it
    int pend_row0 = 0, pend_col0 = 0;
#if EPI_SPREAD
    int pend = 0;   // held sub-tiles not yet staged: one per k-tile (flush_one), the rest before the next hold
    auto flush_one = [&]() {
      epilogue_tma_held_one(DEFER_SUBS - pend, held, &mapC, smem + RING_BYTES, wg, pend_row0, pend_col0, epi_count);
      --pend;
    };
    auto flush = [&]() {
      while (pend) flush_one();
    };
#else
    bool pend = false;
    auto flush = [&]() {
      epilogue_tma_held(held, &mapC, smem + RING_BYTES, wg, pend_row0, pend_col0, epi_count);
      pend = false;
    };
#endif
#endif
    // accumulate k-tiles [w.kt0, w.kt1) of one unit from the ring into acc (zeroed first)
    [[maybe_unused]] bool tl_first = TIMELINE;   // (TIMELINE) the first stage this warpgroup waits for is still to come
    auto consume = [&](const Unit& w) {
      if constexpr (!STREAMK || DO_PROMOTE) {   // stream-K: the first k-tile's wgmmas ignore the old acc (scale-d 0)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) zero(acc[mi]);
      }
      if constexpr (DO_PROMOTE) {
        // per stage and N half: the tensor core sums the stage's K (scale-d 0 on its first k-step), then the fp32
        // totals take the partial; the slot is free once both halves are read
        for (int kt = w.kt0; kt < w.kt1; ++kt, ++it) {
#if HOIST
          const uint32_t s = rp.s;
          mbar_wait(full_bar + s * 8, rp.ph);
          rp.next();
#else
          const int s = it % STAGES;
          mbar_wait(full_bar + s * 8, (it / STAGES) & 1);
#endif
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            float part[ACC_N / 2];
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks) {
              const uint64_t da = da0 + (uint64_t)((s * A_TILE + ks * 32) >> 4);
              const uint64_t db = db0 + (uint64_t)((s * B_TILE + h * (BN / 2) * BK_BYTES + ks * 32) >> 4);
              wgmma_half(part, da, db, ks > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            fence_regs(part);
#pragma unroll
            for (int i = 0; i < ACC_N / 2; ++i) acc[0][h * (ACC_N / 2) + i] += part[i];
          }
          if (lane == 0) release_slot(empty_bar + s * 8);
        }
      } else {
#if HOIST
        uint32_t prev_s = 0;   // the stage of the k-tile before this one: released once its wgmmas are done
#endif
        if constexpr (TIMELINE) {   // the first stage's arrival, waited for here so the k-loop's code is the plain one's
          if (tl_first && w.kt1 > w.kt0) {
#if HOIST
            mbar_wait(full_bar + rp.s * 8, rp.ph);
#else
            mbar_wait(full_bar + (it % STAGES) * 8, (it / STAGES) & 1);
#endif
            if (threadIdx.x % 128 == 0) tl_stamp(sk_ws, 4 + 4 * wg);
          }
          tl_first = false;
        }
        for (int kt = w.kt0; kt < w.kt1; ++kt, ++it) {
#if HOIST
          const uint32_t s = rp.s;
          mbar_wait(full_bar + s * 8, rp.ph);
#else
          const int s = it % STAGES;
          mbar_wait(full_bar + s * 8, (it / STAGES) & 1);
#endif
#pragma unroll
          for (int mi = 0; mi < MI; ++mi) fence_regs(acc[mi]);
          wgmma_fence();
#if HOIST
          if constexpr ((DIAG & 4) == 0)
            mma_stage_desc(acc, da0 + (uint64_t)(s * (A_TILE >> 4)), db0 + (uint64_t)(s * (B_TILE >> 4)), kt == w.kt0);
#else
          if constexpr ((DIAG & 4) == 0)
            mma_stage(acc, a_ring + s * A_TILE, b_ring + s * B_TILE, wg, kt == w.kt0);
#endif
          wgmma_commit();
#if EPI_DEFER && EPI_SPREAD
          if (pend) flush_one();   // one sub-tile of the previous tile's C while this k-tile's wgmmas run
#elif EPI_DEFER
          if (pend) flush();   // the previous tile's C staged and stored while this k-tile's wgmmas run
#endif
          wgmma_wait<1>();   // the previous k-tile's MMAs are done: release its slot
#pragma unroll
          for (int mi = 0; mi < MI; ++mi) fence_regs(acc[mi]);
#if HOIST
          if (kt > w.kt0 && lane == 0) release_slot(empty_bar + prev_s * 8);
          prev_s = s;
          rp.next();
#else
          if (kt > w.kt0 && lane == 0) release_slot(empty_bar + ((it + STAGES - 1) % STAGES) * 8);
#endif
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_regs(acc[mi]);
        if (TIMELINE && threadIdx.x % 128 == 0) tl_stamp(sk_ws, 5 + 4 * wg);   // (the last unit's stamp stays)
#if HOIST
        if (w.kt1 > w.kt0 && lane == 0) release_slot(empty_bar + prev_s * 8);
#else
        if (w.kt1 > w.kt0 && lane == 0) release_slot(empty_bar + ((it + STAGES - 1) % STAGES) * 8);
#endif
      }  // DO_PROMOTE
    };
    // write acc as this warpgroup's rows of unit w (split `split` of a split-K launch: its workspace plane)
    auto store = [&](const Unit& w, int split) {
      if constexpr ((DIAG & 2) != 0) {   // M >= 0 always: nothing is stored, yet acc stays live (else ptxas drops the wgmmas)
        if (M >= 0) return;
      }
      const int row0 = w.m_tile * BM + wg * WG_A * WG_ROWS, col0 = w.n_tile * BN;
#if EPI_DEFER && EPI_SPREAD
      if (pend) flush();   // what a unit of fewer k-tiles than held sub-tiles left
      if constexpr (OUT_BYTES == 4)   // fp32: the first half now, the second held
        epilogue_tma<EPI_SUBS - DEFER_SUBS>(acc, &mapC, smem + RING_BYTES, wg, row0, col0, alpha, epi_count, C, M, N, ldc);
      hold_acc(acc, held, alpha);   // staged and stored by flush_one(), one sub-tile per k-tile of the next unit
      pend_row0 = row0, pend_col0 = col0, pend = DEFER_SUBS;
#elif EPI_DEFER
      hold_acc(acc, held, alpha);   // staged and stored by flush() under the next tile's first wgmmas
      pend_row0 = row0, pend_col0 = col0, pend = true;
#else
      if constexpr (TMA_STORE && !SPLITK) {
        epilogue_tma(acc, &mapC, smem + RING_BYTES, wg, row0, col0, alpha, epi_count, C, M, N, ldc);
      } else {
        epilogue_direct(acc, reinterpret_cast<uint8_t*>(C) + split * ws_stride * OUT_BYTES, M, N, ldc, row0, col0, alpha);
      }
#endif
    };
    int j = 0;
    sk_stamp(sk_flags, wg, 0);
    for (int u = cluster; u < dp_units; u += num_clusters, ++j) {
      const Unit w = unit_of(u, rank, num_mc, num_nc, num_kt, splits, group_m);
      if constexpr (PINGPONG) {
        if (j % NC != wg) {   // the other warpgroup's tile: skip its stages in the ring
#if HOIST
          rp.skip(w.kt1 - w.kt0);
#else
          it += w.kt1 - w.kt0;
#endif
          continue;
        }
        // wait until the other warpgroup has consumed every stage of its previous tile, so the ring's barriers are
        // at most one phase behind the stages this tile waits for (and the tensor core is handed over in order)
        if (j > 0) named_sync(ORDER_BAR + wg, 256);
      }
      consume(w);
      if constexpr (PINGPONG) {
        if (u + num_clusters < units) named_arrive(ORDER_BAR + (1 - wg), 256);   // the other may start its tile
      }
#if SK_FUSED
      if (splits > 1) {
        if (sk_flags == nullptr) {   // planes mode: an fp32 plane of C per split in sk_ws, tcf_splitk_reduce sums
          const int64_t plane = (int64_t)(TRANS_C ? N : M) * ldc;
          epilogue_direct<true>(acc, sk_ws + (u % splits) * plane, M, N, ldc,
                                w.m_tile * BM + wg * WG_A * WG_ROWS, w.n_tile * BN, 1.f);
          continue;
        }
#if SK_PAIR
        {   // two splits in a cluster: split 1's partial lands in split 0's shared memory
          if (splits != 2) __trap();   // the launcher runs this build with exactly two splits
          const uint32_t slot = ring + RING_BYTES + EPI_BYTES + wg * SK_SLOT * 4;
          const uint32_t landed = empty_bar + (STAGES + wg) * 8, freed = empty_bar + (STAGES + NC + wg) * 8;
          if (!pair_split_exchange(acc, slot, landed, freed, pair_it++ & 1, wg)) continue;
        }
#else
        // slice = (cluster tile, CTA rank, warpgroup): its counter, then its `splits` slots
        __shared__ int fs_last[NC];
        const int slice = ((u / splits) * CM + rank) * FS_SLICES + (PINGPONG ? 0 : wg);
        if (!fused_split_arrive(acc, sk_ws + (int64_t)slice * splits * SK_SLOT, sk_flags + slice, u % splits, splits,
                                wg, fs_last + wg))
          continue;
#endif
      }
#endif
      store(w, u % splits);
    }
    if constexpr (STREAMK) {
      sk_stamp(sk_flags, wg, 1);
      const int slot_of_cta = rank * NC + wg;   // + cluster * CM * NC
      sk_walk([&](const Unit& w, int t, bool partial) {
        consume(w);
        if (partial) {
          // this cluster's partial (run first): its sums go to the cluster's slot for the unit's owner
          sk_stamp(sk_flags, wg, 2);
          const int slot = cluster * CM * NC + slot_of_cta;
          sk_store_partial(acc, sk_ws + (int64_t)slot * SK_SLOT, sk_flags + slot, wg);
          sk_stamp(sk_flags, wg, 3);
          return;
        }
        sk_stamp(sk_flags, wg, 4);
        if (w.kt0 > 0) {
          // the owner: add the partials of the earlier clusters whose ranges reach into this unit, then store it
          for (int c = cluster - 1; c >= 0; --c) {
            const int e = sk_begin(c + 1, sk_units, num_kt, num_clusters);
            if (e <= t * num_kt) break;
            if (sk_begin(c, sk_units, num_kt, num_clusters) == e) continue;   // an empty range
            const int slot = c * CM * NC + slot_of_cta;
            sk_add_partial(acc, sk_ws + (int64_t)slot * SK_SLOT, sk_flags + slot, wg);
          }
        }
        sk_stamp(sk_flags, wg, 5);
        store(w, 0);
      });
    }
#if EPI_DEFER
    if (pend) flush();   // the last tile
#endif
    if constexpr (TMA_STORE && !SPLITK) {
      if (threadIdx.x % 32 == 0) tma_store_wait_all();   // each warp's lane 0 issued its own stores
    }
    if (TIMELINE && threadIdx.x % 128 == 0) tl_stamp(sk_ws, 6 + 4 * wg);
    if constexpr (STREAMK) sk_stamp(sk_flags, wg, 6);
  }
  // the pair split-K's CTAs exchange partials through shared memory: neither leaves while the other may address it
  // (a cluster of CM > 1 needs no barrier here: its producers' tails, above)
  if constexpr (SK_PAIR) cluster_sync();
  if (TIMELINE && threadIdx.x == 0) tl_stamp(sk_ws, 15);
#else
  // ------------------------------------------------ baseline: every thread copies with cp.async, then all issue wgmma
  const int wg = threadIdx.x / 128;
  pdl_wait();
  const float alpha = load_alpha(scale_a, scale_b);
  const uint8_t* Ab = reinterpret_cast<const uint8_t*>(A);
  const uint8_t* Bb = reinterpret_cast<const uint8_t*>(B);
  float acc[MI][ACC_N];
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    const Unit w = unit_of(u, 0, num_mc, num_n, num_kt, splits, group_m);
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
            cp_async16(a_ring + s * A_TILE + (mc / 8) * (BK * 128) + swz(kr * 128 + (mc % 8) * 16, 0x70u), src, ok);
          } else {
            const int r = c / ROW_CHUNKS, kc = c % ROW_CHUNKS;
            const int gk = k0 + kc * (16 / IN_BYTES);
            const bool ok = (m0 + r < M) && (gk < K);
            const void* src = ok ? Ab + ((int64_t)(m0 + r) * lda + gk) * IN_BYTES : A;
            cp_async16(a_ring + s * A_TILE + swz(r * BK_BYTES + kc * 16, K_SWZ_MASK), src, ok);
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
            cp_async16(b_ring + s * B_TILE + swz(r * BK_BYTES + kc * 16, K_SWZ_MASK), src, ok);
          } else {
            constexpr int NCH = BN / 8;   // 16-byte chunks along N
            const int kr = c / NCH, nc = c % NCH;
            const int gn = n0 + nc * 8;
            const bool ok = (k0 + kr < K) && (gn < N);
            const void* src = ok ? Bb + ((int64_t)(k0 + kr) * ldb + gn) * IN_BYTES : B;
            cp_async16(b_ring + s * B_TILE + (nc / 8) * B_SLAB + swz(kr * 128 + (nc % 8) * 16, 0x70u), src, ok);
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
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int i = 0; i < nk; ++i) {
      const int s = i % STAGES;
      asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
      fence_proxy_async();   // cp.async wrote through the generic proxy; wgmma reads through the async proxy
      __syncthreads();
      if (i + STAGES - 1 < nk) load_stage(w.kt0 + i + STAGES - 1, (i + STAGES - 1) % STAGES);
      asm volatile("cp.async.commit_group;" ::: "memory");
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) fence_regs(acc[mi]);
      wgmma_fence();
      mma_stage(acc, a_ring + s * A_TILE, b_ring + s * B_TILE, wg, i == 0);
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) fence_regs(acc[mi]);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0 && u + (int)gridDim.x >= units) pdl_launch_dependents();   // this CTA's last unit is loaded
    const int split = u % splits;
    epilogue_direct(acc, reinterpret_cast<uint8_t*>(C) + split * ws_stride * OUT_BYTES, M, N, ldc, m0 + wg * WG_ROWS, n0,
                    alpha);
  }
#endif
}

// ---------------------------------------------------------------- split-K: sum fp32 partials, scale, convert
extern "C" __global__ void tcf_splitk_reduce(const float* __restrict__ ws, void* __restrict__ C, int M, int N,
                                             long long ldc, int splits, const float* scale_a, const float* scale_b,
                                             int out_kind) {
  const int64_t total = (int64_t)M * ldc;
  float alpha = 1.f;
  if (scale_a) alpha *= *scale_a;
  if (scale_b) alpha *= *scale_b;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    if (i % ldc >= N) continue;
    float s = 0.f;
    for (int z = 0; z < splits; ++z) s += ws[z * total + i];
    s *= alpha;
    if (out_kind == 0) reinterpret_cast<float*>(C)[i] = s;
    else if (out_kind == 1) reinterpret_cast<__half*>(C)[i] = __float2half_rn(s);
    else reinterpret_cast<__nv_bfloat16*>(C)[i] = __float2bfloat16_rn(s);
  }
}
