"""tcforge.numerics: bit-exact emulation of the PTX arithmetic the FP8 layers use (mma, wgmma, conversions, f16 ops,
MUFU).

Everything works on bit patterns (uint8 e4m3 codes, uint16 f16 bits, uint32 packed words) and is vectorised numpy.
"""

from __future__ import annotations

from tcforge.numerics.approx import div_approx_ftz_f32, ex2_approx_ftz_f32, rcp_approx_ftz_f32, rsqrt_approx_ftz_f32
from tcforge.numerics.codecs import (
    cvt_rn_f16x2_e4m3x2,
    cvt_rn_satfinite_e4m3x2_f16x2,
    e4m3_to_f16,
    f16_to_e4m3_satfinite,
)
from tcforge.numerics.f16_ops import (
    f16_abs,
    f16_add,
    f16_fma,
    f16_max,
    f16_min,
    f16_mul,
    f16_neg,
    f16_sub,
    f16x2_abs,
    f16x2_add,
    f16x2_fma,
    f16x2_max,
    f16x2_min,
    f16x2_mul,
    f16x2_neg,
    f16x2_sub,
)
from tcforge.numerics.f32_ops import f16_to_f32, f32_add_ftz, f32_mul_ftz, f32_to_f16_rn
from tcforge.numerics.hmma import mma_m16n8k16_f16_f16, mma_m16n8k16_f32, mma_m16n8k32_f8
from tcforge.numerics.mma import MODELS, mma_m16n8k32_e4m3_f16
from tcforge.numerics.tensorcore import tc_mma
from tcforge.numerics.wgmma import wgmma_m64nNk16, wgmma_m64nNk32

__all__ = [
    "MODELS",
    "div_approx_ftz_f32",
    "ex2_approx_ftz_f32",
    "rcp_approx_ftz_f32",
    "rsqrt_approx_ftz_f32",
    "cvt_rn_f16x2_e4m3x2",
    "cvt_rn_satfinite_e4m3x2_f16x2",
    "e4m3_to_f16",
    "f16_abs",
    "f16_add",
    "f16_fma",
    "f16_max",
    "f16_min",
    "f16_mul",
    "f16_neg",
    "f16_sub",
    "f16_to_e4m3_satfinite",
    "f16_to_f32",
    "f16x2_abs",
    "f16x2_add",
    "f16x2_fma",
    "f16x2_max",
    "f16x2_min",
    "f16x2_mul",
    "f16x2_neg",
    "f16x2_sub",
    "f32_add_ftz",
    "f32_mul_ftz",
    "f32_to_f16_rn",
    "mma_m16n8k16_f16_f16",
    "mma_m16n8k16_f32",
    "mma_m16n8k32_e4m3_f16",
    "mma_m16n8k32_f8",
    "tc_mma",
    "wgmma_m64nNk16",
    "wgmma_m64nNk32",
]
