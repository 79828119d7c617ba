"""Joules per GEMM, ours against cuBLAS, at the power cap: why 4096^3 speed is an energy question on the H200.

For each dtype pair and each kernel (the named variants and cuBLAS, alternated A B A B so drift hits both), a CUDA
graph of `--per-graph` launches is replayed for `--seconds` while a thread samples NVML (energy counter, power, SM
clock, clock-limit reasons); every launch is first compared with cuBLAS in its own accumulation mode (nothing is
timed if one disagrees). Reports ms per GEMM, TFLOP/s, J per GEMM, mean W, median SM MHz, the share of samples
limited by the software power cap, and cuBLAS's kernel name (torch.profiler). Writes bench/results/gemm_energy.json.

    python3 -m bench.gemm_energy [--size 4096] [--variants hoist,cluster4] [--combos fp16:fp32,bf16:bf16,e4m3:bf16]

A variant may be a spec with kernel-config overrides (tcforge.gemm.variants: `hoist_es@epi_bufs=4+stages=3`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "results" / "gemm_energy.json"


def cublas_kernel_name(fn: Callable[[], Any]) -> str:
    """The name of the (longest) CUDA kernel one call of `fn` launches."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not evs:
        return "?"
    return max(evs, key=lambda e: e.device_time).name[:200]


def cublas_peers(a: Any, b: Any, sa: Any, sb: Any, in_kind: str, out_kind: str) -> dict[str, Callable[[], Any]]:
    """cuBLAS on these inputs: "cublas" (fp8: torch._scaled_mm's default, promoted) and, for fp8, "cublas_fast"
    (use_fast_accum=True, which accumulates as ours does)."""
    from tcforge.gemm.check import cublas

    peers: dict[str, Callable[[], Any]] = {"cublas": lambda: cublas(a, b, sa, sb, out_kind)}
    if in_kind == "e4m3":
        peers["cublas_fast"] = lambda: cublas(a, b, sa, sb, out_kind, fast_accum=True)
    return peers


def check_against_cublas(kernels: dict[str, Any], ref: Any, combo: str, out_kind: str) -> list[dict[str, Any]]:
    """Correct first: run each prepared launch once with its output poisoned (NaN) and compare it with cuBLAS's
    like-for-like product `ref` (relative error under 1e-2, fp32 output 1e-4, and finite); one row per launch, and a
    SystemExit naming the first that disagrees (nothing is timed then)."""
    import torch

    from tcforge.gemm.check import poisoned_result, rel_err

    rows = []
    for kname, fn in kernels.items():
        mine = poisoned_result(fn).float()
        err = rel_err(mine, ref)
        ok = bool(torch.isfinite(mine).all()) and err < (1e-2 if out_kind != "fp32" else 1e-4)
        rows.append(dict(combo=combo, kernel=kname, rel_err_vs_cublas=err, bit_equal=bool(torch.equal(mine, ref)),
                         ok=ok))
        print(f"{combo}: {kname} vs cuBLAS rel err {err:.3e} bit-equal {rows[-1]['bit_equal']} "
              f"{'ok' if ok else 'FAILED'}", flush=True)
        if not ok:
            raise SystemExit(f"{kname} disagrees with cuBLAS on {combo}: not timing")
    return rows


