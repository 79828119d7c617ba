"""Instruction forms pinned by the H100 data (tests/data/emulate): every Hopper mma.sync form through
numerics.tensorcore with the PTX ISA's fragment layouts (and the f16 HMMA as the first half of the FP8 one), the MUFU
sequences ptxas emits for div.full.f32 and the non-ftz .approx.f32 forms, and the rules the op families measured (f64
NaN payloads, abs/neg of f32 NaN, f64 -> narrower cvt of NaN, div/rem.s64 with INT64_MIN, ptxas's folding of
bfe.s32)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import run_body

from tcforge import numerics as nx
from tcforge.numerics.tensorcore import FORMATS, HOPPER_FORMS, tc_mma
from tcforge.ptx.emulate import EmulationError
from tcforge.ptx.emulate.ops_matrix import _FORMS, _gather_a, _gather_b, _gather_c

_MMA = list(_FORMS)  # numerics.tensorcore's mma.sync forms, and the m16n8k8 ones built on them


def _mma_body(form) -> tuple[str, int]:
    """A body loading A (4 words; 2 for k8), B (2; 1), C (4 for f32, else 2) per lane, one mma.sync, D stored;
    output words."""
    nc = 4 if form.c == "f32" else 2
    na = form.k * FORMATS[form.a].nbytes // 8
    regs = [f"%r{10 + i}" for i in range(6 + nc)]
    ra, rb = regs[:na], regs[4:4 + na // 2]
    d = [f"%r{30 + i}" for i in range(nc)]
    loads = "\n".join(f"ld.global.u32 {r}, [%rd4+{4 * i}];" for i, r in enumerate(regs))
    body = f"""{loads}
{form.ptx} {{{', '.join(d)}}}, {{{', '.join(ra)}}}, {{{', '.join(rb)}}}, {{{', '.join(regs[6:])}}};
""" + "\n".join(f"st.global.u32 [%rd6+{4 * i}], {r};" for i, r in enumerate(d))
    return body, nc


@pytest.mark.parametrize("name", _MMA)
def test_every_hopper_mma_form_is_the_tensorcore_model(name: str) -> None:
    form = _FORMS[name]
    body, nc = _mma_body(form)
    rng = np.random.default_rng(sum(name.encode()))
    warps = 4
    words = rng.integers(0, 2**32, (warps * 32, 6 + nc), dtype=np.uint64).astype(np.uint32)
    for fmt, cols in ((FORMATS[form.c], range(6, 6 + nc)),):  # C: mostly ordinary values, some raw bit patterns
        vals = rng.standard_normal((warps * 32, nc * 4 // fmt.nbytes)).astype(np.float32 if fmt.nbytes == 4
                                                                              else np.float16)
        ordinary = rng.random((warps * 32, nc)) < 0.9
        words[:, cols] = np.where(ordinary, vals.view(np.uint32), words[:, cols])
    got = run_body(body, words, nc)
    esize = FORMATS[form.a].nbytes
    per_warp = words.reshape(warps, 32, -1)
    na = form.k * esize // 8
    a = _gather_a([per_warp[:, :, i] for i in range(na)], esize)
    b = _gather_b([per_warp[:, :, i] for i in range(4, 4 + na // 2)], esize)
    g, t = np.arange(32) >> 2, np.arange(32) & 3
    if nc == 4:  # f32: c0, c1 at row g, columns 2t and 2t + 1; c2, c3 at row g + 8 (the PTX ISA's layout)
        c = np.zeros((warps, 16, 8), np.uint32)
        for i, (dr, dc) in enumerate(((0, 0), (0, 1), (8, 0), (8, 1))):
            c[:, g + dr, 2 * t + dc] = per_warp[:, :, 6 + i]
    else:
        c = _gather_c([per_warp[:, :, 6], per_warp[:, :, 7]])
    want = tc_mma(form, a, b, c)
    out = got.reshape(warps, 32, nc)
    if nc == 4:
        for i, (dr, dc) in enumerate(((0, 0), (0, 1), (8, 0), (8, 1))):
            np.testing.assert_array_equal(out[:, :, i], want[:, g + dr, 2 * t + dc])
    else:
        np.testing.assert_array_equal(_gather_c([out[:, :, 0], out[:, :, 1]]), want)


def test_mma_forms_without_an_ada_model_are_a_file_line_error() -> None:
    body, nc = _mma_body(HOPPER_FORMS["mma.m16n8k16.f32.f16.f16"])
    with pytest.raises(EmulationError, match=r"k\.ptx:\d+: mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32 "
                                             r"under numerics 'ada' \(only a Hopper model exists"):
        run_body(body, np.zeros((32, 6 + nc), np.uint32), nc, numerics="ada")
    bad = body.replace("m16n8k16.row.col.f32.f16.f16.f32", "m16n8k16.row.col.f32.f16.f16.f16")
    with pytest.raises(EmulationError, match=r"k\.ptx:\d+: .*m16n8k16\.row\.col\.f32\.f16.* no model of this shape"):
        run_body(bad, np.zeros((32, 6 + nc), np.uint32), nc)


def _m884_body(form: str, nd: int, nc: int) -> str:
    """One m8n8k4 mma.sync on registers loaded per lane: A %r10-11, B %r12-13, C from %r14; D stored."""
    d, c = (", ".join(f"%r{first + i}" for i in range(n)) for first, n in ((30, nd), (14, nc)))
    loads = "\n".join(f"ld.global.u32 %r{10 + i}, [%rd4+{4 * i}];" for i in range(4 + nc))
    stores = "\n".join(f"st.global.u32 [%rd6+{4 * i}], %r{30 + i};" for i in range(nd))
    return f"{loads}\nmma.sync.aligned.{form} {{{d}}}, {{%r10, %r11}}, {{%r12, %r13}}, {{{c}}};\n{stores}"


@pytest.mark.parametrize(("form", "nd", "nc", "message"), [
    ("m8n8k4.row.col.f16.f16.f16.f32", 4, 8, r"\(m8n8k4 mma\.sync is modelled for f16 A and B with f16 C and D, f32 "
                                             r"C and D, or f16 C and f32 D\) is not supported"),
    ("m8n8k4.row.row.f32.bf16.bf16.f32", 8, 8, r"modelled for f16 A and B"),
    ("m8n8k4.col.row.f32.f16.f16.f32", 8, 4, r"f16\.f32: C of m8n8k4 f32 is 8 registers per thread, got 4"),
    ("m8n8k4.col.row.f16.f16.f16.f16", 8, 4, r"f16\.f16: D of m8n8k4 f16 is 4 registers per thread, got 8"),
])
def test_m8n8k4_forms_without_a_model_or_with_wrong_registers_are_a_file_line_error(form: str, nd: int, nc: int,
                                                                                    message: str) -> None:
    with pytest.raises(EmulationError, match=rf"^k\.ptx:\d+: .*{message}"):
        run_body(_m884_body(form, nd, nc), np.zeros((32, 4 + nc), np.uint32), nd)


def test_m8n8k4_f16_is_the_same_under_either_numerics() -> None:
    """m8n8k4 f16 is no tensor-core op (ptxas emits FFMA sequences for sm_80, 89 and 90): --numerics ada runs it with
    the same bits as hopper."""
    words = np.random.default_rng(5).standard_normal((64, 16)).astype(np.float16).view(np.uint32)
    body = _m884_body("m8n8k4.col.row.f32.f16.f16.f16", 8, 4)
    hopper = run_body(body, words[:, :8], 8)
    np.testing.assert_array_equal(run_body(body, words[:, :8], 8, numerics="ada"), hopper)
    assert np.isfinite(hopper.view(np.float32)).all() and (hopper != 0).mean() > 0.9


@pytest.mark.parametrize(("instr", "message"), [
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%r30, %r31, %r32, %r33}, "
     "{%r10, %r11, %r12, %r13}, {%r14, %r15, %r16, %r17}, {%r18, %r19, %r20, %r21}, %r22, 2;",
     r"the sparsity selector of sparse m16n8k32 f16 must be an immediate in 0, 1, got 2"),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r30, %r31, %r32, %r33}, {%r10, %r11}, {%r14, %r15}, "
     "{%r18, %r19, %r20, %r21}, %r22, %r23;", r"must be an immediate in 0, 1, 2, 3, got a register"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r30, %r31, %r32, %r33}, "
     "{%r10, %r11, %r12, %r13}, {%r14, %r15}, {%r18, %r19, %r20, %r21}, %r22, 0;",
     r"A of sparse m16n8k16 f16 is 2 registers per thread, got 4"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16 {%r30, %r31}, "
     "{%r10, %r11, %r12, %r13}, {%r14, %r15, %r16, %r17}, {%r18, %r19}, %r22, 0;",
     r"sm_90 has no FP8 mma\.sp to f16"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r30, %r31, %r32, %r33}, "
     "{%r10}, {%r14}, {%r18, %r19, %r20, %r21}, %r22, 0;",
     r"mma\.sp is modelled for m16n8k16 / k32 f16 / bf16, m16n8k32 / k64 e4m3 / e5m2 / s8 / u8, m16n8k64 / k128"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.s32.f16.f16.s32 {%r30, %r31, %r32, %r33}, "
     "{%r10, %r11}, {%r14, %r15}, {%r18, %r19, %r20, %r21}, %r22, 0;",
     r"an s32 mma\.sp takes s8 / u8 or s4 / u4 operands"),
])
def test_sparse_mma_forms_without_a_model_or_bad_operands_are_a_file_line_error(instr: str, message: str) -> None:
    body = "\n".join(f"ld.global.u32 %r{10 + i}, [%rd4+{4 * i}];" for i in range(14)) + "\n" + instr
    with pytest.raises(EmulationError, match=rf"^k\.ptx:\d+: .*{message}"):
        run_body(body, np.zeros((32, 14), np.uint32), 1)


@pytest.mark.parametrize("instr", [
    "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r30, %r31, %r32, %r33}, "
    "{%r10, %r11}, {%r14, %r15}, {%r18, %r19, %r20, %r21}, %r22, 0;",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%r30, %r31, %r32, %r33}, "
    "{%r10, %r11}, {%r14, %r15}, {%r18, %r19, %r20, %r21}, %r22, 0;",
])
def test_sparse_float_mma_has_no_ada_model(instr: str) -> None:
    body = "\n".join(f"ld.global.u32 %r{10 + i}, [%rd4+{4 * i}];" for i in range(14)) + "\n" + instr
    with pytest.raises(EmulationError, match=r"under numerics 'ada' \(only a Hopper model exists\)"):
        run_body(body, np.zeros((32, 14), np.uint32), 1, numerics="ada")


def test_hmma_matches_the_hopper_fp8_model_first_half() -> None:
    """mma_m16n8k16_f16_f16 (numerics/hmma.py, the tensorcore f16 row) agrees with the first HMMA of the Hopper FP8
    model: on e4m3-valued operands with C = 0, an m16n8k32 whose k % 4 in {2, 3} products are zero is exactly one
    m16n8k16."""
    rng = np.random.default_rng(3)
    codes = np.array([c for c in range(256) if (c & 0x7F) != 0x7F], np.uint8)
    a8 = rng.choice(codes, (64, 16, 16))
    b8 = rng.choice(codes, (64, 16, 8))
    a8[:8, :, 8:] = a8[:8, :, :8] ^ 0x80  # exact cancellations
    b8[:8, 8:] = b8[:8, :8]
    k32 = np.flatnonzero(np.arange(32) % 4 < 2)  # where the first HMMA's k lie in the m16n8k32 order
    a32 = np.zeros((64, 16, 32), np.uint8)
    b32 = np.zeros((64, 32, 8), np.uint8)
    a32[:, :, k32] = a8
    b32[:, k32, :] = b8
    want = nx.mma_m16n8k32_e4m3_f16(a32, b32, np.zeros((64, 16, 8), np.uint16), "hopper")
    got = nx.mma_m16n8k16_f16_f16(nx.e4m3_to_f16(a8), nx.e4m3_to_f16(b8), np.zeros((64, 16, 8), np.uint16))
    np.testing.assert_array_equal(got, want)


def _f32_words(rng, n: int) -> np.ndarray:
    """f32 bits over every scaling branch: |x| > 2^126, |x| < 2^-126 (subnormals), ordinary, and specials."""
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    parts = [sign * (1 + rng.random(n)) * 2.0 ** rng.integers(126, 128, n),
             sign * (1 + rng.random(n)) * 2.0 ** rng.integers(-149, -125, n),
             sign * (1 + rng.random(n)) * 2.0 ** rng.integers(-125, 126, n)]
    x = np.choose(rng.integers(0, 3, n), parts).astype(np.float32)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 2.0 ** -149]
    return x.view(np.uint32)


def test_mufu_sequences_stay_within_two_ulps() -> None:
    """div.full/div.approx/rcp/rsqrt/ex2 .approx.f32 (no ftz): the scalings around the MUFU op keep the result within
    2 ulps of the exact value over the whole range (subnormal results included), specials as IEEE."""
    rng = np.random.default_rng(8)
    n = 1024
    a, b = _f32_words(rng, n), _f32_words(rng, n)
    e = (rng.random(n) * 300 - 160).astype(np.float32).view(np.uint32)
    body = """ld.global.f32 %f1, [%rd4];
