"""Float and cvt instructions: f32 in every rounding mode (against exact Fraction arithmetic), fma's single
rounding, ftz, f16x2 and e4m3 conversions (tcforge.numerics), float <-> int conversions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from tests.ptx.emulate.kernels import round_f32, run_body

from tcforge import numerics as nx


def _f32(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def _operands(seed: int, n: int = 64, k: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, k)) * np.exp2(rng.integers(-30, 30, (n, k)))).astype(np.float32)
    x[:4, 1] = -x[:4, 0]  # exact cancellations
    x[4:8, 2] = np.float32(1e-41)  # subnormals
    return x.view(np.uint32)


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f32_rounding_modes(mode: str) -> None:
    x = _operands(11 + len(mode) + ord(mode[1]))
    body = f"""ld.global.f32 %f1, [%rd4];
ld.global.f32 %f2, [%rd4+4];
ld.global.f32 %f3, [%rd4+8];
add.{mode}.f32 %f4, %f1, %f3;
mul.{mode}.f32 %f5, %f1, %f2;
fma.{mode}.f32 %f6, %f1, %f2, %f3;
st.global.v4.f32 [%rd6], {{%f4, %f5, %f6, %f6}};"""
    got = run_body(body, x, 4)
    for t in range(len(x)):
        a, b, c = (Fraction(float(v)) for v in _f32(x[t]))
        assert got[t, 0] == round_f32(a + c, mode), (t, mode, "add")
        assert got[t, 1] == round_f32(a * b, mode), (t, mode, "mul")
        assert got[t, 2] == round_f32(a * b + c, mode), (t, mode, "fma")


def test_ftz_and_special_values() -> None:
    vals = np.array([[1e-40, 1.0], [-1e-40, 1.0], [np.inf, -np.inf], [np.nan, 1.0], [3.0, 0.0], [-0.0, 0.0]],
                    np.float32)
    x = np.zeros((32, 2), np.float32)
    x[: len(vals)] = vals
    body = """ld.global.f32 %f1, [%rd4];
ld.global.f32 %f2, [%rd4+4];
mul.ftz.f32 %f3, %f1, %f2;
add.f32 %f4, %f1, %f2;
min.f32 %f5, %f1, %f2;
max.f32 %f6, %f1, %f2;
st.global.v4.f32 [%rd6], {%f3, %f4, %f5, %f6};"""
    got = run_body(body, x.view(np.uint32), 4)
    a, b = x[:, 0], x[:, 1]
    with np.errstate(all="ignore"):
        want_mul = np.where(np.abs(a) < 1.1754944e-38, np.copysign(np.float32(0), a) * b, a * b).astype(np.float32)
        want_add = a + b
    np.testing.assert_array_equal(got[:, 0], np.where(np.isnan(want_mul), 0x7FFFFFFF, want_mul.view(np.uint32)))
    np.testing.assert_array_equal(got[:, 1], np.where(np.isnan(want_add), 0x7FFFFFFF, want_add.view(np.uint32)))
    assert got[3, 2] == np.float32(1.0).view(np.uint32)  # min(NaN, 1) = 1
    assert got[5, 2] == 0x80000000 and got[5, 3] == 0  # min(-0, +0) = -0, max = +0


def test_f16x2_and_e4m3_conversions() -> None:
    rng = np.random.default_rng(5)
    h = rng.integers(0, 1 << 16, size=(64, 6), dtype=np.uint64).astype(np.uint16)
    words = h.view(np.uint32).reshape(64, 3)
    body = """ld.global.u32 %r10, [%rd4];
ld.global.u32 %r11, [%rd4+4];
ld.global.u32 %r12, [%rd4+8];
fma.rn.f16x2 %r13, %r10, %r11, %r12;
mul.rn.f16x2 %r14, %r10, %r11;
cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r10;
cvt.rn.f16x2.e4m3x2 %r15, %h1;
cvt.u32.u16 %r16, %h1;
mov.b32 {%h2, %h3}, %r10;
cvt.f32.f16 %f1, %h3;
cvt.rn.f16.f32 %h4, %f1;
cvt.u32.u16 %r17, %h4;
st.global.v4.u32 [%rd6], {%r13, %r14, %r15, %r16};
st.global.u32 [%rd6+16], %r17;"""
    got = run_body(body, words, 8)
    a, b, c = words[:, 0], words[:, 1], words[:, 2]
    np.testing.assert_array_equal(got[:, 0], nx.f16x2_fma(a, b, c))
    np.testing.assert_array_equal(got[:, 1], nx.f16x2_mul(a, b))
    e = nx.cvt_rn_satfinite_e4m3x2_f16x2(a)
    np.testing.assert_array_equal(got[:, 2], nx.cvt_rn_f16x2_e4m3x2(e))
    np.testing.assert_array_equal(got[:, 3], e)
    hi = (a >> 16).astype(np.uint16)
    want = np.where((hi & 0x7FFF) > 0x7C00, 0x7FFF, hi)  # NaN canonical through f32
    np.testing.assert_array_equal(got[:, 4], want)


def test_float_int_conversions() -> None:
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.7, -3.7, 1e10, -1e10, np.nan, np.inf, -np.inf] + [0.0] * 20, np.float32)
    body = """ld.global.f32 %f1, [%rd4];
