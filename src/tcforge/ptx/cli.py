"""`tcforge spec FILE.ptx [--entry NAME] [--format text|json|md] [--list] [--phase-rule RULE]`."""

from __future__ import annotations

import argparse
import sys

from tcforge.ptx.analysis import Analysis
from tcforge.ptx.module import read_module_file
from tcforge.ptx.phases import PHASE_RULES
from tcforge.ptx.report import render_json, render_markdown, render_text


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of `tcforge spec`."""
    p = argparse.ArgumentParser(prog="tcforge spec", description="Read a kernel's PTX and report its tensor-core "
                                "phases, operands, epilogues, parameter block, cut ABI and memory traffic.")
    p.add_argument("file", help="PTX file")
    p.add_argument("--entry", help="entry (or .func) name; required when the module has several entries")
    p.add_argument("--format", choices=("text", "json", "md"), default="text", help="output format (default text)")
    p.add_argument("--list", action="store_true", help="list the module's entries and functions and exit")
    p.add_argument("--phase-rule", choices=PHASE_RULES, default="stream",
                   help="how MMA statements group into phases (docs/spec.md; default stream)")
    p.add_argument("--block", type=_block, help="launch block shape X[,Y[,Z]] bounding %%tid.* (default: .reqntid, "
                   "else the .maxntid thread count per dimension)")
    p.add_argument("-o", "--output", help="write the report here instead of stdout")
    return p


def _block(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise argparse.ArgumentTypeError(f"--block expects X[,Y[,Z]] positive integers, got {text!r}")
    return dims


def main(argv: list[str]) -> int:
    """Run the command; malformed PTX raises PTXSyntaxError (`FILE:LINE:COL: message`, exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    module = read_module_file(args.file)
    if args.list:
        lines = []
        for f in module.functions:
            if not f.has_body:
                continue
            lines.append(f"{f.kind:<5} {f.name}  lines {f.line}-{f.end_line}  {len(f.statements)} statements  "
                         f"params {len(f.params)} ({f.param_block_size} bytes)")
        text = "\n".join(lines) + "\n"
    else:
        an = Analysis(module, module.function(args.entry), args.phase_rule, args.block)
        text = {"text": render_text, "json": render_json, "md": render_markdown}[args.format](an)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
