"""Same-process A/B of two versions of the enc5 kernel source: a baseline .cu file (e.g. `git show
REV:src/tcforge/layers/enc5/gpu/enc5.cu > base.cu`) against the working tree's, for the chosen kernel forms at 720p
and 4K, in interleaved rounds (CUDA-graph per-launch medians, bench/enc5_native.time_kernel). Code-generation changes
move the latency-bound split form by tenths of a µs, more than separate runs can resolve.

Usage (sm_90 GPU): python3 bench/enc5_source_ab.py --baseline base.cu [--forms hopper_split,hopper_split_occ3]
[--rounds 6] [--json bench/results/enc5_source_ab.json]; --compile-only fills the cubin cache (no GPU needed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import enc5_native  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", required=True, help="the baseline enc5.cu")
    ap.add_argument("--forms", default="hopper_split,hopper_split_occ3")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--json", default="bench/results/enc5_source_ab.json")
    args = ap.parse_args()
    from tcforge.layers.enc5.gpu import kernel

    sources = {"baseline": Path(args.baseline).read_text(), "working_tree": kernel.SOURCE_PATH.read_text()}
    forms = [f for f in args.forms.split(",") if f]
    if args.compile_only:
        for tag, src in sources.items():
            kernel.source = lambda s=src: s  # the launcher reads the source through this function
            for form in forms:
                kernel.compile_variant(form)
                print(f"compiled {tag} {form}", flush=True)
        return 0
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    data = {}
    for ex, ey in enc5_native.EXTENTS:
        inp, tex = enc5_native.random_frames(1, ex, ey)
        data[(ex, ey)] = (inp, tex, torch.zeros_like(inp), torch.zeros_like(tex))
    times: dict = defaultdict(list)
    for _ in range(args.rounds):
        for tag, src in sources.items():
            kernel.source = lambda s=src: s
            for form in forms:
                for (ex, ey), (i, t, a, s_) in data.items():
                    times[(tag, form, f"{ex}x{ey}")].append(enc5_native.time_kernel(
                        lambda i=i, t=t, a=a, s_=s_, ex=ex, ey=ey, f=form:
                        native_batch(dw, i, t, ex, ey, arena=a, surface=s_, variant=f), warmup=3, reps=100))
    rows = [{"source": k[0], "form": k[1], "extent": k[2], "median_us": round(float(np.median(v)), 2),
             "rounds_us": [round(x, 2) for x in v]} for k, v in times.items()]
    for r in rows:
        print(json.dumps(r), flush=True)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "baseline": args.baseline,
                                           "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
