"""Small GEMMs (512^3, 1024^3, 2048^3, small M): each variant checked, timed against cuBLAS in the same run and its
kernels' device time read with torch.profiler, so a slow shape shows whether the kernel or the launch costs the time.

    python3 -m bench.gemm_small [--variants auto,hoist,bm64,t128,t64,t64_sk] [--combos fp16:fp32,bf16:bf16,e4m3:bf16]
        [--shapes 512x512x512,1024x1024x1024] [--b-col] [--a-col] [--a-pad N] [--b-pad N] [--tag NAME]

A variant written NAME@fused or NAME@planes forces how its split launches reduce (inside the kernel, or through
fp32 planes and the reduction kernel); plain NAME lets the launcher choose (api.prepare_plan's split_mode="auto").
NAME#S forces S splits over K (NAME#1: none), e.g. sw16#4@fused. NAME@field=value+... is an experiment's build (the
variant with its kernel config overridden, variants.parse_spec: t64@cpa=3), checked against cuBLAS on the timed
inputs.
`--a-col` stores 16-bit a column-major (a transposed view, the kernel's MN-major A operand; cuBLAS gets the same view).

Writes bench/results/gemm_small[_TAG].json: per (shape, dtype pair, variant) the check (error vs float64 and its
bound), the CUDA-graph median time and TFLOP/s, cuBLAS's in the same run (fp8: both accumulation modes), the ratio,
and the per-call device time of each kernel either side launched (name, microseconds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tcforge.gemm.plan import LaunchOptions

SHAPES = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (1024, 4096, 4096), (256, 4096, 4096),
          (128, 4096, 4096), (64, 4096, 4096), (16, 4096, 4096), (64, 14336, 4096), (256, 14336, 4096)]


def kernel_times(fn: Any, calls: int = 20) -> list[dict[str, Any]]:
    """Device microseconds per call of each kernel `fn` launches (torch.profiler, `calls` plain launches)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    acc: dict[str, float] = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            acc[e.name[:120]] = acc.get(e.name[:120], 0.0) + e.device_time
    return [{"kernel": k, "us": v / calls} for k, v in sorted(acc.items(), key=lambda kv: -kv[1])]


def parse_variant(spec: str) -> tuple[str, str, int | None]:
    """A --variants entry NAME[@field=value+...][#S][@MODE]: the variant or experiment spec (variants.parse_spec), how
    a split launch reduces (MODE: auto, fused, planes, pair; default auto) and the forced split count (#S; None: the
    planner's)."""
    from tcforge.gemm.plan import SPLIT_MODES

    head, sep, tail = spec.rpartition("@")
    v, mode = (head, tail) if sep and tail in SPLIT_MODES else (spec, "auto")
    v, _, forced = v.partition("#")
    return v, mode, int(forced) if forced else None


