"""Time explicit GEMM points, each with its own variant list, beside cuBLAS (bench/gemm_small.py's measurement: every
launch checked against float64 first, CUDA-graph medians, per-kernel device times), and write one JSON.

A point list is a JSON array of {"shape": [M, N, K], "combo": "bf16:bf16", "layout": "col" | "row",
"kind": ..., "variants": [...]} (`kind` is the measured-points table's key: bf16 runs stand for 16-bit over a
column-major B there). `auto` in a list records the variant it ran. Used to re-time a band of the measured points
(tests/gemm/test_validate.py) on a new kernel template:

    python3 bench/gemm_points.py bench/points/gemm_s30_band.json bench/results/gemm_small_s30_band.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_small import run  # noqa: E402


def check_points(points: object) -> str | None:
    """What is wrong with a point list (None if nothing): a JSON array of points, each with a shape of three positive
    integers, a supported `in:out` combo, a layout `col` or `row`, and variants `tcforge.gemm` knows (or `auto`;
    `NAME#S` / `NAME@MODE` as bench/gemm_small.py takes them)."""
    from tcforge.gemm.variants import SUPPORTED, VARIANTS

    if not isinstance(points, list):
        return "a point list is a JSON array"
    for i, p in enumerate(points):
        if not isinstance(p, dict) or not {"shape", "combo", "layout", "variants"} <= set(p):
            return f"point {i}: needs shape, combo, layout and variants"
        shape = p["shape"]
        if not (isinstance(shape, list) and len(shape) == 3 and all(isinstance(x, int) and x >= 1 for x in shape)):
            return f"point {i}: shape must be [M, N, K] of positive integers, got {shape!r}"
        in_kind, _, out_kind = str(p["combo"]).partition(":")
        if out_kind not in SUPPORTED.get(in_kind, ()):
            pairs = ", ".join(f"{i_}:{o}" for i_, outs in SUPPORTED.items() for o in outs)
            return f"point {i}: combo {p['combo']!r} is not a supported in:out pair ({pairs})"
        if p["layout"] not in ("col", "row"):
            return f"point {i}: layout must be 'col' or 'row', got {p['layout']!r}"
        for v in p["variants"]:
            name = str(v).split("@")[0].split("#")[0]
            if name != "auto" and name not in VARIANTS:
                return f"point {i}: unknown variant {v!r}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    try:
        points = json.loads(Path(argv[0]).read_text())
    except (OSError, ValueError) as exc:
        print(f"gemm_points: cannot read {argv[0]}: {exc}", file=sys.stderr)
        return 1
    problem = check_points(points)
    if problem:
        print(f"gemm_points: {argv[0]}: {problem}", file=sys.stderr)
        return 1
    rows: list[dict] = []
    t0 = time.time()
    for p in points:
        m, n, k = p["shape"]
        in_kind, out_kind = p["combo"].split(":")
        try:
            rows += run([(m, n, k)], [(in_kind, out_kind)], p["variants"], b_col=p["layout"] == "col")
        except Exception as exc:  # one failing point must not hide the others
            print(f"FAILED {p}: {exc}", flush=True)
        # written after every point: a run cut short keeps what it measured
        Path(argv[1]).write_text(json.dumps({"timing": "do_bench_cudagraph median", "rows": rows,
                                             "seconds": time.time() - t0}))
    print(f"done {len(rows)} rows {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
