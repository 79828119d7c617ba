"""A warp of straight-line sm_90a SASS run on the CPU: the integer, predicate, load, MOVM and store instructions that
ptxas emits for data movement and for the instructions it expands in software (the scalar video forms).

Two modes. Symbolic (no `memory`): addresses are concrete (the parameters sit at fixed bases) and loaded data are
lists of the input's byte addresses, moved, shifted, permuted and packed but never computed on; used to read
ptxas's wmma fragment layouts off its code. Concrete (`memory`: input byte address -> byte): every value is a
number; used to run ptxas's own expansion of an instruction as the GPU would. Opcodes outside the set raise."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from tcforge.runtime.tools import disassemble

M32 = 0xFFFFFFFF
PARAMS = {0x210: 0x1000_0000, 0x218: 0x2000_0000}  # c[0x0][0x210]: the input, c[0x0][0x218]: the output
_INS = re.compile(r"/\*[0-9a-f]{4}\*/\s+(@!?P\w\s+)?(.*?) ;")
_MEM = re.compile(r"(?:desc\[UR\d+\])?\[(R\d+)(?:\.64)?(?:\+(0x[0-9a-f]+))?\]")
_CMP = {"LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
        "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b}


class Bytes(tuple):
    """A register's four bytes as input byte addresses (None: a zero byte)."""


def _is_sym(v) -> bool:
    return isinstance(v, Bytes)


def _const_bytes(v: int) -> Bytes:
    if v != 0:
        raise ValueError(f"a non-zero constant {v:#x} meets loaded data")
    return Bytes((None,) * 4)


def _add(a, b):
    """Concrete sum, or two symbolic values with no byte in common (a byte-pack)."""
    if _is_sym(a) or _is_sym(b):
        a = a if _is_sym(a) else _const_bytes(a)
        b = b if _is_sym(b) else _const_bytes(b)
        if any(x is not None and y is not None for x, y in zip(a, b, strict=True)):
            raise ValueError("symbolic bytes overlap in an add")
        return Bytes(x if x is not None else y for x, y in zip(a, b, strict=True))
    return (a + b) & M32


