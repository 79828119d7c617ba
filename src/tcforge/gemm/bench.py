"""`tcforge bench gemm`: the ladder at one size per dtype pair interleaved with cuBLAS, then a size sweep of the best.

Every launch is first checked against cuBLAS on the same fresh random inputs (output poisoned with NaN, relative
difference within `peer_tolerance`; fp8 against cuBLAS's mode of accumulation) and is not timed if it disagrees.
Timings are medians of CUDA-event timings (`triton.testing.do_bench_cudagraph` over a captured launch, the same for
cuBLAS, so launch overhead is equal); beside them, every row has what a user's Python loop sees: host µs per call and
eager wall µs per call of `tcforge.gemm.matmul` (the launch cache, a fresh C per call) and of the same cuBLAS call
(`eager_us`, `ratio_eager`). JSON goes to bench/results/gemm*.json, PNGs of the ladder and sweep beside it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from tcforge.cliutil import ArgumentParser, output_dir
from tcforge.errors import DeviceUnavailableError
from tcforge.gemm.config import LADDER_COMBOS, SUPPORTED
from tcforge.gemm.plan import LaunchOptions
from tcforge.gemm.variants import LADDER, SWEEP, resolve_variant

PEAK = {"fp16": 989.0, "bf16": 989.0, "e4m3": 1979.0}  # dense TFLOP/s, H100/H200 SXM datasheet
SQUARES = [512, 1024, 2048, 4096, 8192, 16384]
LLM = [(4096, 14336, 4096), (4096, 4096, 14336), (8192, 14336, 8192), (16384, 4096, 4096)]
SMALL_M = ([(m, 4096, 4096) for m in (16, 32, 64, 128, 256)] + [(m, 14336, 4096) for m in (16, 64, 256)]
           + [(m, 11008, 4096) for m in (16, 96, 128)])
# sizes between the powers of two, where 128x256 tiles fill their rounds worst (t192 and stream-K's cases)
MID = [(s, s, s) for s in (1536, 2560, 3072, 5120, 6144)] + [(1280, 4096, 4096)]
SWEEP_COMBOS = [("fp16", "fp32"), ("bf16", "bf16"), ("e4m3", "bf16")]
# shapes whose last round of 66 cluster tiles is partly empty (stream-K's case): units % 66 = 58, 48, 34, 38, 58, 34, 10
TAIL = [(4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192), (4096, 14336, 4096), (4096, 4096, 14336),
        (16384, 4096, 4096), (8192, 14336, 8192)]


def _event_median_us(run: Any, calls: int, times: int) -> float:
    """Median µs per call over `times` timings of `run()` (which makes `calls` calls) between two CUDA events."""
    import torch

    out = []
    for _ in range(times):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e3 / calls)
    return float(statistics.median(out))


def _event_median_ms(fn: Any, reps: int = 50) -> float:
    """Fallback when triton is absent: median of per-call CUDA-event timings after a warm-up."""
    for _ in range(5):
        fn()
    return _event_median_us(fn, 1, reps) / 1e3


def _time_ms(fn: Any, graph: bool) -> float:
    try:
        import triton.testing as tt
    except ImportError:
        return _event_median_ms(fn)
    if graph:
        return float(tt.do_bench_cudagraph(fn, rep=60, return_mode="median"))
    return float(tt.do_bench(fn, warmup=20, rep=80, return_mode="median"))


def graph_us(fn: Any, per_graph: int = 20, replays: int = 10, warmup: int = 3, fallback: bool = False) -> float:
    """Median µs per call of `fn` with Python's launch cost left out: `warmup` calls on a side stream, `per_graph` calls
    captured in one CUDA graph there, `replays` replays timed with CUDA events. With `fallback`, where capture fails
    (a model that syncs), `replays` single calls are timed instead and a line says so."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            for _ in range(per_graph):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        calls, run = per_graph, graph.replay
    except Exception as exc:
        if not fallback:
            raise
        print(f"graph capture failed ({type(exc).__name__}); timing single launches", flush=True)
        calls, run = 1, fn
    return _event_median_us(run, calls, replays)