ld.global.f32 %f2, [%rd4+4];
ld.global.f32 %f3, [%rd4+8];
div.full.f32 %f4, %f1, %f2;
div.approx.f32 %f5, %f1, %f2;
rcp.approx.f32 %f6, %f2;
rsqrt.approx.f32 %f7, %f2;
ex2.approx.f32 %f8, %f3;
div.full.ftz.f32 %f9, %f1, %f2;
st.global.v4.f32 [%rd6], {%f4, %f5, %f6, %f7};
st.global.v2.f32 [%rd6+16], {%f8, %f9};"""
    got = run_body(body, np.stack([a, b, e, e], axis=1), 8).view(np.float32)
    x, y, z = (v.view(np.float32).astype(np.float64) for v in (a, b, e))
    with np.errstate(all="ignore"):
        want = [x / y, x / y, 1 / y, 1 / np.sqrt(y), np.exp2(z)]
        narrow = [w.astype(np.float32) for w in want]
    for i, (w, w32) in enumerate(zip(want, narrow, strict=True)):
        r = got[:, i].astype(np.float64)
        fin = np.isfinite(w32) & (np.abs(w) < 2.0 ** 126) & ((np.abs(w) > 2.0 ** -126) | (i == 4))
        if i == 1:  # div.approx.f32 has no scaling for |b| > 2^126: 1/b flushes to 0 there (the PTX ISA says so)
            fin &= np.abs(y) <= 2.0 ** 126
            np.testing.assert_array_equal(r[np.isfinite(x) & np.isfinite(y) & (np.abs(y) > 2.0 ** 126)], 0.0)
        ulp = np.spacing(np.abs(w32[fin])).astype(np.float64)
        assert (np.abs(r[fin] - w[fin]) <= 2 * ulp).all(), i
        nan = np.isnan(w32)
        assert np.isnan(r[nan]).all() and (got[:, i].view(np.uint32)[nan] == 0x7FFFFFFF).all(), i
        inf = np.isinf(w32) & np.isinf(w)
        np.testing.assert_array_equal(r[inf], w[inf])
    ftz = got[:, 5].view(np.uint32)
    normal = np.abs(y) >= 2.0 ** -126
    np.testing.assert_array_equal(ftz[normal & (np.abs(y) <= 2.0 ** 126)],
                                  np.asarray(nx.div_approx_ftz_f32(a.view(np.float32), b.view(np.float32)))
                                  .view(np.uint32)[normal & (np.abs(y) <= 2.0 ** 126)])


def test_ex2_without_ftz_is_mufu_above_minus_126() -> None:
    x = np.linspace(-126, 127, 4096, dtype=np.float32)
    body = "ld.global.f32 %f1, [%rd4];\nex2.approx.f32 %f2, %f1;\nst.global.f32 [%rd6], %f2;"
    got = run_body(body, x.view(np.uint32), 1)
    np.testing.assert_array_equal(got[:, 0], np.asarray(nx.ex2_approx_ftz_f32(x)).view(np.uint32))


def test_measured_integer_and_float_rules() -> None:
    """Rules the H100 showed (tools/emulate_families.py): each value here is one the GPU gave."""
    rows = np.zeros((32, 8), np.uint32)
    q = np.array([[0x8000000000000000, 0x2], [0x1, 0x8000000000000000], [0x8000000000000000, 0xFFFFFFFFFFFFFFFF],
                  [0x8000000000000000, 0x8000000000000001]], np.uint64)
    rows[:4, 0:4] = q.view(np.uint32).reshape(4, 4)
    rows[:4, 4] = [0x3F, 0x80000000, 0x7FFFFFFF, 0]
    rows[:4, 5] = [0x7FC12345, 0xFF812345, 0x3F800000, 0x7F800001]
    body = """ld.global.v2.u64 {%rd10, %rd11}, [%rd4];
