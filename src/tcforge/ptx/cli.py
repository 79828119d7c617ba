"""`tcforge spec FILE... [--entry GLOB] [--format text|json|md] [--list] [--strict]`: one report per entry of every
input, like a binary-utilities tool; inputs are PTX files, `-` (stdin) or binaries holding PTX (tcforge extract)."""

from __future__ import annotations

import fnmatch
import json
import sys
from pathlib import Path

from tcforge.cliutil import ArgumentParser, Counter, output_file, show_progress
from tcforge.errors import TcforgeError
from tcforge.extract import ptx_sources
from tcforge.layers import rr_stack
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.ir import Function, Module
from tcforge.ptx.module import read_module
from tcforge.ptx.phases import PHASE_RULES
from tcforge.ptx.report import render_markdown, render_text

BIG_INPUT = 5 << 20  # bytes past which reading is announced on a terminal
SECONDS_PER_MB = 0.6  # reading and analysing, 2-core CI machine (a 50 MB module: 25-30 s)


def build_parser() -> ArgumentParser:
    """The argparse parser of `tcforge spec`."""
    p = ArgumentParser(prog="tcforge spec", description="Read kernels' PTX and report, per entry, the tensor-core "
                       "phases, instruction and data types, operands, epilogues, parameter block, cut ABI and memory "
                       "traffic. Inputs may be PTX files, '-' (stdin), or binaries holding PTX (ELF, PE, .fatbin).")
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX file, '-' for stdin, or a binary with embedded PTX")
    p.add_argument("--entry", metavar="GLOB", help="only entries (or .funcs) whose name matches, e.g. 'gemm_*' "
                   "(default: every .entry)")
    p.add_argument("--format", choices=("text", "json", "md"), default="text", help="output format (default text)")
    p.add_argument("--list", action="store_true", help="list each module's entries and functions and exit")
    p.add_argument("--phase-rule", choices=PHASE_RULES, default="stream",
                   help="how MMA statements group into phases (docs/spec.md; default stream)")
    p.add_argument("--block", type=_block, help="launch block shape X[,Y[,Z]] bounding %%tid.* (default: .reqntid, "
                   "else the .maxntid thread count per dimension)")
    p.add_argument("--layer", metavar="NAME", help="compare each entry with a denoiser Swin layer's public facts "
                   "(enc0..enc5, dec0..dec4; auto: the layer the entry's name names)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a reported entry has no tensor-core instruction")
    p.add_argument("--quiet", action="store_true", help="no progress and no warnings on stderr")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    return p


