"""The `tcforge` command: dispatches `spec`, `extract`, `enc5`, `gemm`, `emulate` and `bench` to their subsystems, and
turns every user-caused failure into one line `tcforge <cmd>: error: ...` with exit status 2. `tcforge bench NAME`
runs one benchmark; each lives beside its subsystem and writes JSON under bench/results."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

# subcommand -> (module holding `main(argv) -> int`, or `module:function`, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "spec": ("tcforge.ptx.cli", "read a kernel's PTX and report its tensor-core phases"),
    "extract": ("tcforge.extract.cli", "list the fatbin entries of ELF/PE binaries, .cubin and .fatbin files; write "
                "their PTX"),
    "enc5": ("tcforge.layers.enc5.cli", "the enc5 Swin encoder layer: run it, print its assumptions and phase table"),
    "gemm": ("tcforge.gemm.cli", "the Hopper GEMM engine: run, check and list variants"),
    "bench": ("tcforge.cli:bench", "benchmarks (gemm, numerics, enc5) writing JSON under bench/results"),
    "emulate": ("tcforge.ptx.emulate.cli", "run a kernel's PTX on the CPU, bit for bit as a chosen GPU would"),
}


# optional imports a command may need (GPU paths, plots) -> how to get them
OPTIONAL_MODULES: dict[str, str] = {
    "torch": "GPU paths need PyTorch with CUDA: pip install 'tcforge[gpu]'",
    "cuda": "GPU paths need cuda-python: pip install 'tcforge[gpu]'",
    "triton": "timing uses triton.testing when present: pip install triton",
    "matplotlib": "plots need matplotlib: pip install 'tcforge[bench]'",
}


def _usage() -> str:
    lines = ["usage: tcforge [--help] [--version] <command> [args...]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "options:", "  -h, --help  show this help and exit", "  --version   print the version and exit",
              "", "`tcforge <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit status (2 for bad input, with a one-line message)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if not args:  # like every command group called bare: help, then one error line
        print(_usage())
        print("tcforge: error: a command is required", file=sys.stderr)
        return 2
    if args[0] == "--version":
        from tcforge import __version__

        print(f"tcforge {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"tcforge: error: unknown command {name!r}; valid commands: {', '.join(SUBCOMMANDS)}", file=sys.stderr)
        return 2
    command = _entry_point(SUBCOMMANDS[name][0])
    from tcforge.errors import TcforgeError

    try:
        with _one_line_usage_errors():
            return int(command(rest) or 0)
    except TcforgeError as exc:  # bad input: one clean line, never a traceback
        print(f"tcforge {name}: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if exc.name not in OPTIONAL_MODULES:
            raise
        print(f"tcforge {name}: error: this needs the optional package {exc.name!r}, which is not installed "
              f"({OPTIONAL_MODULES[exc.name]})", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `tcforge ... | head`: the reader left; end quietly, as binary utilities do
        _silence_stdout()
        return 0
    except OSError as exc:  # a path the user named: missing, a directory, not writable, a special file
        where = f" {exc.filename!r}" if exc.filename is not None else ""
        print(f"tcforge {name}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _entry_point(spec: str):
    """The function a `module` (its `main`) or `module:function` table entry names, its module imported."""
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function or "main")


# benchmark -> (module holding `main(argv) -> int`, or `module:function`, one-line help)
BENCHMARKS: dict[str, tuple[str, str]] = {
    "gemm": ("tcforge.gemm.bench", "the GEMM ladder at 4096^3 and a size sweep, interleaved with cuBLAS (GPU)"),
    "numerics": ("tcforge.numerics.bench", "mma emulation throughput per model on one CPU core"),
    "enc5": ("tcforge.layers.enc5.cli:bench", "enc5 reference / native kernel time per frame"),
}


def _bench_usage() -> str:
    """The help of the `bench` group."""
    lines = ["usage: tcforge bench <name> [args...]", "", "benchmarks:"]
    lines += [f"  {name:<9} {help_}" for name, (_, help_) in BENCHMARKS.items()]
    return "\n".join(lines + ["", "`tcforge bench <name> --help` for a benchmark's options."])


def bench(argv: list[str]) -> int:
    """`tcforge bench NAME`: run the named benchmark; bare, print the help and exit 2 like every command group."""
    from tcforge.cliutil import UsageError, check_tool_environment

    if argv and argv[0] in ("-h", "--help"):
        print(_bench_usage())
        return 0
    if not argv:
        print(_bench_usage())
        raise UsageError(f"a benchmark name is required: {', '.join(BENCHMARKS)}")
    name = argv[0]
    if name not in BENCHMARKS:
        raise UsageError(f"unknown benchmark {name!r}; valid: {', '.join(BENCHMARKS)}")
    if name in ("gemm", "enc5") and "--help" not in argv and "-h" not in argv:
        check_tool_environment()  # these compile kernels where a GPU is present
    return int(_entry_point(BENCHMARKS[name][0])(argv[1:]) or 0)


@contextlib.contextmanager
def _one_line_usage_errors():
    """Any argparse parser a command builds (tcforge.cliutil's or a plain one) reports a malformed command line as
    a UsageError — one line via the handler above — instead of printing its usage and exiting."""
    from tcforge.cliutil import UsageError

    def error(self: argparse.ArgumentParser, message: str):
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    saved = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = error  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.error = saved  # type: ignore[method-assign]


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush into the closed pipe raises nothing."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
