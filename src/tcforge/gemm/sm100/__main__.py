"""`python -m tcforge.gemm.sm100 [--arch A] [--stages N] [--emulate MxNxK [--dtype D]]`: compile the Blackwell
kernel and print its resources; with --emulate, also run its PTX in tcforge.ptx.emulate on small random integers and
say whether C is A @ B exactly."""

from __future__ import annotations

import argparse
import re
import sys
import time

import numpy as np

from tcforge.errors import TcforgeError

from . import compile as sm100_compile
from . import launch


def _shape(text: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if m is None:
        raise argparse.ArgumentTypeError(f"expected MxNxK (e.g. 256x256x128), got {text!r}")
    return int(m[1]), int(m[2]), int(m[3])


def main(argv: list[str] | None = None) -> int:
    """Compile gemm_sm100.cu, print ptxas resources and the tcgen05/TMA SASS opcodes; exit 1 on any spill (or, with
    --emulate, on an emulated C that is not A @ B)."""
    parser = argparse.ArgumentParser(prog="python -m tcforge.gemm.sm100", description=main.__doc__)
    parser.add_argument("--arch", default="sm_100a", choices=sm100_compile.SUPPORTED_ARCHS)
    parser.add_argument("--stages", type=int, default=launch.DEFAULT_STAGES)
    parser.add_argument("--emulate", type=_shape, metavar="MxNxK",
                        help="run the sm_100a PTX in the emulator at this shape (one CPU core; seconds per CTA pair)")
    parser.add_argument("--dtype", choices=sorted(launch.IN_DTYPES), default="float16")
    args = parser.parse_args(argv)
    try:
        report = sm100_compile.compile_sm100(args.arch, stages=args.stages)
        print(report.summary())
        bad = any(k.spills for k in report.kernels.values())
        if args.emulate is not None:
            bad |= not _emulate(args.emulate, args.dtype, args.stages)
    except TcforgeError as exc:
        print(f"python -m tcforge.gemm.sm100: error: {exc}", file=sys.stderr)
        return 2
    return 1 if bad else 0


def _emulate(shape: tuple[int, int, int], dtype: str, stages: int) -> bool:
    """Run the kernel's PTX on small integers (every sum exact); print the outcome; True when C is A @ B."""
    import ml_dtypes

    from .emulate import emulate_ptx, kernel_ptx

    m, n, k = shape
    launch.describe_launch(m, n, k, in_dtype=dtype, stages=stages)  # the shape's one-line errors first
    np_type = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (m, k)).astype(np_type)
    b = rng.integers(-3, 4, (k, n)).astype(np_type)
    stats: dict = {}
    t0 = time.perf_counter()
    c = emulate_ptx(a, b, stages, ptx=kernel_ptx(stages), stats=stats)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    same = bool(np.array_equal(c, want))
    print(f"emulated {dtype} {m}x{n}x{k} ({stats['ctas']} CTAs, {stats['warp_instructions']} warp instructions, "
          f"{time.perf_counter() - t0:.1f} s): C {'is' if same else 'is NOT'} A @ B exactly"
          + ("" if same else f" ({int((c != want).sum())} of {c.size} elements differ)"))
    return same


if __name__ == "__main__":
    sys.exit(main())
