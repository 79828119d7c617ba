// The producer warpgroup (TMA builds): its loading threads walk the cluster's schedule and fill the ring, one k-tile
// per stage, waiting for each slot's consumers (every CTA's, for a multicast operand) to have released it.
// Rung 9 (HOIST): two producer threads in two warps, thread 0 loading A and thread 32 B, each arming the stage's full
// barrier with its own operand's bytes (the barrier counts two arrivals): one thread issuing both ran a chain of ~47
// instructions per k-tile, the bound of the small tiles (docs/gemm.md, "The producer's instruction chain"). Earlier
// rungs: thread 0 loads both. CPA builds: warps 0-1 load A and warps 2-3 B, an operand with cp.async by all 64
// threads (producer_cpa) or with TMA by the first.

// the loads of one producer thread (OPS: bit 0 A, bit 1 B; a compile-time value, so its loop holds its own loads)
template <class Probe, int OPS>
__device__ __forceinline__ void producer_thread(const Ctx& x) {
  constexpr bool loads_a = (OPS & 1) != 0, loads_b = (OPS & 2) != 0;
  // the operand this CTA loads for itself alone (B in a cluster along N, A in one along M) waits for its own
  // consumers only (LOCAL_EMPTY); the multicast one for every CTA's, whose slots it writes
  constexpr bool own_only = LOCAL_EMPTY && (CLUSTER_N ? !loads_a : !loads_b);   // (LOCAL_EMPTY implies CM > 1)
  const Schedule& sc = x.sched;
  const int rank = sc.rank;
  const uint32_t a_ring = x.a_ring, b_ring = x.b_ring, full_bar = x.full_bar, empty_bar = x.empty_bar;
  const TmaDesc* const mapA = x.mapA;
  const TmaDesc* const mapB = x.mapB;
  uint32_t it = 0;
  [[maybe_unused]] RingPos rp;   // (HOIST) the next k-tile's ring position
  // load k-tiles [w.kt0, w.kt1) of one unit into the ring
  auto produce = [&](const Unit& w) {
    for (int kt = w.kt0; kt < w.kt1; ++kt, ++it) {
      // (HOIST: the tracked position; else from the count. Constant conditions: one arm is compiled)
      const Stage s = HOIST ? (Stage)rp.s : (Stage)(it % STAGES);
      const uint32_t parity = HOIST ? rp.ph ^ 1 : ((it / STAGES) & 1) ^ 1;
      if constexpr (HOIST) rp.next();
      mbarrier_wait_parity(empty_bar + s * 8 + (own_only ? LOCAL_OFF : 0), parity);
      const uint32_t fb = full_bar + s * 8;
      if constexpr (Probe::no_loads) {   // the consumers re-read the first fill's stages
        if (it >= STAGES) {
          arrive_local(fb);
          continue;
        }
      }
      mbarrier_arrive_expect_tx(fb, (loads_a ? A_TILE : 0) + (loads_b ? B_TILE : 0));
      if constexpr (!loads_a) {
      } else if constexpr (A_MN && CLUSTER_N) {   // this CTA's BK/CM k-rows of each slab, multicast to the cluster
        constexpr int K_ROWS = BK / CM;   // (a slab's 128-byte swizzle repeats every 8 rows: whole groups)
#pragma unroll
        for (int i = 0; i < BM / 64; ++i)
          cp_async_bulk_tensor_2d_g2s_multicast(a_ring + s * A_TILE + i * (BK * 128) + rank * K_ROWS * 128, mapA,
                                                w.m_tile * BM + i * 64, kt * BK + rank * K_ROWS, fb, (1 << CM) - 1);
      } else if constexpr (A_MN) {   // BM/64 boxes of {64, BK}: one slab per 64 rows of the tile
#pragma unroll
        for (int i = 0; i < BM / 64; ++i)
          cp_async_bulk_tensor_2d_g2s(a_ring + s * A_TILE + i * (BK * 128), mapA, w.m_tile * BM + i * 64, kt * BK, fb);
      } else if constexpr (CLUSTER_N) {   // this CTA's BM/CM rows of A, multicast to the cluster
        constexpr int A_ROWS = BM / CM;
        cp_async_bulk_tensor_2d_g2s_multicast(a_ring + s * A_TILE + rank * A_ROWS * BK_BYTES, mapA, kt * BK,
                                              w.m_tile * BM + rank * A_ROWS, fb, (1 << CM) - 1);
      } else {
        cp_async_bulk_tensor_2d_g2s(a_ring + s * A_TILE, mapA, kt * BK, w.m_tile * BM, fb);
      }
      const uint32_t bs = b_ring + s * B_TILE;
      if constexpr (!loads_b) {
      } else if constexpr (B_KMAJOR) {
        constexpr int ROWS = BN / B_MC;   // this CTA loads BN/B_MC rows of B (B_BOX at a time), multicasts them
#pragma unroll
        for (int i = 0; i < ROWS / B_BOX; ++i) {
          const int row = (B_MC > 1 ? rank : 0) * ROWS + i * B_BOX;
          if constexpr (B_MC > 1)
            cp_async_bulk_tensor_2d_g2s_multicast(bs + row * BK_BYTES, mapB, kt * BK, w.n_tile * BN + row, fb,
                                                  (1 << CM) - 1);
          else
            cp_async_bulk_tensor_2d_g2s(bs + row * BK_BYTES, mapB, kt * BK, w.n_tile * BN + row, fb);
        }
      } else {
        constexpr int SLABS = B_SLABS / B_MC;
#pragma unroll
        for (int i = 0; i < SLABS; ++i) {
          const int slab = (B_MC > 1 ? rank : 0) * SLABS + i;
          if constexpr (B_MC > 1)
            cp_async_bulk_tensor_2d_g2s_multicast(bs + slab * B_SLAB, mapB, w.n_tile * BN + slab * 64, kt * BK, fb,
                                                  (1 << CM) - 1);
          else
            cp_async_bulk_tensor_2d_g2s(bs + slab * B_SLAB, mapB, w.n_tile * BN + slab * 64, kt * BK, fb);
        }
      }
    }
  };
  if constexpr (Probe::timeline) Probe::stamp(x.sk_ws, loads_a ? 2 : 3);
  for (int u = sc.cluster; u < sc.dp_units; u += sc.num_clusters) produce(sc.unit(u));
  if constexpr (STREAMK) sc.sk_walk([&](const Unit& w, int, bool) { produce(w); });
  // every load of this CTA is issued: the next PDL launch may be scheduled once all CTAs are here (it sets up on SMs
  // as they free and waits for this grid). A trigger at the kernel's start measured the same (docs/gemm.md,
  // "Programmatic dependent launch"); this one leaves the next grid queued for less time.
  if constexpr (loads_a) griddepcontrol_launch_dependents();
  // the producer's tail (in a cluster, in place of a cluster barrier at the kernel's end): wait until every CTA's
  // consumers have released the last STAGES slots this thread filled. Then no peer's consumer will still arrive on
  // this CTA's empty barriers, and every multicast this CTA issued has landed in its peers (each peer consumed it
  // before releasing it), so the CTA may leave as soon as its own stores are done — the barrier held it until the
  // slowest thread of the cluster had stored its tile. A ring position never filled (fewer k-tiles than stages) is a
  // fresh slot: its wait returns at once, as in the first fill.
  if constexpr (CM > 1 && !own_only) {
    for (int i = 0; i < STAGES; ++i, ++it) {
      if constexpr (HOIST) {
        mbarrier_wait_parity(empty_bar + rp.s * 8, rp.ph ^ 1);
        rp.next();
      } else {
        mbarrier_wait_parity(empty_bar + (it % STAGES) * 8, ((it / STAGES) & 1) ^ 1);
      }
    }
  }
}

