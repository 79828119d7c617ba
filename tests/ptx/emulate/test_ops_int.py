"""Integer, bit and compare instructions against numpy on random and edge operands; constant expressions in operands
(the hand-written wgmma descriptor idiom), read and run; integer mma.sync (8- and 4-bit) against an exact matrix
product packed in the PTX ISA's fragment order by its index formulas."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import HEADER, fns_reference, run_body
from tools.corpus.mma import INT_BITS, int_mma_tiles, int_mma_words

from tcforge.ptx.module import read_module
from tcforge.ptx.operands import Imm, Pair, Reg, parse_operand

EDGES = np.array([0, 1, 2, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678, 0x80000001],
                 np.uint32)


def _operands(seed: int, n: int = 64, k: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, size=(n, k), dtype=np.uint64).astype(np.uint32)
    x[: len(EDGES), 0] = EDGES
    x[: len(EDGES), 1 % k] = EDGES[::-1]
    return x


def _s(x):
    return x.view(np.int32).astype(np.int64)


BINARY = {
    "add.s32": lambda a, b: a + b,
    "sub.u32": lambda a, b: a - b,
    "mul.lo.s32": lambda a, b: a * b,
    "mul.hi.u32": lambda a, b: ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32),
    "mul.hi.s32": lambda a, b: ((_s(a) * _s(b)) >> 32).astype(np.uint32),
    "min.s32": lambda a, b: np.minimum(_s(a), _s(b)).astype(np.uint32),
    "max.u32": np.maximum,
    "and.b32": np.bitwise_and, "or.b32": np.bitwise_or, "xor.b32": np.bitwise_xor,
    "shl.b32": lambda a, b: np.where(b >= 32, 0, a.astype(np.uint64) << np.minimum(b, 31).astype(np.uint64))
    .astype(np.uint32),
    "shr.u32": lambda a, b: np.where(b >= 32, 0, a >> np.minimum(b, 31)).astype(np.uint32),
    "shr.s32": lambda a, b: (_s(a) >> np.minimum(b, 31).astype(np.int64)).astype(np.uint32),
    "div.u32": lambda a, b: np.where(b == 0, 0xFFFFFFFF, a // np.maximum(b, 1)).astype(np.uint32),
    "rem.s32": lambda a, b: np.where(b == 0, a, np.fmod(_s(a), np.where(_s(b) == 0, 1, _s(b))).astype(np.int64))
    .astype(np.uint32),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary(op: str) -> None:
    x = _operands(hash(op) % 1000)
    if op.startswith(("shl", "shr")):
        x[:, 1] %= 40
    if op == "rem.s32":
        x = x[(_s(x[:, 0]) != -(1 << 31))]
        x = np.concatenate([x, x[: 64 - len(x)]])[:64]
    body = f"ld.global.u32 %r10, [%rd4];\nld.global.u32 %r11, [%rd4+4];\n{op} %r12, %r10, %r11;\n" \
           "st.global.u32 [%rd6], %r12;"
    got = run_body(body, x, 1)[:, 0]
    want = BINARY[op](x[:, 0], x[:, 1]).astype(np.uint32)
    np.testing.assert_array_equal(got, want)


def test_wide_mad_bits() -> None:
    x = _operands(7, k=3)
    body = """ld.global.u32 %r10, [%rd4];
