"""Where stream-K's time goes: same-process timings of rung 9, the stream-K builds (auto share, nothing shared, one
more round shared) and cuBLAS, then a traced launch (%globaltimer stamps per consumer warpgroup: data-parallel units
done, partial summed, partial stored, owner summed, partials added, end) summarised over the CTAs. Writes JSON.

    python3 bench/gemm_streamk_trace.py [--size 4096] [--combos fp16:fp32,bf16:bf16] [--rounds 3] [--out F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

STAMPS = ["start", "dp_done", "partial_summed", "partial_stored", "owner_summed", "partials_added", "end"]


def _prepare(variant: Any, a: Any, b: Any, sa: Any, sb: Any, od: Any, streamk: tuple[int, int] | None) -> Any:
    from tcforge.gemm import api
    from tcforge.gemm.validate import plan_matmul

    plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant="streamk")
    plan = replace(plan, variant=variant)
    return api.prepare_plan(plan, a, b, sa, sb, streamk=streamk)


def traced(size: int, combo: tuple[str, str], forced: tuple[int, int] | None, base: str) -> dict[str, Any]:
    """One traced launch (after warm-ups): per-stamp min / median / max over warpgroups, relative to the earliest
    start, in microseconds."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.variants import VARIANTS

    v = VARIANTS[base]
    tv = replace(v, name=f"{base}_trace", config=replace(v.config, streamk_trace=True))
    a, b, sa, sb = make_inputs(size, size, size, combo[0], combo[0] == "e4m3", seed=5)
    od = api.torch_dtype(combo[1])
    stream = torch.cuda.current_stream().cuda_stream
    flag_words = 1024 + 8 * 2 * 264 * 2  # the flags, then the trace's timestamps
    api.partial_workspace(torch.cuda.current_device(), stream, flag_words, flag_words * 128 * 128)
    prep = _prepare(tv, a, b, sa, sb, od, forced)
    flags = api._sk_buffers[(torch.cuda.current_device(), stream)][1]
    for _ in range(5):
        prep()
    torch.cuda.synchronize()
    n = prep.grid[0] * tv.config.nc
    st = flags[1024 : 1024 + n * 16].view(torch.int64).view(n, 8).cpu().tolist()
    t0 = min(r[0] for r in st)
    out: dict[str, Any] = {"grid": prep.grid[0], "sk_units": prep.sk_units,
                           "raw_us": [[(x - t0) / 1e3 if x >= t0 else None for x in r] for r in st]}
    for i, name in enumerate(STAMPS):
        vals = [(r[i] - t0) / 1e3 for r in st if r[i] >= t0 and r[i] - t0 < 10**9]
        if vals:
            out[name] = {"min": min(vals), "median": statistics.median(vals), "max": max(vals), "n": len(vals)}
    # per-warpgroup durations of the shared phase's pieces
    def dur(i: int, j: int) -> list[float]:
        return [(r[j] - r[i]) / 1e3 for r in st if r[i] >= t0 and r[j] >= r[i] and r[j] - t0 < 10**9]

    for name, (i, j) in {"partial_store_us": (2, 3), "add_partials_us": (4, 5), "shared_phase_us": (1, 6)}.items():
        d = dur(i, j)
        if d:
            out[name] = {"min": min(d), "median": statistics.median(d), "max": max(d)}
    return out


def main(argv: list[str]) -> int:
    """CLI (see --help)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--combos", default="fp16:fp32,bf16:bf16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="bench/results/gemm_streamk_trace.json")
    args = ap.parse_args(argv)
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.bench import _time_ms
    from tcforge.gemm.check import cublas, make_inputs
    from tcforge.gemm.validate import plan_matmul
    from tcforge.gemm.variants import VARIANTS

    n = args.size
    flop = 2.0 * n**3
    res: dict[str, Any] = {"device": torch.cuda.get_device_name(), "size": n, "timings": {}, "traces": {}}
    for combo in [tuple(c.split(":")) for c in args.combos.split(",")]:
        key = f"{combo[0]}:{combo[1]}"
        a, b, sa, sb = make_inputs(n, n, n, combo[0], combo[0] == "e4m3", seed=3)
        od = api.torch_dtype(combo[1])
        api.POISON_OUTPUT = False
        cases: dict[str, Any] = {}
        for name in ("hoist", "tuned"):
            cases[name] = api.prepare_plan(plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=name),
                                           a, b, sa, sb)
        sk = VARIANTS["streamk"]
        cases["streamk"] = _prepare(sk, a, b, sa, sb, od, None)
        g = cases["streamk"].grid[0] // 2
        units = (-(-n // 256)) ** 2  # 256x256 cluster tiles of an n^3 product
        cases["streamk_none_shared"] = _prepare(sk, a, b, sa, sb, od, (g, 0))
        r = units % g
        if r:
            cases["streamk_r_plus_round"] = _prepare(sk, a, b, sa, sb, od, (g, r + g))
        cases["streamk_cm1"] = _prepare(VARIANTS["streamk_cm1"], a, b, sa, sb, od, None)
        cases["cublas"] = lambda a=a, b=b, sa=sa, sb=sb, o=combo[1]: cublas(a, b, sa, sb, o)
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.rounds):
            for k, fn in cases.items():
                times[k].append(_time_ms(fn, True))
        res["timings"][key] = {
            k: {"ms": v, "tflops_median": flop / statistics.median(v) / 1e9,
                "sk_units": getattr(cases[k], "sk_units", None)} for k, v in times.items()
        }
        for k, v in res["timings"][key].items():
            print(f"{key} {k:<22} {v['tflops_median']:7.1f} TFLOP/s  sk_units={v['sk_units']}", flush=True)
        res["traces"][key] = {"streamk": traced(n, combo, None, "streamk")}
        for k, v in res["traces"][key].items():
            cells = " ".join(f"{s}={v[s]['median']:.1f}/{v[s]['max']:.1f}" for s in STAMPS if s in v)
            extra = " ".join(f"{s}={v[s]['median']:.2f}/{v[s]['max']:.2f}" for s in
                             ("partial_store_us", "add_partials_us", "shared_phase_us") if s in v)
            print(f"trace {key} {k}: (median/max us) {cells} | {extra}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
