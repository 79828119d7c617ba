"""`tcforge gemm`: list the ladder, build it for sm_90a (refusing spills), or run/check one variant on the GPU."""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor, as_completed

from tcforge.cliutil import ArgumentParser, Counter, check_tool_environment, require_subcommand
from tcforge.errors import TcforgeError
from tcforge.gemm.config import SUPPORTED
from tcforge.gemm.variants import LADDER, SWEEP, VARIANTS, resolve_variant


def _cmd_list(_: argparse.Namespace) -> int:
    print(f"{'name':<13}{'rung':>4}  {'tile':<10}{'BKbytes':>8}{'stages':>7}{'cluster':>8}  flags   what changed")
    for v in LADDER + SWEEP:
        c = v.config
        flags = "".join(
            ch
            for ch, on in (
                ("T", c.use_tma),
                ("R", c.setmaxnreg),
                ("S", c.tma_store),
                ("P", v.persistent),
                ("K", v.splitk_auto),
                ("H", c.hoist),
                ("2", c.pingpong),
                ("W", c.swap_ab),
            )
            if on
        )
        cluster = f"{c.cm}{'N' if c.cluster_n else ''}"  # CTAs per cluster, along M unless marked N
        print(f"{v.name:<13}{v.rung:>4}  {c.bm}x{c.bn:<6}{c.bk_bytes:>8}{c.stages:>7}{cluster:>8}  {flags:<8}{v.title}")
    print("flags: T TMA producer, R setmaxnreg, S TMA-store epilogue, P persistent, K split-K, H hoisted, 2 ping-pong, "
          "W swapped (C^T = B^T A^T); cluster: CTAs along the kernel's M sharing its B by multicast (swapped: the "
          "activations), N: along N sharing A")
    return 0


def _compile_all(builds: list, jobs: int, quiet: bool) -> list:
    """Compile in parallel (nvcc is single-threaded) with a progress bar on a terminal; results in input order."""
    results: list = [None] * len(builds)
    with Counter(len(builds), "compiling", "kernel", quiet=quiet) as bar, \
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(b.compile): i for i, b in enumerate(builds)}
        for f in as_completed(futures):
            results[futures[f]] = (builds[futures[f]], f.result())
            bar.update()
    return results


def _cmd_build(args: argparse.Namespace) -> int:
    from tcforge.gemm.build import all_builds

    names = [] if args.variant == "all" else [n.strip() for n in args.variant.split(",")]
    unknown = [n for n in names if n not in VARIANTS]  # never empty-handed: "" splits to [""], itself unknown
    if unknown:
        raise TcforgeError(f"unknown variant(s) {', '.join(map(repr, unknown))}; choose 'all' or from "
                           f"{', '.join(VARIANTS)}")
    if args.jobs < 1:
        raise TcforgeError(f"--jobs {args.jobs}: give at least 1")
    check_tool_environment()
    variants = [VARIANTS[n] for n in names] if names else None
    results = _compile_all(list(all_builds(variants)), args.jobs, args.quiet)
    spilled = serialized = 0
    bad = []
    for b, m in results:
        s = m.stats["tcf_gemm"]
        spilled += bool(s.spills)
        serialized += bool(m.wgmma_serialized)
        flag = "SPILLS" if s.spills else ("WGMMA SERIALIZED" if m.wgmma_serialized else "ok")
        line = (f"{b.tag():<56} regs {s.registers:>3} stack {s.stack_frame} spill {s.spill_stores}/{s.spill_loads} "
                f"{flag}")
        if args.verbose:
            print(line)
        elif flag != "ok":
            bad.append(line)
    for line in bad:  # without --verbose only the kernels that fail the check are named
        print(line)
    regs = [m.stats["tcf_gemm"].registers for _, m in results]
    print(f"{len(results)} cubins for sm_90a (registers {min(regs, default=0)}-{max(regs, default=0)}), {spilled} with "
          f"spills or a stack frame, {serialized} with wgmma serialised by ptxas (C7515 / C7511)"
          + ("" if args.verbose else "; --verbose for one line per kernel"))
    return 1 if spilled or serialized else 0


def _cmd_run(args: argparse.Namespace) -> int:
    from tcforge.gemm.check import check_one

    if args.dtype not in SUPPORTED:
        raise TcforgeError(f"--dtype must be one of {', '.join(SUPPORTED)}")
    out = args.out or SUPPORTED[args.dtype][0]
    if out not in SUPPORTED[args.dtype]:
        raise TcforgeError(f"--out {out} is not made from {args.dtype}: choose one of "
                           f"{', '.join(SUPPORTED[args.dtype])}")
    bad = [f"--{d} {v}" for d, v in (("m", args.m), ("n", args.n), ("k", args.k)) if v < 1]
    if bad:
        raise TcforgeError(f"{', '.join(bad)}: every dimension must be at least 1")
    resolve_variant(args.variant, args.m)  # an unknown name is refused here, before the GPU is needed
    if args.a_col_major and args.dtype == "e4m3":
        raise TcforgeError("--a-col-major is for 16-bit inputs: fp8 wgmma reads A K-major (a row-major)")
    check_tool_environment()
    r = check_one(args.variant, args.dtype, out, args.b_col_major or args.dtype == "e4m3", args.m, args.n, args.k,
                  a_kmajor=not args.a_col_major)
    print(json.dumps(r.as_dict(), indent=1))
    return 0 if r.ok else 1


def build_parser() -> ArgumentParser:
    """The argparse tree of `tcforge gemm` (list, build, run)."""
    ap = ArgumentParser(prog="tcforge gemm", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", metavar="{list,build,run}")
    sub.add_parser("list", help="the ladder's variants and what each changes")
    b = sub.add_parser("build", help="compile for sm_90a with ptxas -v; exit 1 on any spill or serialised wgmma")
    b.add_argument("--variant", default="all", help="'all' or a comma list of variant names")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel nvcc processes (default: CPUs)")
    b.add_argument("--verbose", action="store_true", help="one line per kernel (default: a summary and any failures)")
    b.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    r = sub.add_parser("run", help="run one variant on random data, check it against float64 and cuBLAS (GPU)")
    r.add_argument("--m", type=int, default=4096, help="rows of A and C (default 4096)")
    r.add_argument("--n", type=int, default=4096, help="columns of B and C (default 4096)")
    r.add_argument("--k", type=int, default=4096, help="the reduction length (default 4096)")
    r.add_argument("--dtype", default="fp16", help="fp16, bf16 or e4m3")
    r.add_argument("--out", default=None, help="fp32, fp16 or bf16 (default: the input's default)")
    r.add_argument("--variant", default="auto", help="a variant name from `tcforge gemm list`, or auto")
    r.add_argument("--b-col-major", action="store_true", help="store b column-major (K-major)")
    r.add_argument("--a-col-major", action="store_true", help="store a column-major (a transposed view; 16-bit)")
    return ap


def main(argv: list[str]) -> int:
    """Entry point of `tcforge gemm`."""
    ap = build_parser()
    args = ap.parse_args(argv)
    require_subcommand(ap, args.cmd)
    return {"list": _cmd_list, "build": _cmd_build, "run": _cmd_run}[args.cmd](args)
