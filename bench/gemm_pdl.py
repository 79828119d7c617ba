"""Programmatic dependent launch (PDL): tcforge's GEMM with and without it against cuBLAS, in one run.

    python3 bench/gemm_pdl.py [--shapes 64x4096x4096,4096x4096x4096] [--combos fp16:fp32,bf16:bf16,e4m3:bf16]
        [--variants auto] [--b-col] [--rounds 2] [--tag NAME]

A variant written NAME@fused / NAME@planes / NAME@pair forces how its split launches reduce.

Per (shape, dtype pair, variant): the output with PDL equal bit for bit to the one without (fresh random inputs,
outputs poisoned first) and its error against cuBLAS; then `--rounds` rounds of CUDA-graph medians, each round
timing ours without PDL, ours with it and cuBLAS back to back; then, from torch.profiler on a graph replay of 20
back-to-back calls, the device time per kernel and the gap between one kernel's end and the next one's start (a
negative gap: the next kernel started before the previous ended, i.e. an overlapped launch) for all three.
Writes bench/results/gemm_pdl[_TAG].json (or under --out).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (512, 512, 512),
          (1024, 1024, 1024), (4096, 4096, 4096)]


def graph_trace(fn: Any, calls: int = 20) -> dict[str, Any]:
    """Replay a CUDA graph of `calls` back-to-back calls of `fn` under torch.profiler: per-kernel device time and the
    gaps between consecutive kernels (microseconds, medians; negative: overlapped)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    kern = sorted(
        ((e.time_range.start, e.time_range.end, e.name[:100]) for e in prof.events()
         if e.device_type == torch.autograd.DeviceType.CUDA and "memcpy" not in e.name.lower()
         and "memset" not in e.name.lower()),
        key=lambda t: t[0],
    )
    if len(kern) < 2:
        return {"kernels": len(kern)}
    gaps = [kern[i + 1][0] - kern[i][1] for i in range(len(kern) - 1)]
    per_call = (kern[-1][1] - kern[0][0]) / calls
    durations: dict[str, list[float]] = {}
    for s, e, name in kern:
        durations.setdefault(name, []).append(e - s)
    return {
        "kernels": len(kern),
        "per_call_us": per_call,
        "gap_us_median": statistics.median(gaps),
        "gap_us_min": min(gaps),
        "overlapped": sum(g < 0 for g in gaps),
        "kernel_us": {k: statistics.median(v) for k, v in durations.items()},
    }


