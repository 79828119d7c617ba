// The 2-CTA-cluster forms of enc5 (hopper numerics): one window per CTA pair, 4 warps per CTA. Same operations on the
// same values as enc5_body (enc5_window.cuh); only where they run changes:
//   prologue   CTA r stages m-tiles 3r..3r+2 into both CTAs' shared memory (DSMEM stores);
//   P1-P12     CTA r, warp w runs head 4r + w; E12 writes O into both CTAs;
//   P13-P20    warp z of CTA r keeps query rows 16z..16z+15 and the n8-tiles n with n % 2 == r (10 of 20);
//   E20        the pair swaps its D20 halves, both CTAs normalise the full rows (the f16 sum is sequential over
//              all 160 columns) and both hold fc1's full A operand;
//   P21-P60    fc1 of chunk c: CTA r computes hidden n8-tiles r and r + 2 (2 of 4), which are exactly the e4m3 words
//              2r, 2r + 1 of fc2's A fragment; each lane sends its two words to the same lane of the partner warp
//              (st.async + mbarrier, 4 slots, fc1 runs two chunks ahead of fc2 so a send has an iteration to land);
//              fc2 accumulates the CTA's 10 n8-tiles; weights through a 6-stage cp.async ring of the CTA's halves;
//   E60        each CTA scatters its own arena words (word t from CTA 0, word t|4 from CTA 1); the pair swaps
//              the e4m3 rows; CTA r runs P61/E61 for tokens 32r..32r+31 (warps 2r, 2r+1).
//
// A form file instantiates enc5_split_body<Form> with a traits struct derived from SplitForm:
//   wo_smem      Wo of P13-P20 comes from shared memory (a TMA bulk copy during P1-P10; 40 KB) or, false, through a
//                two-head register prefetch (the 3-CTAs-per-SM build: 68,576 B of shared memory)
//   sb_ahead     each P11 m-tile's score bias is loaded one m-tile ahead (false: when the m-tile starts, 24 registers
//                fewer)
//   pairs        the MLP loop handles chunks in pairs (one barrier and fence point per two chunks)
//   skip_dead    a warp whose query m-tile (token rows y0 + 2z, y0 + 2z + 1) lies wholly outside the frame skips
//                P13-P61 (and, in a second copy of the attention loop taken only by windows with a dead m-tile,
//                P11-P12): its SM has that much more issue and tensor throughput for its other CTAs. P1-P10 stay
//                whole (those rows are keys of the others)
//   order_swaps  dispatch-order swaps read from prm.order (split_window; 0: launch order)
//   j_unroll, mlp_unroll, ks_unroll   unroll of P13-P20's heads, of the MLP chunk loop (without pairs) and of P1-P10
//   timing       clock64 stamps per warp into prm.debug (stamp())
#pragma once
#include "enc5_cluster.cuh"
#include "enc5_phases.cuh"

struct SplitForm {
    static constexpr bool wo_smem = true;
    static constexpr bool sb_ahead = true;
    static constexpr bool pairs = false;
    static constexpr bool skip_dead = false;
    static constexpr int order_swaps = 0;
    static constexpr int j_unroll = 2;
    static constexpr int mlp_unroll = 2;
    static constexpr int ks_unroll = 1;
    static constexpr bool timing = false;
};

constexpr int SPLIT_RING = 6;        // ring stages (one MLP chunk's half-weights each)
constexpr int SPLIT_SLOTS = 4;       // fc2 A-word slots per warp
constexpr int SPLIT_STAGE = 640;     // uint2 per stage: 10 fc1 tiles + 10 fc2 tiles, 32 lanes
// one-shot mbarriers (phase 0 only, armed with their byte counts at kernel start) after the 16 hq slot barriers
constexpr int BAR_STAGED = SPLIT_SLOTS * 4, BAR_O = BAR_STAGED + 1, BAR_D20 = BAR_O + 1, BAR_Y8 = BAR_D20 + 4;
constexpr int BAR_CONST = BAR_Y8 + 4;  // the bulk copies of Wo, the bias/gain rows and P61's weights
constexpr int SPLIT_BARS = BAR_CONST + 1;
// bytes of the bulk copies at the start (Wo with wo_smem, the bias/gain rows, P61's weights)
__host__ __device__ constexpr uint32_t split_const_bytes(bool wo_smem) {
    return (wo_smem ? 8 * 5120 : 0) + 3 * 320 + 32 + 2560;
}

// shared memory of a CTA: the members up to the fc1 biases, Wo (wo_smem forms only), then the constants and barriers
struct __align__(16) SplitSmemHead {
    uint4 a[2 * 30 * 32];            // 30720 B: staged f16 operand (P1-P10); then the weight ring (6 x 5120 B)
    uint4 o[8 * 4 * 32];             // 16384 B: [head][m-tile][lane] e4m3 A fragments of P13-P20
    uint4 x[4 * 5 * 32];             // 10240 B: the partner's D20 words [warp][5][lane]; later its E60 rows
    uint2 hq[SPLIT_SLOTS * 4 * 32];  // 4096 B: the partner's fc2 A words [slot][warp][lane]
    uint32_t d61[64 * 8];            // 2048 B: D61, token-major
    uint32_t b1s[20 * 4 * 4];        // 1280 B: fc1 biases of the 20 chunks (4 n8-tiles x 4 words)
};
template <bool WO_SMEM>
struct __align__(16) SplitSmemWo : SplitSmemHead {
    uint4 wo[8 * 10 * 32];           // 40960 B: Wo of P13-P20 as in the weight image [head][n8 pair m][lane]
};
template <>
struct __align__(16) SplitSmemWo<false> : SplitSmemHead {};
template <bool WO_SMEM>
struct __align__(16) SplitSmem : SplitSmemWo<WO_SMEM> {
    uint32_t cst[248];               // 992 B: proj_bias (words 0..79), mlp_gain (80..159), out_bias (160..239),
                                     //        head bias (240..247): word 4n + t = bytes 16n + 4t of each
    uint4 headw[5 * 32];             // 2560 B: P61's B fragments [k-step][lane]
    unsigned long long bar[SPLIT_BARS];  // 26 x 8 B (+ the window origin, padding to 256)
    int2 org;                            // (x0, y0): split_origin, written at the start by thread 96
    unsigned long long pad[31 - SPLIT_BARS];
};
// the dynamic shared memory of the two layouts: the launcher reads these (tcforge.layers.enc5.gpu.kernel); two CTAs
// per SM fit the first (2 x 107 KB), three the second
constexpr int SPLIT_SMEM_BYTES = 109536;
constexpr int SPLIT_SMEM_BYTES_REG_WO = 68576;
static_assert(sizeof(SplitSmem<true>) == SPLIT_SMEM_BYTES, "SplitSmem<true> size");
static_assert(sizeof(SplitSmem<false>) == SPLIT_SMEM_BYTES_REG_WO, "SplitSmem<false> size");