ld.global.u32 %r11, [%rd4+4];
ld.global.u32 %r12, [%rd4+8];
mul.wide.s32 %rd10, %r10, %r11;
mov.b64 {%r20, %r21}, %rd10;
mad.lo.u32 %r22, %r10, %r11, %r12;
popc.b32 %r23, %r10;
clz.b32 %r24, %r10;
brev.b32 %r25, %r10;
bfe.u32 %r26, %r10, 5, 9;
bfe.s32 %r27, %r10, 3, 12;
bfi.b32 %r28, %r10, %r11, 8, 12;
prmt.b32 %r29, %r10, %r11, 0x3715;
lop3.b32 %r30, %r10, %r11, %r12, 0xE8;
st.global.v4.u32 [%rd6], {%r20, %r21, %r22, %r23};
st.global.v4.u32 [%rd6+16], {%r24, %r25, %r26, %r27};
st.global.v2.u32 [%rd6+32], {%r28, %r29};
st.global.u32 [%rd6+40], %r30;"""
    got = run_body(body, x, 12)
    a, b, c = x[:, 0], x[:, 1], x[:, 2]
    wide = (_s(a) * _s(b)).astype(np.uint64)
    np.testing.assert_array_equal(got[:, 0], (wide & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    np.testing.assert_array_equal(got[:, 1], (wide >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(got[:, 2], a * b + c)
    np.testing.assert_array_equal(got[:, 3], [bin(int(v)).count("1") for v in a])
    np.testing.assert_array_equal(got[:, 4], [32 - int(v).bit_length() for v in a])
    np.testing.assert_array_equal(got[:, 5], [int(f"{int(v):032b}"[::-1], 2) for v in a])
    np.testing.assert_array_equal(got[:, 6], (a >> 5) & 0x1FF)
    f = (a >> 3) & 0xFFF
    np.testing.assert_array_equal(got[:, 7], np.where(f & 0x800, f | 0xFFFFF000, f).astype(np.uint32))
    np.testing.assert_array_equal(got[:, 8], (b & ~np.uint32(0xFFF00)) | ((a & 0xFFF) << 8))
    both = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
    want = np.zeros_like(a)
    for i, sel in enumerate((5, 1, 7, 3)):
        want |= (((both >> np.uint64(8 * sel)) & np.uint64(0xFF)).astype(np.uint32) << np.uint32(8 * i))
    np.testing.assert_array_equal(got[:, 9], want)
    np.testing.assert_array_equal(got[:, 10], (a & b) | (a & c) | (b & c))  # 0xE8 = majority


def test_setp_selp_and_constant_expressions() -> None:
    x = _operands(3)
    body = """ld.global.u32 %r10, [%rd4];