// The loads of one operand with cp.async (CPA; OPS 1: A, 2: B), by CPA_THREADS threads (thread t of them): each
// k-tile's BM or BN rows of BK_BYTES in 16-byte copies into the swizzled layout TMA writes, chunks past the matrix
// zero-filled (an in-place operand's K is a whole number of chunks; a copied one is padded with zeros). Each thread's
// copies of a stage arrive on its full barrier as they complete (.noinc: the barrier counts the threads, no bytes).
template <int OPS>
__device__ __forceinline__ void producer_cpa(const Ctx& x, int t) {
  constexpr bool A_OP = OPS == 1;
  constexpr int ROWS = A_OP ? BM : BN, TILE = A_OP ? A_TILE : B_TILE, ROW_CHUNKS = BK_BYTES / 16;
  static_assert(ROWS * ROW_CHUNKS % CPA_THREADS == 0, "a cp.async operand's tile: whole chunks per thread");
  const Schedule& sc = x.sched;
  const uint8_t* const base = reinterpret_cast<const uint8_t*>(A_OP ? x.A : x.B);
  const long long ld = A_OP ? x.lda : x.ldb;
  const int rows = A_OP ? x.M : x.N, K = x.K;
  const uint32_t ring = A_OP ? x.a_ring : x.b_ring;
  RingPos rp;
  auto produce = [&](const Unit& w) {
    const int row0 = A_OP ? w.m_tile * BM : w.n_tile * BN;
    for (int kt = w.kt0; kt < w.kt1; ++kt) {
      const uint32_t s = rp.s;
      mbarrier_wait_parity(x.empty_bar + s * 8, rp.ph ^ 1);
      rp.next();
      const uint32_t dst = ring + s * TILE;
      const int k0 = kt * BK;
#pragma unroll
      for (int i = 0; i < ROWS * ROW_CHUNKS / CPA_THREADS; ++i) {
        const int c = t + i * CPA_THREADS;   // a warp's 32 copies: 4 rows of 128 bytes
        const int r = c / ROW_CHUNKS, kc = c % ROW_CHUNKS;
        const int gk = k0 + kc * (16 / IN_BYTES);
        const bool ok = row0 + r < rows && gk < K;
        const void* src = ok ? base + ((int64_t)(row0 + r) * ld + gk) * IN_BYTES : base;
        cp_async_cg_16(dst + swz(r * BK_BYTES + kc * 16, K_SWZ_MASK), src, ok);
      }
      cp_async_mbarrier_arrive_noinc(x.full_bar + s * 8);
    }
  };
  for (int u = sc.cluster; u < sc.dp_units; u += sc.num_clusters) produce(sc.unit(u));
  if constexpr (STREAMK) sc.sk_walk([&](const Unit& w, int, bool) { produce(w); });
  if (A_OP && t == 0) griddepcontrol_launch_dependents();
  cp_async_wait_all();   // (no thread leaves with copies in flight)
}

template <class Probe> __device__ __forceinline__ void producer_warpgroup(const Ctx& x) {
  if constexpr (SETMAXNREG) setmaxnreg_dec<PRODUCER_REGS>();
  if constexpr (CPA != 0) {   // warps 0-1 load A, warps 2-3 B: all 64 threads with cp.async, or the first with TMA
    if (threadIdx.x < CPA_THREADS) {
      if constexpr ((CPA & 1) != 0) producer_cpa<1>(x, threadIdx.x);
      else if (threadIdx.x == 0) producer_thread<Probe, 1>(x);
    } else {
      if constexpr ((CPA & 2) != 0) producer_cpa<2>(x, threadIdx.x - CPA_THREADS);
      else if (threadIdx.x == CPA_THREADS) producer_thread<Probe, 2>(x);
    }
  } else {
    if (threadIdx.x == 0) producer_thread<Probe, HOIST ? 1 : 3>(x);
    else if (HOIST && threadIdx.x == 32) producer_thread<Probe, 2>(x);
  }
}
