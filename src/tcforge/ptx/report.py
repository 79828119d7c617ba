"""Rendering of an Analysis as text (the phase table plus stages, operands, parameters, cut ABI, traffic), Markdown
(a report in the style of the enc5 analysis) or JSON (the stable document of docs/spec.md).

The phase table is in the enc5 analysis's column layout (`PhaseRow`, `format_phase_table`: reusable by any code that
describes a fused layer). Columns (exactly, in order): `#`, stmt range, M, N, K, tiles, mma, grid, weight bytes, bias
bytes, epi. When every value fits, the header is byte-for-byte the layer-spec tool's:
`  # stmt range    M    N     K tiles  mma  grid           weight bytes                 bias bytes    epi`;
a wider value widens its column (the header follows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tcforge.ptx.analysis import Analysis

# the phase table ------------------------------------------------------------------------------------------------------

COLUMNS = (("#", 3, ">"), ("stmt range", 10, "<"), ("M", 4, ">"), ("N", 4, ">"), ("K", 5, ">"), ("tiles", 5, ">"),
           ("mma", 4, ">"), ("grid", 5, ">"), ("weight bytes", 22, ">"), ("bias bytes", 26, ">"), ("epi", 6, ">"))
HEADER = "  # stmt range    M    N     K tiles  mma  grid           weight bytes                 bias bytes    epi"


@dataclass
class PhaseRow:
    """One row: statement numbers are 1-based; byte ranges are `lo..hi` text (hi exclusive) or `-`."""

    index: int
    first: int
    last: int
    M: int | None
    N: int | None
    K: int | None
    tiles: int
    mma: int
    grid: str
    weight: str = "-"
    bias: str = "-"
    epi: int = 0

    def cells(self) -> list[str]:
        """The row as the eleven column strings."""
        def num(v: int | None) -> str:
            return "?" if v is None else str(v)

        return [str(self.index), f"s{self.first}-s{self.last}", num(self.M), num(self.N), num(self.K),
                str(self.tiles), str(self.mma), self.grid, self.weight or "-", self.bias or "-", str(self.epi)]


def byte_range(lo: int | None, hi: int | None, terms: dict[str, int] | None = None, lane_terms: bool = False) -> str:
    """`lo..hi` plus the per-thread terms as `+C*term` (lane terms only when `lane_terms`); `-` when absent."""
    if lo is None or hi is None:
        return "-"
    s = f"{lo}..{hi}"
    for name, coef in (terms or {}).items():
        if not lane_terms and "%laneid" in name:
            continue
        s += f"+{name}" if coef == 1 else f"+{coef}*{name}"
    return s


def format_phase_table(rows: list[PhaseRow], hide_empty_operands: bool = False) -> str:
    """The header and one line per row, columns widened where a value needs it; `hide_empty_operands` drops the
    weight/bias columns when no row has such an operand (a kernel that is not enc5-shaped)."""
    cells = [r.cells() for r in rows]
    keep = list(range(len(COLUMNS)))
    if hide_empty_operands and all(c[8] == "-" and c[9] == "-" for c in cells):
        keep = [i for i in keep if i not in (8, 9)]
    widths = {i: max([COLUMNS[i][1]] + [len(c[i]) for c in cells]) for i in keep}

    def line(values: list[str]) -> str:
        out = []
        for i in keep:
            v, align, w = values[i], COLUMNS[i][2], widths[i]
            out.append(v.ljust(w) if align == "<" else v.rjust(w))
        return " ".join(out).rstrip()

    return "\n".join([line([c[0] for c in COLUMNS])] + [line(c) for c in cells])


# the reports ----------------------------------------------------------------------------------------------------------


def phase_rows(an: Analysis) -> list[PhaseRow]:
    """The analysis's phases as table rows."""
    rows = []
    for pr in an.phases:
        ph = pr.phase
        w = pr.weight
        b = pr.bias
        rows.append(PhaseRow(ph.index, pr.first, pr.last, ph.M, ph.N, ph.K, len(ph.chains), len(ph.mmas), ph.grid,
                             byte_range(w.lo, w.hi, w.terms) if w else "-",
                             byte_range(b.lo, b.hi, b.terms) if b else "-", pr.epilogue_count))
    return rows


def _sources(pr) -> str:
    parts = []
    for role in ("A", "B", "C"):
        c = pr.sources.get(role)
        if c:
            parts.append(f"{role}: " + ", ".join(f"{k} x{v}" for k, v in c.most_common()))
    return "; ".join(parts)


def _terms(t: dict[str, int]) -> str:
    return " ".join(f"+{k}" if v == 1 else f"+{v}*{k}" for k, v in t.items()) or "(no per-thread terms)"