// bit z: query m-tile z (token rows y0 + 2z, y0 + 2z + 1) has a row inside the frame
__device__ __forceinline__ uint32_t live_mtiles(int y0, int ey) {
    uint32_t m = 0;
#pragma unroll
    for (int z = 0; z < 4; ++z) m |= (y0 + 2 * z + 1 >= 0 && y0 + 2 * z < ey) ? 1u << z : 0u;
    return m;
}

// chunk c's half-weights (n8-tiles with n % 2 == rank) -> ring stage: 640 pieces of 8 B, 5 per thread
__device__ __forceinline__ void split_ring_fill(uint2* stage, const uint8_t* W, int c, int tid, int rank,
                                                bool on = true) {
    const uint8_t* src = W + chunk_base(c) + 8 * rank;
#pragma unroll
    for (int q = 0; q < 5; ++q) {
        const int j = tid + 128 * q;
        const int tile = j >> 5, ln = j & 31;
        cp_async8(stage + j, src + (tile < 10 ? 512 * tile : 5184 + 512 * (tile - 10)) + 16 * ln, on);
    }
}

// fc1 of one chunk, the CTA's two hidden n8-tiles (rank, rank + 2): 2 chains of 5 k-steps; A = E20's full operand
__device__ __forceinline__ void split_fc1(uint32_t (&hid)[2][2], const uint32_t (&an)[5][4], const uint2* stage,
                                          int lane, const uint32_t (&bias)[2]) {
    hid[0][0] = hid[0][1] = bias[0];
    hid[1][0] = hid[1][1] = bias[1];
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint2 b0 = stage[32 * ks + lane], b1 = stage[32 * (5 + ks) + lane];
        mma_hopper(hid[0][0], hid[0][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b0.x, b0.y, hid[0][0], hid[0][1]);
        mma_hopper(hid[1][0], hid[1][1], an[ks][0], an[ks][1], an[ks][2], an[ks][3], b1.x, b1.y, hid[1][0], hid[1][1]);
    }
}

// the chunk barrier of the split kernel's MLP (warps 0..3): with skip_dead not .aligned, since warps with rows to
// compute and idle warps reach it from different code (an .aligned barrier requires the same instruction)
template <bool SKIP_DEAD>
__device__ __forceinline__ void bar_ring() {
    if constexpr (SKIP_DEAD) asm volatile("barrier.sync 1, 128;" ::: "memory");
    else asm volatile("bar.sync 1, 128;" ::: "memory");  // one code path
}
// E61's barrier of the pair of P61 warps (2 rank, 2 rank + 1), not .aligned for the same reason
template <bool SKIP_DEAD>
__device__ __forceinline__ void bar_p61() {
    if constexpr (SKIP_DEAD) asm volatile("barrier.sync 2, 64;" ::: "memory");
    else asm volatile("bar.sync 2, 64;" ::: "memory");
}

// The MLP's weight-ring work of an idle warp (skip_dead): the same cp.async groups and chunk barriers in the same
// order as the MLP loop of the warps with rows to compute, which has these steps written out (see there).
__device__ __forceinline__ void split_ring_start() {
    tcf::cp_async_wait_group<2>();  // chunks 0, 1 and the bias table landed (this thread's part)
    bar_ring<true>();
}

// iteration i of the MLP loop, before the slot wait: wait for the chunk the iteration reads, the chunk barrier (every
// warp finished the stage being refilled), the next copies
__device__ __forceinline__ void split_ring_step(uint2* ring, const uint8_t* W, int i, int tid, int rank) {
    // stage (i + 4) % 6 last held chunk i - 2, finished by every warp before this barrier
    tcf::cp_async_wait_group<1>();  // chunk i + 2 landed (the newest group, chunk i + 3, may still fly)
    bar_ring<true>();
    split_ring_fill(ring + SPLIT_STAGE * ((i + 4) % SPLIT_RING), W, min(i + 4, 19), tid, rank, i + 4 < 20);
    tcf::cp_async_commit_group();  // possibly empty: one group per iteration keeps the count uniform
}

// iteration p of the pairs loop (chunks c0 = 2p, c0 + 1), before the slot waits
__device__ __forceinline__ void split_ring_pair_step(uint2* ring, const uint8_t* W, int c0, int tid, int rank) {
    tcf::cp_async_wait_group<0>();  // chunks c0 + 2, c0 + 3 (the newest group) landed
    bar_ring<true>();
    split_ring_fill(ring + SPLIT_STAGE * ((c0 + 4) % SPLIT_RING), W, min(c0 + 4, 19), tid, rank, c0 + 4 < 20);
    split_ring_fill(ring + SPLIT_STAGE * ((c0 + 5) % SPLIT_RING), W, min(c0 + 5, 19), tid, rank, c0 + 5 < 20);
    tcf::cp_async_commit_group();  // possibly empty: one group per iteration
}

