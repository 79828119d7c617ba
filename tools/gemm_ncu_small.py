"""Launch sw32 (whole K), sw64 (two splits, reduced in the kernel) and cuBLAS three times each at M x 4096 x 4096
fp16 -> fp32 (M = 64 unless given), for an ncu profile of the small-M gap:

    ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats \\
        --kernel-name regex:'tcf_gemm|nvjet' --launch-count 9 -o small python3 tools/gemm_ncu_small.py [M]
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    m = int(argv[0]) if argv else 64
    a, b, _, _ = make_inputs(m, 4096, 4096, "fp16", True, 3)
    for v in ("sw32", "sw64"):
        prep = api.prepare_plan(plan_matmul(a, b, out_dtype=torch.float32, variant=v), a, b)
        for _ in range(3):
            prep()
    for _ in range(3):
        torch.mm(a, b, out_dtype=torch.float32)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