def run(
    shapes: list[tuple[int, int, int]],
    combos: list[tuple[str, str]],
    variants: list[str],
    b_col: bool = False,
    a_col: bool = False,
    b_pad: int = 0,
    a_pad: int = 0,
    options: LaunchOptions | None = None,
) -> list[dict]:
    from tcforge.gemm import api
    from tcforge.gemm.bench import _check_against_cublas, _time_ms
    from tcforge.gemm.check import check_one, cublas, make_inputs
    from tcforge.gemm.validate import plan_matmul
    from tcforge.gemm.variants import plan_spec

    rows: list[dict[str, Any]] = []
    for m, n, k in shapes:
        for in_kind, out_kind in combos:
            kmajor = in_kind == "e4m3" or b_col  # 16-bit B column-major with --b-col (nn.Linear's weight.t())
            akmajor = not (a_col and in_kind != "e4m3")  # 16-bit a column-major with --a-col
            seed = int(time.time() * 1000) % 100000  # fresh inputs every run
            a, b, sa, sb = make_inputs(m, n, k, in_kind, kmajor, seed, akmajor, b_pad=b_pad, a_pad=a_pad)
            od = api.torch_dtype(out_kind)
            flop = 2.0 * m * n * k
            peers = {"cublas": partial(cublas, a, b, sa, sb, out_kind)}
            if kmajor:
                peers["cublas_fast"] = partial(cublas, a, b, sa, sb, out_kind, fast_accum=True)
            peer_ms = {p: _time_ms(f, True) for p, f in peers.items()}
            peer_k = {p: kernel_times(f) for p, f in peers.items()}
            for spec in variants:
                v, mode, nsplit = parse_variant(spec)
                build = "@" in v  # a registered variant with config overrides (variants.plan_spec): an experiment
                if build:  # checked below, on the timed inputs, against cuBLAS
                    chk = SimpleNamespace(ok=True, rel_err=None, tol=None, error=None)
                else:
                    chk = check_one(v, in_kind, out_kind, kmajor, m, n, k, seed=seed + 1, split_mode=mode,
                                    a_kmajor=akmajor, splits=nsplit)
                row: dict[str, Any] = {"m": m, "n": n, "k": k, "in": in_kind, "out": out_kind, "variant": spec,
                                       "split_mode": mode, "b_kmajor": kmajor, "a_kmajor": akmajor, "b_pad": b_pad,
                                       "a_pad": a_pad, "ok": chk.ok,
                                       "rel_err": chk.rel_err, "tol": chk.tol, "error": chk.error}
                try:
                    plan = (plan_spec(a, b, v, out_dtype=od, scale_a=sa, scale_b=sb) if build else
                            plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=v))
                    prep = api.prepare_plan(plan, a, b, sa, sb, split_mode=mode, splits=nsplit, options=options)
                    row["ran"] = prep.plan.variant.name
                    row["grid"] = prep.grid[0]
                    row["splits"] = prep.splits
                    row["sk_units"] = prep.sk_units
                    if b_pad or a_pad or build:  # (check_one ran on compact inputs, or not at all): these ones
                        row.update(_check_against_cublas(prep, v, a, b, sa, sb, in_kind, out_kind))
                    ms = _time_ms(prep, True)
                    row.update(ms=ms, tflops=flop / ms / 1e9, kernels=kernel_times(prep))
                except Exception as exc:  # reported per row: one failing variant must not hide the others
                    row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                    row["ok"] = row["ok"] and not build
                    ms = float("nan")
                for p, pms in peer_ms.items():
                    row[f"{p}_ms"] = pms
                    row[f"{p}_tflops"] = flop / pms / 1e9
                    row[f"ratio_{p}"] = pms / ms
                    row[f"{p}_kernels"] = peer_k[p]
                rows.append(row)
                ks = " + ".join(f"{x['kernel'][:24]} {x['us']:.1f}" for x in row.get("kernels", []))
                cb = " + ".join(f"{x['kernel'][:40]} {x['us']:.1f}" for x in peer_k["cublas"])
                print(f"{m}x{n}x{k} {in_kind}->{out_kind} {spec:8s} ok={chk.ok} "
                      f"{row.get('tflops', float('nan')):7.1f} TF/s x{row.get('ratio_cublas', float('nan')):.2f} "
                      f"(cuBLAS {row['cublas_tflops']:.1f}) grid {row.get('grid')} split {row.get('splits')} "
                      f"sk {row.get('sk_units')} | ours: {ks} | cuBLAS: {cb}", flush=True)
    return rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="auto,hoist,bm64,t128,t64,t64_sk")
    ap.add_argument("--combos", default="fp16:fp32,bf16:bf16,e4m3:bf16")
    ap.add_argument("--shapes", default="", help="comma list of MxNxK (default: the small set)")
    ap.add_argument("--tag", default="")
    ap.add_argument("--b-col", action="store_true", help="16-bit B column-major too (fp8 B always is)")
    ap.add_argument("--a-col", action="store_true", help="16-bit a column-major (fp8 a stays row-major)")
    ap.add_argument("--b-pad", type=int, default=0,
                    help="B's leading dimension this many elements longer than its rows (a strided view; cuBLAS gets "
                         "the same), to probe the stride's mapping onto memory channels")
    ap.add_argument("--a-pad", type=int, default=0,
                    help="a's leading dimension this many elements longer (as --b-pad), e.g. to give its rows the "
                         "128-byte alignment a contiguous K = 1000 lacks")
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--no-pdl", action="store_true", help="launch without programmatic dependent launch (PDL)")
    ap.add_argument("--l2-promotion", type=int, default=None, choices=(0, 1, 2, 3),
                    help="L2 promotion of every operand tensor map (0 none, 1 64B, 2 128B, 3 256B; default: by tile, "
                         "plan.l2_promotion)")
    ap.add_argument("--cluster-policy", default="default", choices=("default", "spread", "load_balancing"),
                    help="cluster scheduling-policy preference of our cluster launches (cuBLAS's are its own)")
    args = ap.parse_args(argv)
    if args.b_pad < 0 or args.a_pad < 0:
        ap.error(f"--a-pad and --b-pad must be >= 0, got {args.a_pad} and {args.b_pad}")
    from tcforge.runtime.driver import CLUSTER_POLICIES

    options = LaunchOptions(l2_promotion=args.l2_promotion, cluster_policy=CLUSTER_POLICIES[args.cluster_policy])
    options = replace(options, pdl=options.pdl and not args.no_pdl)
    shapes = SHAPES if not args.shapes else [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    combos = [tuple(c.split(":")) for c in args.combos.split(",")]
    t0 = time.time()
    rows = run(shapes, combos, args.variants.split(","), args.b_col, args.a_col,  # type: ignore[arg-type]
               b_pad=args.b_pad, a_pad=args.a_pad, options=options)
    import torch

    path = Path(args.out) / f"gemm_small{'_' + args.tag if args.tag else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "timing": "do_bench_cudagraph median",
            "pdl": options.pdl, "l2_promotion": options.l2_promotion, "cluster_policy": args.cluster_policy,
            "b_pad": args.b_pad, "a_pad": args.a_pad, "seconds": time.time() - t0}
    path.write_text(json.dumps({**meta, "rows": rows}, indent=1))
    print(f"wrote {path} ({len(rows)} rows, {sum(not r['ok'] for r in rows)} failed checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
