// The build's geometry: everything derived from the options codegen sets, and the combinations the kernel refuses.
// The options (tcforge.gemm.codegen emits each as `constexpr int NAME = value;` before this file; 0 when off):
//   IN_KIND (0 fp16, 1 bf16, 2 e4m3)  OUT_KIND (0 fp32, 1 fp16, 2 bf16)  BM BN BK STAGES NC (consumer warpgroups)
//   USE_TMA (0: cp.async by all threads, 1: TMA producer warpgroup)  B_KMAJOR  CM (cluster size along M, B multicast)
//   A_MN (an MN-major A operand, 16-bit only, loaded in 64-column slabs: a column-major a, or the swapped product's
//   B^T from row-major B)
//   CLUSTER_N (the CM CTAs of a cluster run along N instead and multicast A: tiles of one row band, small M; with
//   TRANS_C the band is 64 rows of B^T, the weights, and the CTAs take the problem's M in CM column tiles)
//   LOCAL_EMPTY (in a cluster, two producer threads: the one loading the operand this CTA alone reads waits on a
//   local empty barrier, this CTA's consumers, instead of the cluster's)
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
//   CPA (bit 1 A, bit 2 B: the kernel operand is loaded with cp.async by two producer warps, 16 bytes a copy, instead
//   of TMA: rows that start only 16-byte aligned, which TMA reads at less than half speed; warps 0-1 load A, 2-3 B)
//   Diagnostics (instrument.cuh): TIMELINE, STREAMK_TRACE (%globaltimer stamps), DIAG (parts of the kernel left out)
// codegen also emits HOST_* (the sizes the host side computes for itself: checked against the kernel's below) and
// TCF_CLUSTER_CTAS (the cluster's CTAs: a macro, since __cluster_dims__ is only given to cluster builds).
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
constexpr int DEFER_WORDS = DEFER_SUBS > 0 ? DEFER_SUBS * 16 : 1;   // (1: a placeholder where none is held)
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
// CPA: the threads loading each cp.async operand, and the arrivals a stage's full barrier waits for (a cp.async
// operand's threads each arrive as their copies complete; a TMA operand's thread once, with its bytes)
constexpr int CPA_THREADS = 64;
constexpr int FULL_ARRIVALS = CPA ? ((CPA & 1) ? CPA_THREADS : 1) + ((CPA & 2) ? CPA_THREADS : 1) : (HOIST ? 2 : 1);
static_assert(!CPA || (USE_TMA && HOIST && CM == 1 && !DIAG && !TIMELINE && !((CPA & 1) && A_MN) &&
                       !((CPA & 2) && !B_KMAJOR)),
              "cp.async operands: K-major, loaded by the producer warpgroup's two roles (hoist), no cluster or probes");
constexpr int ORDER_BAR = 3;   // ping-pong: named barriers 3 and 4 hand the tensor core from one consumer to the other
constexpr int WG_A = PINGPONG ? 0 : 1;             // A-row offset factor of consumer warpgroup wg inside a tile
constexpr int READERS = (PINGPONG ? 1 : NC) * 4;   // consumer warps that read each stage in one CTA

// the host's own derivation of the sizes it launches with (tcforge.gemm KernelConfig) must agree: the
// shared memory it reserves holds the kernel's, the workspace slot, block and TMA boxes are the kernel's
static_assert(HOST_SMEM_BYTES >= SMEM_BYTES, "the host reserves less dynamic shared memory than the kernel uses");
static_assert(HOST_SK_SLOT == SK_SLOT, "the host's split-K / stream-K slot differs from the kernel's");
static_assert(HOST_THREADS == NTHREADS, "the host's block size differs from the kernel's");
static_assert(!USE_TMA || !B_KMAJOR || HOST_B_BOX == B_BOX, "the host's TMA box rows of a K-major B differ");
static_assert(!USE_TMA || A_MN || HOST_A_BOX == (CLUSTER_N ? BM / CM : BM), "the host's TMA box rows of A differ");
static_assert(!USE_TMA || !A_MN || HOST_A_MN_BOX_K == (CLUSTER_N ? BK / CM : BK), "the host's MN-major A box differs");
static_assert(!TMA_STORE || SPLITK || (HOST_C_BOX_COLS == EPI_N && HOST_C_BOX_ROWS == (TRANS_C ? BN : 16)),
              "the host's C store box differs from the staged epilogue's (a warp's 16 rows of a sub-tile)");