def render_text(an: Analysis) -> str:
    """The text report: header line, phase table, stages, operand bytes, parameters, extents, cut ABI, traffic."""
    fn = an.fn
    d_abi = an.cut_abi()
    out = [f"{an.module.file}: entry {fn.name} (lines {fn.line}-{fn.end_line}, {len(fn.statements)} statements, "
           f"{sum(len(p.phase.mmas) for p in an.phases)} mma in {len(an.phases)} phases, rule {an.rule})", ""]
    has_operands = any(pr.weight or pr.bias for pr in an.phases)
    out.append(format_phase_table(phase_rows(an), hide_empty_operands=True))
    out.append("")
    if has_operands:
        out.append("weight/bias bytes: thread with all terms zero, hi exclusive; +C*term = per-thread terms other than "
                   "%laneid (see operands below)")
        out.append("")
    if an.phases:
        out.append("instructions (data types in the mnemonic's order):")
        for pr in an.phases:
            via = f"  in call {' > '.join(pr.calls)}" if pr.calls else ""
            out.append(f"  P{pr.phase.index}: {pr.instruction}  types {instruction_types(pr.instruction) or '-'}{via}")
        out.append("")
    out.append("stages:")
    out.append("  prologue: " + (", ".join(map(str, an.prologue_stages)) or "-"))
    for pr in an.phases:
        ph = pr.phase
        out.append(f"  after phase {ph.index} ({ph.M}x{ph.N}x{ph.K}, {len(ph.chains)} chains of {ph.chain_length}): "
                   + (", ".join(map(str, pr.stages)) or "-"))
        src = _sources(pr)
        if src:
            out.append(f"      sources {src}")
    out.append("")
    if has_operands:
        out.append("operands (lo..hi exclusive, per-thread terms):")
    for pr in an.phases:
        for role, ob in (("weight", pr.weight), ("bias", pr.bias)):
            if ob is not None:
                ext = "unbounded" if ob.extent is None else str(ob.extent)
                out.append(f"  P{pr.phase.index} {role}: {ob.base} + [{ob.lo}, {ob.hi}) {_terms(ob.terms)}; "
                           f"any thread < {ext}; loads s{ob.loads[0]}..s{ob.loads[-1]} ({len(ob.loads)})")
    if has_operands:
        out.append("")
    out.append(f"parameter block ({fn.param_block_size} bytes), offsets read:")
    for r in an.param_reads():
        st = r["statements"]
        out.append(f"  +{r['offset']:<5} {r['type']:<8} s{st[0]}" + (f" (+{len(st) - 1} more)" if len(st) > 1 else ""))
    out.append("")
    out.append("image extent (exclusive end of every byte read through each pointer parameter):")
    for k, v in an.image_extent().items():
        out.append(f"  {k}: {'unbounded' if v is None else v}")
    out.append("")
    out.append("cut ABI:")
    lb = d_abi["launch_bounds"]
    out.append("  launch bounds: " + (", ".join(f".{k} {','.join(map(str, v))}" for k, v in lb.items()) or "none"))
    out.append("  special registers: " + " ".join(d_abi["special_registers"]))
    out.append(f"  parameter block {d_abi['param_block_bytes']} bytes, offsets {d_abi['param_offsets']}")
    for s in d_abi["shared"]:
        out.append(f"  shared {s['name']}: {s['bytes'] if s['bytes'] is not None else 'extern'} bytes")
    reg = d_abi.get("region")
    if reg:
        out.append(f"  mma region: cut s{reg['first']}-s{reg['last']} (file lines {reg['first_line']}-"
                   f"{reg['last_line']}), {reg['mma']} mma in {reg['phases']} phases")
        out.append(f"  live-in ({len(reg['live_in'])}): " + _clip(reg["live_in"]))
        out.append(f"  live-out ({len(reg['live_out'])}): " + _clip(reg["live_out"]))
    loops = an.loops()
    if loops:
        out.append("  loops: " + ", ".join(f"s{lp['header']}-s{lp['latch']}" for lp in loops))
    out.append("")
    out.append("memory traffic:")
    out.append(f"  {'stage':<8} {'kind':<13} {'space':<7} {'count':>5} {'stmts':<13} {'base':<10} "
               f"{'offsets (step)':<24} {'terms':<32} consumer")
    for r in an.traffic:
        step = f" ({r['step']})" if r["step"] else ""
        rng = f"{r['lo']}..{r['hi']}{step}"
        base = r["base"] if len(r["base"]) <= 10 else r["base"][:4] + "~" + r["base"][-5:]
        span = f"s{r['first']}-s{r['last']}"
        out.append(f"  {r['stage']:<8} {r['kind']:<13} {r['space']:<7} {r['count']:>5} {span:<13} {base:<10} "
                   f"{rng:<24} {_terms(r['terms']):<32} {', '.join(r['consumer']) or '-'}")
    return "\n".join(out) + "\n"


_DATA_TYPES = {"f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "s8", "u8", "s4", "u4",
               "b1", "s32", "f16x2", "bf16x2", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4", "f8", "i8", "kind::f16",
               "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4"}


def instruction_types(instruction: str) -> str:
    """The data-type suffixes of an MMA mnemonic, in order: `mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32`
    -> `f32 e4m3 e4m3 f32` (D A B C); several mnemonics (`A | B`) give each's."""
    parts = []
    for mnemonic in instruction.split("|"):
        parts.append(" ".join(t for t in mnemonic.strip().split(".") if t in _DATA_TYPES))
    return " | ".join(p for p in parts if p)


