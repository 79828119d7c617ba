"""`tcforge bench NAME`: runs one benchmark; each lives beside its subsystem and writes JSON under bench/results."""

from __future__ import annotations

import importlib

from tcforge.cliutil import UsageError, check_tool_environment

BENCHMARKS: dict[str, tuple[str, str]] = {
    "gemm": ("tcforge.gemm.bench", "the GEMM ladder at 4096^3 and a size sweep, interleaved with cuBLAS (GPU)"),
    "numerics": ("tcforge.numerics.bench", "mma emulation throughput per model on one CPU core"),
    "enc5": ("tcforge.layers.enc5.bench", "enc5 reference / native kernel time per frame"),
}


def usage() -> str:
    """The help of the `bench` group."""
    lines = ["usage: tcforge bench <name> [args...]", "", "benchmarks:"]
    lines += [f"  {name:<9} {help_}" for name, (_, help_) in BENCHMARKS.items()]
    return "\n".join(lines + ["", "`tcforge bench <name> --help` for a benchmark's options."])


def main(argv: list[str]) -> int:
    """Dispatch to the named benchmark's `main(argv)`; bare, print the help and exit 2 like every command group."""
    if argv and argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if not argv:
        print(usage())
        raise UsageError(f"a benchmark name is required: {', '.join(BENCHMARKS)}")
    name = argv[0]
    if name not in BENCHMARKS:
        raise UsageError(f"unknown benchmark {name!r}; valid: {', '.join(BENCHMARKS)}")
    if name in ("gemm", "enc5") and "--help" not in argv and "-h" not in argv:
        check_tool_environment()  # these compile kernels where a GPU is present
    return int(importlib.import_module(BENCHMARKS[name][0]).main(argv[1:]) or 0)
