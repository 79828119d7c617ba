"""Issue 40's GPU data: the emulator (numerics 'hopper') against outputs recorded on a Hopper GPU, 0 differing bits.

The corpus (tests/data/emulate/corpus.npz, made by `python3 -m tools.emulate_corpus generate` on the device): kernels
written by Triton and nvcc for other purposes, run with fresh random inputs (the f32-accumulating mma.sync forms,
div.full.f32 and ex2.approx.f32 included). The op families (tests/data/emulate/families.npz, made once on the device
by `python3 -m tools.emulate_families generate`): one generated kernel per family, random and edge operands, a fresh
seed; TCFORGE_FAMILIES_NPZ names another file to check. The H100 tensor-core truth's wgmma kernels
(tools/truth/wgmma_kernels.cu, compiled to PTX here) on the truth's inputs. Also the emulator fixes the corpus called
for: sad, copysign, redux.sync, module-scope .global initializers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from tests.marks import thinned
from tests.ptx.emulate.kernels import (
    gluon_conv_reference,
    im2col_boxes,
    round_f32,
    run_body,
    samples_module,
    sp_dense,
    sp_dense4,
    swizzle_rows,
    tma_box_reference,
)
from tools import emulate_corpus as ec
from tools import emulate_families as ef
from tools.corpus.asyncproxy import GLUON_IM2COL, TMA_BOXES, TMA_IM2COL
from tools.corpus.entries import AWAITING_GPU, ENTRIES
from tools.corpus.mma import (
    F64_M16_K,
    INT_BITS,
    INT_MMA_ENTRIES,
    M884_FORMS,
    SP_FORMS,
    _special_f16_tiles,
    a_fragments,
    b_fragments,
    c32_fragments,
    c_fragments,
    f64_m16_tiles,
    f64_m16_words,
    int_mma_tiles,
    int_mma_words,
    m884_name,
    m884_tiles,
    m884_words,
    sp_tiles,
    sp_types,
    sp_words,
)
from tools.corpus.modules import MODULES
from tools.corpus.values import _wg_codes
from tools.corpus.wgmma import (
    WG_FORMS,
    WG_SP_FORMS,
    wg_expected,
    wg_fragments,
    wg_image,
    wg_meta,
    wg_name,
    wg_tiles,
)

from tcforge.gemm import ladder
from tcforge.numerics.tensorcore import FORM_NAMES as TC_FORM_NAMES
from tcforge.numerics.tensorcore import FORMATS, get_form, tc_mma
from tcforge.ptx.emulate import EmulationError, emulate
from tcforge.ptx.emulate.ops_wgmma import TF32_FORM

_ITEMS = ec.corpus_entries(ec.CORPUS)[1] if ec.CORPUS.exists() else []
_CORPUS_ABSENT = pytest.mark.skipif(not _ITEMS, reason=f"{ec.CORPUS.name} not generated: on a Hopper GPU run "
                                                       "`python3 -m tools.emulate_corpus generate --out "
                                                       "tests/data/emulate/corpus.npz`")
FAMILIES_NPZ = Path(os.environ.get("TCFORGE_FAMILIES_NPZ")
                    or Path(__file__).resolve().parents[2] / "data" / "emulate" / "families.npz")
_FAMILIES_ABSENT = pytest.mark.skipif(not FAMILIES_NPZ.is_file(),
                                      reason=f"{FAMILIES_NPZ.name} not generated: on a Hopper GPU run "
                                             "`PYTHONPATH=src:. python3 -m tools.emulate_families generate "
                                             "--out tests/data/emulate/families.npz`")

NVCC_SAMPLES = pytest.mark.xdist_group("nvcc_samples")  # with test_corpus_references: one worker builds them


# ---- the corpus ------------------------------------------------------------------------------------------------------

def _corpus_params() -> list:
    slow = {e.name for e in ENTRIES if e.slow}  # the tool's current flags (the stored meta has the old ones)
    out = [pytest.param(it, id=it["name"], marks=[pytest.mark.slow] if it["name"] in slow else []) for it in _ITEMS]
    return out or [pytest.param(None, id="absent", marks=_CORPUS_ABSENT)]


def _entries(prefix: str, every: int = 1) -> list:
    """The corpus's entries named PREFIX... (all but every EVERY-th marked slow); test_corpus_shape holds the corpus
    to every entry the tool defines."""
    items = [it for it in _ITEMS if it["name"].startswith(prefix)]
    return ([pytest.param(it, id=it["name"], marks=[] if i % every == 0 else [pytest.mark.slow])
             for i, it in enumerate(items)]
            or [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=f"no {prefix}* entries in the corpus"))])


@_CORPUS_ABSENT
def test_corpus_shape() -> None:
    meta = ec.corpus_entries(ec.CORPUS)[0]
    assert "H100" in meta["gpu"] or "H200" in meta["gpu"], meta["gpu"]
    assert len(_ITEMS) >= 24
    assert {it["meta"]["source"] for it in _ITEMS} == {"nvcc", "triton"}
    # the corpus holds GPU data for every entry the tool defines but those it lists as awaiting the next device run
    # (their checks run on the emulator's outputs meanwhile: the *_emulated_* tests below)
    assert {e.name for e in ENTRIES} - AWAITING_GPU == {it["name"] for it in _ITEMS}


@pytest.mark.parametrize("item", _entries("mma_int_"))
def test_integer_mma_on_the_gpu_is_the_exact_sum_wrapped_or_clamped_once(item) -> None:
    """Apart from the emulator: the GPU's integer D is C + A·B exactly, wrapped, or clamped once with .satfinite —
    also where a running sum over k leaves the s32 range and the exact sum comes back into it."""
    _, m, k, ta, tb, sat, op = INT_MMA_ENTRIES[item["name"]]
    a, b, c = int_mma_tiles(np.random.default_rng(item["meta"]["seed"]), 16, k, ta, tb)
    words = int_mma_words(a, b, c, bits=INT_BITS[ta])
    for name, w in zip("abc", words, strict=True):  # the tiles are the ones the GPU was given
        np.testing.assert_array_equal(w, item["buffers"][name])
    if op == "xor":  # b1: the popcount of A's row XOR B's column, a sum of a(1 - b) + (1 - a)b terms
        terms = a[:, :, :, None] * (1 - b[:, None, :, :]) + (1 - a[:, :, :, None]) * b[:, None, :, :]
    else:  # (warp, row, k, column)
        terms = a[:, :, :, None] * b[:, None, :, :]
    exact = c + terms.sum(2)
    lo, hi = -(2**31), 2**31 - 1
    d = np.clip(exact, lo, hi) if sat else (exact - lo) % 2**32 + lo
    if m == 8:  # an m8n8 D is rows 0-7 in the first 2 words; the others keep C
        d[:, 8:] = c[:, 8:]
    np.testing.assert_array_equal(c32_fragments(d.astype(np.int32)), item["gpu"]["d"])
    outside = ((exact < lo) | (exact > hi))[:, :m]
    running = c[:, :, None, :] + np.cumsum(terms, axis=2)
    crossed = ((running < lo) | (running > hi)).any(2)[:, :m] & ~outside
    assert op or outside.sum() > 50  # the data reaches the wrap / the clamp (b1 sums of at most K stay far inside)
    if sat and ta + tb != "u8u8":  # all-positive products never come back: there a running sum that leaves stays out
        assert crossed.sum() > 20


@pytest.mark.parametrize("item", _corpus_params())
def test_emulator_matches_gpu_bits(item) -> None:
    bits, _ = ec.check_entry(item)
    assert bits == 0


@pytest.mark.parametrize("item", _entries("wgmma_"))
def test_wgmma_forms_on_the_gpu_are_the_tensorcore_model(item) -> None:
    """Apart from the emulator: tiles placed by the PTX ISA's canonical layouts (registers, 64- / 128-byte swizzles,
    no swizzle), D from numerics.tensorcore step by step (imm-scale -1 as sign flips, scale-d 0 as C = +0); integer
    forms: each step's exact sum, wrapped or clamped with .satfinite. Sparse forms: wgmma_sparse_expected."""
    form = next(f for f in (*WG_FORMS, *WG_SP_FORMS) if item["name"] == wg_name(f))
    rng = np.random.default_rng(item["meta"]["seed"])
    a, b, c = wg_tiles(rng, form)
    np.testing.assert_array_equal(wg_image(form, a, b).reshape(-1), item["buffers"]["img"].reshape(-1))
    if form.sparse:
        meta = wg_meta(rng, form)
        np.testing.assert_array_equal(meta.reshape(-1), item["buffers"]["meta"].reshape(-1))
        want = wg_fragments(wgmma_sparse_expected(form, a, b, c, meta), form.acc)
    else:
        want = wg_fragments(wg_expected(form, a, b, c), form.acc)
    np.testing.assert_array_equal(want.reshape(-1), item["gpu"]["d"].reshape(-1))


