"""Memory, synchronisation, warp and matrix instructions, and control flow (divergent loops, calls)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import run_body

from tcforge import numerics as nx

SHARED = ".shared .align 16 .b8 sm[4096];"


def test_shared_barrier_local_generic_and_cp_async() -> None:
    x = np.arange(64, dtype=np.uint32) * 7 + 1
    x4 = np.repeat(x[:, None], 4, axis=1) + np.arange(4, dtype=np.uint32)
    body = """ld.global.u32 %r10, [%rd4];
mov.u32 %r20, sm;
shl.b32 %r21, %r1, 2;
add.s32 %r22, %r20, %r21;
st.shared.u32 [%r22], %r10;
bar.sync 0;
sub.s32 %r23, 63, %r1;
shl.b32 %r24, %r23, 2;
add.s32 %r25, %r20, %r24;
ld.shared.u32 %r11, [%r25];
mov.u64 %rd10, depot;
cvta.local.u64 %rd11, %rd10;
st.u32 [%rd11+8], %r11;
ld.local.u32 %r12, [%rd10+8];
shl.b32 %r26, %r1, 4;
add.s32 %r27, %r26, 1024;
cp.async.cg.shared.global [%r27], [%rd4], 16;
cp.async.commit_group;
cp.async.wait_group 0;
ld.shared.v4.u32 {%r13, %r14, %r15, %r16}, [%r27];
st.global.v4.u32 [%rd6], {%r11, %r12, %r13, %r16};"""
    got = run_body(body, x4, 4, block=64, decls=SHARED + "\n.local .align 16 .b8 depot[16];")
    np.testing.assert_array_equal(got[:, 0], x4[::-1, 0])
    np.testing.assert_array_equal(got[:, 1], x4[::-1, 0])
    np.testing.assert_array_equal(got[:, 2], x4[:, 0])
    np.testing.assert_array_equal(got[:, 3], x4[:, 3])


def test_atomics_in_lane_order() -> None:
    body = """mov.u32 %r10, 1;
atom.global.add.u32 %r11, [%rd1], %r10;
add.s64 %rd12, %rd1, 4;
red.global.add.u32 [%rd12], %r1;
st.global.u32 [%rd6+8], %r11;"""
    got = run_body(body, np.zeros(64, np.uint32), 4, block=64)
    assert got[0, 0] == 64 and got[0, 1] == sum(range(64))
    assert sorted(got[1:, 2]) == list(range(1, 64))  # the old values are a permutation (lane 0's overwritten)


@pytest.mark.parametrize("mode,b,c", [("idx", 5, 31), ("up", 3, 0), ("down", 2, 31), ("bfly", 6, 31),
                                      ("idx", 3, 0x1C1F), ("down", 1, 0x181F)])
def test_shfl_modes(mode: str, b: int, c: int) -> None:
    x = np.arange(64, dtype=np.uint32) * 3 + 100
    body = f"""ld.global.u32 %r10, [%rd4];
shfl.sync.{mode}.b32 %r11|%p1, %r10, {b}, {c}, -1;
selp.u32 %r12, 1, 0, %p1;
st.global.v2.u32 [%rd6], {{%r11, %r12}};"""
    got = run_body(body, x, 2, block=64)
    lane = np.arange(64) % 32
    seg, cval = (c >> 8) & 31, c & 31
    maxl = (lane & seg) | (cval & ~seg)
    j = {"idx": (lane & seg) | (b & ~seg), "up": lane - b, "down": lane + b, "bfly": lane ^ b}[mode]
    ok = j >= maxl if mode == "up" else j <= maxl
    src = np.where(ok, j, lane) + (np.arange(64) // 32) * 32
    np.testing.assert_array_equal(got[:, 0], x[src])
    np.testing.assert_array_equal(got[:, 1], ok)


def test_vote_ballot_and_divergent_loop() -> None:
    body = """rem.u32 %r10, %r1, 3;
setp.eq.u32 %p1, %r10, 0;
vote.sync.ballot.b32 %r11, %p1, -1;
vote.sync.any.pred %p2, %p1, -1;
selp.u32 %r12, 1, 0, %p2;
mov.u32 %r13, 0;
mov.u32 %r14, 0;
$Lloop:
setp.ge.u32 %p3, %r14, %r1;
@%p3 bra $Ldone;
add.u32 %r14, %r14, 1;
add.u32 %r13, %r13, %r14;
bra.uni $Lloop;
$Ldone:
st.global.v4.u32 [%rd6], {%r11, %r12, %r13, %r14};"""
    got = run_body(body, np.zeros(64, np.uint32), 4, block=64)
    lane = np.arange(64) % 32
    ballot = sum(1 << int(k) for k in range(32) if k % 3 == 0)
    np.testing.assert_array_equal(got[:, 0], np.where(np.arange(64) < 32, ballot, sum(
        1 << int(k) for k in range(32) if (k + 32) % 3 == 0)))
    assert (got[:, 1] == 1).all()
    t = np.arange(64)
    np.testing.assert_array_equal(got[:, 2], t * (t + 1) // 2)
    np.testing.assert_array_equal(got[:, 3], t)
    del lane


FUNC = """.func (.param .b32 f_ret) add3(
	.param .b32 f_a,
	.param .b32 f_b
)
{
	.reg .b32 %r<4>;
	ld.param.u32 %r1, [f_a];
	ld.param.u32 %r2, [f_b];
	add.s32 %r3, %r1, %r2;
	add.s32 %r3, %r3, 3;
	st.param.b32 [f_ret], %r3;
	ret;
}
"""


def test_call_with_parameters_and_registers_kept() -> None:
    x = np.arange(32, dtype=np.uint32) * 5
    body = """ld.global.u32 %r10, [%rd4];
