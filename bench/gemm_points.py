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


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    points = json.loads(Path(argv[0]).read_text())
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
