"""Stage classification of a statement range (the prologue or one phase's epilogue) with op evidence.

Vocabulary (covers the enc5 analysis's epilogues): next-operand-loads, e4m3-requantise, cubic-softmax, ex2-softmax,
reciprocal, rms-norm, clamped-cubic, transpose, shared-staging, shared-store, guarded-scatter, global-store,
texture-read, surface-write, surface-read, warp-shuffle, barrier.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcforge.ptx.operands import Imm
from tcforge.ptx.trace import is_requantise

STAGES = ("next-operand-loads", "e4m3-requantise", "cubic-softmax", "ex2-softmax", "reciprocal", "rms-norm",
          "clamped-cubic", "transpose", "shared-staging", "shared-store", "guarded-scatter", "global-store",
          "texture-read", "surface-write", "surface-read", "warp-shuffle", "barrier")
_CUBIC_EXP_MASKS = (0x7FE07FE0, 0x7FE0)


@dataclass
class Evidence:
    """One stage found in a range: how many statements show it and the first of them (1-based)."""

    stage: str
    count: int
    first: int

    def __str__(self) -> str:
        return f"{self.stage}:{self.count}@s{self.first}"


def classify(an, lo: int, hi: int) -> list[Evidence]:
    """Stages of statement positions lo..hi (inclusive, 0-based) of analysis `an`, in vocabulary order."""
    stmts = an.fn.statements
    hits: dict[str, list[int]] = {s: [] for s in STAGES}
    acc_by_pos = an.accesses_by_pos
    shared_loads_after = an.shared_load_positions
    barrier_positions = an.barrier_positions
    for p in range(lo, hi + 1):
        st = stmts[p]
        if st.label is not None:
            continue
        op = st.opcode
        if is_requantise(op):
            hits["e4m3-requantise"].append(p)
        elif op.startswith("and.b32") and any(isinstance(o, Imm) and o.value in _CUBIC_EXP_MASKS for o in st.operands):
            hits["cubic-softmax"].append(p)
        elif op.startswith("ex2.approx"):
            hits["ex2-softmax"].append(p)
        elif op.startswith(("rcp.approx", "div.approx", "div.full", "rcp.rn")):
            hits["reciprocal"].append(p)
        elif op.startswith("rsqrt.approx"):
            hits["rms-norm"].append(p)
        elif op.startswith("abs.f16x2") or op.startswith("abs.bf16x2"):
            hits["clamped-cubic"].append(p)
        elif op.startswith("movmatrix"):
            hits["transpose"].append(p)
        elif op.startswith("shfl."):
            hits["warp-shuffle"].append(p)
        elif op.startswith(("bar.", "barrier.")):
            hits["barrier"].append(p)
        for a in acc_by_pos.get(p, ()):
            if a.kind == "load" and p in an.operand_loads:
                hits["next-operand-loads"].append(p)
            elif a.kind == "store" and a.space == "shared":
                later_bar = bool(barrier_positions) and barrier_positions[-1] > p
                later_ld = any(q > p for q in shared_loads_after.get(a.base_name, ())) or any(
                    q > p for q in an.descriptor_mma_positions)
                hits["shared-staging" if later_bar and later_ld else "shared-store"].append(p)
            elif a.kind in ("store", "atomic") and a.space in ("global", "generic"):
                guarded = st.guard is not None or an.flow.guarded_by_branch(p)
                hits["guarded-scatter" if guarded else "global-store"].append(p)
            elif a.kind == "texture":
                hits["texture-read"].append(p)
            elif a.kind == "surface-store":
                hits["surface-write"].append(p)
            elif a.kind == "surface-load":
                hits["surface-read"].append(p)
    out = []
    for s in STAGES:
        ps = sorted(set(hits[s]))
        if ps:
            out.append(Evidence(s, len(ps), ps[0] + 1))
    return out
