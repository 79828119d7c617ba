"""SIMD video instructions (vadd4 ... vset2) against a per-thread reference written from the PTX ISA's pseudocode
with Python integers, CUDA's SIMD intrinsics (nvcc's PTX for sm_90) against their documented meaning, and the scalar
forms (vadd ... vmad) on cases worked by hand."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from tests.ptx.emulate.kernels import run_body, video_reference
from tests.ptx.emulate.sass_lanes import build, run_blocks
from tools.corpus.video import scalar_forms, source

from tcforge.ptx.emulate import emulate
from tcforge.ptx.emulate.machine import EmulationError
from tcforge.ptx.operands import Reg, Sel, parse_operand
from tcforge.runtime.tools import find_tool

EDGE_BYTES = np.array([0x00, 0x01, 0x7F, 0x80, 0x81, 0xFE, 0xFF, 0x40], np.uint32)


def _words(seed: int, n: int = 96) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, size=(n, 3), dtype=np.uint64).astype(np.uint32)
    edge = rng.choice(EDGE_BYTES, size=(n // 2, 3, 4))
    x[: n // 2] = (edge << np.array([0, 8, 16, 24], np.uint32)).sum(axis=2, dtype=np.uint32)
    return x


FORMS = [
    *(f"{op}4.{d}.{a}.{b} %r13, %r10, %r11, %r12;" for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax")
      for d, a, b in (("u32", "u32", "u32"), ("s32", "s32", "s32"), ("s32", "u32", "s32"), ("u32", "s32", "u32"))),
    *(f"{op}2.{d}.{a}.{b} %r13, %r10, %r11, %r12;" for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax")
      for d, a, b in (("u32", "u32", "u32"), ("s32", "s32", "s32"), ("u32", "s32", "u32"))),
    *(f"{op}4.{t}.{t}.{t}.sat %r13, %r10, %r11, %r12;" for op in ("vadd", "vsub", "vavrg") for t in ("u32", "s32")),
    *(f"{op}2.{t}.{t}.{t}.sat %r13, %r10, %r11, %r12;" for op in ("vadd", "vsub") for t in ("u32", "s32")),
    "vadd4.s32.u32.u32.sat %r13, %r10, %r11, %r12;", "vsub2.u32.s32.s32.sat %r13, %r10, %r11, %r12;",
    "vabsdiff4.u32.u32.u32.add %r13, %r10, %r11, %r12;", "vsub4.s32.s32.s32.add %r13, %r10, %r11, %r12;",
    "vabsdiff2.u32.u32.u32.add %r13, %r10, %r11, %r12;", "vmin2.s32.s32.s32.add %r13, %r10, %r11, %r12;",
    "vadd4.u32.u32.u32.add %r13.b31, %r10, %r11, %r12;", "vabsdiff4.s32.s32.s32.add %r13.b20, %r10, %r11, %r12;",
    "vmax4.u32.u32.u32 %r13.b21, %r10, %r11, %r12;", "vsub4.s32.s32.s32 %r13.b3, %r10, %r11, %r12;",
    "vavrg2.s32.s32.s32 %r13.h1, %r10, %r11, %r12;", "vadd2.u32.u32.u32 %r13.h0, %r10, %r11, %r12;",
    "vadd4.u32.u32.u32 %r13, %r10.b0123, %r11.b4567, %r12;", "vsub4.s32.s32.s32 %r13, %r10.b7410, %r11.b0000, %r12;",
    "vabsdiff2.s32.s32.s32 %r13, %r10.h23, %r11.h01, %r12;", "vmax2.u32.u32.u32 %r13, %r10.h11, %r11.h30, %r12;",
    *(f"vset4.{t}.{t}.{c} %r13, %r10, %r11, %r12;" for t in ("u32", "s32") for c in ("eq", "ne", "lt", "le", "gt",
                                                                                         "ge")),
    *(f"vset2.{t}.{t}.{c} %r13, %r10, %r11, %r12;" for t in ("u32", "s32") for c in ("lt", "ge", "ne")),
    "vset4.s32.u32.gt.add %r13, %r10, %r11, %r12;", "vset2.u32.u32.eq.add %r13.h1, %r10, %r11, %r12;",
    "vset4.u32.u32.le %r13.b30, %r10.b5476, %r11, %r12;",
]


@pytest.mark.parametrize("form", FORMS)
def test_simd_video_against_pseudocode(form: str) -> None:
    x = _words(sum(map(ord, form)))
    if form.split(".")[0] in ("vadd2", "vadd4") and "add" not in form.split()[0]:
        x[::7, 1] = x[::7, 0]  # some equal operands for the comparisons and sums
    x[::5, 1] = x[::5, 0]
    body = ("ld.global.u32 %r10, [%rd4];\nld.global.u32 %r11, [%rd4+4];\nld.global.u32 %r12, [%rd4+8];\n"
            f"{form}\nst.global.u32 [%rd6], %r13;")
    got = run_body(body, x, 1)[:, 0]
    want = np.array([video_reference(form, int(a), int(b), int(c)) for a, b, c in x], np.uint32)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{form}: {bad.size} lanes differ, first a,b,c={[hex(v) for v in x[bad[0]]]} " \
                          f"got {got[bad[0]]:#x} want {want[bad[0]]:#x}"


def test_selector_operands_parse() -> None:
    assert parse_operand("%r2.b3210") == Sel(Reg("%r2"), "b3210")
    assert parse_operand("%r7.h1") == Sel(Reg("%r7"), "h1")
    assert parse_operand("%tid.x") == Reg("%tid.x")


@pytest.mark.parametrize("form, message", [
    ("vadd4.u32.u32.u32 %r13, %r10.h10, %r11, %r12;", "selector .h10"),
    ("vadd2.u32.u32.u32 %r13, %r10.h4, %r11, %r12;", "malformed register"),
    ("vadd4.u32.u32.u32 %r13, %r10.b012, %r11, %r12;", "selector .b012"),
    ("vadd4.u32.u32.u32 %r13.b44, %r10, %r11, %r12;", "destination mask .b44"),
    ("vadd4.u32.u32.u32.sat.add %r13, %r10, %r11, %r12;", ".sat together with .add"),
    ("vset4.u32.u32 %r13, %r10, %r11, %r12;", "SIMD video forms"),
    ("vadd4.u32.u32.u32 %r13, %r10, %r11;", "with 3 operands"),
])
def test_bad_forms_are_one_line_errors(form: str, message: str) -> None:
    body = f"ld.global.u32 %r10, [%rd4];\n{form}\nst.global.u32 [%rd6], %r13;"
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_body(body, np.zeros((32, 1), np.uint32), 1)
    assert "\n" not in str(info.value)


INTRINSICS = {  # CUDA's SIMD intrinsics as the CUDA Math API documents them, per byte / half-word
    "__vabsdiffu4": lambda a, b: np.abs(a.view(np.uint8).astype(int) - b.view(np.uint8)).astype(np.uint8),
    "__vabs4": lambda a, b: np.abs(a.view(np.int8).astype(int)).astype(np.uint8),
    "__vabsss4": lambda a, b: np.minimum(np.abs(a.view(np.int8).astype(int)), 127).astype(np.uint8),
    "__vsads4": lambda a, b: np.abs(a.view(np.int8).astype(int) - b.view(np.int8)).reshape(-1, 4).sum(1),
    "__vsadu2": lambda a, b: np.abs(a.view(np.uint16).astype(int) - b.view(np.uint16)).reshape(-1, 2).sum(1),
}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_cuda_simd_intrinsics(tmp_path) -> None:
    src = "\n".join(f'extern "C" __global__ void k{f}(const unsigned* x, const unsigned* z, unsigned* y) '
                    f'{{ int i = threadIdx.x; y[i] = {f}(x[i]{", z[i]" if "abs4" not in f and "ss4" not in f else ""});'
                    f' }}' for f in INTRINSICS)
    (tmp_path / "v.cu").write_text(src + "\n")
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", str(tmp_path / "v.cu"), "-o", str(tmp_path / "v.ptx")],
                   check=True, capture_output=True)
    ptx = (tmp_path / "v.ptx").read_text()
    assert "vabsdiff4" in ptx and "vabsdiff2" in ptx
    x = _words(5, 128)
    a, b = x[:, 0].copy(), x[:, 1].copy()
    for f, meaning in INTRINSICS.items():
        y = np.zeros(128, np.uint32)
        got = emulate(ptx, f"k{f}", (1, 1, 1), (128, 1, 1), {f"k{f}_param_0": a, f"k{f}_param_1": b,
                                                               f"k{f}_param_2": y}, "hopper")[f"k{f}_param_2"]
        want = meaning(a, b)
        want = want.view(np.uint32) if want.dtype == np.uint8 else want.astype(np.uint32)
        np.testing.assert_array_equal(got, want, err_msg=f)


# (form, a, b, c, d) worked by hand: each names one rule of the PTX ISA's pseudocode or of ptxas's expansion
SCALAR_CASES = [
    ("vadd.u32.u32.u32.sat %r13, %r10, %r11;", 0xFFFFFFFF, 1, 0, 0),  # ptxas clamps a u32 sum below only
    ("vadd.s32.s32.s32 %r13, %r10, %r11;", 0x7FFFFFFF, 1, 0, 0x80000000),  # no .sat: the low 32 bits
    ("vadd.s32.s32.s32.sat %r13, %r10, %r11;", 0x7FFFFFFF, 1, 0, 0x7FFFFFFF),
    ("vadd.s32.u32.s32.sat %r13, %r10, %r11;", 0xFFFFFFFF, 0xFFFFFFFF, 0, 0x7FFFFFFF),  # 2^32 - 2: 33-bit exact
    ("vsub.u32.u32.u32.sat %r13, %r10, %r11;", 1, 2, 0, 0),
    ("vadd.s32.u32.s32.sat %r13, %r10.b0, %r11.h1;", 0xFF, 0x80000000, 0, 0xFFFF80FF),  # 255 + -32768
    ("vabsdiff.s32.s32.s32.sat %r13.h0, %r10.b0, %r11.b2, %r12;", 0x80, 0x7F0000, 0xAAAABBBB, 0xAAAA00FF),
    ("vabsdiff.s32.s32.s32.sat %r13.b1, %r10.b0, %r11.b2, %r12;", 0x80, 0x7F0000, 0xAAAABBBB, 0xAAAA7FBB),
    ("vmin.s32.s32.s32.sat.max %r13, %r10, %r11, %r12;", 5, 0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFE),  # max(-3, -2)
    ("vsub.s32.s32.s32.sat.add %r13, %r10, %r11, %r12;", 0x80000000, 1, 5, 0x80000005),  # clamped, then + c
    ("vshl.u32.u32.u32.clamp %r13, %r10, %r11;", 1, 40, 0, 0),  # shift 32
    ("vshl.u32.u32.u32.wrap %r13, %r10, %r11;", 1, 40, 0, 0x100),  # shift 40 mod 32
    ("vshl.s32.s32.u32.sat.clamp %r13, %r10, %r11;", 1, 31, 0, 0x7FFFFFFF),
    ("vshr.s32.s32.u32.clamp %r13, %r10, %r11;", 0x80000000, 40, 0, 0xFFFFFFFF),  # arithmetic
    ("vshr.u32.u32.u32.wrap %r13, %r10.h1, %r11.b3;", 0x80000000, 0x21000000, 0, 0x4000),  # 0x8000 >> 33 mod 32
    ("vset.s32.u32.lt %r13, %r10, %r11;", 0xFFFFFFFF, 0, 0, 1),
    ("vset.u32.u32.ne %r13.b1, %r10.b1, %r11.b1, %r12;", 0x100, 0x200, 0xFFFFFFFF, 0xFFFF01FF),
    ("vset.s32.s32.ge.add %r13, %r10, %r11, %r12;", 3, 3, 41, 42),
    ("vmad.u32.u32.u32 %r13, %r10, %r11, %r12;", 0xFFFFFFFF, 0xFFFFFFFF, 1, 2),
    ("vmad.s32.s32.s32.sat %r13, %r10, %r11, %r12;", 0x7FFFFFFF, 2, 0, 0x7FFFFFFF),
    ("vmad.u32.u32.u32.po.shr7 %r13, %r10, %r11, %r12;", 3, 5, 120, 1),
    ("vmad.s32.u32.u32 %r13, -%r10, %r11, %r12;", 3, 5, 10, 0xFFFFFFFB),
    ("vmad.s32.u32.u32.sat.shr7 %r13, %r10, %r11, -%r12;", 256, 1, 128, 1),
    ("vmad.s32.s32.u32.shr15 %r13, %r10.h0, %r11.h1, %r12;", 0x8000, 0xFFFF0000, 0, 0xFFFF0001),
    ("vmad.s32.s32.s32 %r13, -%r10, -%r11, %r12;", 0xFFFFFFFF, 7, 0, 0xFFFFFFF9),  # the negations cancel
]


@pytest.mark.parametrize("form,a,b,c,d", SCALAR_CASES)
def test_scalar_video_worked_cases(form: str, a: int, b: int, c: int, d: int) -> None:
    x = np.tile(np.array([[a, b, c]], np.uint32), (32, 1))
    body = ("ld.global.u32 %r10, [%rd4];\nld.global.u32 %r11, [%rd4+4];\nld.global.u32 %r12, [%rd4+8];\n"
            f"{form}\nst.global.u32 [%rd6], %r13;")
    got = run_body(body, x, 1)[:, 0]
    assert (got == d).all(), f"{form}: got {got[0]:#x}, want {d:#x}"


@pytest.mark.parametrize("form, message", [
    ("vshl.u32.u32.u32 %r13, %r10, %r11;", "needs .clamp or .wrap"),
    ("vadd.u32.u32.u32 %r13, %r10.b5, %r11;", "selector .b5"),
    ("vmad.u32.u32.u32.po %r13, -%r10, %r11, %r12;", ".po with a negated operand"),
    ("vmad.s32.s32.s32 %r13, -%r10, %r11, -%r12;", "the product and c both negated"),
    ("vadd.u32.u32.u32 %r13, -%r10, %r11;", "negated operands belong to vmad"),
    ("vadd.u32.u32.u32.add %r13.b0, %r10, %r11, %r12;", "a destination selector and a secondary operation"),
])
def test_bad_scalar_forms_are_one_line_errors(form: str, message: str) -> None:
    body = f"ld.global.u32 %r10, [%rd4];\nld.global.u32 %r11, [%rd4+4];\nld.global.u32 %r12, [%rd4+8];\n{form}\n" \
           "st.global.u32 [%rd6], %r13;"
    with pytest.raises(EmulationError, match=re.escape(message)) as info:
        run_body(body, np.zeros((32, 3), np.uint32), 1)
    assert "\n" not in str(info.value)


def _ptxas_and_emulator(forms: list[str], tmp_path, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The forms (32 per kernel, one result each per thread) on n input triples: (inputs, ptxas's sm_90a code run
    by tests/ptx/emulate/sass_lanes.py, the emulator on nvcc's PTX), results (n, forms)."""
    ptx, sass = build(source(forms), tmp_path)
    x = _words(11, n)
    x[::7, 1] = np.arange(len(x[::7])) % 40  # shift amounts around 32
    gpu, emu = np.zeros((n, len(forms)), np.uint32), np.zeros((n, len(forms)), np.uint32)
    for k in range(0, len(forms), 32):
        name, width = f"k{k // 32}", len(forms[k:k + 32])
        gpu[:, k:k + width] = run_blocks(sass[name], x, n, 32)[:, :width]
        args = {f"{name}_param_0": x, f"{name}_param_1": np.zeros((n, 32), np.uint32), f"{name}_param_2": n}
        emu[:, k:k + width] = np.asarray(emulate(ptx, name, (n // 32, 1, 1), (32, 1, 1), args)[f"{name}_param_1"]
                                         ).reshape(n, 32)[:, :width]
    return x, gpu, emu


needs_sass = pytest.mark.skipif(shutil.which("nvcc") is None or find_tool("cuobjdump") is None,
                                reason="needs nvcc and cuobjdump")


@needs_sass
@pytest.mark.slow
def test_sass_lanes_runs_plain_integer_code_as_the_emulator_does(tmp_path) -> None:
    """The SASS interpreter the scalar-form test trusts, on ptxas's code for the instructions its expansions use
    (64-bit adds with carries, signed and unsigned 64-bit compares, min / max, funnel shifts with clamp, byte
    permutes with sign replication, wide multiplies): the same words as the emulator on nvcc's PTX."""
    body = ["long long sa = (int)a, sb = (int)b; unsigned long long ua = a, ub = b; unsigned v;",
            "r = (unsigned)(sa + sb > (long long)(int)c) | (unsigned)((ua + ub < (unsigned long long)c) << 1);",
            "r = (unsigned)((sa - sb) >> 32);",
            "r = (unsigned)((((long long)(int)a << 20) + (long long)(int)b * (int)c) >> 13);",
            "r = __byte_perm(a, b, c & 0xffff);",
            'asm("shf.l.clamp.b32 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(b), "r"(c & 63)); r = v;',
            'asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(b), "r"(c & 63)); r = v;',
            "r = (unsigned)max(sa * 3, (long long)(int)c - sb);",
            "r = (unsigned)(min(ua << 3, (unsigned long long)c + ub) >> 32);",
            "r = (int)a < 0 ? -(int)b : (int)b + 7;",
            "r = (unsigned)(((long long)(int)a * (long long)(int)b) >> 16);",
            "r = (unsigned)((ua * ub) >> 32) + (sa < sb ? 5u : 9u);"]
    src = ('extern "C" __global__ void k(const unsigned* x, unsigned* out, int n) { '
           "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; "
           "unsigned a = x[3 * i], b = x[3 * i + 1], c = x[3 * i + 2], r; " + body[0] + " "
           + " ".join(f"{{ {line} out[16 * i + {j}] = r; }}" for j, line in enumerate(body[1:])) + " }\n")
    ptx, sass = build(src, tmp_path)
    n = 256
    x = _words(12, n)
    got = run_blocks(sass["k"], x, n, 16)
    args = {"k_param_0": x, "k_param_1": np.zeros(n * 16, np.uint32), "k_param_2": n}
    want = emulate(ptx, "k", (n // 32, 1, 1), (32, 1, 1), args)["k_param_1"]
    np.testing.assert_array_equal(got[:, :len(body) - 1], np.asarray(want).reshape(n, 16)[:, :len(body) - 1])


@needs_sass
@pytest.mark.slow  # the default run has the H100's word on 32 of the forms: the corpus entry cu_video_scalar
@pytest.mark.parametrize("every", [pytest.param(16, id="every-16th-form"), pytest.param(1, id="all-forms")])
def test_scalar_forms_are_ptxas_expansion(tmp_path, every: int) -> None:
    """sm_90 has no video unit: ptxas expands each scalar video instruction into integer code, and that code is
    what the GPU runs. The emulator gives its words on the forms of tools/corpus/video.py (every 16th, 74 forms on
    128 input triples, or all 1,184 on 1,024), ptxas 13.0's code run by sass_lanes.py."""
    forms = scalar_forms()[::every]
    x, gpu, emu = _ptxas_and_emulator(forms, tmp_path, 128 if every > 1 else 1024)
    bad = [(f, int((gpu[:, j] != emu[:, j]).sum())) for j, f in enumerate(forms) if (gpu[:, j] != emu[:, j]).any()]
    assert len(forms) == (74 if every > 1 else 1184) and not bad, bad[:5]
