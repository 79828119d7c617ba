"""wmma: matrices loaded row- or column-major with a stride, multiplied, stored; the f16 product is the chain of the
Hopper m16n8k16 form over its tiles and K steps bit for bit, the s8 product the exact (clamped) integer sum; the
fragments laid out as ptxas lays them out for sm_90."""

from __future__ import annotations

import math
import shutil
from fractions import Fraction

import numpy as np
import pytest
from tests.ptx.emulate.kernels import HEADER
from tests.ptx.emulate.sass_lanes import PARAMS, Warp, build

from tcforge.numerics.tensorcore import HOPPER_FORMS, tc_mma
from tcforge.ptx.emulate import EmulationError, emulate
from tcforge.ptx.emulate.ops_wmma import fragment_map
from tcforge.runtime.tools import find_tool


def _regs(name: str, n: int) -> str:
    return "{" + ", ".join(f"%{name}{i}" for i in range(n)) + "}"


_F16 = HEADER + """
.visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_d)
{{
	.reg .b32 %a<8>; .reg .b32 %b<8>; .reg .f32 %c<8>; .reg .f32 %e<8>; .reg .f32 %f<8>; .reg .b64 %rd<12>;
	ld.param.u64 %rd1, [k_a]; ld.param.u64 %rd2, [k_b]; ld.param.u64 %rd3, [k_c]; ld.param.u64 %rd4, [k_d];
	wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {c}, [%rd3], 16;
	wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {a}, [%rd1], 32;
	wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {b}, [%rd2], 32;
	wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {e}, {a}, {b}, {c};
	add.s64 %rd5, %rd1, 32;
	add.s64 %rd6, %rd2, 32;
	wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {a}, [%rd5], 32;
	wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {b}, [%rd6], 32;
	wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {f}, {a}, {b}, {e};
	wmma.store.d.sync.aligned.col.m16n16k16.global.f32 [%rd4], {f}, 16;
	ret;
}}
""".format(a=_regs("a", 8), b=_regs("b", 8), c=_regs("c", 8), e=_regs("e", 8), f=_regs("f", 8))


def test_f16_wmma_is_the_m16n8k16_form_chained_over_tiles_and_k() -> None:
    rng = np.random.default_rng(21)
    a = (rng.standard_normal((16, 32)) * 4).astype(np.float16)
    bt = (rng.standard_normal((16, 32)) * 4).astype(np.float16)  # B column-major: row j of bt is column j of B
    a[3, 5], bt[7, 30] = np.inf, -np.inf
    c = rng.standard_normal((16, 16)).astype(np.float32)
    d = emulate(_F16, "k", 1, 32, {"k_a": a, "k_b": bt, "k_c": c, "k_d": np.zeros((16, 16), np.float32)})["k_d"]
    form = HOPPER_FORMS["mma.m16n8k16.f32.f16.f16"]
    acc = c.view(np.uint32)[None].copy()
    b = bt.T
    for k0 in (0, 16):
        A, B = a.view(np.uint16)[None, :, k0:k0 + 16], np.ascontiguousarray(b.view(np.uint16)[k0:k0 + 16])[None]
        acc = np.concatenate([tc_mma(form, A, B[:, :, j:j + 8], acc[:, :, j:j + 8]) for j in (0, 8)], axis=2)
    np.testing.assert_array_equal(d.view(np.uint32).reshape(16, 16).T, acc[0])


_S8 = HEADER + """
.visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_d)
{{
	.reg .b32 %a<2>; .reg .b32 %b<2>; .reg .b32 %c<8>; .reg .b32 %e<8>; .reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_a]; ld.param.u64 %rd2, [k_b]; ld.param.u64 %rd3, [k_c]; ld.param.u64 %rd4, [k_d];
	wmma.load.a.sync.aligned.row.m16n16k16.global.s8 {a}, [%rd1];
	wmma.load.b.sync.aligned.row.m16n16k16.global.s8 {b}, [%rd2];
	wmma.load.c.sync.aligned.row.m16n16k16.global.s32 {c}, [%rd3];
	wmma.mma.sync.aligned.row.row.m16n16k16.s32.s8.s8.s32.satfinite {e}, {a}, {b}, {c};
	wmma.store.d.sync.aligned.row.m16n16k16.global.s32 [%rd4], {e};
	ret;
}}
""".format(a=_regs("a", 2), b=_regs("b", 2), c=_regs("c", 8), e=_regs("e", 8))


