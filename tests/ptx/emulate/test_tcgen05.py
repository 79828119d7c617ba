"""sm_100a tensor memory and tcgen05.mma in the emulator: a hand-written kernel (alloc, two MMAs chained through
enable-input-d, commit onto an mbarrier, ld.32x32b by each warp's quarter of the lanes, dealloc) against
numerics.tensorcore's chain placed apart from the emulator, the instructions' one-line errors, and Triton's own
sm_100a matmul."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from tests.ptx.emulate.kernels import f16_k16_chain

from tcforge.numerics.tensorcore import HOPPER_FORMS, tc_mma
from tcforge.ptx.emulate import EmulationError, emulate

N = 64
IMAGE = 2 * (128 + N) * 32  # two k-steps: A 128 rows and B N rows of 32 bytes each


def idesc(m: int = 128, n: int = N, ab: int = 0, neg_a: int = 0, d: int = 1) -> int:
    """A .kind::f16 instruction descriptor (PTX ISA): D type, A / B type, negate A, N >> 3, M >> 4."""
    return d << 4 | ab << 7 | ab << 10 | neg_a << 13 | (n >> 3) << 17 | (m >> 4) << 24


def sdesc(start: int, lbo: int = 128, sbo: int = 256) -> int:
    """A no-swizzle tcgen05 shared-memory descriptor: start, LBO, SBO (>> 4), the fixed 0b001 at bits 46-48."""
    return start >> 4 | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46


def kmajor(tile: np.ndarray) -> np.ndarray:
    """(rows, 16) 16-bit elements as the no-swizzle K-major layout's bytes: 8-row x 16-byte core matrices, the two
    along K 128 bytes apart (LBO), 8-row groups 256 apart (SBO)."""
    rows = tile.shape[0]
    out = np.zeros(rows * 32, np.uint8)
    r, kb = np.arange(rows)[:, None], np.arange(32)[None, :]
    out[(r // 8) * 256 + (kb // 16) * 128 + (r % 8) * 16 + kb % 16] = tile.view(np.uint8).reshape(rows, 32)
    return out


KERNEL = """.version 8.7
.target sm_100a
.address_size 64

.visible .entry tc(.param .u64 p_img, .param .u64 p_out, .param .u32 p_idesc1, .param .u32 p_idesc2,
                   .param .u64 p_a1, .param .u64 p_b1, .param .u64 p_a2, .param .u64 p_b2, .param .u32 p_warp)
{
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .b32 %v<64>;
	.reg .b64 %rd<16>;
	.shared .align 1024 .b8 img[IMAGE];
	.shared .align 8 .b64 bar;
	.shared .align 4 .b32 slot;
	ld.param.u64 %rd1, [p_img];
	ld.param.u64 %rd2, [p_out];
	mov.u32 %r1, %tid.x;
	shr.u32 %r2, %r1, 5;
	mov.u32 %r3, img;
	mov.u32 %r4, %r1;
$Lcopy:
	setp.ge.u32 %p1, %r4, WORDS;
	@%p1 bra $Lcopied;
	mul.wide.u32 %rd3, %r4, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.u32 %r5, [%rd4];
	shl.b32 %r6, %r4, 2;
	add.s32 %r7, %r3, %r6;
	st.shared.u32 [%r7], %r5;
	add.s32 %r4, %r4, 128;
	bra.uni $Lcopy;
$Lcopied:
	mov.u32 %r8, bar;
	mov.u32 %r9, slot;
	setp.ne.u32 %p2, %r1, 0;
	@%p2 bra $Linit;
	mbarrier.init.shared::cta.b64 [%r8], 1;
$Linit:
	setp.ne.u32 %p3, %r2, 0;
	@%p3 bra $Lalloc;
	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r9], 64;
	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r9], 64;
	tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
$Lalloc:
	fence.proxy.async.shared::cta;
	bar.sync 0;
	tcgen05.fence::after_thread_sync;
	ld.shared.b32 %r10, [%r9];
	@%p2 bra $Lissued;
	ld.param.u32 %r11, [p_idesc1];
	ld.param.u32 %r12, [p_idesc2];
	ld.param.u64 %rd5, [p_a1];
	ld.param.u64 %rd6, [p_b1];
	ld.param.u64 %rd7, [p_a2];
	ld.param.u64 %rd8, [p_b2];
	tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd7, %rd8, %r12, 0;
	tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd5, %rd6, %r11, 0;
	setp.eq.u32 %p1, %r1, 0;
	tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd7, %rd8, %r12, %p1;
	tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r8];
$Lissued:
	mov.u32 %r13, 0;
$Lwait:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r8], %r13;
	@!%p1 bra $Lwait;
	tcgen05.fence::after_thread_sync;
	ld.param.u32 %r14, [p_warp];
	add.s32 %r14, %r14, %r2;
	and.b32 %r14, %r14, 3;
	shl.b32 %r15, %r14, 21;
	add.s32 %r16, %r10, %r15;
	tcgen05.ld.sync.aligned.32x32b.x64.b32 {VREGS}, [%r16];
	tcgen05.wait::ld.sync.aligned;
	mul.wide.u32 %rd9, %r1, 256;
	add.s64 %rd10, %rd2, %rd9;