def wgmma_sparse_expected(form, a: np.ndarray, b: np.ndarray, c: np.ndarray, meta: np.ndarray) -> np.ndarray:
    """A sparse form's D (CTA, 64, N) bits: per step, each warp's compressed A decompressed by its metadata words
    read from the lanes' side (sp_dense: mma.sp's m16n8 layout, which the PTX ISA draws for wgmma too), imm-scale -1
    as sign flips of A's kept and all of B's elements; row r's D is the dense form's one step over the K positions
    with the rows row r does not keep zeroed (integers: the exact sum, wrapped or clamped once per step)."""
    k, ctas = form.k, a.shape[0]
    bits = {1: 0x80, 2: 0x8000, 4: 0x80000000}[a.itemsize]
    d = c if form.scale_d else np.zeros_like(c)
    f = None if form.integer else replace(TF32_FORM if form.ta == "tf32" else get_form(form.tc_form), m=1, k=k,
                                          groups=(tuple(range(k)),))
    for s, (_, _, (sa, sb)) in enumerate(form.steps):
        dense, keep = (x.reshape(ctas, 64, k) for x in sp_dense(a[:, s].reshape(4 * ctas, 16, k // 2),
                                                                 meta[:, s].reshape(4 * ctas, 32), k, form.sels[s]))
        assert (keep.sum(-1) == k // 2).all()
        bt = b[:, s].swapaxes(-1, -2) ^ np.array(bits if sb < 0 else 0, b.dtype)  # (CTA, K, N)
        if sa < 0:
            dense = np.where(keep, dense ^ np.array(bits, a.dtype), dense)
        if form.integer:
            val = {"s8": lambda x: x.view(np.int8).astype(np.int64), "u8": lambda x: x.astype(np.int64)}
            e = d.view(np.int32).astype(np.int64) + val[form.ta](dense) @ val[form.tb](bt)
            d = ((np.clip(e, -2**31, 2**31 - 1) if form.acc.endswith("satfinite") else e) & 0xFFFFFFFF)
            d = d.astype(np.uint32)
        else:
            rows_b = np.where(keep[..., None], bt[:, None], 0).astype(b.dtype)  # (CTA, 64, K, N): row r's B
            d = tc_mma(f, dense[:, :, None], rows_b, d[:, :, None])[:, :, 0]
    return d


def _f32_op(x: float, y: float, z: float) -> float:
    """RN-even f32 of x·y + z (one rounding; FFMA, and FMUL / FADD with z = -0 / y = 1) from exact fractions; IEEE
    zero signs; infinities and NaN through float64."""
    if not all(math.isfinite(v) for v in (x, y, z)):
        with np.errstate(invalid="ignore"):
            return float(np.float64(x) * y + z)
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:  # -0 only when both the product and z are -0
        return -0.0 if math.copysign(1.0, x * y) < 0 and math.copysign(1.0, z) < 0 else 0.0
    return float(round_f32(exact).view(np.float32))


def _m884_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray, d_type: str) -> np.ndarray:
    """ptxas's m8n8k4 f16 sequence (cuobjdump of sm_80 / 89 / 90a code) per element, one exact rounding per op:
    f32 D = FADD(C, FFMA(a3, b3, FFMA(a2, b2, FFMA(a1, b1, FFMA(a0, b0, +0))))); f16 D = F2FP(FADD(FADD(C, FFMA(a1,
    b1, FMUL(a0, b0))), FFMA(a3, b3, FMUL(a2, b2))))."""
    with np.errstate(invalid="ignore"):  # NaN operands
        av, bv = a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64)
        cv = (c.view(np.float32) if c.dtype == np.uint32 else c.view(np.float16)).astype(np.float64)
    out = np.zeros(c.shape, np.float64)
    for idx in np.ndindex(*c.shape[:-2]):
        for m in range(8):
            for n in range(8):
                x, y, acc = av[idx][m], bv[idx][:, n], float(cv[idx][m, n])
                if d_type == "f32":
                    s = 0.0
                    for k in range(4):
                        s = _f32_op(x[k], y[k], s)
                    out[idx][m, n] = _f32_op(acc, 1.0, s)
                else:
                    p01, p23 = (_f32_op(x[k + 1], y[k + 1], _f32_op(x[k], y[k], -0.0)) for k in (0, 2))
                    out[idx][m, n] = _f32_op(_f32_op(acc, 1.0, p01), 1.0, p23)
    with np.errstate(over="ignore", invalid="ignore"):  # the f16 cast: F2FP's rounding, overflow to infinity
        if d_type == "f32":
            return np.where(np.isnan(out), np.uint32(0x7FFFFFFF), out.astype(np.float32).view(np.uint32))
        return np.where(np.isnan(out), np.uint16(0x7FFF), out.astype(np.float16).view(np.uint16))


