"""`tcforge bench enc5`: seconds per frame of the enc5 CPU reference as JSON (native kernel: bench/enc5_native.py)."""

from __future__ import annotations

import json
import os
import platform
import time

from tcforge.cliutil import ArgumentParser, output_file
from tcforge.layers.enc5.cli import native_available, parse_extent
from tcforge.layers.enc5.inputs import Inputs
from tcforge.layers.enc5.reference import reference
from tcforge.layers.enc5.weights import WeightImage


def measure(extent: tuple[int, int], numerics: str, repeat: int) -> dict:
    """Best and all wall times of `reference` on synthetic data of `extent` (after one untimed warm-up window)."""
    weights, inputs = WeightImage.synthetic(0), Inputs.synthetic(extent, 0)
    reference(weights, inputs, numerics=numerics, windows=[0])  # warm-up: numerics tables, imports
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = reference(weights, inputs, numerics=numerics)
        times.append(time.perf_counter() - t0)
    return {"backend": "cpu-reference", "numerics": numerics, "extent": list(extent), "windows": len(res.windows),
            "seconds_best": round(min(times), 3), "seconds_all": [round(t, 3) for t in times],
            "seconds_per_window": round(min(times) / len(res.windows), 4)}


def main(argv: list[str]) -> int:
    """Entry point of `tcforge bench enc5`."""
    ap = ArgumentParser(prog="tcforge bench enc5", description=__doc__)
    ap.add_argument("--extent", default="40x23", help="token extents (default 40x23 = a 1280x720 frame)")
    ap.add_argument("--numerics", choices=("ada", "hopper", "both"), default="both",
                    help="which mma model(s) to time (default both)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per model; the best counts (default 1)")
    ap.add_argument("--json", default="bench/results/enc5.json", help="where to write the results")
    args = ap.parse_args(argv)
    path = output_file(args.json, "--json", make_parent=True, stdout=False)  # checked before the seconds of measuring
    extent = parse_extent(args.extent)
    models = ("ada", "hopper") if args.numerics == "both" else (args.numerics,)
    rows = [measure(extent, m, max(1, args.repeat)) for m in models]
    for r in rows:
        print(f"enc5 {r['backend']} numerics={r['numerics']} extent {extent[0]}x{extent[1]} ({r['windows']} windows): "
              f"{r['seconds_best']:.2f} s per frame ({r['seconds_per_window']:.3f} s per window)")
    out = {"benchmark": "enc5", "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                            "processor": platform.processor() or platform.machine()},
           "native_available": native_available(), "results": rows}
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0