STORES
	bar.sync 0;
	@%p3 bra $Ldone;
	tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r10, 64;
$Ldone:
	ret;
}
""".replace("IMAGE", str(IMAGE)).replace("WORDS", str(IMAGE // 4)).replace(
    "VREGS", ", ".join(f"%v{i}" for i in range(64))).replace(
    "STORES", "\n".join(f"\tst.global.v4.b32 [%rd10+{16 * i}], {{%v{4 * i}, %v{4 * i + 1}, %v{4 * i + 2}, "
                        f"%v{4 * i + 3}}};" for i in range(16)))


def _args(a: np.ndarray, b: np.ndarray, ab: int = 0, **over) -> dict:
    """Arguments: the image (A1, B1, A2, B2 in K-major no-swizzle layouts), descriptors; MMA 2 negates A."""
    img = np.concatenate([kmajor(a[0]), kmajor(b[0]), kmajor(a[1]), kmajor(b[1])])
    at = np.cumsum([0, 128 * 32, N * 32, 128 * 32])
    args = {"p_img": img.view(np.uint32), "p_out": np.zeros((128, 64), np.uint32), "p_idesc1": idesc(ab=ab),
            "p_idesc2": idesc(ab=ab, neg_a=1), "p_a1": sdesc(int(at[0])), "p_b1": sdesc(int(at[1])),
            "p_a2": sdesc(int(at[2])), "p_b2": sdesc(int(at[3])), "p_warp": 0}
    return {**args, **over}


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_two_chained_mmas_are_the_datapath_chain_and_ld_reads_row_per_lane(kind: str) -> None:
    """D = (-A2)·B2 + (A1·B1 from C = +0, over a D written before): tensor-memory lane r holds row r, column j column
    j (the PTX ISA's M = 128 layout), read back by tcgen05.ld per warp; f16 / bf16 codes with NaN, infinities and
    subnormals."""
    rng = np.random.default_rng(3 if kind == "f16" else 4)
    v = rng.standard_normal((2, 128 + N, 16)).astype(np.float32)
    bits = v.astype(np.float16).view(np.uint16) if kind == "f16" else (v.view(np.uint32) >> 16).astype(np.uint16)
    special = np.array([0x7E00, 0x7C00, 0x8000, 0x0001] if kind == "f16" else [0x7FC0, 0x7F80, 0x8000, 0x0001])
    hit = rng.random(bits.shape) < 0.01
    bits[hit] = rng.choice(special, int(hit.sum()))
    a, b = bits[:, :128], bits[:, 128:]
    got = emulate(KERNEL, "tc", 1, 128, _args(a, b, ab=int(kind == "bf16")))["p_out"]
    form = HOPPER_FORMS[f"wgmma.m64n8k16.f32.{kind}.{kind}"]
    rows = [tc_mma(form, a[0][i:i + 64], b[0][:, :].T.copy(), np.zeros((64, N), np.uint32)) for i in (0, 64)]
    first = np.concatenate(rows)
    want = np.concatenate([tc_mma(form, a[1][i:i + 64] ^ np.uint16(0x8000), b[1].T.copy(), first[i:i + 64])
                           for i in (0, 64)])
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got.view(np.float32)).any() and (got.view(np.float32) < 0).any()


@pytest.mark.parametrize("over,message", [
    ({"p_warp": 1}, "tcgen05.ld of lanes 32..63, columns 64..127: warp 0 reaches lanes 0..31"),
    ({"p_idesc1": idesc(m=32)}, "M = 32, N = 64; cta_group::1 is emulated at M = 64 (N a multiple of 8"),
    ({"p_idesc1": idesc(d=0)}, "D type 0; the emulator models f32 D (1)"),
    ({"p_idesc1": idesc(ab=1) & ~(7 << 10)}, "A / B types 1 / 0"),
    ({"p_a1": sdesc(0) & ~(1 << 46)}, "bits 46-48 must hold 0b001"),
    ({"p_b1": sdesc(0) | 1 << 61}, "swizzle mode 1 is not none (0), 128-byte (2)"),
    ({"p_a1": sdesc(0, sbo=16 * 1024)}, "outside the CTA's"),
])
def test_tcgen05_errors_name_the_problem(over: dict, message: str) -> None:
    z = np.zeros((2, 128 + N, 16), np.uint16)
    with pytest.raises(EmulationError, match="^<ptx>:") as err:
        emulate(KERNEL, "tc", 1, 128, _args(z[:, :128], z[:, 128:], **over))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


@pytest.mark.parametrize("edit,message", [
    (("shared::cta.b32 [%r9], 64;", "shared::cta.b32 [%r9], 48;"), "48 columns; a power of 2 in 32..512"),
    (("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r10, 64;", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 "
      "%r10, 128;"), "which this CTA did not allocate"),
    (("tcgen05.wait::ld.sync.aligned;", "tcgen05.shift.cta_group::1.down [%r16];"),
     "tcgen05.shift.cta_group::1.down (of tcgen05, alloc"),
    (("tcgen05.commit.cta_group::1", "tcgen05.commit.cta_group::2"), "cta_group::2 pairs the CTAs of a cluster"),
])
def test_tcgen05_instruction_errors(edit: tuple[str, str], message: str) -> None:
    z = np.zeros((2, 128 + N, 16), np.uint16)
    with pytest.raises(EmulationError, match="^<ptx>:") as err:
        emulate(KERNEL.replace(*edit), "tc", 1, 128, _args(z[:, :128], z[:, 128:]))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


TRITON_SM100 = Path(__file__).parents[2] / "data" / "ptx" / "triton_sm100"
# file -> (BM, BN, element dtype, shared bytes: the stages' A and B tiles and two mbarriers)
TRITON_FILES = {"matmul_f16_sm100a.ptx": (128, 128, np.float16, 3 * (128 * 64 + 64 * 128) * 2 + 16),
                "matmul_bf16_sm100a_m64.ptx": (64, 128, ml_dtypes.bfloat16, 3 * (64 * 32 + 32 * 128) * 2 + 16),
                "matmul_e4m3_sm100a.ptx": (64, 128, ml_dtypes.float8_e4m3fn, 3 * (64 * 128 + 128 * 128) + 16)}


def _triton_matmul(file: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C (fp16) of one of Triton's sm_100a matmuls (tools/ptx/gen_triton_ptx.py --sm100: 4 warps, 3 stages;
    tcgen05.mma with its accumulator in tensor memory, zeroed by tcgen05.st, read by tcgen05.ld)."""
    bm, bn, _, shared = TRITON_FILES[file]
    text = (TRITON_SM100 / file).read_text()
    (m, k), n = a.shape, b.shape[1]
    vals = [a, b, np.zeros((m, n), np.float16), m, n, k, k, 1, n, 1, n, 1, np.zeros(64, np.uint8),
            np.zeros(64, np.uint8)]
    names = re.findall(r"\.param [^\n]*?(matmul_kernel_param_\d+)", text)
    return emulate(text, "matmul_kernel", (m // bm, n // bn, 1), 128, dict(zip(names, vals, strict=True)),
                   dynamic_shared=shared)["matmul_kernel_param_2"]


@pytest.mark.parametrize("file", sorted(TRITON_FILES))
def test_tritons_sm100_matmuls_are_a_times_b(file: str) -> None:
    """Kernels whose tcgen05 code Triton wrote (and B200s run): f16 at M = 128 (ld / st .32x32b), bf16 at M = 64
    (half the data path, ld / st .16x32bx2), e4m3 (.kind::f8f6f4, B MN-major): small integers give A @ B exactly,
    so this module's reading of alloc, the descriptors, the instruction descriptor, the data-path layouts and the
    ld / st lanes is Triton's too (a row or column permuted in either would show)."""
    bm, bn, dtype, _ = TRITON_FILES[file]
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (2 * bm, 256)).astype(dtype)
    b = rng.integers(-3, 4, (256, 2 * bn)).astype(dtype)
    got = _triton_matmul(file, a, b)
    np.testing.assert_array_equal(got, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))