mov.u32 %r3, 1000;
{
	.param .b32 p0;
	st.param.b32 [p0+0], %r10;
	.param .b32 p1;
	st.param.b32 [p1+0], %r1;
	.param .b32 r0;
	call.uni (r0), add3, (p0, p1);
	ld.param.b32 %r11, [r0+0];
}
st.global.v2.u32 [%rd6], {%r11, %r3};"""
    got = run_body(body, x, 2, funcs=FUNC)
    np.testing.assert_array_equal(got[:, 0], x + np.arange(32) + 3)
    assert (got[:, 1] == 1000).all()  # the callee's %r3 is its own register


def _fragments_k32(a, b, c):
    """Per-lane words of an m16n8k32 e4m3 mma (PTX ISA fragment layout), written out element by element."""
    words = np.zeros((32, 8), np.uint32)
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        for r in range(4):
            row = g + 8 * (r & 1)
            k0 = 16 * (r >> 1) + 4 * t
            words[lane, r] = sum(int(a[row, k0 + i]) << (8 * i) for i in range(4))
        for r in range(2):
            k0 = 16 * r + 4 * t
            words[lane, 4 + r] = sum(int(b[k0 + i, g]) << (8 * i) for i in range(4))
        for r in range(2):
            row = g + 8 * r
            words[lane, 6 + r] = int(c[row, 2 * t]) | (int(c[row, 2 * t + 1]) << 16)
    return words


@pytest.mark.parametrize("model", ["hopper", "ada"])
def test_mma_m16n8k32_e4m3_layout_and_numerics(model: str) -> None:
    rng = np.random.default_rng(9)
    codes = np.array([c for c in range(256) if (c & 0x7F) != 0x7F], np.uint8)
    a = rng.choice(codes, (16, 32))
    b = rng.choice(codes, (32, 8))
    c = np.float16(rng.standard_normal((16, 8)) * 4).view(np.uint16)
    words = _fragments_k32(a, b, c)
    body = """ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd4];
ld.global.v4.u32 {%r14, %r15, %r16, %r17}, [%rd4+16];
mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r20, %r21}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%r16, %r17};
movmatrix.sync.aligned.m8n8.trans.b16 %r22, %r20;
st.global.v4.u32 [%rd6], {%r20, %r21, %r22, %r22};"""
    got = run_body(body, words, 4, numerics=model)
    d = nx.mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = _fragments_k32(np.zeros((16, 32), np.uint8), np.zeros((32, 8), np.uint8), d)[:, 6:8]
    np.testing.assert_array_equal(got[:, :2], want)
    top = d[:8].T  # movmatrix of the top 8x8 half
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    np.testing.assert_array_equal(got[:, 2], top[g, 2 * t].astype(np.uint32) | (top[g, 2 * t + 1].astype(np.uint32)
                                                                                   << 16))


def test_ldmatrix_x4_trans() -> None:
    body = """mov.u32 %r20, sm;
shl.b32 %r21, %r1, 4;
add.s32 %r22, %r20, %r21;
shl.b32 %r23, %r1, 3;
mov.u32 %r30, 0;
$Lfill:
add.u32 %r31, %r23, %r30;
shl.b32 %r32, %r30, 1;
add.s32 %r33, %r22, %r32;
st.shared.u16 [%r33], %r31;
add.u32 %r30, %r30, 1;
setp.lt.u32 %p1, %r30, 8;
@%p1 bra $Lfill;
bar.sync 0;
ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r10, %r11, %r12, %r13}, [%r22];
st.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};"""
    got = run_body(body, np.zeros(32, np.uint32), 4, decls=SHARED)
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    for j in range(4):
        mat = (8 * (8 * j + np.arange(8))[:, None] + np.arange(8)[None, :]).astype(np.uint32)  # row-major values
        tr = mat.T
        np.testing.assert_array_equal(got[:, j], tr[g, 2 * t] | (tr[g, 2 * t + 1] << 16))


def test_named_barriers_with_thread_counts() -> None:
    body = """mov.u32 %r20, sm;
shl.b32 %r21, %r1, 2;
add.s32 %r22, %r20, %r21;
st.shared.u32 [%r22], %r1;
setp.lt.u32 %p1, %r1, 64;
@%p1 bra $Llow;
bar.sync 2, 64;
bra.uni $Ljoin;
$Llow:
bar.sync 1, 64;
$Ljoin:
xor.b32 %r23, %r21, 128;
add.s32 %r24, %r20, %r23;
ld.shared.u32 %r10, [%r24];
st.global.u32 [%rd6], %r10;"""
    got = run_body(body, np.zeros(128, np.uint32), 1, block=128, decls=SHARED)
    np.testing.assert_array_equal(got[:, 0], np.arange(128) ^ 32)
