// enc5 form "ada": Ada's (sm_89) FP8 mma arithmetic at Hopper tensor-core speed (numerics="ada").
//
// Every m16n8k32 e4m3 -> f16 mma of the layer is Ada's two 16-term blocks; each block is one Hopper
// `wgmma.mma_async.m64nNk32.f16.e4m3.e4m3` whose A fragment has the other block's k zeroed (the "shared B" lowering
// of docs/numerics.md, "Ada on Hopper", proved bit-exact on the GPU), chained onto the previous block's f16 result.
// wgmma writes +0 for every zero result where Ada keeps IEEE's -0 (C = -0 and every product a negative zero): a
// chain that starts from a C with -0 entries tracks, per output, whether all its products so far were -0 (a cold
// path taken only while some output of the warp still qualifies) and writes -0 at the chain's end.
//
// One CTA per 8x8 window, two warpgroups (8 warps). B operands live in shared memory as N x 32-byte K-major tiles
// with the 32-byte swizzle (descriptor LBO 16, SBO 256), scattered there from the weight image's fragment order;
// A operands come from registers in the mma.sync fragment layout (the same per warp as wgmma's), so every epilogue
// of the one-CTA form (enc5_phases.cuh) is reused unchanged:
//   prologue  warps 0..5 stage the 96 normalised rows as A fragments; all threads stage Q|V of the 8 heads
//   P1-P10    per head, D = X . [Q_h | V_h] (m64n64, K = 160): warpgroup 0 rows 0..63, warpgroup 1 rows 64..95 (its
//             warps 2, 3 multiply zero rows); E10 writes Q_h as P11's keys and V_h^T as P12's B to shared memory
//   P11-P12   warpgroup 0 heads 0..3, warpgroup 1 heads 4..7, warp = query m-tile: S = Q Q^T + bias (m64n96),
//             softmax, O = P V (m64n32, K = 96); E12 stages O as P13's A fragments
//   P13-P61   warpgroup 0: P13-P20 (m64n160, K = 256), E20, the 20 MLP chunks (fc1 m64n32 K = 160, fc2 m64n160
//             K = 32) and P61 (m64n16); warpgroup 1 streams the MLP weights through a 4-stage ring (named barriers)
#include "enc5_phases.cuh"
#include "tcforge/wgmma.cuh"

// launch shape (tcforge.layers.enc5.gpu.kernel reads these): see hopper.cu
constexpr int ENC5_THREADS = 256;
constexpr int ENC5_CLUSTER = 1;
constexpr int ENC5_DYNAMIC_SMEM = 167424;

// shared memory (bytes; every B tile 256-byte aligned for the 32-byte swizzle)
constexpr uint32_t S_QV = 0;            // P1-P10 B: [head][k-step] 64 rows (Q_h cols, then V_h cols) x 32 B
constexpr uint32_t S_WO = 0;            //   then (dead Q|V) P13-P20 B: [head] 160 rows x 32 B
constexpr uint32_t S_RING = 40960;      //   and the MLP ring: 4 stages of fc1 [k-step] 32 x 32 B, fc2 160 x 32 B
constexpr uint32_t STAGE = 10240, RING_STAGES = 4;
constexpr uint32_t S_HEAD = 81920;      // P61 B: [k-step] 16 rows x 32 B
constexpr uint32_t S_KEYS = 84480;      // P11 B and A: [head] 96 token rows x 32 B (Q requantised)
constexpr uint32_t S_VT = 109056;       // P12 B: [head][key step] 32 rows (V_h cols) x 32 B of keys
constexpr uint32_t S_A = 133632;        // P1-P10 A: [m-tile][k-step][lane] uint4 e4m3 fragments
constexpr uint32_t S_O = 148992;        // P13-P20 A: [head][m-tile][lane] uint4
constexpr uint32_t S_D61 = 165376;      // E61: 64 tokens x 16 f16
static_assert(S_D61 + 2048 == ENC5_DYNAMIC_SMEM, "shared-memory map");
static_assert(S_RING + RING_STAGES * STAGE == S_HEAD, "the ring fills the dead Q|V tiles");

constexpr int BAR_WG0 = 1, BAR_FULL = 2, BAR_EMPTY = 6;  // named barriers (0: __syncthreads)