div.s64 %rd12, %rd10, %rd11;
rem.s64 %rd13, %rd10, %rd11;
st.global.v2.u64 [%rd6], {%rd12, %rd13};
ld.global.u32 %r10, [%rd4+16];
bfe.s32 %r11, %r10, 32, 3;
mov.u32 %r12, 32;
bfe.s32 %r13, %r10, %r12, 3;
ld.global.f32 %f1, [%rd4+20];
abs.f32 %f2, %f1;
neg.ftz.f32 %f3, %f1;
mov.b32 %r14, %f2;
mov.b32 %r15, %f3;
st.global.v4.u32 [%rd6+16], {%r11, %r13, %r14, %r15};"""
    got = run_body(body, rows, 8)
    d = got[:4, :4].copy().view(np.uint64)
    np.testing.assert_array_equal(d[:, 0], [0xC000000000000000, 0, 0x8000000000000000, 1])
    np.testing.assert_array_equal(d[:, 1], [0, 1, 0, 0xFFFFFFFFFFFFFFFF])
    np.testing.assert_array_equal(got[:4, 4], [0xFFFFFFFF] * 4)  # ptxas folds the immediate form to -1
    np.testing.assert_array_equal(got[:4, 5], [0, 0xFFFFFFFF, 0, 0])  # a register position: the sign bit a[31]
    np.testing.assert_array_equal(got[:4, 6], [0x7FFFFFFF, 0x7FFFFFFF, 0x3F800000, 0x7FFFFFFF])
    np.testing.assert_array_equal(got[:4, 7], [0x7FFFFFFF, 0x7FFFFFFF, 0xBF800000, 0x7FFFFFFF])


def test_measured_f64_nan_rules() -> None:
    nan1, nan2, snan = 0x7FF8000000012345, 0xFFF8000000000000, 0x7FF0000000000001
    inf, ninf, one = 0x7FF0000000000000, 0xFFF0000000000000, 0x3FF0000000000000
    ops = np.array([[nan1, snan, one], [inf, ninf, one], [nan1, one, snan], [snan, nan2, nan1], [one, one, one]],
                   np.uint64)
    rows = np.zeros((32, 6), np.uint64)
    rows[:5, :3] = ops
    body = """ld.global.v2.f64 {%fd1, %fd2}, [%rd4];
