"""`tcforge bench NAME`: runs one benchmark; each lives beside its subsystem and writes JSON under bench/results."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS: dict[str, tuple[str, str]] = {
    "gemm": ("tcforge.gemm.bench", "the GEMM ladder at 4096^3 and a size sweep, interleaved with cuBLAS (GPU)"),
    "numerics": ("tcforge.numerics.bench", "mma emulation throughput per model on one CPU core"),
    "enc5": ("tcforge.layers.enc5.bench", "enc5 reference / native kernel time per frame"),
}


def main(argv: list[str]) -> int:
    """Dispatch to the named benchmark's `main(argv)`."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: tcforge bench <name> [args...]\n\nbenchmarks:")
        for name, (_, help_) in BENCHMARKS.items():
            print(f"  {name:<9} {help_}")
        return 0
    name = argv[0]
    if name not in BENCHMARKS:
        print(f"tcforge bench: unknown benchmark {name!r}; valid: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    return int(importlib.import_module(BENCHMARKS[name][0]).main(argv[1:]) or 0)