ld.global.u32 %r11, [%rd4+4];
setp.lt.s32 %p1, %r10, %r11;
setp.hi.u32 %p2, %r10, %r11;
setp.ne.and.b32 %p3, %r10, 0, %p2;
selp.b32 %r12, 1, 0, %p1;
selp.b32 %r13, 1, 0, %p2;
selp.b32 %r14, 1, 0, %p3;
or.b32 %r15, %r10, ((128 >> 4) << 16);
st.global.v4.u32 [%rd6], {%r12, %r13, %r14, %r15};"""
    got = run_body(body, x, 4)
    a, b = x[:, 0], x[:, 1]
    np.testing.assert_array_equal(got[:, 0], _s(a) < _s(b))
    np.testing.assert_array_equal(got[:, 1], a > b)
    np.testing.assert_array_equal(got[:, 2], (a != 0) & (a > b))
    np.testing.assert_array_equal(got[:, 3], a | (8 << 16))


def test_set_writes_all_ones_or_one_and_add_u16x2_wraps_per_lane() -> None:
    """set: u32 / s32 destinations all ones, f32 1.0, combined with a predicate; an f16x2 source sets each 16-bit
    lane (1.0 in f16, or 0xFFFF for u32), NaN lanes unordered; add.u16x2 wraps each half on its own. In a `{ }`
    block, `.reg.b16` written without a space (cuda_fp16's inline asm) declares registers."""
    x = _operands(3)
    x[:4, 1] = [0x3C00_7E00, 0xFFFF_0001, 0x8000_0000, 0x7FFF_FFFF]  # f16x2 pairs: (NaN, 1.0), ...
    x[:4, 0] = [0x3C00_7E00, 0x0001_FFFF, 0x0000_8000, 0x7FFF_FFFF]
    body = """ld.global.u32 %r10, [%rd4];
ld.global.u32 %r11, [%rd4+4];
setp.ne.u32 %p2, %r10, 0;
set.lt.u32.s32 %r12, %r10, %r11;
set.ge.and.f32.u32 %r13, %r10, %r11, %p2;
set.eq.f16x2.f16x2 %r14, %r10, %r11;
set.neu.u32.f16x2 %r15, %r10, %r11;
{ .reg.b32 t; add.u16x2 t, %r10, %r11; st.global.u32 [%rd6+16], t; }
st.global.v4.u32 [%rd6], {%r12, %r13, %r14, %r15};"""
    got = run_body(body, x, 8)
    a, b = x[:, 0], x[:, 1]
    np.testing.assert_array_equal(got[:, 0], np.where(_s(a) < _s(b), 0xFFFFFFFF, 0))
    np.testing.assert_array_equal(got[:, 1], np.where((a >= b) & (a != 0), 0x3F800000, 0))
    ha, hb = (np.stack([v & 0xFFFF, v >> 16], 1).astype(np.uint16).view(np.float16) for v in (a, b))
    eq, neu = ha == hb, ~(ha == hb)  # neu: not equal or unordered
    np.testing.assert_array_equal(got[:, 2], (eq[:, 0] * 0x3C00) | (eq[:, 1] * 0x3C00 << 16))
    np.testing.assert_array_equal(got[:, 3], (neu[:, 0] * 0xFFFF) | (neu[:, 1] * 0xFFFF << 16))
    assert got[0, 2] == 0x3C00_0000 and got[0, 3] == 0x0000_FFFF  # NaN low lane: eq false, neu true
    lo, hi = ((a & 0xFFFF) + (b & 0xFFFF)) & 0xFFFF, (((a >> 16) + (b >> 16)) & 0xFFFF) << 16
    np.testing.assert_array_equal(got[:, 4], lo | hi)


def test_fns_finds_the_nth_set_bit_from_base_both_ways() -> None:
    rng = np.random.default_rng(9)
    x = np.zeros((256, 4), np.uint32)
    x[:, 0] = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    x[:8, 0] = [0, 0xFFFFFFFF, 1, 0x80000000, 0x00010000, 0xAAAAAAAA, 0x55555555, 7]
    x[:, 1] = rng.integers(0, 32, 256)
    x[:, 2] = rng.integers(-33, 34, 256).astype(np.int32).view(np.uint32)
    body = """ld.global.v2.u32 {%r10, %r11}, [%rd4];
ld.global.u32 %r12, [%rd4+8];
fns.b32 %r13, %r10, %r11, %r12;
st.global.u32 [%rd6], %r13;"""
    got = run_body(body, x, 1)[:, 0]
    want = [fns_reference(int(m), int(b), int(o))
            for m, b, o in zip(x[:, 0], x[:, 1], x[:, 2].view(np.int32), strict=True)]
    np.testing.assert_array_equal(got, want)


def test_isspacep_classifies_generic_addresses() -> None:
    """A global buffer's address, a local array's, a shared array's (own window; the cluster's), the parameter
    block's: each true only for its space."""
    body = """mov.u64 %rd10, loc;
cvta.local.u64 %rd11, %rd10;
mov.u64 %rd12, sm;
cvta.shared.u64 %rd13, %rd12;
mov.u64 %rd14, k_in;
cvta.param.u64 %rd15, %rd14;
isspacep.global %p1, %rd4;
isspacep.local %p2, %rd11;
isspacep.shared %p3, %rd13;
isspacep.shared::cluster %p4, %rd13;
isspacep.param %p5, %rd15;
isspacep.global %p6, %rd13;
isspacep.shared %p7, %rd4;
isspacep.local %p8, %rd15;
selp.u32 %r10, 1, 0, %p1;
selp.u32 %r11, 2, 0, %p2;
selp.u32 %r12, 4, 0, %p3;
selp.u32 %r13, 8, 0, %p4;
selp.u32 %r14, 16, 0, %p5;
selp.u32 %r15, 32, 0, %p6;
selp.u32 %r16, 64, 0, %p7;
selp.u32 %r17, 128, 0, %p8;
add.u32 %r10, %r10, %r11;
add.u32 %r10, %r10, %r12;
add.u32 %r10, %r10, %r13;
add.u32 %r10, %r10, %r14;
add.u32 %r10, %r10, %r15;
add.u32 %r10, %r10, %r16;
add.u32 %r10, %r10, %r17;
st.global.u32 [%rd6], %r10;"""
    got = run_body(body, np.zeros(32, np.uint32), 1, decls=".local .align 4 .b8 loc[16];\n.shared .align 4 .b8 sm[64];")
    np.testing.assert_array_equal(got[:, 0], 1 + 2 + 4 + 8 + 16)


def test_cvt_pack_clamps_and_chains() -> None:
    """cvt.pack.sat: a and b clamped to the type, b low, a above, c's low bits above both (two u8 packs make four
    bytes)."""
    x = np.array([[300, -5, 0x0000BEEF, 0], [7, 255, 0x12345678, 0], [-129, 128, 0, 0], [40000, -40000, 1, 0]],
                 np.int32).view(np.uint32)
    body = """ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd4];
cvt.pack.sat.u8.s32.b32 %r14, %r10, %r11, %r12;
cvt.pack.sat.s16.s32 %r15, %r10, %r11;
cvt.pack.sat.s4.s32.b32 %r16, %r10, %r11, %r12;
cvt.pack.sat.u8.s32.b32 %r17, %r11, %r10, %r14;
st.global.v4.u32 [%rd6], {%r14, %r15, %r16, %r17};"""
    got = run_body(body, x, 4, block=4)
    a, b, c = x[:, 0].view(np.int32).astype(np.int64), x[:, 1].view(np.int32).astype(np.int64), x[:, 2]

    def pack(lo, hi, n, signed):
        rng = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
        f = (1 << n) - 1
        return (np.clip(lo, *rng) & f) | ((np.clip(hi, *rng) & f) << n)
    u8 = pack(b, a, 8, False) | (c.astype(np.int64) << 16)
    np.testing.assert_array_equal(got[:, 0], u8 & 0xFFFFFFFF)
    np.testing.assert_array_equal(got[:, 1], pack(b, a, 16, True))
    np.testing.assert_array_equal(got[:, 2], (pack(b, a, 4, True) | (c.astype(np.int64) << 8)) & 0xFFFFFFFF)
    np.testing.assert_array_equal(got[:, 3], (pack(a, b, 8, False) | (u8 << 16)) & 0xFFFFFFFF)
    assert got[0, 0] == 0xBEEF_FF00  # a = 300 -> 255 above, b = -5 -> 0 low


# ---------------------------------------------------------------- constant expressions in operands
@pytest.mark.parametrize("text,value", [("((128 >> 4) << 16)", 524288), ("1 << 5 | 3", 35), ("-(1 << 3)", -8),
                                        ("~0", -1), ("(-7 / 2)", -3), ("(7 % -3)", 1), ("(0x10 + 0b11) * 2U", 38)])
def test_constant_expressions(text: str, value: int) -> None:
    assert parse_operand(text) == Imm(value, text)


def test_pairs_and_lists_are_not_expressions() -> None:
    assert parse_operand("%r1|%p2") == Pair(Reg("%r1"), Reg("%p2"))
    assert type(parse_operand("(param0)")).__name__ == "Paren"


def test_descriptor_idiom_reads_and_runs() -> None:
    text = HEADER + """.visible .entry e()
{
	.reg .b64 %rd<4>;
	mov.u64 %rd1, 0;
	or.b64 %rd1, %rd1, ((128 >> 4) << 16);
	ret;
}
"""
    st = read_module(text).function("e").statements[1]
    assert st.operands[2] == Imm(524288, "((128 >> 4) << 16)")
    got = run_body("mov.u64 %rd10, 5;\nor.b64 %rd10, %rd10, ((128 >> 4) << 16);\nst.global.u64 [%rd6], %rd10;",
                   np.zeros(32, np.uint32), 2)
    assert (got.view(np.uint64)[:, 0] == 524288 | 5).all()


def _int_mma_case(k: int, ta: str, tb: str, sat: bool, seed: int, m: int = 16, op: str = "") -> tuple[
        str, np.ndarray, np.ndarray]:
    """A body with one integer mma.sync per warp, its inputs in fragment order (the corpus tool's packer, written from
    the PTX ISA's index formulas apart from the emulator's gathers) and the exact D it must give, (W, 16, 8) (m8n8:
    rows 0-7 hold it). `op`: "and" or "xor", the b1 forms' popcount operation."""
    bits = INT_BITS[ta]
    na, nb, nd = (k * bits // 64 if m == 16 else 1), k * bits // 128, m // 4  # A, B and C / D words per lane
    regs = [f"%r{10 + i}" for i in range(na + nb + nd)]
    d = [f"%r{40 + i}" for i in range(nd)]
    form = (f"mma.sync.aligned.m{m}n8k{k}.row.col{'.satfinite' if sat else ''}.s32.{ta}.{tb}.s32"
            + (f".{op}.popc" if op else ""))
    groups = ", ".join("{" + ", ".join(x) + "}" for x in (d, regs[:na], regs[na:na + nb], regs[na + nb:]))
    body = "\n".join(f"ld.global.u32 {r}, [%rd4+{4 * i}];" for i, r in enumerate(regs)) + f"""
{form} {groups};
""" + "\n".join(f"st.global.u32 [%rd6+{4 * i}], {r};" for i, r in enumerate(d))
    a, b, c = int_mma_tiles(np.random.default_rng(seed), 4, k, ta, tb)
    aw, bw, cw = int_mma_words(a, b, c, bits)
    words = np.concatenate([aw[:, :na], bw[:, :nb], cw[:, :nd]], axis=1).transpose(0, 2, 1).reshape(4 * 32, -1)
    if op == "xor":  # popc(a ^ b) of 0/1 elements
        prod = np.einsum("wmk,wkn->wmn", a, 1 - b) + np.einsum("wmk,wkn->wmn", 1 - a, b)
    else:
        prod = np.einsum("wmk,wkn->wmn", a, b)
    exact = c.astype(np.int64) + prod
    clamped = np.clip(exact, -(2**31), 2**31 - 1)
    assert op or (exact[:, :m] != clamped[:, :m]).any()  # the case reaches past the s32 range
    return body, np.ascontiguousarray(words), ((clamped if sat else exact) & 0xFFFFFFFF).astype(np.uint32)


def _check_int_case(body: str, words: np.ndarray, want: np.ndarray, m: int) -> None:
    for numerics in ("hopper", "ada"):  # exact integers: no model of either architecture enters
        got = run_body(body, words, 4, numerics=numerics).reshape(4, 32, -1)
        for i in range(m // 4):
            g, t = np.arange(32) >> 2, np.arange(32) & 3
            np.testing.assert_array_equal(got[:, :, i], want[:, g + 8 * (i >> 1), 2 * t + (i & 1)])


INT_FORMS = [(16, 16, "s8", "s8"), (16, 16, "u8", "s8"), (16, 32, "s8", "u8"), (16, 32, "u8", "u8"),
             (16, 32, "s4", "s4"), (16, 32, "u4", "s4"), (16, 64, "s4", "u4"), (16, 64, "u4", "u4"),
             (8, 16, "s8", "u8"), (8, 16, "u8", "u8"), (8, 32, "s4", "u4"), (8, 32, "u4", "s4")]


@pytest.mark.parametrize(("m", "k", "ta", "tb"), INT_FORMS)
@pytest.mark.parametrize("sat", [False, True])
def test_integer_mma_is_the_exact_product_wrapped_or_clamped(m: int, k: int, ta: str, tb: str, sat: bool) -> None:
    seed = k + 7 * len(ta + tb) + sat + ord(ta[0]) + ord(tb[1]) + m
    _check_int_case(*_int_mma_case(k, ta, tb, sat, seed, m), m)


@pytest.mark.parametrize(("m", "k"), [(8, 128), (16, 128), (16, 256)])
@pytest.mark.parametrize("op", ["and", "xor"])
def test_b1_mma_is_c_plus_the_popcount(m: int, k: int, op: str) -> None:
    _check_int_case(*_int_mma_case(k, "b1", "b1", False, k + m + len(op), m, op), m)


@pytest.mark.parametrize("form", ["m8n8k64.row.col.s32.s8.s8.s32", "m16n8k64.row.col.s32.s8.s8.s32",
                                  "m16n8k32.row.col.s32.s8.s4.s32", "m16n8k128.row.col.s32.s4.s4.s32",
                                  "m16n8k128.row.col.s32.b1.b1.s32",
                                  "m16n8k128.row.col.satfinite.s32.b1.b1.s32.and.popc",
                                  "m16n8k32.row.col.s32.s8.s8.s32.and.popc"])
def test_integer_mma_shapes_without_a_model_are_a_file_line_error(form: str) -> None:
    from tcforge.ptx.emulate import EmulationError

    body, words, _ = _int_mma_case(32, "s8", "s8", False, 0)
    with pytest.raises(EmulationError, match=r"k\.ptx:\d+: .*integer mma\.sync is modelled for m8n8k16 / m16n8k16 / "
                                             r"m16n8k32 with s8 / u8, m8n8k32 / m16n8k32 / m16n8k64 with s4 / u4"):
        run_body(body.replace("m16n8k32.row.col.s32.s8.s8.s32", form), words, 4)