def run(
    shapes: list[tuple[int, int, int]],
    combos: list[tuple[str, str]],
    variants: list[str],
    b_col: bool,
    rounds: int,
    splits: int | None = None,
) -> list[dict[str, Any]]:
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.bench import _time_ms
    from tcforge.gemm.check import cublas, make_inputs, rel_err
    from tcforge.gemm.validate import plan_matmul

    rows = []
    for m, n, k in shapes:
        for in_kind, out_kind in combos:
            for variant in variants:
                od = api.torch_dtype(out_kind)
                seed = int(time.time_ns() % 1_000_003)
                a, b, sa, sb = make_inputs(m, n, k, in_kind, b_col or in_kind == "e4m3", seed=seed)
                row: dict[str, Any] = {"m": m, "n": n, "k": k, "in": in_kind, "out": out_kind, "variant": variant,
                                       "b_col": b_col or in_kind == "e4m3", "seed": seed}
                try:
                    name, _, mode = variant.partition("@")  # NAME@fused / NAME@planes / NAME@pair
                    plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=name)
                    row["ran"] = api.refine_auto(plan, api.multiprocessor_count(plan.device_index)).variant.name
                    prepared = api.prepare_plan(plan, a, b, sa, sb, split_mode=mode or "auto", splits=splits)
                    row["splits"] = prepared.splits
                    row["pdl_policy"] = prepared.pdl  # what matmul would launch with (variants.pdl_pays)
                    outs = []
                    for pdl in (False, True):
                        prepared.c.fill_(float("nan"))
                        prepared.pdl = pdl
                        for _ in range(3):  # back to back, so the PDL launch overlaps the previous one
                            prepared()
                        torch.cuda.synchronize()
                        outs.append(prepared.result().clone())
                    peer = partial(cublas, a, b, sa, sb, out_kind)
                    peer_fast = partial(cublas, a, b, sa, sb, out_kind, fast_accum=True)
                    ref = peer()
                    row["bits_equal_pdl"] = bool(torch.equal(outs[0], outs[1]))
                    row["nan_free"] = not bool(torch.isnan(outs[1].float()).any())
                    row["rel_err_vs_cublas"] = rel_err(outs[1], ref.double())
                    flop = 2.0 * m * n * k
                    timings = []
                    for _ in range(rounds):
                        t: dict[str, float] = {}
                        prepared.pdl = False
                        t["off_ms"] = _time_ms(prepared, True)
                        prepared.pdl = True
                        t["pdl_ms"] = _time_ms(prepared, True)
                        t["cublas_ms"] = _time_ms(peer, True)
                        if in_kind == "e4m3":
                            t["cublas_fast_ms"] = _time_ms(peer_fast, True)
                        t["ratio_off"] = t["cublas_ms"] / t["off_ms"]
                        t["ratio_pdl"] = t["cublas_ms"] / t["pdl_ms"]
                        if "cublas_fast_ms" in t:
                            t["ratio_pdl_fast"] = t["cublas_fast_ms"] / t["pdl_ms"]
                        t["tflops_pdl"] = flop / t["pdl_ms"] / 1e9
                        timings.append(t)
                    row["timings"] = timings
                    prepared.pdl = False
                    row["trace_off"] = graph_trace(prepared)
                    prepared.pdl = True
                    row["trace_pdl"] = graph_trace(prepared)
                    row["trace_cublas"] = graph_trace(peer)
                    if in_kind == "e4m3":
                        row["trace_cublas_fast"] = graph_trace(peer_fast)
                except Exception as exc:  # one failing shape must not lose the rest of the run
                    row["error"] = f"{type(exc).__name__}: {exc}"[:400]
                rows.append(row)
                ts = row.get("timings", [])
                us = " ".join(
                    f"[off {1e3 * t['off_ms']:.1f} pdl {1e3 * t['pdl_ms']:.1f} cublas {1e3 * t['cublas_ms']:.1f} us:"
                    f" x{t['ratio_off']:.3f} -> x{t['ratio_pdl']:.3f}"
                    + (f", fast x{t['ratio_pdl_fast']:.3f}" if "ratio_pdl_fast" in t else "") + "]"
                    for t in ts)
                gaps = " ".join(f"{key[6:]} gap {row[key].get('gap_us_median', float('nan')):.2f}"
                                for key in ("trace_off", "trace_pdl", "trace_cublas") if key in row)
                print(f"{m}x{n}x{k} {in_kind}->{out_kind} {variant} ({row.get('ran', '?')}/{row.get('splits', '?')}): "
                      f"bits {'=' if row.get('bits_equal_pdl') else '!='} {us} {gaps} {row.get('error', '')}",
                      flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=",".join(f"{m}x{n}x{k}" for m, n, k in SHAPES))
    ap.add_argument("--combos", default="fp16:fp32,bf16:bf16,e4m3:bf16")
    ap.add_argument("--variants", default="auto")
    ap.add_argument("--b-col", action="store_true", help="16-bit B column-major (fp8 B is always)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--splits", type=int, default=None, help="force this split-K factor (default: the launcher's)")
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="bench/results")
    args = ap.parse_args(argv)
    try:
        shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
        combos = [tuple(c.split(":")) for c in args.combos.split(",")]
        if any(len(s) != 3 for s in shapes) or any(len(c) != 2 for c in combos):
            raise ValueError
    except ValueError:
        print("--shapes takes MxNxK,... and --combos IN:OUT,...", file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("gemm_pdl needs a CUDA GPU (sm_90a)", file=sys.stderr)
        return 2
    rows = run(shapes, combos, args.variants.split(","), args.b_col, args.rounds, args.splits)  # type: ignore[arg-type]
    out = Path(args.out) / f"gemm_pdl{'_' + args.tag if args.tag else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                               "timing": "do_bench_cudagraph median", "rows": rows}, indent=1))
    print(f"wrote {out}")
    return 0 if all("error" not in r and r.get("bits_equal_pdl") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
