"""wmma: matrices loaded row- or column-major with a stride, multiplied, stored; the f16 product is the chain of the
Hopper m16n8k16 form over its tiles and K steps bit for bit, the s8 product the exact (clamped) integer sum."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import HEADER

from tcforge.numerics.tensorcore import HOPPER_FORMS, tc_mma
from tcforge.ptx.emulate import EmulationError, emulate


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
    product; a wmma form with mixed C and D types, or a generic load from an address in no window, is a one-line
    error."""
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
    stray = _F16.replace("ld.param.u64 %rd1, [k_a];", "mov.u64 %rd1, 256;").replace(
        "m16n16k16.global.f16 {a}".format(a=_regs("a", 8)), "m16n16k16.f16 " + _regs("a", 8), 1)
    with pytest.raises(EmulationError, match=r"global load of 2 bytes at 0x100 is outside every buffer"):
        emulate(stray, "k", 1, 32, args)  # a generic address in no window: named, as any global access
