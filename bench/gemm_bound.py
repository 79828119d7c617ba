"""How fast can any GEMM of rung 9's design be at the H200's power cap? Rung 9 with parts taken out, timed and
metered beside rung 9 and cuBLAS in one run.

At 4096^3 every kernel runs at the 700 W limit (docs/gemm.md, "Joules per GEMM"), so its time is its energy. The
diagnostic builds of rung 9 (`KernelConfig.diag`, never reachable through `matmul`: they do not compute C) leave out
parts of the kernel: `d1` the loads after each CTA's first ring fill (the consumers re-read stale stages), `d2` the
epilogue's stores, `d3` both (the GEMM's wgmmas from shared memory with rung 9's barriers and nothing else), `d4` the
wgmmas (loads and stores only), `d7` everything but the barrier handshakes. `d3` moves the fewest bytes any GEMM of
this wgmma form can, so its speed over cuBLAS's bounds the ratio a real kernel of the form can reach.

`--streamk` adds rung 9's stream-K build (`streamk`) with a forced share: `skN` shares the last N cluster units k-tile
by k-tile over all clusters (`sk0`: none; at 4096^3 the variant's own choice is the 58 units past three full rounds,
all 256 units de-synchronise every cluster's epilogues). It tests whether epilogues that all SMs reach at the same
moment cost more than the same work spread over time. These are real GEMMs: each is checked against cuBLAS too.

For each dtype pair the kernels are alternated round by round (graphs of `--per-graph` launches replayed for
`--seconds` each, NVML sampled: bench/gemm_energy.py's `measure`); rung 9's output is first checked against
cuBLAS's on the same fresh random inputs. Writes bench/results/gemm_bound.json.

    python3 -m bench.gemm_bound [--size 4096] [--combos fp16:fp32,bf16:bf16,e4m3:bf16] [--diags 1,2,3,4,7]
                                [--streamk 58,124,256] [--base hoist] [--variants hoist_es,...]

(run from the repository root: it imports bench/gemm_energy.py as `bench.gemm_energy`)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.gemm_energy import (
    check_against_cublas,
    cublas_kernel_name,
    cublas_peers,
    run_rounds,
    write_result,
)

OUT = Path(__file__).resolve().parent / "results" / "gemm_bound.json"
SK_VARIANT = "streamk"
WHAT = {0: "rung 9", 1: "no loads after the first fill", 2: "no stores", 3: "wgmma only (no loads, no stores)",
        4: "no wgmma (loads and stores)", 5: "stores only", 6: "loads only", 7: "barriers only"}


def diag_kernel(base: str, diag: int, a: Any, b: Any, sa: Any, sb: Any, od: Any) -> Any:
    """A prepared launch of the variant spec `base` built with `diag` (its launch policy, grid and tile order)."""
    from tcforge.gemm import api
    from tcforge.gemm.variants import plan_spec

    spec = f"{base}{'+' if '@' in base else '@'}diag={diag}" if diag else base
    plan = plan_spec(a, b, spec, out_dtype=od, scale_a=sa, scale_b=sb)
    prep = api.prepare_plan(plan, a, b, sa, sb)
    if prep.splits != 1 or prep.sk_units:
        raise SystemExit(f"{spec} splits this shape ({prep.splits} splits, {prep.sk_units} stream-K units): "
                         "the diagnostic builds are unsplit; pick a larger --size")
    return prep


def streamk_kernel(units: int, a: Any, b: Any, sa: Any, sb: Any, od: Any) -> Any:
    """A prepared launch of the stream-K build sharing its last `units` cluster units over its default grid."""
    from tcforge.gemm import api
    from tcforge.gemm.validate import plan_matmul

    plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=SK_VARIANT)
    own = api.prepare_plan(plan, a, b, sa, sb)
    clusters = own.grid[0] // plan.variant.config.cm
    return api.prepare_plan(plan, a, b, sa, sb, streamk=(clusters, units))


def what_of(kname: str) -> str:
    """The row label of a kernel name: cuBLAS, the base variant, a diagnostic mask or a stream-K share."""
    if kname.startswith("sk"):
        return f"stream-K over the last {kname[2:]} cluster units"
    if kname[0] == "d" and kname[1:].isdigit():
        return WHAT[int(kname[1:])]
    return kname


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--base", default="hoist", help="the variant the diagnostic builds are made of (rung 9)")
    ap.add_argument("--variants", default="", help="more real variants (specs) timed and checked beside the base")
    ap.add_argument("--diags", default="1,2,3,4,7", help="diagnostic masks: 1 no loads, 2 no stores, 4 no wgmma")
    ap.add_argument("--combos", default="fp16:fp32,bf16:bf16,e4m3:bf16")
    ap.add_argument("--streamk", default="", help="stream-K shares to add (cluster units, comma-separated)")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--per-graph", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    diags = [int(x) for x in args.diags.split(",") if x]
    shares = [int(x) for x in args.streamk.split(",") if x]
    extra = [v for v in args.variants.split(",") if v]
    from tcforge.errors import TcforgeError
    from tcforge.gemm.variants import check_specs

    try:  # the base and --variants are real GEMMs, checked against cuBLAS; diagnostic masks go in --diags
        check_specs([args.base, *extra], real=True)
    except TcforgeError as e:
        ap.error(str(e))
    if any(not 1 <= d <= 7 for d in diags):
        ap.error("--diags are masks 1..7")

    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.runtime.nvml import Nvml

    props = torch.cuda.get_device_properties(0)
    bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    nv = Nvml(0, bus)
    m = n = k = args.size
    flop = 2.0 * m * n * k
    rows: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    for ci, combo in enumerate(args.combos.split(",")):
        in_kind, out_kind = combo.split(":")
        od = api.torch_dtype(out_kind)
        a, b, sa, sb = make_inputs(m, n, k, in_kind, in_kind == "e4m3", seed=int(time.time()) % 100000 + ci)
        kernels: dict[str, Callable[[], Any]] = cublas_peers(a, b, sa, sb, in_kind, out_kind)
        rung9 = diag_kernel(args.base, 0, a, b, sa, sb, od)
        real = {args.base: rung9, **{v: diag_kernel(v, 0, a, b, sa, sb, od) for v in extra},
                **{f"sk{u}": streamk_kernel(u, a, b, sa, sb, od) for u in shares}}
        # against cuBLAS's like-for-like product (fp8: rung 9 is bit-identical to use_fast_accum=True where nothing
        # splits)
        ref = (kernels.get("cublas_fast") or kernels["cublas"])().float()
        checks += check_against_cublas(real, ref, combo, out_kind)
        kernels.update(real)
        for d in diags:
            kernels[f"d{d}"] = diag_kernel(args.base, d, a, b, sa, sb, od)
        names = {kn: cublas_kernel_name(fn) for kn, fn in kernels.items() if kn.startswith("cublas")}
        rows += run_rounds(kernels, nv, combo=combo, rounds=args.rounds, seconds=args.seconds,
                           per_graph=args.per_graph, flop=flop, names=names, what=what_of)
    summary = []
    for combo in dict.fromkeys(r["combo"] for r in rows):
        sel = [r for r in rows if r["combo"] == combo]
        peer = "cublas_fast" if combo.startswith("e4m3") else "cublas"
        ref_ms = statistics.median(x["ms"] for x in sel if x["kernel"] == peer)
        ref_j = statistics.median(x["joules"] for x in sel if x["kernel"] == peer)
        for kname in dict.fromkeys(r["kernel"] for r in sel):
            mine = [x for x in sel if x["kernel"] == kname]
            ms = statistics.median(x["ms"] for x in mine)
            joules = statistics.median(x["joules"] for x in mine)
            summary.append(dict(combo=combo, kernel=kname, peer=peer, what=mine[0]["what"], ms=ms,
                                tflops=flop / ms / 1e9, speed_ratio=ref_ms / ms, mj=joules * 1e3,
                                energy_ratio=joules / ref_j, sm_mhz=statistics.median(x["sm_mhz"] for x in mine),
                                power_capped=min(x["power_capped"] for x in mine)))
            s = summary[-1]
            print(f"{combo:10s} {kname:11s} {s['tflops']:7.1f} TFLOP/s  x{s['speed_ratio']:.3f} of {peer}  "
                  f"{s['mj']:6.1f} mJ (x{s['energy_ratio']:.3f})  {s['sm_mhz']:5.0f} MHz  {s['what']}", flush=True)
    write_result(args.out, "gemm_bound.py", argv, device=props.name, power_limit_w=nv.power_limit_mw() / 1e3,
                 size=args.size, base=args.base, checks=checks, rows=rows, summary=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