def _block(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise TcforgeError(f"--block expects X[,Y[,Z]] positive integers, got {text!r}")
    return dims


def read_inputs(files: list[str], quiet: bool = False) -> list[Module]:
    """Every input's PTX modules: a file, stdin (`-`, read once) or each PTX entry of a binary."""
    if files.count("-") > 1:
        raise TcforgeError("'-' (stdin) may be given once")
    modules = []
    for f in files:
        if f == "-":
            sources = ptx_sources("<stdin>", sys.stdin.buffer.read())
        else:
            p = Path(f)
            if p.is_dir():
                raise TcforgeError(f"{f}: is a folder, not a PTX file or binary")
            try:
                data = p.read_bytes()
            except OSError as exc:
                raise TcforgeError(f"{f}:1:1: cannot read file: {exc.strerror or exc}") from None
            if len(data) > BIG_INPUT and show_progress(quiet):
                print(f"tcforge spec: reading {f} ({len(data) / 1e6:.1f} MB, about "
                      f"{len(data) / 1e6 * SECONDS_PER_MB:.0f} s)...", file=sys.stderr, flush=True)
            sources = ptx_sources(f, data)
        for label, text in sources:
            if len(text) > BIG_INPUT and show_progress(quiet):  # lines read, on a terminal
                lines = text.count("\n" if isinstance(text, str) else b"\n") + 1
                with Counter(lines, f"reading {label}", "line", quiet) as bar:
                    done = [0]

                    def advance(line: int, bar: Counter = bar, done: list[int] = done) -> None:
                        bar.update(line - done[0])
                        done[0] = line

                    modules.append(read_module(text, label, progress=advance))
            else:
                modules.append(read_module(text, label))
    return modules


def select(module: Module, pattern: str | None) -> list[Function]:
    """The functions to report: every .entry, or those (entries and .funcs) whose name matches the glob."""
    bodies = [f for f in module.functions if f.has_body]
    if pattern is None:
        return [f for f in bodies if f.kind == "entry"]
    return [f for f in bodies if fnmatch.fnmatchcase(f.name, pattern)]


def _list(module: Module) -> list[str]:
    lines = []
    for f in module.functions:
        if f.has_body:
            lines.append(f"{f.kind:<5} {f.name}  lines {f.line}-{f.end_line}  {len(f.statements)} statements  "
                         f"params {len(f.params)} ({f.param_block_size} bytes)")
    return lines


def _no_mma_warning(an: Analysis) -> str:
    names = {f.name for f in an.module.functions}
    calls = sorted({getattr(op, "name", None) for s in an.fn.statements if s.opcode.startswith("call")
                    for op in s.operands} & names)
    why = f"{an.module.file}: {an.fn.kind} {an.fn.name} has no tensor-core instruction (mma, wmma, wgmma, tcgen05)"
    if calls:
        why += (f"; calls are followed and reach none either (it calls {', '.join(calls[:5])}"
                f"{' ...' if len(calls) > 5 else ''})")
    return why


def main(argv: list[str]) -> int:
    """Run the command; malformed PTX raises PTXSyntaxError (`FILE:LINE:COL: message`, exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    out_path = output_file(args.output, "-o")
    fixed = None if args.layer in (None, "auto") else rr_stack.lookup(args.layer)
    modules = read_inputs(args.files, args.quiet)
    several = len(modules) > 1
    if args.list:
        lines = []
        for m in modules:
            lines += ([f"{m.file}:"] if several else []) + [("  " if several else "") + s for s in _list(m)]
        return _emit("\n".join(lines) + "\n", out_path)
    chosen = [(m, f) for m in modules for f in select(m, args.entry)]
    if not chosen:
        names = ", ".join(f.name for m in modules for f in m.functions if f.has_body) or "none"
        what = f"matches {args.entry!r}" if args.entry else "is an .entry"
        raise TcforgeError(f"{', '.join(m.file for m in modules)}: no function {what}; functions: {names}")
    reports, without_mma = [], 0
    with Counter(len(chosen), "analysing", "entry", quiet=args.quiet or len(chosen) < 2) as bar:
        for m, f in chosen:
            an = Analysis(m, f, args.phase_rule, args.block)
            if not an.phases:
                without_mma += 1
                if not args.quiet:
                    print(f"tcforge spec: warning: {_no_mma_warning(an)}", file=sys.stderr)
            reports.append(an)
            bar.update()
    docs = [an.to_dict() for an in reports]
    layers = [None if args.layer is None else fixed or rr_stack.layer_of(an.fn.name) for an in reports]
    facts = [None if layer is None else rr_stack.compare(layer, doc) for layer, doc in zip(layers, docs, strict=True)]
    if args.format == "json":
        for doc, layer, fs in zip(docs, layers, facts, strict=True):
            if layer is not None:
                doc["public_facts"] = {"layer": layer.name, "facts": [vars(f) for f in fs]}
        text = json.dumps(docs[0] if len(docs) == 1 else docs, indent=1) + "\n"
    else:
        render = render_text if args.format == "text" else render_markdown
        parts = []
        for an, layer, fs in zip(reports, layers, facts, strict=True):
            block = "" if layer is None else rr_stack.render(layer, fs)
            parts.append(render(an) + (block if args.format == "text" else _facts_markdown(block)))
        text = "\n".join(parts)
    _emit(text, out_path)
    return 1 if args.strict and without_mma else 0


def _facts_markdown(block: str) -> str:
    return f"\n## Public facts\n\n```\n{block}```\n" if block else ""


def _emit(text: str, path: Path | None) -> int:
    if path is None:
        sys.stdout.write(text)
    else:
        path.write_text(text)
    return 0