def test_s8_wmma_is_the_exact_sum_clamped() -> None:
    rng = np.random.default_rng(22)
    a = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    b = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    c = rng.integers(-2**31, 2**31, (16, 16)).astype(np.int32)
    c[0, :4] = [2**31 - 1, -2**31, 2**31 - 100, -2**31 + 100]
    d = emulate(_S8, "k", 1, 32, {"k_a": a, "k_b": b, "k_c": c, "k_d": np.zeros((16, 16), np.int32)})["k_d"]
    want = np.clip(c.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64), -2**31, 2**31 - 1)
    np.testing.assert_array_equal(d.reshape(16, 16), want)


def test_fragment_elements_changed_alike_and_unmodelled_forms() -> None:
    """Every element of a fragment doubled (f16x2 adds over all its registers, the repeated copies too) doubles the
    product; a wmma form with mixed C and D types, a fragment of the wrong size, or a generic load from an address
    in no window, is a one-line error."""
    body = _F16.replace("\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {e}".format(e=_regs("e", 8)),
                        "".join(f"\tadd.rn.f16x2 %a{i}, %a{i}, %a{i};\n" for i in range(8))
                        + "\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 " + _regs("e", 8), 1)
    a = np.ones((16, 32), np.float16)
    bt = np.ones((16, 32), np.float16)
    args = {"k_a": a, "k_b": bt, "k_c": np.zeros((16, 16), np.float32), "k_d": np.zeros((16, 16), np.float32)}
    np.testing.assert_array_equal(emulate(body, "k", 1, 32, args)["k_d"], np.full((16, 16), 48.0, np.float32))
    mixed = _F16.replace("m16n16k16.f32.f32 {f}".format(f=_regs("f", 8)), "m16n16k16.f16.f32 {f}".format(
        f=_regs("f", 8)))
    with pytest.raises(EmulationError, match=r"D and C of one type"):
        emulate(mixed, "k", 1, 32, args)
    short = _F16.replace("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {a}".format(a=_regs("a", 8)),
                         "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 " + _regs("a", 3), 1)
    with pytest.raises(EmulationError, match=r"3 registers for a wmma a fragment of m16n16k16") as info:
        emulate(short, "k", 1, 32, args)  # a fragment of the wrong size: named, not a traceback
    assert "\n" not in str(info.value)
    stray = _F16.replace("ld.param.u64 %rd1, [k_a];", "mov.u64 %rd1, 256;").replace(
        "m16n16k16.global.f16 {a}".format(a=_regs("a", 8)), "m16n16k16.f16 " + _regs("a", 8), 1)
    with pytest.raises(EmulationError, match=r"global load of 2 bytes at 0x100 is outside every buffer"):
        emulate(stray, "k", 1, 32, args)  # a generic address in no window: named, as any global access


_F64 = HEADER + """
.visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_d)
{{
	.reg .f64 %a<1>; .reg .f64 %b<1>; .reg .f64 %c<2>; .reg .f64 %e<2>; .reg .f64 %f<2>; .reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_a]; ld.param.u64 %rd2, [k_b]; ld.param.u64 %rd3, [k_c]; ld.param.u64 %rd4, [k_d];
	wmma.load.c.sync.aligned.col.m8n8k4.global.f64 {c}, [%rd3];
	wmma.load.a.sync.aligned.col.m8n8k4.global.f64 {a}, [%rd1], 10;
	wmma.load.b.sync.aligned.row.m8n8k4.global.f64 {b}, [%rd2];
	wmma.mma.sync.aligned.col.row.m8n8k4.f64.f64.f64.f64.MODE {e}, {a}, {b}, {c};
	add.s64 %rd5, %rd1, 320;
	add.s64 %rd6, %rd2, 256;
	wmma.load.a.sync.aligned.col.m8n8k4.global.f64 {a}, [%rd5], 10;
	wmma.load.b.sync.aligned.row.m8n8k4.global.f64 {b}, [%rd6];
	wmma.mma.sync.aligned.col.row.m8n8k4.f64.f64.f64.f64.MODE {f}, {a}, {b}, {e};
	wmma.store.d.sync.aligned.row.m8n8k4.global.f64 [%rd4], {f};
	ret;
}}
""".format(a=_regs("a", 1), b=_regs("b", 1), c=_regs("c", 2), e=_regs("e", 2), f=_regs("f", 2))