@pytest.mark.parametrize("item", _entries("mma_m884_", 2))
def test_m884_on_the_gpu_is_ptxas_ffma_sequence(item) -> None:
    """Apart from the emulator: each quad pair's m8n8k4 f16 D (operands placed by the PTX ISA's formulas, every A / B
    layout, f16 / f32 / mixed accumulators) is the FFMA sequence ptxas lowers the instruction to, evaluated with
    exact fractions and one rounding per op."""
    form = int(item["meta"]["params"]["mma_m884_special_param_4"])
    lay_a, lay_b, d_type, c_type = M884_FORMS[form]
    a, b, c = m884_tiles(np.random.default_rng(item["meta"]["seed"]), 16, c_type)
    for name, w in zip("abc", m884_words(a, b, c, lay_a, lay_b), strict=True):
        np.testing.assert_array_equal(w.reshape(-1), item["buffers"][name].reshape(-1))
    d = _m884_reference(a, b, c, d_type)
    want = m884_words(a, b, d, lay_a, lay_b)[2]
    np.testing.assert_array_equal(want.reshape(-1), item["gpu"]["d"].reshape(-1))


def _f64_of(q: Fraction) -> float:
    """Nearest f64 of an exact value; beyond the largest finite one, an infinity of its sign."""
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def _fma_f64(x: float, y: float, acc: float) -> float:
    """fma.rn.f64: x·y + acc rounded once; a finite product is exact, so it never overflows on its own (an infinite
    acc stays as it is), while an infinite or NaN factor follows IEEE products (∞·0 is NaN)."""
    if math.isfinite(x) and math.isfinite(y):
        return _f64_of(Fraction(x) * Fraction(y) + Fraction(acc)) if math.isfinite(acc) else acc
    with np.errstate(invalid="ignore"):
        return float(np.float64(x) * np.float64(y) + np.float64(acc))


@pytest.mark.parametrize("item", _entries("mma_f64_m16n8k"))
def test_f64_m16_mma_on_the_gpu_is_chained_fmas_in_k_order(item) -> None:
    """Apart from the emulator: sm_90's f64 m16n8k4 / k8 / k16 D (operands placed by the PTX ISA's formulas) is
    fma.rn.f64 chained over k in order from C, each step rounded once (`_fma_f64`),
    and the data tell that chain from one rounding of the exact sum and from the reverse order."""
    form = int(item["meta"]["params"]["mma_f64_m16_special_param_4"])
    a, b, c = f64_m16_tiles(np.random.default_rng(item["meta"]["seed"]), 16, F64_M16_K[form])
    for name, x in (("a", a), ("b", b), ("c", c)):
        w = f64_m16_words(x, name)
        np.testing.assert_array_equal(w, item["buffers"][name][:, :w.shape[1]])
    av, bv, cv = (x.view(np.float64) for x in (a, b, c))
    got = item["gpu"]["d"].view(np.float64)
    want, differs = np.zeros_like(cv), {"once": 0, "reversed": 0}
    for idx in np.ndindex(*cv.shape):
        w_, i, j = idx
        terms = [(av[w_, i, k], bv[w_, k, j]) for k in range(av.shape[2])]
        chains = {}
        for order in ("k", "reversed"):
            acc = float(cv[idx])
            for x, y in (terms if order == "k" else terms[::-1]):
                acc = _fma_f64(float(x), float(y), acc)
            chains[order] = acc
        want[idx] = chains["k"]
        if np.isfinite([*np.ravel(terms), cv[idx]]).all():
            differs["reversed"] += chains["reversed"] != chains["k"]
            exact = sum((Fraction(x) * Fraction(y) for x, y in terms), Fraction(cv[idx]))
            differs["once"] += _f64_of(exact) != chains["k"]
    words = f64_m16_words(want.view(np.uint64), "c")
    nan = np.isnan(words.view(np.float64))
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(words[~nan], item["gpu"]["d"][~nan])
    assert differs["once"] > 20 and differs["reversed"] > 20, differs


