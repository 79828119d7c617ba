// The kernel's one instrumentation hook: a probe it calls at fixed points. The shipped builds take Probe<0, 0, 0>,
// whose calls are empty and whose switches are off (no instruction of it reaches the SASS); diagnostic builds
// (bench/gemm_timeline.py, bench/gemm_bound.py, the stream-K trace) set TIMELINE, STREAMK_TRACE or DIAG.
//   TIMELINE: %globaltimer stamps per CTA into sk_ws (TL_SLOTS u64 per CTA): 0 entry, 1 set-up done, 2 / 3 the A / B
//     producer thread's first load, 4 + 4 wg consumer warpgroup wg's first stage arrived, 5 + 4 wg its last unit's
//     wgmmas done, 6 + 4 wg its stores done, 15 exit (thread 0)
//   STREAMK_TRACE: %globaltimer stamps per consumer warpgroup after sk_flags[1024] (8 per warpgroup: 0 start, 1 whole
//     units done, 2 / 3 around its partial's store, 4 / 5 around the owner's adds, 6 end)
//   DIAG (the product is not computed): bit 1 no loads after the ring's first fill, bit 2 no epilogue stores, bit 4
//     no wgmma — what the rest of the kernel costs alone
constexpr int TL_SLOTS = 16;

template <bool kTimeline, bool kTrace, int kDiag>
struct Probe {
  static constexpr bool timeline = kTimeline;
  static constexpr bool no_loads = (kDiag & 1) != 0;   // after the first fill the producers only arrive
  static constexpr bool no_stores = (kDiag & 2) != 0;
  static constexpr bool no_mma = (kDiag & 4) != 0;
  // timeline stamp `i` of this CTA into `tl` (the stream-K workspace argument; the caller picks the thread)
  static __device__ __forceinline__ void stamp(float* tl, int i) {
    if constexpr (kTimeline) reinterpret_cast<uint64_t*>(tl)[blockIdx.x * TL_SLOTS + i] = globaltimer();
  }
  // stream-K trace stamp `i` of consumer warpgroup `wg` (after the first 1024 stream-K flags)
  static __device__ __forceinline__ void trace(int* flags, int wg, int i) {
    if constexpr (kTrace) {
      if (threadIdx.x % 128 == 0 && flags != nullptr)
        reinterpret_cast<uint64_t*>(flags + 1024)[(blockIdx.x * NC + wg) * 8 + i] = globaltimer();
    }
  }
};
using KernelProbe = Probe<TIMELINE != 0, STREAMK_TRACE != 0, DIAG>;