def _clip(items: list[str], n: int = 24) -> str:
    return " ".join(items[:n]) + (f" ... (+{len(items) - n})" if len(items) > n else "")


def render_json(an: Analysis) -> str:
    """The JSON document (stable keys; docs/spec.md)."""
    return json.dumps(an.to_dict(), indent=1, sort_keys=False) + "\n"


def render_markdown(an: Analysis) -> str:
    """A Markdown report in the style of the enc5 analysis: conventions, phase table, epilogues, traffic."""
    fn = an.fn
    out = [f"# {fn.name}", "",
           f"Read out of `{an.module.file}`, entry `{fn.name}` (file lines {fn.line}-{fn.end_line}), "
           f"{len(fn.statements)} statements, phase rule `{an.rule}`.", "",
           "## 0. Conventions", "",
           "- `sNNNN` is a statement number: instructions and labels of the entry body counted from 1; directives, "
           "`.loc` lines and scope braces are not statements; a multi-line instruction is one statement. `LNNNNN` is "
           "its first physical line. Calls that reach tensor-core instructions are followed: the callee's statements "
           "are numbered in place of the call, and a phase inside a call names the chain `callee@LINE`.",
           "- Byte ranges are `lo..hi` with `hi` exclusive, for the thread whose per-thread terms are all zero; the "
           "terms give the per-thread addends.", "",
           "## 1. Phase table", "", "```", format_phase_table(phase_rows(an)), "```", "",
           "| # | lines | instruction | chains x length | A sources | B sources | C sources |",
           "|---|---|---|---|---|---|---|"]
    for pr in an.phases:
        ph = pr.phase
        cells = [", ".join(f"{k} x{v}" for k, v in pr.sources.get(r, {}).most_common()) or "-" for r in "ABC"]
        via = f" (in call {' > '.join(f'`{c}`' for c in pr.calls)})" if pr.calls else ""
        out.append(f"| {ph.index} | L{pr.first_line}-L{pr.last_line} | `{pr.instruction}`{via} | {len(ph.chains)} x "
                   f"{ph.chain_length} | " + " | ".join(cells) + " |")
    out += ["", "## 2. Operand bytes", "", "| phase | role | base | bytes | per-thread terms | any thread < | loads |",
            "|---|---|---|---|---|---|---|"]
    for pr in an.phases:
        for role, ob in (("weight (B)", pr.weight), ("bias (C)", pr.bias)):
            if ob is not None:
                out.append(f"| {pr.phase.index} | {role} | {ob.base} | [{ob.lo}, {ob.hi}) | {_terms(ob.terms)} | "
                           f"{'unbounded' if ob.extent is None else ob.extent} | {len(ob.loads)} from s{ob.loads[0]} |")
    out += ["", "## 3. Epilogues", "", "| epilogue | range | stmts | stages | top ops |", "|---|---|---|---|---|"]
    out.append(f"| prologue | s1-s{an.prologue[1] + 1} | {an.prologue[1] + 1} | "
               f"{', '.join(map(str, an.prologue_stages)) or '-'} | - |")
    for pr in an.phases:
        rng = f"s{pr.epilogue[0] + 1}-s{pr.epilogue[1] + 1}" if pr.epilogue_count else "-"
        top = ", ".join(f"{v} {k}" for k, v in pr.ops.most_common(4))
        out.append(f"| E{pr.phase.index} | {rng} | {pr.epilogue_count} | {', '.join(map(str, pr.stages)) or '-'} | "
                   f"{top or '-'} |")
    out += ["", "## 4. Memory traffic", "", "| stage | kind | space | opcode | count | statements | base | offsets | "
            "step | terms | consumer |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in an.traffic:
        out.append(f"| {r['stage']} | {r['kind']} | {r['space']} | `{r['opcode']}` | {r['count']} | "
                   f"s{r['first']}-s{r['last']} | {r['base']} | {r['lo']}..{r['hi']} | {r['step'] or '-'} | "
                   f"{_terms(r['terms'])} | {', '.join(r['consumer']) or '-'} |")
    abi = an.cut_abi()
    out += ["", "## 5. Parameter block and cut ABI", "",
            f"Parameter block {abi['param_block_bytes']} bytes; offsets read:", ""]
    for r in an.param_reads():
        out.append(f"- +{r['offset']} `{r['type']}` (s{r['statements'][0]}, {len(r['statements'])} reads)")
    out.append("")
    for k, v in an.image_extent().items():
        out.append(f"- image extent of {k}: {'unbounded' if v is None else v} bytes")
    reg = abi.get("region")
    if reg:
        out += ["", f"MMA region s{reg['first']}-s{reg['last']} (file lines {reg['first_line']}-{reg['last_line']}), "
                f"{reg['mma']} mma in {reg['phases']} phases.", "",
                f"- live-in ({len(reg['live_in'])}): {_clip(reg['live_in'], 64)}",
                f"- live-out ({len(reg['live_out'])}): {_clip(reg['live_out'], 64)}"]
    return "\n".join(out) + "\n"
