"""`python -m tcforge.gemm.sm100 [--arch A] [--stages N]`: compile the Blackwell kernel and print its resources."""

from __future__ import annotations

import argparse
import sys

from . import compile as sm100_compile
from . import launch


def main(argv: list[str] | None = None) -> int:
    """Compile gemm_sm100.cu, print ptxas resources and the tcgen05/TMA SASS opcodes; exit 1 on any spill."""
    parser = argparse.ArgumentParser(prog="python -m tcforge.gemm.sm100", description=main.__doc__)
    parser.add_argument("--arch", default="sm_100a", choices=sm100_compile.SUPPORTED_ARCHS)
    parser.add_argument("--stages", type=int, default=launch.DEFAULT_STAGES)
    args = parser.parse_args(argv)
    report = sm100_compile.compile_sm100(args.arch, stages=args.stages)
    print(report.summary())
    return 1 if any(k.spills for k in report.kernels.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