// the clamped cubic activation (as mlp_activation) on the CTA's two hidden tiles -> its two fc2 A words
__device__ __forceinline__ uint2 split_activation(uint32_t (&hid)[2][2]) {
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            hid[n][r] = mlp_gate(hid[n][r]);
        }
    return make_uint2(q4(hid[0][0], hid[1][0]), q4(hid[0][1], hid[1][1]));
}

// P13's residual: this CTA's input word (16 rank + 4 t) of every plane for the lane's two query tokens (tx, ty[r]),
// 0 outside the frame; in_frame[r] also guards E60's arena stores
__device__ __forceinline__ void split_load_resid(uint32_t (&resid)[2][5], bool (&in_frame)[2],
                                                 const uint8_t* __restrict__ in, size_t plane, int ex, int ey, int tx,
                                                 const int (&ty)[2], int t, int rank) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        in_frame[r] = tx >= 0 && tx < ex && ty[r] >= 0 && ty[r] < ey;
        const uint8_t* rec = in + 32 * ((size_t)ty[r] * ex + tx) + 4 * t + 16 * rank;
#pragma unroll
        for (int p = 0; p < 5; ++p) resid[r][p] = in_frame[r] ? ldg4(rec + p * plane) : 0u;
    }
}

// P11 / E11 / P12 / E12 of the warp's head (as enc5_body) for the 4 query m-tiles; its O fragments into this CTA's
// and the partner's sm.o (o_lane = &sm.o[4 h * 32 + lane]). ALL: every m-tile is live, no per-m-tile branch (ptxas
// overlaps consecutive m-tiles); else a dead m-tile (bit clear in `live`) skips its work and sends zeros. SB_AHEAD:
// the score bias comes from sb (loaded one m-tile ahead; m-tile 0's before E10), the next one's is loaded now.
template <bool ALL, bool SB_AHEAD>
__device__ __forceinline__ void split_attention(uint4 (&sb)[6], const uint32_t (&q8)[6][4],
                                                const uint32_t (&vb)[3][4][2], const uint8_t* sbias, uint4* o_lane,
                                                int peer, uint32_t bar_o_peer, uint32_t live) {
    (void)sb, (void)sbias, (void)live;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
        uint32_t s[12][2];
#pragma unroll
        for (int jp = 0; jp < 6; ++jp) {
            uint4 c;
            if constexpr (SB_AHEAD) c = sb[jp];
            else c = ldg16(sbias + 512 * (4 * jp + mi));
            s[2 * jp][0] = c.x; s[2 * jp][1] = c.y; s[2 * jp + 1][0] = c.z; s[2 * jp + 1][1] = c.w;
        }
        if constexpr (SB_AHEAD) {
            if (mi < 3) {
#pragma unroll
                for (int jp = 0; jp < 6; ++jp) sb[jp] = ldg16(sbias + 512 * (4 * jp + mi + 1));
            }
        }
        uint4 ov = make_uint4(0u, 0u, 0u, 0u);  // a dead m-tile's O: zeros, sent all the same (the byte count)
        if (ALL || ((live >> mi) & 1u)) {
            p11_scores<ENC5_HOPPER>(s, q8, mi);
            e11_softmax(s);
            uint32_t o[4][2];
            p12_pv<ENC5_HOPPER>(o, s, vb);
            ov = make_uint4(q4(o[0][0], o[2][0]), q4(o[0][1], o[2][1]), q4(o[1][0], o[3][0]), q4(o[1][1], o[3][1]));
        }
        uint4* dst = o_lane + mi * 32;
        *dst = ov;
        st_async16(map_peer(tcf::smem_u32(dst), peer), ov, bar_o_peer);
    }
}

// The window a cluster runs. Clusters are dispatched in launch order (x fastest), breadth-first over the SMs, so the
// last ones to start share SMs with the first; prm.order swaps ranges of that order so that windows with idle warps
// (skip_dead) land on the SMs that hold the most CTAs (tcforge.layers.enc5.gpu.kernel.dispatch_swaps computes them).
// Any swaps give the same bits: only where a window runs changes.
template <int SWAPS>
__device__ __forceinline__ int split_window(int cx, int cy, int nwx, const Enc5Params& prm) {
    const int c = cx + nwx * cy;
#pragma unroll
    for (int k = 0; k < SWAPS; ++k) {
        const int a = prm.order[k][0], b = prm.order[k][1], n = prm.order[k][2];
        if (c >= a && c < a + n) return b + (c - a);
        if (c >= b && c < b + n) return a + (c - b);
    }
    return c;
}

// The token origin (x0, y0) of the CTA's window (with dispatch-order swaps: of the window split_window assigns).
template <int SWAPS>
__device__ __forceinline__ int2 split_origin(const Enc5Params& prm) {
    if constexpr (SWAPS > 0) {
        const int nwx = (int)gridDim.x >> 1;
        const int w = split_window<SWAPS>((int)blockIdx.x >> 1, (int)blockIdx.y, nwx, prm);
        return make_int2(8 * (w % nwx) - (int)prm.ox, 8 * (w / nwx) - (int)prm.oy);
    } else {
        return make_int2(8 * ((int)blockIdx.x >> 1) - (int)prm.ox, 8 * (int)blockIdx.y - (int)prm.oy);  // launch order
    }
}