// ---------------------------------------------------------------------------------------------------------------
// wgmma m64nNk32 f16 += e4m3 (A: the mma.sync fragment's 4 registers, B: a shared-memory descriptor), scale-d on
// ---------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ void wg_n16(uint32_t (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e4m3 {"
                 "%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b));
}
__device__ __forceinline__ void wg_n32(uint32_t (&d)[8], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e4m3 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),
                   "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b));
}
__device__ __forceinline__ void wg_n64(uint32_t (&d)[16], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k32.f16.e4m3.e4m3 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),
                   "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b));
}
__device__ __forceinline__ void wg_n96(uint32_t (&d)[24], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n96k32.f16.e4m3.e4m3 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23}, {%24,%25,%26,%27}, %28, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),
                   "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
                   "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]),
                   "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b));
}
__device__ __forceinline__ void wg_n160(uint32_t (&d)[40], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n160k32.f16.e4m3.e4m3 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39}, {%40,%41,%42,%43}, %44, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),
                   "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
                   "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]),
                   "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]),
                   "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
                   "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),
                   "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b));
}

// one Ada m16n8k32 step over N columns: block 1 (k 0..15: A registers 0, 1) onto D, block 2 (k 16..31) onto that
template <int N>
__device__ __forceinline__ void ada_step(uint32_t (&d)[N / 4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint64_t b) {
    if constexpr (N == 16) { wg_n16(d, a0, a1, 0u, 0u, b); wg_n16(d, 0u, 0u, a2, a3, b); }
    if constexpr (N == 32) { wg_n32(d, a0, a1, 0u, 0u, b); wg_n32(d, 0u, 0u, a2, a3, b); }
    if constexpr (N == 64) { wg_n64(d, a0, a1, 0u, 0u, b); wg_n64(d, 0u, 0u, a2, a3, b); }
    if constexpr (N == 96) { wg_n96(d, a0, a1, 0u, 0u, b); wg_n96(d, 0u, 0u, a2, a3, b); }
    if constexpr (N == 160) { wg_n160(d, a0, a1, 0u, 0u, b); wg_n160(d, 0u, 0u, a2, a3, b); }
}
template <int R>
__device__ __forceinline__ uint32_t (&flat(uint32_t (&x)[R / 2][2]))[R] {
    return reinterpret_cast<uint32_t(&)[R]>(x);
}
// ---------------------------------------------------------------------------------------------------------------
// B tiles: N rows x 32 bytes of k, row n at 32 n, the 32-byte swizzle (address bit 4 ^= bit 7) on 256-byte tiles
// ---------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ uint64_t bdesc(uint32_t tile) { return tcf::make_smem_desc(tile, 16u, 256u, 3u); }
// one 512-byte block of the weight image (lane's uint4: n8-tiles 2p and 2p + 1 of one k-step, B fragments b0, b1:
// column g, k 4t..4t+3 and 16+4t..) into the tile at shared address `tile`
__device__ __forceinline__ void put_b(uint32_t tile, int p, int lane, uint4 v) {
    const uint32_t g = lane >> 2, t = lane & 3, r0 = (16u * p + g) * 32u, r1 = r0 + 256u;
    tcf::st_shared_b32(tile + tcf::swizzle32(r0 + 4u * t), v.x);
    tcf::st_shared_b32(tile + tcf::swizzle32(r0 + 16u + 4u * t), v.y);
    tcf::st_shared_b32(tile + tcf::swizzle32(r1 + 4u * t), v.z);
    tcf::st_shared_b32(tile + tcf::swizzle32(r1 + 16u + 4u * t), v.w);
}

// ---------------------------------------------------------------------------------------------------------------
// The -0 rule: per output (bit 2i + h: half h of accumulator register i, at most 96 outputs), "C was -0 and every
// product so far a negative zero"; set from a chain's first C, updated per k-step on the cold path while any output
// of the warp qualifies, applied at the chain's end (wgmma gave +0 there, Ada gives -0)
// ---------------------------------------------------------------------------------------------------------------
struct NegZero {
    uint32_t f[3];
    template <int R>
    __device__ __forceinline__ void init(const uint32_t (&c)[R]) {
        f[0] = f[1] = f[2] = 0u;
#pragma unroll
        for (int i = 0; i < R; ++i) {
            f[(2 * i) >> 5] |= (uint32_t)(lo16(c[i]) == 0x8000u) << ((2 * i) & 31);
            f[(2 * i + 1) >> 5] |= (uint32_t)(hi16(c[i]) == 0x8000u) << ((2 * i + 1) & 31);
        }
    }
    __device__ __forceinline__ bool any() const { return __any_sync(0xFFFFFFFFu, (f[0] | f[1] | f[2]) != 0u); }
    template <int R>
    __device__ __forceinline__ void apply(uint32_t (&d)[R]) const {
#ifdef ENC5_ADA_NO_NEGZERO_RULE  // the test of the test: without the rule the -0 frame must differ
        return;
#endif
#pragma unroll
        for (int i = 0; i < R; ++i) {
            if (((f[(2 * i) >> 5] >> ((2 * i) & 31)) & 1u) && lo16(d[i]) == 0u) d[i] |= 0x8000u;
            if (((f[(2 * i + 1) >> 5] >> ((2 * i + 1) & 31)) & 1u) && hi16(d[i]) == 0u) d[i] |= 0x80000000u;
        }
    }
};
// the cold path: clear the outputs of `nz` that meet a product other than -0 in this k-step (A: the lane's fragment
// words, gathered per row from its quad; B: column n of the tile)
__device__ __noinline__ NegZero negzero_step(NegZero nz, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                             uint32_t tile) {
    const int lane = threadIdx.x & 31, t = lane & 3;
    uint32_t ra[2][8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int src = (lane & ~3) | i;
        ra[0][i] = __shfl_sync(0xFFFFFFFFu, a0, src);
        ra[1][i] = __shfl_sync(0xFFFFFFFFu, a1, src);
        ra[0][4 + i] = __shfl_sync(0xFFFFFFFFu, a2, src);
        ra[1][4 + i] = __shfl_sync(0xFFFFFFFFu, a3, src);
    }
    for (int bit = 0; bit < 96; ++bit) {
        if (!((nz.f[bit >> 5] >> (bit & 31)) & 1u)) continue;
        const int reg = bit >> 1, r = reg & 1;
        const uint32_t col = 8u * (reg >> 1) + 2u * t + (bit & 1);
        bool ok = true;
        for (int w = 0; w < 8; ++w) {
            const uint32_t wa = ra[r][w], wb = tcf::ld_shared_b32(tile + tcf::swizzle32(col * 32u + 4u * w));
            for (int b = 0; b < 4; ++b) {
                const uint32_t ca = (wa >> (8 * b)) & 0xFFu, cb = (wb >> (8 * b)) & 0xFFu;
                ok &= (((ca & 0x7Fu) == 0u) || ((cb & 0x7Fu) == 0u)) && (((ca ^ cb) & 0x80u) != 0u);
            }
        }
        if (!ok) nz.f[bit >> 5] &= ~(1u << (bit & 31));
    }
    return nz;
}
__device__ __forceinline__ void negzero(NegZero& nz, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint32_t tile) {
    if (nz.any()) nz = negzero_step(nz, a0, a1, a2, a3, tile);
}

// P12's B: V_h^T, row = head-dim column, byte kb of key step s = the key that P12's A fragment (E11's probabilities
// packed by q4) holds at k = kb: k = 4t + i <- keys 2t + (i & 1) + 16 (i >> 1), k = 16 + 4t + i <- keys 8 + the same
__device__ __forceinline__ uint32_t key_byte(uint32_t u) {
    const uint32_t q = u >> 3;
    return 16u * (q & 1u) + 2u * (q >> 1) + 4u * ((u & 7u) >> 1) + (u & 1u);
}

// P1-P10 of head h for this warpgroup's 64 rows: d = X . [Q_h | V_h] (5 k-steps), one commit group
__device__ __forceinline__ void issue_qv(uint32_t (&d)[16], const uint32_t (&ax)[5][4], uint32_t sbase, int h) {
#pragma unroll
    for (int i = 0; i < 16; ++i) d[i] = 0u;
    tcf::warpgroup_fence_operand(d);
    tcf::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 5; ++ks)
        ada_step<64>(d, ax[ks][0], ax[ks][1], ax[ks][2], ax[ks][3], bdesc(sbase + S_QV + 2048u * (5 * h + ks)));
    tcf::wgmma_commit_group();
}
// E10 of head h, m-tile mi: Q8 rows -> P11's keys (A fragment words = B rows, k in fragment order); V -> V^T bytes
__device__ __forceinline__ void e10_store(const uint32_t (&d)[16], uint32_t sbase, int h, int mi, int g, int t) {
    const uint32_t keys = sbase + S_KEYS + 3072u * h, r0 = (16u * mi + g) * 32u;
    tcf::st_shared_b32(keys + tcf::swizzle32(r0 + 4u * t), q4(d[0], d[4]));
    tcf::st_shared_b32(keys + tcf::swizzle32(r0 + 16u + 4u * t), q4(d[2], d[6]));
    tcf::st_shared_b32(keys + tcf::swizzle32(r0 + 256u + 4u * t), q4(d[1], d[5]));
    tcf::st_shared_b32(keys + tcf::swizzle32(r0 + 256u + 16u + 4u * t), q4(d[3], d[7]));
#pragma unroll
    for (int jv = 0; jv < 4; ++jv)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const uint32_t e = tcf::cvt_rn_satfinite_e4m3x2_f16x2(d[8 + 2 * jv + r]);
            const uint32_t tok = 16u * mi + g + 8u * r, dim = 8u * jv + 2u * t;
            const uint32_t tile = sbase + S_VT + 3072u * h + 1024u * (tok >> 5), kb = key_byte(tok & 31u);
            tcf::st_shared_u8(tile + tcf::swizzle32(dim * 32u + kb), e & 0xFFu);
            tcf::st_shared_u8(tile + tcf::swizzle32((dim + 1u) * 32u + kb), e >> 8);
        }
}

