"""CUDA's math library as nvcc 13.0 compiles it for sm_90 (libdevice's instruction sequences: range reductions,
polynomials, fma refinements, integer tricks), run in the emulator and held to implementations written apart from
it: the correctly rounded functions (IEEE division, square root, remainders, rounding to integers, the directed
roundings) bit for bit against numpy and exact rationals, the others within the CUDA Math API's documented
maximum ulp error against numpy's float64 libm."""

from __future__ import annotations

import math
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from tests.ptx.emulate.kernels import round_f32

from tcforge.ptx.emulate import emulate

pytestmark = pytest.mark.xdist_group("nvcc_libdevice")

UNARY_F32 = ["sqrtf", "__fsqrt_rn", "__fsqrt_rz", "__fsqrt_ru", "__fsqrt_rd", "__frcp_rn", "__frcp_rz", "ceilf",
             "floorf", "truncf", "roundf", "rintf", "sinf", "cosf", "tanf", "expf", "exp2f", "logf", "log2f", "log10f",
             "erff", "atanf", "sinhf", "log1pf", "expm1f", "cbrtf", "rcbrtf", "erfinvf",
             "__sinf", "__cosf", "__logf", "__log2f", "__log10f"]  # the last five: MUFU.SIN / COS / LG2 alone
BINARY_F32 = ["__fdiv_rn", "__fdiv_rz", "__fdiv_ru", "__fdiv_rd", "fmodf", "remainderf", "fdimf", "copysignf",
              "nextafterf", "atan2f", "powf", "hypotf"]
UNARY_F64 = ["sqrt", "__drcp_rn", "__dsqrt_rz", "rint", "floor", "round", "sin", "cos", "exp", "exp2", "expm1", "sinh",
             "erf", "tan", "atan", "log", "log2", "log10", "log1p", "tanh", "cosh", "asinh", "rsqrt"]
BINARY_F64 = ["__ddiv_rn", "__ddiv_ru", "fmod", "remainder", "fdim", "atan2", "pow", "hypot"]

# CUDA Math API, "Mathematical functions" appendix: maximum ulp error over the full range
ULP_BOUND = {"sinf": 2, "cosf": 2, "tanf": 4, "expf": 2, "exp2f": 2, "logf": 1, "log2f": 1, "log10f": 2, "erff": 2,
             "atanf": 2, "sinhf": 3, "log1pf": 1, "expm1f": 1, "atan2f": 3, "powf": 4, "hypotf": 3, "sin": 2, "cos": 2,
             "exp": 1, "exp2": 1, "expm1": 1, "sinh": 2, "erf": 2, "atan2": 2, "tan": 2, "atan": 2, "log": 1,
             "log2": 1, "log10": 1, "log1p": 1, "tanh": 2, "cosh": 1, "asinh": 3, "rsqrt": 1, "pow": 2, "hypot": 2,
             "cbrtf": 1, "rcbrtf": 1, "erfinvf": 2}
# the intrinsics: the largest absolute error on their documented interval, the ulp error outside it (None: none given)
INTRINSIC_BOUND = {"__sinf": ((-np.pi, np.pi), 2.0**-21.41, None), "__cosf": ((-np.pi, np.pi), 2.0**-21.19, None),
                   "__logf": ((0.5, 2.0), 2.0**-21.41, 3), "__log2f": ((0.5, 2.0), 2.0**-22, 2),
                   "__log10f": ((0.5, 2.0), 2.0**-24, 3)}