def _rounded(q: Fraction, mode: str) -> float:
    """The f64 that rounds q to nearest even (rn), toward zero, -inf or +inf."""
    x = float(q)
    if mode == "rn" or Fraction(x) == q:
        return x
    if mode == "rm" or (mode == "rz" and q > 0):
        return x if Fraction(x) < q else math.nextafter(x, -math.inf)
    return x if Fraction(x) > q else math.nextafter(x, math.inf)


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_wmma_is_fmas_chained_in_k_order_rounded_in_its_mode(mode) -> None:
    """m8n8k4 f64 (A column-major with stride 10, B row-major, C column-major, two k steps): each D element is C's
    fma chain over k = 0..7, every step rounded in the instruction's mode (the exact sum from fractions); the modes
    give different bits."""
    rng = np.random.default_rng(23)
    a, b = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n) for n in (80, 64))
    c = rng.standard_normal(64) * 2.0 ** rng.integers(-40, 40, 64)
    args = {"k_a": a, "k_b": b, "k_c": c, "k_d": np.zeros(64)}
    d = emulate(_F64.replace("MODE", mode), "k", 1, 32, args)["k_d"].reshape(8, 8)
    A, B, C = a.reshape(8, 10).T[:8], b.reshape(8, 8), c.reshape(8, 8).T
    want = np.empty((8, 8))
    for i, j in np.ndindex(8, 8):
        acc = C[i, j]
        for k in range(8):
            acc = _rounded(Fraction(A[i, k]) * Fraction(B[k, j]) + Fraction(acc), mode)
        want[i, j] = acc
    np.testing.assert_array_equal(d.view(np.uint64), want.view(np.uint64))
    if mode != "rn":
        assert (d != emulate(_F64.replace("MODE", "rn"), "k", 1, 32, args)["k_d"].reshape(8, 8)).any()


_SUB = HEADER + """
.visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_d, .param .u32 k_ld)
{{
	.reg .b32 %a<1>; .reg .b32 %b<1>; .reg .b32 %c<2>; .reg .b32 %e<2>; .reg .b32 %r<2>; .reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_a]; ld.param.u64 %rd2, [k_b]; ld.param.u64 %rd3, [k_c]; ld.param.u64 %rd4, [k_d];
	ld.param.u32 %r1, [k_ld];
	wmma.load.c.sync.aligned.row.SHAPE.global.s32 {c}, [%rd3];
	wmma.load.a.sync.aligned.row.SHAPE.global.TYPE {a}, [%rd1], %r1;
	wmma.load.b.sync.aligned.col.SHAPE.global.TYPE {b}, [%rd2], %r1;
	wmma.mma.OPsync.aligned.row.col.SHAPE.s32.TYPE.TYPE.s32SAT {e}, {a}, {b}, {c};
	wmma.store.d.sync.aligned.col.SHAPE.global.s32 [%rd4], {e};
	ret;
}}
""".format(a=_regs("a", 1), b=_regs("b", 1), c=_regs("c", 2), e=_regs("e", 2))


@pytest.mark.parametrize("kind,op,sat", [("s4", "", ".satfinite"), ("s4", "", ""), ("u4", "", ".satfinite"),
                                         ("b1", "xor.popc.", ""), ("b1", "and.popc.", "")])