// the MLP weight ring's producer (warpgroup 1): chunk c -> stage c % 4 (fc1: 5 k-step tiles, fc2: one 160-row tile)
__device__ __forceinline__ void ring_produce(const uint8_t* W, uint32_t sbase, int tid, int lane) {
#pragma unroll 1
    for (int c = 0; c < 20; ++c) {
        const int s = c & 3;
        if (c >= 4) tcf::bar_sync(BAR_EMPTY + s, 256);
        const uint32_t stage = sbase + S_RING + STAGE * s;
        uint4 v[5];
#pragma unroll
        for (int q = 0; q < 5; ++q) {
            const int idx = tid + 128 * q;
            v[q] = ldg16(W + chunk_base(c) + (idx < 320 ? 16 * lane + 512 * (idx >> 5)
                                                        : 5184 + 16 * lane + 512 * ((idx - 320) >> 5)));
        }
#pragma unroll
        for (int q = 0; q < 5; ++q) {
            const int idx = tid + 128 * q, k = idx >> 5;
            if (idx < 320) put_b(stage + 1024u * (k % 5), k / 5, lane, v[q]);
            else put_b(stage + 5120u, k - 10, lane, v[q]);
        }
        tcf::fence_proxy_async_shared_cta();
        tcf::bar_arrive(BAR_FULL + s, 256);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(ENC5_THREADS, 1) enc5_ada(const __grid_constant__ Enc5Params prm) {
    extern __shared__ __align__(1024) uint8_t dsm[];
    const uint32_t sbase = tcf::smem_u32(dsm);
    uint4* const sa = reinterpret_cast<uint4*>(dsm + S_A);
    uint4* const so = reinterpret_cast<uint4*>(dsm + S_O);
    uint32_t* const sd61 = reinterpret_cast<uint32_t*>(dsm + S_D61);
    const int lane = threadIdx.x & 31, warp = threadIdx.z, wg = warp >> 2, wq = warp & 3;
    const int g = lane >> 2, t = lane & 3, tid = 32 * warp + lane;
    ENC5_FRAME_POINTERS(prm);
    const int x0 = 8 * (int)blockIdx.x - (int)prm.ox;
    const int y0 = 8 * (int)blockIdx.y - (int)prm.oy;
    if (sbase & 255u) __trap();  // the swizzle is a function of the shared address: tiles must be 256-byte aligned

    // ---- prologue: warps 0..5 stage their m-tile's normalised rows (A fragments); all threads stage Q|V and P61's B
    if (warp < 6) {
        uint32_t st[2][10];
        stage_mtile_rows(st, in, plane, W, ex, ey, x0, y0, warp, g, t);
#pragma unroll
        for (int p = 0; p < 5; ++p)
            sa[(5 * warp + p) * 32 + lane] = make_uint4(st[0][p], st[1][p], st[0][5 + p], st[1][5 + p]);
    }
#pragma unroll 4
    for (int i = tid; i < 8 * 5 * 4 * 32; i += 256) {  // block (head, k-step, Q/V, half) of 32 lanes
        const int half = (i >> 5) & 1, isv = (i >> 6) & 1, hk = i >> 7;
        const uint8_t* src = W + HEAD_SLOT * (hk / 5) + (isv ? OFF_V : OFF_Q) + 1024 * (hk % 5) + 512 * half;
        put_b(sbase + S_QV + 2048u * hk, 2 * isv + half, lane, ldg16(src + 16 * lane));
    }
    if (tid < 160)
        put_b(sbase + S_HEAD + 512u * (tid >> 5), 0, lane, ldg16(W + OFF_HEAD + 512 * (tid >> 5) + 16 * lane));
    tcf::fence_proxy_async_shared_cta();
    __syncthreads();

    // ---- P1-P10 + E10, head by head (the other warpgroup's wgmma overlap this one's epilogue; a second accumulator
    // in flight during the epilogue makes ptxas serialise every wgmma of the kernel)
    {
        const int mi = 4 * wg + wq;  // 6, 7: zero rows
        uint32_t ax[5][4];
#pragma unroll
        for (int ks = 0; ks < 5; ++ks) {
            const uint4 a = mi < 6 ? sa[(5 * mi + ks) * 32 + lane] : make_uint4(0u, 0u, 0u, 0u);
            ax[ks][0] = a.x; ax[ks][1] = a.y; ax[ks][2] = a.z; ax[ks][3] = a.w;
        }
        uint32_t d[16];
#pragma unroll 1
        for (int h = 0; h < 8; ++h) {
            issue_qv(d, ax, sbase, h);
            tcf::wgmma_wait_group<0>();
            tcf::warpgroup_fence_operand(d);
            if (mi < 6) e10_store(d, sbase, h, mi, g, t);
        }
    }
    tcf::fence_proxy_async_shared_cta();
    __syncthreads();

    // ---- Wo into the dead Q|V tiles (read from P13 on); P11-P12 + E12: warpgroup wg, heads 4wg..4wg+3
#pragma unroll 2
    for (int i = tid; i < 8 * 10 * 32; i += 256) {
        const int blk = i >> 5, j = blk / 10, n2 = blk % 10;
        put_b(sbase + S_WO + 5120u * j, n2, lane, ldg16(W + OFF_WO + HEAD_SLOT * j + 512 * n2 + 16 * lane));
    }
#pragma unroll 1
    for (int hh = 0; hh < 4; ++hh) {
        const int h = 4 * wg + hh;
        uint32_t s[12][2];
        const uint8_t* sbias = W + HEAD_SLOT * h + OFF_SBIAS + 16 * lane;
#pragma unroll
        for (int jp = 0; jp < 6; ++jp) {
            const uint4 c = ldg16(sbias + 512 * (4 * jp + wq));
            s[2 * jp][0] = c.x; s[2 * jp][1] = c.y; s[2 * jp + 1][0] = c.z; s[2 * jp + 1][1] = c.w;
        }
        NegZero nz;
        nz.init(flat<24>(s));
        const uint32_t keys = sbase + S_KEYS + 3072u * h, rq = (16u * wq + g) * 32u;
        const uint32_t a0 = tcf::ld_shared_b32(keys + tcf::swizzle32(rq + 4u * t));
        const uint32_t a1 = tcf::ld_shared_b32(keys + tcf::swizzle32(rq + 256u + 4u * t));
        const uint32_t a2 = tcf::ld_shared_b32(keys + tcf::swizzle32(rq + 16u + 4u * t));
        const uint32_t a3 = tcf::ld_shared_b32(keys + tcf::swizzle32(rq + 256u + 16u + 4u * t));
        tcf::warpgroup_fence_operand(flat<24>(s));
        tcf::wgmma_fence();
        ada_step<96>(flat<24>(s), a0, a1, a2, a3, bdesc(keys));
        tcf::wgmma_commit_group();
        tcf::wgmma_wait_group<0>();
        tcf::warpgroup_fence_operand(flat<24>(s));
        negzero(nz, a0, a1, a2, a3, keys);
        nz.apply(flat<24>(s));
        e11_softmax(s);
        uint32_t pa[3][4];
#pragma unroll
        for (int ks = 0; ks < 3; ++ks) {
            pa[ks][0] = q4(s[4 * ks][0], s[4 * ks + 2][0]);
            pa[ks][1] = q4(s[4 * ks][1], s[4 * ks + 2][1]);
            pa[ks][2] = q4(s[4 * ks + 1][0], s[4 * ks + 3][0]);
            pa[ks][3] = q4(s[4 * ks + 1][1], s[4 * ks + 3][1]);
        }
        uint32_t o[4][2] = {{0u, 0u}, {0u, 0u}, {0u, 0u}, {0u, 0u}};
        tcf::warpgroup_fence_operand(flat<8>(o));
        tcf::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 3; ++ks)
            ada_step<32>(flat<8>(o), pa[ks][0], pa[ks][1], pa[ks][2], pa[ks][3],
                         bdesc(sbase + S_VT + 3072u * h + 1024u * ks));
        tcf::wgmma_commit_group();
        tcf::wgmma_wait_group<0>();
        tcf::warpgroup_fence_operand(flat<8>(o));
        so[(4 * h + wq) * 32 + lane] =
            make_uint4(q4(o[0][0], o[2][0]), q4(o[0][1], o[2][1]), q4(o[1][0], o[3][0]), q4(o[1][1], o[3][1]));
    }
    tcf::fence_proxy_async_shared_cta();
    __syncthreads();
    if (wg == 1) {  // the MLP weights' producer
        ring_produce(W, sbase, tid - 128, lane);
        return;
    }

    // ---- warpgroup 0: query rows 16z..16z+15 = tokens (x0 + g, y0 + 2z) and (x0 + g, y0 + 2z + 1)
    const int z = wq;
    const int tx = x0 + g;
    const int ty[2] = {y0 + 2 * z, y0 + 2 * z + 1};
    bool in_frame[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) in_frame[r] = tx >= 0 && tx < ex && ty[r] >= 0 && ty[r] < ey;
    ENC5_P13_C(acc);  // P13's C = proj_bias[c] + residual (the dequantised raw input)

    // ---- P13-P20: acc += O_j . Wo_j, the 8 heads as one chain of 16 wgmma
    {
        NegZero nz;
        nz.init(flat<40>(acc));
        uint4 a[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) a[j] = so[(4 * j + z) * 32 + lane];
        tcf::warpgroup_fence_operand(flat<40>(acc));
        tcf::wgmma_fence();
#pragma unroll
        for (int j = 0; j < 8; ++j)
            ada_step<160>(flat<40>(acc), a[j].x, a[j].y, a[j].z, a[j].w, bdesc(sbase + S_WO + 5120u * j));
        tcf::wgmma_commit_group();
        tcf::wgmma_wait_group<0>();
        tcf::warpgroup_fence_operand(flat<40>(acc));
        if (nz.any()) {
#pragma unroll 1
            for (int j = 0; j < 8; ++j) {
                const uint4 aj = so[(4 * j + z) * 32 + lane];
                negzero(nz, aj.x, aj.y, aj.z, aj.w, sbase + S_WO + 5120u * j);
            }
            nz.apply(flat<40>(acc));
        }
    }

    // ---- E20: RMS norm of D20 -> e4m3 A fragments shared by every fc1 (5 k-steps); E21: fc2's C = out_bias + D20
    uint32_t an[5][4];
    e20_norm(an, acc, W, t);
    e21_bias(acc, W, t);

    // ---- P21-P60: chunk i: hid_i = An . fc1_i + b1_i; acc += e4m3(act(hid_i)) . fc2_i; fc2_i and fc1_{i+1} in one
    // commit group; stage i % 4 is handed back to the producer once both have completed
    NegZero nzacc;
    nzacc.init(flat<40>(acc));
    uint32_t hid[4][2], bias1[4];
    NegZero nzh;
    fc1_bias(bias1, W, 0, t);
    tcf::bar_sync(BAR_FULL, 256);
    {
#pragma unroll
        for (int n = 0; n < 4; ++n) hid[n][0] = hid[n][1] = bias1[n];
        nzh.init(flat<8>(hid));
        tcf::warpgroup_fence_operand(flat<8>(hid));
        tcf::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 5; ++ks)
            ada_step<32>(flat<8>(hid), an[ks][0], an[ks][1], an[ks][2], an[ks][3], bdesc(sbase + S_RING + 1024u * ks));
        tcf::wgmma_commit_group();
        tcf::wgmma_wait_group<0>();
        tcf::warpgroup_fence_operand(flat<8>(hid));
    }
#pragma unroll 1
    for (int i = 0; i < 20; ++i) {
        const uint32_t st = sbase + S_RING + STAGE * (i & 3), st1 = sbase + S_RING + STAGE * ((i + 1) & 3);
        if (nzh.any()) {  // fc1_i's chain (its A and B are still here)
#pragma unroll 1
            for (int ks = 0; ks < 5; ++ks) negzero(nzh, an[ks][0], an[ks][1], an[ks][2], an[ks][3], st + 1024u * ks);
            nzh.apply(flat<8>(hid));
        }
        uint32_t hq[4];
        mlp_activation(hid, hq);
        // fc1_{i+1} (on the last iteration chunk 16's stale stage, unused: keeps the wgmma pipeline branch-free)
        fc1_bias(bias1, W, i < 19 ? i + 1 : 19, t);
#pragma unroll
        for (int n = 0; n < 4; ++n) hid[n][0] = hid[n][1] = bias1[n];
        nzh.init(flat<8>(hid));
        if (i < 19) tcf::bar_sync(BAR_FULL + ((i + 1) & 3), 256);
        tcf::warpgroup_fence_operand(flat<40>(acc));
        tcf::warpgroup_fence_operand(flat<8>(hid));
        tcf::wgmma_fence();
        ada_step<160>(flat<40>(acc), hq[0], hq[1], hq[2], hq[3], bdesc(st + 5120u));
#pragma unroll
        for (int ks = 0; ks < 5; ++ks)
            ada_step<32>(flat<8>(hid), an[ks][0], an[ks][1], an[ks][2], an[ks][3], bdesc(st1 + 1024u * ks));
        tcf::wgmma_commit_group();
        tcf::wgmma_wait_group<0>();
        tcf::warpgroup_fence_operand(flat<40>(acc));
        tcf::warpgroup_fence_operand(flat<8>(hid));
        negzero(nzacc, hq[0], hq[1], hq[2], hq[3], st + 5120u);
        if (i + 4 < 20) tcf::bar_arrive(BAR_EMPTY + (i & 3), 256);
    }
    nzacc.apply(flat<40>(acc));

    // ---- E60: requantise D60 -> packed rows; guarded scatter to the 5-plane arena (word t and t|4 per plane)
    ENC5_E60(y8, acc);

    // ---- P61: head 64x16x160 on e4m3(D60), C = head bias
    uint32_t d61[2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n) d61[n][0] = d61[n][1] = ldg4(W + OFF_HEAD_BIAS + 16 * n + 4 * t);
    {
        NegZero nz;
        nz.init(flat<4>(d61));
        tcf::warpgroup_fence_operand(flat<4>(d61));
        tcf::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 5; ++ks)
            ada_step<16>(flat<4>(d61), y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], bdesc(sbase + S_HEAD + 512u * ks));
        tcf::wgmma_commit_group();
        tcf::wgmma_wait_group<0>();
        tcf::warpgroup_fence_operand(flat<4>(d61));
        if (nz.any()) {
#pragma unroll 1
            for (int ks = 0; ks < 5; ++ks)
                negzero(nz, y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], sbase + S_HEAD + 512u * ks);
            nz.apply(flat<4>(d61));
        }
    }
    // E61: D61 to shared (token-major), then one thread per token (warps 0, 1)
#pragma unroll
    for (int n = 0; n < 2; ++n) {
        sd61[(16 * z + g) * 8 + 4 * n + t] = d61[n][0];
        sd61[(16 * z + g + 8) * 8 + 4 * n + t] = d61[n][1];
    }
    tcf::bar_sync(BAR_WG0, 128);
    if (warp >= 2) return;
    enc5_e61(sd61, 32 * warp + lane, x0, y0, ex, ey, tex, surf);
}
