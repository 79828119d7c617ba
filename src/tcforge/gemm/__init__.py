"""tcforge.gemm: the Hopper (sm_90a) GEMM engine, the write-up's tcgen05 phases rebuilt with TMA + wgmma as a ladder.

`matmul(a, b, *, out_dtype=None, scale_a=None, scale_b=None, variant="auto")` on torch CUDA tensors; every rung of the
ladder stays selectable by name (see `LADDER`). The Blackwell kernel lives in `tcforge.gemm.sm100` (compile-only).
Importing this package needs neither torch nor CUDA.
"""

from tcforge.gemm.api import matmul, prepare_plan
from tcforge.gemm.validate import Plan, plan_matmul
from tcforge.gemm.variants import AUTO, LADDER, SUPPORTED, SWEEP, VARIANTS, KernelConfig, Variant, resolve_variant

__all__ = [
    "AUTO",
    "LADDER",
    "SUPPORTED",
    "SWEEP",
    "VARIANTS",
    "KernelConfig",
    "Plan",
    "Variant",
    "matmul",
    "plan_matmul",
    "prepare_plan",
    "resolve_variant",
]