cvt.rni.s32.f32 %r10, %f1;
cvt.rzi.s32.f32 %r11, %f1;
cvt.rmi.u32.f32 %r12, %f1;
cvt.rpi.s32.f32 %r13, %f1;
cvt.rn.f32.s32 %f2, %r11;
st.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};
st.global.f32 [%rd6+16], %f2;"""
    got = run_body(body, v.view(np.uint32), 8)

    def sat(x, lo, hi):
        return [0 if math.isnan(t) else int(min(max(t, lo), hi)) for t in x]
    d = v.astype(np.float64)
    s32 = (-(1 << 31), (1 << 31) - 1)
    np.testing.assert_array_equal(got[:, 0].view(np.int32), sat(np.rint(d), *s32))
    np.testing.assert_array_equal(got[:, 1].view(np.int32), sat(np.trunc(d), *s32))
    np.testing.assert_array_equal(got[:, 2], sat(np.floor(d), 0, (1 << 32) - 1))
    np.testing.assert_array_equal(got[:, 3].view(np.int32), sat(np.ceil(d), *s32))
    np.testing.assert_array_equal(got[:, 4].view(np.float32), got[:, 1].view(np.int32).astype(np.float32))


def test_f64_mma_is_four_chained_fmas_in_k_order() -> None:
    """m8n8k4 f64: D = fma(a3, b3, fma(a2, b2, fma(a1, b1, fma(a0, b0, c)))) per element, each rounded once (exact
    fractions here); the operands make the chain differ from one rounding of the exact sum."""
    rng = np.random.default_rng(3)
    warps = 2
    a = rng.standard_normal((warps, 8, 4)) * 2.0 ** rng.integers(-30, 30, (warps, 8, 4))
    b = rng.standard_normal((warps, 4, 8)) * 2.0 ** rng.integers(-30, 30, (warps, 4, 8))
    c = rng.standard_normal((warps, 8, 8)) * 2.0 ** rng.integers(-30, 30, (warps, 8, 8))
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    words = np.stack([a[:, g, t], b[:, t, g], c[:, g, 2 * t], c[:, g, 2 * t + 1]], axis=-1)  # (warp, lane, 4) f64
    body = """ld.global.f64 %fd1, [%rd4];
ld.global.f64 %fd2, [%rd4+8];
ld.global.f64 %fd3, [%rd4+16];
ld.global.f64 %fd4, [%rd4+24];
mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd5, %fd6}, {%fd1}, {%fd2}, {%fd3, %fd4};
st.global.f64 [%rd6], %fd5;
st.global.f64 [%rd6+8], %fd6;"""
    got = run_body(body, words.reshape(warps * 32, -1).view(np.uint32), 4, decls=".reg .f64 %fd<8>;")
    got = got.view(np.float64).reshape(warps, 32, 2)
    chained = np.zeros((warps, 8, 8))
    differs = 0
    for w in range(warps):
        for i in range(8):
            for j in range(8):
                acc = float(c[w, i, j])
                for k in range(4):
                    acc = float(Fraction(a[w, i, k]) * Fraction(b[w, k, j]) + Fraction(acc))
                chained[w, i, j] = acc
                once = float(sum((Fraction(a[w, i, k]) * Fraction(b[w, k, j]) for k in range(4)), Fraction(c[w, i, j])))
                differs += once != acc
    assert differs > 5
    np.testing.assert_array_equal(got[:, :, 0], chained[:, g, 2 * t])
    np.testing.assert_array_equal(got[:, :, 1], chained[:, g, 2 * t + 1])


@pytest.mark.parametrize("mode", ["rna", "rna.satfinite", "rn", "rz"])
def test_cvt_to_tf32_rounds_the_value_to_ten_fraction_bits(mode: str) -> None:
    """cvt.{mode}.tf32.f32 against a value-level rounding (exact fractions of the f32 grid and the tf32 one)."""
    rng = np.random.default_rng(11)
    top = rng.integers(0, 2**19, 200, dtype=np.uint64).astype(np.uint32) << np.uint32(13)
    words = np.concatenate([(top[:, None] | np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)).ravel(),
                            np.array([0x7F7FFFFF, 0x7F7FF000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                                      0x00001000, 0x00003000, 0x807FFFFF, 0], np.uint32)])
    got = run_body(f"ld.global.u32 %r10, [%rd4];\ncvt.{mode}.tf32.f32 %r11, %r10;\nst.global.u32 [%rd6], %r11;",
                   np.resize(words, -(-words.size // 32) * 32), 1)[:words.size, 0]
    for w, g in zip(words, got, strict=True):
        v = float(np.uint32(w).view(np.float32))
        if math.isnan(v):  # the H100's bits: rna truncates the payload (.satfinite one step below), rn / rz canonical
            want = int(w) & 0xFFFFE000 if mode.startswith("rna") else 0x7FFFE000
            want -= 0x2000 * ("satfinite" in mode)
        elif math.isinf(v):
            want = 0x7F7FE000 | (int(w) & 0x80000000) if "satfinite" in mode else int(w)
        else:
            ulp = Fraction(2) ** (max(math.frexp(v)[1] - 1 if v else -126, -126) - 10)
            q, r = divmod(abs(Fraction(v)), ulp)
            if mode.startswith("rna"):
                q += r >= ulp / 2
            elif mode == "rn":
                q += r > ulp / 2 or (r == ulp / 2 and q % 2 == 1)
            mag = q * ulp
            if mag >= 2**128:
                want = 0x7F7FE000 if "satfinite" in mode else 0x7F800000
            else:
                want = int(np.float32(float(mag)).view(np.uint32))
            want |= int(w) & 0x80000000
        assert int(g) == want, (hex(int(w)), mode, hex(int(g)), hex(want))