def _mul(a, k: int):
    if _is_sym(a):
        if k & (k - 1) or (k.bit_length() - 1) % 8:
            raise ValueError(f"loaded data multiplied by {k:#x}")
        return Bytes(((None,) * ((k.bit_length() - 1) // 8) + tuple(a))[:4])
    return (a * k) & M32


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 & 1 else v


class Warp:
    """32 lanes' registers, predicates and uniform registers; `stores` maps output byte offsets to their word (a
    number, or Bytes in symbolic mode). `memory` (concrete mode) maps input byte addresses to bytes; `ctaid` and
    `ntid` answer SR_CTAID.X and c[0x0][0x0], `n` the third parameter."""

    def __init__(self, memory: dict[int, int] | None = None, ctaid: int = 0, ntid: int = 32, n: int = 0) -> None:
        self.memory = memory
        self.r: list[dict] = [{} for _ in range(32)]
        self.p: list[dict] = [{} for _ in range(32)]
        self.ur: dict = {}
        self.stores: dict[int, object] = {}
        self.active = [True] * 32
        self.ctaid, self.ntid, self.n = ctaid, ntid, n

    def const(self, text: str) -> int:
        off = int(text[7:-1], 16)
        return {0x0: self.ntid, 0x220: self.n}.get(off, PARAMS.get(off, 0))

    def get(self, lane: int, op: str):
        op = op.replace(".reuse", "")
        if op.startswith("~"):
            return ~self.get(lane, op[1:]) & M32
        neg = op.startswith("-")
        op = op.lstrip("-")
        if op in ("RZ", "URZ"):
            v = 0
        elif op.startswith("UR"):
            v = self.ur[op]
        elif op.startswith("R"):
            v = self.r[lane][op]
        elif op.startswith("c[0x0]["):
            v = self.const(op) & M32
        else:
            v = int(op, 16) & M32 if op.startswith("0x") else int(op) & M32
        return (-v) & M32 if neg else v

    def pred(self, lane: int, op: str) -> bool:
        neg = op.startswith("!")
        op = op.lstrip("!")
        v = True if op == "PT" else self.p[lane].get(op, False)
        return v != neg

    def run(self, sass: str) -> None:
        for guard, text in _INS.findall(sass):
            name, _, rest = text.partition(" ")
            ops = [o.strip() for o in rest.split(",")] if rest else []
            if name in ("NOP", "BRA"):
                continue
            lanes = [lane for lane in range(32) if self.active[lane]
                     and (not guard or self.pred(lane, guard.strip()[1:]))]
            if name == "EXIT":
                for lane in lanes:
                    self.active[lane] = False
                continue
            self._step(name, ops, lanes)

    def _pair(self, lane: int, reg: str) -> int:
        """A 64-bit register pair (Rn, Rn+1)."""
        reg = reg.replace(".reuse", "")
        if reg == "RZ":
            return 0
        n = int(reg[1:])
        return self.r[lane][f"R{n}"] | (self.r[lane][f"R{n + 1}"] << 32)

    def _set_pair(self, lane: int, reg: str, v: int) -> None:
        n = int(reg[1:])
        self.r[lane][f"R{n}"], self.r[lane][f"R{n + 1}"] = v & M32, (v >> 32) & M32

    def _load(self, at: int, size: int):
        if self.memory is None:
            return Bytes((at, None, None, None)) if size == 1 else Bytes(at + i for i in range(4))
        return sum(self.memory.get(at + i, 0) << (8 * i) for i in range(size))

    def _step(self, name: str, ops: list[str], lanes: list[int]) -> None:  # noqa: C901 - one branch per opcode
        base = name.split(".")[0]
        if name in ("ULDC.64", "ULDC"):
            v = self.const(ops[1])
            n = int(ops[0][2:])
            self.ur[f"UR{n}"] = v & M32
            if name == "ULDC.64":
                self.ur[f"UR{n + 1}"] = v >> 32
            return
        if name == "MOVM.16.MT88":
            self._movm(ops[0], ops[1])
            return
        for lane in lanes:
            g = lambda o, lane=lane: self.get(lane, o)  # noqa: E731
            pr = lambda o, lane=lane: self.pred(lane, o)  # noqa: E731
            r, p = self.r[lane], self.p[lane]
            d = ops[0] if ops else None
            if name == "S2R":
                r[d] = self.ctaid if ops[1] == "SR_CTAID.X" else lane  # SR_LANEID and SR_TID.X alike: one warp
            elif name == "LDC":
                r[d] = g(ops[1])
            elif name == "LDC.64":
                self._set_pair(lane, d, self.const(ops[1]))
            elif name in ("IMAD.MOV.U32", "IMAD.MOV"):
                r[d] = g(ops[3])
            elif name == "MOV":
                r[d] = g(ops[1])
            elif name == "HFMA2.MMA" and ops[1:] == ["-RZ", "RZ", "0", "0"]:  # ptxas's zeroing idiom
                r[d] = 0
            elif name in ("IMAD.SHL.U32", "IMAD"):
                a, b = g(ops[1]), g(ops[2])
                c = g(ops[3]) if name == "IMAD" else 0
                r[d] = _add(_mul(a, b), c) if _is_sym(a) or _is_sym(c) else (a * b + c) & M32
            elif name in ("IMAD.HI", "IMAD.HI.U32"):  # the high word of the product plus a 64-bit pair
                a, b = g(ops[1]), g(ops[2])
                if name == "IMAD.HI":
                    a, b = _s32(a), _s32(b)
                r[d] = (((a * b + self._pair(lane, ops[3])) % (1 << 64)) >> 32) & M32
            elif name == "VIADD":
                r[d] = (g(ops[1]) + g(ops[2])) & M32
            elif name == "IMAD.IADD":
                r[d] = (g(ops[1]) * g(ops[2]) + g(ops[3])) & M32
            elif name == "IMAD.X":
                r[d] = (g(ops[1]) * g(ops[2]) + g(ops[3]) + pr(ops[4])) & M32
            elif name in ("IMAD.WIDE.U32", "IMAD.WIDE"):
                a, b = g(ops[1]), g(ops[2])
                if name == "IMAD.WIDE":
                    a, b = _s32(a), _s32(b)
                self._set_pair(lane, d, (a * b + self._pair(lane, ops[3])) & ((1 << 64) - 1))
            elif name == "LOP3.LUT":
                a, b, c, lut = g(ops[1]), g(ops[2]), g(ops[3]), int(ops[4], 16)
                out = 0
                for i in range(8):
                    if lut >> i & 1:
                        out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
                r[d] = out & M32
            elif base == "SHF":
                r[d] = self._shf(name, g(ops[1]), g(ops[2]), g(ops[3]))
            elif name == "LEA":  # LEA Rd, Pc, Ra, Rb, shift (or LEA Rd, Ra, Rb, shift)
                if ops[1].startswith("P"):
                    t = ((g(ops[2]) << int(ops[4], 16)) & M32) + g(ops[3])
                    r[d], p[ops[1]] = t & M32, bool(t >> 32)
                else:
                    a, b, sh = g(ops[1]), g(ops[2]), int(ops[3], 16)
                    r[d] = _add(_mul(a, 1 << sh), b) if _is_sym(a) or _is_sym(b) else ((a << sh) + b) & M32
            elif name in ("LEA.HI.X", "LEA.HI.X.SX32"):  # the high word of (Rc:Ra) << shift, + Rb + carry
                if name == "LEA.HI.X":
                    a, b, hi, sh, c = g(ops[1]), g(ops[2]), g(ops[3]), int(ops[4], 16), pr(ops[5])
                else:
                    a, b, sh, c = g(ops[1]), g(ops[2]), int(ops[3], 16), pr(ops[4])
                    hi = M32 if a >> 31 else 0
                r[d] = ((((hi << 32 | a) << sh) >> 32) + b + c) & M32
            elif name in ("IADD3", "IADD3.X"):
                outs = [o for o in ops[1:3] if re.fullmatch(r"P\d|PT", o)]  # carry outputs (a 3-input sum: two)
                srcs = ops[1 + len(outs):4 + len(outs)]
                total = 0
                for o in srcs:  # a negated operand adds its complement and 1, as the adder does
                    v = g(o.lstrip("-"))
                    total += ((~v) & M32) + 1 if o.startswith("-") else v
                if name == "IADD3.X":
                    total += sum(pr(o) for o in ops[4 + len(outs):])
                r[d] = total & M32
                carry = total >> 32
                for k, o in enumerate(outs):  # the carry (0-2) as one or two predicates
                    if o != "PT":
                        p[o] = carry > k
            elif base == "ISETP":
                parts = name.split(".")
                cmp, unsigned, ex = parts[1], "U32" in parts, parts[-1] == "EX"
                a, b = g(ops[2]), g(ops[3])
                if not unsigned:
                    a, b = _s32(a), _s32(b)
                if ex:  # the high words decide, or where equal the low words' (unsigned) compare chained in
                    low = pr(ops[5])
                    if cmp == "EQ":
                        v = a == b and low
                    elif cmp == "NE":
                        v = a != b or low
                    else:
                        v = (a < b if cmp in ("LT", "LE") else a > b) or (a == b and low)
                else:
                    v = _CMP[cmp](a, b)
                p[d] = bool(v) and pr(ops[4])
                if ops[1] != "PT":
                    p[ops[1]] = (not v) and pr(ops[4])
            elif name == "SEL":
                r[d] = g(ops[1]) if pr(ops[3]) else g(ops[2])
            elif name == "P2R":
                r[d] = sum(1 << i for i in range(7) if p.get(f"P{i}", False)) & g(ops[3])
            elif name == "PRMT":
                a, sel, b = g(ops[1]), g(ops[2]), g(ops[3])
                if _is_sym(a) or _is_sym(b):
                    src = tuple(a if _is_sym(a) else _const_bytes(a)) + tuple(b if _is_sym(b) else _const_bytes(b))
                    r[d] = Bytes(src[(sel >> (4 * i)) & 7] for i in range(4))
                else:
                    src = [(a >> (8 * i)) & 0xFF for i in range(4)] + [(b >> (8 * i)) & 0xFF for i in range(4)]
                    out = 0
                    for i in range(4):
                        nib = (sel >> (4 * i)) & 0xF
                        byte = src[nib & 7]
                        if nib & 8:  # sign replicate
                            byte = 0xFF if byte & 0x80 else 0
                        out |= byte << (8 * i)
                    r[d] = out
            elif base in ("LDG", "LD"):
                m = _MEM.fullmatch(ops[1])
                at = self._pair(lane, m.group(1)) + int(m.group(2) or "0", 16)
                size = 1 if ".U8" in name else 4
                words = {".64": 2, ".128": 4}.get(name[name.rfind("."):], 1)
                n = int(d[1:])
                for w in range(words):
                    r[f"R{n + w}"] = self._load(at + 4 * w, size)
            elif base in ("STG", "ST"):
                m = _MEM.fullmatch(ops[0])
                at = self._pair(lane, m.group(1)) + int(m.group(2) or "0", 16) - PARAMS[0x218]
                words = {".64": 2, ".128": 4}.get(name[name.rfind("."):], 1)
                n = int(ops[1][1:])
                for w in range(words):
                    self.stores[at + 4 * w] = r[f"R{n + w}"]
            else:
                raise ValueError(f"SASS instruction not modelled: {name} {', '.join(ops)}")

    @staticmethod
    def _shf(name: str, lo: int, sh: int, hi: int) -> int:
        """SHF.{L,R}.{U32,S32,U64,S64}{.HI} d, lo, sh, hi: the 64-bit (hi:lo) shifted (right: arithmetically for
        the signed types), the low word (the high word with .HI); 32-bit types clamp the amount to 32."""
        parts = name.split(".")
        left, kind, high = parts[1] == "L", parts[2], parts[-1] == "HI"
        sh = min(sh, 32) if kind in ("U32", "S32") else min(sh, 64)
        wide = hi << 32 | lo
        if kind in ("S32", "S64") and hi >> 31:
            wide -= 1 << 64
        v = wide << sh if left else wide >> sh
        return (v >> 32 if high else v) & M32

    def _movm(self, d: str, a: str) -> None:
        """MOVM.16.MT88: the warp's 8 x 8 matrix of 16-bit elements (lane 4r + c / 2 holds row r, columns c, c + 1)
        transposed."""
        old = [self.r[lane][a] for lane in range(32)]
        for lane in range(32):
            row, col = lane // 4, 2 * (lane % 4)
            if _is_sym(old[0]):
                out: list = []
                for e in range(2):  # new (row, col + e) = old (col + e, row)
                    src = old[4 * (col + e) + row // 2]
                    out += list(src[2 * (row % 2):2 * (row % 2) + 2])
                self.r[lane][d] = Bytes(out)
            else:
                self.r[lane][d] = sum(((old[4 * (col + e) + row // 2] >> (16 * (row % 2))) & 0xFFFF) << (16 * e)
                                      for e in range(2))


def functions(sass: str) -> dict[str, str]:
    """cuobjdump -sass text split by function: name -> its instruction text."""
    parts = re.split(r"\s+Function : (\S+)", sass)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def build(source: str, workdir: Path, ptx: bool = True) -> tuple[str | None, dict[str, str]]:
    """CUDA `source` through nvcc for sm_90a: its PTX (None where `ptx` is false) and its SASS by function."""
    cu = workdir / "k.cu"
    cu.write_text(source)
    for kind in ("ptx", "cubin") if ptx else ("cubin",):
        subprocess.run(["nvcc", f"-{kind}", "-O3", "-arch=sm_90a", str(cu), "-o", str(workdir / f"k.{kind}")],
                       check=True, capture_output=True)
    sass = disassemble(workdir / "k.cubin")
    return ((workdir / "k.ptx").read_text() if ptx else None), functions(sass)


def run_blocks(sass: str, x: np.ndarray, n: int, words: int) -> np.ndarray:
    """A kernel `(x, out, n)` run concretely over n / 32 one-warp blocks, x its input: out, `words` uint32 per
    thread."""
    memory = {PARAMS[0x210] + i: v for i, v in enumerate(np.ascontiguousarray(x).reshape(-1).view(np.uint8).tolist())}
    out = np.zeros(n * words, np.uint32)
    for block in range(n // 32):
        warp = Warp(memory, ctaid=block, ntid=32, n=n)
        warp.run(sass)
        for off, word in warp.stores.items():
            out[off // 4] = word
    return out.reshape(n, words)