REFERENCE = {"sinf": np.sin, "cosf": np.cos, "tanf": np.tan, "expf": np.exp, "exp2f": np.exp2, "logf": np.log,
             "log2f": np.log2, "log10f": np.log10, "erff": np.vectorize(math.erf), "atanf": np.arctan, "sinhf": np.sinh,
             "log1pf": np.log1p, "expm1f": np.expm1, "atan2f": np.arctan2, "powf": np.power, "hypotf": np.hypot,
             "sin": np.sin, "cos": np.cos, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "sinh": np.sinh,
             "erf": np.vectorize(math.erf), "atan2": np.arctan2, "tan": np.tan, "atan": np.arctan, "log": np.log,
             "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "tanh": np.tanh, "cosh": np.cosh,
             "asinh": np.arcsinh, "rsqrt": lambda v: 1 / np.sqrt(v), "pow": np.power, "hypot": np.hypot,
             "cbrtf": np.cbrt, "rcbrtf": lambda v: 1 / np.cbrt(v), "erfinvf": lambda v: _erfinv(v),
             "__sinf": np.sin, "__cosf": np.cos, "__logf": np.log, "__log2f": np.log2, "__log10f": np.log10}
N = 256


def _source() -> str:
    lines = []
    for names, t, two in ((UNARY_F32, "float", False), (BINARY_F32, "float", True), (UNARY_F64, "double", False),
                          (BINARY_F64, "double", True)):
        for f in names:
            args = "x[i], z[i]" if two else "x[i]"
            lines.append(f'extern "C" __global__ void k{f}(const {t}* x, const {t}* z, {t}* y) '
                         f'{{ int i = threadIdx.x; y[i] = {f}({args}); }}')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def ptx(tmp_path_factory) -> str:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")
    d = tmp_path_factory.mktemp("libdevice")
    (d / "m.cu").write_text(_source())
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", str(d / "m.cu"), "-o", str(d / "m.ptx")], check=True,
                   capture_output=True)
    return (d / "m.ptx").read_text()


