"""A third-party kernel: Triton's f16 matmul for sm_80 (tests/data/ptx/triton*, cp.async pipelining, ldmatrix,
mma.sync f32-accumulating). tcforge.numerics has no model of the f32-accumulating mma yet, so the emulator refuses it;
with a float64 stand-in for that one instruction, C = A·B to f16 rounding, which checks every other instruction's
data movement, addressing and control flow in code nobody here wrote."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tcforge.ptx.emulate.ops_matrix as om
import tcforge.ptx.emulate.program as program
from tcforge.ptx.emulate import EmulationError, emulate

DATA = Path(__file__).resolve().parents[2] / "data" / "ptx"
_C = [(0, 0), (0, 1), (8, 0), (8, 1)]  # (row, col) offsets of the four f32 accumulator registers


def _standin(ctx, st, parts):
    """mma m16n8k16 f32.f16.f16.f32 as the exact product sum rounded once to f32 (not a GPU model)."""
    if not ("m16n8k16" in parts and parts[-4:] == ["f32", "f16", "f16", "f32"]):
        return om.b_mma(ctx, st, parts)
    ra, rb, rc = ([ctx.src_full(x, "b32") for x in om._regs(o)] for o in st.operands[1:4])
    ws = [ctx.dst(x, "b32") for x in om._regs(st.operands[0])]
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3

    def run(m):
        warps = ctx.warps(m, st)
        a = om._gather_a([r().reshape(-1, 32)[warps] for r in ra], 2).view(np.float16).astype(np.float64)
        b = om._gather_b([r().reshape(-1, 32)[warps] for r in rb], 2).view(np.float16).astype(np.float64)
        c = np.zeros((len(warps), 16, 8))
        for r, (dr, dc) in zip(rc, _C, strict=True):
            c[:, g + dr, 2 * t + dc] = r().reshape(-1, 32)[warps].view(np.float32)
        d = (a @ b + c).astype(np.float32)
        for w, (dr, dc) in zip(ws, _C, strict=True):
            om._scatter(ctx, warps, d[:, g + dr, 2 * t + dc].view(np.uint32), w, m)
    return run


def _args(text: str, m: int, n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    vals = [a, b, np.zeros((m, n), np.float16), m, n, k, k, 1, n, 1, n, 1, np.zeros(64, np.uint8),
            np.zeros(64, np.uint8)]
    names = re.findall(r"\.param [^\n]*?(matmul_kernel_param_\d+)", text)
    return a, b, dict(zip(names, vals, strict=False))


@pytest.mark.parametrize("folder", ["triton", "triton_h200"])
def test_triton_f16_matmul_data_movement(folder: str, monkeypatch) -> None:
    text = (DATA / folder / "matmul_f16_sm80.ptx").read_text()
    a, b, args = _args(text, 128, 128, 192)
    with pytest.raises(EmulationError, match=r"matmul_f16_sm80\.ptx:\d+: mma\.sync.*f32\.f16\.f16\.f32 .*no model"):
        emulate(text, "matmul_kernel", 1, 128, args, file="matmul_f16_sm80.ptx", dynamic_shared=131072)
    monkeypatch.setitem(program.BUILDERS, "mma", _standin)
    out = emulate(text, "matmul_kernel", 1, 128, args, dynamic_shared=131072)
    c = out["matmul_kernel_param_2"].astype(np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ulp = np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    assert (np.abs(c - ref) <= ulp).all()
