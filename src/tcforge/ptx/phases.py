"""Phases of tensor-core work: maximal runs of MMA statements, their accumulator chains and GEMM shapes; and the
decoding of each tensor-core instruction (`decode_mma`): mma.sync/mma.sp (any shape and type), wgmma.mma_async
(descriptor or register A) and tcgen05.mma (descriptor or tensor-memory A), giving the per-instruction shape and the
D/A/B/C operands.

Phase rule `stream` (default): consecutive MMAs stay in one phase unless a statement between them reads an accumulator
of the run, is a label, branch or barrier (the issue's rule), or loads from global memory (a fused kernel streams each
phase's weights right before it; a GEMM K loop feeds its MMAs from shared memory or registers). `dataflow` is the
issue's rule alone; `adjacent` is the old tool's (any statement between two MMAs ends the phase).

Shapes: with k the chain length, M = m·|A|/k, N = n·|B|/k, K = k_instr·k, and the grid is `full` when
mma = (M/m)·(N/n)·k with every chain of length k, else `band`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tcforge.ptx.dataflow import DataFlow
from tcforge.ptx.ir import Function, Statement
from tcforge.ptx.opcodes import is_barrier, is_branch, memory_space, root
from tcforge.ptx.operands import Addr, Imm, Reg, Sym, Vec

# tensor-core instructions ---------------------------------------------------------------------------------------------

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


def decode_mma(st: Statement, idesc_value: int | None = None) -> MMA:
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


# phases ---------------------------------------------------------------------------------------------------------------

PHASE_RULES = ("stream", "dataflow", "adjacent")


@dataclass
class Phase:
    """One phase: its MMAs, chains and derived GEMM shape."""

    index: int
    mmas: list[MMA]
    chains: list[list[int]] = field(default_factory=list)
    M: int | None = None
    N: int | None = None
    K: int | None = None
    grid: str = "full"
    a_count: int = 0
    b_count: int = 0
    chain_length: int = 1

    @property
    def first_pos(self) -> int:
        """Position (0-based) of the first MMA."""
        return self.mmas[0].pos

    @property
    def last_pos(self) -> int:
        """Position (0-based) of the last MMA."""
        return self.mmas[-1].pos


def _breaks_stream(opcode: str) -> bool:
    r = root(opcode)
    if r in ("ld", "ldu", "tex", "tld4", "suld"):
        sp = memory_space(opcode) if r in ("ld", "ldu") else "global"
        return sp in ("global", "generic", "const", "texture") or r in ("tex", "tld4", "suld")
    return False


def group_phases(fn: Function, flow: DataFlow, mma_pos: list[int], rule: str = "stream") -> list[list[int]]:
    """Split the MMA statement positions into phases by `rule` (see the module docstring)."""
    if rule not in PHASE_RULES:
        raise ValueError(f"phase rule must be one of {PHASE_RULES}, got {rule!r}")
    stmts = fn.statements
    groups: list[list[int]] = []
    cur: list[int] = []
    acc: set[str] = set()
    for i, p in enumerate(mma_pos):
        if cur:
            prev = cur[-1]
            brk = False
            if rule == "adjacent":
                brk = p != prev + 1
            else:
                for q in range(prev + 1, p):
                    st = stmts[q]
                    if st.label is not None or is_branch(st.opcode) or is_barrier(st.opcode):
                        brk = True
                        break
                    if rule == "stream" and _breaks_stream(st.opcode):
                        brk = True
                        break
                    uses = flow.uses[q]
                    if any(u in acc for u in uses):
                        brk = True
                        break
                    for dreg in flow.defs[q]:
                        acc.discard(dreg)
            if brk:
                groups.append(cur)
                cur = []
                acc = set()
        cur.append(p)
        acc.update(flow.defs[p])
        del i
    if cur:
        groups.append(cur)
    return groups


def build_chains(mmas: list[MMA], flow: DataFlow, predicate=None) -> list[list[int]]:
    """Accumulator chains inside one phase (indices into `mmas`): an MMA joins the chain of the MMA whose D reaches
    its C registers (D -> C); for in-place D (wgmma) the chain of the MMA whose D reaches its D registers; for
    tcgen05.mma the chain of the last MMA writing the same tensor-memory address. A scale-d / enable-input-d operand
    known to be false (`predicate(operand, pos)` is False, or the literal 0) starts a new chain."""
    chains: list[list[int]] = []
    chain_of_pos: dict[int, int] = {}
    tmem_last: dict[str, int] = {}
    for j, mm in enumerate(mmas):
        target = None
        if mm.family == "tcgen05":
            target = tmem_last.get(repr(mm.d[0]))
        else:
            src = mm.c if mm.family == "mma.sync" else mm.d
            writers = set()
            for r in src:
                if not r.startswith("%") and r not in flow.def_pos:
                    writers.add(None)
                    continue
                defs = flow.reaching(r, mm.pos)
                writers.add(defs[0] if len(defs) == 1 else None)
            if len(writers) == 1:
                w = writers.pop()
                target = chain_of_pos.get(w) if w is not None else None
        if target is not None and _continues(mm, predicate):
            chains[target].append(j)
        else:
            target = len(chains)
            chains.append([j])
        chain_of_pos[mm.pos] = target
        if mm.family == "tcgen05":
            tmem_last[repr(mm.d[0])] = target
    return chains


def _continues(mm: MMA, predicate) -> bool:
    """False when the scale-d / enable-input-d operand is known to be false (the MMA overwrites D)."""
    acc = mm.accumulate
    if isinstance(acc, Imm):
        return acc.value != 0
    if acc is not None and predicate is not None:
        return predicate(acc, mm.pos) is not False
    return True


def shape_phase(ph: Phase, flow: DataFlow, operand_key, predicate=None) -> None:
    """Fill chains, M, N, K, grid, |A|, |B| of a phase; `operand_key(mma, role)` gives an operand's identity and
    `predicate(operand, pos)` the value of a predicate operand (True/False, None when unknown)."""
    ph.chains = build_chains(ph.mmas, flow, predicate)
    lengths = [len(c) for c in ph.chains]
    k = max(lengths)
    ph.chain_length = k
    a_ids = {operand_key(mm, "a") for mm in ph.mmas}
    b_ids = {operand_key(mm, "b") for mm in ph.mmas}
    ph.a_count, ph.b_count = len(a_ids), len(b_ids)
    m0 = ph.mmas[0]
    m_tiles = -(-len(a_ids) // k)
    n_tiles = -(-len(b_ids) // k)
    ph.M = m0.m * m_tiles if m0.m else None
    ph.N = m0.n * n_tiles if m0.n else None
    ph.K = m0.k * k if m0.k else None
    uniform = all(x == k for x in lengths)
    exact = len(a_ids) % k == 0 and len(b_ids) % k == 0
    ph.grid = "full" if uniform and exact and len(ph.mmas) == m_tiles * n_tiles * k else "band"
