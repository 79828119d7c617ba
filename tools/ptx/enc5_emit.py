"""The statement emitter of the enc5-shaped generator: fresh registers, one statement at a time (a four-line mma.sync
among them), filler up to a statement number, and the address, load and e4m3-pack idioms the kernel repeats."""

from __future__ import annotations

from tools.ptx.enc5_facts import MMA


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