template <class F>
__device__ __forceinline__ void enc5_split_body(const Enc5Params& prm) {
    constexpr bool TIMING = F::timing, SKIP_DEAD = F::skip_dead;
    constexpr int SWAPS = F::order_swaps;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    SplitSmem<F::wo_smem>& sm = *reinterpret_cast<SplitSmem<F::wo_smem>*>(smem_raw);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.z;  // 0..3
    const int g = lane >> 2, t = lane & 3;
    const int rank = (int)tcf::cluster_ctarank(), peer = rank ^ 1;
    ENC5_FRAME_POINTERS(prm);
    unsigned long long* stamps = nullptr;
    if constexpr (TIMING) {
        const int nwx = (int)gridDim.x >> 1;
        const int window = split_window<SWAPS>((int)blockIdx.x >> 1, (int)blockIdx.y, nwx, prm);
        stamps = reinterpret_cast<unsigned long long*>(prm.debug) +
                 (((size_t)frame * nwx * gridDim.y + window) * 8 + 4 * rank + warp) * 16;
        if (lane == 0) stamps[15] = (blockIdx.x >> 1) + nwx * blockIdx.y;  // the cluster's place in launch order
    }
    stamp<TIMING>(stamps, 0);
    // the window's token origin after the prologue: from shared memory when the order is permuted (held in registers
    // across the kernel it spilled the 3-CTA build), else in registers (the split build's code as before)
    const int x0 = 8 * ((int)blockIdx.x >> 1) - (int)prm.ox;  // (unused with swaps)
    const int y0 = 8 * (int)blockIdx.y - (int)prm.oy;
    auto window_origin = [&]() {
        if constexpr (SWAPS > 0) return sm.org;
        else return make_int2(x0, y0);
    };
    const int tid = lane + 32 * warp;
    const uint32_t bars = tcf::smem_u32(&sm.bar[0]);  // barrier k at bars + 8 k (the same offset in the partner)
    const uint32_t bars_peer = map_peer(bars, peer);
    if (tid == 96) {  // warp 3 (no prologue rows): warps 0..2 start their loads meanwhile
        if constexpr (SWAPS > 0) sm.org = split_origin<SWAPS>(prm);  // read after the prologue's __syncthreads
#pragma unroll
        for (int i = 0; i < SPLIT_BARS; ++i) tcf::mbarrier_init(bars + 8 * i, 1);
        // arm every phase known now: hq slots 0..3 (chunks 0..3), the one-shot hand-offs with their byte counts
#pragma unroll
        for (int i = 0; i < SPLIT_SLOTS * 4; ++i) mbar_expect(bars + 8 * i, 8 * 32);
        mbar_expect(bars + 8 * BAR_STAGED, 3 * 10 * 512);  // the partner's 3 staged m-tiles
        mbar_expect(bars + 8 * BAR_O, 4 * 4 * 512);        // the partner's 4 heads' O
#pragma unroll
        for (int w = 0; w < 4; ++w) mbar_expect(bars + 8 * (BAR_D20 + w), 5 * 512);  // warp w's D20 half
        mbar_expect(bars + 8 * (BAR_Y8 + 2 * rank), 5 * 256);       // E60 rows for the P61 warps 2r, 2r + 1
        mbar_expect(bars + 8 * (BAR_Y8 + 2 * rank + 1), 5 * 256);
        mbar_expect(bars + 8 * BAR_CONST, split_const_bytes(F::wo_smem));
        tcf::fence_mbarrier_init_release_cluster();
    }
    // (the only cluster barrier) both CTAs' barriers are initialised before any DSMEM store
    tcf::barrier_cluster_arrive();

    // ---- prologue: CTA r stages m-tiles 3r..3r+2 (warps 0..2) into both CTAs
    uint4 staged[10];
    const int mi_p = 3 * rank + warp;
    if (warp < 3) {
        uint32_t st[2][10];
        const int2 org = SWAPS > 0 ? split_origin<SWAPS>(prm) : window_origin();
        stage_mtile_rows(st, in, plane, W, ex, ey, org.x, org.y, mi_p, g, t);
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            uint32_t af[2][4];
            unpack_a(af, st[0][p], st[1][p], st[0][5 + p], st[1][5 + p]);
            staged[2 * p] = make_uint4(af[0][0], af[0][1], af[0][2], af[0][3]);
            staged[2 * p + 1] = make_uint4(af[1][0], af[1][1], af[1][2], af[1][3]);
        }
    }
    tcf::barrier_cluster_wait();
    if (warp < 3) {
#pragma unroll
        for (int k = 0; k < 10; ++k) {
            uint4* dst = &sm.a[(10 * mi_p + k) * 32 + lane];
            *dst = staged[k];
            st_async16(map_peer(tcf::smem_u32(dst), peer), staged[k], bars_peer + 8 * BAR_STAGED);
        }
    }
    stamp<TIMING>(stamps, 1);
    __syncthreads();                       // this CTA's 3 m-tiles
    tcf::mbarrier_wait_parity(bars + 8 * BAR_STAGED, 0);   // the partner's 3
    stamp<TIMING>(stamps, 2);
    if (tid == 96) {
        // what phases 13-61 read from the weight image, by the TMA engine while P1-P10 computes (at kernel start
        // the copies of all CTAs crowd the prologue's loads): Wo of the 8 heads (5120 contiguous bytes each),
        // proj_bias / mlp_gain / out_bias rows, P61's head bias and weights
        const uint32_t cb = bars + 8 * BAR_CONST;
        if constexpr (F::wo_smem) {
#pragma unroll
            for (int j = 0; j < 8; ++j)
                tcf::cp_async_bulk_g2s(tcf::smem_u32(&sm.wo[320 * j]), W + OFF_WO + HEAD_SLOT * j, 5120, cb);
        }
        tcf::cp_async_bulk_g2s(tcf::smem_u32(&sm.cst[0]), W + OFF_PROJ_BIAS, 320, cb);
        tcf::cp_async_bulk_g2s(tcf::smem_u32(&sm.cst[80]), W + OFF_MLP_GAIN, 320, cb);
        tcf::cp_async_bulk_g2s(tcf::smem_u32(&sm.cst[160]), W + OFF_OUT_BIAS, 320, cb);
        tcf::cp_async_bulk_g2s(tcf::smem_u32(&sm.cst[240]), W + OFF_HEAD_BIAS, 32, cb);
        tcf::cp_async_bulk_g2s(tcf::smem_u32(&sm.headw[0]), W + OFF_HEAD, 2560, cb);
    }

    // ---- P1-P10: head h = 4 rank + warp
    const int h = 4 * rank + warp;
    uint32_t q[6][4][2], v[6][4][2];
    project_qv<ENC5_HOPPER, true, F::ks_unroll>(q, v, sm.a, W, h, lane);
    stamp<TIMING>(stamps, 3);
    // P13's residual words (global loads issued here, a phase before use): query rows 16z..16z+15 of warp z; the
    // CTA's n8-tiles n = 2m + rank: n-tile 4p + q holds (lo w0, lo w1, hi w0, hi w1)[q], so q = rank, rank + 2 are
    // word w_rank
    const int z = warp;
    const int2 org = window_origin();
    const int tx = org.x + g;
    const int ty[2] = {org.y + 2 * z, org.y + 2 * z + 1};
    bool in_frame[2];
    uint32_t resid[2][5];
    split_load_resid(resid, in_frame, in, plane, ex, ey, tx, ty, t, rank);
    const uint8_t* sbias = W + HEAD_SLOT * h + OFF_SBIAS + 16 * lane;
    uint4 sb[6];
    if constexpr (F::sb_ahead) {
#pragma unroll
        for (int jp = 0; jp < 6; ++jp) sb[jp] = ldg16(sbias + 512 * (4 * jp));
    }
    // ---- E10, E11 (V^T), P11 / E11 / P12 / E12 per query m-tile: as enc5_body
    uint32_t q8[6][4], vb[3][4][2];
    requant_qv(q8, vb, q, v);
    uint4* o_lane = &sm.o[4 * h * 32 + lane];
    if (SKIP_DEAD && live_mtiles(window_origin().y, ey) != 0xFu) {  // a window with dead m-tiles: a second copy
        split_attention<false, F::sb_ahead>(sb, q8, vb, sbias, o_lane, peer, bars_peer + 8 * BAR_O,
                                            live_mtiles(window_origin().y, ey));
    } else {
        split_attention<true, F::sb_ahead>(sb, q8, vb, sbias, o_lane, peer, bars_peer + 8 * BAR_O, 0xFu);
    }
    stamp<TIMING>(stamps, 4);
    // P13's C part 1: the dequantised residual (raw words loaded before P11)
    uint32_t acc[10][2];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int p = 0; p < 5; ++p) {
            acc[2 * p][r] = tcf::cvt_rn_f16x2_e4m3x2(lo16(resid[r][p]));
            acc[2 * p + 1][r] = tcf::cvt_rn_f16x2_e4m3x2(hi16(resid[r][p]));
        }
    __syncthreads();                  // this CTA's heads' O; every warp is past P1-P10 (sm.a is dead)
    tcf::mbarrier_wait_parity(bars + 8 * BAR_O, 0);   // the partner's heads' O
    tcf::mbarrier_wait_parity(bars + 8 * BAR_CONST, 0);  // the bulk copies (long done)
    uint2* ring = reinterpret_cast<uint2*>(sm.a);
    if (tid < 80) cp_async16(&sm.b1s[4 * tid], W + chunk_base(tid >> 2) + 5120 + 16 * (tid & 3));  // in group 0
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        split_ring_fill(ring + SPLIT_STAGE * c, W, c, tid, rank);
        tcf::cp_async_commit_group();
    }
    stamp<TIMING>(stamps, 5);
    if constexpr (SKIP_DEAD) {
        // A warp whose 16 query rows lie outside the frame has nothing left to compute (every later stage is per row,
        // every store of its rows guarded): it only does its share of the MLP's weight ring (same groups, same chunk
        // barriers) and, as a P61 warp, meets its sibling at the E61 barrier (the partner's warp z, idle too, neither
        // sends nor awaits anything: the D20, chunk and E60 barriers of the pair stay unused)
        const uint32_t live = live_mtiles(window_origin().y, ey);
        if (!((live >> z) & 1u)) {
            split_ring_start();
            if constexpr (F::pairs) {
#pragma unroll 1
                for (int p = 0; p < 10; ++p) split_ring_pair_step(ring, W, 2 * p, tid, rank);
            } else {
#pragma unroll 1
                for (int i = 0; i < 20; ++i) split_ring_step(ring, W, i, tid, rank);
            }
            if ((z >> 1) == rank) {  // P61 warp: the sibling's rows may be live
                bar_p61<true>();
                if (z == 2 * rank && ((live >> z) & 3u)) {
                    const int2 o = window_origin();
                    enc5_e61(sm.d61, 32 * rank + lane, o.x, o.y, ex, ey, tex, surf);
                }
            }
            stamp<TIMING>(stamps, 11);
            return;
        }
    }

    // ---- P13-P20 on the CTA's n8-tiles (C part 2: + proj_bias)
