"""The phase table in the enc5 analysis's column layout, reusable by any code that describes a fused layer.

Columns (exactly, in order): `#`, stmt range, M, N, K, tiles, mma, grid, weight bytes, bias bytes, epi. When every
value fits, the header is byte-for-byte the layer-spec tool's:
`  # stmt range    M    N     K tiles  mma  grid           weight bytes                 bias bytes    epi`;
a wider value widens its column (the header follows).
"""

from __future__ import annotations

from dataclasses import dataclass

# (label, minimum width, alignment); columns are separated by one space
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
