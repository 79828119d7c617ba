"""Launch rung 9 (and its no-stores diagnostic build) at 4096^3 for an ncu profile of where its warps stall, per SASS
instruction: how much of a tile's time the epilogue holds the consumer warpgroups (docs/gemm.md, "What a 4096³ GEMM
spends its energy on"). Each launch runs on fresh random inputs after a warm-up; cuBLAS's kernel once for comparison.

    ncu --clock-control none --section WarpStateStats --section SourceCounters --section SpeedOfLight \\
        --kernel-name regex:'tcf_gemm|nvjet' --launch-skip 0 -o epi \\
        python3 -m tools.gemm_ncu_epilogue [combo ...] [--variants hoist,hoist@diag=2]   # default e4m3:bf16 fp16:fp32
    ncu --import epi.ncu-rep --page source --csv --print-source sass > epi_sass.csv
    python3 -m tools.gemm_ncu_epilogue --summarize epi_sass.csv

The summary gives, per profiled kernel, its warp-stall samples by reason and the share of samples on instructions
that run once per tile per consumer warp (executed 512 tiles x 8 warps = 4096 times at 4096^3 with 128x256 tiles: the
epilogue, the per-tile scheduling and, with the last k-tile in two N halves, that k-tile). `--variants` takes variant
specs (tcforge.gemm.specs; default rung 9 and its no-stores build): the spread epilogue's per-k-tile branches each
run once per tile too.
"""

from __future__ import annotations

import sys


def summarize(path: str, per_tile: int = 4096) -> None:
    """Print each kernel's stall samples by reason and the share on once-per-tile instructions."""
    import collections
    import csv

    kernels: list[tuple[str, list[str], list[list[str]]]] = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if row and row[0] == "Kernel Name":
                kernels.append((row[1], [], []))
            elif row and row[0] == "Address" and kernels:
                kernels[-1][1].extend(row)
            elif row and kernels:
                kernels[-1][2].append(row)
    for name, head, rows in kernels:
        ix = {h: i for i, h in enumerate(head)}
        samples = ix["Warp Stall Sampling (All Samples)"]
        reasons = [h for h in head if h.startswith("stall_") and "Not Issued" not in h]
        total = sum(int(r[samples] or 0) for r in rows)
        tile = [r for r in rows if r[ix["Instructions Executed"]] == str(per_tile)]
        tile_n = sum(int(r[samples] or 0) for r in tile)
        why = collections.Counter({h[6:]: sum(int(r[ix[h]] or 0) for r in tile) for h in reasons})
        every = collections.Counter({h[6:]: sum(int(r[ix[h]] or 0) for r in rows) for h in reasons})
        print(f"{name[:48]:48s} samples {total:6d}; once-per-tile instructions: {len(tile)} holding "
              f"{tile_n / max(total, 1):.1%} of samples ({', '.join(f'{k} {v}' for k, v in why.most_common(5))}); "
              f"all: {', '.join(f'{k} {v}' for k, v in every.most_common(6))}")


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--summarize":
        summarize(argv[1])
        return 0
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("combos", nargs="*", default=["e4m3:bf16", "fp16:fp32"])
    ap.add_argument("--variants", default="hoist,hoist@diag=2", help="variant specs, launched in this order")
    args = ap.parse_args(argv)
    from tcforge.errors import TcforgeError
    from tcforge.gemm.specs import check_specs, plan_spec

    try:  # a malformed spec stops here, before anything is launched
        specs = check_specs(args.variants.split(","))
    except TcforgeError as e:
        ap.error(str(e))

    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import cublas, make_inputs
    for i, combo in enumerate(args.combos):
        in_kind, out_kind = combo.split(":")
        od = api.torch_dtype(out_kind)
        a, b, sa, sb = make_inputs(4096, 4096, 4096, in_kind, in_kind == "e4m3", seed=11 + i)
        for spec in specs:
            api.prepare_plan(plan_spec(a, b, spec, out_dtype=od, scale_a=sa, scale_b=sb), a, b, sa, sb)()
        cublas(a, b, sa, sb, out_kind, fast_accum=in_kind == "e4m3")
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