def test_subbyte_wmma_is_the_exact_sum_over_whole_word_strides(kind, op, sat) -> None:
    """m8n8k32 s4 / u4 and m8n8k128 b1: A row-major and B column-major with a run-time stride that is not a whole
    number of words (cut to whole words, as ptxas's shift does), s32 C near both ends of the range: D = C + A·B
    exactly (b1: the popcounts of A's rows AND / XOR B's columns), clamped with .satfinite, else wrapped."""
    bits, shape = (1, "m8n8k128") if kind == "b1" else (4, "m8n8k32")
    per = 32 // bits
    ld = 2 * per * 4 + per - 1  # two whole rows' worth of words and a part word: 8 words a row
    rng = np.random.default_rng(24)
    a, b = (rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    c = rng.integers(-2**31, 2**31, (8, 8)).astype(np.int32)
    c[:2] = 2**31 - 1 - rng.integers(0, 60, (2, 8))
    c[2] = -2**31 + rng.integers(0, 60, 8)
    src = _SUB.replace("SHAPE", shape).replace("TYPE", kind).replace("OP", op).replace("SAT", sat)
    d = emulate(src, "k", 1, 32, {"k_a": a, "k_b": b, "k_c": c, "k_d": np.zeros(64, np.int32), "k_ld": ld})["k_d"]

    def elements(words):  # (8, 4) words of rows (A) or columns (B) -> (8, 32 / bits * 4) element values
        v = (words[..., None] >> (bits * np.arange(per, dtype=np.uint32))) & ((1 << bits) - 1)
        v = v.reshape(8, -1).astype(np.int64)
        return np.where(v >= 8, v - 16, v) if kind == "s4" else v
    A, Bt = elements(a.reshape(8, 8)[:, :4]), elements(b.reshape(8, 8)[:, :4])
    if kind == "b1":
        prod = ((A[:, None] ^ Bt[None]) if op.startswith("xor") else (A[:, None] & Bt[None])).sum(-1)
    else:
        prod = A @ Bt.T
    want = c.astype(np.int64) + prod
    assert ((want > 2**31 - 1) | (want < -2**31)).any()  # the clamp or the wrap is met
    want = np.clip(want, -2**31, 2**31 - 1) if sat else want
    np.testing.assert_array_equal(d.view(np.uint32).reshape(8, 8).T, (want & 0xFFFFFFFF).astype(np.uint32))


def test_subbyte_layouts_other_than_the_isa_s_are_refused() -> None:
    """A column-major sub-byte A (the ISA allows row-major A and column-major B only) and a b1 mma without its
    operation are one-line errors."""
    src = _SUB.replace("SHAPE", "m8n8k32").replace("TYPE", "s4").replace("OP", "").replace("SAT", "")
    args = {"k_a": np.zeros(64, np.uint32), "k_b": np.zeros(64, np.uint32), "k_c": np.zeros(64, np.int32),
            "k_d": np.zeros(64, np.int32), "k_ld": 64}
    with pytest.raises(EmulationError, match=r"sub-byte A is row-major and B column-major only") as info:
        emulate(src.replace("load.a.sync.aligned.row", "load.a.sync.aligned.col"), "k", 1, 32, args)
    assert "\n" not in str(info.value)
    b1 = _SUB.replace("SHAPE", "m8n8k128").replace("TYPE", "b1").replace("OP", "").replace("SAT", "")
    with pytest.raises(EmulationError, match=r"popc"):
        emulate(b1, "k", 1, 32, args)


# (operand, shape, element bytes, registers) of every fragment the emulator loads: A / B in f16 (copies), bf16 and
# 8-bit; tf32; f32 / s32 and f16 accumulators; the m8n8 shapes' f64 and s32 fragments and sub-byte words
_FRAGMENTS = [(o, s, e, r) for s, r16, rb, r8 in (((16, 16, 16), (8, 8), (4, 4), (2, 2)),
                                                   ((32, 8, 16), (8, 8), (8, 2), (4, 1)),
                                                   ((8, 32, 16), (8, 8), (2, 8), (1, 4)))
              for o, i in (("a", 0), ("b", 1)) for e, r in ((2, r16[i]), (2, rb[i]), (1, r8[i]))] + [
    ("a", (16, 16, 8), 4, 4), ("b", (16, 16, 8), 4, 4)] + [
    (o, s, e, r) for o in ("c", "d") for s in ((16, 16, 16), (32, 8, 16), (8, 32, 16), (16, 16, 8))
    for e, r in ((4, 8), (2, 4)) if not (s[2] == 8 and e == 2)] + [
    (o, (8, 8, 4), 8, r) for o, r in (("a", 1), ("b", 1), ("c", 2), ("d", 2))] + [  # f64; sub-byte A / B as words
    (o, (8, 8, 4), 4, r) for o, r in (("a", 1), ("b", 1), ("c", 2), ("d", 2))]


@pytest.mark.parametrize("operand,shape,esize,nregs", _FRAGMENTS)
def test_fragment_map_holds_every_element_equally_often(operand, shape, esize, nregs) -> None:
    """Each element of the operand sits in the same number of slots (1; f16 A / B: 2 or 4 copies, register blocks
    repeated whole), and a lane's copies are its own."""
    m, n, k = shape
    size = {"a": m * k, "b": k * n}.get(operand, m * n)
    where = fragment_map(operand, shape, esize, nregs)
    per = max(1, 4 // esize)  # elements a register holds
    assert where.shape == (32, nregs * per)
    counts = np.bincount(where.reshape(-1), minlength=size)
    assert counts.size == size and (counts == counts[0]).all()
    copies = counts[0]
    assert copies == nregs * per * 32 // size and (copies == 1 or (esize, operand) in ((2, "a"), (2, "b")))
    unique = where.shape[1] // copies
    np.testing.assert_array_equal(where, np.tile(where[:, :unique], copies))


def test_fragment_map_is_the_sm90_layout_read_off_ptxas() -> None:
    """What ptxas 13.0 makes of wmma.load for sm_90a (the SASS of one-load kernels, leading dimension 48): f16 A
    m16n16k16 loads word (row g, columns 2t, 2t + 1) at offsets 0, 8 rows, 8 columns, both, into registers 0-3 and
    stores registers 4-7 as copies of them, row- and column-major alike (MOVM.16.MT88 transposes the latter); f16 B
    (column-major) takes n 0-7 then n 8-15, k 0-7 then 8-15 within; s8 A registers hold 4 bytes of rows g and g + 8;
    an f16 m8n32k16 A holds its 8 rows in registers 0-1 and repeats them four times, and m8n32k16 is m32n8k16
    transposed (B in that one's A order, accumulators with rows 2t, 2t + 1 of column g); tf32 B (column-major) holds
    k t, t + 4 of n g, then of n g + 8. The f16 wmma.mma reads A and B from registers 0-3 only (ptxas drops a write to
    registers 4-7 before it)."""
    g, t = np.arange(32) // 4, np.arange(32) % 4
    a = fragment_map("a", (16, 16, 16), 2, 8)
    for reg, (r0, c0) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)] * 2):
        np.testing.assert_array_equal(a[:, 2 * reg], (r0 + g) * 16 + c0 + 2 * t)
        np.testing.assert_array_equal(a[:, 2 * reg + 1], (r0 + g) * 16 + c0 + 2 * t + 1)
    b = fragment_map("b", (16, 16, 16), 2, 8)  # flat index k * 16 + n
    for reg, (n0, k0) in enumerate([(0, 0), (0, 8), (8, 0), (8, 8)]):
        np.testing.assert_array_equal(b[:, 2 * reg], (k0 + 2 * t) * 16 + n0 + g)
    s8 = fragment_map("a", (16, 16, 16), 1, 2)
    np.testing.assert_array_equal(s8[:, 4:8], (8 + g[:, None]) * 16 + 4 * t[:, None] + np.arange(4))
    a8 = fragment_map("a", (8, 32, 16), 2, 8)
    np.testing.assert_array_equal(a8, np.tile(a8[:, :4], 4))
    np.testing.assert_array_equal(a8[:, 2], g * 16 + 8 + 2 * t)
    b8 = fragment_map("b", (8, 32, 16), 2, 8)  # m8n32k16 is m32n8k16 transposed: B's n-blocks 0, 8, k 0-7, ...
    for reg, (n0, k0) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8), (16, 0), (24, 0), (16, 8), (24, 8)]):
        np.testing.assert_array_equal(b8[:, 2 * reg + 1], (k0 + 2 * t + 1) * 32 + n0 + g)
    c8 = fragment_map("c", (8, 32, 16), 4, 8)  # ... and its accumulator rows 2t, 2t + 1 of column g
    for reg, n0 in enumerate([0, 0, 8, 8, 16, 16, 24, 24]):
        np.testing.assert_array_equal(c8[:, reg], (2 * t + reg % 2) * 32 + n0 + g)
    np.testing.assert_array_equal(fragment_map("c", (8, 32, 16), 2, 4)[:, :2], c8[:, :2])  # f16: MOVM.16.MT88
    tf = fragment_map("b", (16, 16, 8), 4, 4)  # tf32 B: (k t, n g), k + 4, n + 8
    np.testing.assert_array_equal(tf, np.stack([t * 16 + g, (t + 4) * 16 + g, t * 16 + g + 8, (t + 4) * 16 + g + 8],
                                               1))
    c = fragment_map("c", (16, 16, 16), 4, 8)  # the m16n8 f32 C fragments, n 0-7 then n 8-15
    np.testing.assert_array_equal(c[:, :4], np.stack([g * 16 + 2 * t, g * 16 + 2 * t + 1, (g + 8) * 16 + 2 * t,
                                                      (g + 8) * 16 + 2 * t + 1], 1))
    np.testing.assert_array_equal(c[:, 4:], c[:, :4] + 8)