def eager_runs(fns: list[Any], calls: int, runs: int = 5, spread_s: float = 0.0) -> list[list[tuple[float, float]]]:
    """What a Python loop of `calls` calls sees, per callable and run: (host µs per call to enqueue them, wall µs per
    call until the GPU has finished them). The callables' runs alternate (the order flips each run), so a slow phase
    of the host falls on every side; each is warmed by one call first. `spread_s` > 0 spaces the runs over that many
    seconds, so that they meet each of the host's speeds (its phases last seconds)."""
    import torch

    for fn in fns:
        fn()
    out: list[list[tuple[float, float]]] = [[] for _ in fns]
    for r in range(runs):
        if spread_s > 0 and r:
            time.sleep(spread_s / max(1, runs - 1))
        for i in range(len(fns)) if r % 2 == 0 else reversed(range(len(fns))):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fns[i]()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            out[i].append((round((t1 - t0) / calls * 1e6, 2), round((time.perf_counter() - t0) / calls * 1e6, 2)))
    return out


def run_figures(runs: list[tuple[float, float]]) -> tuple[float, float, float]:
    """One callable's `eager_runs`: the fewest host µs and wall µs per call (the host at its fast speed) and the
    median host µs (its speed as it comes)."""
    return min(h for h, _ in runs), min(w for _, w in runs), round(statistics.median(h for h, _ in runs), 2)


def eager_us(fns: list[Any], calls: int, runs: int = 5, spread_s: float = 0.0) -> list[tuple[float, float]]:
    """Per callable, the fewest host and wall µs per call over `eager_runs`' runs."""
    return [run_figures(r)[:2] for r in eager_runs(fns, calls, runs, spread_s)]


def eager_row(sides: dict[str, Any], flop: float, spread_s: float = 0.0) -> dict[str, Any]:
    """A row's eager figures, per side (key prefix: "" tcforge, "cublas_", ...): `host_us` and `eager_us` (the fewest
    host and wall µs per call of its runs) and the cuBLAS / tcforge wall ratio `ratio_eager`. Five runs back to back,
    or, with `spread_s`, nine spread over that many seconds with each side's median host µs (`host_median_us`)."""
    row: dict[str, Any] = {}
    try:
        runs = eager_runs(list(sides.values()), eager_calls(flop), 9 if spread_s > 0 else 5, spread_s)
    except Exception as exc:
        return {"eager_error": f"{type(exc).__name__}: {exc}"[:300]}
    for side, r in zip(sides, runs, strict=True):
        host, wall, median = run_figures(r)
        row[f"{side}host_us"], row[f"{side}eager_us"] = host, wall
        if spread_s > 0:
            row[f"{side}host_median_us"] = median
    if "eager_us" in row and "cublas_eager_us" in row:
        row["ratio_eager"] = row["cublas_eager_us"] / row["eager_us"]
    return row


def eager_calls(flop: float) -> int:
    """Calls per eager timing: about 20 of a 1 TFLOP problem, at least 20 and at most 200 (the launch queue never
    fills)."""
    return max(20, min(200, int(4e13 / flop)))


def peer_tolerance(in_kind: str, out_kind: str) -> float:
    """Largest relative (Frobenius) difference from cuBLAS's output accepted before timing. 16-bit inputs: two fp32
    accumulations in other orders, rounded to the output (16-bit out ~1e-3; fp32 out ~1e-6). fp8 inputs: the tensor
    core's fast accumulation is coarser than fp32 (1.3e-3 to 2.9e-3 from float64 for fp32 out, docs/gemm.md "fp8:
    which cuBLAS is the peer"), so a K order of its own (split-K, stream-K: 4.4e-4 measured) differs by that much."""
    return 1e-4 if out_kind == "fp32" and in_kind != "e4m3" else 1e-2


def _check_against_cublas(prepared: Any, variant: str, a: Any, b: Any, sa: Any, sb: Any, in_kind: str,
                          out_kind: str) -> dict[str, Any]:
    """Correct first: one launch with its output poisoned (NaN), compared with cuBLAS in the same accumulation
    mode (fp8: use_fast_accum=True unless the variant promotes); raises ValueError if it disagrees."""
    from tcforge.gemm.check import cublas, fast_accum_peer, poisoned_result, rel_err

    fast = fast_accum_peer(variant, in_kind)
    out = poisoned_result(prepared)
    ref = cublas(a, b, sa, sb, out_kind, fast_accum=fast).double()
    err = rel_err(out, ref)
    if not err <= peer_tolerance(in_kind, out_kind):
        raise ValueError(f"{variant} differs from cuBLAS by {err:.2e} (relative): not timed")
    return {"check_rel_err_vs_cublas": err, "check_peer": "cublas_fast" if fast else "cublas"}


