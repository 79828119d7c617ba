"""Decoding of tensor-core instructions: mma.sync/mma.sp (any shape and type), wgmma.mma_async (descriptor or register
A) and tcgen05.mma (descriptor or tensor-memory A); gives the per-instruction shape and the D/A/B/C operands."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcforge.ptx.ir import Statement
from tcforge.ptx.operands import Addr, Imm, Reg, Sym, Vec

_SHAPE = re.compile(r"\.m(\d+)n(\d+)k(\d+)")
# K per tcgen05.mma instruction by kind (256 bits of A/B per row, 512 for fp4 kinds)
_TCGEN05_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}


@dataclass(frozen=True)
class MMA:
    """One tensor-core instruction. `d`, `a`, `b`, `c` are operand identities: register-name tuples, or for
    descriptors/tensor-memory addresses the operand itself; `c` is None when D accumulates in place."""

    pos: int
    family: str
    m: int | None
    n: int | None
    k: int | None
    d: tuple
    a: tuple
    b: tuple
    c: tuple | None
    a_is_register: bool
    b_is_register: bool
    accumulate: object = None


def _regs(op) -> tuple:
    if isinstance(op, Vec):
        return tuple(x.name if isinstance(x, Reg) else repr(x) for x in op.items)
    if isinstance(op, Reg):
        return (op.name,)
    if isinstance(op, Addr):
        return (op,)
    return (repr(op),)


class MMAFormatError(ValueError):
    """The instruction's operands do not have the shape its mnemonic requires."""


def decode(st: Statement, idesc_value: int | None = None) -> MMA:
    """Decode a tensor-core statement; `idesc_value` is the tcgen05 instruction descriptor when it is a constant."""
    op, ops = st.opcode, st.operands
    pos = st.index - 1
    if op.startswith("mma.") or op.startswith("wmma.mma"):
        m = _SHAPE.search(op)
        if m is None or len(ops) < 4:
            raise MMAFormatError(f"{op}: expected a .mMnNkK shape and D, A, B, C operands")
        return MMA(pos, "mma.sync", int(m.group(1)), int(m.group(2)), int(m.group(3)), _regs(ops[0]), _regs(ops[1]),
                   _regs(ops[2]), _regs(ops[3]), True, True)
    if op.startswith("wgmma.mma_async"):
        m = _SHAPE.search(op)
        if m is None or len(ops) < 4 or not isinstance(ops[0], Vec):
            raise MMAFormatError(f"{op}: expected a .m64nNkK shape and D vector, A, B, scale-d operands")
        a_reg = isinstance(ops[1], Vec)
        return MMA(pos, "wgmma", int(m.group(1)), int(m.group(2)), int(m.group(3)), _regs(ops[0]), _regs(ops[1]),
                   _regs(ops[2]), None, a_reg, False, ops[3])
    if op.startswith("tcgen05.mma"):
        if len(ops) < 5 or not isinstance(ops[0], Addr):
            raise MMAFormatError(f"{op}: expected [d-tmem], A, B, idesc, ..., enable-input-d operands")
        kind = re.search(r"kind::(\w+)", op)
        k = _TCGEN05_K.get(kind.group(1)) if kind else None
        mm = nn = None
        if idesc_value is None and isinstance(ops[3], Imm) and isinstance(ops[3].value, int):
            idesc_value = ops[3].value
        if idesc_value is not None:
            nn = ((idesc_value >> 17) & 0x3F) << 3
            mm = ((idesc_value >> 24) & 0x1F) << 4
            if ".cta_group::2" in op and mm:
                mm *= 2
        enable = ops[-1]
        if isinstance(enable, Imm) and len(ops) >= 6 and isinstance(ops[-2], (Reg, Sym)):
            enable = ops[-2]  # trailing scale-input-d immediate
        return MMA(pos, "tcgen05", mm or None, nn or None, k, (ops[0],), _regs(ops[1]), _regs(ops[2]), None,
                   isinstance(ops[1], Addr), False, enable)
    raise MMAFormatError(f"{op} is not a tensor-core MMA")