#pragma unroll
    for (int m = 0; m < 10; ++m) {
        const uint32_t b = sm.cst[4 * (2 * m + rank) + t];
        acc[m][0] = hadd2(b, acc[m][0]);
        acc[m][1] = hadd2(b, acc[m][1]);
    }
    if constexpr (!F::wo_smem) {
        // two heads' Wo halves in flight through registers
        uint2 wob[10], wo1[10];
#pragma unroll
        for (int m = 0; m < 10; ++m) {
            wob[m] = ldg8(W + OFF_WO + 16 * lane + 512 * m + 8 * rank);
            wo1[m] = ldg8(W + OFF_WO + HEAD_SLOT + 16 * lane + 512 * m + 8 * rank);
        }
#pragma unroll(F::j_unroll)
        for (int j = 0; j < 8; ++j) {
            const uint4 a = sm.o[(4 * j + z) * 32 + lane];
            uint2 b[10];
#pragma unroll
            for (int m = 0; m < 10; ++m) {
                b[m] = wob[m];
                wob[m] = wo1[m];
            }
            const int jn = j < 6 ? j + 2 : 7;
#pragma unroll
            for (int m = 0; m < 10; ++m) wo1[m] = ldg8(W + OFF_WO + HEAD_SLOT * jn + 16 * lane + 512 * m + 8 * rank);
#pragma unroll
            for (int m = 0; m < 10; ++m)
                mma_hopper(acc[m][0], acc[m][1], a.x, a.y, a.z, a.w, b[m].x, b[m].y, acc[m][0], acc[m][1]);
        }
    } else {
#pragma unroll(F::j_unroll)
        for (int j = 0; j < 8; ++j) {
            const uint4 a = sm.o[(4 * j + z) * 32 + lane];
            const uint2* wj = reinterpret_cast<const uint2*>(sm.wo + 320 * j + lane) + rank;  // the CTA's half
#pragma unroll
            for (int m = 0; m < 10; ++m) {
                const uint2 b = wj[2 * 32 * m];
                mma_hopper(acc[m][0], acc[m][1], a.x, a.y, a.z, a.w, b.x, b.y, acc[m][0], acc[m][1]);
            }
        }
    }
    stamp<TIMING>(stamps, 6);
    // ---- E20: the warp pair swaps its D20 halves (into the partner's x); both normalise the full rows
    {
        uint4* xs = &sm.x[(5 * z) * 32 + lane];
#pragma unroll
        for (int k = 0; k < 5; ++k)
            st_async16(map_peer(tcf::smem_u32(xs + 32 * k), peer),
                       make_uint4(acc[2 * k][0], acc[2 * k][1], acc[2 * k + 1][0], acc[2 * k + 1][1]),
                       bars_peer + 8 * (BAR_D20 + z));
    }
    tcf::mbarrier_wait_parity(bars + 8 * (BAR_D20 + z), 0);
    uint32_t an[5][4];
    {
        uint32_t nrm[2][20];
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            // n-tile 4k + q: q even from CTA 0, odd from CTA 1 (local tile 2k + (q >> 1)); selects, not indexing
            const uint4 pv = sm.x[(5 * z + k) * 32 + lane];
            const bool r0 = rank == 0;
            nrm[0][4 * k + 0] = r0 ? acc[2 * k][0] : pv.x;
            nrm[1][4 * k + 0] = r0 ? acc[2 * k][1] : pv.y;
            nrm[0][4 * k + 1] = r0 ? pv.x : acc[2 * k][0];
            nrm[1][4 * k + 1] = r0 ? pv.y : acc[2 * k][1];
            nrm[0][4 * k + 2] = r0 ? acc[2 * k + 1][0] : pv.z;
            nrm[1][4 * k + 2] = r0 ? acc[2 * k + 1][1] : pv.w;
            nrm[0][4 * k + 3] = r0 ? pv.z : acc[2 * k + 1][0];
            nrm[1][4 * k + 3] = r0 ? pv.w : acc[2 * k + 1][1];
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) rms_norm_row_smem(nrm[r], sm.cst + 80 + t);
        requant_rows(an, nrm);
    }
    // E21: P22's C = out_bias + D20 (the CTA's tiles)
