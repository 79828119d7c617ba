"""The enc5 layer as data: 61 phases (corrected shapes, operand sources, chaining, epilogues), the parameter block
and the launch.

Numbers come from the analysis's §2.1 (statement ranges, byte offsets, epilogue sizes) with its §2.2 shape
corrections and the
10304-byte MLP stride (enc5.md §3). `phase_table()` prints the analysis's table in the layer-spec tool's format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.layout import HEAD_SLOT, mlp_chunk_offsets

SMEM_BYTES = 16_384
PARAM_BYTES = 144
BLOCK = (32, 1, 8)


@dataclass(frozen=True)
class Operand:
    """Where an mma operand comes from. `base` is a byte offset (in W or smem); `tidz` the per-%tid.z address term."""

    kind: str  # "weights" | "smem" | "regs" | "zero" | "score_bias" | "table" | "prev"
    detail: str
    base: int | None = None
    tidz: str = ""  # e.g. "27648·tid.z" (W slot term) or "2560·tid.z"; "" when the address has none


@dataclass(frozen=True)
class Epilogue:
    """The statements between a phase's last mma and the next phase's first: range, count and operations in order."""

    first: int
    last: int
    ops: tuple[str, ...]

    @property
    def count(self) -> int:
        """Statements in the epilogue (the table's `epi` column)."""
        return self.last - self.first + 1


@dataclass(frozen=True)
class Phase:
    """One tensor-core phase of the kernel with its corrected shape (M×N×K per warp) and operand sources."""

    index: int
    first: int  # statement range of the mma run
    last: int
    m: int
    n: int
    k: int
    mma: int
    grid: str  # "full" | "band" (as the tool prints it)
    warps: int  # warps that run it (%tid.z = 0..warps−1)
    a: Operand
    b: Operand
    c: Operand
    chain_from: int | None  # the phase whose D is this phase's C (cross-phase k chaining), None if C is fresh
    weight_bytes: tuple[int, int] | None  # as the tool prints them (phases 1–10: relative to the 27648·tid.z slot)
    bias_bytes: tuple[int, int] | None
    epilogue: Epilogue
    tool_mnk: tuple[int, int, int]  # the tool's uncorrected M, N, K

    @property
    def k_steps(self) -> int:
        """32-deep mma steps per accumulator chain (K / 32)."""
        return self.k // 32

    @property
    def chains(self) -> int:
        """Accumulator chains per warp (m-tiles × n-tiles): the phase table's `tiles` column."""
        return (self.m // 16) * (self.n // 8)

    def check(self) -> None:
        """The §2.2 identity mma = M/16 · N/8 · K/32 (raises if the descriptor is inconsistent)."""
        if self.chains * self.k_steps != self.mma:
            raise TcforgeError(f"phase {self.index}: {self.m}x{self.n}x{self.k} does not give {self.mma} mma")


def _w(lo: int, tiles: int) -> tuple[int, int]:
    return lo, lo + TILE_STEP * (tiles - 1) + 12


TILE_STEP = 512


def _build() -> tuple[Phase, ...]:
    phases: list[Phase] = []
    staged = "prologue staging smem + 16·laneid + 512·(5·mi + ks) (no tid.z term), mi = 0..5"
    # phases 1..10: chain A (odd, D9) and chain B (even, D10), one k-slice each
    for p in range(1, 11):
        first = 7554 + 31 * (p - 1)
        ks = (p - 1) // 2
        base = (320 if p % 2 else 5440) + 1024 * ks
        which = "q" if p % 2 else "v"
        ops = (("next-B weight loads",) if p < 10 else
               ("24 score-bias C loads (W slot)", "pack D9 -> P11 A (rows 0..63), B"))
        epi = Epilogue(first + 24, first + 30, ops) if p < 10 else Epilogue(7857, 8027, ops)
        phases.append(Phase(
            p, first, first + 23, 96, 32, 32, 24, "full", 8,
            Operand("smem", f"{staged}, ks = {ks}", 512 * ks),
            Operand("weights", f"head{{tid.z}}.{which} k-slice {ks} (2 tiles)", base, f"{HEAD_SLOT}·tid.z"),
            Operand("zero", "%r11547 = 0") if p <= 2 else Operand("prev", f"D of phase {p - 2}"),
            None if p <= 2 else p - 2, _w(base, 2), None, epi, (96, 32, 32)))
    phases.append(Phase(
        11, 8028, 8075, 64, 96, 32, 48, "full", 8,
        Operand("regs", "e4m3(D9) rows 0..63 (queries)"),
        Operand("regs", "e4m3(D9) rows 0..95 transposed (keys = queries: position-only attention)"),
        Operand("score_bias", "64×96 f16 score bias, tile 4(n>>1)+m", 10_560, f"{HEAD_SLOT}·tid.z"),
        None, None, (10_560, 10_560 + 512 * 23 + 12),
        Epilogue(8076, 11919, ("cubic-exponent softmax", "f16 row-sum tree + butterfly", "rcp.approx", "p = e·rcp",
                               "movmatrix.trans of D10", "pack P -> P12 A, V^T -> P12 B")),
        (64, 96, 32)))
    phases.append(Phase(
        12, 11920, 11967, 64, 32, 96, 48, "band", 8,
        Operand("regs", "e4m3(P) 64×96"), Operand("regs", "e4m3(V) via movmatrix (96 keys × 32)"),
        Operand("zero", "%r11547 = 0"), None, None, None,
        Epilogue(11968, 12241, ("pack D12 -> smem + 2048·tid.z + 512·mi", "bar.sync", "warps tid.z > 3 exit",
                                "proj_bias + residual -> P13 C", "P13 B loads")),
        (192, 96, 96)))
    for j in range(8):
        p = 13 + j
        first = 12242 + 47 * j
        base = 22_848 + HEAD_SLOT * j
        epi = (Epilogue(first + 20, first + 46, ("ld.shared next A", "next-B weight loads")) if j < 7 else
               Epilogue(12591, 13619, ("RMS norm of D20 (f16 Σx² tree, +2^-13, rsqrt.approx, ×gain)",
                                       "pack -> odd-phase A", "P21 B and C loads")))
        phases.append(Phase(
            p, first, first + 19, 16, 160, 32, 20, "full", 4,
            Operand("smem", f"head {j}'s O, m-tile tid.z: smem + 16·laneid + 2048·{j} + 512·tid.z", 2048 * j,
                    "512·tid.z"),
            Operand("weights", f"head{j}.wo (10 tiles)", base),
            (Operand("table", "f16(proj_bias[c] + residual)", 221_504) if j == 0 else
             Operand("prev", f"D of phase {p - 1}")),
            None if j == 0 else p - 1, _w(base, 10), None, epi, (16, 160, 32)))
    for i in range(20):
        fc1, b1, fc2 = mlp_chunk_offsets(i)
        po, pe = 21 + 2 * i, 22 + 2 * i
        if i == 0:
            fo, lo_e, ee = 13620, Epilogue(13640, 13960, ("clamped cubic activation", "P22 B loads",
                                                          "mlp_out_bias + residual -> P22 C", "pack -> P22 A")), 13961
        else:
            fo = 14073 + 304 * (i - 1)
            lo_e = Epilogue(fo + 20, fo + 191, ("clamped cubic activation", "next-B weight loads", "pack -> next A"))
            ee = fo + 192
        phases.append(Phase(
            po, fo, fo + 19, 16, 32, 160, 20, "band", 4,
            Operand("regs", "e4m3(norm(D20)) (E20's packs, re-emitted by E22…E58)"),
            Operand("weights", f"mlp{i}.fc1 (10 tiles, tile = ks + 5·(n>>4))", fc1),
            Operand("table", f"mlp{i}.fc1_bias[c]", b1), None, _w(fc1, 10), (b1, b1 + 48), lo_e, (80, 160, 160)))
        if i < 19:
            ee_epi = Epilogue(ee + 20, ee + 111, ("re-emit odd-phase A packs", "next-B and C loads"))
        else:
            ee_epi = Epilogue(19757, 20055, ("pack D60 -> e4m3", "guarded plane-arena scatter (20 st.global.u32)",
                                             "P61 B and C loads"))
        phases.append(Phase(
            pe, ee, ee + 19, 16, 160, 32, 20, "full", 4,
            Operand("regs", f"e4m3(act(D{po}))"),
            Operand("weights", f"mlp{i}.fc2 (10 tiles)", fc2),
            (Operand("table", "f16(mlp_out_bias[c] + residual)", 232_448) if i == 0 else
             Operand("prev", f"D of phase {pe - 2}")),
            None if i == 0 else pe - 2, _w(fc2, 10), None, ee_epi, (16, 160, 32)))
    phases.append(Phase(
        61, 20056, 20065, 16, 16, 160, 10, "band", 4,
        Operand("regs", "e4m3(D60) (E60's packs)"), Operand("weights", "head_out (5 tiles)", 428_544),
        Operand("table", "head_out_bias[c]", 431_104), None, _w(428_544, 5), (431_104, 431_120),
        Epilogue(20066, 20299, ("bar.sync; accumulators -> smem", "bar.sync; 5 ld.shared", "bounds check",
                                "f32 softmax (max, ex2.approx, div.approx)", "9-tap tex gather, 12 fma.f16x2",
                                "sust.b.2d.v4.b16.zero")),
        (80, 80, 160)))
    for ph in phases:
        ph.check()
    return tuple(phases)


PHASES: tuple[Phase, ...] = _build()


def phase(index: int) -> Phase:
    """Phase `index` (1..61)."""
    if not 1 <= index <= len(PHASES):
        raise TcforgeError(f"phase must be in 1..{len(PHASES)}, got {index}")
    return PHASES[index - 1]


@dataclass(frozen=True)
class ParamField:
    """One field of the 144-byte parameter block."""

    offset: int
    type: str
    name: str
    use: str


PARAMS: tuple[ParamField, ...] = (
    ParamField(0, "v2.u32", "extents", "(ex, ey) token extents; read in the prologue and E61"),
    ParamField(8, "u64", "input", "input buffer (e4m3 features), read by the prologue ([%rd1-72])"),
    ParamField(40, "u64", "weights", "W, the prepared 431,136-byte weight image"),
    ParamField(48, "u64", "arena", "plane arena, written by E60 ([%rd1-32])"),
    ParamField(80, "v2.u16", "origin", "block-origin offsets (ox, oy): x0 = 8·ctaid.x − ox, y0 = 8·ctaid.y − oy"),
    ParamField(88, "u64", "texture", "texture handle for E61's 9-tap gather"),
    ParamField(112, "u64", "surface", "output surface (sust.b.2d.v4.b16.zero)"),
)
UNREAD_PARAM_OFFSETS = (24, 32, 96, 104, 120, 128)

MAX_ARENA_U32 = 2**31 - 1  # E60's index is built with 32-bit signed arithmetic (mad.lo.s32)


@dataclass(frozen=True)
class LaunchGeometry:
    """Grid, block and resources of one launch for given extents."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem_bytes: int
    param_bytes: int

    @property
    def windows(self) -> int:
        """Blocks in the grid = 8×8-token windows."""
        return self.grid[0] * self.grid[1]


def check_extents(ex: int, ey: int) -> None:
    """Raise TcforgeError unless (ex, ey) are positive and the arena's 32-bit u32 indices fit."""
    for name, v in (("ex", ex), ("ey", ey)):
        if not isinstance(v, (int,)) or isinstance(v, bool) or v <= 0:
            raise TcforgeError(f"extent {name} must be a positive integer, got {v!r}")
    if 5 * 8 * ex * ey > MAX_ARENA_U32:
        raise TcforgeError(
            f"extents {ex}x{ey} are too large for the arena: 5·8·ex·ey = {40 * ex * ey} u32 words exceeds the kernel's "
            f"32-bit index range ({MAX_ARENA_U32})")


def launch_geometry(ex: int, ey: int, ox: int = 0, oy: int = 0, grid: str = "ceil") -> LaunchGeometry:
    """The launch for extents (ex, ey): 8×8-token windows, one block each, 8 warps (assumption `grid` picks the
    rule)."""
    check_extents(ex, ey)
    if grid == "ceil":
        gx, gy = math.ceil(ex / 8), math.ceil(ey / 8)
    elif grid == "ceil_offset":
        gx, gy = math.ceil((ex + ox) / 8), math.ceil((ey + oy) / 8)
    else:
        raise TcforgeError(f"grid rule must be 'ceil' or 'ceil_offset', got {grid!r}")
    return LaunchGeometry((gx, gy, 1), BLOCK, SMEM_BYTES, PARAM_BYTES)


HEADER = "  # stmt range    M    N     K tiles  mma  grid           weight bytes                 bias bytes    epi"


def _bytes(r: tuple[int, int] | None) -> str:
    return "-" if r is None else f"{r[0]}..{r[1]}"


def phase_row(p: Phase) -> str:
    """One row of the phase table, right edges aligned under HEADER's column names."""
    left = f"{p.index:>3} s{p.first}-s{p.last}"
    m = str(p.m)
    head = left.ljust(19 - len(m)) if len(left) < 19 - len(m) else left + " "
    return (f"{head}{m}{p.n:>5}{p.k:>6}{p.chains:>6}{p.mma:>5}{p.grid:>6}"
            f"{_bytes(p.weight_bytes):>23}{_bytes(p.bias_bytes):>27}{p.epilogue.count:>7}")


def phase_table(phases: tuple[Phase, ...] = PHASES) -> str:
    """The analysis's §2.1 table with the §2.2 corrections (M, N, K per warp; tiles = accumulator chains)."""
    return "\n".join([HEADER, *(phase_row(p) for p in phases)])