def _bench_pair(variant: str, combo: tuple[str, str], m: int, n: int, k: int, graph: bool,
                options: LaunchOptions | None = None, spread_s: float = 0.0) -> dict[str, Any]:
    """Check one variant against cuBLAS on fresh random inputs, then time both back to back on them (the eager runs
    spread over `spread_s` seconds: `eager_row`)."""
    from tcforge.gemm import api
    from tcforge.gemm.check import cublas, make_inputs
    from tcforge.gemm.validate import plan_matmul

    in_kind, out_kind = combo
    a, b, sa, sb = make_inputs(m, n, k, in_kind, in_kind == "e4m3", seed=m * 31 + n * 7 + k)
    od = api.torch_dtype(out_kind)
    flop = 2.0 * m * n * k
    row: dict[str, Any] = {"variant": variant, "in": in_kind, "out": out_kind, "m": m, "n": n, "k": k}
    try:
        plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant)
        prepared = api.prepare_plan(plan, a, b, sa, sb, options=options)
        row["ran"] = prepared.plan.variant.name
        row.update(_check_against_cublas(prepared, row["ran"], a, b, sa, sb, in_kind, out_kind))
        t_ours = _time_ms(prepared, graph)
        user = None if options == LaunchOptions() else options  # the defaults, as a user passes them: None
        # what a user's loop sees: tcforge.gemm.matmul called eagerly (a fresh C per call, the launch cache)
        eager = {"": partial(api.matmul, a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant, options=user)}
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        t_ours, eager = float("nan"), {}
    try:
        t_cublas = _time_ms(lambda: cublas(a, b, sa, sb, out_kind), graph)
        eager["cublas_"] = partial(cublas, a, b, sa, sb, out_kind)
    except Exception as exc:
        row["cublas_error"] = f"{type(exc).__name__}: {exc}"[:300]
        t_cublas = float("nan")
    if in_kind == "e4m3":  # cuBLAS without fp32 promotion: the same accumulation as ours
        try:
            fast = partial(cublas, a, b, sa, sb, out_kind, fast_accum=True)
            t_fast = _time_ms(fast, graph)
            row.update(cublas_fast_ms=t_fast, cublas_fast_tflops=flop / t_fast / 1e9, ratio_fast=t_fast / t_ours)
            eager["cublas_fast_"] = fast
        except Exception as exc:
            row["cublas_fast_error"] = f"{type(exc).__name__}: {exc}"[:300]
    row.update(eager_row(eager, flop, spread_s))
    row.update(
        ms=t_ours,
        cublas_ms=t_cublas,
        tflops=flop / t_ours / 1e9,
        cublas_tflops=flop / t_cublas / 1e9,
        ratio=t_cublas / t_ours,
        pct_peak=100.0 * flop / t_ours / 1e9 / PEAK[in_kind],
    )
    return row


def _fast_note(r: dict[str, Any]) -> str:
    """fp8 rows: cuBLAS without fp32 promotion (use_fast_accum=True), the like-for-like peer."""
    if "ratio_fast" not in r:
        return ""
    return f"  (cuBLAS fast-accum {r['cublas_fast_tflops']:7.1f}, x{r['ratio_fast']:.3f})"


def _eager_note(r: dict[str, Any]) -> str:
    """Eager calls from Python: wall µs per call, ours and cuBLAS's, and their ratio."""
    if "ratio_eager" not in r:
        return ""
    return f"  eager {r['eager_us']:.1f} vs {r['cublas_eager_us']:.1f} us x{r['ratio_eager']:.3f}"


def run_ladder(size: int, combos: list[tuple[str, str]], names: list[str], graph: bool,
               options: LaunchOptions | None = None, spread_s: float = 0.0) -> list[dict[str, Any]]:
    """Every named variant at size^3 for each dtype pair, each interleaved with a cuBLAS timing."""
    rows = []
    for combo in combos:
        for name in names:
            r = _bench_pair(name, combo, size, size, size, graph, options, spread_s)
            rows.append(r)
            print(
                f"  ladder {combo[0]}->{combo[1]} {name:<11} {r['tflops']:7.1f} vs cuBLAS {r['cublas_tflops']:7.1f}"
                f"  x{r['ratio']:.3f}{_fast_note(r)}{_eager_note(r)}  {r.get('error', '')}",
                flush=True,
            )
    return rows