def test_a_lane_reads_its_own_elements_and_the_mma_the_first_copy() -> None:
    """Zeroing f16 A register 5 (a copy) leaves the product as it is; zeroing register 1 (rows 8-15 of the first k
    half) changes rows 8-15 of D only."""
    body = _F16.replace("\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {e}".format(e=_regs("e", 8)),
                        "\tmov.b32 %aREG, 0;\n\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 " + _regs("e", 8),
                        1)
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((16, 32))).astype(np.float16)
    bt = (rng.standard_normal((16, 32))).astype(np.float16)
    args = {"k_a": a, "k_b": bt, "k_c": np.zeros((16, 16), np.float32), "k_d": np.zeros((16, 16), np.float32)}
    plain = emulate(_F16, "k", 1, 32, args)["k_d"].reshape(16, 16).T  # stored column-major
    copy = emulate(body.replace("REG", "5"), "k", 1, 32, args)["k_d"].reshape(16, 16).T
    first = emulate(body.replace("REG", "1"), "k", 1, 32, args)["k_d"].reshape(16, 16).T
    np.testing.assert_array_equal(copy, plain)
    np.testing.assert_array_equal(first[:8], plain[:8])
    assert (first[8:] != plain[8:]).all()


_CTYPE = {"f16": "half", "bf16": "__nv_bfloat16", "s8": "signed char", "u8": "unsigned char", "tf32": "float",
          "f32": "float", "s32": "int", "f64": "double", "s4": "unsigned", "u4": "unsigned", "b1": "unsigned"}
