"""The enc5 kernel forms' own durations on the device clock (CUPTI kernel records through torch.profiler) beside the
CUDA-graph per-launch times of bench/enc5_native.py, and the timing twin's CTA lifetimes: how much of a launch lies
between two dependent kernels and how much outside every CTA.

Usage (sm_90 GPU, from the repository root): python3 -m bench.enc5_kernel_durations
[--json bench/results/enc5_kernel_durations.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from bench import enc5_native

FORMS = ("hopper_split", "hopper_split_occ3", "hopper")


def cupti_durations(fn, launches: int = 30) -> list[float]:
    """Device-clock durations (µs) of the enc5 kernels `fn` launches, one record per launch."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            fn()
        torch.cuda.synchronize()
    return [e.time_range.end - e.time_range.start for e in prof.events() if "enc5" in e.name]


def cta_span_us(weights, inp, tex, ex: int, ey: int, variant: str, options: tuple[str, ...] = (),
                reorder: bool = True) -> float:
    """First CTA start to last CTA end of one launch of the form's timing twin (a tool form of tools/enc5_kernels/;
    globaltimer stamps)."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    nwin = -(-ex // 8) * -(-ey // 8)
    buf = torch.zeros((nwin * 8 * 16,), dtype=torch.int64, device="cuda")
    for _ in range(3):
        native_batch(weights, inp, tex, ex, ey, debug=buf, variant=variant, options=options, reorder=reorder)
    torch.cuda.synchronize()
    st = buf.cpu().numpy().reshape(nwin, 8, 16)
    return float(st[:, :, 13].max() - st[:, :, 12][st[:, :, 12] > 0].min()) / 1e3


def run() -> dict:
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    rows = []
    for ex, ey in enc5_native.EXTENTS:
        inp, tex = enc5_native.random_frames(1, ex, ey)
        oa, os_ = torch.zeros_like(inp), torch.zeros_like(tex)
        for form in FORMS:
            def fn(f=form, i=inp, t=tex, x=ex, y=ey, a=oa, s=os_):
                return native_batch(dw, i, t, x, y, arena=a, surface=s, variant=f)
            d = cupti_durations(fn)
            row = {"extent": f"{ex}x{ey}", "form": form, "cupti_median_us": round(float(np.median(d)), 2),
                   "cupti_min_us": round(float(np.min(d)), 2), "launches": len(d),
                   "graph_per_launch_us": round(enc5_native.time_kernel(fn, warmup=3, reps=100), 2)}
            if form != "hopper":
                row["timing_twin_cta_span_us"] = round(cta_span_us(dw, inp, tex, ex, ey, form + "_timing"), 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"device": torch.cuda.get_device_name(), "rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", default="bench/results/enc5_kernel_durations.json")
    args = ap.parse_args()
    result = run()
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
