// tcforge Blackwell (sm_100a) GEMM: C[M,N] (fp32) = A[M,K] x B[K,N], A and B fp16 or bf16, both row-major.
//
// The write-up's final design (docs/gemm-blackwell.md explains every choice):
//   * a 2-CTA cluster runs one 256x256 output tile with `tcgen05.mma.cta_group::2` (M = 256, N = 256, K = 16):
//     each CTA holds 128 rows of A and 128 columns of B; the leader (even rank) issues the MMAs, which read both CTAs'
//     shared memory and write 128 rows x 256 fp32 columns into each CTA's tensor memory (TMEM);
//   * BK = 64: one stage is a 128x64 A box and two 64x64 B slabs per CTA (32 KiB), loaded by TMA with 128-byte swizzle
//     into a ring of TCF_STAGES stages guarded by full / empty mbarriers;
//   * warp specialisation: warps 0-7 epilogue, warp 8 TMA producer, warp 9 MMA issuer (and TMEM allocator);
//   * staged epilogue: TMEM -> registers (tcgen05.ld) -> 128B-swizzled shared memory -> TMA store, 32x32 fp32 boxes.
//
// Compiled for sm_100a only (tcgen05 and TMEM exist nowhere else). It has never run: the project has no Blackwell GPU.
// The host side (grid, cluster, shared memory bytes, tensor-map boxes) is described in launch.py beside this file.

#include <cstdint>

#include "tcforge/ptx.cuh"

#ifndef TCF_STAGES
#define TCF_STAGES 3  // 3 x 32 KiB ring: two CTAs fit on one SM (see docs/gemm-blackwell.md)
#endif

