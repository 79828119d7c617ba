"""A warp of straight-line SASS run symbolically: enough of sm_90a's integer, load, MOVM and store instructions to say
which bytes of a kernel's input each stored byte came from. Addresses are concrete (the parameters sit at fixed
bases); loaded data are lists of the input's byte addresses, moved, shifted, permuted and packed but never computed
on. Used to read ptxas's wmma fragment layouts off the code it generates (test_ops_wmma.py)."""

from __future__ import annotations

import re

M32 = 0xFFFFFFFF
PARAMS = {0x210: 0x1000_0000, 0x218: 0x2000_0000}  # c[0x0][0x210]: the input, c[0x0][0x218]: the output
_INS = re.compile(r"/\*[0-9a-f]{4}\*/\s+(.*?) ;")
_MEM = re.compile(r"(?:desc\[UR\d+\])?\[(R\d+)(?:\.64)?(?:\+(0x[0-9a-f]+))?\]")


class Bytes(tuple):
    """A register's four bytes as input byte addresses (None: a zero byte)."""


def _zero() -> Bytes:
    return Bytes((None,) * 4)


def _is_sym(v) -> bool:
    return isinstance(v, Bytes)


def _shift_bytes(v: Bytes, nbytes: int) -> Bytes:
    return Bytes(((None,) * nbytes + tuple(v))[:4])


def _add(a, b):
    """Concrete sum, or two symbolic values with no byte in common (a byte-pack)."""
    if _is_sym(a) or _is_sym(b):
        a = a if _is_sym(a) else _const_bytes(a)
        b = b if _is_sym(b) else _const_bytes(b)
        if any(x is not None and y is not None for x, y in zip(a, b, strict=True)):
            raise ValueError("symbolic bytes overlap in an add")
        return Bytes(x if x is not None else y for x, y in zip(a, b, strict=True))
    return a + b


def _const_bytes(v: int) -> Bytes:
    if v != 0:
        raise ValueError(f"a non-zero constant {v:#x} meets loaded data")
    return _zero()


