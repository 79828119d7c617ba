"""A/B of one variant built from several kernel templates: the current source against cubins of earlier ones, in one
run, each timed beside cuBLAS (graphs replayed and NVML-metered as bench/gemm_energy.py does, A B A B rounds).

The earlier cubins come from other kernel cache directories (`--old-cache DIR[@ROWS],...`, e.g. ones filled before
a template edit); each launch is the current one with only the function swapped, so all run the same grid and
arguments — and the same tensor maps, except that `@ROWS` re-encodes C's store box with ROWS rows (the template
before the per-warp epilogue stores took a warpgroup's 64). Every build is first checked against cuBLAS on fresh
random inputs (rung 9 outputs are bit-identical to it where nothing splits). Writes bench/results/gemm_ab.json.

    python3 bench/gemm_ab.py --old-cache .cache/k23@64,.cache/k24@64 [--variant hoist] [--combos ...]
    python3 bench/gemm_ab.py --old-cache .cache/k39 --variant sw16c4 --shape 16x11008x4096 --b-col
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_energy import (  # noqa: E402
    check_against_cublas,
    cublas_kernel_name,
    cublas_peers,
    run_rounds,
    write_result,
)

OUT = Path(__file__).resolve().parent / "results" / "gemm_ab.json"


def old_function(prep: Any, build: Any, old_cache: Path, device: int, c_rows: int | None) -> Any:
    """`prep` launching the tcf_gemm function of `build`'s cubin in `old_cache` (same tag, the earlier template's
    hash) instead; `c_rows`: C's TMA store box re-encoded with that many rows."""
    from tcforge.gemm.codegen import KERNEL_NAME, REDUCE_NAME
    from tcforge.runtime import loader
    from tcforge.runtime.compile import CompiledModule

    tag = build.tag()
    found = [p for p in old_cache.glob(f"{tag}-*.cubin") if len(p.stem) == len(tag) + 33]
    if len(found) != 1:
        raise SystemExit(f"{old_cache}: expected one cubin of {tag}, found {len(found)}")
    module = loader.load(CompiledModule(found[0], found[0].stem[-32:], "sm_90a", "", {}), device)
    fn = module.function(KERNEL_NAME)
    fn.set_max_dynamic_shared(build.config.smem_bytes())
    fn.reduce = module.function(REDUCE_NAME)
    old = copy.copy(prep)
    old.fn = fn
    if c_rows is not None:
        from tcforge.gemm.api import tma_dtype
        from tcforge.gemm.variants import OUT_BYTES
        from tcforge.runtime import tensormap as tm

        ob = OUT_BYTES[build.out_kind]
        m, ldc = prep.c.shape
        old.args = list(prep.args)
        old.args[2] = tm.encode_tiled(tma_dtype(build.out_kind), ob, prep.c.data_ptr(), [prep.n, m], [ldc * ob],
                                      [128 // ob, c_rows], swizzle=128)
    return old


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old-cache", required=True,
                    help="cache directories of earlier templates' cubins, each DIR or DIR@ROWS (C box rows)")
    ap.add_argument("--variant", default="hoist")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--shape", default="", help="MxNxK instead of a --size cube (e.g. 16x11008x4096)")
    ap.add_argument("--b-col", action="store_true", help="16-bit B column-major too (fp8 B always is)")
    ap.add_argument("--combos", default="fp16:fp32,bf16:bf16,e4m3:bf16")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--per-graph", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)

    import torch

    from tcforge.gemm import api
    from tcforge.gemm.build import Build
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul
    from tcforge.runtime.nvml import Nvml

    props = torch.cuda.get_device_properties(0)
    nv = Nvml(0, f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0")
    m, n, k = (int(x) for x in args.shape.split("x")) if args.shape else (args.size,) * 3
    flop = 2.0 * m * n * k
    rows: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    new = args.variant
    olds = []
    for spec in args.old_cache.split(","):
        d, _, box_rows = spec.partition("@")
        olds.append((f"{args.variant}_{Path(d).name}", Path(d), int(box_rows) if box_rows else None))
    for ci, combo in enumerate(args.combos.split(",")):
        in_kind, out_kind = combo.split(":")
        od = api.torch_dtype(out_kind)
        kmajor = in_kind == "e4m3" or args.b_col
        a, b, sa, sb = make_inputs(m, n, k, in_kind, kmajor, seed=int(time.time()) % 100000 + ci)
        plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=args.variant)
        prep = api.prepare_plan(plan, a, b, sa, sb)
        if prep.splits != 1 or prep.sk_units:
            raise SystemExit(f"{args.variant} splits {combo} at {m}x{n}x{k}: A/B covers unsplit launches")
        build = Build(plan.variant.config, in_kind, out_kind, plan.b_kmajor, plan.a_kmajor)
        kernels: dict[str, Any] = cublas_peers(a, b, sa, sb, in_kind, out_kind)
        kernels[new] = prep
        for oname, odir, orows in olds:
            kernels[oname] = old_function(prep, build, odir, a.device.index or 0, orows)
        ref = (kernels.get("cublas_fast") or kernels["cublas"])().float()
        checks += check_against_cublas({k: kernels[k] for k in (new, *(o[0] for o in olds))}, ref, combo, out_kind)
        names = {kn: cublas_kernel_name(fn) for kn, fn in kernels.items() if kn.startswith("cublas")}
        rows += run_rounds(kernels, nv, combo=combo, rounds=args.rounds, seconds=args.seconds,
                           per_graph=args.per_graph, flop=flop, names=names)
    summary = []
    for combo in dict.fromkeys(r["combo"] for r in rows):
        sel = [r for r in rows if r["combo"] == combo]
        peer = "cublas_fast" if combo.startswith("e4m3") else "cublas"
        ref_ms = statistics.median(x["ms"] for x in sel if x["kernel"] == peer)
        for kname in dict.fromkeys(r["kernel"] for r in sel):
            mine = [x for x in sel if x["kernel"] == kname]
            ms = statistics.median(x["ms"] for x in mine)
            summary.append(dict(combo=combo, kernel=kname, peer=peer, ms=ms, tflops=flop / ms / 1e9,
                                speed_ratio=ref_ms / ms, mj=statistics.median(x["joules"] for x in mine) * 1e3,
                                sm_mhz=statistics.median(x["sm_mhz"] for x in mine),
                                per_round_ratio=[ref["ms"] / x["ms"] for ref, x in zip(
                                    [y for y in sel if y["kernel"] == peer], mine, strict=True)]))
            s = summary[-1]
            print(f"{combo:10s} {kname:11s} {s['tflops']:7.1f} TFLOP/s  x{s['speed_ratio']:.3f} of {peer} "
                  f"(rounds {' '.join(f'{r:.3f}' for r in s['per_round_ratio'])})  {s['mj']:6.1f} mJ "
                  f"{s['sm_mhz']:5.0f} MHz", flush=True)
    write_result(args.out, "gemm_ab.py", argv, device=props.name, size=args.size, shape=[m, n, k], variant=args.variant,
                 old_cache=args.old_cache, checks=checks, rows=rows, summary=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