namespace tcf {

// ---------------------------------------------------------------- tile geometry
constexpr int kStages = TCF_STAGES;
constexpr int kTileM = 256;                  // rows of C per CTA pair (one cta_group::2 MMA)
constexpr int kTileN = 256;                  // columns of C per CTA pair (BN)
constexpr int kCtaM = kTileM / 2;            // rows of A (and of C) held by each CTA
constexpr int kCtaN = kTileN / 2;            // columns of B held by each CTA
constexpr int kBK = 64;                      // K per stage: 64 x 2 B = one 128-byte swizzle row
constexpr int kUmmaK = 16;                   // K of one tcgen05.mma.kind::f16
constexpr int kSlabN = 64;                   // B arrives as 64-column slabs (the 128-byte swizzle span)
constexpr int kElemBytes = 2;                // fp16 / bf16

constexpr uint32_t kABytes = kCtaM * kBK * kElemBytes;          // 16 KiB: 128 rows x 128 B
constexpr uint32_t kSlabBytes = kBK * kSlabN * kElemBytes;      // 8 KiB: 64 K-rows x 128 B
constexpr uint32_t kBBytes = (kCtaN / kSlabN) * kSlabBytes;     // 16 KiB
constexpr uint32_t kStageBytes = kABytes + kBBytes;             // 32 KiB per CTA
constexpr uint32_t kPairStageTx = 2 * kStageBytes;              // bytes both CTAs land on the leader's full barrier

constexpr int kEpilogueWarps = 8;            // warps w and w+4 share TMEM lanes 32*(w%4).., split the 256 columns
constexpr int kProducerWarp = 8;
constexpr int kMmaWarp = 9;
constexpr int kThreads = 32 * 10;
constexpr int kTmemCols = kTileN;            // fp32 accumulator: one TMEM column per output column

constexpr int kStoreCols = 32;               // epilogue sub-tile: 32 fp32 = 128 B = the swizzle span
constexpr uint32_t kStoreBoxBytes = 32 * kStoreCols * 4;        // 32 rows (one warp's lanes) x 128 B = 4 KiB
constexpr uint32_t kStagingBytesPerWarp = 2 * kStoreBoxBytes;   // double-buffered
constexpr uint32_t kRingBytes = kStages * kStageBytes;
constexpr uint32_t kBarrierBytes = 256;      // full[], empty[], done, TMEM address slot
constexpr uint32_t kSmemAlign = 1024;        // 128-byte swizzle atoms are 8 rows x 128 B
constexpr uint32_t kSmemBytes = kSmemAlign + kRingBytes + kBarrierBytes;  // dynamic shared memory to request

static_assert(kStages >= 2 && kStages <= 6, "TCF_STAGES must be 2..6 (6 x 32 KiB is the 227 KiB limit)");
static_assert(kEpilogueWarps * kStagingBytesPerWarp <= kRingBytes, "the epilogue staging reuses the idle ring");
static_assert((2 * kStages + 1) * 8 + 4 <= kBarrierBytes, "barrier area too small");
static_assert(kSmemBytes <= 227 * 1024, "more dynamic shared memory than one block may have");
// Two CTAs per SM when two rings (+ 1 KiB the system reserves per block) fit in the SM's 228 KiB.
constexpr int kMinBlocksPerSm = 2 * (kSmemBytes + 1024) <= 228 * 1024 ? 2 : 1;

// ---------------------------------------------------------------- descriptors (PTX ISA, tcgen05 section)
// Instruction descriptor for .kind::f16 (PTX ISA table "Instruction descriptor format for .kind::tf32, .kind::f16,
// .kind::f8f6f4 and .kind::i8"): a 32-bit register operand of tcgen05.mma.
enum class DType : uint32_t { F16 = 0, BF16 = 1 };       // atype / btype field values for .kind::f16
enum class DFormat : uint32_t { F16 = 0, F32 = 1 };      // dtype field values
enum class Major : uint32_t { K = 0, MN = 1 };           // "transpose" bits: 0 = K-major, 1 = MN-major

__host__ __device__ constexpr uint32_t make_instr_desc_f16(DFormat d_format, DType a_type, DType b_type,
                                                            Major a_major, Major b_major, int m, int n) {
    return (0u << 0)                                    // bits 0-1   sparsity selector (dense: 0)
         | (0u << 2)                                    // bit  2     sparsity: dense
         | (0u << 3)                                    // bit  3     saturate (integer kinds only)
         | (static_cast<uint32_t>(d_format) << 4)       // bits 4-5   dtype: F16 = 0, F32 = 1
         | (static_cast<uint32_t>(a_type) << 7)         // bits 7-9   atype: F16 = 0, BF16 = 1
         | (static_cast<uint32_t>(b_type) << 10)        // bits 10-12 btype
         | (0u << 13) | (0u << 14)                      // bits 13-14 negate A, negate B
         | (static_cast<uint32_t>(a_major) << 15)       // bit  15    transpose A (1 = M-major)
         | (static_cast<uint32_t>(b_major) << 16)       // bit  16    transpose B (1 = N-major)
         | ((static_cast<uint32_t>(n) >> 3) << 17)      // bits 17-22 N >> 3
         | ((static_cast<uint32_t>(m) >> 4) << 24);     // bits 24-28 M >> 4 (bit 23 reserved)
}

// Shared-memory matrix descriptor (PTX ISA "Shared memory descriptor"): a 64-bit operand of tcgen05.mma.
enum class Swizzle : uint64_t { None = 0, B128Atom32 = 1, B128 = 2, B64 = 4, B32 = 6 };   // bits 61-63

__host__ __device__ constexpr uint64_t make_smem_desc(uint32_t start_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                      Swizzle swizzle) {
    return (static_cast<uint64_t>((start_addr >> 4) & 0x3FFFu) << 0)   // bits 0-13  start address >> 4
         | (static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16)   // bits 16-29 leading-dimension byte offset >> 4
         | (static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32)   // bits 32-45 stride-dimension byte offset >> 4
         | (static_cast<uint64_t>(1) << 46)                            // bits 46-48 fixed constant 0b001
         | (static_cast<uint64_t>(0) << 49)                            // bits 49-51 base offset (atoms 1024-aligned)
         | (static_cast<uint64_t>(0) << 52)                            // bit  52    LBO mode: relative byte offset
         | (static_cast<uint64_t>(swizzle) << 61);                     // bits 61-63 swizzling mode
}

// A: K-major, 128-byte swizzle. Rows of 128 B (64 K-elements); SBO = 8 rows x 128 B between 8-row core groups;
// LBO is unused for swizzled K-major layouts ("assumed 1": 16 bytes). One K = 16 step = +32 bytes of start address.
constexpr uint32_t kASbo = 8 * 128;
constexpr uint32_t kALbo = 16;
// B: N-major (the row-major (K, N) global layout), 128-byte swizzle. A slab is 64 K-rows x 128 B (64 N-elements);
// LBO = distance between 64-column slabs, SBO = 8 K-rows x 128 B. One K = 16 step = 16 rows = +2048 bytes.
constexpr uint32_t kBLbo = kSlabBytes;
constexpr uint32_t kBSbo = 8 * 128;
constexpr uint32_t kAStepBytes = kUmmaK * kElemBytes;
constexpr uint32_t kBStepBytes = kUmmaK * 128;

template <DType kIn>
struct Idesc {
    static constexpr uint32_t value = make_instr_desc_f16(DFormat::F32, kIn, kIn, Major::K, Major::MN, kTileM, kTileN);
};

// Cross-check against the Python encoder (tcforge.gemm.sm100.descriptors): the compile test passes its values in.
#ifdef TCF_EXPECT_IDESC_F16
static_assert(Idesc<DType::F16>::value == TCF_EXPECT_IDESC_F16, "idesc (fp16) differs from the Python encoder");
#endif
#ifdef TCF_EXPECT_IDESC_BF16
static_assert(Idesc<DType::BF16>::value == TCF_EXPECT_IDESC_BF16, "idesc (bf16) differs from the Python encoder");
#endif
#ifdef TCF_EXPECT_SMEM_BYTES
static_assert(kSmemBytes == TCF_EXPECT_SMEM_BYTES, "dynamic shared memory differs from launch.py");
#endif
#ifdef TCF_EXPECT_CTAS_PER_SM
static_assert(kMinBlocksPerSm == TCF_EXPECT_CTAS_PER_SM, "CTAs per SM differ from launch.py");
#endif
#ifdef TCF_EXPECT_THREADS
static_assert(kThreads == TCF_EXPECT_THREADS, "block size differs from launch.py");
#endif
#ifdef TCF_EXPECT_PAIR_TX
static_assert(kPairStageTx == TCF_EXPECT_PAIR_TX, "bytes per stage (both CTAs) differ from launch.py");
#endif
#ifdef TCF_EXPECT_ADESC_AT_1024
static_assert(make_smem_desc(1024, kALbo, kASbo, Swizzle::B128) == TCF_EXPECT_ADESC_AT_1024, "A descriptor");
#endif
#ifdef TCF_EXPECT_BDESC_AT_1024
static_assert(make_smem_desc(1024, kBLbo, kBSbo, Swizzle::B128) == TCF_EXPECT_BDESC_AT_1024, "B descriptor");
#endif

// The tensor maps are encoded on the host (cuTensorMapEncodeTiled) and passed by value as __grid_constant__.
using TensorMap = TmaDesc;

// ---------------------------------------------------------------- PTX wrappers (tcgen05: this kernel's alone; the
// mbarrier, cluster, TMA and shared-memory ones come from the header library, tcforge/*.cuh)
__device__ __forceinline__ void tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }

// TMEM allocation for a CTA pair: one warp in each CTA of the pair issues it (PTX ISA "Issue granularity").
__device__ __forceinline__ void tmem_alloc_pair(uint32_t slot, uint32_t cols) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(cols)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void tmem_dealloc_pair(uint32_t taddr, uint32_t cols) {
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(cols) : "memory");
}

// D[tmem] (+)= A[smem] x B[smem] over the CTA pair: M = 256 (128 rows per CTA), N = 256, K = 16.
__device__ __forceinline__ void mma_pair_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                             uint32_t accumulate) {
    asm volatile(
        "{\n\t.reg .pred acc;\n\t"
        "setp.ne.b32 acc, %4, 0;\n\t"
        "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, acc;\n}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
}

// Arrive once on the mbarrier at this offset in every CTA of `cta_mask` when all prior tcgen05.mma of this thread end.
__device__ __forceinline__ void mma_commit_multicast(uint32_t bar, uint16_t cta_mask) {
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(bar),
        "h"(cta_mask)
        : "memory");
}

// 32 TMEM lanes x 32 consecutive 32-bit columns: lane i of the warp gets row (lane base + i), columns col..col+31.
__device__ __forceinline__ void tmem_load_32cols(uint32_t taddr, uint32_t (&r)[32]) {
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x32.b32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]),
          "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]),
          "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
        : "r"(taddr));
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

