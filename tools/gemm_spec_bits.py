"""Bit-identity of variant specs on the device: each shape and type pair run unsplit by every spec on the same fresh
random inputs (outputs poisoned first), every output compared bit for bit with the first spec's and checked for NaN.

An experiment's build (`hoist_es@epi_early=true`) against the shipped ones it must equal (`hoist_es`, `hoist`):
without split-K every element sums the same products in the same K order whatever the epilogue, so the outputs
must be the same bits. Exit status 1 on the first difference, naming it.

    python3 -m tools.gemm_spec_bits --variants hoist_es@epi_early=true,hoist_es,hoist
        [--shapes 4096x4096x1024,1000x1000x520,...] [--combos fp16:fp32:row,bf16:bf16:col,...]
"""

from __future__ import annotations

import argparse
import sys

# the spread epilogue's test shapes: whole and partial tiles, one k-tile, fewer k-tiles than held sub-tiles
SHAPES = "4096x4096x1024,1000x1000x520,8192x1024x136,2000x3000x64,300x500x16"
COMBOS = "fp16:fp32:row,bf16:fp32:col,e4m3:fp32:col,bf16:bf16:row,fp16:fp16:col,e4m3:bf16:col"


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """`MxNxK,...` as (M, N, K) tuples of positive integers."""
    shapes = []
    for item in filter(None, text.split(",")):
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"shape {item!r}: expected MxNxK with positive integers")
        shapes.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return shapes


def parse_combos(text: str) -> list[tuple[str, str, bool]]:
    """`in:out:row|col,...` as (in kind, out kind, B column-major); fp8 B is always column-major."""
    from tcforge.gemm.variants import IN_KINDS, OUT_KINDS

    combos = []
    for item in filter(None, text.split(",")):
        parts = item.split(":")
        if len(parts) != 3 or parts[0] not in IN_KINDS or parts[1] not in OUT_KINDS or parts[2] not in ("row", "col"):
            raise ValueError(f"type pair {item!r}: expected in:out:row|col with in one of {sorted(IN_KINDS)} and out "
                             f"one of {sorted(OUT_KINDS)}")
        if parts[0] == "e4m3" and parts[2] == "row":
            raise ValueError(f"type pair {item!r}: fp8 B is column-major (K-major), as torch._scaled_mm takes it")
        combos.append((parts[0], parts[1], parts[2] == "col"))
    return combos


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", required=True, help="two or more variant specs, the first the reference")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--combos", default=COMBOS)
    args = ap.parse_args(argv)
    from tcforge.errors import TcforgeError
    from tcforge.gemm.specs import check_specs

    try:
        shapes, combos = parse_shapes(args.shapes), parse_combos(args.combos)
        specs = check_specs([v for v in args.variants.split(",") if v], real=True)
    except (ValueError, TcforgeError) as e:
        ap.error(str(e))
    if len(specs) < 2:
        ap.error("--variants: two specs at least (the first is the reference)")

    import torch

    from tcforge.gemm.check import make_inputs, unsplit_outputs
    from tcforge.gemm.plan import LaunchOptions

    poison = LaunchOptions(poison_output=True)  # every launch fills its output with NaN first: a lost store shows
    n = 0
    for in_kind, out_kind, b_col in combos:
        for shape in shapes:
            a, b, sa, sb = make_inputs(*shape, in_kind, b_col, seed=sum(shape) + 5)
            outs = unsplit_outputs(specs, a, b, sa, sb, out_kind, options=poison)
            case = f"{in_kind}:{out_kind} B {'col' if b_col else 'row'} {'x'.join(map(str, shape))}"
            if torch.isnan(outs[0]).any():
                print(f"{case}: {specs[0]} left NaN (poison) in its output", file=sys.stderr)
                return 1
            for spec, out in zip(specs[1:], outs[1:], strict=True):
                if not torch.equal(outs[0], out):
                    diff = (outs[0].float() != out.float()).sum().item()
                    print(f"{case}: {spec} differs from {specs[0]} in {diff} elements", file=sys.stderr)
                    return 1
            n += 1
    print(f"{n} cases: {', '.join(specs[1:])} bit-identical to {specs[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