ld.global.f64 %fd3, [%rd4+16];
add.rn.f64 %fd4, %fd1, %fd2;
fma.rn.f64 %fd5, %fd1, %fd2, %fd3;
div.rn.f64 %fd6, %fd1, %fd2;
min.f64 %fd7, %fd1, %fd2;
abs.f64 %fd8, %fd1;
cvt.rn.f32.f64 %f1, %fd1;
cvt.rn.f16.f64 %h1, %fd1;
mov.b32 %r10, %f1;
cvt.u32.u16 %r11, %h1;
st.global.v2.f64 [%rd6], {%fd4, %fd5};
st.global.v2.f64 [%rd6+16], {%fd6, %fd7};
st.global.f64 [%rd6+32], %fd8;
st.global.v2.u32 [%rd6+40], {%r10, %r11};"""
    got = run_body(body, rows.view(np.uint32).reshape(32, 12), 12)[:5]
    r = got[:, :10].copy().view(np.uint64)
    q = 1 << 51
    np.testing.assert_array_equal(r[:, 0], [snan | q, nan2, nan1, nan2, 0x4000000000000000])  # b, then a
    np.testing.assert_array_equal(r[:, 1], [snan | q, ninf, snan | q, nan2, 0x4000000000000000])  # b, c, a
    np.testing.assert_array_equal(r[:, 2], [nan1, nan2, nan1, snan | q, one])  # a, then b
    np.testing.assert_array_equal(r[:, 3], [snan | q, ninf, one, nan2, one])  # two NaN: b
    np.testing.assert_array_equal(r[:, 4], [nan1, inf, nan1, snan | q, one])  # quieted, sign kept
    np.testing.assert_array_equal(got[:, 10], [0x7FC00000, 0x7F800000, 0x7FC00000, 0x7FC00000, 0x3F800000])
    np.testing.assert_array_equal(got[:, 11], [0x7E00, 0x7C00, 0x7E00, 0x7E00, 0x3C00])
