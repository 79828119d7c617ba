"""tcforge.gemm: the Hopper (sm_90a) GEMM engine, the write-up's tcgen05 phases rebuilt with TMA + wgmma as a ladder.

`matmul(a, b, *, out_dtype=None, scale_a=None, scale_b=None, variant="auto", options=None)` on torch CUDA tensors:
validate (validate.py) -> plan (plan.py: auto.py's pick scored by model.py) -> build (build.py) -> launch (api.py).
Every rung of the ladder stays selectable by name (see `LADDER`). The Blackwell kernel lives in `tcforge.gemm.sm100`
(compile-only). Importing this package needs neither torch nor CUDA.
"""

from tcforge.gemm.api import matmul, prepare_plan
from tcforge.gemm.config import SUPPORTED, KernelConfig
from tcforge.gemm.plan import Device, LaunchOptions, LaunchPlan, plan_launch
from tcforge.gemm.validate import Plan, plan_matmul
from tcforge.gemm.variants import AUTO, LADDER, SWEEP, VARIANTS, Variant, resolve_variant

__all__ = [
    "AUTO",
    "LADDER",
    "SUPPORTED",
    "SWEEP",
    "VARIANTS",
    "Device",
    "KernelConfig",
    "LaunchOptions",
    "LaunchPlan",
    "Plan",
    "Variant",
    "matmul",
    "plan_launch",
    "plan_matmul",
    "prepare_plan",
    "resolve_variant",
]
