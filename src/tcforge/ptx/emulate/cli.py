"""`tcforge emulate FILE --entry NAME --grid X,Y,Z --block X,Y,Z --args ARGS.npz --numerics ada|hopper
--out OUT.npz [--cluster X,Y,Z]`: run a kernel's PTX on the CPU and write the global buffers it stored to
(docs/emulate.md has the .npz schema)."""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

import numpy as np

from tcforge.cliutil import output_file
from tcforge.extract import ptx_text
from tcforge.ptx.emulate.api import NUMERICS, emulate
from tcforge.ptx.emulate.machine import EmulationError


def _dims(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X[,Y[,Z]] positive integers, got {text!r}") from None
    if not 1 <= len(vals) <= 3 or any(v <= 0 for v in vals):
        raise argparse.ArgumentTypeError(f"expected X[,Y[,Z]] positive integers, got {text!r}")
    return vals


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tcforge emulate", description=__doc__.split("\n\n")[0])
    p.add_argument("ptx", type=Path, help="the PTX file, or a binary holding PTX (ELF, PE, .fatbin)")
    p.add_argument("--arch", metavar="GLOB", help="in a binary with several PTX entries, the one whose architecture "
                   "matches, e.g. 'compute_90a'")
    p.add_argument("--entry", help="kernel entry (default: the module's only entry)")
    p.add_argument("--grid", type=_dims, required=True, help="grid X,Y,Z")
    p.add_argument("--block", type=_dims, required=True, help="block X,Y,Z")
    p.add_argument("--args", type=Path, required=True, help=".npz of parameters and buffers (docs/emulate.md)")
    p.add_argument("--numerics", choices=NUMERICS, default="hopper", help="mma model (default hopper)")
    p.add_argument("--out", type=Path, required=True, help=".npz receiving every global buffer the kernel wrote")
    p.add_argument("--dynamic-shared", type=int, default=0, help="bytes of dynamic shared memory")
    p.add_argument("--cluster", type=_dims, help="cluster X,Y,Z (default: the kernel's .reqnctapercluster, else none)")
    return p


def load_args(path: Path) -> dict:
    """The argument dict of an .npz (0-d unicode arrays are buffer names)."""
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise EmulationError(f"{path}: not an .npz archive (numpy.savez writes one: one array per argument)")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise EmulationError(f"{path}: not a readable .npz ({exc})") from None


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    output_file(args.out, "--out", stdout=False)
    label, text = ptx_text(args.ptx, args.arch)
    stats: dict = {}
    out = emulate(text, args.entry, args.grid, args.block, load_args(args.args), args.numerics, file=label,
                  dynamic_shared=args.dynamic_shared, stats=stats, cluster=args.cluster)
    np.savez(args.out, **out)
    ctas = stats["ctas"]
    print(f"{args.ptx}: {ctas} CTA{'s' * (ctas != 1)}, {stats['warp_instructions']:,} warp instructions in "
          f"{stats['seconds']:.2f} s ({stats['warp_instructions_per_second']:,.0f}/s); wrote "
          f"{', '.join(out) or 'nothing'} to {args.out}", file=sys.stderr)
    return 0