@pytest.mark.parametrize("item", _entries("mma_sp_"))
def test_sparse_mma_on_the_gpu_is_the_dense_form_over_the_kept_products(item) -> None:
    """Apart from the emulator: sparse D (A decompressed by the metadata read from the lanes' side) is, per row, the
    dense form's arithmetic over the kept products only (B rows a row does not keep zeroed: a NaN or infinity there
    takes no part), one step of K for 16-bit types, the FP8 lowering's two steps (even, odd chunks) then C; integers
    the exact sum, wrapped or clamped once."""
    form = int(item["meta"]["params"]["mma_sp_special_param_5"])
    k, d, _, sel = SP_FORMS[form]
    ta, tb, sat = sp_types(form)
    probe = item["name"].endswith("_probe")
    a, b, c, meta = sp_tiles(np.random.default_rng(item["meta"]["seed"]), 16, form, probe)
    four = ta in ("s4", "u4")
    for name, w in zip("abc", sp_words(a, b, c, 4 if four else None), strict=True):
        np.testing.assert_array_equal(w, item["buffers"][name])
    np.testing.assert_array_equal(meta, item["buffers"]["e"])
    dense, keep = (sp_dense4 if four else sp_dense)(a, meta, k, sel)
    assert (keep.sum(-1) == k // 2).all()
    if d == "s32":
        val = {"s8": lambda x: x.view(np.int8).astype(np.int64), "u8": lambda x: x.astype(np.int64),
               "s4": lambda x: (x.astype(np.int64) ^ 8) - 8, "u4": lambda x: x.astype(np.int64)}
        exact = c.view(np.int32).astype(np.int64) + np.einsum("wrk,wkn->wrn", val[ta](dense), val[tb](b))
        lo, hi = -(2**31), 2**31 - 1
        want = np.clip(exact, lo, hi) if sat else (exact - lo) % 2**32 + lo
        if sat and not probe:
            assert ((exact < lo) | (exact > hi)).sum() > 20  # the clamp is reached
        np.testing.assert_array_equal(c32_fragments(want.astype(np.int32)), item["gpu"]["d"])
        return
    bm = np.where(keep[..., None], b[:, None], 0).astype(b.dtype)  # (W, 16, K, 8): row r's B
    if ta in ("e4m3", "e5m2"):
        f = replace(get_form(f"mma.m16n8k32.{d}.{ta}.{tb}"), m=1, k=k,
                    groups=tuple(tuple(x for x in range(k) if (x // 4) % 2 == p) for p in (0, 1)))
    elif ta == "tf32":  # the f16 -> f32 datapath on the top 19 bits of each word (numerics' tf32 format)
        f = replace(get_form("mma.m16n8k16.f32.f16.f16"), a="tf32", b="tf32", m=1, k=k, groups=(tuple(range(k)),))
    else:
        f = replace(get_form(f"mma.m16n8k16.{d}.{ta}.{tb}"), m=1, k=k, groups=(tuple(range(k)),))
    dd = tc_mma(f, dense[:, :, None], bm, c[:, :, None])[:, :, 0]
    want = c_fragments(dd) if d == "f16" else c32_fragments(dd)
    np.testing.assert_array_equal(want, item["gpu"]["d"][:, :want.shape[1]])


@pytest.mark.parametrize("item", _entries("mma_fp8_k16_"))
def test_fp8_k16_mma_on_the_gpu_is_the_k32_form_zero_padded(item) -> None:
    """Apart from the emulator: FP8 m16n8k16 D is numerics.tensorcore's m16n8k32 form (two steps over k % 4 in
    {0, 1} and {2, 3} from +0, then C) on the operands zero-padded to K = 32 (tiles packed by the ISA formulas)."""
    form = int(item["meta"]["params"]["mma_a2b1_special_param_4"])
    rng = np.random.default_rng(item["meta"]["seed"])
    a, b, c = _special_f16_tiles(rng, 16, 16, True)
    ta, d = ("e5m2", "f16") if form == 4 else ("e4m3", "f32")
    if form == 4:
        a = _wg_codes(rng, "e5m2", a.shape, 0.03)
    else:
        c = c.view(np.float16).astype(np.float32).view(np.uint32)
    np.testing.assert_array_equal(a_fragments(a), item["buffers"]["a"])
    np.testing.assert_array_equal(b_fragments(b), item["buffers"]["b"])
    a32, b32 = np.zeros((16, 16, 32), np.uint8), np.zeros((16, 32, 8), np.uint8)
    a32[..., :16], b32[:, :16] = a, b
    dd = tc_mma(f"mma.m16n8k32.{d}.{ta}.e4m3", a32, b32, c)
    want = c_fragments(dd) if d == "f16" else c32_fragments(dd)
    np.testing.assert_array_equal(want, item["gpu"]["d"][:, :want.shape[1]])


def _chained_wgmma(form, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """D of chained numerics.tensorcore wgmma steps over K from +0: A tiles (G, 64, K), B (K, N) codes."""
    f = get_form(form) if isinstance(form, str) else form
    d = np.zeros((*a.shape[:-1], b.shape[1]), FORMATS[f.c].dtype)
    for k0 in range(0, a.shape[-1], f.k):
        d = tc_mma(f, a[..., k0:k0 + f.k], np.broadcast_to(b[k0:k0 + f.k], (a.shape[0], f.k, b.shape[1])), d)
    return d


@pytest.mark.parametrize("item", _entries("ladder_rung"))
def test_ladder_rungs_on_the_gpu_are_the_chained_f16_wgmma_model(item) -> None:
    """Every rung of the teaching ladder (cp.async; TMA on mbarriers, warp-specialised; setmaxnreg; 2-CTA clusters
    multicasting B; TMA stores; persistent tile walks; split-K partial planes) gives C as K / 16 chained m64n8k16
    f16 -> f32 steps of numerics.tensorcore from +0, bit for bit; with split-K, each plane the chain over its split's
    k-tiles (ceil(k-tiles / splits) each)."""
    params = item["meta"]["params"]
    m, n, k = (params[f"ladder_gemm_param_{i}"] for i in (3, 4, 5))
    splits = params.get("ladder_gemm_param_6", 1)
    rung = int(item["name"].split("_")[1][4:])
    bk = ladder.rung(rung).bk
    per = -(-(k // bk) // splits) * bk
    a = item["buffers"]["A"].view(np.uint16).reshape(m // 64, 64, k)
    b = item["buffers"]["B"].view(np.uint16).reshape(n, k)
    planes = [np.concatenate([_chained_wgmma("wgmma.m64n8k16.f32.f16.f16", a[..., k0:k0 + per],
                                             b[n0:n0 + 256, k0:k0 + per].T) for n0 in range(0, n, 256)], axis=-1)
              .reshape(m, n) for k0 in range(0, k, per)]
    np.testing.assert_array_equal(np.concatenate(planes), item["gpu"]["C"].view(np.uint32).reshape(-1, n))


def _mbarrier_model(prog: np.ndarray) -> np.ndarray:
    """What `mbarrier_steps` records for a script, from the PTX ISA's phase rules: a phase completes when no arrival
    and no transaction byte is pending; parity P has completed while the phase parity is not P; an arrive's state
    keeps the phase and the pending count from before it."""
    out = np.full((*prog.shape[:2], 4), 0xFFFFFFFF, np.uint32)
    for s_, script in enumerate(prog):
        pending = expected = tx = phase = 0
        token = None
        for i, (op, v) in enumerate(script.tolist()):
            if op == 0:
                pending = expected = v
                tx = phase = 0
            elif op in (1, 2, 5):
                token = (phase, pending)
                pending -= 1 if op == 2 else v
                tx += v if op == 2 else 0
                expected -= v if op == 5 else 0
            else:
                tx += v if op == 3 else -v
            if pending == 0 and tx == 0:
                phase, pending = phase ^ 1, expected
            out[s_, i, :2] = phase != 0, phase != 1
            if token is not None:
                out[s_, i, 2:] = token[1], token[0] != phase
    return out


_TMA_DTYPES = {"f16": np.float16, "u8": np.uint8, "f32": np.float32}


@pytest.mark.parametrize("item", _entries("cu_tma_box"))
def test_tma_box_on_the_gpu_is_the_swizzled_box(item) -> None:
    """TMA on the GPU: a box partly out of bounds loads zeros there, lands in shared memory by the swizzle's row rule
    (32, 64, 128 bytes, or none), and its store writes only in-bounds elements."""
    label = "_".join(item["name"].split("_")[3:5])
    span, dtype = TMA_BOXES[label]
    x, y = (item["meta"]["params"][f"tma_box_param_{i}"] for i in (3, 4))
    dump, out = tma_box_reference(item["buffers"]["src"], item["buffers"]["out"], _TMA_DTYPES[dtype], span, x, y)
    np.testing.assert_array_equal(item["gpu"]["dump"].reshape(-1), dump)
    np.testing.assert_array_equal(item["gpu"]["out"], out)


@pytest.mark.parametrize("item", _entries("cu_tma_im2col"))
def test_tma_im2col_on_the_gpu_is_the_convolutions_im2col_matrix(item) -> None:
    """TMA im2col on the GPU: each CTA's box (a filter tap's offsets, a tile of output pixels from its first filter
    corner) is that tile of the convolution's im2col matrix, laid out by the swizzle's row rule."""
    case = TMA_IM2COL[item["name"]]
    want = [swizzle_rows(b, case[10]) if case[10] else b.reshape(-1).view(np.uint8)
            for b in im2col_boxes(case, item["buffers"]["x"])]
    np.testing.assert_array_equal(item["gpu"]["dump"].reshape(-1), np.concatenate(want))


@pytest.mark.parametrize("item", _entries("im2col_gluon"))
def test_gluon_im2col_on_the_gpu_is_the_convolutions_im2col_matrix(item) -> None:
    """Gluon's im2col tiles on the GPU: each program's tile of the convolution's im2col matrix."""
    want = im2col_boxes(GLUON_IM2COL, item["buffers"]["x"])
    np.testing.assert_array_equal(item["gpu"]["out"].reshape(want.shape), want)


@pytest.mark.parametrize("item", _entries("conv_gluon"))
def test_gluon_convolution_on_the_gpu_is_the_chained_wgmma_model(item) -> None:
    """Gluon's implicit-GEMM convolution on the GPU (im2col and tiled TMA, wgmma m64n64k16): the chain of
    numerics.tensorcore m64n8k16 steps over the convolution's im2col matrix, bit for bit."""
    _, want = gluon_conv_reference(item["buffers"]["x"], item["buffers"]["wt"])
    np.testing.assert_array_equal(item["gpu"]["out"].reshape(want.shape).view(np.uint32), want)


@pytest.mark.parametrize("item", _entries("cu_bulk_copy"))
def test_bulk_copy_on_the_gpu_moves_the_bytes(item) -> None:
    """cp.async.bulk global -> shared (complete_tx on an mbarrier) -> global (bulk group): 784 bytes from 16-byte
    element 5 of src land at element 7 of dst, the rest of dst untouched."""
    src, dst = item["buffers"]["src"], item["buffers"]["dst"].copy()
    off, off2, n = (item["meta"]["params"][f"bulk_copy_param_{i}"] for i in (2, 3, 4))
    dst[off2:off2 + n // 16] = src[off:off + n // 16]
    np.testing.assert_array_equal(item["gpu"]["dst"], dst)


@NVCC_SAMPLES
def test_bulk_copy_emulated_moves_the_bytes(samples) -> None:
    entry = next(e for e in ENTRIES if e.name == "cu_bulk_copy")
    test_bulk_copy_on_the_gpu_moves_the_bytes(_emulated_item(entry, samples("sm90a"), 79))


@pytest.mark.parametrize("item", _entries("cu_mbarrier_steps"))
def test_mbarrier_steps_on_the_gpu_follow_the_phase_rules(item) -> None:
    prog = item["buffers"]["prog"]
    np.testing.assert_array_equal(item["gpu"]["out"], _mbarrier_model(prog))


@pytest.mark.parametrize("item", [pytest.param(it, id=it["name"]) for it in _ITEMS if "_sm90_" in it["name"]]
                         or [pytest.param(None, id="absent", marks=pytest.mark.skip(reason="no sm_90 Triton entries"))])
def test_triton_sm90_matmuls_on_the_gpu_are_the_chained_wgmma_model(item) -> None:
    """Triton's Hopper matmuls (cp.async, wgmma with B MN-major — K-major for tf32 —, A from shared memory): C on the
    GPU is the cast of a chain of numerics.tensorcore m64n8 wgmma steps over K (zero-padded to the block, as the
    kernel loads it); f32 operands as tf32 (Triton's default precision)."""
    spec = MODULES[item["name"]]
    (m, k), n = item["buffers"]["A"].shape, item["buffers"]["B"].shape[1]
    in_t = {"*fp16": "f16", "*bf16": "bf16", "*fp8e4nv": "e4m3", "*fp32": "tf32"}[spec.types["a_ptr"]]
    acc = {"fp32": "f32", "fp16": "f16"}[spec.constexprs["ACC"]]
    form = TF32_FORM if in_t == "tf32" else f"wgmma.m64n8k{32 if in_t == 'e4m3' else 16}.{acc}.{in_t}.{in_t}"
    bk = spec.constexprs["BK"]
    mp, kp, np_ = -(-m // 64) * 64, -(-k // bk) * bk, -(-n // 8) * 8
    dt = {"e4m3": np.uint8, "tf32": np.uint32}.get(in_t, np.uint16)
    a = np.zeros((mp, kp), dt)
    b = np.zeros((kp, np_), dt)
    a[:m, :k] = item["buffers"]["A"].view(dt).reshape(m, k)
    b[:k, :n] = item["buffers"]["B"].view(dt).reshape(k, n)
    d = _chained_wgmma(form, a.reshape(mp // 64, 64, kp), b).reshape(mp, np_)[:m, :n]
    want = (d.view(np.float32).astype(np.float16) if acc == "f32" else d.view(np.float16)).view(np.uint16)
    got = item["gpu"]["C"].view(np.uint16).reshape(m, n)
    nan = np.isnan(want.view(np.float16))
    np.testing.assert_array_equal(np.isnan(got.view(np.float16)), nan)
    np.testing.assert_array_equal(got[~nan], want[~nan])


# ---- the same checks on the emulator's outputs (no GPU data: nvcc, or Triton, builds the PTX here) -----------------

def _emulated_item(entry, module: dict, seed: int) -> dict:
    """A corpus item whose 'gpu' outputs are the emulator's, for the checks above run apart from GPU data."""
    kernel, grid, block, shared = ec.launch_of(entry, module)
    args, buffers, record = ec.make_args(module["ptx"], kernel, entry.inputs(np.random.default_rng([seed])))
    res, _ = ec.emulate_entry(module["ptx"], kernel, grid, block, shared, args, entry.outputs, buffers)
    gpu = {k: np.asarray(res[k]).reshape(-1).view(buffers[k].dtype).reshape(buffers[k].shape) for k in entry.outputs}
    return {"name": entry.name, "meta": {"seed": [seed], "params": record}, "buffers": buffers, "gpu": gpu}


@pytest.fixture(scope="module")
def samples():
    """samples(arch): the nvcc-built samples module for sm_80, sm_89 or sm_90a (each built once per worker)."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")
    return samples_module


@NVCC_SAMPLES
@pytest.mark.parametrize("form", thinned(list(range(len(M884_FORMS))), 5))
def test_m884_emulated_is_ptxas_ffma_sequence(form: int, samples) -> None:
    entry = next(e for e in ENTRIES if e.name == m884_name(form))
    test_m884_on_the_gpu_is_ptxas_ffma_sequence(_emulated_item(entry, samples("sm80"), 31 + form))


@NVCC_SAMPLES
@pytest.mark.parametrize("k", thinned(list(F64_M16_K), 3))
def test_f64_m16_mma_emulated_is_chained_fmas_in_k_order(k: int, samples) -> None:
    entry = next(e for e in ENTRIES if e.name == f"mma_f64_m16n8k{k}")
    test_f64_m16_mma_on_the_gpu_is_chained_fmas_in_k_order(_emulated_item(entry, samples("sm90a"), 41 + k))


@NVCC_SAMPLES
@pytest.mark.parametrize("name", thinned([e.name for e in ENTRIES if e.name.startswith("mma_sp_")], 8))
def test_sparse_mma_emulated_is_the_dense_form_over_the_kept_products(name: str, samples) -> None:
    entry = next(e for e in ENTRIES if e.name == name)
    test_sparse_mma_on_the_gpu_is_the_dense_form_over_the_kept_products(_emulated_item(entry, samples("sm90a"), 53))


@NVCC_SAMPLES
@pytest.mark.parametrize("name", ["mma_fp8_k16_f32_e4m3", "mma_fp8_k16_f16_e5m2_e4m3"])
def test_fp8_k16_mma_emulated_is_the_k32_form_zero_padded(name: str, samples) -> None:
    entry = next(e for e in ENTRIES if e.name == name)
    test_fp8_k16_mma_on_the_gpu_is_the_k32_form_zero_padded(_emulated_item(entry, samples("sm89"), 61))


@NVCC_SAMPLES
@pytest.mark.parametrize("form", thinned(WG_FORMS, 3) + thinned(WG_SP_FORMS, 3), ids=wg_name)
def test_wgmma_forms_emulated_are_the_tensorcore_model(form, samples) -> None:
    entry = next(e for e in ENTRIES if e.name == wg_name(form))
    seed = 17 + form.form + 40 * form.sparse
    test_wgmma_forms_on_the_gpu_are_the_tensorcore_model(_emulated_item(entry, samples("sm90a"), seed))


@NVCC_SAMPLES
@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.name.startswith("cu_tma_box")][::4])
def test_tma_box_emulated_is_the_swizzled_box(name: str, samples) -> None:
    entry = next(e for e in ENTRIES if e.name == name)
    test_tma_box_on_the_gpu_is_the_swizzled_box(_emulated_item(entry, samples("sm90a"), 73))


@NVCC_SAMPLES
def test_mbarrier_steps_emulated_follow_the_phase_rules(samples) -> None:
    entry = next(e for e in ENTRIES if e.name == "cu_mbarrier_steps")
    test_mbarrier_steps_on_the_gpu_follow_the_phase_rules(_emulated_item(entry, samples("sm90a"), 71))


@pytest.mark.parametrize("name", [n for n in MODULES if "_sm90_" in n])
def test_triton_sm90_matmuls_emulated_are_the_chained_wgmma_model(name: str) -> None:
    """Triton lays out its operands itself (B MN-major): its PTX, emulated, gives the chained model's C."""
    pytest.importorskip("triton")
    module = ec._build_triton(MODULES[name], ec._triton_kernels())
    entry = next(e for e in ENTRIES if e.name == name)
    test_triton_sm90_matmuls_on_the_gpu_are_the_chained_wgmma_model(_emulated_item(entry, module, 23))


@pytest.mark.parametrize("folder", ["triton", "triton_h200"])
def test_committed_triton_f16_matmul_is_the_chained_hopper_mma(folder: str) -> None:
    """The committed Triton f16 matmul (cp.async, ldmatrix, mma.sync f32) is C = f16(chained m16n8k16 f32 mma)."""
    text = (Path(__file__).resolve().parents[2] / "data" / "ptx" / folder / "matmul_f16_sm80.ptx").read_text()
    rng = np.random.default_rng(0)
    m, n, k = 128, 128, 192
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    vals = [a, b, np.zeros((m, n), np.float16), m, n, k, k, 1, n, 1, n, 1, np.zeros(64, np.uint8),
            np.zeros(64, np.uint8)]
    names = re.findall(r"\.param [^\n]*?(matmul_kernel_param_\d+)", text)
    out = emulate(text, "matmul_kernel", 1, 128, dict(zip(names, vals, strict=False)), dynamic_shared=131072)
    ta = a.view(np.uint16).reshape(m // 16, 1, 16, k // 16, 16)  # [row tile, -, row, k step, k]
    tb = b.view(np.uint16).reshape(k // 16, 16, 1, n // 8, 8)  # [k step, k, -, column tile, column]
    acc = np.zeros((m // 16, n // 8, 16, 8), np.uint32)
    for s in range(k // 16):  # the k steps in order, each one m16n8k16 per 16 x 8 tile, C chained
        acc = tc_mma("mma.m16n8k16.f32.f16.f16", np.broadcast_to(ta[:, :, :, s], (m // 16, n // 8, 16, 16)),
                     np.broadcast_to(tb[s].transpose(1, 2, 0, 3), (m // 16, n // 8, 16, 8)), acc)
    ref = acc.view(np.float32).transpose(0, 2, 1, 3).reshape(m, n).astype(np.float16)
    np.testing.assert_array_equal(out["matmul_kernel_param_2"].view(np.uint16), ref.view(np.uint16))


# ---- wgmma: the tensor-core truth's kernels, run by the emulator --------------------------------------------------

TC_TRUTH = Path(__file__).resolve().parents[2] / "data" / "numerics" / "hopper_tc_truth.npz"
WGMMA_FORMS = [n for n in TC_FORM_NAMES if n.startswith("wgmma.")]


def wgmma_truth_ptx() -> str | None:
    """tools/truth/wgmma_kernels.cu as sm_90a PTX (nvcc -ptx, about a second), cached under build/ by content."""
    from tools.truth import tc_truth

    deps = [tc_truth.CU] + sorted(tc_truth.INCLUDE.glob("tcforge/*.cuh"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in deps)).hexdigest()[:16]
    out = Path(__file__).resolve().parents[3] / "build" / "emulate" / f"wgmma_kernels_{digest}.ptx"
    if not out.is_file():
        if shutil.which("nvcc") is None:
            return None
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run(["nvcc", "-ptx", "-arch=sm_90a", "-I", str(tc_truth.INCLUDE), str(tc_truth.CU), "-o",
                        str(tmp)], check=True, capture_output=True)
        tmp.replace(out)
    return out.read_text()


@pytest.fixture(scope="module")
def wgmma_ptx() -> str:
    text = wgmma_truth_ptx()
    if text is None:
        pytest.skip("nvcc not found: the wgmma truth kernels cannot be compiled to PTX")
    return text


@pytest.mark.parametrize("name", thinned(WGMMA_FORMS, 3))
def test_wgmma_truth_kernels_match_the_h100(name: str, wgmma_ptx: str) -> None:
    """The H100 tensor-core truth's own wgmma kernel (m64n8, A and B from descriptors), emulated on the truth's inputs
    (every full-D tile of the 9 families, one CTA each): D bit for bit the H100's. The H100 ran the 32-byte swizzle
    layout (LBO 16, SBO 256); the no-swizzle layout (LBO 128, SBO 256) computes the same D from the same tiles."""
    from tcforge.numerics import truth as T

    truth = np.load(TC_TRUTH)
    key = name.replace(".", "_")
    assert int(truth[f"{key}__layout"]) == 0  # the H100 read layout 0 of tc_truth.LAYOUTS: (16, 256, 32-byte swizzle)
    form = get_form(name)
    tiles = [(*T.tc_tile_inputs(name, f, int(truth["seed"]), 0, 8), truth[f"{key}__f{f}__d"]) for f in range(9)]
    a, b, c, d = (np.concatenate(x) for x in zip(*tiles, strict=True))
    kname = f"k_wgmma_{form.c}_{form.a}_{form.b}"
    for lbo, sbo, mode in ((16, 256, 1), (128, 256, 0)):
        vals = [x.view(np.uint8).reshape(-1) for x in (a, b, c)] + [np.full(d.nbytes, 0xFF, np.uint8), len(d), lbo, sbo,
                                                                   mode]
        out = emulate(wgmma_ptx, kname, len(d), 128, {f"{kname}_param_{i}": v for i, v in enumerate(vals)})
        got = out[f"{kname}_param_3"].view(d.dtype).reshape(d.shape)
        assert (got != d).sum() == 0, f"{name} mode {mode}: {(got != d).sum()} of {d.size} outputs differ"


# ---- the op families -------------------------------------------------------------------------------------------------

def _family_params() -> list:
    if not FAMILIES_NPZ.is_file():
        return [pytest.param(None, id="absent", marks=_FAMILIES_ABSENT)]
    with np.load(FAMILIES_NPZ, allow_pickle=False) as z:
        names = json.loads(str(z["families"]))
    return [pytest.param(n, id=n) for n in names]  # all 25 take a few seconds (the MUFU tables load once)


@pytest.fixture(scope="module")
def families() -> dict:
    return ef.load(FAMILIES_NPZ)


@_FAMILIES_ABSENT
def test_every_family_ran_on_a_hopper_gpu(families: dict) -> None:
    head = families["_"]
    assert "H100" in head["gpu"] or "H200" in head["gpu"], head["gpu"]
    assert not head["errors"], head["errors"]
    assert set(families) - {"_"} == set(ef.FAMILIES)


@pytest.mark.parametrize("name", _family_params())
def test_family_matches_gpu_bits(name: str, families: dict) -> None:
    fam = families[name]
    got, _ = ef.run_emulator(fam["ptx"], fam["meta"], fam["init"])
    n, lines = ef.compare(fam["meta"], fam["init"], fam["gpu"], got)
    assert n == 0, f"{name}: {n} differing results\n" + "\n".join(lines[:60])


# ---- the emulator fixes the corpus called for ----------------------------------------------------------------------

def test_sad_signed_and_unsigned() -> None:
    x = np.array([[5, 9], [0xFFFFFFFF, 1], [0x80000000, 0x7FFFFFFF]], np.uint32)
    got = run_body("""ld.global.v2.u32 {%r10, %r11}, [%rd4];
sad.s32 %r12, %r10, %r11, 100;
sad.u32 %r13, %r10, %r11, 100;
st.global.v2.u32 [%rd6], {%r12, %r13};""", x, 2, block=3)
    s = x.view(np.int32).astype(np.int64)
    np.testing.assert_array_equal(got[:, 0], (np.abs(s[:, 0] - s[:, 1]) + 100) & 0xFFFFFFFF)
    np.testing.assert_array_equal(got[:, 1], (np.abs(x[:, 0].astype(np.int64) - x[:, 1]) + 100) & 0xFFFFFFFF)


def test_copysign_f32_is_bitwise() -> None:
    x = np.array([[0x3F800000, 0xBF000000], [0x80000000, 0x7FC00123], [0x00000000, 0xFF800000]], np.uint32)
    got = run_body("""ld.global.v2.u32 {%r10, %r11}, [%rd4];
mov.b32 %f1, %r10;
mov.b32 %f2, %r11;
copysign.f32 %f3, %f1, %f2;
mov.b32 %r12, %f3;
st.global.u32 [%rd6], %r12;""", x, 1, block=3)
    np.testing.assert_array_equal(got[:, 0], (x[:, 0] & 0x80000000) | (x[:, 1] & 0x7FFFFFFF))


@pytest.mark.parametrize("op", ["add.s32", "add.u32", "min.s32", "min.u32", "max.s32", "max.u32", "and.b32", "or.b32",
                                "xor.b32"])
def test_redux_sync(op: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    got = run_body(f"""ld.global.u32 %r10, [%rd4];
redux.sync.{op} %r11, %r10, 0xffffffff;
and.b32 %r12, %r1, 1;
setp.eq.u32 %p1, %r12, 0;
@%p1 redux.sync.{op} %r13, %r10, 0x55555555;
st.global.v2.u32 [%rd6], {{%r11, %r13}};""", x, 2, block=64)
    name, ptype = op.split(".")
    v = (x.view(np.int32) if ptype == "s32" else x).astype(np.int64).reshape(2, 32)
    f = {"add": np.sum, "min": np.min, "max": np.max, "and": np.bitwise_and.reduce, "or": np.bitwise_or.reduce,
         "xor": np.bitwise_xor.reduce}[name]
    full = np.repeat([f(w) & 0xFFFFFFFF for w in v], 32)
    even = np.repeat([f(w[0::2]) & 0xFFFFFFFF for w in v], 32)
    np.testing.assert_array_equal(got[:, 0], full)
    np.testing.assert_array_equal(got[0::2, 1], even[0::2])


def test_redux_sync_mask_naming_an_exited_lane_is_an_error() -> None:
    with pytest.raises(EmulationError, match="redux.sync: member mask 0xffffffff"):
        run_body("""ld.global.u32 %r10, [%rd4];
setp.eq.u32 %p1, %r1, 3;
@%p1 bra DONE;
redux.sync.add.u32 %r11, %r10, 0xffffffff;
DONE:""", np.arange(32, dtype=np.uint32), 1)


def test_module_global_initializers() -> None:
    funcs = """.global .align 4 .b8 tab[6] = {65, 144, 0x43, 0, 255, 1};
.global .align 4 .u32 words[4] = {7, 0xFFFFFFFF};
.global .align 4 .f32 scale[1] = {0f3FC00000};"""
    got = run_body("""mov.u64 %rd10, tab;
ld.global.u32 %r10, [%rd10];
ld.global.u8 %r11, [%rd10+4];
mov.u64 %rd11, words;
ld.global.u32 %r12, [%rd11+4];
ld.global.u32 %r13, [%rd11+8];
ld.global.f32 %f1, [scale];
mov.b32 %r14, %f1;
st.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};
st.global.u32 [%rd6+16], %r14;""", np.zeros(32, np.uint32), 8, funcs=funcs)
    np.testing.assert_array_equal(got[:, :5], [[0x00439041, 255, 0xFFFFFFFF, 0, 0x3FC00000]] * 32)


# ---- the tool's pieces that need no GPU ------------------------------------------------------------------------------

def test_fragments_follow_the_mma_layout() -> None:
    """The corpus's fragment packing is the emulator's unpacking (the inline-mma kernels load fragments as given)."""
    import tcforge.ptx.emulate.ops_matrix as om

    rng = np.random.default_rng(3)
    for dt, k in ((np.uint16, 16), (np.uint8, 32)):
        a = rng.integers(0, np.iinfo(dt).max + 1, (2, 16, k)).astype(dt)
        b = rng.integers(0, np.iinfo(dt).max + 1, (2, k, 8)).astype(dt)
        af, bf = a_fragments(a), b_fragments(b)
        np.testing.assert_array_equal(om._gather_a(list(af.transpose(1, 0, 2)), a.itemsize), a)
        np.testing.assert_array_equal(om._gather_b(list(bf.transpose(1, 0, 2)), b.itemsize), b)
    c = rng.integers(0, 2**16, (2, 16, 8)).astype(np.uint16)
    np.testing.assert_array_equal(om._gather_c(list(c_fragments(c).transpose(1, 0, 2))), c)


def test_gpu_parameter_bytes() -> None:
    from tools import emulate_gpu

    from tcforge.ptx.module import read_module

    ptx = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_a, .param .u32 k_n, .param .f32 k_s, .param .align 8 .b8 k_st[24], .param .u16 k_h,
                 .param .u64 k_t)
{
	ret;
}
"""
    fn = read_module(ptx).function("k")
    args = {"k_a": "buf", "k_n": 7, "k_s": np.float32(1.5), "k_st": np.arange(24, dtype=np.uint8), "k_st@8": "buf",
            "k_st@16": "surface buf f32x1 dims=4", "k_h": 0xABCD, "k_t": "texture buf f32x1 dims=2,2",
            "buf": np.zeros(4, np.float32)}
    raw = emulate_gpu._param_bytes(fn, args, {"buf": 0x1122334455667788}, {"k_st@16": 0x66, "k_t": 0x55})
    assert raw[0] == (0x1122334455667788).to_bytes(8, "little")
    assert raw[1] == (7).to_bytes(4, "little") and raw[2] == np.float32(1.5).tobytes()
    assert raw[3] == bytes(range(8)) + (0x1122334455667788).to_bytes(8, "little") + (0x66).to_bytes(8, "little")
    assert raw[4] == (0xABCD).to_bytes(2, "little") and raw[5] == (0x55).to_bytes(8, "little")



def test_corpus_merge_keeps_the_later_entry_and_every_run(tmp_path) -> None:
    """`emulate_corpus merge`: entries of several runs in one file, a later run's entry replacing an earlier one of its
    name; the meta names each run."""
    def run(path, gpu: str, seed: int, entries: dict) -> None:
        arrays = {"meta": np.array(json.dumps({"gpu": gpu, "seed": seed, "entries": list(entries)}))}
        for name, value in entries.items():
            arrays[f"{name}/meta"] = np.array(json.dumps({"module": "m"}))
            arrays[f"{name}/gpu/out"] = np.array([value])
        np.savez(path, **arrays)

    run(tmp_path / "a.npz", "NVIDIA H200", 1, {"x": 1, "y": 2})
    run(tmp_path / "b.npz", "NVIDIA H100 80GB HBM3", 2, {"y": 3, "z": 4})
    assert ec.merge(tmp_path / "m.npz", [tmp_path / "a.npz", tmp_path / "b.npz"]) == 0
    with np.load(tmp_path / "m.npz") as z:
        meta = json.loads(str(z["meta"]))
        assert meta["entries"] == ["x", "y", "z"] and [int(z[f"{n}/gpu/out"][0]) for n in "xyz"] == [1, 3, 4]
    assert meta["gpu"] == "NVIDIA H100 80GB HBM3 + NVIDIA H200" and [r["seed"] for r in meta["runs"]] == [1, 2]