def run_teaching_ladder(size: int, out_kinds: list[str], graph: bool, spread_s: float = 0.0) -> list[dict[str, Any]]:
    """The teaching ladder (tcforge.gemm.ladder: one small kernel per rung, fp16 inputs) at size^3, each rung checked
    against cuBLAS on fresh random inputs with its output poisoned, then timed interleaved with cuBLAS."""
    import torch

    from tcforge.gemm import ladder
    from tcforge.gemm.check import cublas, rel_err

    rows = []
    for out_kind in out_kinds:
        od = {"fp32": torch.float32, "bf16": torch.bfloat16}[out_kind]
        for name, r in ladder.RUNGS.items():
            a = torch.randn(size, size, device="cuda", dtype=torch.float16)
            b_nk = torch.randn(size, size, device="cuda", dtype=torch.float16)
            out = torch.full((size, size), float("nan"), device="cuda", dtype=od)
            row: dict[str, Any] = {"rung": r.number, "variant": name, "in": "fp16", "out": out_kind, "m": size,
                                   "n": size, "k": size, "adds": r.adds}
            try:
                run = ladder.prepare(name, a, b_nk, out)
                run()
                ref = cublas(a, b_nk.t(), None, None, out_kind)
                err = rel_err(out, ref.double())
                if not err <= peer_tolerance("fp16", out_kind):
                    raise ValueError(f"rung {name} differs from cuBLAS by {err:.2e} (relative): not timed")
                peer = partial(cublas, a, b_nk.t(), None, None, out_kind)
                t_ours, t_cublas = _time_ms(run, graph), _time_ms(peer, graph)
                flop = 2.0 * size**3
                row.update(check_rel_err_vs_cublas=err, ms=t_ours, cublas_ms=t_cublas, tflops=flop / t_ours / 1e9,
                           cublas_tflops=flop / t_cublas / 1e9, ratio=t_cublas / t_ours)
                row.update(eager_row({"": run, "cublas_": peer}, flop, spread_s))
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            rows.append(row)
            print(f"  rung {r.number} {name:<11} fp16->{out_kind} {row.get('tflops', float('nan')):7.1f} vs cuBLAS "
                  f"{row.get('cublas_tflops', float('nan')):7.1f}  x{row.get('ratio', float('nan')):.3f}"
                  f"{_eager_note(row)}  {row.get('error', '')}", flush=True)
    return rows


def best_variant(rows: list[dict[str, Any]], combo: tuple[str, str]) -> str:
    """The fastest variant of the ladder for a dtype pair (by ratio to its adjacent cuBLAS timing)."""
    cand = [r for r in rows if (r["in"], r["out"]) == combo and r["ratio"] == r["ratio"]]
    return max(cand, key=lambda r: r["ratio"])["variant"] if cand else "auto"


def run_sweep(
    best: dict[tuple[str, str], list[str]], shapes: list[tuple[int, int, int]], graph: bool,
    options: LaunchOptions | None = None, spread_s: float = 0.0,
) -> list[dict[str, Any]]:
    """The chosen variants of each dtype pair against cuBLAS over the sweep's shapes."""
    rows = []
    for combo, names in best.items():
        for name, (m, n, k) in ((nm, sh) for nm in names for sh in shapes):
            r = _bench_pair(name, combo, m, n, k, graph, options, spread_s)
            rows.append(r)
            print(
                f"  sweep {combo[0]}->{combo[1]} {name} {m}x{n}x{k}: {r['tflops']:7.1f} vs {r['cublas_tflops']:7.1f}"
                f"  x{r['ratio']:.3f}{_fast_note(r)}{_eager_note(r)}  ({r.get('ran', '?')})",
                flush=True,
            )
    return rows


