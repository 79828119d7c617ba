"""Launch tcforge variants and cuBLAS side by side at one shape, for an ncu comparison of the same GEMM (cycles at a
locked clock, instructions, bytes at each level). Per type pair: cuBLAS once (the reference), each variant checked
against it with bench/gemm_energy.py's gate (poisoned output, bounded error; a failure stops the run), then each
variant `--repeats` times and cuBLAS `--repeats` times, every launch on fresh random inputs. `--summarize CSV` prints
the metrics per run of consecutive launches of one kernel, so the columns per type pair read: cuBLAS's reference,
ours (the check and the repeats), cuBLAS. Launches of one kernel name in a row share a column: compare variants in
separate calls. A variant may be a spec with kernel-config overrides (`tcforge.gemm.variants`: `hoist@diag=2` is rung 9
without its stores); diagnostic builds compute no C and skip the check.

    ncu --clock-control base --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,... \\
        --kernel-name regex:'tcf_gemm|nvjet' python3 -m tools.gemm_ncu_pair --shape 2048x2048x2048 \\
        --combos bf16:bf16 --variants hoist > pair.csv
    python3 -m tools.gemm_ncu_pair --summarize pair.csv

(run from the repository root: it imports bench/gemm_energy.py's check as `bench.gemm_energy`)
"""

from __future__ import annotations

import argparse
import sys


def summarize(path: str) -> None:
    """Median of each metric over each run of consecutive launches of one kernel, one column per run (launch
    order: per type pair, each variant's repeats, then cuBLAS's)."""
    import csv
    import statistics

    vals: dict[str, dict[str, list[float]]] = {}
    units: dict[str, str] = {}
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 10]
    head, body = rows[0], rows[1:]
    ix = {h: i for i, h in enumerate(head)}
    group, last_id, last_name = 0, None, None
    for r in body:
        if r[ix["ID"]] != last_id:  # a new launch: consecutive launches of one kernel are one group (one column)
            name = r[ix["Kernel Name"]][:24]
            group += name != last_name
            last_id, last_name = r[ix["ID"]], name
        if not r[ix["Metric Value"]].replace(",", "").replace(".", "").isdigit():
            continue
        kernel = f"{group}:{last_name}"
        metric = r[ix["Metric Name"]]
        units[metric] = r[ix["Metric Unit"]]
        vals.setdefault(kernel, {}).setdefault(metric, []).append(float(r[ix["Metric Value"]].replace(",", "")))
    kernels = list(vals)
    metrics = sorted({m for k in kernels for m in vals[k]})
    print(f"{'metric':64s}" + "".join(f"{k[:24]:>26s}" for k in kernels))
    for m in metrics:
        cells = []
        for k in kernels:
            v = vals[k].get(m)
            cells.append(f"{statistics.median(v):26.4g}" if v else f"{'-':>26s}")
        print(f"{(m + ' [' + units[m] + ']')[:64]:64s}" + "".join(cells))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--summarize", default=None, help="print the CSV ncu wrote (--csv) as a table and exit")
    ap.add_argument("--shape", default="2048x2048x2048")
    ap.add_argument("--combos", default="bf16:bf16")
    ap.add_argument("--variants", default="hoist")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--b-col", action="store_true", help="16-bit B column-major (fp8 B always is)")
    ap.add_argument("--l2-promotion", type=int, default=None, choices=(0, 1, 2, 3),
                    help="L2 promotion of every operand tensor map (0 none .. 3 256B; default: plan.l2_promotion)")
    ap.add_argument("--b-pad", type=int, default=0,
                    help="B's leading dimension this many elements longer than its rows (both kernels get the view)")
    args = ap.parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
        return 0
    from tcforge.errors import TcforgeError
    from tcforge.gemm.variants import check_specs, computes_c, plan_spec

    try:  # a malformed spec stops here, before anything is launched
        check_specs(args.variants.split(","))
    except TcforgeError as e:
        ap.error(str(e))

    import torch
    from bench.gemm_energy import check_against_cublas

    from tcforge.gemm import api
    from tcforge.gemm.check import cublas, make_inputs
    from tcforge.gemm.plan import LaunchOptions

    m, n, k = (int(x) for x in args.shape.split("x"))
    options = LaunchOptions(l2_promotion=args.l2_promotion)

    def launch(v: str, in_kind: str, out_kind: str, seed: int) -> object:
        """Variant v prepared on fresh inputs (seeded)."""
        a, b, sa, sb = make_inputs(m, n, k, in_kind, in_kind == "e4m3" or args.b_col, seed=seed, b_pad=args.b_pad)
        plan = plan_spec(a, b, v, out_dtype=api.torch_dtype(out_kind), scale_a=sa, scale_b=sb)
        return api.prepare_plan(plan, a, b, sa, sb, options=options)

    for i, combo in enumerate(args.combos.split(",")):
        in_kind, out_kind = combo.split(":")
        fp8 = in_kind == "e4m3"
        a, b, sa, sb = make_inputs(m, n, k, in_kind, fp8 or args.b_col, seed=100 * i, b_pad=args.b_pad)
        ref = cublas(a, b, sa, sb, out_kind, fast_accum=fp8).float()
        variants = args.variants.split(",")
        checked = [v for v in variants if computes_c(v)]
        check_against_cublas({v: launch(v, in_kind, out_kind, 100 * i) for v in checked}, ref, combo, out_kind)
        for v in variants:
            for r in range(args.repeats):
                launch(v, in_kind, out_kind, 100 * i + 1 + r)()
        for r in range(args.repeats):
            a, b, sa, sb = make_inputs(m, n, k, in_kind, fp8 or args.b_col, seed=100 * i + 50 + r,
                                     b_pad=args.b_pad)
            cublas(a, b, sa, sb, out_kind, fast_accum=fp8)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