_USE = {"tf32": "wmma::precision::tf32", **{t: f"wmma::experimental::precision::{t}" for t in ("s4", "u4", "b1")}}
_ESIZE = {"f16": 2, "bf16": 2, "s8": 1, "u8": 1, "tf32": 4, "f32": 4, "s32": 4, "f64": 8, "s4": 4, "u4": 4, "b1": 4}
_PER = {"s4": 8, "u4": 8, "b1": 32}  # sub-byte elements to a 32-bit word: the layouts are read in words
_SHAPES = [(16, 16, 16), (32, 8, 16), (8, 32, 16)]
_LD = 48  # the probes' leading dimension, elements (sub-byte: 12 words)
# (operand, shape, type, memory layout): every fragment wmma.load fills (a, b, c) and every one wmma.store.d empties
_PROBES = ([(o, s, t, lay) for t in ("f16", "bf16", "s8", "u8") for lay in ("row", "col") for s in _SHAPES
            for o in ("a", "b")] + [(o, (16, 16, 8), "tf32", lay) for lay in ("row", "col") for o in ("a", "b")]
           + [(o, s, t, lay) for o in ("c", "d") for t in ("f32", "f16", "s32")
              for s in _SHAPES + ([(16, 16, 8)] if t == "f32" else []) for lay in ("row", "col")]
           + [(o, (8, 8, 4), "f64", lay) for o in ("a", "b", "c", "d") for lay in ("row", "col")]
           + [(o, (8, 8, k), t, lay) for k, ts in ((32, ("s4", "u4")), (128, ("b1",))) for t in ts
              for o, lay in (("a", "row"), ("b", "col"))]
           + [(o, (8, 8, k), "s32", lay) for o in ("c", "d") for k in (32, 128) for lay in ("row", "col")])