#pragma unroll
    for (int m = 0; m < 10; ++m) {
        const uint32_t b = sm.cst[160 + 4 * (2 * m + rank) + t];
        acc[m][0] = hadd2(b, acc[m][0]);
        acc[m][1] = hadd2(b, acc[m][1]);
    }
    stamp<TIMING>(stamps, 7);

    // ---- P21-P60. Iteration i: fc2_i (A: this CTA's words of chunk i from two iterations ago + the partner's,
    // slot i % 4), then fc1 of chunk i + 2 -> activation -> its words to the partner. One basic block per
    // iteration after the slot wait (predicated stores, no branches), so ptxas interleaves fc2 and fc1.
    const uint32_t hq_local = tcf::smem_u32(&sm.hq[32 * z + lane]);  // slot s: + 1024 s
    const uint32_t hq_peer = map_peer(hq_local, peer);
    const uint32_t bar_hq = bars + 8 * z, bar_hq_peer = bars_peer + 8 * z;  // slot s: + 32 s
    uint2 own[2];  // this CTA's fc2 A words of chunks i and i + 1 (registers rotate: no indexed arrays)
    uint32_t hid[2][2];
    // (the ring steps of this loop stay written out here, a second copy of split_ring_*: as calls of those functions
    // the same operations got a different ptxas schedule, 0.2-0.3 us slower per 720p frame in the split build; with
    // the stages and chunks computed here and passed in, the split build was byte-identical but the 3-CTA build
    // 40.03 instead of 39.41 us at 4K in the same process)
    tcf::cp_async_wait_group<2>();  // chunks 0, 1 and the bias table landed (this thread's part)
    bar_ring<SKIP_DEAD>();
    const uint32_t* b1 = sm.b1s + 4 * rank + t;  // chunk c: b1[16 c] (n-tile rank), b1[16 c + 8] (rank + 2)
    uint32_t bias1[2] = {b1[0], b1[8]};
