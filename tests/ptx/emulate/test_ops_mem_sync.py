"""Memory, synchronisation, warp and matrix instructions, and control flow (divergent loops, calls)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import HEADER, TMA_WAIT_AND_DUMP, kernel_text, run_body, tma_box_reference

from tcforge import numerics as nx
from tcforge.ptx.emulate import EmulationError

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


@pytest.mark.parametrize("counted", [True, False])
def test_bar_arrive_producer_consumer_two_generations(counted: bool) -> None:
    """Warp 1 produces into shared memory and signals with bar.arrive; warp 0 waits with bar.sync, hands the slot
    back on a second barrier, and reads the second generation too (the enc5 ada form's MLP ring); with a thread
    count of 64, or with none (every thread of the 64-thread CTA)."""
    x = np.arange(128, dtype=np.uint32) * 5 + 3
    body = """setp.lt.u32 %p1, %r1, 32;
mov.u32 %r20, sm;
and.b32 %r21, %r1, 31;
shl.b32 %r21, %r21, 2;
add.s32 %r22, %r20, %r21;
ld.global.u32 %r10, [%rd4];
@%p1 bra $CONS;
st.shared.u32 [%r22], %r10;
bar.arrive 1, 64;
bar.sync 2, 64;
add.s32 %r11, %r10, 1000;
st.shared.u32 [%r22], %r11;
bar.arrive 1, 64;
st.global.u32 [%rd6], %r10;
bra.uni $DONE;
$CONS:
bar.sync 1, 64;
ld.shared.u32 %r12, [%r22];
bar.arrive 2, 64;
bar.sync 1, 64;
ld.shared.u32 %r13, [%r22];
add.s32 %r14, %r12, %r13;
st.global.u32 [%rd6], %r14;
$DONE:"""
    if not counted:
        body = body.replace(", 64;", ";")
    got = run_body(body, x, 1, block=64, decls=SHARED)[:, 0].reshape(2, 64)
    xs = x.reshape(2, 64)
    np.testing.assert_array_equal(got[:, 32:], xs[:, 32:])
    np.testing.assert_array_equal(got[:, :32], 2 * xs[:, 32:] + 1000)


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


_ALLOCA_FUNC = """.func (.param .b64 ret) grab(.param .b32 n)
{
	.reg .b32 %q<2>; .reg .b64 %qd<3>;
	ld.param.b32 %q1, [n+0];
	cvt.u64.u32 %qd1, %q1;
	alloca.u64 %qd2, %qd1, 32;
	st.local.u32 [%qd2], %q1;
	st.param.b64 [ret+0], %qd2;
	ret;
}
"""


def test_alloca_takes_aligned_stack_that_stackrestore_and_return_give_back() -> None:
    """alloca of a per-thread size aligned to 64 bytes leaves the local variables alone and holds what is stored
    through its local and its generic address; after stackrestore the next alloca reuses the freed bytes; what a
    called function allocates is freed at its return (two calls of one size get the same bytes); the pointers are
    the thread's local-space addresses above its variables."""
    x = np.stack([np.arange(32) % 9 + 1, np.arange(32) * 11 + 5], axis=1).astype(np.uint32)
    body = """ld.global.u32 %r10, [%rd4];
ld.global.u32 %r11, [%rd4+4];
mov.u64 %rd10, depot;
st.local.u32 [%rd10+12], 77;
cvt.u64.u32 %rd11, %r10;
alloca.u64 %rd12, %rd11, 64;
cvta.local.u64 %rd13, %rd12;
st.local.u32 [%rd12], %r11;
st.u32 [%rd13+4], %r10;
stacksave.u64 %rd14;
alloca.u64 %rd15, 40;
alloca.u64 %rd16, 8;
stackrestore.u64 %rd14;
alloca.u64 %rd17, 40;
{
	.param .b32 p0;
	st.param.b32 [p0+0], %r10;
	.param .b64 r0;
	call.uni (r0), grab, (p0);
	ld.param.b64 %rd18, [r0+0];
}
{
	.param .b32 p1;
	st.param.b32 [p1+0], %r10;
	.param .b64 r1;
	call.uni (r1), grab, (p1);
	ld.param.b64 %rd19, [r1+0];
}
ld.local.u32 %r12, [%rd12];
ld.local.u32 %r13, [%rd12+4];
ld.local.u32 %r14, [%rd10+12];
ld.local.u32 %r15, [%rd19];
cvt.u32.u64 %r20, %rd12;
cvt.u32.u64 %r21, %rd15;
cvt.u32.u64 %r22, %rd16;
cvt.u32.u64 %r23, %rd17;
cvt.u32.u64 %r24, %rd18;
cvt.u32.u64 %r25, %rd19;
st.global.v4.u32 [%rd6], {%r12, %r13, %r14, %r15};
st.global.v4.u32 [%rd6+16], {%r20, %r21, %r22, %r23};
st.global.v2.u32 [%rd6+32], {%r24, %r25};"""
    got = run_body(body, x, 12, decls=".local .align 16 .b8 depot[16];", funcs=_ALLOCA_FUNC)
    np.testing.assert_array_equal(got[:, 0], x[:, 1])  # stored through the local address, read back
    np.testing.assert_array_equal(got[:, 1], x[:, 0])  # stored through the generic address
    assert (got[:, 2] == 77).all()  # the local variable untouched
    np.testing.assert_array_equal(got[:, 3], x[:, 0])  # the callee's store through its pointer
    a, b, c, d, e, f = (got[:, 4 + i].astype(np.int64) for i in range(6))
    assert (a % 64 == 0).all() and (a >= 16).all()
    assert ((b - c >= 8) | (c - b >= 40)).all() and (b % 8 == 0).all()  # two live blocks do not overlap
    np.testing.assert_array_equal(d, b)  # stackrestore gave back what was allocated after stacksave
    np.testing.assert_array_equal(e, f)  # each call's block is freed at its return
    assert (e % 32 == 0).all() and ((e + x[:, 0] <= d) | (e >= d + 40)).all()  # below the caller's live block


def test_alloca_past_the_stack_names_the_thread_and_what_is_left() -> None:
    body = """alloca.u64 %rd10, 4000;
alloca.u64 %rd11, 20000;
st.global.u32 [%rd6], 1;"""
    with pytest.raises(EmulationError, match=r"k.ptx:\d+: .*alloca of 20000 bytes overflows the thread's stack "
                                             r"\(16384 bytes, 12384 left\)") as info:
        run_body(body, np.zeros(32, np.uint32), 1)
    assert "\n" not in str(info.value)


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


# ---- wgmma (Hopper warpgroup mma) ------------------------------------------------------------------------------------

WG_REGION = 12288  # shared bytes per warpgroup (B: 96 rows x 64 bytes of k, room for the 128-byte swizzle)


def wgmma_kernel(n: int, dtype: str, atype: str, btype: str, loops: int = 1) -> str:
    """Two CTAs x 256 threads: each warpgroup copies its B image into shared memory, then D1 = A·B1 (+ C where bit
    2 * ctaid + warpgroup of wg_keep is set), D2 = (-A)·B2 + D1 (integers: A·B2 + D1; dtype "s32" or
    "s32.satfinite"), A from registers, B from descriptors (wg_desc's
    LBO/SBO/swizzle + the tile's start; B2 starts wg_kstep * 16 bytes later); stores D1 then D2 per thread."""
    nd = n // 4 if dtype == "f16" else n // 2
    acc = ", ".join(f"%acc{i}" for i in range(nd))
    k, trans = (16, ", 0") if atype in ("f16", "bf16") else (32, "")  # 16-bit types: imm-trans-b (A in registers)
    ints = dtype.startswith("s32")  # integer forms take no imm-scale operands (the chain keeps A's sign)
    first, second = ("", "") if ints else (", 1, 1", ", -1, 1")
    op = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{dtype.split('.')[0]}.{atype}.{btype}" + \
        (".satfinite" if dtype.endswith(".satfinite") else "")
    return wg_kernel_text(nd, f"""	ld.param.u32 %r7, [wg_kstep];
	cvt.u64.u32 %rd18, %r7;
	add.s64 %rd19, %rd17, %rd18;
	mov.u32 %r25, 0;
$Lloop:
	wgmma.fence.sync.aligned;
	{op} {{{acc}}}, {{%r20, %r21, %r22, %r23}}, %rd17, %p2{first}{trans};
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	add.u32 %r25, %r25, 1;
	setp.lt.u32 %p3, %r25, {loops};
	@%p3 bra $Lloop;
{wg_store(nd)}
	wgmma.fence.sync.aligned;
	{op} {{{acc}}}, {{%r20, %r21, %r22, %r23}}, %rd19, 1{second}{trans};
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 1;
	wgmma.wait_group.sync.aligned 0;
	add.s64 %rd21, %rd21, {4 * nd};
{wg_store(nd)}""", ".param .u32 wg_kstep")


def wg_store(nd: int) -> str:
    """PTX storing the nd accumulator registers at %rd21."""
    return "\n".join(f"\tst.global.v4.u32 [%rd21+{4 * i}], {{%acc{i}, %acc{i + 1}, %acc{i + 2}, %acc{i + 3}}};"
                     for i in range(0, nd, 4))


def wg_kernel_text(nd: int, body: str, params: str) -> str:
    """A wgmma test kernel `wg` (any grid of 256-thread CTAs): each CTA copies wg_words words of its B images from
    wg_b into shared memory (warpgroup w's at w * WG_REGION), each thread loads its A registers %r20..%r23 from wg_a
    and its nd accumulators %acc from wg_c; then %rd17 = wg_desc + the warpgroup's region start (>> 4), %p2 = bit
    2 * ctaid + warpgroup of wg_keep, %rd21 the thread's D in wg_d, and `body` runs (`params`: more parameters)."""
    loads = "\n".join(f"\tld.global.v4.u32 {{%acc{i}, %acc{i + 1}, %acc{i + 2}, %acc{i + 3}}}, [%rd15+{4 * i}];"
                      for i in range(0, nd, 4))
    return f""".version 8.0
.target sm_90a
.address_size 64

.visible .entry wg(
	.param .u64 wg_a, .param .u64 wg_b, .param .u64 wg_c, .param .u64 wg_d,
	.param .u32 wg_words, .param .u64 wg_desc, .param .u32 wg_keep, {params}
)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<40>;
	.reg .b32 %acc<{nd}>;
	.reg .b64 %rd<24>;
	.shared .align 1024 .b8 sm[{2 * WG_REGION}];
	ld.param.u64 %rd1, [wg_a];
	ld.param.u64 %rd2, [wg_b];
	ld.param.u64 %rd3, [wg_c];
	ld.param.u64 %rd4, [wg_d];
	ld.param.u32 %r6, [wg_words];
	ld.param.u64 %rd5, [wg_desc];
	ld.param.u32 %r8, [wg_keep];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mov.u32 %r5, sm;
	mov.u32 %r10, %r1;
$Lcopy:
	setp.ge.u32 %p1, %r10, %r6;
	@%p1 bra $Lcopied;
	mad.lo.s32 %r11, %r2, %r6, %r10;
	mul.wide.u32 %rd10, %r11, 4;
	add.s64 %rd11, %rd2, %rd10;
	ld.global.u32 %r12, [%rd11];
	shl.b32 %r13, %r10, 2;
	add.s32 %r14, %r5, %r13;
	st.shared.u32 [%r14], %r12;
	add.s32 %r10, %r10, %r3;
	bra.uni $Lcopy;
$Lcopied:
	bar.sync 0;
	mul.wide.u32 %rd12, %r4, 16;
	add.s64 %rd13, %rd1, %rd12;
	ld.global.v4.u32 {{%r20, %r21, %r22, %r23}}, [%rd13];
	mul.wide.u32 %rd14, %r4, {4 * nd};
	add.s64 %rd15, %rd3, %rd14;
{loads}
	shr.u32 %r15, %r1, 7;
	mul.lo.u32 %r16, %r15, {WG_REGION};
	add.s32 %r17, %r5, %r16;
	shr.u32 %r18, %r17, 4;
	cvt.u64.u32 %rd16, %r18;
	add.s64 %rd17, %rd5, %rd16;
	shl.b32 %r19, %r2, 1;
	add.s32 %r19, %r19, %r15;
	shr.u32 %r24, %r8, %r19;
	and.b32 %r24, %r24, 1;
	setp.ne.u32 %p2, %r24, 0;
	mul.wide.u32 %rd20, %r4, {8 * nd};
	add.s64 %rd21, %rd4, %rd20;
{body}
	ret;
}}
"""


def wgmma_b_image(b: np.ndarray, swizzle: int) -> tuple[np.ndarray, int, int]:
    """One warpgroup's shared bytes holding B (96 rows n x 64 bytes k, K-major) in the canonical layout of a
    descriptor swizzle code (0 none, 1 128-byte, 2 64-byte, 3 32-byte); returns (bytes, descriptor without its
    start, start step in 16 bytes of the second k block)."""
    n, kb = np.arange(96)[:, None], np.arange(64)[None, :]
    if swizzle == 0:  # 8 x 16-byte core matrices: k-adjacent ones LBO = 128 apart, 8-row groups SBO = 512
        lbo, sbo, step = 128, 512, 256
        off = (n // 8) * sbo + (kb // 16) * lbo + (n % 8) * 16 + kb % 16
    else:
        width = {1: 128, 2: 64, 3: 32}[swizzle]
        lbo, sbo = 16, 8 * width
        if width == 32:  # a row holds one k block: the second block is another 96-row tile
            step = 12 * sbo
            off = (kb // 32) * step + (n // 8) * sbo + (n % 8) * 32 + kb % 32
        else:
            step = 32
            off = (n // 8) * sbo + (n % 8) * width + kb
        bits = {128: 0x70, 64: 0x30, 32: 0x10}[width]  # CUTLASS Swizzle<B, 4, 3>: o ^ ((o >> 3) & (mask << 4))
        off = off ^ ((off >> 3) & bits)
    img = np.zeros(WG_REGION, np.uint8)
    img[off] = b
    return img, (lbo >> 4) << 16 | (sbo >> 4) << 32 | swizzle << 62, step >> 4


def wgmma_pack(mat: np.ndarray) -> np.ndarray:
    """Per-thread words (128, N/2 or N/4) of a warpgroup's (64, N) D (f32 bits or f16 bits), element by element."""
    n = mat.shape[1]
    per = 1 if mat.dtype == np.uint32 else 2
    words = np.zeros((128, n // 2 // per), np.uint32)
    for thread in range(128):
        w, g, t = thread // 32, (thread % 32) // 4, thread % 4
        for q in range(n // 2):  # f32 reg 4j + i: row 16w + g + 8(i >> 1), column 8j + 2t + (i & 1)
            j, i = divmod(q, 4)
            v = int(mat[16 * w + g + 8 * (i >> 1), 8 * j + 2 * t + (i & 1)])
            words[thread, q // per] |= v << (16 * (q % per))
    return words


def wgmma_a_words(a: np.ndarray) -> np.ndarray:
    """Per-thread A registers (128, 4) of a (64, 32) FP8 or (64, 16) 16-bit tile: reg r element i holds
    A[16w + g + 8(r & 1), p t + i + 4 p (r >> 1)], p = elements per register, w = thread / 32, g, t = lane / 4, % 4."""
    per = 4 // a.itemsize
    words = np.zeros((128, 4), np.uint32)
    for thread in range(128):
        w, g, t = thread // 32, (thread % 32) // 4, thread % 4
        for r in range(4):
            row, k0 = 16 * w + g + 8 * (r & 1), per * t + 4 * per * (r >> 1)
            words[thread, r] = sum(int(a[row, k0 + i]) << (8 * a.itemsize * i) for i in range(per))
    return words


def _fp8_codes(rng, shape) -> np.ndarray:
    """FP8 codes of small magnitude with a few NaN and many +-0 and subnormal codes mixed in."""
    codes = (rng.integers(0, 256, shape) & 0xCF).astype(np.uint8)  # exponent field <= 0b1001 (e4m3) / small (e5m2)
    special = rng.choice(np.array([0x00, 0x80, 0x01, 0x83, 0x05, 0x87], np.uint8), shape)
    u = rng.random(shape)
    return np.where(u < 0.003, np.uint8(0x7F), np.where(u < 0.15, special, codes))


def _half_codes(rng, shape, kind: str) -> np.ndarray:
    """f16 or bf16 bits of normal values with a few NaN and infinities and many +-0 and subnormals mixed in."""
    v = rng.standard_normal(shape).astype(np.float32)
    bits = v.view(np.uint32) >> 16 if kind == "bf16" else v.astype(np.float16).view(np.uint16).astype(np.uint32)
    sub, nan, inf = (0x0003, 0x7FC0, 0xFF80) if kind == "bf16" else (0x0201, 0x7E00, 0xFC00)
    special = rng.choice(np.array([0x0000, 0x8000, sub, 0x8000 | sub]), shape)
    u = rng.random(shape)
    return np.select([u < 0.002, u < 0.004, u < 0.1], [nan, inf, special], bits).astype(np.uint16)


@pytest.mark.parametrize("swizzle,dtype,atype,btype", [(0, "f16", "e4m3", "e4m3"), (1, "f16", "e4m3", "e4m3"),
                                                       (2, "f16", "e4m3", "e4m3"), (3, "f16", "e4m3", "e4m3"),
                                                       (1, "f32", "e5m2", "e4m3"), (2, "f32", "e4m3", "e5m2"),
                                                       (3, "f32", "f16", "f16"), (0, "f16", "f16", "f16"),
                                                       (1, "f32", "bf16", "bf16")])
def test_wgmma_register_a_chain_and_scale_d(swizzle: int, dtype: str, atype: str, btype: str) -> None:
    """m64n96 with A in registers, 2 CTAs x 2 warpgroups, scale-d 0 in one warpgroup, a chain with -A."""
    from tcforge.ptx.emulate import emulate

    rng = np.random.default_rng(40 + swizzle)
    n, groups, keep = 96, 4, 0b1011  # warpgroup 2 (CTA 1, warpgroup 0) runs with scale-d = 0
    fp8 = atype in ("e4m3", "e5m2")
    if fp8:
        a = _fp8_codes(rng, (groups, 64, 32))
        b = _fp8_codes(rng, (groups, 96, 64))  # [n, k] for the two k blocks

        def mma(a, b, c):
            return nx.wgmma_m64nNk32(a, b, c, atype, btype, dtype)
    else:
        a = _half_codes(rng, (groups, 64, 16), atype)
        b = _half_codes(rng, (groups, 96, 32), btype)

        def mma(a, b, c):
            return nx.wgmma_m64nNk16(a, b, c, atype, dtype)
    kh, sign = a.shape[2], np.array(0x80 if fp8 else 0x8000, a.dtype)
    if dtype == "f16":
        c = np.float16(rng.standard_normal((groups, 64, n)) * 8).view(np.uint16)
        c.reshape(-1)[:8] = [0x7E00, 0xFC00, 0x8000, 0x0000, 0x0001, 0x83FF, 0x7C00, 0x7BFF]
    else:
        c = np.float32(rng.standard_normal((groups, 64, n)) * 8).view(np.uint32)
        c.reshape(-1)[:6] = [0x7FC00000, 0xFF800000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF]
    images, hi, step = zip(*(wgmma_b_image(b[i].view(np.uint8), swizzle) for i in range(groups)), strict=True)
    words = np.concatenate([wgmma_pack(x) for x in c])
    args = {"wg_a": np.concatenate([wgmma_a_words(x) for x in a]), "wg_b": np.concatenate(images).view(np.uint32),
            "wg_c": words, "wg_d": np.zeros((512, 2 * words.shape[1]), np.uint32),
            "wg_words": 2 * WG_REGION // 4, "wg_desc": hi[0], "wg_kstep": step[0], "wg_keep": keep}
    got = emulate(wgmma_kernel(n, dtype, atype, btype), "wg", 2, 256, args)["wg_d"]
    for i in range(groups):
        d1 = mma(a[i], b[i, :, :kh].T, c[i] if keep >> i & 1 else np.zeros_like(c[i]))
        d2 = mma(a[i] ^ sign, b[i, :, kh:].T, d1)
        np.testing.assert_array_equal(got[128 * i:128 * (i + 1)], np.concatenate([wgmma_pack(d1), wgmma_pack(d2)], 1))
        if i == 0:  # the data is not degenerate: NaN, positive and negative results
            vals = d2.view(np.float32 if dtype == "f32" else np.float16).astype(np.float64)
            assert np.isnan(vals).any() and (vals[np.isfinite(vals)] > 0).any() and (vals < 0).any()
    with_c = mma(a[2], b[2, :, :kh].T, c[2])
    assert (wgmma_pack(with_c) != got[256:384, :words.shape[1]]).mean() > 0.5  # scale-d = 0 ignored C there


CONSTS = """.const .align 4 .b8 coef[16] = {0, 0, 0, 63, 0, 0, 160, 191, 0, 0, 64, 64, 111, 18, 131, 58};
.const .align 4 .b8 table[32];
"""
CONST_BODY = """and.b32 %r10, %r0, 3;
mul.wide.u32 %rd10, %r10, 4;
mov.u64 %rd11, coef;
add.s64 %rd12, %rd11, %rd10;
ld.const.u32 %r11, [%rd12];
st.global.u32 [%rd6], %r11;
ld.const.u32 %r12, [coef+4];
st.global.u32 [%rd6+4], %r12;
and.b32 %r13, %r0, 7;
mul.wide.u32 %rd13, %r13, 4;
mov.u64 %rd14, table;
add.s64 %rd15, %rd14, %rd13;
cvta.const.u64 %rd16, %rd15;
ld.u32 %r14, [%rd16];
st.global.u32 [%rd6+8], %r14;
"""


@pytest.mark.parametrize("given", [True, False])
def test_const_variables_initialised_or_given_and_read_every_way(given: bool) -> None:
    """Module .const variables as nvcc declares them (an initialised byte array; one the host sets with
    cudaMemcpyToSymbol, here given by name, else zeros), read by symbol + offset, through a register holding the
    symbol and through a generic address (cvta.const); a store to .const is refused."""
    from tests.ptx.emulate.kernels import kernel_text

    from tcforge.ptx.emulate import EmulationError, emulate

    n = 64
    table = (np.arange(8, dtype=np.int32) * 3 - 5).view(np.uint32)
    args = {"k_out": np.zeros((n, 3), np.uint32), "k_in": np.zeros((n, 1), np.uint32)}
    if given:
        args["table"] = table
    out = emulate(kernel_text(CONST_BODY, 1, 3, funcs=CONSTS), "k", (2, 1, 1), (32, 1, 1), args)
    assert "table" not in out and "coef" not in out  # read, never written
    coef = np.array([0.5, -1.25, 3.0, 1e-3], np.float32).view(np.uint32)
    i = np.arange(n)
    np.testing.assert_array_equal(out["k_out"][:, 0], coef[i & 3])
    np.testing.assert_array_equal(out["k_out"][:, 1], np.full(n, coef[1]))
    np.testing.assert_array_equal(out["k_out"][:, 2], table[i & 7] if given else np.zeros(n, np.uint32))
    bad = kernel_text(CONST_BODY + "st.const.u32 [coef], %r11;\n", 1, 3, funcs=CONSTS)
    with pytest.raises(EmulationError, match=r"st to the \.const space"):
        emulate(bad, "k", (1, 1, 1), (32, 1, 1), args)


VOTES = """.version 8.0
.target sm_80
.address_size 64
.visible .entry votes(.param .u64 x, .param .u64 out, .param .u32 n)
{
	.reg .pred %p<5>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [out];
	ld.param.u32 %r7, [n];
	mov.u32 %r9, %ntid.x;
	mov.u32 %r10, %ctaid.x;
	mov.u32 %r11, %tid.x;
	mad.lo.s32 %r1, %r10, %r9, %r11;
	setp.ge.s32 %p1, %r1, %r7;
	mov.u32 %r15, 0;
	@%p1 bra $SKIP;
	mul.wide.s32 %rd4, %r1, 4;
	add.s64 %rd5, %rd1, %rd4;
	ld.global.u32 %r15, [%rd5];
$SKIP:
	setp.gt.s32 %p2, %r15, 0;
	selp.u32 %r12, 1, 0, %p2;
	{
	.reg .pred %p1;
	setp.ne.u32 %p1, %r12, 0;
	bar.red.popc.u32 %r4, 0, %p1;
	}
	setp.ne.s32 %p3, %r15, 0;
	{
	.reg .pred %p1;
	.reg .pred %p2;
	bar.red.and.pred %p2, 0, %p3;
	selp.u32 %r5, 1, 0, %p2;
	}
	setp.lt.s32 %p4, %r15, -100;
	{
	.reg .pred %p2;
	barrier.cta.red.or.pred %p2, 0, !%p4;
	selp.u32 %r6, 1, 0, %p2;
	}
	@%p1 bra $END;
	mul.lo.s32 %r13, %r1, 3;
	mul.wide.s32 %rd6, %r13, 4;
	add.s64 %rd7, %rd2, %rd6;
	st.global.u32 [%rd7], %r4;
	st.global.u32 [%rd7+4], %r5;
	st.global.u32 [%rd7+8], %r6;
$END:
	ret;
}
"""


def test_bar_red_popc_and_or_in_nvcc_blocks_that_shadow_registers() -> None:
    """bar.red as nvcc emits __syncthreads_count / _and / _or: each inside a `{ }` block declaring its own %p1 / %p2,
    which must not clobber the function's %p1 (i >= n: those threads take part in the barriers but store nothing)."""
    from tcforge.ptx.emulate import emulate

    rng, n, block, grid = np.random.default_rng(5), 300, 128, 3
    x = rng.integers(-150, 150, n).astype(np.int32)
    x[128:256] = np.abs(x[128:256]) + 1  # the middle CTA: every value positive and non-zero
    out = emulate(VOTES, "votes", (grid, 1, 1), (block, 1, 1), {"x": x, "out": np.zeros(3 * n, np.int32), "n": n},
                  file="votes.ptx")["out"].reshape(n, 3)
    v = np.zeros(grid * block, np.int64)
    v[:n] = x
    per_cta = [((c > 0).sum(), (c != 0).all(), (c >= -100).any()) for c in v.reshape(grid, block)]
    np.testing.assert_array_equal(out, np.array([per_cta[i // block] for i in range(n)], np.int64))
    assert [tuple(int(t) for t in p) for p in per_cta][1] == (128, 1, 1)


def test_bar_red_at_different_instructions_is_a_file_line_error() -> None:
    from tcforge.ptx.emulate import EmulationError, emulate

    text = VOTES.replace("\tsetp.gt.s32 %p2, %r15, 0;", "\t@%p1 bra $LATE;\n\tsetp.gt.s32 %p2, %r15, 0;").replace(
        "\t@%p1 bra $END;", "\t@%p1 bra $END;\n$LATE:\n\tbar.red.popc.u32 %r4, 0, %p1;\n\tbra $END;")
    with pytest.raises(EmulationError, match=r"votes\.ptx:\d+: the threads of one barrier wait at different "
                                             r"instructions"):
        emulate(text, "votes", (3, 1, 1), (128, 1, 1), {"x": np.zeros(300, np.int32),
                                                        "out": np.zeros(900, np.int32), "n": 300}, file="votes.ptx")


# ---------------------------------------------------------------- elect.sync
_ELECT = """ld.global.u32 %r10, [%rd4];
and.b32 %r11, %r1, 31;
shr.u32 %r12, %r10, %r11;
and.b32 %r12, %r12, 1;
setp.ne.u32 %p1, %r12, 0;
mov.u32 %r13, 0xffffffff;
mov.u32 %r14, 0xffffffff;
@!%p1 bra DONE;
elect.sync %r13|%p2, %r10;
selp.u32 %r14, 1, 0, %p2;
elect.sync _|%p3, %r10;
selp.u32 %r15, 1, 0, %p3;
setp.ne.u32 %p4, %r14, %r15;
@%p4 trap;
DONE:
st.global.v2.u32 [%rd6], {%r13, %r14};"""


def test_elect_sync_leader_is_the_lowest_member_lane() -> None:
    masks = np.array([0xFFFFFFFF, 1 << 17, 1 << 31, 0xFFFF0000, 0x00F0F0F0, 0x80000001], np.uint32)
    got = run_body(_ELECT, np.repeat(masks, 32), 2, block=64).reshape(len(masks), 32, 2)
    for w, mask in enumerate(masks):
        members = [lane for lane in range(32) if (int(mask) >> lane) & 1]
        lead = members[0]
        for lane in range(32):
            want = (lead, int(lane == lead)) if lane in members else (0xFFFFFFFF, 0xFFFFFFFF)
            assert tuple(got[w, lane]) == want, (hex(mask), lane)


def test_elect_sync_by_a_lane_outside_its_mask_is_an_error() -> None:
    from tcforge.ptx.emulate import EmulationError

    with pytest.raises(EmulationError, match=r"k\.ptx:\d+: .*elect\.sync executed by lane 1, which is not in its "
                                             r"member mask 0x00000001"):
        run_body("mov.u32 %r10, 1;\nelect.sync %r11|%p1, %r10;\nst.global.u32 [%rd6], %r11;",
                 np.zeros(32, np.uint32), 1)


# ---- the asynchronous proxy and the cluster ------------------------------------------------------------------------

_TMA_KERNEL = HEADER + """
.visible .entry tma(
	.param .align 64 .b8 tma_map_in[128],
	.param .align 64 .b8 tma_map_out[128],
	.param .u64 tma_dump,
	.param .u32 tma_x,
	.param .u32 tma_y
)
{
	.reg .pred %p<8>;
	.reg .b32 %r<64>;
	.reg .b64 %rd<16>;
	.shared .align 1024 .b8 box[8192];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, bar;
	mov.u32 %r3, box;
	ld.param.u32 %r4, [tma_x];
	ld.param.u32 %r5, [tma_y];
	setp.eq.u32 %p1, %r1, 0;
	@!%p1 bra $Lsync;
	mbarrier.init.shared::cta.b64 [%r2], 1;
	fence.mbarrier_init.release.cluster;
$Lsync:
	bar.sync 0;
	@%p1 bra $Lissue;
""" + TMA_WAIT_AND_DUMP.replace("DUMP", "tma_dump") + """	@!%p1 bra $Lend;
	mov.b64 %rd5, tma_map_out;
	cvta.param.u64 %rd6, %rd5;
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd6, {%r5, %r4}], [%r3];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 0;
	bra.uni $Lend;
$Lissue:
	mov.u32 %r30, 8192;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r30;
	mov.b64 %rd7, tma_map_in;
	cvta.param.u64 %rd8, %rd7;
	prefetch.tensormap [%rd8];
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd8, {%r4, %r5}], [%r2];
	bra.uni $Lwait;
$Lend:
	ret;
}
"""


@pytest.mark.parametrize("span,dtype", [(128, np.float16), (64, np.uint8), (32, np.float32), (0, np.float16)])
@pytest.mark.parametrize("x,y", [(0, 0), (-8, 37), (40, -3)])
def test_tma_box_load_swizzle_and_out_of_bounds_then_store(span: int, dtype, x: int, y: int) -> None:
    """A 2D box loaded by cp.async.bulk.tensor (waited for on its mbarrier, the issuing lane last in code order) lands
    in shared memory swizzled by the span's rule with out-of-bounds elements zero; stored back at (y, x) of another
    map (transposed coordinates), only its in-bounds elements reach global memory."""
    from tcforge.ptx.emulate import TensorMap, emulate

    es = np.dtype(dtype).itemsize
    inner = (span or 64) // es  # box row of `span` bytes (64 without swizzle)
    rows = 8192 // (inner * es)
    src = np.random.default_rng(3).integers(1, 255, (50, 144), dtype=np.uint8)
    out = np.full((60, 80), 0xAB, np.uint8)
    maps = {"tma_map_in": TensorMap("src", _tm_type(dtype), (144 // es, 50), (144,), (inner, rows), span),
            "tma_map_out": TensorMap("out", _tm_type(dtype), (80 // es, 60), (80,), (inner, rows), span)}
    res = emulate(_TMA_KERNEL, "tma", 1, 128, {**maps, "src": src, "out": out, "tma_dump": np.zeros(8192, np.uint8),
                                                "tma_x": x, "tma_y": y})
    dump, stored = tma_box_reference(src, out, dtype, span, x, y)
    np.testing.assert_array_equal(res["tma_dump"], dump)
    np.testing.assert_array_equal(res.get("out", out), stored)


def test_tma_box_nan_fill() -> None:
    """fill=nan: a box's out-of-bounds elements load as 0x7FF7 (here rows past the source's end), in-bounds
    ones as they are; the text form keeps the fill, and an integer map refuses it."""
    from tcforge.ptx.emulate import EmulationError, TensorMap, emulate

    src = np.random.default_rng(4).integers(0, 0x7C00, (50, 72)).astype(np.uint16)
    tm = TensorMap("src", "f16", (72, 50), (144,), (64, 64), 0, "nan")
    assert TensorMap.parse(tm.text()) == tm
    maps = {"tma_map_in": tm, "tma_map_out": TensorMap("out", "f16", (80, 60), (160,), (64, 64))}
    res = emulate(_TMA_KERNEL, "tma", 1, 128, {**maps, "src": src, "out": np.zeros((60, 80), np.uint16),
                                                "tma_dump": np.zeros(8192, np.uint8), "tma_x": 8, "tma_y": 20})
    box = res["tma_dump"].view(np.uint16).reshape(64, 64)
    np.testing.assert_array_equal(box[:30], src[20:50, 8:72])
    assert (box[30:] == 0x7FF7).all()
    with pytest.raises(EmulationError, match="fill 'nan' is not zero, or nan for a float type"):
        TensorMap("src", "u8", (72, 50), (144,), (64, 64), 0, "nan")


def _tm_type(dtype) -> str:
    return {np.float16: "f16", np.uint8: "u8", np.float32: "f32"}[dtype]


_CLUSTER_BODY = """mov.u32 %r20, sm;
shl.b32 %r21, %r1, 2;
add.s32 %r22, %r20, %r21;
mov.u32 %r10, %cluster_ctarank;
mov.u32 %r11, %clusterid.x;
mov.u32 %r12, %cluster_ctaid.x;
mov.u32 %r13, %cluster_nctarank;
mad.lo.s32 %r14, %r10, 1000, %r1;
mad.lo.s32 %r14, %r11, 100000, %r14;
st.shared.u32 [%r22], %r14;
barrier.cluster.arrive.release.aligned;
barrier.cluster.wait.acquire.aligned;
xor.b32 %r15, %r10, 1;
mapa.shared::cluster.u32 %r16, %r22, %r15;
ld.shared::cluster.u32 %r17, [%r16];
getctarank.shared::cluster.u32 %r18, %r16;
cvt.u64.u32 %rd11, %r22;
cvta.shared.u64 %rd12, %rd11;
mapa.u64 %rd13, %rd12, %r15;
ld.u32 %r19, [%rd13];
barrier.cluster.arrive;
barrier.cluster.wait;
st.global.v4.u32 [%rd6], {%r17, %r18, %r19, %r12};
st.global.v2.u32 [%rd6+16], {%r13, %r11};"""


def test_cluster_ranks_barrier_and_distributed_shared_memory() -> None:
    """Two clusters of two CTAs: each thread reads its partner CTA's shared word after a cluster barrier, through
    mapa (shared::cluster and generic) and ld.shared::cluster; the cluster special registers name rank and cluster."""
    from tcforge.ptx.emulate import emulate

    text = kernel_text(_CLUSTER_BODY, 1, 8, decls=SHARED)
    res = emulate(text, "k", 4, 64, {"k_out": np.zeros((256, 8), np.uint32), "k_in": np.zeros(256, np.uint32)},
                  cluster=(2, 1, 1))["k_out"]
    t = np.arange(256)
    cta, tid = t // 64, t % 64
    rank, cid = cta % 2, cta // 2
    partner = (rank ^ 1) * 1000 + tid + cid * 100000
    np.testing.assert_array_equal(res[:, 0], partner)
    np.testing.assert_array_equal(res[:, 1], rank ^ 1)
    np.testing.assert_array_equal(res[:, 2], partner)
    np.testing.assert_array_equal(res[:, 3], rank)
    np.testing.assert_array_equal(res[:, 4], 2)
    np.testing.assert_array_equal(res[:, 5], cid)


_ONE = "mov.u32 %r20, sm;\nsetp.eq.u32 %p2, %r1, 0;\n"
_INIT2 = _ONE + "@%p2 mbarrier.init.shared::cta.b64 [%r20], 2;\nbar.sync 0;\n"


@pytest.mark.parametrize("body,cluster,match", [
    ("mov.u32 %r20, sm;\nmov.u32 %r21, 2;\nmapa.shared::cluster.u32 %r22, %r20, %r21;", (2, 1, 1),
     r"k\.ptx:\d+: thread ctaid \(0,0,0\) tid \(0,0,0\): mapa to CTA rank 2 of a cluster of 2"),
    (_INIT2 + "@%p2 mbarrier.arrive.shared::cta.b64 _, [%r20];\n$Lw:\n"
     "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r20], 0;\n@!%p1 bra $Lw;", None,
     r"k\.ptx:\d+: mbarrier wait never completes: thread ctaid \(0,0,0\) tid \(0,0,0\) waits on the mbarrier at "
     r"shared 0x0 for the phase of parity 0 \(phase parity 0, 1 of 2 arrivals and 0 transaction bytes pending\), "
     r"and no thread can run"),
    (_INIT2 + "@%p2 mbarrier.arrive.shared::cta.b64 _, [%r20], 3;", None,
     r"k\.ptx:\d+: thread ctaid \(0,0,0\) tid \(0,0,0\): 1 thread\(s\) arrive 3 times on an mbarrier with 2 "
     r"arrivals pending \(phase parity 0, 2 of 2 arrivals and 0 transaction bytes pending\)"),
    ("barrier.cluster.wait;", (2, 1, 1), r"barrier.cluster.wait without a barrier.cluster.arrive before it"),
    (_ONE + "@%p2 mbarrier.init.shared::cta.b64 [%r20], 1;\nbar.sync 0;\nsetp.eq.u32 %p3, %r2, 1;\n@%p3 bra $Lw;\n"
     "barrier.cluster.arrive;\nbarrier.cluster.wait;\n$Lw:\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r20], 0;\n"
     "@!%p1 bra $Lw;", (2, 1, 1), r"mbarrier wait never completes: thread ctaid \(1,0,0\) tid \(0,0,0\)"),
])
def test_async_and_cluster_errors_name_thread_and_line(body: str, cluster, match: str) -> None:
    from tcforge.ptx.emulate import EmulationError, emulate

    text = kernel_text(body, 1, 1, decls=SHARED)
    with pytest.raises(EmulationError, match=match):
        emulate(text, "k", 2, 32, {"k_out": np.zeros(64, np.uint32), "k_in": np.zeros(64, np.uint32)}, file="k.ptx",
                cluster=cluster)


def test_tensor_map_checks_and_text_form() -> None:
    from tcforge.ptx.emulate import EmulationError, TensorMap

    tm = TensorMap("A", "f16", (64, 100), (128,), (64, 32), 128)
    assert TensorMap.parse(tm.text()) == tm
    assert TensorMap.decode(tm.encode(0x7F00_0000_0100)) == (TensorMap("?", "f16", (64, 100), (128,), (64, 32), 128),
                                                            0x7F00_0000_0100)
    for *bad, match in (((64, 100), (100,), (64, 32), 128, "multiples of 16"),
                       ((64, 100), (128,), (32, 32), 128, "128-byte swizzle with a 64-byte inner box"),
                       ((64, 100), (128,), (64, 300), 0, "box extents 1..256"),
                       ((64,), (128,), (64,), 0, "1 dims need 1 box extents and 0 strides")):
        with pytest.raises(EmulationError, match=match):
            TensorMap("A", "f16", *bad)
    with pytest.raises(EmulationError, match="expected 'tensormap BUFFER TYPE"):
        TensorMap.parse("tensormap A f16 dims=64 box=x")


def test_cluster_launch_shape_errors() -> None:
    from tcforge.ptx.emulate import EmulationError, emulate

    args = {"k_out": np.zeros(96, np.uint32), "k_in": np.zeros(96, np.uint32)}
    with pytest.raises(EmulationError, match=r"grid \(3, 1, 1\) is not a whole number of clusters \(2, 1, 1\)"):
        emulate(kernel_text("", 1, 1), "k", 3, 32, args, cluster=(2, 1, 1))
    with pytest.raises(EmulationError, match=r"cluster \(17, 1, 1\): 1 to 16 CTAs"):
        emulate(kernel_text("", 1, 1), "k", 17, 32, {**args, "k_out": np.zeros(17 * 32, np.uint32),
                                                     "k_in": np.zeros(17 * 32, np.uint32)}, cluster=17)


def test_test_wait_answers_now_and_a_spinning_lane_waits_for_the_phase() -> None:
    """test_wait right after init says false; threads spinning on it ahead of the producer in code order are parked
    after SPIN_LIMIT false answers and see true once thread 5 arrives (no livelock), like try_wait."""
    body = _ONE + """@%p2 mbarrier.init.shared::cta.b64 [%r20], 1;
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r20], 0;
selp.u32 %r31, 1, 0, %p4;
bar.sync 0;
setp.eq.u32 %p3, %r1, 5;
@%p3 bra $Lp;
$Lw:
mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r20], 0;
@!%p1 bra $Lw;
selp.u32 %r30, 7, 0, %p1;
bra.uni $Ld;
$Lp:
mbarrier.arrive.shared::cta.b64 _, [%r20];
bra.uni $Lw;
$Ld:
st.global.v2.u32 [%rd6], {%r30, %r31};"""
    got = run_body(body, np.zeros(64, np.uint32), 2, block=64, decls=SHARED)
    np.testing.assert_array_equal(got[:, 0], 7)
    np.testing.assert_array_equal(got[:, 1], 0)


def test_tma_accesses_reach_record() -> None:
    """`record` sees a TMA load as the issuing thread's in-bounds global element reads and its whole box of shared
    writes, and the store as the reverse."""
    from tcforge.ptx.emulate import TensorMap, emulate

    src, out = np.zeros((50, 144), np.uint8), np.zeros((60, 80), np.uint8)
    maps = {"tma_map_in": TensorMap("src", "f16", (72, 50), (144,), (64, 64), 128),
            "tma_map_out": TensorMap("out", "f16", (40, 60), (80,), (64, 64), 128)}
    seen: list = []
    emulate(_TMA_KERNEL, "tma", 1, 128, {**maps, "src": src, "out": out, "tma_dump": np.zeros(8192, np.uint8),
                                          "tma_x": 40, "tma_y": -3},
            record=lambda line, space, addr, ids, size, store: seen.append((space, store, len(addr), size,
                                                                             set(ids["%tid.x"].tolist()))))
    lines = {(sp, st_, n) for sp, st_, n, sz, t in seen if t == {0} and sz == 2}
    # the load at (40, -3): columns 40-71 of the 72, rows 0-49; the store at (-3, 40): columns 0-39, rows 40-59
    assert lines == {("global", False, 32 * 50), ("shared", True, 64 * 64), ("shared", False, 40 * 20),
                     ("global", True, 40 * 20)}


@pytest.mark.parametrize("swizzle,sat,atype,btype", [(1, False, "s8", "s8"), (2, True, "u8", "s8"),
                                                     (0, True, "s8", "u8"), (3, False, "u8", "u8")])
def test_wgmma_integer_exact_sum_wrapped_or_clamped(swizzle: int, sat: bool, atype: str, btype: str) -> None:
    """m64n96k32 s8 / u8 -> s32 with A in registers: each step's D is C + A·B exactly, wrapped to 32 bits or, with
    .satfinite, clamped to the s32 range (C near both ends of it); scale-d 0 drops C in one warpgroup."""
    from tcforge.ptx.emulate import emulate

    rng = np.random.default_rng(60 + swizzle)
    n, groups, keep = 96, 4, 0b1011
    a = rng.integers(0, 256, (groups, 64, 32), dtype=np.uint8)
    b = rng.integers(0, 256, (groups, 96, 64), dtype=np.uint8)
    c = rng.integers(-2**31, 2**31, (groups, 64, n), dtype=np.int64)
    c[:, :, :8] = 2**31 - 1 - rng.integers(0, 40000, (groups, 64, 8))
    c[:, :, 8:16] = -2**31 + rng.integers(0, 40000, (groups, 64, 8))
    c = c.astype(np.int32).view(np.uint32)

    def values(x, t):
        return x.view(np.int8).astype(np.int64) if t == "s8" else x.astype(np.int64)

    def mma(a_, b_, c_):
        d = c_.view(np.int32).astype(np.int64) + values(a_, atype) @ values(b_, btype)
        d = np.clip(d, -2**31, 2**31 - 1) if sat else d
        return (d & 0xFFFFFFFF).astype(np.uint32)
    images, hi, step = zip(*(wgmma_b_image(b[i], swizzle) for i in range(groups)), strict=True)
    words = np.concatenate([wgmma_pack(x) for x in c])
    args = {"wg_a": np.concatenate([wgmma_a_words(x) for x in a]), "wg_b": np.concatenate(images).view(np.uint32),
            "wg_c": words, "wg_d": np.zeros((512, 2 * words.shape[1]), np.uint32),
            "wg_words": 2 * WG_REGION // 4, "wg_desc": hi[0], "wg_kstep": step[0], "wg_keep": keep}
    got = emulate(wgmma_kernel(n, "s32.satfinite" if sat else "s32", atype, btype), "wg", 2, 256, args)["wg_d"]
    clamped = 0
    for i in range(groups):
        c0 = c[i] if keep >> i & 1 else np.zeros_like(c[i])
        d1 = mma(a[i], b[i, :, :32].T, c0)
        d2 = mma(a[i], b[i, :, 32:].T, d1)
        np.testing.assert_array_equal(got[128 * i:128 * (i + 1)], np.concatenate([wgmma_pack(d1), wgmma_pack(d2)], 1))
        exact = c0.view(np.int32).astype(np.int64) + values(a[i], atype) @ values(b[i, :, :32].T, btype)
        clamped += int(((exact > 2**31 - 1) | (exact < -2**31)).sum())
    assert clamped > 50  # the sums do leave the s32 range


def test_cp_async_mbarrier_arrive_counts_only_with_noinc() -> None:
    """cp.async.mbarrier.arrive.noinc is one arrival on the barrier (here its only one: the phase completes); without
    .noinc the pending count is raised first, so the barrier is where it was."""
    body = _ONE + """add.s32 %r21, %r20, 8;
@%p2 mbarrier.init.shared::cta.b64 [%r20], 1;
@%p2 mbarrier.init.shared::cta.b64 [%r21], 1;
bar.sync 0;
add.s32 %r22, %r20, 64;
cp.async.ca.shared.global [%r22], [%rd4], 4;
@%p2 cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r20];
@%p2 cp.async.mbarrier.arrive.shared::cta.b64 [%r21];
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r20], 0;
mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r21], 0;
selp.u32 %r30, 1, 0, %p3;
selp.u32 %r31, 1, 0, %p4;
st.global.v2.u32 [%rd6], {%r30, %r31};"""
    got = run_body(body, np.zeros(32, np.uint32), 2, decls=SHARED)
    np.testing.assert_array_equal(got, np.tile([1, 0], (32, 1)))


_REDUCE_KERNEL = HEADER + """
.visible .entry red(.param .align 64 .b8 red_map[128], .param .u64 red_src, .param .u64 red_dst)
{
	.reg .pred %p<2>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	.shared .align 128 .b8 sbuf[1024];
	mov.u32 %r1, %tid.x;
	ld.param.u64 %rd1, [red_src];
	mul.wide.u32 %rd2, %r1, 16;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd3];
	mov.u32 %r2, sbuf;
	shl.b32 %r3, %r1, 4;
	add.s32 %r8, %r2, %r3;
	st.shared.v4.u32 [%r8], {%r4, %r5, %r6, %r7};
	fence.proxy.async.shared::cta;
	bar.sync 0;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra $Lend;
	mov.b64 %rd6, red_map;
	cvta.param.u64 %rd4, %rd6;
	mov.u32 %r9, 0;
	mov.u32 %r10, 6;
	cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd4, {%r9, %r10}], [%r2];
	ld.param.u64 %rd5, [red_dst];
	mov.u32 %r11, 512;
	cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%rd5], [%r2], %r11;
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
$Lend:
	ret;
}
"""


def test_tma_and_bulk_reductions() -> None:
    """cp.reduce.async.bulk: a box of f32 added into a tensor through its map (rows past its end skipped; rn, a
    subnormal sum kept, NaN canonical) and a plain span reduced by min.s32."""
    from tcforge.ptx.emulate import TensorMap, emulate

    rng = np.random.default_rng(5)
    src = rng.standard_normal(256).astype(np.float32)  # 64 threads x 16 bytes: a 4 x 8 box of f32 (128 B) + more
    src[:4] = [1e-39, np.nan, 3.0, -2.0]
    out = rng.standard_normal((8, 8)).astype(np.float32)
    out[6, :4] = [1e-39, 1.0, np.inf, 2.0]
    dst = rng.integers(-2**31, 2**31, 256).astype(np.int32)
    args = {"red_map": TensorMap("out", "f32", (8, 8), (32,), (8, 4)), "red_src": src, "red_dst": dst.copy(),
            "out": out.copy()}
    seen: dict[int, set] = {}
    got = emulate(_REDUCE_KERNEL, "red", 1, 64, args,
                  record=lambda line, space, addrs, ids, size, store: seen.setdefault(line, set()).add((space, store)))
    reduce_lines = [i + 1 for i, t in enumerate(_REDUCE_KERNEL.splitlines()) if "cp.reduce" in t]
    assert all({("shared", False), ("global", True)} <= seen[line] for line in reduce_lines)  # both reach record
    want = out.copy()
    box = src[:32].reshape(4, 8)
    want[6:8] = out[6:8] + box[:2]  # rows 8 and 9 of the box lie past the tensor's end
    want[6, 0] = np.float32(1e-39) + np.float32(1e-39)  # subnormal inputs and result kept (not an atom's flush)
    want[6, 1] = np.float32(np.nan)
    np.testing.assert_array_equal(got["out"].view(np.uint32)[6:, 2:], want.view(np.uint32)[6:, 2:])
    np.testing.assert_array_equal(got["out"][:6], out[:6])
    assert got["out"][6, 0] == want[6, 0] != 0 and got["out"].view(np.uint32)[6, 1] == 0x7FFFFFFF
    np.testing.assert_array_equal(got["red_dst"][:128], np.minimum(dst[:128], src.view(np.int32)[:128]))
    np.testing.assert_array_equal(got["red_dst"][128:], dst[128:])


def test_tensor_maps_inside_a_struct_parameter() -> None:
    """CUTLASS-style Params: both maps inside one by-value struct (`PARAM@OFFSET` -> TensorMap), reached through
    `cvta.param` of the struct plus the field's offset, load and store as the separate parameters do; a map that
    would straddle the struct's end or sit off 64-byte alignment is a one-line error."""
    from tcforge.ptx.emulate import EmulationError, TensorMap, emulate

    kernel = _TMA_KERNEL.replace("\t.param .align 64 .b8 tma_map_in[128],\n\t.param .align 64 .b8 tma_map_out[128],",
                                 "\t.param .align 64 .b8 tma_p[320],")
    kernel = kernel.replace("mov.b64 %rd5, tma_map_out;", "mov.b64 %rd5, tma_p;\n\tadd.s64 %rd5, %rd5, 192;")
    kernel = kernel.replace("mov.b64 %rd7, tma_map_in;", "mov.b64 %rd7, tma_p;\n\tadd.s64 %rd7, %rd7, 64;")
    assert "tma_map_in" not in kernel and "tma_map_out" not in kernel
    src = np.random.default_rng(5).integers(1, 255, (50, 144), dtype=np.uint8)
    out = np.full((60, 80), 0xAB, np.uint8)
    m_in = TensorMap("src", "f16", (72, 50), (144,), (64, 64), 128)
    m_out = TensorMap("out", "f16", (40, 60), (80,), (64, 64), 128)
    base = {"tma_p": np.zeros(320, np.uint8), "src": src, "out": out, "tma_dump": np.zeros(8192, np.uint8),
            "tma_x": 8, "tma_y": 3}
    res = emulate(kernel, "tma", 1, 128, {**base, "tma_p@64": m_in, "tma_p@192": m_out.text()})
    dump, stored = tma_box_reference(src, out, np.float16, 128, 8, 3)
    np.testing.assert_array_equal(res["tma_dump"], dump)
    np.testing.assert_array_equal(res["out"], stored)
    for off in (32, 256):
        with pytest.raises(EmulationError, match=f"tma_p@{off}: a tensor map needs 128 bytes, 64-byte aligned"):
            emulate(kernel, "tma", 1, 128, {**base, f"tma_p@{off}": m_in, "tma_p@192": m_out})


BRX_BODY = """ld.global.u32 %r10, [%rd4];
ts: .branchtargets $La, $Lb, $Lc;
brx.idx %r10, ts;
$La:
mov.u32 %r11, 100;
bra.uni $Lend;
$Lb:
mov.u32 %r11, 200;
bra.uni $Lend;
$Lc:
mul.lo.u32 %r11, %r10, 7;
$Lend:
st.global.u32 [%rd6], %r11;"""


def test_brx_idx_sends_each_lane_to_its_target() -> None:
    """brx.idx (Triton's warp-specialization dispatch): a per-lane index into a .branchtargets list, divergent in
    a warp, reconverging after; an index past the list is a one-line error."""
    from tcforge.ptx.emulate import EmulationError

    idx = np.arange(64, dtype=np.uint32) % 3
    got = run_body(BRX_BODY, idx, 1)
    np.testing.assert_array_equal(got[:, 0], np.select([idx == 0, idx == 1], [100, 200], 14))
    with pytest.raises(EmulationError, match=r"^k\.ptx:\d+: thread .*: brx\.idx index 3 outside its 3 targets$"):
        run_body(BRX_BODY, np.full(32, 3, np.uint32), 1)


def test_wgmma_descriptor_base_offset_shifts_the_swizzle_phase() -> None:
    """A 128-byte-swizzled K-major tile 384 bytes past the 1024-byte pattern: with base offset 0 each row's 16-byte
    chunks XOR with its address bits [7, 10) (phase 3 + row), with base offset b with those bits less b — so b = 3
    gives the pattern of an aligned tile moved by 384 bytes (the H100's cu_wgmma_base_offset*_probe entries)."""
    from tcforge.ptx.emulate.ops_wgmma import descriptor_offsets

    def desc(start: int, base: int) -> int:
        return (start >> 4) | (1 << 16) | ((1024 >> 4) << 32) | (base << 49) | (1 << 62)

    aligned = descriptor_offsets(desc(8192, 0), 8)
    np.testing.assert_array_equal(descriptor_offsets(desc(8192 + 384, 3), 8), aligned + 384)
    rows, kb = np.arange(8)[:, None], np.arange(32)[None, :]
    lin = 8192 + 384 + rows * 128 + kb
    for base in (0, 1, 5):
        want = lin ^ ((((lin >> 7) - base) & 7) << 4)
        np.testing.assert_array_equal(descriptor_offsets(desc(8192 + 384, base), 8), want)
