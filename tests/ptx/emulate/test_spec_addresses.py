"""The spec's symbolic addresses held against the emulator: for every corpus kernel the emulator can run, each global or
shared access whose symbolic address the spec can evaluate per thread is the address every executing thread touches,
one with known bounds stays inside them, and every phase's weight/bias byte range is where thread zero's operand loads
read (docs/spec.md, "Checked against the emulator"). And one hand-written kernel per address idiom: addresses that
nvcc forms with bit instructions — `or`/`xor` over disjoint bits, `bfi`, `prmt` — or wide/lo multiply-adds and
shift-adds keep their constant part (byte ranges start where the thread-zero address is), each run in the emulator,
which must touch exactly the addresses the spec gives every thread."""

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
    *((f"{d}/matmul_f16_sm90a.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 131072,
       lambda t: _triton(t, np.float16, 128, 128, 192)) for d in ("triton", "triton_h200")),
    ("triton_sm100/matmul_f16_sm100a.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 98320,
     lambda t: _triton(t, np.float16, 128, 128, 192)),
    ("triton_sm100/matmul_bf16_sm100a_m64.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 36880,
     lambda t: _triton(t, np.float16, 64, 128, 96)),  # bf16 bits: the addresses are all that matter here
    ("triton_sm100/matmul_e4m3_sm100a.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 73744,
     lambda t: _triton(t, np.uint8, 64, 128, 256)),
    ("triton_sm100/ws_matmul_f16_sm100a.ptx", "ws_matmul", (1, 1, 1), (256, 1, 1), 73948,
     lambda t: dict(zip(re.findall(r"\.param [^\n]*?(ws_matmul_param_\d+)", t),
                        [RNG.standard_normal((128, 64)).astype(np.float16),
                         RNG.standard_normal((64, 64)).astype(np.float16), np.zeros((128, 64), np.float32),
                         128, 64, 64, np.zeros(8192, np.uint8), np.zeros(64, np.uint8)], strict=True))),
    ("triton/matmul_e4m3_sm89.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 65536,
     lambda t: _triton(t, np.uint8, 64, 64, 128)),
    ("triton_h200/matmul_e4m3_sm89.ptx", "matmul_kernel", (1, 1, 1), (128, 1, 1), 65536,
     lambda t: _triton(t, np.uint8, 64, 64, 128)),
    ("wmma_chain.ptx", "wmma_chain", (1, 1, 1), (32, 1, 1), 0,
     lambda t: {"wmma_chain_param_0": RNG.standard_normal(1024).astype(np.float16),
                "wmma_chain_param_1": RNG.standard_normal(1024).astype(np.float16),
                "wmma_chain_param_2": np.zeros(1024, np.float32)}),
]
NOT_RUNNABLE = {
    "wgmma_chain.ptx": "written for the spec, not to run: its B descriptor reads past the 2 KB tile it loads",
    "tcgen05_chain.ptx": "written for the spec, not to run: its A descriptor (SBO 1024) reads past the shared memory",
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
        for _, addr, ids, size in recs:
            want = _value(acc.addr, ids, bases, launch)
            if want is not None and acc.fragment:  # a wmma tile: its elements span exactly the bytes from the base
                where = f"{name}:{an.fn.statements[acc.pos].line} {acc.addr}"
                assert (want == want[0]).all(), where
                assert (addr.min(), (addr + size).max()) == (want[0], want[0] + acc.width), where
                exact += 1
                continue
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


@pytest.mark.parametrize("load", [
    "wmma.load.a.sync.aligned.row.m32n8k16.global.f16 {R8}, [%rd1], 24",
    "wmma.load.b.sync.aligned.col.m32n8k16.global.f16 {R8}, [%rd1], 24",
    "wmma.load.a.sync.aligned.col.m8n32k16.global.s8 {R1}, [%rd1], 40",
    "wmma.load.c.sync.aligned.col.m8n32k16.global.f32 {R8}, [%rd1], 12",
    "wmma.load.a.sync.aligned.row.m16n16k8.global.tf32 {R4}, [%rd1], 12",
    "wmma.load.a.sync.aligned.col.m8n8k4.global.f64 {D1}, [%rd1], 10",
    "wmma.load.b.sync.aligned.row.m8n8k4.global.f64 {D1}, [%rd1]",
    "wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {R1}, [%rd1], 77",
    "wmma.load.b.sync.aligned.col.m8n8k128.global.b1 {R1}, [%rd1], 300",
    "wmma.store.d.sync.aligned.row.m32n8k16.global.f16 [%rd1], {R4}, 20",
    "wmma.store.d.sync.aligned.col.m8n8k32.global.s32 [%rd1], {R2}, 9",
])
def test_wmma_tile_span_is_the_bytes_the_emulator_touches(load) -> None:
    """The spec's byte span of a wmma load or store (non-square tiles, either layout, a stride; s4 / b1 strides cut
    to whole words) runs from the lowest byte the emulated warp touches to past its highest."""
    n = int(re.search(r"\{[RD](\d+)\}", load).group(1))
    regs = ", ".join(f"%{'fd' if '{D' in load else 'r'}{i + 10}" for i in range(n))
    text = _kernel(load.replace(re.search(r"\{[RD]\d+\}", load).group(0), "{" + regs + "}") + ";").replace(
        ".reg .b64 %rd<20>;", ".reg .b64 %rd<20>;\n\t.reg .f64 %fd<20>;").replace(".reqntid 32, 1, 1\n", "")
    m = read_module(text, "k.ptx")
    (acc,) = [a for a in Analysis(m, m.function("k")).accesses if a.space == "global"]
    assert acc.fragment
    buf = np.zeros(8192, np.uint8)
    touched = []
    emulate(text, "k", 1, 32, {"k_p": buf},
            record=lambda line, sp, addr, ids, size, st: touched.append((addr, size)))
    base = Memory({"k_p": buf}, b"").address("k_p")
    lo = min(int(a.min()) for a, _ in touched) - base
    hi = max(int((a + s).max()) for a, s in touched) - base
    assert (lo, hi) == (0, acc.width)


# ---------------------------------------------------------------- the address idioms, one hand-written kernel each
def _kernel(body: str) -> str:
    lines = "\n".join(f"\t{x.strip()}" for x in body.strip().splitlines())
    return f""".version 8.4
.target sm_89
.address_size 64
.visible .entry k(
\t.param .u64 k_p
)
.reqntid 32, 1, 1
{{
\t.reg .pred %p<4>;
\t.reg .f32 %f<20>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<20>;
\tld.param.u64 %rd1, [k_p];
\tmov.u32 %r1, %tid.x;
{lines}
\tret;
}}
"""


def _global(body: str) -> tuple[tuple[int, int] | None, int, dict]:
    """Bounds, thread-zero value and terms of the one global access; the emulator must touch exactly those bytes."""
    text = _kernel(body)
    m = read_module(text, "k.ptx")
    an = Analysis(m, m.function("k"))
    (acc,) = [a for a in an.accesses if a.space == "global"]
    lo, hi = acc.offset.bounds()
    buf = np.zeros(hi + 16, np.uint8)
    touched = []
    emulate(text, "k", 1, 32, {"k_p": buf},
            record=lambda line, sp, addr, ids, size, st: touched.append((addr, ids["%tid.x"])))
    (addr, tid), = touched
    base = Memory({"k_p": buf}, b"").address("k_p")
    assert addr.tolist() == [base + x for x in _per_thread(acc.offset, tid)]
    return (lo, hi), acc.offset.at_zero(), acc.offset.terms_text()


def _per_thread(lin, tids) -> list[int]:
    out = []
    for t in tids:
        v = lin.c
        for a, k in lin.t.items():
            v += k * (a.fn(int(t)) if a.base is not None else int(t))
        out.append(v)
    return out


def test_or_with_disjoint_constant_is_an_add() -> None:
    body = """and.b32 %r2, %r1, 3;
    or.b32 %r3, %r2, 2560;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r4, [%rd3];"""
    assert _global(body)[:2] == ((10240, 10252), 10240)


def test_or_of_two_disjoint_thread_terms_is_an_add() -> None:
    body = """and.b32 %r2, %r1, 3;
    shr.u32 %r5, %r1, 2;
    shl.b32 %r6, %r5, 4;
    or.b32 %r3, %r6, %r2;
    xor.b32 %r7, %r3, 1024;
    mul.wide.u32 %rd2, %r7, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r4, [%rd3];"""
    bounds, zero, terms = _global(body)
    assert zero == 4096 and bounds == (4096, 4096 + 4 * (7 * 16 + 3))
    assert all(not k.endswith("|") for k in terms)


def test_xor_over_overlapping_bits_stays_a_table_with_its_thread_zero_value() -> None:
    body = """and.b32 %r2, %r1, 7;
    xor.b32 %r3, %r2, 5;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r4, [%rd3];"""
    assert _global(body)[:2] == ((0, 28), 20)


def test_bfi_into_zero_bits_is_an_add() -> None:
    body = """and.b32 %r2, %r1, 7;
    bfi.b32 %r3, %r2, 4096, 4, 3;
    mul.wide.u32 %rd2, %r3, 2;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u16 %rs1, [%rd3];"""
    assert _global(body.replace("%rs1", "%r9"))[:2] == ((8192, 8192 + 2 * 7 * 16), 8192)


def test_bfi_clears_the_field_of_a_constant_base() -> None:
    body = """and.b32 %r2, %r1, 3;
    bfi.b32 %r3, %r2, 255, 0, 2;
    cvt.u64.u32 %rd2, %r3;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u8 %r4, [%rd3];"""
    assert _global(body)[:2] == ((252, 255), 252)


@pytest.mark.parametrize("sel, want", [("0x5410", (0x10000, 0x10000 + 31)), ("0x1054", (1, 1 + (31 << 16)))])
def test_prmt_moving_a_whole_value_is_a_shift(sel, want) -> None:
    body = f"""mov.u32 %r2, 1;
    prmt.b32 %r3, %r1, %r2, {sel};
    cvt.u64.u32 %rd2, %r3;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u8 %r4, [%rd3];"""
    assert _global(body)[:2] == (want, want[0])


def test_mad_wide_keeps_base_and_constant() -> None:
    body = """and.b32 %r2, %r1, 3;
    or.b32 %r3, %r2, 64;
    mad.wide.u32 %rd3, %r3, 16, %rd1;
    ld.global.u32 %r4, [%rd3+8];"""
    bounds, zero, terms = _global(body)
    assert (bounds, zero) == ((1032, 1080), 1032)


def test_mad_lo_and_shl_add_chain() -> None:
    body = """mov.u32 %r2, %ctaid.x;
    and.b32 %r5, %r1, 15;
    shl.b32 %r6, %r5, 3;
    or.b32 %r7, %r6, 512;
    mad.lo.s32 %r3, %r2, 0, %r7;
    mad.lo.s32 %r8, %r3, 2, 100;
    cvt.u64.u32 %rd2, %r8;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r4, [%rd3];"""
    assert _global(body)[:2] == ((1124, 1124 + 15 * 16), 1124)


def test_mma_weight_bytes_through_an_or_address() -> None:
    """The issue's case: B loaded at `(tid & 3) | 2560` words is reported at 10240..10292, not 0..52."""
    body = """and.b32 %r2, %r1, 3;
    or.b32 %r3, %r2, 2560;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r10, [%rd3];
    ld.global.u32 %r11, [%rd3+48];
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r20,%r21,%r22,%r23}, {%r10,%r11},
        {%f5,%f6,%f7,%f8};"""
    m = read_module(_kernel(body), "k.ptx")
    (ph,) = Analysis(m, m.function("k")).phases
    assert (ph.weight.base, ph.weight.lo, ph.weight.hi) == ("param+0", 10240, 10292)