#pragma unroll
    for (int c = 0; c < 2; ++c) {
        split_fc1(hid, an, ring + SPLIT_STAGE * c, lane, bias1);
        own[c] = split_activation(hid);
        tcf::st_async_v2_b32(hq_peer + 1024 * c, own[c].x, own[c].y, bar_hq_peer + 32 * c);
        bias1[0] = b1[16 * (c + 1)];
        bias1[1] = b1[16 * (c + 1) + 8];
    }
    if constexpr (F::pairs) {
        // Chunks in pairs: iteration p runs fc2 of chunks 2p, 2p + 1 and fc1 of chunks 2p + 2, 2p + 3 in one basic
        // block after one barrier and the two slot waits (half the fence points of the chunk loop, twice the
        // independent mma between them). Ring: chunk c in stage c % 6; chunks 2p + 4, 2p + 5 load during iteration p
        // into the stages of chunks 2p - 2, 2p - 1 (finished in iteration p - 1); slots: at most 4 chunks unread at
        // once (as above).
#pragma unroll 1
        for (int p = 0; p < 10; ++p) {
            const int c0 = 2 * p;
            tcf::cp_async_wait_group<0>();  // chunks c0 + 2, c0 + 3 (the newest group) landed
            bar_ring<SKIP_DEAD>();
            split_ring_fill(ring + SPLIT_STAGE * ((c0 + 4) % SPLIT_RING), W, min(c0 + 4, 19), tid, rank, c0 + 4 < 20);
            split_ring_fill(ring + SPLIT_STAGE * ((c0 + 5) % SPLIT_RING), W, min(c0 + 5, 19), tid, rank, c0 + 5 < 20);
            tcf::cp_async_commit_group();  // possibly empty: one group per iteration
            const int s0 = c0 & (SPLIT_SLOTS - 1), s1 = (c0 + 1) & (SPLIT_SLOTS - 1);
            tcf::mbarrier_wait_parity(bar_hq + 32 * s0, (c0 >> 2) & 1);
            tcf::mbarrier_wait_parity(bar_hq + 32 * s1, ((c0 + 1) >> 2) & 1);
            const uint2 pw0 = sm.hq[(s0 * 4 + z) * 32 + lane], pw1 = sm.hq[(s1 * 4 + z) * 32 + lane];
            mbar_expect(bar_hq + 32 * s0, 8 * 32, lane == 0 && c0 + 4 < 20);
            mbar_expect(bar_hq + 32 * s1, 8 * 32, lane == 0 && c0 + 5 < 20);
            const bool r0 = rank == 0;
            const uint2 m0 = own[0], m1 = own[1];
            const uint32_t hq0[4] = {r0 ? m0.x : pw0.x, r0 ? m0.y : pw0.y, r0 ? pw0.x : m0.x, r0 ? pw0.y : m0.y};
            const uint32_t hq1[4] = {r0 ? m1.x : pw1.x, r0 ? m1.y : pw1.y, r0 ? pw1.x : m1.x, r0 ? pw1.y : m1.y};
            const uint2* s2a = ring + SPLIT_STAGE * (c0 % SPLIT_RING) + 320;
            const uint2* s2b = ring + SPLIT_STAGE * ((c0 + 1) % SPLIT_RING) + 320;
#pragma unroll
            for (int m = 0; m < 10; ++m) {
                const uint2 b = s2a[32 * m + lane];
                mma_hopper(acc[m][0], acc[m][1], hq0[0], hq0[1], hq0[2], hq0[3], b.x, b.y, acc[m][0], acc[m][1]);
            }
#pragma unroll
            for (int m = 0; m < 10; ++m) {
                const uint2 b = s2b[32 * m + lane];
                mma_hopper(acc[m][0], acc[m][1], hq1[0], hq1[1], hq1[2], hq1[3], b.x, b.y, acc[m][0], acc[m][1]);
            }
            // fc1 of chunks c0 + 2, c0 + 3 (clamped to 19 on the last iteration: recomputed, unsent)
            const int ca = min(c0 + 2, 19), cb = min(c0 + 3, 19);
            uint32_t hid2[2][2];
            const uint32_t ba[2] = {b1[16 * ca], b1[16 * ca + 8]}, bb[2] = {b1[16 * cb], b1[16 * cb + 8]};
            split_fc1(hid, an, ring + SPLIT_STAGE * (ca % SPLIT_RING), lane, ba);
            split_fc1(hid2, an, ring + SPLIT_STAGE * (cb % SPLIT_RING), lane, bb);
            own[0] = split_activation(hid);
            own[1] = split_activation(hid2);
            const int sa = (c0 + 2) & (SPLIT_SLOTS - 1), sb2 = (c0 + 3) & (SPLIT_SLOTS - 1);
            tcf::st_async_v2_b32(hq_peer + 1024 * sa, own[0].x, own[0].y, bar_hq_peer + 32 * sa, c0 + 2 < 20);
            tcf::st_async_v2_b32(hq_peer + 1024 * sb2, own[1].x, own[1].y, bar_hq_peer + 32 * sb2, c0 + 3 < 20);
        }
    } else {
#pragma unroll(F::mlp_unroll)
        for (int i = 0; i < 20; ++i) {
            // stage (i + 4) % 6 last held chunk i - 2, finished by every warp before this barrier
            tcf::cp_async_wait_group<1>();  // chunk i + 2 landed (the newest group, chunk i + 3, may still fly)
            bar_ring<SKIP_DEAD>();
            split_ring_fill(ring + SPLIT_STAGE * ((i + 4) % SPLIT_RING), W, min(i + 4, 19), tid, rank, i + 4 < 20);
            tcf::cp_async_commit_group();  // possibly empty: one group per iteration keeps the count uniform
            const int slot = i & (SPLIT_SLOTS - 1);
            tcf::mbarrier_wait_parity(bar_hq + 32 * slot, (i >> 2) & 1);
            const uint2 pw = sm.hq[(slot * 4 + z) * 32 + lane];
            mbar_expect(bar_hq + 32 * slot, 8 * 32, lane == 0 && i + 4 < 20);  // the slot's next phase: chunk i + 4
            const uint2 mine = own[0];
            own[0] = own[1];
            const bool r0 = rank == 0;
            const uint32_t hq[4] = {r0 ? mine.x : pw.x, r0 ? mine.y : pw.y, r0 ? pw.x : mine.x, r0 ? pw.y : mine.y};
            const uint2* s2 = ring + SPLIT_STAGE * (i % SPLIT_RING) + 320;
#pragma unroll
            for (int m = 0; m < 10; ++m) {
                const uint2 b = s2[32 * m + lane];
                mma_hopper(acc[m][0], acc[m][1], hq[0], hq[1], hq[2], hq[3], b.x, b.y, acc[m][0], acc[m][1]);
            }
            // fc1 of chunk i + 2 (on the last two iterations chunk 19 again, unsent: keeps the block branch-free)
            const int c2 = min(i + 2, 19);
            split_fc1(hid, an, ring + SPLIT_STAGE * (c2 % SPLIT_RING), lane, bias1);
            const uint2 w2 = split_activation(hid);
            own[1] = w2;
            const int sl = (i + 2) & (SPLIT_SLOTS - 1);
            tcf::st_async_v2_b32(hq_peer + 1024 * sl, w2.x, w2.y, bar_hq_peer + 32 * sl, i + 2 < 20);
            const int cn = min(i + 3, 19);
            bias1[0] = b1[16 * cn];
            bias1[1] = b1[16 * cn + 8];
        }
    }
    stamp<TIMING>(stamps, 8);
    // ---- E60: the CTA's words of every plane (word t from CTA 0, t|4 from CTA 1); rows to the partner's P61 warps
    uint32_t yo[5][2];
