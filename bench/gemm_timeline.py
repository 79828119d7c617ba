"""Where one launch's time goes, per CTA: %globaltimer stamps from a diagnostic build of a variant
(`KernelConfig.timeline`, the TIMELINE #define: the same k-loop code, plus a few stamps) — entry, set-up done (barriers
initialised, cluster synchronised), each producer thread's first load, each consumer warpgroup's first stage
arrived, its last wgmmas done and its stores done (its first warp's: each warp waits for its own TMA stores), and the
exit (thread 0 at its end: in a cluster past its producer tail — the wait for every CTA's consumers to release the
last slots it filled, in place of a final cluster barrier — unless it loads only this
CTA's own operand; without a cluster the producer thread, which leaves early). Each
traced launch follows ten plain launches of the variant in the stream (no PDL; NVML's SM clock read after it) and is
first checked against cuBLAS; the plain variant and cuBLAS are graph-timed in the same run for scale.

    python3 -m bench.gemm_timeline [--shapes 128x11008x4096,2048x2048x2048] [--combos bf16:bf16,e4m3:bf16]
        [--variants n96c4,hoist] [--b-col] [--repeats 5] [--tag NAME]

A variant that cannot take the stamps (split, stream-K, promoting, ping-pong, cp.async: KernelConfig.check) is
reported and skipped; a shape it would split is launched unsplit. Writes bench/results/gemm_timeline[_TAG].json: per
case the stamps' min / median / max over CTAs (microseconds from the first CTA's entry, median over the repeats) and
the phases each CTA spends (medians and maxima over CTAs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tcforge.gemm.api import TIMELINE_SLOTS as SLOTS  # the kernel's TL_SLOTS
from tcforge.gemm.plan import LaunchOptions

ALONE = LaunchOptions(pdl=False)  # each launch alone: its entry is its own, not the previous kernel's tail

WARM_LAUNCHES = 10  # plain launches right before each traced one
STAMPS = {0: "entry", 1: "setup_done", 2: "a_first_load", 3: "b_first_load", 4: "wg0_first_stage",
          5: "wg0_mainloop_done", 6: "wg0_stored", 8: "wg1_first_stage", 9: "wg1_mainloop_done", 10: "wg1_stored",
          12: "wg2_first_stage", 13: "wg2_mainloop_done", 14: "wg2_stored", 15: "exit"}
STORED = tuple(i for i, name in STAMPS.items() if name.endswith("_stored"))  # each consumer warpgroup's
# per-CTA phases: (name, from slot, to slot); the first load is the earlier of the two producer threads'
PHASES = [("setup", 0, 1), ("first_stage_wait", "load", 4), ("mainloop", 4, 5), ("epilogue", 5, 6),
          ("exit_wait", 6, 15)]


def summarize(stamps: list[list[int]]) -> dict[str, Any]:
    """Stamps (one row of SLOTS nanosecond %globaltimer values per CTA, 0 where not written) → per-stamp min / median
    / max over CTAs in microseconds from the earliest entry, per-CTA phase durations (median, max), the span (earliest
    entry to the latest of any CTA's exit and stores)."""
    rows = [r for r in stamps if r[0] > 0]
    if not rows:
        raise ValueError("no CTA wrote an entry stamp: not a timeline build, or the launch did not run")
    t0 = min(r[0] for r in rows)
    out: dict[str, Any] = {"ctas": len(rows), "stamps_us": {}, "phases_us": {}}
    for i, name in STAMPS.items():
        vals = [(r[i] - t0) / 1e3 for r in rows if r[i] > 0]
        if vals:
            out["stamps_us"][name] = {"min": min(vals), "median": statistics.median(vals), "max": max(vals)}

    def slot(r: list[int], s: int | str) -> int:
        if s == "load":
            loads = [x for x in (r[2], r[3]) if x > 0]
            return min(loads) if loads else 0
        return r[int(s)]

    for name, a, b in PHASES:
        d = [(slot(r, b) - slot(r, a)) / 1e3 for r in rows if slot(r, a) > 0 and slot(r, b) >= slot(r, a)]
        if d:
            out["phases_us"][name] = {"median": statistics.median(d), "max": max(d)}
    # a CTA ends at its exit stamp or its last stores, whichever is later: the exit stamp is producer thread 0's,
    # which leaves once its loads are issued (in a cluster, once its tail's slots are released)
    out["span_us"] = (max(max(r[15], *(r[i] for i in STORED)) for r in rows) - t0) / 1e3
    return out


def median_of(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The element-wise median of several launches' summaries (same keys)."""
    first = summaries[0]
    out: dict[str, Any] = {"ctas": first["ctas"], "span_us": statistics.median(s["span_us"] for s in summaries)}
    for key in ("stamps_us", "phases_us"):
        out[key] = {name: {k: statistics.median(s[key][name][k] for s in summaries if name in s[key])
                           for k in stats} for name, stats in first[key].items()}
    return out


def traced(base: str, m: int, n: int, k: int, in_kind: str, out_kind: str, b_col: bool, repeats: int) -> dict[str, Any]:
    """Timeline launches of variant `base` at one shape (after a check against cuBLAS), with the plain variant and
    cuBLAS graph-timed beside them."""
    import torch

    from tcforge.errors import DeviceUnavailableError
    from tcforge.gemm import api
    from tcforge.gemm.bench import _check_against_cublas, _time_ms
    from tcforge.gemm.check import cublas, make_inputs
    from tcforge.gemm.validate import plan_matmul
    from tcforge.gemm.variants import VARIANTS
    from tcforge.runtime import nvml

    if base not in VARIANTS:
        raise ValueError(f"{base!r} is not a variant name (tcforge.gemm.variants.VARIANTS; not 'auto')")
    v = VARIANTS[base]
    tv = replace(v, name=f"{base}_tl", config=replace(v.config, timeline=True))
    tv.config.check()  # names what the stamps cannot go with
    kmajor = b_col or in_kind == "e4m3"
    a, b, sa, sb = make_inputs(m, n, k, in_kind, kmajor, seed=int(time.time() * 1000) % 100000)
    od = api.torch_dtype(out_kind)
    plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=base)
    plain = api.prepare_plan(plan, a, b, sa, sb, splits=1, options=ALONE)
    buf = torch.zeros(4096 * SLOTS, dtype=torch.int64, device="cuda")
    prep = api.prepare_plan(replace(plan, variant=tv), a, b, sa, sb, splits=1, timeline=buf, options=ALONE)
    row: dict[str, Any] = {"variant": base, "m": m, "n": n, "k": k, "in": in_kind, "out": out_kind, "b_kmajor": kmajor,
                           "grid": prep.grid[0]}
    row.update(_check_against_cublas(prep, tv.name, a, b, sa, sb, in_kind, out_kind))
    row["plain_ms"] = _time_ms(plain, True)
    row["cublas_ms"] = _time_ms(lambda: cublas(a, b, sa, sb, out_kind, fast_accum=in_kind == "e4m3"), True)
    try:
        nv = nvml.Nvml(torch.cuda.current_device())
    except DeviceUnavailableError:
        nv = None
    sums, mhz = [], []
    for r in range(repeats):
        buf.zero_()
        for _ in range(WARM_LAUNCHES):  # the clock where a busy run has it; the traced launch follows them in order
            plain()
        prep()
        torch.cuda.synchronize()
        if nv is not None:
            mhz.append(nv.sample().sm_mhz)
        stamps = buf[: prep.grid[0] * SLOTS].view(-1, SLOTS).cpu().tolist()
        sums.append(summarize(stamps))
        if r == 0:  # one launch's stamps kept whole (ns from the earliest entry; -1: not written)
            t0 = min(x[0] for x in stamps if x[0] > 0)
            row["first_launch_ns"] = [[x - t0 if x > 0 else -1 for x in cta] for cta in stamps]
    row["timeline"] = median_of(sums)
    row["sm_mhz_after"] = mhz  # NVML's SM clock right after each traced launch
    return row


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="128x11008x4096,2048x2048x2048")
    ap.add_argument("--combos", default="bf16:bf16,e4m3:bf16")
    ap.add_argument("--variants", default="n96c4,hoist")
    ap.add_argument("--b-col", action="store_true", help="16-bit B column-major (fp8 B always is)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="bench/results")
    args = ap.parse_args(argv)
    import torch

    from tcforge.errors import TcforgeError

    rows: list[dict[str, Any]] = []
    for shape in args.shapes.split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        for combo in args.combos.split(","):
            in_kind, out_kind = combo.split(":")
            for v in args.variants.split(","):
                try:
                    r = traced(v, m, n, k, in_kind, out_kind, args.b_col, args.repeats)
                except (TcforgeError, ValueError) as exc:
                    print(f"{shape} {combo} {v}: {exc}", flush=True)
                    rows.append({"variant": v, "m": m, "n": n, "k": k, "in": in_kind, "out": out_kind,
                                 "error": str(exc)[:300]})
                    continue
                rows.append(r)
                t = r["timeline"]
                ph = " ".join(f"{name} {x['median']:.2f}/{x['max']:.2f}" for name, x in t["phases_us"].items())
                clk = f" at {statistics.median(r['sm_mhz_after']):.0f} MHz" if r["sm_mhz_after"] else ""
                print(f"{shape} {combo} {v}: grid {r['grid']} span {t['span_us']:.2f} us{clk} (graph-timed: ours "
                      f"{r['plain_ms'] * 1e3:.2f}, cuBLAS {r['cublas_ms'] * 1e3:.2f}) | phases median/max: {ph}",
                      flush=True)
    path = Path(args.out) / f"gemm_timeline{'_' + args.tag if args.tag else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "pdl": False, "rows": rows}
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")  # compact: one launch's stamps per row
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
