// fp8 (e4m3 / e5m2) <-> f16 conversions of packed pairs, one cvt each (sm_89+).
#pragma once
#include <stdint.h>

namespace tcf {

// two e4m3 (low byte first) -> f16x2; exact
__device__ __forceinline__ uint32_t cvt_rn_f16x2_e4m3x2(uint16_t x) {
  uint32_t d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(x));
  return d;
}
// f16x2 -> two e4m3, round to nearest even, out-of-range to +-448 (satfinite)
__device__ __forceinline__ uint16_t cvt_rn_satfinite_e4m3x2_f16x2(uint32_t x) {
  uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(d) : "r"(x));
  return d;
}
// two e5m2 (low byte first) -> f16x2; exact
__device__ __forceinline__ uint32_t cvt_rn_f16x2_e5m2x2(uint16_t x) {
  uint32_t d;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(d) : "h"(x));
  return d;
}
// f16x2 -> two e5m2, round to nearest even, out-of-range to +-57344 (satfinite)
__device__ __forceinline__ uint16_t cvt_rn_satfinite_e5m2x2_f16x2(uint32_t x) {
  uint16_t d;
  asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(d) : "r"(x));
  return d;
}
// the low / high two e4m3 of a 32-bit word -> f16x2
__device__ __forceinline__ uint32_t cvt_rn_f16x2_e4m3x2_lo(uint32_t w) {
  uint32_t d;
  asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.rn.f16x2.e4m3x2 %0, l; }" : "=r"(d) : "r"(w));
  return d;
}
__device__ __forceinline__ uint32_t cvt_rn_f16x2_e4m3x2_hi(uint32_t w) {
  uint32_t d;
  asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.rn.f16x2.e4m3x2 %0, h; }" : "=r"(d) : "r"(w));
  return d;
}

}  // namespace tcf