#pragma unroll
    for (int s = 0; s < 5; ++s) {
        yo[s][0] = q4(acc[2 * s][0], acc[2 * s + 1][0]);
        yo[s][1] = q4(acc[2 * s][1], acc[2 * s + 1][1]);
    }
    if constexpr (SWAPS > 0) {
        const int2 o = window_origin();  // (tx, ty and in_frame of the residual load, recomputed: fewer registers)
        const int x = o.x + g;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int y = o.y + 2 * z + r;
            if (x >= 0 && x < ex && y >= 0 && y < ey) {
                uint8_t* rec = arena + 32 * ((size_t)y * ex + x) + 4 * t + 16 * rank;
#pragma unroll
                for (int p = 0; p < 5; ++p) *reinterpret_cast<uint32_t*>(rec + p * plane) = yo[p][r];
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            if (in_frame[r]) {
                uint8_t* rec = arena + 32 * ((size_t)ty[r] * ex + tx) + 4 * t + 16 * rank;
#pragma unroll
                for (int p = 0; p < 5; ++p) *reinterpret_cast<uint32_t*>(rec + p * plane) = yo[p][r];
            }
        }
    }
    // The rows land in the partner's x, over the D20 words its warp 0 (rank 0) or 1 (rank 1) read in E20: safe because
    // this point is after our whole MLP loop, which needed the partner's chunk words, which it sent only after its
    // MLP barriers, which every warp (D20 read done) had passed. Moving those barriers would make this a race.
    if ((z >> 1) == peer) {  // the partner's warp z runs P61 for these rows
        uint2* xs = reinterpret_cast<uint2*>(sm.x) + (5 * z) * 32 + lane;
#pragma unroll
        for (int s = 0; s < 5; ++s)
            tcf::st_async_v2_b32(map_peer(tcf::smem_u32(xs + 32 * s), peer), yo[s][0], yo[s][1],
                                 bars_peer + 8 * (BAR_Y8 + z));
        stamp<TIMING>(stamps, 11);
        return;  // every store into this CTA's shared memory is awaited by a warp that is still running
    }
    stamp<TIMING>(stamps, 9);
    // ---- P61 (warps 2 rank, 2 rank + 1): head 16x16x160 on the full e4m3 rows, C = head bias
    uint32_t d61[2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n) d61[n][0] = d61[n][1] = sm.cst[240 + 4 * n + t];
    tcf::mbarrier_wait_parity(bars + 8 * (BAR_Y8 + z), 0);
    uint32_t y8[5][4];
    {
        const uint2* xs = reinterpret_cast<const uint2*>(sm.x) + (5 * z) * 32 + lane;
#pragma unroll
        for (int s = 0; s < 5; ++s) {
            const uint2 pv = xs[32 * s];
            const bool r0 = rank == 0;
            y8[s][0] = r0 ? yo[s][0] : pv.x;
            y8[s][1] = r0 ? yo[s][1] : pv.y;
            y8[s][2] = r0 ? pv.x : yo[s][0];
            y8[s][3] = r0 ? pv.y : yo[s][1];
        }
    }
#pragma unroll
    for (int ks = 0; ks < 5; ++ks) {
        const uint4 b = sm.headw[32 * ks + lane];
        mma_hopper(d61[0][0], d61[0][1], y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], b.x, b.y, d61[0][0], d61[0][1]);
        mma_hopper(d61[1][0], d61[1][1], y8[ks][0], y8[ks][1], y8[ks][2], y8[ks][3], b.z, b.w, d61[1][0], d61[1][1]);
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
        sm.d61[(16 * z + g) * 8 + 4 * n + t] = d61[n][0];
        sm.d61[(16 * z + g + 8) * 8 + 4 * n + t] = d61[n][1];
    }
    stamp<TIMING>(stamps, 10);
    bar_p61<SKIP_DEAD>();  // warps 2 rank, 2 rank + 1
    if (z != 2 * rank) {
        stamp<TIMING>(stamps, 11);
        return;
    }
    const int2 o = window_origin();
    enc5_e61(sm.d61, 32 * rank + lane, o.x, o.y, ex, ey, tex, surf);
    stamp<TIMING>(stamps, 11);
}

// ---------------------------------------------------------------------------------------------------------------
// The shipped configurations (tools derive their timing builds from these)
// ---------------------------------------------------------------------------------------------------------------
// hopper_split: the latency-bound form (up to one window per SM): Wo in shared memory, the score bias one m-tile
// ahead, the MLP loop unrolled twice (3-6 % faster than once); pairs measured 19.9 vs 19.7 us at 720p (off)
struct HopperSplitForm : SplitForm {};
// hopper_split_occ3: three CTAs per SM (168 registers, 68,576 B of shared memory) for launches of 1-2 windows per SM
// (one 4K frame = 135 windows = 270 CTAs > 2 x 132 slots): Wo through registers, no score-bias prefetch (spill 172 ->
// 60 B; 40.1 vs 41.3 us at 4K), idle warps skip, dispatch-order swaps, MLP chunks in pairs (39.1 vs 40.1 us)
struct HopperSplitOcc3Form : SplitForm {
    static constexpr bool wo_smem = false;
    static constexpr bool sb_ahead = false;
    static constexpr bool pairs = true;
    static constexpr bool skip_dead = true;
    static constexpr int order_swaps = 4;
};
