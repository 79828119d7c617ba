"""Every point the enc5 sources leave open, as one named, documented, switchable assumption.

Each entry records the evidence, the choice made (the default) and the alternatives. `Assumptions` carries the
choices into
`reference(...)`; `Assumptions.parse(["halo_order=ring", ...])` selects others without editing code (`tcforge enc5
run --assume`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from tcforge.errors import TcforgeError


@dataclass(frozen=True)
class AssumptionInfo:
    """One open point: what the sources say, what we chose, what else is possible."""

    name: str
    topic: str
    evidence: str
    choice: str
    alternatives: dict[str, str]  # option -> what it means (the choice included)
    selectable: bool = True


CATALOGUE: tuple[AssumptionInfo, ...] = (
    AssumptionInfo(
        "input_format",
        "input buffer (param+8) format [enc5.md §5.1]",
        "The prologue reads 40 ld.global.v2.u16 per lane at [input + 4·idx] (u32 units) and issues 80 e4m3x2 "
        "requantisations; "
        "E60 writes the layer's output with the same u32 indexing (8·ex·y + 8·x + d, plane stride 8·ex·ey). enc4 "
        "writes "
        "the arena enc5 reads.",
        "arena",
        {"arena": "5 planes × ey × ex × 32 e4m3 bytes, the layout E60 writes (record byte order: input_record_order)"},
    ),
    AssumptionInfo(
        "input_record_order",
        "byte order inside a token's 32-byte input record [§5.1]",
        "Follows the pack: u32 word t holds e4m3 of channels (2t, 2t+1, 16+2t, 17+2t), word t|4 the same +8, "
        "i.e. the A fragment's mma k order; the prologue stages these words as A fragments without shuffling. "
        "The W+0 gain loads give lane t the entries 8i+2t, 8i+2t+1: exactly the channels this order puts in lane "
        "t (with natural order lane t would hold 4t..4t+3 and the per-lane table pairs would not line up).",
        "pack",
        {"pack": "record byte b = channel 32p + perm(b) (mma k order)", "natural": "record byte b = channel 32p + b"},
    ),
    AssumptionInfo(
        "arena_record_order",
        "byte order inside a token's 32-byte arena record (E60) [§5.1]",
        "E60 stores word d = t then t|4 of the packed row: the same pack as every A operand.",
        "pack",
        {"pack": "record byte b = channel 32p + perm(b)", "natural": "record byte b = channel 32p + b"},
    ),
    AssumptionInfo(
        "prologue_norm",
        "prologue arithmetic [§5.1]",
        "The analysis lists only the prologue's loads: the input words, the W+0 160-entry f16 table, 80 "
        "requantisations. "
        "The same code shape in E20 is an RMS norm (Σx² in f16, +2⁻¹³, rsqrt.approx, ×gain).",
        "rms",
        {
            "rms": "dequantise, RMS-normalise as E20 (no mean, no 1/N, ε=2⁻¹³), × W+0 gain, requantise",
            "gain_only": "dequantise, × W+0 gain, requantise (no normalisation)",
            "none": "stage the input bytes unchanged (W+0 unused)",
        },
    ),
    AssumptionInfo(
        "prologue_sum_tree",
        "f16 tree of the prologue's sum of squares [§5.1]",
        "No source gives it. A lane holds 20 f16x2 words per row (n-tile order); E20's counts (42 add.f16x2 for "
        "2 rows) fit a "
        "19-add in-lane reduction + 2 butterfly steps, but not its shape.",
        "sequential",
        {"sequential": "((w0+w1)+w2)+…+w19, then butterfly bit 0, bit 1, then lo+hi",
         "pairwise": "balanced binary tree over w0..w19 (pairs (0,1),(2,3),…), then butterfly, then lo+hi"},
    ),
    AssumptionInfo(
        "out_of_frame",
        "tokens of the 96-row operand outside [0,ex)×[0,ey) [§5.1]",
        "The prologue's loads are not shown guarded in the analysis; E60/E61 guard their stores.",
        "zero",
        {"zero": "read as e4m3 0 (so their normalised value and residual are 0)",
         "clamp": "read the nearest in-frame token"},
    ),
    AssumptionInfo(
        "halo_order",
        "order of the 32 halo rows 64..95 [§5.1]",
        "96 = 64 window tokens + 32 = the 10×10 ring around the 8×8 window minus its 4 corners; order unknown.",
        "tblr",
        {"tblr": "top row (y0−1, x0..x0+7), bottom row (y0+8), left column (x0−1, y0..y0+7), right column (x0+8)",
         "ring": "clockwise from the top-left: top row →, right column ↓, bottom row ←, left column ↑"},
    ),
    AssumptionInfo(
        "residual",
        "the residual added to the projection bias in E12 (phase 13's C) [§5.1]",
        "E12's 80 add.f16 need 80 f16 residual values per lane (2 rows × 40 columns); the shared reload the "
        "analysis names (smem + 512·z + 16·laneid) is phase 13's A and holds only 16 e4m3 bytes, so the residual "
        "is register-resident since the prologue (whose lanes hold the same rows and columns). enc4's reading: the "
        "dequantised raw input; one draft's: the staged e4m3 operand.",
        "raw_input",
        {"raw_input": "f16 of the e4m3 input token (pre-norm residual)",
         "staged": "f16 of the staged (normalised, requantised) e4m3 operand"},
    ),
    AssumptionInfo(
        "table_offsets",
        "bases of the 160-entry tables of E12/E20 (analysis 221520…/221840… vs 221504/221824)",
        "The analysis quotes first-issued load offsets; 20 loads at stride 16 from 221520 would end at 221840 "
        "and overlap the "
        "gain; the loads are issued in rotated order (enc5.md §3).",
        "rotated",
        {"rotated": "tables at 221504 and 221824 (natural order)",
         "literal": "tables at 221520 and 221840 as printed (overlapping the next table by 16 bytes)"},
    ),
    AssumptionInfo(
        "e20_sum_tree",
        "f16 tree of E20's sum of squares [§5.1]",
        "42 add.f16x2 + 4 shfl for two rows = 19 in-lane adds + 2 butterfly adds per row, then add.f16 of the "
        "halves; the "
        "in-lane shape is not documented.",
        "sequential",
        {"sequential": "((w0+w1)+w2)+…+w19 over n-tile words, butterfly bit 0 then bit 1, lo+hi",
         "pairwise": "balanced binary tree over the 20 words, then butterfly, lo+hi"},
    ),
    AssumptionInfo(
        "norm_mul_order",
        "order of the two multiplications of an RMS norm",
        "E20: 240 mul.f16 = 80 squares + 80 × rsqrt + 80 × gain ('mul.f16 ×(gain)' follows the rsqrt block).",
        "x_inv_gain",
        {"x_inv_gain": "f16(f16(x·inv)·gain)", "inv_gain_first": "f16(x·f16(inv·gain))"},
    ),
    AssumptionInfo(
        "e21_residual",
        "the residual E21 adds to the 232448 table (phase 22's C) [U4]",
        "80 add.f16 table[column] + a register pair the one-hop walk does not resolve; the even-phase chain is "
        "the residual "
        "stream.",
        "d20",
        {"d20": "phase 20's D (the attention block's output, pre-norm residual)",
         "normed": "E20's normalised, gained f16 values (before requantisation)"},
    ),
    AssumptionInfo(
        "e60_lane_guard",
        "the 'laneid > 15' term of E60's store guard",
        "The analysis lists (laneid>15) in p1/p2 next to y = y0 + 2z + (laneid>>5), which is always 0 for a real "
        "laneid; "
        "applying it would leave columns x0+4..x0+7 of every window unwritten. enc5.md §5 states only the (x, y) "
        "bounds.",
        "ignore",
        {"ignore": "only the (x, y) bounds guard the stores",
         "apply": "lanes 16..31 (tokens x0+4..x0+7) skip their stores"},
    ),
    AssumptionInfo(
        "e61_values",
        "which head outputs feed E61's softmax and taps [§5.1]",
        "Five ld.shared.u32 = 10 f16; the row max uses 3 max.f16x2 + 2 max.f16 = 9 values (4 words + one half). "
        "Thread L<64 "
        "handles token L of the window (x0 + L%8, y0 + L//8), the guard being (L>>5 > 1).",
        "first9",
        {"first9": "softmax over D61[token, 0..8]; tap i (raster order of the 3×3) weighted by value i",
         "first10": "softmax normaliser over D61[token, 0..9] (value 9 an extra 'reject' logit); taps use values 0..8"},
    ),
    AssumptionInfo(
        "e61_tap_clamp",
        "E61 tap coordinates",
        "Nine tex.base.2d.v4.f16.s32 at integer coordinates clamped into [1, ex−2] × [1, ey−2].",
        "center",
        {"center": "clamp the centre (x, y) to [1, ex−2]×[1, ey−2], taps at centre + (dx, dy)",
         "tap": "clamp each tap coordinate (x+dx, y+dy) to [1, ex−2]×[1, ey−2]"},
    ),
    AssumptionInfo(
        "e61_fold",
        "E61's softmax sum and weighted fold",
        "f32 sum of the ex2 results, div.approx(1, sum), five mul.f16x2 (p as pairs (p0,p1)…(p8,p9)), then "
        "12 fma.rn.f16x2 from 0: 3 colour channels × 4 tap pairs fits the count (per-tap f16x2 folds would "
        "need 18); how the 9th tap and the two halves are combined is not listed. Texture reads outside the "
        "texture are not reachable for ex, ey ≥ 3 (they read 0 here).",
        "paired",
        {"paired": "per channel: acc = fma((p2i,p2i+1), (tap2i,tap2i+1), acc), i = 0..3; out = fma(p8, tap8, "
                   "acc.lo + acc.hi); the f32 sum runs e0+…+e8 in order",
         "sequential": "per channel: acc = fma(p_i, tap_i, acc) for i = 0..8 (18 f16x2 fmas' worth)"},
    ),
    AssumptionInfo(
        "grid",
        "launch grid as a function of the extents [inference]",
        "Grid (5,3,1) at 40×23 tokens; enc5.md: ceil(ex/8) × ceil(ey/8).",
        "ceil",
        {"ceil": "ceil(ex/8) × ceil(ey/8)",
         "ceil_offset": "ceil((ex+ox)/8) × ceil((ey+oy)/8) (covers shifted windows)"},
    ),
    AssumptionInfo(
        "image_size",
        "weight-image extent (analysis 431,124 vs 431,136)",
        "The largest immediate is 431120 (+4 = 431124); table loads add up to 12 bytes of per-lane offset "
        "((laneid<<2)&12), "
        "so lanes t=1..3 read up to 431136 (enc4's allocation shows the same +12).",
        "431136",
        {"431136": "images must be exactly 431,136 bytes",
         "pad_431124": "also accept 431,124 bytes, zero-padding the head "
                                                                          "bias's last 12 bytes"},
    ),
    AssumptionInfo(
        "warps",
        "warps per block (analysis U7/U8 'four groups')",
        "8 × 2048-byte staging, 8 weight slots, grid (5,3,1) × block (32,1,8); the %tid.z > 3 guard makes warps "
        "4..7 exit "
        "after E12.",
        "8",
        {"8": "8 warps = 8 heads; warps 0..3 run phases 13–61"},
        selectable=False,
    ),
    AssumptionInfo(
        "mlp_stride",
        "stride of the MLP chunk pairs (analysis §2.1 '10240')",
        "The analysis's own offsets (P25 243072, P59 418240, P60 423424) give 10304 = 5120 + 64 + 5120.",
        "10304",
        {"10304": "fc1 at 232768 + 10304(i−1), bias +5120, fc2 +5184"},
        selectable=False,
    ),
    AssumptionInfo(
        "e12_smem_stride",
        "E12's staging stride (analysis §4.2 'z·512')",
        "%r11876 = smem + (%r9 << 11) + 16·laneid (s11969–s11973): 2048 per warp; E13–E19 read at +2048·j.",
        "2048",
        {"2048": "head j's O at smem + 2048·j + 512·mi"},
        selectable=False,
    ),
    AssumptionInfo(
        "odd_phase_a",
        "E22…E58 re-emit the odd phases' A operand [U5]",
        "Their pack sources are phase 20's registers and the gain loads: the same content as E20's packs.",
        "shared",
        {"shared": "every odd phase 21…59 consumes e4m3(norm(D20))"},
        selectable=False,
    ),
    AssumptionInfo(
        "p12_operands",
        "P12's A/B k order [U3]",
        "P (probabilities) and V (movmatrix-transposed D10) are packed by the same pack as every other operand; "
        "the two must "
        "agree for the dot product to be P·V.",
        "pack",
        {"pack": "keys 32s + perm(kk) on both sides"},
        selectable=False,
    ),
)

_BY_NAME = {a.name: a for a in CATALOGUE}


@dataclass(frozen=True)
class Assumptions:
    """The choices the reference runs with (defaults = the documented choices); invalid values raise TcforgeError."""

    input_format: str = "arena"
    input_record_order: str = "pack"
    arena_record_order: str = "pack"
    prologue_norm: str = "rms"
    prologue_sum_tree: str = "sequential"
    out_of_frame: str = "zero"
    halo_order: str = "tblr"
    residual: str = "raw_input"
    table_offsets: str = "rotated"
    e20_sum_tree: str = "sequential"
    norm_mul_order: str = "x_inv_gain"
    e21_residual: str = "d20"
    e60_lane_guard: str = "ignore"
    e61_values: str = "first9"
    e61_tap_clamp: str = "center"
    e61_fold: str = "paired"
    grid: str = "ceil"
    image_size: str = "431136"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            options = _BY_NAME[f.name].alternatives
            if value not in options:
                raise TcforgeError(f"assumption {f.name}={value!r} is not one of {', '.join(options)}")

    @classmethod
    def parse(cls, items: list[str] | tuple[str, ...]) -> Assumptions:
        """Build from "name=value" strings (the CLI's --assume)."""
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, str] = {}
        for item in items:
            name, sep, value = item.partition("=")
            if not sep:
                raise TcforgeError(f"--assume expects name=value, got {item!r}")
            if name not in known:
                fixed = " (documented, not selectable)" if name in _BY_NAME else ""
                raise TcforgeError(f"unknown assumption {name!r}{fixed}; selectable: {', '.join(sorted(known))}")
            kwargs[name] = value
        return cls(**kwargs)

    def with_(self, **changes: str) -> Assumptions:
        """A copy with some choices changed (validated)."""
        return replace(self, **changes)

    def non_default(self) -> dict[str, str]:
        """The choices that differ from the documented defaults."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}


def format_catalogue(chosen: Assumptions | None = None) -> str:
    """The human-readable list `tcforge enc5 assumptions` prints."""
    chosen = chosen or Assumptions()
    out: list[str] = []
    for i, a in enumerate(CATALOGUE, 1):
        current = getattr(chosen, a.name, a.choice)
        tag = "" if a.selectable else "  (fixed: no consistent alternative)"
        out.append(f"A{i:02d} {a.name} = {current}{tag}")
        out.append(f"    topic:    {a.topic}")
        out.append(f"    evidence: {a.evidence}")
        for opt, meaning in a.alternatives.items():
            mark = "*" if opt == current else " "
            out.append(f"    {mark} {opt}: {meaning}")
    return "\n".join(out)
