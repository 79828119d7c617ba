"""The enc5-shaped module gen_enc5_ptx.py writes: the shape to reproduce (entry name, module lines, the 61 phases'
statement ranges and epilogue lengths from the enc5 analysis's §2.1 table, the weight / bias byte offsets each phase
reads) and the statement emitter (fresh registers, one statement at a time with a four-line mma.sync among them,
filler up to a statement number, and the address, load and e4m3-pack idioms the kernel repeats)."""

from __future__ import annotations

# the shape to reproduce -----------------------------------------------------------------------------------------------

ENTRY = "cuda_dldn_engine_swin_enc5_kernel"
PARAM = f"{ENTRY}_param_0"
SMEM = f"_ZZ33{ENTRY}33DldnEngineSwinEncParamsStructBaseE4smem"
ENTRY_LINE = 1018
RET_LINE = 51175
MMA = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"
MLP_STRIDE = 10304


# (first statement, mma count, epilogue statements) of the 61 phases, from the analysis's §2.1 table
def _phase_layout() -> list[tuple[int, int, int]]:
    rows = [(7554 + 31 * i, 24, 7) for i in range(10)]
    rows[9] = (7833, 24, 171)
    rows.append((8028, 48, 3844))
    rows.append((11920, 48, 274))
    rows += [(12242 + 47 * j, 20, 27) for j in range(8)]
    rows[-1] = (12571, 20, 1029)
    rows.append((13620, 20, 321))
    rows.append((13961, 20, 92))
    s = 14073
    for _ in range(19):  # phases 23..60 in pairs (odd: epi 172, even: epi 92)
        rows.append((s, 20, 172))
        rows.append((s + 192, 20, 92))
        s += 304
    rows[-1] = (rows[-1][0], 20, 299)
    rows.append((20056, 10, 234))
    return rows


PHASES = _phase_layout()
TOTAL_STATEMENTS = 20299
FIRST = {i + 1: row[0] for i, row in enumerate(PHASES)}  # phase -> its first mma statement
LAST = {i + 1: row[0] + row[1] - 1 for i, row in enumerate(PHASES)}  # phase -> its last mma statement


def weight_offset(p: int) -> int:
    """Thread-zero byte offset of phase p's first B load (relative to W, or to W + 27648*tid.z for p <= 10)."""
    if p <= 10:
        return (320 if p % 2 else 5440) + 1024 * ((p - 1) // 2)
    if p <= 12:
        raise ValueError("phases 11 and 12 read B from registers")
    if p <= 20:
        return 22848 + 27648 * (p - 13)
    if p == 21:
        return 222144
    if p == 22:
        return 227328
    if p <= 60:
        i = (p - 21) // 2  # MLP chunk
        base = 232768 + MLP_STRIDE * (i - 1)
        return base if p % 2 else base + 5184
    return 428544


def bias_offset(p: int) -> int | None:
    """Thread-zero byte offset of phase p's first C (bias) load, None where C is not loaded from W."""
    if p == 11:
        return 10560
    if p == 21:
        return 227264
    if 23 <= p <= 59 and p % 2:
        return weight_offset(p) + 5120
    if p == 61:
        return 431104
    return None


# the statement emitter ------------------------------------------------------------------------------------------------


class Regs:
    """Fresh register names per kind (`%r`, `%rd`, `%rs`, `%p`, `%f`), numbered above the kernel's own."""

    def __init__(self) -> None:
        self.n = {"r": 12000, "rd": 1000, "rs": 7000, "p": 10, "f": 2000}

    def __call__(self, kind: str = "r") -> str:
        self.n[kind] += 1
        return f"%{kind}{self.n[kind]}"


class Emitter:
    """The module's statements so far, each as its physical lines."""

    def __init__(self) -> None:
        self.stmts: list[list[str]] = []  # each statement as its physical lines
        self.R = Regs()
        self.label_n = 0

    @property
    def count(self) -> int:
        """Statements emitted so far."""
        return len(self.stmts)

    def s(self, text: str) -> None:
        """Emit a one-line instruction statement."""
        self.stmts.append([f"\t{text};"])

    def label(self, name: str) -> None:
        """Emit a label statement."""
        self.stmts.append([f"{name}:"])

    def mma(self, d: list[str], a: list[str], b: list[str], c: list[str]) -> None:
        """Emit a four-line m16n8k32 e4m3 mma.sync statement."""
        self.stmts.append([f"\t{MMA}", f"\t\t{{{', '.join(d)}}},", f"\t\t{{{', '.join(a)}}},",
                           f"\t\t{{{', '.join(b)}}}, {{{', '.join(c)}}};"])

    def pad_to(self, n: int) -> None:
        """Neutral filler up to statement n (inclusive)."""
        if self.count > n:
            raise AssertionError(f"generator overflow: {self.count} statements, region ends at {n}")
        while self.count < n:
            self.s("add.s32 %r29998, %r29998, 1")

    # address helpers -----------------------------------------------------------------------------------
    def lane_base(self, base: str) -> str:
        """`base + 16*laneid` (3 statements)."""
        r, rd, out = self.R(), self.R("rd"), self.R("rd")
        self.s(f"mov.u32 {r}, %laneid")
        self.s(f"mul.wide.u32 {rd}, {r}, 16")
        self.s(f"add.s64 {out}, {base}, {rd}")
        return out

    def table_base(self) -> str:
        """`W + ((laneid<<2)&12)` (5 statements)."""
        r, sh, c, a, out = self.R(), self.R(), self.R("rd"), self.R("rd"), self.R("rd")
        self.s(f"mov.u32 {r}, %laneid")
        self.s(f"shl.b32 {sh}, {r}, 2")
        self.s(f"cvt.u64.u32 {c}, {sh}")
        self.s(f"and.b64 {a}, {c}, 12")
        self.s(f"add.s64 {out}, %rd3, {a}")
        return out

    def table_halves(self, offset: int) -> list[str]:
        """The 40 f16 halves of a 20-row table at W + `offset` through `table_base`: one v2.u16 load per row."""
        tb, tab = self.table_base(), []
        for i in range(20):
            x, y = self.R("rs"), self.R("rs")
            self.s(f"ld.global.v2.u16 {{{x}, {y}}}, [{tb}+{offset + 16 * i}]")
            tab += [x, y]
        return tab

    def v4(self, base: str, off: int) -> list[str]:
        """One 16-byte weight load at `base + off` (2 statements); returns its four registers."""
        rd = self.R("rd")
        regs = [self.R() for _ in range(4)]
        self.s(f"add.s64 {rd}, {base}, {off}")
        self.s(f"ld.weak.global.ca.v4.u32 {{ {','.join(regs)}}},[{rd}]")
        return regs

    def pack(self, srcs: list[str]) -> list[str]:
        """e4m3 packs: two f16x2 -> one b32 (cvt, cvt, mov)."""
        out = []
        for i in range(0, len(srcs), 2):
            lo, hi, r = self.R("rs"), self.R("rs"), self.R()
            self.s(f"cvt.rn.satfinite.e4m3x2.f16x2 {lo}, {srcs[i]}")
            self.s(f"cvt.rn.satfinite.e4m3x2.f16x2 {hi}, {srcs[i + 1] if i + 1 < len(srcs) else srcs[i]}")
            self.s(f"mov.b32 {r}, {{{lo}, {hi}}}")
            out.append(r)
        return out


def pairs(regs: list[str]) -> list[list[str]]:
    """Consecutive registers two by two (an mma's B operand or C pair)."""
    return [regs[i:i + 2] for i in range(0, len(regs), 2)]