def test_tritons_sm100_matmul_on_gaussian_inputs_is_the_k16_chain() -> None:
    """Gaussian fp16: C is numerics' Hopper f16 -> f32 chain of K = 16 steps in K order, rounded to f16."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((128, 128)).astype(np.float16)
    b = rng.standard_normal((128, 128)).astype(np.float16)
    got = _triton_matmul("matmul_f16_sm100a.ptx", a, b)
    np.testing.assert_array_equal(got, f16_k16_chain(a, b).view(np.float32).astype(np.float16))


def test_tritons_warp_specialized_sm100_matmul_is_a_times_bt() -> None:
    """Triton's warp-specialized K loop for sm_100a (the corpus's ws_matmul: tensor descriptors made on the device
    with tensormap.replace, a producer warp on mbarriers dispatched by brx.idx, tcgen05.mma): A B^T exactly on small
    integers, ragged M and N (the stores masked, TMA filling the edges)."""
    launch = json.loads((TRITON_SM100 / "launch.json").read_text())["ws_matmul_f16_sm100a.ptx"]
    text = (TRITON_SM100 / "ws_matmul_f16_sm100a.ptx").read_text()
    rng = np.random.default_rng(9)
    m, n, k = 200, 72, 192
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (n, k)).astype(np.float16)
    names = re.findall(r"\.param [^\n]*?(ws_matmul_param_\d+)", text)
    vals = [a, b, np.full((m, n), np.nan, np.float32), m, n, k] + [np.zeros(8192, np.uint8)] * (len(names) - 6)
    got = emulate(text, launch["kernel"], (2, 2, 1), 32 * launch["warps"], dict(zip(names, vals, strict=True)),
                  dynamic_shared=launch["shared"])["ws_matmul_param_2"]
    np.testing.assert_array_equal(got, a.astype(np.float32) @ b.astype(np.float32).T)