def _probe_source() -> str:
    """One kernel per probe: a load whose fragment words go to out[word * 32 + lane], or a store of a fragment
    filled from in[word * 32 + lane]; leading dimension _LD (sub-byte: _LD words)."""
    lines = ["#include <mma.h>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "using namespace nvcuda;",
             "template <class F> __device__ void dump(F& f, unsigned* out) { unsigned w[(sizeof(f.x) + 3) / 4]; "
             "memcpy(w, f.x, sizeof(f.x)); for (int i = 0; i < int(sizeof(w) / 4); ++i) "
             "out[i * 32 + threadIdx.x] = w[i]; }"]
    for i, (op, (m, n, k), t, lay) in enumerate(_PROBES):
        ty = _CTYPE[t]
        if op == "d":
            lines.append(f'extern "C" __global__ void k{i}(const unsigned* __restrict__ in, {ty}* out) {{ '
                         f"wmma::fragment<wmma::accumulator, {m}, {n}, {k}, {ty}> f; "
                         "unsigned w[(sizeof(f.x) + 3) / 4]; "
                         "for (int i = 0; i < int(sizeof(w) / 4); ++i) w[i] = in[i * 32 + threadIdx.x]; "
                         "memcpy(f.x, w, sizeof(f.x)); "
                         f"wmma::store_matrix_sync(out, f, {_LD}, wmma::mem_{lay}_major); }}")
            continue
        if op == "c":
            frag, extra = f"wmma::accumulator, {m}, {n}, {k}, {ty}", f", wmma::mem_{lay}_major"
        else:
            frag, extra = f"wmma::matrix_{op}, {m}, {n}, {k}, {_USE.get(t, ty)}, wmma::{lay}_major", ""
        ld = _LD * _PER.get(t, 1)
        lines.append(f'extern "C" __global__ void k{i}(const {ty}* __restrict__ in, unsigned* out) {{ '
                     f"wmma::fragment<{frag}> f; wmma::load_matrix_sync(f, in, {ld}{extra}); dump(f, out); }}")
    return "\n".join(lines) + "\n"


def _moved(op: str, shape: tuple, t: str, lay: str, stores: dict) -> np.ndarray:
    """(32, slots) flat operand indices that the symbolically run kernel moved between each lane's fragment slot and
    memory (-1: none); sub-byte operands in words (the operand's shape in words along K)."""
    m, n, k = shape
    es = _ESIZE[t]
    cols = {"a": k, "b": n}.get(op, n) // (_PER.get(t, 1) if op == "a" else 1)
    slots = m * n // 32 if op == "d" else (max(stores) // 128 + 1) * 4 // es  # an accumulator: m n / 32 elements
    got = np.full((32, slots), -1)
    for off, val in stores.items():
        for j in range(0, 4, min(es, 4)):
            src = val[j]
            assert list(val[j:j + min(es, 4)]) == [None if src is None else src + q for q in range(min(es, 4))], \
                (op, shape, val)
            if src is None:
                continue
            src -= PARAMS[0x210]
            mem, frag = (off + j, src) if op == "d" else (src, off + j)  # byte offsets in memory, in the dump
            word, lane = divmod(frag // 4, 32)
            at = word * 4 + frag % 4  # byte of the lane's fragment
            assert at % es == mem % es, (op, shape, t, "an element split across slots")
            row, col = divmod(mem // es, _LD)
            r, c = (row, col) if lay == "row" else (col, row)
            got[lane, at // es] = r * cols + c
    return got


@pytest.mark.slow  # the default run has the H100's word on the layouts: the corpus entry cu_wmma_fragment_map
@pytest.mark.skipif(shutil.which("nvcc") is None or find_tool("cuobjdump") is None, reason="needs nvcc and cuobjdump")
def test_fragment_map_is_what_ptxas_generates(tmp_path) -> None:
    """Every fragment's layout as ptxas 13.0 generates it for sm_90a: each probe's SASS run symbolically over a warp
    (tests/ptx/emulate/sass_lanes.py) names the memory element each lane's fragment slot is loaded from (A and B in
    four types, three shapes, both layouts; tf32; f32, f16, s32 accumulators both ways) or stored to (store.d), and
    that is fragment_map's slot for it."""
    _, sass = build(_probe_source(), tmp_path, ptx=False)
    wrong = []
    for i, (op, shape, t, lay) in enumerate(_PROBES):
        warp = Warp()
        warp.run(sass[f"k{i}"])
        got = _moved(op, shape, t, lay, warp.stores)
        nregs = got.shape[1] * _ESIZE[t] // 4 // (2 if t == "f64" else 1)
        words = (shape[0], shape[1], shape[2] // _PER.get(t, 1))
        want = fragment_map(op, words, _ESIZE[t], nregs)
        if op == "d":  # a store writes each element once, from its (only) slot
            want = np.where(np.isin(np.arange(want.size).reshape(want.shape), np.unique(want, return_index=True)[1]),
                            want, -1)
        if not np.array_equal(got, want):
            wrong.append(f"{op} {shape} {t} {lay}")
    assert len(_PROBES) == 114 and not wrong, wrong