def _save(fig: Any, path: Path) -> Path:
    """Lay a figure out, write it to `path` (110 dpi) and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot(ladder: list[dict[str, Any]], sweep: list[dict[str, Any]], out_dir: Path, tag: str = "") -> list[Path]:
    """PNGs like the write-up's Fig. 1 (ladder bars with cuBLAS and peak lines) and the sweep's ratios."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    combos = sorted({(r["in"], r["out"]) for r in ladder})
    if combos:
        fig, axes = plt.subplots(1, len(combos), figsize=(5 * len(combos), 4.5), squeeze=False)
        for ax, combo in zip(axes[0], combos, strict=False):
            rs = [r for r in ladder if (r["in"], r["out"]) == combo]
            ax.bar(range(len(rs)), [r["tflops"] for r in rs], color="#4477aa")
            cub = sorted(r["cublas_tflops"] for r in rs)[len(rs) // 2]
            ax.axhline(cub, color="#cc3311", label=f"cuBLAS {cub:.0f}")
            ax.axhline(PEAK[combo[0]], color="gray", ls="--", label=f"peak {PEAK[combo[0]]:.0f}")
            ax.set_xticks(range(len(rs)), [r["variant"] for r in rs], rotation=60, ha="right", fontsize=8)
            ax.set_title(f"{combo[0]} -> {combo[1]}, {rs[0]['m']}^3")
            ax.set_ylabel("TFLOP/s")
            ax.legend(fontsize=8)
        paths.append(_save(fig, out_dir / f"gemm{tag}_ladder.png"))
    if sweep:
        fig, ax = plt.subplots(figsize=(10, 4.5))
        for key in sorted({(r["in"], r["out"], r["variant"]) for r in sweep}):
            rs = [r for r in sweep if (r["in"], r["out"], r["variant"]) == key]
            combo = key[:2]
            ax.plot(
                range(len(rs)),
                [r["ratio"] for r in rs],
                marker="o",
                label=f"{combo[0]}->{combo[1]} ({rs[0]['variant']})",
            )
            labels = [f"{r['m']}x{r['n']}x{r['k']}" for r in rs]
        ax.axhline(1.0, color="gray", ls="--")
        ax.set_xticks(range(len(labels)), labels, rotation=70, ha="right", fontsize=7)
        ax.set_ylabel("speed vs cuBLAS (x)")
        ax.legend(fontsize=8)
        paths.append(_save(fig, out_dir / f"gemm{tag}_sweep.png"))
    return paths


def main(argv: list[str]) -> int:
    """CLI entry (see --help)."""
    ap = ArgumentParser(prog="tcforge bench gemm", description=__doc__)
    ap.add_argument("--size", type=int, default=4096, help="ladder size (cube), default 4096")
    ap.add_argument("--combos", default="all", help="comma list like fp16:fp32,e4m3:bf16 (default: all six)")
    ap.add_argument("--variants", default="ladder", help="'ladder' (rungs + stage sweep) or a comma list of names")
    sweeps = ["none", "quick", "full", "smallm", "large", "tail", "mid"]
    ap.add_argument("--sweep", choices=sweeps, default="full", help="size sweep (tail: stream-K's shapes)")
    ap.add_argument("--sweep-variants", default="", help="comma list for the sweep (default: the ladder's best)")
    ap.add_argument("--no-graph", action="store_true", help="time plain launches instead of CUDA-graph replays")
    ap.add_argument("--no-pdl", action="store_true", help="launch without programmatic dependent launch (PDL)")
    ap.add_argument("--out", default="bench/results", help="directory for gemm*.json and PNGs")
    ap.add_argument("--tag", default="", help="suffix of the output file names")
    ap.add_argument("--no-plot", action="store_true", help="write JSON only")
    ap.add_argument("--eager-spread", type=float, default=0.0, metavar="SECONDS",
                    help="spread each row's eager runs over this many seconds (9 runs; default 0: 5 back to back), "
                         "so they meet both of the host's speeds; the rows then carry the median host us too")
    ap.add_argument("--ladder", action="store_true",
                    help="the teaching ladder (one small kernel per rung, fp16 in, fp32 out) against cuBLAS")
    args = ap.parse_args(argv)
    if not 0 <= args.eager_spread <= 60:
        ap.error(f"--eager-spread takes 0 to 60 seconds, got {args.eager_spread}")
    if args.size < 1:
        ap.error(f"--size must be at least 1, got {args.size}")
    combos = LADDER_COMBOS if args.combos == "all" else [tuple(c.split(":")) for c in args.combos.split(",")]
    bad = [":".join(c) for c in combos if len(c) != 2 or c[1] not in SUPPORTED.get(c[0], ())]
    if bad:
        ap.error(f"--combos: {', '.join(bad)} not supported; pairs IN:OUT from "
                 + ", ".join(f"{i}:{o}" for i, outs in SUPPORTED.items() for o in outs))
    names = [v.name for v in LADDER + SWEEP] if args.variants == "ladder" else args.variants.split(",")
    for name in names + [n for n in args.sweep_variants.split(",") if n]:
        resolve_variant(name)  # an unknown name: one line, before the GPU is asked for
    out_dir = output_dir(args.out, "--out")  # checked before any timing
    try:
        import torch
    except ImportError as exc:
        raise DeviceUnavailableError("tcforge bench gemm needs torch with CUDA (pip install tcforge[gpu])") from exc
    if not torch.cuda.is_available():
        raise DeviceUnavailableError("tcforge bench gemm needs a CUDA GPU (sm_90a)")
    graph = not args.no_graph
    options = LaunchOptions()
    if args.no_pdl:
        options = replace(options, pdl=False)
    t0 = time.time()
    if args.ladder:
        tag = f"_{args.tag}" if args.tag else ""
        print(f"teaching ladder at {args.size}^3 on {torch.cuda.get_device_name()}", flush=True)
        rows = run_teaching_ladder(args.size, ["fp32"], graph, args.eager_spread)
        path = out_dir / f"gemm_ladder{tag}.json"
        path.write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                    "rungs": rows, "seconds": time.time() - t0}, indent=1))
        print(f"wrote {path}")
        return 0
    print(f"gemm ladder at {args.size}^3 on {torch.cuda.get_device_name()} ({len(combos)} dtype pairs)", flush=True)
    tag = f"_{args.tag}" if args.tag else ""
    path = out_dir / f"gemm{tag}.json"
    meta = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "timing": "do_bench_cudagraph median" if graph else "do_bench median",
        "pdl": options.pdl,
        "ladder_size": args.size,
    }
    ladder = run_ladder(args.size, combos, names, graph, options, args.eager_spread)
    path.write_text(json.dumps({**meta, "ladder": ladder, "sweep": [], "seconds": time.time() - t0}, indent=1))
    sweep: list[dict[str, Any]] = []
    if args.sweep != "none":
        shapes = [(s, s, s) for s in SQUARES] + LLM + SMALL_M + MID
        if args.sweep == "quick":
            shapes = [(2048, 2048, 2048), (8192, 8192, 8192), (4096, 14336, 4096), (64, 4096, 4096)]
        if args.sweep == "large":
            shapes = [(8192, 8192, 8192), (4096, 14336, 4096)]
        if args.sweep == "tail":
            shapes = TAIL
        if args.sweep == "mid":
            shapes = MID
        if args.sweep == "smallm":
            shapes = SMALL_M + [(512, 512, 512), (1024, 1024, 1024)]
        if args.sweep_variants:
            best = {c: args.sweep_variants.split(",") for c in SWEEP_COMBOS if c in combos}
        else:
            best = {c: [best_variant(ladder, c)] for c in SWEEP_COMBOS if c in combos}
        print(f"sweep of the best variants {best}", flush=True)
        sweep = run_sweep(best, shapes, graph, options, args.eager_spread)
    path.write_text(json.dumps({**meta, "ladder": ladder, "sweep": sweep, "seconds": time.time() - t0}, indent=1))
    try:
        pngs = [] if args.no_plot else plot(ladder, sweep, out_dir, tag)
    except Exception as exc:  # plotting is optional (matplotlib may be absent)
        print(f"no plots: {exc}", file=sys.stderr)
        pngs = []
    print_table(ladder, sweep)
    print(f"wrote {path} {' '.join(str(p) for p in pngs)}")
    return 0


def print_table(ladder: list[dict[str, Any]], sweep: list[dict[str, Any]]) -> None:
    """Compact summary: per dtype pair, each variant's TFLOP/s and ratio; the sweep's ratios."""
    for combo in sorted({(r["in"], r["out"]) for r in ladder}):
        rs = [r for r in ladder if (r["in"], r["out"]) == combo]
        cells = " ".join(f"{r['variant']}={r['tflops']:.0f}(x{r['ratio']:.2f})" for r in rs)
        print(f"{combo[0]}->{combo[1]}: {cells}")
    for key in sorted({(r["in"], r["out"], r["variant"]) for r in sweep}):
        rs = [r for r in sweep if (r["in"], r["out"], r["variant"]) == key]
        cells = " ".join(f"{r['m']}x{r['n']}x{r['k']}:x{r['ratio']:.2f}" for r in rs)
        print(f"sweep {key[0]}->{key[1]} {key[2]}: {cells}")