// ---------------------------------------------------------------- the kernel body
template <DType kIn>
__device__ __forceinline__ void gemm_pair_tile(const TensorMap* tmap_a, const TensorMap* tmap_b,
                                               const TensorMap* tmap_c, int K) {
    extern __shared__ uint8_t smem_raw[];
    // Align the ring to 1024 B; every CTA computes the same offsets, so the peer's B half sits where the leader's
    // descriptors point (the pair MMA reads the same shared-memory offsets in both CTAs).
    const uint32_t raw = smem_u32(smem_raw);
    const uint32_t base = (raw + kSmemAlign - 1) & ~(kSmemAlign - 1);
    const uint32_t ring = base;
    const uint32_t bars = base + kRingBytes;
    auto a_stage = [&](int s) { return ring + static_cast<uint32_t>(s) * kStageBytes; };
    auto b_stage = [&](int s) { return ring + static_cast<uint32_t>(s) * kStageBytes + kABytes; };
    auto full_bar = [&](int s) { return bars + static_cast<uint32_t>(s) * 8; };
    auto empty_bar = [&](int s) { return bars + static_cast<uint32_t>(kStages + s) * 8; };
    const uint32_t done_bar = bars + static_cast<uint32_t>(2 * kStages) * 8;
    const uint32_t tmem_slot = done_bar + 8;

    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const uint32_t rank = cluster_ctarank();                 // 0 = leader (issues the MMAs), 1 = peer
    const int pair = static_cast<int>(blockIdx.x) / 2;        // cluster dims (2, 1, 1): consecutive x form a pair
    const int m_cta = pair * kTileM + static_cast<int>(rank) * kCtaM;   // this CTA's 128 rows of A and C
    const int n_tile = static_cast<int>(blockIdx.y) * kTileN;           // the pair's 256 columns of C
    const int n_cta = n_tile + static_cast<int>(rank) * kCtaN;          // this CTA's 128 columns of B
    const int k_tiles = (K + kBK - 1) / kBK;                  // K tail: TMA zero-fills out-of-bounds elements

    // ---- set-up: barriers (producer warp), TMEM (MMA warp in both CTAs), then one cluster-wide barrier
    if (warp == kProducerWarp && lane == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarrier_init(full_bar(s), 1);    // one arrive.expect_tx (leader) + both CTAs' bytes
            mbarrier_init(empty_bar(s), 1);   // one multicast tcgen05.commit
        }
        mbarrier_init(done_bar, 1);
        fence_mbarrier_init_release_cluster();
        prefetch_tensormap(tmap_a);
        prefetch_tensormap(tmap_b);
        prefetch_tensormap(tmap_c);
    }
    if (warp == kMmaWarp) tmem_alloc_pair(tmem_slot, kTmemCols);
    tc_fence_before();
    barrier_cluster_sync();   // peer barriers initialised before any remote complete_tx / multicast commit reaches them
    tc_fence_after();
    const uint32_t tmem_base = ld_shared_b32(tmem_slot);

    if (warp == kProducerWarp) {
        // ---- TMA producer (both CTAs): own A rows, own B half; completion lands on the leader's full barrier
        if (lane == 0) {
            for (int t = 0; t < k_tiles; ++t) {
                const int s = t % kStages;
                if (t >= kStages) mbarrier_wait_parity(empty_bar(s), static_cast<uint32_t>((t / kStages - 1) & 1));
                const uint32_t leader_full = mapa_shared_cluster(full_bar(s), 0);
                if (rank == 0) mbarrier_arrive_expect_tx(full_bar(s), kPairStageTx);
                const int k0 = t * kBK;
                cp_async_bulk_tensor_2d_g2s_cta_group_2(a_stage(s), tmap_a, k0, m_cta, leader_full);
#pragma unroll
                for (int j = 0; j < kCtaN / kSlabN; ++j)
                    cp_async_bulk_tensor_2d_g2s_cta_group_2(b_stage(s) + static_cast<uint32_t>(j) * kSlabBytes, tmap_b,
                                                            n_cta + j * kSlabN, k0, leader_full);
            }
        }
    } else if (warp == kMmaWarp) {
        // ---- MMA issuer (leader only): 4 x (256x256x16) per stage, commit frees the stage in both CTAs
        if (rank == 0 && lane == 0) {
            constexpr uint32_t idesc = Idesc<kIn>::value;
            for (int t = 0; t < k_tiles; ++t) {
                const int s = t % kStages;
                mbarrier_wait_parity(full_bar(s), static_cast<uint32_t>((t / kStages) & 1));
                tc_fence_after();
#pragma unroll
                for (int k = 0; k < kBK / kUmmaK; ++k) {
                    const uint32_t a_addr = a_stage(s) + static_cast<uint32_t>(k) * kAStepBytes;
                    const uint32_t b_addr = b_stage(s) + static_cast<uint32_t>(k) * kBStepBytes;
                    const uint64_t a_desc = make_smem_desc(a_addr, kALbo, kASbo, Swizzle::B128);
                    const uint64_t b_desc = make_smem_desc(b_addr, kBLbo, kBSbo, Swizzle::B128);
                    mma_pair_f16(tmem_base, a_desc, b_desc, idesc, (t > 0 || k > 0) ? 1u : 0u);
                }
                mma_commit_multicast(empty_bar(s), 0x3);
            }
            mma_commit_multicast(done_bar, 0x3);   // the accumulator is complete in both CTAs' TMEM
        }
    } else {
        // ---- epilogue (warps 0-7 of both CTAs): TMEM -> registers -> swizzled smem -> TMA store, 32x32 sub-tiles
        const int quarter = warp % 4;                  // TMEM lanes 32*quarter.. = rows of this CTA's 128
        const int half = warp / 4;                     // columns half*128 .. half*128+127 of the 256
        mbarrier_wait_parity(done_bar, 0);
        __syncwarp();                                  // reconverge before the .sync.aligned tcgen05.ld
        tc_fence_after();
        // The ring is idle now (every MMA that read it has completed), so it holds the staging buffers.
        const uint32_t staging = ring + static_cast<uint32_t>(warp) * kStagingBytesPerWarp;
        const uint32_t lane_field = static_cast<uint32_t>(quarter * 32) << 16;   // TMEM address: lane << 16 | column
        const uint32_t taddr = tmem_base + lane_field + static_cast<uint32_t>(half * kCtaN);
        const int row0 = m_cta + quarter * 32;
        const int col0 = n_tile + half * kCtaN;
        const uint32_t row_addr = static_cast<uint32_t>(lane) * 128;   // lane i writes row i of the 32x32 box
#pragma unroll 1
        for (int c = 0; c < kCtaN / kStoreCols; ++c) {
            uint32_t v[32];
            tmem_load_32cols(taddr + static_cast<uint32_t>(c * kStoreCols), v);
            const uint32_t buf = staging + static_cast<uint32_t>(c & 1) * kStoreBoxBytes;
            if (c >= 2) {                              // the buffer's previous TMA store must have read it
                if (lane == 0) cp_async_bulk_wait_group_read<1>();
                __syncwarp();
            }
#pragma unroll
            for (int chunk = 0; chunk < 8; ++chunk) {  // 128-byte swizzle: 16-byte chunk j of row r sits at j ^ (r % 8)
                const uint32_t phys = static_cast<uint32_t>(chunk ^ (lane & 7));
                st_shared_v4_b32(buf + row_addr + phys * 16, v[4 * chunk], v[4 * chunk + 1], v[4 * chunk + 2],
                                 v[4 * chunk + 3]);
            }
            fence_proxy_async_shared_cta();            // generic-proxy writes -> visible to the TMA (async proxy)
            __syncwarp();
            if (lane == 0) {
                // out-of-bounds rows / columns are clipped
                cp_async_bulk_tensor_2d_s2g(tmap_c, col0 + c * kStoreCols, row0, buf);
                cp_async_bulk_commit_group();
            }
        }
        if (lane == 0) cp_async_bulk_wait_group_read<0>();
        __syncwarp();
    }

    // ---- teardown: no TMEM access or remote barrier traffic may outlive the pair
    tc_fence_before();
    __syncthreads();
    barrier_cluster_sync();
    if (warp == kMmaWarp) {
        tc_fence_after();
        tmem_dealloc_pair(tmem_base, kTmemCols);
    }
}

}  // namespace tcf

// ---------------------------------------------------------------- entry points (unmangled names for a driver)
// Launch: grid (2 * ceil(M / 256), ceil(N / 256)), block 320, cluster (2, 1, 1), dynamic smem tcf::kSmemBytes.
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(tcf::kThreads, tcf::kMinBlocksPerSm)
    tcforge_sm100_gemm_f16_f32(const __grid_constant__ tcf::TensorMap tmap_a,
                               const __grid_constant__ tcf::TensorMap tmap_b,
                               const __grid_constant__ tcf::TensorMap tmap_c, int M, int N, int K) {
    (void)M;
    (void)N;
    tcf::gemm_pair_tile<tcf::DType::F16>(&tmap_a, &tmap_b, &tmap_c, K);
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(tcf::kThreads, tcf::kMinBlocksPerSm)
    tcforge_sm100_gemm_bf16_f32(const __grid_constant__ tcf::TensorMap tmap_a,
                                const __grid_constant__ tcf::TensorMap tmap_b,
                                const __grid_constant__ tcf::TensorMap tmap_c, int M, int N, int K) {
    (void)M;
    (void)N;
    tcf::gemm_pair_tile<tcf::DType::BF16>(&tmap_a, &tmap_b, &tmap_c, K);
}