def _mul_pow2(v, k: int):
    if _is_sym(v):
        if k & (k - 1) or (k.bit_length() - 1) % 8:
            raise ValueError(f"loaded data multiplied by {k:#x}")
        return _shift_bytes(v, (k.bit_length() - 1) // 8)
    return v * k


class Warp:
    """32 lanes' registers, predicates and uniform registers; `stores` maps output byte offsets to input bytes."""

    def __init__(self) -> None:
        self.r: list[dict] = [{} for _ in range(32)]
        self.p: list[dict] = [{} for _ in range(32)]
        self.ur: dict = {}
        self.stores: dict[int, object] = {}

    def get(self, lane: int, op: str):
        op = op.replace(".reuse", "")
        if op in ("RZ", "URZ"):
            return 0
        if op.startswith("UR"):
            return self.ur[op]
        if op.startswith("R"):
            return self.r[lane][op]
        if op.startswith("c[0x0]["):
            return PARAMS.get(int(op[7:-1], 16), 0) & M32
        return int(op, 16) if op.startswith(("0x", "-0x")) else int(op)

    def run(self, sass: str) -> None:
        for text in _INS.findall(sass):
            name, _, rest = text.partition(" ")
            ops = [o.strip() for o in rest.split(",")] if rest else []
            if name in ("NOP", "BRA", "EXIT"):
                continue
            self._step(name, ops)

    def _pair(self, lane: int, reg: str) -> int:
        """A 64-bit register pair (Rn, Rn+1)."""
        n = int(reg.replace(".reuse", "")[1:])
        return self.r[lane][f"R{n}"] | (self.r[lane][f"R{n + 1}"] << 32)

    def _set_pair(self, lane: int, reg: str, v: int) -> None:
        n = int(reg[1:])
        self.r[lane][f"R{n}"], self.r[lane][f"R{n + 1}"] = v & M32, (v >> 32) & M32

    def _step(self, name: str, ops: list[str]) -> None:  # noqa: C901 - one branch per opcode
        base = name.split(".")[0]
        if name == "ULDC.64":
            v = PARAMS.get(int(ops[1][7:-1], 16), 0)
            n = int(ops[0][2:])
            self.ur[f"UR{n}"], self.ur[f"UR{n + 1}"] = v & M32, v >> 32
            return
        if name == "MOVM.16.MT88":
            self._movm(ops[0], ops[1])
            return
        for lane in range(32):
            g = lambda o, lane=lane: self.get(lane, o)  # noqa: E731
            r = self.r[lane]
            d = ops[0] if ops else None
            if name == "S2R":
                r[d] = lane  # SR_LANEID and SR_TID.X alike: one warp
            elif name == "LDC":
                r[d] = g(ops[1])
            elif name == "LDC.64":
                self._set_pair(lane, d, PARAMS.get(int(ops[1][7:-1], 16), 0))
            elif name in ("IMAD.MOV.U32", "IMAD.MOV"):
                r[d] = g(ops[3])
            elif name == "IMAD.SHL.U32":
                r[d] = _mul_pow2(g(ops[1]), g(ops[2])) if _is_sym(g(ops[1])) else (g(ops[1]) * g(ops[2])) & M32
            elif name == "IMAD":
                a, b, c = g(ops[1]), g(ops[2]), g(ops[3])
                r[d] = _add(_mul_pow2(a, b), c) if _is_sym(a) or _is_sym(c) else (a * b + c) & M32
            elif name in ("IMAD.WIDE.U32", "IMAD.WIDE"):
                a, b = g(ops[1]), g(ops[2])
                if name == "IMAD.WIDE":
                    a = a - (1 << 32) if a >> 31 else a
                self._set_pair(lane, d, (a * b + self._pair(lane, ops[3])) & ((1 << 64) - 1))
            elif name == "LOP3.LUT":
                a, b, c, lut = g(ops[1]), g(ops[2]), g(ops[3]), int(ops[4], 16)
                out = 0
                for i in range(8):
                    if lut >> i & 1:
                        out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
                r[d] = out & M32
            elif name == "SHF.R.U32.HI":
                r[d] = g(ops[3]) >> g(ops[2])
            elif name == "LEA":  # LEA Rd, Pc, Ra, Rb, shift (or LEA Rd, Ra, Rb, shift)
                if ops[1].startswith("P"):
                    t = ((g(ops[2]) << int(ops[4], 16)) & M32) + g(ops[3])
                    r[d], self.p[lane][ops[1]] = t & M32, t >> 32
                else:
                    a, b, sh = g(ops[1]), g(ops[2]), int(ops[3], 16)
                    r[d] = _add(_mul_pow2(a, 1 << sh), b) if _is_sym(a) or _is_sym(b) else ((a << sh) + b) & M32
            elif name == "LEA.HI.X":  # LEA.HI.X Rd, Ra, Rb, Rc, shift, Pc: the high word of (Rc:Ra) << shift, + Rb
                wide = (g(ops[3]) << 32 | g(ops[1])) << int(ops[4], 16)
                r[d] = ((wide >> 32) + g(ops[2]) + self.p[lane][ops[5]]) & M32
            elif name == "IADD3":
                if ops[1].startswith("P"):
                    t = g(ops[2]) + g(ops[3]) + g(ops[4])
                    r[d], self.p[lane][ops[1]] = t & M32, t >> 32
                else:
                    r[d] = (g(ops[1]) + g(ops[2]) + g(ops[3])) & M32
            elif name == "IADD3.X":
                r[d] = (g(ops[1]) + g(ops[2]) + g(ops[3]) + self.p[lane][ops[4]]) & M32
            elif name == "PRMT":
                a, sel, b = g(ops[1]), int(ops[2], 16), g(ops[3])
                src = tuple(a if _is_sym(a) else _const_bytes(a)) + tuple(b if _is_sym(b) else _const_bytes(b))
                r[d] = Bytes(src[(sel >> (4 * i)) & 7] for i in range(4))
            elif base in ("LDG", "LD"):
                m = _MEM.fullmatch(ops[1])
                at = self._pair(lane, m.group(1)) + int(m.group(2) or "0", 16)
                if name.endswith(".U8"):
                    r[d] = Bytes((at, None, None, None))
                else:
                    words = 2 if name.endswith(".64") else 1
                    n = int(d[1:])
                    for w in range(words):
                        r[f"R{n + w}"] = Bytes(at + 4 * w + i for i in range(4))
            elif base in ("STG", "ST"):
                m = _MEM.fullmatch(ops[0])
                at = self._pair(lane, m.group(1)) + int(m.group(2) or "0", 16) - PARAMS[0x218]
                words = 2 if name.endswith(".64") else 1
                n = int(ops[1][1:])
                for w in range(words):
                    self.stores[at + 4 * w] = r[f"R{n + w}"]
            else:
                raise ValueError(f"SASS instruction not modelled: {name} {', '.join(ops)}")

    def _movm(self, d: str, a: str) -> None:
        """MOVM.16.MT88: the warp's 8 x 8 matrix of 16-bit elements (lane 4r + c / 2 holds row r, columns c, c + 1)
        transposed."""
        old = [self.r[lane][a] for lane in range(32)]
        for lane in range(32):
            row, col = lane // 4, 2 * (lane % 4)
            out = []
            for e in range(2):  # new (row, col + e) = old (col + e, row)
                src = old[4 * (col + e) + row // 2]
                half = row % 2
                out += list(src[2 * half:2 * half + 2])
            self.r[lane][d] = Bytes(out)


def functions(sass: str) -> dict[str, str]:
    """cuobjdump -sass text split by function: name -> its instruction text."""
    parts = re.split(r"\s+Function : (\S+)", sass)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