def _inputs(dt, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    big = 10.0 ** rng.uniform(-30 if dt == np.float32 else -300, 30 if dt == np.float32 else 300, N // 4)
    signs = rng.choice([-1, 1], N // 4)
    x = np.concatenate([rng.standard_normal(N // 2) * 4, rng.uniform(-90, 90, N // 4), big * signs])
    z = np.concatenate([rng.standard_normal(N // 2) * 3, big[::-1], rng.uniform(-90, 90, N // 4)])
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, 2.5]
    return x.astype(dt), z.astype(dt)


def _run(ptx: str, f: str, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    return emulate(ptx, f"k{f}", (1, 1, 1), (N, 1, 1), {f"k{f}_param_0": x, f"k{f}_param_1": z,
                                                         f"k{f}_param_2": np.zeros_like(x)}, "hopper")[f"k{f}_param_2"]


def _directed(x: np.ndarray, z: np.ndarray, f: str) -> np.ndarray:
    """f32 result of sqrt / division / reciprocal rounded as the name's suffix says, from exact rationals."""
    mode = f[-2:]
    out = []
    for a, b in zip(x.astype(np.float64), z.astype(np.float64), strict=True):
        if f.startswith("__fsqrt"):
            if not np.isfinite(a) or a <= 0:
                out.append(np.float32(np.sqrt(np.float32(a))).view(np.uint32))
                continue
            q = Fraction(a)  # sqrt: bracket by the exact square of the f32 candidates
            r = np.float32(math.sqrt(a))
            cands = [np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf))]
            below = max(c for c in cands if Fraction(float(c)) ** 2 <= q)
            above = min(c for c in cands if Fraction(float(c)) ** 2 >= q)
            pick = {"rz": below, "rd": below, "ru": above}.get(mode)
            if pick is None:  # rn: the nearer one (no tie: a square root of an f32 is never a midpoint)
                mid = (Fraction(float(below)) + Fraction(float(above))) / 2
                pick = below if mid ** 2 > q else above
            out.append(np.float32(pick).view(np.uint32))
            continue
        if f.startswith("__frcp"):
            a, b = 1.0, a
        if not (np.isfinite(a) and np.isfinite(b)) or b == 0 or a == 0:
            with np.errstate(all="ignore"):
                out.append(np.float32(np.float32(a) / np.float32(b)).view(np.uint32))
            continue
        out.append(round_f32(Fraction(a) / Fraction(b), {"ru": "rp", "rd": "rm"}.get(mode, mode)))
    return np.array(out, np.uint32)


def _erfinv(y: np.ndarray) -> np.ndarray:
    """erf's inverse in float64 by Newton's method from a bisection's start (NaN outside [-1, 1])."""
    out = []
    for v in np.asarray(y, np.float64):
        if not -1 < v < 1:
            out.append(math.copysign(math.inf, v) if abs(v) == 1 else math.nan)
            continue
        lo, hi = -6.0, 6.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
        x = (lo + hi) / 2
        for _ in range(3):
            x -= (math.erf(x) - v) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        out.append(x)
    return np.array(out)


def _fdim(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a > b, a - b, 0)).astype(a.dtype)


def _remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE remainder (exact, so the float64 result is the f32 one too); NaN where it is invalid."""
    out = [math.remainder(float(p), float(q)) if np.isfinite(p) and q != 0 and not np.isnan(q) else math.nan
           for p, q in zip(a, b, strict=True)]
    return np.array(out, a.dtype)


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return (got == want) | (np.isnan(got) & np.isnan(want))


@pytest.mark.parametrize("f", [f for f in UNARY_F32 + BINARY_F32 if f not in ULP_BOUND and f not in INTRINSIC_BOUND])
def test_correctly_rounded_f32(ptx: str, f: str) -> None:
    x, z = _inputs(np.float32, sum(map(ord, f)))
    if f.startswith(("__fsqrt", "sqrt")):
        x = np.abs(x)
    got = _run(ptx, f, x, z)
    with np.errstate(all="ignore"):
        if f.startswith(("__fsqrt_r", "__fdiv_r", "__frcp_r")) and f not in ("__fsqrt_rn", "__fdiv_rn", "__frcp_rn"):
            want = _directed(x, z, f).view(np.float32)
        else:
            want = {"sqrtf": np.sqrt, "__fsqrt_rn": np.sqrt, "__frcp_rn": lambda a: np.float32(1) / a,
                    "ceilf": np.ceil, "floorf": np.floor, "truncf": np.trunc, "rintf": np.rint,
                    "roundf": lambda a: np.copysign(np.floor(np.abs(a) + np.float32(0.5)), a),
                    "__fdiv_rn": lambda a, b: a / b, "fdimf": _fdim,
                    "fmodf": np.fmod, "copysignf": np.copysign, "nextafterf": np.nextafter,
                    "remainderf": _remainder,
                    }[f](*((x, z) if f in BINARY_F32 else (x,)))
    want = np.asarray(want, np.float32)
    if f == "roundf":  # 0.5 + (2^23 - 1 + 0.5) rounds up in f32 before floor; CUDA's roundf is exact
        want = np.where(np.abs(x) >= 2**23, x, want)
    bad = np.flatnonzero(~_same(got, want))
    assert bad.size == 0, f"{f}: {bad.size} differ, first x={x[bad[0]]!r} z={z[bad[0]]!r}: {got[bad[0]]!r} " \
                          f"want {want[bad[0]]!r}"


@pytest.mark.parametrize("f", [f for f in UNARY_F64 + BINARY_F64 if f not in ULP_BOUND])
def test_correctly_rounded_f64(ptx: str, f: str) -> None:
    x, z = _inputs(np.float64, sum(map(ord, f)))
    if f.startswith(("__dsqrt", "sqrt")):
        x = np.abs(x)
    got = _run(ptx, f, x, z)
    with np.errstate(all="ignore"):
        if f in ("__ddiv_ru", "__dsqrt_rz"):
            want = []
            for a, b in zip(x, z, strict=True):
                if not (np.isfinite(a) and np.isfinite(b)) or b == 0 or a == 0:
                    want.append(np.sqrt(a) if f == "__dsqrt_rz" else a / b)
                    continue
                if f == "__ddiv_ru":
                    q = Fraction(a) / Fraction(b)
                    r = a / b
                    want.append(r if Fraction(r) >= q else np.nextafter(r, np.inf))
                else:
                    r = np.sqrt(a)
                    want.append(r if Fraction(r) ** 2 <= Fraction(a) else np.nextafter(r, 0.0))
            want = np.array(want)
        else:
            want = {"sqrt": np.sqrt, "__drcp_rn": lambda a: 1.0 / a, "rint": np.rint, "floor": np.floor,
                    "round": lambda a: np.where(np.abs(a) >= 2**52, a, np.copysign(np.floor(np.abs(a) + 0.5), a)),
                    "__ddiv_rn": lambda a, b: a / b, "fmod": np.fmod,
                    "fdim": _fdim,
                    "remainder": _remainder,
                    }[f](*((x, z) if f in BINARY_F64 else (x,)))
    bad = np.flatnonzero(~_same(got, np.asarray(want)))
    assert bad.size == 0, f"{f}: {bad.size} differ, first x={x[bad[0]]!r} z={z[bad[0]]!r}: {got[bad[0]]!r}"


@pytest.mark.parametrize("f", sorted(ULP_BOUND))
def test_within_documented_ulps(ptx: str, f: str) -> None:
    dt = np.float32 if f in UNARY_F32 + BINARY_F32 else np.float64
    x, z = _inputs(dt, sum(map(ord, f)))
    if f in ("powf", "pow"):
        x, z = np.abs(x), z / 8
    if f in ("log", "log2", "log10", "rsqrt"):
        x = np.abs(x)
    if f == "erfinvf":
        x = np.concatenate([x[:8], np.tanh(x[8:])]).astype(dt)  # mostly inside (-1, 1), the specials kept
    got = _run(ptx, f, x, z).astype(np.float64)
    with np.errstate(all="ignore"):
        want = REFERENCE[f](*((x.astype(np.float64), z.astype(np.float64)) if f in BINARY_F32 + BINARY_F64
                              else (x.astype(np.float64),)))
    fin = np.isfinite(want) & (np.abs(want) < np.finfo(dt).max)
    spacing = np.spacing(np.abs(want[fin]).astype(dt)).astype(np.float64)
    spacing = np.maximum(spacing, np.finfo(dt).smallest_subnormal)
    err = np.abs(got[fin] - want[fin]) / spacing
    slack = 0.5 if dt == np.float32 else 1.0  # the float64 reference's own error, seen at f64 precision
    assert err.max() <= ULP_BOUND[f] + slack, f"{f}: {err.max():.2f} ulp at x={x[fin][np.argmax(err)]!r}"
    assert (np.isnan(got[np.isnan(want)])).all()


@pytest.mark.parametrize("f", sorted(INTRINSIC_BOUND))
def test_intrinsics_within_documented_bounds(ptx: str, f: str) -> None:
    """The fast intrinsics, one MUFU op each (sin / cos / lg2 on the shipped H100 tables) with ptxas's scaling: the
    CUDA Math API's absolute error on the documented interval, its ulp error outside."""
    (lo, hi), abs_bound, ulp_bound = INTRINSIC_BOUND[f]
    x, _ = _inputs(np.float32, sum(map(ord, f)))
    rng = np.random.default_rng(sum(map(ord, f)))
    if f.startswith(("__log",)):
        x = np.abs(x)
    x[8:72] = rng.uniform(lo, hi, 64).astype(np.float32)
    got = _run(ptx, f, x, np.zeros_like(x)).astype(np.float64)
    with np.errstate(all="ignore"):
        want = REFERENCE[f](x.astype(np.float64))
    inside = (x >= lo) & (x <= hi)
    assert inside.sum() >= 64 and np.abs(got[inside] - want[inside]).max() <= abs_bound, f
    fin = np.isfinite(want) & ~inside & np.isfinite(x) & (x != 0)
    if ulp_bound is not None:
        spacing = np.maximum(np.spacing(np.abs(want[fin]).astype(np.float32)).astype(np.float64), 2.0**-149)
        err = np.abs(got[fin] - want[fin]) / spacing
        assert err.max() <= ulp_bound + 0.5, f"{f}: {err.max():.2f} ulp at x={x[fin][np.argmax(err)]!r}"
    assert (np.isnan(got[np.isnan(want)])).all()
