"""The spec's symbolic addresses held against the emulator: for every corpus kernel the emulator can run, each global or
shared access whose symbolic address the spec can evaluate per thread is the address every executing thread touches,
one with known bounds stays inside them, and every phase's weight/bias byte range is where thread zero's operand loads
read (docs/spec.md, "Checked against the emulator")."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tcforge.ptx.emulate.ops_matrix as om
import tcforge.ptx.emulate.program as program
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.emulate import EmulationError, emulate
from tcforge.ptx.emulate.launch import layout_symbols
from tcforge.ptx.emulate.memory import Memory
from tcforge.ptx.module import read_module
from tcforge.ptx.symbolic import DERIVED, PARAM_VALUE, SHARED, SPECIAL

DATA = Path(__file__).resolve().parents[2] / "data" / "ptx"
RNG = np.random.default_rng(7)


def _fused(grid: int) -> dict:
    n = grid * 128
    return {"fused_chains_param_0": RNG.integers(0, 256, n * 16, dtype=np.uint8),
            "fused_chains_param_1": RNG.integers(0, 256, 32768, dtype=np.uint8),
            "fused_chains_param_2": np.zeros(n, np.uint32), "fused_chains_param_3": np.zeros(n * 4, np.float32),
            "fused_chains_param_4": n - 5}


def _triton(text: str, dtype, m: int, n: int, k: int) -> dict:
    a = RNG.integers(0, 120, (m, k)).astype(np.uint8).view(dtype) if dtype != np.float16 else \
        RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.integers(0, 120, (k, n)).astype(np.uint8).view(dtype) if dtype != np.float16 else \
        RNG.standard_normal((k, n)).astype(np.float16)
    vals = [a, b, np.zeros((m, n), np.float32), m, n, k, k, 1, n, 1, n, 1, np.zeros(64, np.uint8),
            np.zeros(64, np.uint8)]
    names = re.findall(r"\.param [^\n]*?(matmul_kernel_param_\d+)", text)
    return dict(zip(names, vals, strict=False))


# file, entry, grid, block, dynamic shared bytes, args(text)
RUNNABLE = [
    ("fused_chains.ptx", "fused_chains", (2, 1, 1), (32, 1, 4), 0, lambda t: _fused(2)),
    ("fused_chains_lineinfo.ptx", "fused_chains", (2, 1, 1), (32, 1, 4), 0, lambda t: _fused(2)),
    ("fused_chains_debug.ptx", "fused_chains", (1, 1, 1), (32, 1, 4), 0, lambda t: _fused(1)),
    ("called_mma.ptx", "called_mma", (1, 1, 1), (32, 1, 1), 0,
     lambda t: {"called_mma_param_0": RNG.integers(0, 256, 10304, dtype=np.uint8),
                "called_mma_param_1": np.zeros(32, np.uint32)}),
    ("triton/matmul_f16_sm80.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 131072,
     lambda t: _triton(t, np.float16, 128, 128, 192)),
    ("triton_h200/matmul_f16_sm80.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 131072,
     lambda t: _triton(t, np.float16, 128, 128, 192)),
    ("triton/matmul_e4m3_sm89.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 65536,
     lambda t: _triton(t, np.uint8, 64, 64, 128)),
    ("triton_h200/matmul_e4m3_sm89.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 65536,
     lambda t: _triton(t, np.uint8, 64, 64, 128)),
]
NOT_RUNNABLE = {
    "wgmma_chain.ptx": "wgmma and its mbarrier/TMA staging are out of the emulator's scope",
    "tcgen05_chain.ptx": "tcgen05 is out of the emulator's scope",
    "triton/matmul_f16_sm90a.ptx": "a wgmma kernel: out of the emulator's scope",
    "triton_h200/matmul_f16_sm90a.ptx": "a wgmma kernel: out of the emulator's scope",
    "wmma_chain.ptx": "wmma.load/store/mma are not executed by the emulator",
}


def test_every_corpus_kernel_is_listed() -> None:
    files = {str(p.relative_to(DATA)) for p in DATA.rglob("*.ptx")}
    assert files == {r[0] for r in RUNNABLE} | set(NOT_RUNNABLE)


def _zero_mma(ctx, st, parts):
    """mma with no numerics model: zeros (only addresses matter here; these kernels' addresses ignore the values)."""
    try:
        return om.b_mma(ctx, st, parts)
    except EmulationError:
        ws = [ctx.dst(x, "b32") for x in om._regs(st.operands[0])]
        return lambda m: [w(np.zeros(ctx.n, np.uint32), m) for w in ws] and None


def _value(lin, ids: dict, bases: dict, launch: dict) -> np.ndarray | None:
    """The Lin per recorded thread, or None when an atom has no per-thread value here."""
    n = len(ids["%tid.x"])
    total = np.full(n, lin.c, np.int64)
    for a, k in lin.t.items():
        if a.kind == SPECIAL and a.name in ids:
            v = ids[a.name].astype(np.int64)
        elif a.kind == SPECIAL and a.name in launch:
            v = np.full(n, launch[a.name], np.int64)
        elif a.kind == DERIVED and a.base is not None and a.base.name in ids:
            v = np.array([a.fn(int(x)) for x in ids[a.base.name]], np.int64)
        elif a.kind in (PARAM_VALUE, SHARED) and a.name in bases:
            v = np.full(n, bases[a.name], np.int64)
        else:
            return None
        total += k * v
    return total


@pytest.mark.parametrize("case", RUNNABLE, ids=[r[0] for r in RUNNABLE])
def test_symbolic_addresses_match_emulated_ones(case, monkeypatch) -> None:
    name, entry, grid, block, dyn, make = case
    text = (DATA / name).read_text()
    args = make(text)
    seen: dict[int, list] = {}

    def record(line, space, addr, ids, size, store):
        seen.setdefault(line, []).append((space, addr.astype(np.int64), ids, size))

    monkeypatch.setitem(program.BUILDERS, "mma", _zero_mma)
    emulate(text, entry, grid, block, args, file=name, dynamic_shared=dyn, record=record)
    module = read_module(text, name)
    fn = module.function(entry)
    an = Analysis(module, fn, block=block)
    buffers = {k: v for k, v in args.items() if isinstance(v, np.ndarray) and v.ndim >= 1}
    mem = Memory(buffers, b"")
    bases = {f"param+{p.offset}": mem.address(p.name) for p in fn.params if p.name in buffers}
    symbols = layout_symbols(module, fn, mem, dyn)[0](fn)
    bases.update({d.name: symbols[d.name] for d in module.decls + fn.decls if d.space == "shared"})
    launch = {f"%ntid.{x}": block[i] for i, x in enumerate("xyz")} | \
        {f"%nctaid.{x}": grid[i] for i, x in enumerate("xyz")}
    exact = bounded = unchecked = 0
    for acc in an.accesses:
        space = acc.space
        if space == "generic":  # a debug build addresses everything generically: the base says where it lands
            space = {PARAM_VALUE: "global", SHARED: "shared"}.get(acc.base.kind if acc.base else None)
        if space not in ("global", "shared") or acc.kind == "prefetch":
            continue
        recs = [r for r in seen.get(an.fn.statements[acc.pos].line, []) if r[0] == space]
        for _, addr, ids, _ in recs:
            want = _value(acc.addr, ids, bases, launch)
            if want is not None:
                bad = np.flatnonzero(want != addr)
                assert not len(bad), (f"{name}:{an.fn.statements[acc.pos].line} {acc.addr}: thread "
                                      f"{ids['%tid.x'][bad[0]]} touched {addr[bad[0]]:#x}, spec says {want[bad[0]]:#x}")
                exact += 1
                continue
            base, b = acc.base, acc.offset.bounds()
            if base is None or base.name not in bases or b is None:
                unchecked += 1
                continue
            off = addr - bases[base.name]
            assert off.min() >= b[0] and off.max() <= b[1], f"{name}:{an.fn.statements[acc.pos].line} {acc.addr}"
            bounded += 1
    assert exact > 0
    print(f"{name}: access records checked exactly {exact}, within bounds {bounded}, not checkable {unchecked}")
    checked = 0
    for pr in an.phases:
        for ob in (pr.weight, pr.bias):
            if ob is None or ob.base not in bases:
                continue
            lines = {an.fn.statements[s - 1].line for s in ob.loads}
            t0 = [(a - bases[ob.base], size) for ln in lines for sp, addr, ids, size in seen.get(ln, [])
                  for a in addr[(ids["%tid.x"] == 0) & (ids["%tid.y"] == 0) & (ids["%tid.z"] == 0)
                                & (ids["%ctaid.x"] == 0) & (ids["%ctaid.y"] == 0) & (ids["%ctaid.z"] == 0)]]
            assert t0, f"{name} P{pr.phase.index}: thread zero never loads its operand"
            lo, hi = min(a for a, _ in t0), max(a + s for a, s in t0)
            assert lo <= ob.lo < ob.hi <= hi, f"{name} P{pr.phase.index}: spec {ob.lo}..{ob.hi}, touched {lo}..{hi}"
            if ob.extent is not None:  # the extent covers the operand registers' bytes: each load starts below it
                every = [addr - bases[ob.base] for ln in lines for _, addr, _, _ in seen.get(ln, [])]
                assert max(int(e.max()) for e in every) < ob.extent
            checked += 1
    if any(pr.weight or pr.bias for pr in an.phases):
        assert checked
