"""Addresses that nvcc forms with bit instructions (`or`/`xor` over disjoint bits, `bfi`, `prmt`) or wide/lo
multiply-adds and shift-adds keep their constant part: byte ranges start where the thread-zero address is."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.ptx import read_module
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.emulate import emulate
from tcforge.ptx.emulate.memory import Memory


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
