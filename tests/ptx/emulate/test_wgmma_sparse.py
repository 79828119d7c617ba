"""Sparse `wgmma.mma_async.sp` (2:4 A; 1:2 for tf32) and b1 `wgmma` (.and.popc): kernels written here, against
products built apart from the emulator (random metadata decoded from the lanes' side per warp, as the PTX ISA draws
wgmma's metadata with mma.sp's m16n8 figures)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from tests.ptx.emulate.kernels import sp_dense
from tests.ptx.emulate.test_ops_mem_sync import (
    WG_REGION,
    _fp8_codes,
    _half_codes,
    wg_kernel_text,
    wg_store,
    wgmma_a_words,
    wgmma_b_image,
    wgmma_pack,
)
from tools.corpus.mma import sp_meta

from tcforge.numerics.tensorcore import get_form, tc_mma
from tcforge.ptx.emulate import EmulationError, emulate
from tcforge.ptx.emulate.ops_wgmma import TF32_FORM

N = 96
BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1, "b1": 1}


def sparse_kernel(op: str, nd: int, tail: str) -> str:
    """One wgmma per warpgroup (wg_kernel_text's kernel): `op` on A from registers, the B descriptor and the
    metadata word from wg_e; `tail` the operands after the B descriptor, {p} standing for the scale-d predicate."""
    return wg_kernel_text(nd, f"""	ld.param.u64 %rd6, [wg_e];
	mul.wide.u32 %rd12, %r4, 4;
	add.s64 %rd13, %rd6, %rd12;
	ld.global.u32 %r30, [%rd13];
	wgmma.fence.sync.aligned;
	{op} {{{", ".join(f"%acc{i}" for i in range(nd))}}}, {{%r20, %r21, %r22, %r23}}, %rd17, {tail.format(p="%p2")};
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
{wg_store(nd)}""", ".param .u64 wg_e")


def _codes(rng, kind: str, shape) -> np.ndarray:
    if kind in ("e4m3", "e5m2"):
        return _fp8_codes(rng, shape)
    if kind == "tf32":  # f32 words of normal values, specials mixed in, low 13 bits set at random
        v = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
        special = rng.choice(np.array([0, 0x80000000, 0x7FC00000, 0xFF800000, 0x00012000], np.uint32), shape)
        v = np.where(rng.random(shape) < 0.05, special, v)
        return v | rng.integers(0, 1 << 13, shape, dtype=np.uint32)
    if kind in ("s8", "u8"):
        return rng.integers(0, 256, shape, dtype=np.uint8)
    return _half_codes(rng, shape, kind)


def _a_words(a: np.ndarray) -> np.ndarray:
    """A registers of a 64 x 32-byte tile (tf32: the dense k8 layout, reg r the word of row 16w + g + 8(r & 1),
    k t + 4(r >> 1))."""
    if a.dtype != np.uint32:
        return wgmma_a_words(a)
    th = np.arange(128)
    w, g, t = th // 32, (th % 32) // 4, th % 4
    r = np.arange(4)[None, :]
    return a[(16 * w + g)[:, None] + 8 * (r & 1), t[:, None] + 4 * (r >> 1)]


SPARSE = [  # (D type, A type, B type, selector, B swizzle code (0 none, 1 128-byte, 2 64-byte), negate A)
    ("f32", "f16", "f16", 0, 1, False), ("f32", "f16", "f16", 1, 0, True), ("f16", "f16", "f16", 1, 2, False),
    ("f32", "bf16", "bf16", 0, 2, True), ("f32", "e4m3", "e5m2", 0, 1, False), ("f16", "e5m2", "e4m3", 0, 0, True),
    ("f32", "tf32", "tf32", 1, 1, False), ("f32", "tf32", "tf32", 0, 0, True),
    ("s32", "s8", "u8", 0, 1, False), ("s32.satfinite", "u8", "s8", 0, 2, False)]


@pytest.mark.parametrize("dtype,atype,btype,sel,swizzle,neg", SPARSE)
def test_sparse_wgmma_is_the_dense_form_over_each_rows_kept_products(dtype, atype, btype, sel, swizzle, neg) -> None:
    """Two warpgroups (the second with scale-d = 0), A from registers, B (96 rows x 64 bytes of K) from a
    descriptor, random metadata in every lane: D row r is the dense form's one step over the K positions with the
    rows row r does not keep zeroed in A and B (integers: the exact sum of the decompressed A's product)."""
    rng = np.random.default_rng(SPARSE.index((dtype, atype, btype, sel, swizzle, neg)))
    esize = BYTES[atype]
    k = 64 // esize
    integer = dtype.startswith("s32")
    meta = sp_meta(rng, 8, tf32=esize == 4)  # (warp, 32): two warpgroups' words
    a = _codes(rng, atype, (2, 64, k // 2))
    b = _codes(rng, btype, (2, N, k))  # [n, k]
    if integer:
        c = rng.integers(-2**31, 2**31, (2, 64, N), dtype=np.int64)
        c[..., :8] = np.where(rng.random((2, 64, 8)) < 0.5, 2**31 - 1 - c[..., :8] % 2**16, -2**31 + c[..., :8] % 2**16)
        c = c.astype(np.int32).view(np.uint32)
    elif dtype == "f16":
        c = np.float16(rng.standard_normal((2, 64, N)) * 8).view(np.uint16)
    else:
        c = np.float32(rng.standard_normal((2, 64, N)) * 8).view(np.uint32)
    images, desc, _ = zip(*(wgmma_b_image(b[i].view(np.uint8).reshape(N, 64), swizzle) for i in range(2)),
                          strict=True)
    nd = N // 4 if dtype == "f16" else N // 2
    if integer:
        op, tail = f"wgmma.mma_async.sp.sync.aligned.m64n{N}k{k}.s32.{atype}.{btype}", f"%r30, {sel}, {{p}}"
        if dtype.endswith("satfinite"):
            op += ".satfinite"
    else:
        op = f"wgmma.mma_async.sp.sync.aligned.m64n{N}k{k}.{dtype}.{atype}.{btype}"
        tail = f"%r30, {sel}, {{p}}, {-1 if neg else 1}, 1" + (", 0" if esize == 2 else "")
    words = np.concatenate([wgmma_pack(x) for x in c])
    args = {"wg_a": np.concatenate([_a_words(x) for x in a]), "wg_b": np.concatenate(images).view(np.uint32),
            "wg_c": words, "wg_d": np.zeros((256, 2 * nd), np.uint32), "wg_e": meta.reshape(-1),
            "wg_words": 2 * WG_REGION // 4, "wg_desc": desc[0], "wg_keep": 0b01}
    got = emulate(sparse_kernel(op, nd, tail), "wg", 1, 256, args)["wg_d"][:, :nd]
    for g in range(2):
        dense, keep = (x.reshape(64, k) for x in sp_dense(a[g].reshape(4, 16, k // 2), meta[4 * g:4 * g + 4], k, sel))
        assert (keep.sum(1) == k // 2).all()
        cg = c[g] if g == 0 else np.zeros_like(c[g])
        if integer:  # wrapped, or clamped once
            vals = {"s8": lambda x: x.view(np.int8).astype(np.int64), "u8": lambda x: x.astype(np.int64)}
            e = cg.view(np.int32).astype(np.int64) + vals[atype](dense) @ vals[btype](b[g]).T
            want = (np.clip(e, -2**31, 2**31 - 1) if dtype.endswith("satfinite") else e) & 0xFFFFFFFF
            want = want.astype(np.uint32)
        else:
            dense_form = TF32_FORM if atype == "tf32" else get_form(f"wgmma.m64n8k{k // 2}.{dtype}.{atype}.{btype}")
            row_form = replace(dense_form, m=1, k=k, groups=(tuple(range(k)),))
            if neg:
                dense = np.where(keep, dense ^ np.array(1 << (8 * esize - 1), a.dtype), dense)
            want = np.stack([tc_mma(row_form, dense[r][None], np.where(keep[r][:, None], b[g].T, 0).astype(b.dtype),
                                    cg[r][None])[0] for r in range(64)])
        np.testing.assert_array_equal(got[128 * g:128 * (g + 1)], wgmma_pack(want))


def test_b1_wgmma_counts_the_and_of_each_row_and_column() -> None:
    """m64n96k256 b1 .and.popc: A from registers, B from a 128-byte swizzled descriptor, C near both ends."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, (2, 64, 32), dtype=np.uint8)
    b = rng.integers(0, 256, (2, N, 64), dtype=np.uint8)  # the image's first 32 bytes of K are this form's B
    c = rng.integers(-2**31, 2**31, (2, 64, N), dtype=np.int64)
    c[..., :4] = 2**31 - 1 - rng.integers(0, 64, (2, 64, 4))
    c = c.astype(np.int32).view(np.uint32)
    images, desc, _ = zip(*(wgmma_b_image(b[i], 1) for i in range(2)), strict=True)
    words = np.concatenate([wgmma_pack(x) for x in c])
    args = {"wg_a": np.concatenate([wgmma_a_words(x) for x in a]), "wg_b": np.concatenate(images).view(np.uint32),
            "wg_c": words, "wg_d": np.zeros((256, N), np.uint32), "wg_e": np.zeros(256, np.uint32),
            "wg_words": 2 * WG_REGION // 4, "wg_desc": desc[0], "wg_keep": 0b10}
    kernel = sparse_kernel(f"wgmma.mma_async.sync.aligned.m64n{N}k256.s32.b1.b1.and.popc", N // 2, "{p}")
    got = emulate(kernel, "wg", 1, 256, args)["wg_d"][:, :N // 2]
    for g in range(2):
        bits_a = np.unpackbits(a[g], axis=1).astype(np.int64)
        bits_b = np.unpackbits(b[g, :, :32], axis=1).astype(np.int64)
        cg = c[g].view(np.int32).astype(np.int64) if g == 1 else 0
        want = ((cg + bits_a @ bits_b.T) & 0xFFFFFFFF).astype(np.uint32)
        np.testing.assert_array_equal(got[128 * g:128 * (g + 1)], wgmma_pack(want))
    assert (c[1].view(np.int32).astype(np.int64) + 256 > 2**31 - 1).any()  # some sums wrap past the s32 range


@pytest.mark.parametrize("op,tail,swizzle,message", [
    ("wgmma.mma_async.sp.sync.aligned.m64n96k32.f32.f16.f16", "%r30, 2, {p}, 1, 1, 0", 1,
     "the sparsity selector must be an immediate 0 or 1, got 2"),
    ("wgmma.mma_async.sp.sync.aligned.m64n96k64.f32.e4m3.e4m3", "%r30, 1, {p}, 1, 1", 1,
     "the sparsity selector must be an immediate 0, got 1"),
    ("wgmma.mma_async.sp.sync.aligned.m64n96k16.f32.f16.f16", "%r30, 0, {p}, 1, 1, 0", 1,
     "sparse wgmma of f16 is m64nNk32, got m64n96k16"),
    ("wgmma.mma_async.sp.sync.aligned.m64n96k32.f32.f16.f16", "%r30, 0, {p}, 1, 1", 1,
     "expects 9 operands (d, a, b-desc, sp-meta, sp-sel, scale-d, imm-scale-a, imm-scale-b, imm-trans-b), got 8"),
    ("wgmma.mma_async.sp.sync.aligned.m64n96k32.f32.f16.f16", "%r30, 0, {p}, 1, 1, 0", 3,
     "holds 64 bytes of K per row in 32-byte swizzle rows: where the second span lies is not pinned"),
    ("wgmma.mma_async.sync.aligned.m64n96k256.s32.b1.b1.xor.popc", "{p}", 1,
     "integer wgmma is emulated for s8 / u8 A and B, and b1 with .and.popc"),
])
def test_sparse_and_b1_wgmma_errors_name_the_problem(op: str, tail: str, swizzle: int, message: str) -> None:
    _, desc, _ = wgmma_b_image(np.zeros((N, 64), np.uint8), swizzle)
    nd = N // 2 if "f32" in op or "s32" in op else N // 4
    args = {"wg_a": np.zeros((256, 4), np.uint32), "wg_b": np.zeros(2 * WG_REGION // 4, np.uint32),
            "wg_c": np.zeros((256, nd), np.uint32), "wg_d": np.zeros((256, 2 * nd), np.uint32),
            "wg_e": np.zeros(256, np.uint32), "wg_words": 2 * WG_REGION // 4, "wg_desc": desc, "wg_keep": 3}
    with pytest.raises(EmulationError, match="^<ptx>:") as err:
        emulate(sparse_kernel(op, nd, tail), "wg", 1, 256, args)
    assert message in str(err.value) and "\n" not in str(err.value)
