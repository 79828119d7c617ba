"""Same-process A/B of two versions of the enc5 kernel sources: a baseline against the working tree's forms, at 720p
and 4K, in interleaved rounds (CUDA-graph per-launch medians, bench/enc5_native.time_kernel), with a check that both
give the same output bytes on the same frame. Code-generation changes move the latency-bound split form by tenths of
a µs, more than separate runs can resolve.

The baseline is the `kernels/` folder of another checkout or, from before the forms were files, that revision's single
`enc5.cu` (`git show REV:src/tcforge/layers/enc5/gpu/enc5.cu > enc5_base.cu`; forms selected by -DENC5_VARIANT):
tools/enc5_sass_compare.py's `baseline_form`.

Usage (sm_90 GPU, from the repository root): python3 -m bench.enc5_source_ab --baseline enc5_base.cu
[--forms hopper,hopper_split,hopper_split_occ3] [--rounds 6] [--json bench/results/enc5_source_ab.json];
--compile-only fills the cubin cache (no GPU needed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from tools.enc5_sass_compare import baseline_form

from bench import enc5_native


def numerics(name: str) -> str:
    """The numerics mode a form implements."""
    return "ada" if name == "ada" else "hopper"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", required=True, help="a folder of form files, or a pre-refactor enc5.cu")
    ap.add_argument("--forms", default="hopper,hopper_split,hopper_split_occ3")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--json", default="bench/results/enc5_source_ab.json")
    args = ap.parse_args()
    from tcforge.layers.enc5.gpu import kernel

    forms = [f for f in args.forms.split(",") if f]
    builds = {}  # (source, form) -> (Form, options)
    for name in forms:
        builds[("baseline", name)] = baseline_form(Path(args.baseline), name)
        builds[("working_tree", name)] = (kernel.FORMS[name], ())
    if args.compile_only:
        for (tag, name), (f, opts) in builds.items():
            kernel.compile_form(f, opts)
            print(f"compiled {tag} {name}", flush=True)
        return 0
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    data = {}
    for ex, ey in enc5_native.EXTENTS:
        inp, tex = enc5_native.random_frames(1, ex, ey)
        data[(ex, ey)] = (inp, tex, torch.zeros_like(inp), torch.zeros_like(tex))
    same = {}
    for name in forms:
        for (ex, ey), (i, t, _, _) in data.items():
            outs = [native_batch(dw, i, t, ex, ey, numerics=numerics(name), variant=f, options=o) for f, o in
                    (builds[("baseline", name)], builds[("working_tree", name)])]
            same[f"{name} {ex}x{ey}"] = all(torch.equal(x, y) for x, y in zip(*outs, strict=True))
            print(f"same bytes {name} {ex}x{ey}: {same[f'{name} {ex}x{ey}']}", flush=True)
    times: dict = defaultdict(list)
    for _ in range(args.rounds):
        for (tag, name), (f, opts) in builds.items():
            num = numerics(name)
            for (ex, ey), (i, t, a, s_) in data.items():
                times[(tag, name, f"{ex}x{ey}")].append(enc5_native.time_kernel(
                    lambda i=i, t=t, a=a, s_=s_, ex=ex, ey=ey, f=f, o=opts, n=num:
                    native_batch(dw, i, t, ex, ey, numerics=n, arena=a, surface=s_, variant=f, options=o),
                    warmup=3, reps=100))
    rows = [{"source": k[0], "form": k[1], "extent": k[2], "median_us": round(float(np.median(v)), 2),
             "rounds_us": [round(x, 2) for x in v]} for k, v in times.items()]
    for r in rows:
        print(json.dumps(r), flush=True)
    print(f"{'form':18s} {'extent':8s} {'baseline':>9s} {'working':>9s} {'ratio':>6s}")
    for name in forms:
        for ex, ey in data:
            b, w = (float(np.median(times[(tag, name, f"{ex}x{ey}")])) for tag in ("baseline", "working_tree"))
            print(f"{name:18s} {ex}x{ey:<5d} {b:9.2f} {w:9.2f} {w / b:6.3f}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "baseline": args.baseline,
                                           "same_bytes": same, "rows": rows}, indent=1) + "\n")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