def measure(fn: Callable[[], Any], nv: Any, seconds: float, per_graph: int) -> dict[str, float]:
    """Replay a graph of `per_graph` calls for about `seconds`; energy, time and clock statistics per call."""
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(per_graph):
            fn()
    g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    g.replay()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t0, 1e-4)
    reps = max(3, int(seconds / one))
    samples: list[Any] = []
    stop = threading.Event()

    def sampler() -> None:
        while not stop.is_set():
            samples.append(nv.sample())
            time.sleep(0.02)

    th = threading.Thread(target=sampler, daemon=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s0 = nv.sample()
    th.start()
    start.record()
    for _ in range(reps):
        g.replay()
    end.record()
    end.synchronize()
    stop.set()
    th.join()
    s1 = nv.sample()
    calls = reps * per_graph
    ms = start.elapsed_time(end) / calls
    joules = (s1.energy_mj - s0.energy_mj) / 1e3 / calls
    busy = samples[len(samples) // 10:] or samples  # skip the ramp
    return dict(ms=ms, joules=joules, watts=joules / (ms / 1e3), calls=calls,
                sm_mhz=statistics.median(s.sm_mhz for s in busy),
                power_w_median=statistics.median(s.power_mw for s in busy) / 1e3,
                power_capped=sum(1 for s in busy if s.reasons & 0x4) / len(busy))


def write_result(path: str, script: str, argv: list[str] | None, **fields: Any) -> None:
    """The metered scripts' JSON: a UTC time stamp, the fields, and the command line that reproduces the run."""
    out = dict(when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **fields,
               command=f"python3 -m bench.{script.removesuffix('.py')} " + " ".join(argv or []))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(out, indent=1))


def run_rounds(kernels: dict[str, Callable[[], Any]], nv: Any, *, combo: str, rounds: int, seconds: float,
               per_graph: int, flop: float, names: dict[str, str],
               what: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """Measure every kernel once per round, in turn (A B A B: drift hits all alike); one printed and returned row per
    measurement, tagged with the combo, the round, TFLOP/s, cuBLAS's kernel name (`names`) and `what(kernel)`."""
    rows = []
    for rnd in range(rounds):
        for kname, fn in kernels.items():
            r = measure(fn, nv, seconds, per_graph)
            r.update(kernel=kname, combo=combo, round=rnd, tflops=flop / r["ms"] / 1e9,
                     tflop_per_joule=flop / r["joules"] / 1e12)
            if what is not None:
                r["what"] = what(kname)
            if kname in names:
                r["cublas_kernel"] = names[kname]
            rows.append(r)
            print(f"{combo:14s} {kname:11s} r{rnd} {r['tflops']:7.1f} TFLOP/s {r['joules'] * 1e3:7.2f} mJ/GEMM "
                  f"{r['watts']:5.0f} W {r['sm_mhz']:5.0f} MHz capped {r['power_capped']:.0%}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--variants", default="hoist")
    ap.add_argument("--combos", default="fp16:fp32,bf16:bf16,e4m3:bf16")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--per-graph", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--b-layouts", default="row", help="16-bit B layouts to run: row ((K, N) row-major), col, or both")
    ap.add_argument("--l2-promotion-ab", type=int, default=None, choices=(0, 1, 2, 3),
                    help="also run each variant with every operand map at this L2 promotion (0 none .. 3 256B), as "
                         "'<variant>+pN' (a launch's maps are encoded when it is prepared)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    from tcforge.errors import TcforgeError
    from tcforge.gemm.variants import check_specs, parse_spec, plan_spec

    try:  # before torch and the GPU: a bad spec is a usage error
        specs = check_specs(args.variants.split(","), real=True)
    except TcforgeError as e:
        ap.error(str(e))

    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import cublas, fast_accum_peer, make_inputs
    from tcforge.gemm.plan import LaunchOptions
    from tcforge.runtime.nvml import Nvml

    props = torch.cuda.get_device_properties(0)
    bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    nv = Nvml(0, bus)
    m = n = k = args.size
    flop = 2.0 * m * n * k
    rows: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    cases = []
    for combo in args.combos.split(","):
        layouts = ["col"] if combo.startswith("e4m3") else args.b_layouts.replace("both", "row,col").split(",")
        cases += [(combo, lay) for lay in layouts]
    for combo_name, layout in cases:
        combo = combo_name if combo_name.startswith("e4m3") else f"{combo_name}/{layout}"
        in_kind, out_kind = combo_name.split(":")
        od = api.torch_dtype(out_kind)
        a, b, sa, sb = make_inputs(m, n, k, in_kind, layout == "col", seed=7 + len(rows))
        kernels: dict[str, Callable[[], Any]] = {}
        base_of: dict[str, str] = {}  # kernel label -> its registered variant (the accumulation mode to check by)

        for v in specs:
            plan = plan_spec(a, b, v, out_dtype=od, scale_a=sa, scale_b=sb)
            kernels[v], base_of[v] = api.prepare_plan(plan, a, b, sa, sb), parse_spec(v)[0]
            if args.l2_promotion_ab is not None:  # (a launch's maps are encoded when it is prepared)
                label = f"{v}+p{args.l2_promotion_ab}"
                forced = LaunchOptions(l2_promotion=args.l2_promotion_ab)
                kernels[label], base_of[label] = api.prepare_plan(plan, a, b, sa, sb, options=forced), base_of[v]
        # correct first: each launch against cuBLAS in its own accumulation mode (fp8: promoting variants against
        # the promoted default, the others against use_fast_accum=True), before anything is timed
        for v, fn in kernels.items():
            ref = cublas(a, b, sa, sb, out_kind, fast_accum=fast_accum_peer(base_of[v], in_kind)).float()
            checks += check_against_cublas({v: fn}, ref, combo, out_kind)
        kernels.update(cublas_peers(a, b, sa, sb, in_kind, out_kind))
        names = {k: cublas_kernel_name(fn) for k, fn in kernels.items() if k.startswith("cublas")}
        rows += run_rounds(kernels, nv, combo=combo, rounds=args.rounds, seconds=args.seconds,
                           per_graph=args.per_graph, flop=flop, names=names)
    summary = []
    for combo in dict.fromkeys(r["combo"] for r in rows):
        sel = [r for r in rows if r["combo"] == combo]
        ref = [r for r in sel if r["kernel"] == "cublas"]
        for kname in {r["kernel"] for r in sel}:
            mine = [r for r in sel if r["kernel"] == kname]
            ms = statistics.mean(x["ms"] for x in mine)
            joules = statistics.mean(x["joules"] for x in mine)
            summary.append(dict(combo=combo, kernel=kname, speed_ratio=statistics.mean(x["ms"] for x in ref) / ms,
                                energy_ratio=joules / statistics.mean(x["joules"] for x in ref)))
    for s in sorted(summary, key=lambda s: (s["combo"], s["kernel"])):
        print(f"{s['combo']:14s} {s['kernel']:9s} speed x{s['speed_ratio']:.3f} of cuBLAS, "
              f"energy x{s['energy_ratio']:.3f} of cuBLAS's J/GEMM")
    write_result(args.out, "gemm_energy.py", argv, device=props.name, power_limit_w=nv.power_limit_mw() / 1e3,
                 size=args.size, rows=rows, summary=summary, checks=checks)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
