"""Hopper tensor-core forms of the tensorcore parameter table (wgmma FP8/f16/bf16; mma.sync m16n8k16 f16/bf16 -> f32,
m16n8k32 e4m3/e5m2 -> f32/f16; the f16 controls) against the packed hardware truth (bit-exact, 0 mismatches), the
H100's f16 subnormal tiles, the existing H200 e4m3 truth and models, the exact Fraction reference, the published
MMA-Sim model and hand-worked tiles."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tests.marks import thinned

import tcforge.numerics as N
from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.numerics import tensorcore as TC
from tcforge.numerics import truth as T
from tcforge.numerics.mma_reference import reference
from tcforge.numerics.mma_variants import candidates

WGMMA_FORMS = [n for n in TC.FORM_NAMES if n.startswith("wgmma")]
MMA_FORMS = [n for n in TC.FORM_NAMES if n.startswith("mma.")]
FORMS = WGMMA_FORMS + MMA_FORMS
FAMILIES = sorted(T.TC_FAMILIES)
REPO = Path(__file__).resolve().parents[2]
# SHA-256 blocks per family recomputed by default: one of the m64 wgmma tiles, two of the smaller mma.sync tiles
FIRST_BLOCKS = {"wgmma": 1, "mma": 2}


@pytest.fixture(scope="module")
def truth(data_dir):
    path = data_dir / "numerics" / f"{T.TC_TRUTH}.npz"
    if not path.is_file():
        pytest.skip(f"no tensor-core hardware truth yet ({path.name} absent): {T.TC_TRUTH_HOWTO}")
    return T.load_truth(T.TC_TRUTH, data_dir / "numerics")


def _measured(truth, form: str) -> None:
    if form not in [str(f) for f in truth["forms"]]:
        pytest.skip(f"{form} is not in the packed truth (its probe or twin check failed on the device)")


def _first_bad(got: np.ndarray, want: np.ndarray) -> str:
    bad = np.argwhere(got != want)
    if not bad.size:
        return ""
    i = tuple(bad[0])
    return f"{len(bad)} mismatching outputs; first {i}: model {int(got[i]):#x}, hardware {int(want[i]):#x}"


# ---------------------------------------------------------------- the hardware truth (every form)
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("form", FORMS)
def test_full_tiles_bit_exact(truth, form, family):
    _measured(truth, form)
    d = truth[T.tc_key(form, family, "d")]
    a, b, c = T.tc_tile_inputs(form, family, int(truth["seed"]), 0, d.shape[0])
    got = N.tc_mma(form, a, b, c)
    assert np.array_equal(got, d), f"{form}, family {family} ({T.TC_FAMILIES[family]}): {_first_bad(got, d)}"


@pytest.mark.parametrize("form", FORMS)
def test_inputs_match_the_cuda_twin(truth, form):
    _measured(truth, form)
    n = int(truth["twin_tiles"])
    for family in FAMILIES:
        got = T.inputs_sha256(*T.tc_tile_inputs(form, family, int(truth["seed"]), 0, n))
        assert np.array_equal(got, truth[T.tc_key(form, family, "twin_sha")]), f"{form}, family {family}"


def _check_blocks(truth, form: str, family: int, blocks: int | None) -> None:
    shas = truth[T.tc_key(form, family, "sha")]
    block = int(truth["block_tiles"])
    n = shas.shape[0] if blocks is None else min(blocks, shas.shape[0])
    bad = []
    for i in range(n):
        a, b, c = T.tc_tile_inputs(form, family, int(truth["seed"]), i * block, block)
        if not np.array_equal(T.block_sha256(N.tc_mma(form, a, b, c), block)[0], shas[i]):
            bad.append(i)
    assert not bad, f"{form}, family {family}: SHA-256 blocks of {block} tiles differ: {bad[:10]} of {n}"


@pytest.mark.parametrize("form", thinned(list(FORMS), 4))
def test_first_digest_blocks_per_family(truth, form):
    _measured(truth, form)
    for family in FAMILIES:
        _check_blocks(truth, form, family, FIRST_BLOCKS[TC.get_form(form).op])


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("form", FORMS)
def test_every_digest_block(truth, form, family):
    _measured(truth, form)
    _check_blocks(truth, form, family, None)


def test_truth_covers_100k_tiles_per_form(truth):
    assert int(truth["tiles_per_family"]) * len(FAMILIES) >= 100_000
    for form in (str(f) for f in truth["forms"]):
        for family in FAMILIES:
            assert truth[T.tc_key(form, family, "sha")].shape[0] * int(truth["block_tiles"]) == int(
                truth["tiles_per_family"])


# ---------------------------------------------------------------- the controls: forms already proved on the H200
def test_generic_engine_reproduces_the_h200_e4m3_truth(data_dir):
    """mma.m16n8k32.f16.e4m3.e4m3 in the parameter table = the measured Hopper FP8 mma (first 128 tiles/family)."""
    z = T.load_truth("h200_mma_truth", data_dir / "numerics")
    for kind in sorted(T.MMA_KINDS):
        d = z[f"k{kind}_d"][:128]
        a, b, c = T.mma_tile_inputs(kind, T.TRUTH_SEED, 0, d.shape[0])
        got = N.mma_m16n8k32_f8(a, b, c, d_type="f16")
        assert np.array_equal(got, d), f"H200 family {kind}: {_first_bad(got, d)}"


@pytest.mark.parametrize("family", FAMILIES)
def test_e4m3_f16_form_equals_the_shipped_hopper_model(family):
    a, b, c = T.tc_tile_inputs("mma.m16n8k32.f16.e4m3.e4m3", family, 99, 0, 64)
    assert np.array_equal(N.mma_m16n8k32_f8(a, b, c, d_type="f16"), N.mma_m16n8k32_e4m3_f16(a, b, c, "hopper"))


F16_FORM = "mma.m16n8k16.f16.f16.f16"
FLOOR_RULE = "zero_sign=underflow exp=floor"  # the candidate row of the retired first f16 HMMA model


def test_f16_form_reproduces_the_h100_subnormal_tiles(data_dir):
    """The 67 random f16 tiles on which the two f16 HMMA rules differ, measured on an H100: the shipped row (exponents
    clamped at -14, zero results +0) gives the GPU's bits; the floor-exponent / signed-underflow rule misses."""
    z = np.load(data_dir / "numerics" / "hopper_hmma_subnormal.npz")
    assert "H100" in json.loads(str(z["meta"]))["gpu"]
    a, b, c, d = z["a"], z["b"], z["c"], z["d"]
    got = N.mma_m16n8k16_f16_f16(a, b, c)
    assert np.array_equal(got, d), _first_bad(got, d)
    assert np.array_equal(N.tc_mma(F16_FORM, a, b, c), d)
    form = TC.get_form(F16_FORM)
    floor_miss = TC.run_form(dict(candidates(form))[FLOOR_RULE], a, b, c) != d
    assert floor_miss.any(axis=(1, 2)).all()  # every kept tile is one where the rules differ
    assert int(floor_miss.sum()) == 68
    exp_miss = np.count_nonzero(TC.run_form(TC.with_step(form, exp_rule="floor"), a, b, c) != d)
    sign_miss = np.count_nonzero(TC.run_form(TC.with_step(form, zero_sign="underflow"), a, b, c) != d)
    assert (exp_miss, sign_miss) == (17, 51)  # each rule on its own is refuted


@pytest.mark.parametrize("family", FAMILIES)
def test_fp8_hopper_model_is_blind_to_the_f16_subnormal_rules(family):
    """mma.py's Hopper e4m3 model needs neither rule: e4m3 values are f16 normals and its HMMA sums never underflow."""
    form = TC.get_form("mma.m16n8k32.f16.e4m3.e4m3")
    a, b, c = T.tc_tile_inputs(form.name, family, 98, 0, 64)
    floor_row = TC.with_step(form, exp_rule="floor", zero_sign="underflow")
    assert np.array_equal(TC.run_form(floor_row, a, b, c), N.mma_m16n8k32_e4m3_f16(a, b, c, "hopper"))


# ---------------------------------------------------------------- model vs the exact reference and MMA-Sim
@pytest.mark.parametrize("form", WGMMA_FORMS)
def test_wgmma_model_matches_fraction_reference(form):
    """Six sampled outputs of one m64 tile per family (the reference is slow)."""
    spec = TC.get_form(form)
    rng = np.random.default_rng(7)
    for family in FAMILIES:
        a, b, c = T.tc_tile_inputs(form, family, 0xC0FFEE, 3, 1)
        got = N.tc_mma(spec, a, b, c)
        pos = [(0, int(rng.integers(spec.m)), int(rng.integers(spec.n))) for _ in range(6)]
        want = reference(spec, a, b, c, pos)
        for p in pos:
            assert got[p] == want[p], f"{form}, family {family}, output {p}: model {got[p]:#x}, reference {want[p]:#x}"


@pytest.mark.parametrize("form", thinned(list(MMA_FORMS), 4))
def test_mma_model_matches_fraction_reference(form):
    spec = TC.get_form(form)
    for family in FAMILIES:
        a, b, c = T.tc_tile_inputs(form, family, 0xC0FFEE, 5, 1)
        got, want = N.tc_mma(spec, a, b, c), reference(spec, a, b, c)
        assert np.array_equal(got, want), f"{form}, family {family}: {_first_bad(got, want)}"


@pytest.mark.parametrize("form", ["wgmma.m64n8k32.f32.e4m3.e5m2", "wgmma.m64n8k16.f16.f16.f16",
                                  "wgmma.m64n8k16.f32.bf16.bf16"])
def test_candidate_parameters_match_fraction_reference(form):
    """Every candidate row computes the same in the engine and in the reference (the checker's scores are sound)."""
    rng = np.random.default_rng(11)
    tiles = [T.tc_tile_inputs(form, fam, 0xBEEF, 0, 1) for fam in (0, 3, 4, 6, 8)]
    for label, cand in candidates(TC.get_form(form)):
        for a, b, c in tiles:
            pos = [(0, int(rng.integers(cand.m)), int(rng.integers(cand.n))) for _ in range(2)]
            got, want = TC.run_form(cand, a, b, c), reference(cand, a, b, c, pos)
            for p in pos:
                assert got[p] == want[p], f"{form} candidate {label}, output {p}: {got[p]:#x} vs {want[p]:#x}"


@pytest.mark.parametrize("form", WGMMA_FORMS)
def test_wgmma_model_matches_published_mmasim(form):
    """The shipped rows are MMA-Sim's published Hopper parameters: same bits on random finite and special tiles."""
    torch = pytest.importorskip("torch")
    sim = pytest.importorskip("mmasim.nv_ptx.sim")
    spec = TC.get_form(form)
    op = sim.WGMMA("Hopper", f"m64n8k{spec.k}.{spec.c}.{spec.a}.{spec.b}")
    tdt = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "f16": torch.float16, "bf16": torch.bfloat16,
           "f32": torch.float32}
    signed = {1: np.uint8, 2: np.int16, 4: np.int32}
    for family in (0, 1, 2, 3, 4, 6, 7):
        a, b, c = T.tc_tile_inputs(form, family, 0x5EED, 0, 1)
        x = [torch.from_numpy(v[0].view(signed[v.dtype.itemsize]).copy()).view(tdt[t])
             for v, t in ((a, spec.a), (b, spec.b), (c, spec.c))]
        want = op(*x).view({2: torch.int16, 4: torch.int32}[c.dtype.itemsize]).numpy().view(c.dtype)
        got = N.tc_mma(spec, a, b, c)[0]
        assert np.array_equal(got, want), f"{form}, family {family}: {_first_bad(got, want)}"


@pytest.mark.parametrize("form", ["mma.m16n8k16.f32.f16.f16", "mma.m16n8k16.f32.bf16.bf16",
                                  "mma.m16n8k16.f16.f16.f16"])
def test_mma_model_matches_published_mmasim(form):
    torch = pytest.importorskip("torch")
    sim = pytest.importorskip("mmasim.nv_ptx.sim")
    spec = TC.get_form(form)
    op = sim.MMA("Hopper", f"m16n8k16.{spec.c}.{spec.a}.{spec.b}.{spec.c}")
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    signed = {2: (np.int16, torch.int16), 4: (np.int32, torch.int32)}
    for family in FAMILIES:
        a, b, c = T.tc_tile_inputs(form, family, 0x5EED, 0, 2)
        for t in range(2):
            x = [torch.from_numpy(v[t].view(signed[v.dtype.itemsize][0]).copy()).view(tdt[ty])
                 for v, ty in ((a, spec.a), (b, spec.b), (c, spec.c))]
            want = op(*x).view(signed[c.dtype.itemsize][1]).numpy().view(c.dtype)
            got = N.tc_mma(spec, a[t], b[t], c[t])
            assert np.array_equal(got, want), f"{form}, family {family}: {_first_bad(got, want)}"


# ---------------------------------------------------------------- hand-worked facts of the shipped rows
def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def test_fp8_f32_accumulator_keeps_14_bits():
    """FP8 wgmma with an f32 accumulator: C is cut to 13 fraction bits below the largest addend, the result to e8m13."""
    a = np.zeros((64, 32), np.uint8)
    b = np.zeros((32, 8), np.uint8)
    c = _f32(np.full((64, 8), 1 + 2.0**-13 + 2.0**-14 + 2.0**-20))
    d = N.wgmma_m64nNk32(a, b, c).view(np.float32)
    assert np.all(d == np.float32(1 + 2.0**-13))  # 14 significant bits survive, cut toward zero
    a[:, 0] = 0x38  # 1.0
    b[0, :] = 0x38
    c = _f32(np.full((64, 8), -(1 + 2.0**-13 + 2.0**-14)))
    d = N.wgmma_m64nNk32(a, b, c).view(np.float32)
    assert np.all(d == np.float32(-(2.0**-13)))  # C's 2^-14 bit is cut at the alignment, before the cancellation


def test_fp8_f16_accumulator_rounds_to_nearest():
    a = np.zeros((64, 32), np.uint8)
    b = np.zeros((32, 8), np.uint8)
    a[:, 0], b[0, :] = 0x38, 0x38  # 1 * 1
    c = np.full((64, 8), 0x6400, np.uint16)  # 1024: 1024 + 1 -> 1025 (f16 ulp 1)
    d = N.wgmma_m64nNk32(a, b, c, d_type="f16")
    assert np.all(d == 0x6401)


def test_nan_and_inf_rules():
    a = np.zeros((1, 64, 32), np.uint8)
    b = np.zeros((1, 32, 8), np.uint8)
    c = np.zeros((1, 64, 8), np.uint32)
    a[0, 0, 5] = 0x7F  # e4m3 NaN in row 0 (times zero): the whole row is NaN
    b[0, 3, 2] = 0x7C  # e5m2 +inf in column 2, times a[., 3] = 0: NaN
    c[0, 1, 1] = 0x7F800000  # +inf C passes through
    d = N.wgmma_m64nNk32(a, b, c, b_type="e5m2")
    assert np.all(d[0, 0] == 0x7FFFFFFF) and np.all(d[0, :, 2] == 0x7FFFFFFF)
    assert d[0, 1, 1] == 0x7F800000 and d[0, 2, 3] == 0


def test_fp8_f32_lowering_adds_c_last_with_one_rounding():
    """e4m3 -> f32: two HMMA.F32 steps from +0, then FADD: C = 2^24 plus 1 * 1 rounds to even (stays 2^24)."""
    a = np.zeros((16, 32), np.uint8)
    b = np.zeros((32, 8), np.uint8)
    a[:, 0], b[0, :] = 0x38, 0x38
    c = np.full((16, 8), 2.0**24, np.float32).view(np.uint32)
    d = N.mma_m16n8k32_f8(a, b, c).view(np.float32)
    assert np.all(d == np.float32(2.0**24))
    c = np.full((16, 8), 2.0**24 + 2, np.float32).view(np.uint32)  # odd last bit: the tie goes up
    assert np.all(N.mma_m16n8k32_f8(a, b, c).view(np.float32) == np.float32(2.0**24 + 4))


def test_bf16_f32_step_truncates():
    """m16n8k16 bf16 -> f32: one fused step, the sum cut toward zero to 24 bits (C = 1, product 2^-24 is lost)."""
    a = np.zeros((16, 16), np.uint16)
    b = np.zeros((16, 8), np.uint16)
    a[:, 0] = 0x3F80  # 1.0
    b[0, :] = 0x3380  # 2^-24
    c = np.full((16, 8), 1.0, np.float32).view(np.uint32)
    d = N.mma_m16n8k16_f32(a, b, c, ab_type="bf16").view(np.float32)
    assert np.all(d == np.float32(1.0))
    c = np.full((16, 8), -1.0, np.float32).view(np.uint32)
    d = N.mma_m16n8k16_f32(a, b, c, ab_type="bf16").view(np.float32)
    assert np.all(d == np.float32(-(1 - 2.0**-24)))  # exact: -1 + 2^-24 needs 24 bits


@pytest.mark.parametrize("spread", [42, 400])
def test_max_exponent_sum_by_matrix_product_is_the_direct_maximum(spread):
    """The engine's step finds each output's largest product exponent through one matrix product where the exponents
    lie close enough (spread 42: up to 83 apart, the product's reach) and through the (T, m, n, g) sums where they do
    not (400); either equals the direct maximum, with dead operands (zero or not finite) and whole dead rows."""
    rng = np.random.default_rng(spread)
    for g in (1, 16, 32, 63):
        ea = rng.integers(-spread, spread, (9, 16, g))
        eb = rng.integers(-spread, spread, (9, 8, g))
        live_a, live_b = rng.random(ea.shape) < 0.7, rng.random(eb.shape) < 0.7
        live_a[0, 3], live_b[1, 5] = False, False
        direct = (np.where(live_a, ea, TC._DEAD)[:, :, None, :] + np.where(live_b, eb, TC._DEAD)[:, None, :, :]).max(-1)
        got = TC._max_exponent_sum(ea, eb, live_a, live_b)
        pair = (live_a[:, :, None, :] & live_b[:, None, :, :]).any(-1)
        assert np.array_equal(got[pair], direct[pair]), g
        assert (got[~pair] < TC._NONE).all() and (~pair).any()


# ---------------------------------------------------------------- API
def test_tf32_codes_are_the_top_19_bits_of_an_f32_word():
    """tf32 decodes an f32 word's top 19 bits (the low 13 dropped, as the tensor core reads it), encodes values
    with at most 10 fraction bits as f32 words with those bits zero, refuses any other value, and writes NaN as
    0x7fffe000."""
    fmt = TC.FORMATS["tf32"]
    rng = np.random.default_rng(4)
    words = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):  # signalling NaN words
        want = (words & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    got = TC.decode_codes(words, fmt)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])
    np.testing.assert_array_equal(TC.values_of(words[:64], fmt)[~np.isnan(want[:64])], want[:64][~np.isnan(want[:64])])
    kept = words & np.uint32(0xFFFFE000)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(TC.encode_values(want[finite], fmt), kept[finite])
    assert int(TC.encode_values(np.array([np.nan]), fmt)[0]) == 0x7FFFE000 == fmt.nan
    with pytest.raises(TcforgeError, match="not all exactly representable in tf32"):
        TC.encode_values(np.array([1.0 + 2.0**-11]), fmt)


def test_any_n_and_leading_dims():
    a, b, c = T.tc_tile_inputs("wgmma.m64n8k32.f32.e4m3.e4m3", 1, 3, 0, 32)
    b32 = np.concatenate([b[0:4], b[4:8], b[8:12], b[12:16]], axis=-1)  # (4, 32, 32): n = 32 from four n8 tiles
    c32 = np.concatenate([c[0:4], c[4:8], c[8:12], c[12:16]], axis=-1)
    d32 = N.wgmma_m64nNk32(a[0:4], b32, c32)
    for q in range(4):
        assert np.array_equal(d32[..., 8 * q: 8 * q + 8], N.wgmma_m64nNk32(a[0:4], b[4 * q: 4 * q + 4],
                                                                           c[4 * q: 4 * q + 4]))
    d = N.wgmma_m64nNk32(a.reshape(4, 8, 64, 32), b.reshape(4, 8, 32, 8), c.reshape(4, 8, 64, 8))
    assert d.shape == (4, 8, 64, 8)
    assert np.array_equal(d.reshape(32, 64, 8), N.wgmma_m64nNk32(a, b, c))


def test_wgmma_bad_arguments():
    a = np.zeros((64, 32), np.uint8)
    b = np.zeros((32, 8), np.uint8)
    c = np.zeros((64, 8), np.uint32)
    with pytest.raises(TcforgeError, match="a_type"):
        N.wgmma_m64nNk32(a, b, c, a_type="e3m2")
    with pytest.raises(TcforgeError, match="d_type"):
        N.wgmma_m64nNk32(a, b, c, d_type="bf16")
    with pytest.raises(UnsupportedError, match="sm_90a"):
        N.wgmma_m64nNk32(a, b, c, model="ada")
    with pytest.raises(TcforgeError, match="unknown model"):
        N.wgmma_m64nNk32(a, b, c, model="volta")
    with pytest.raises(TcforgeError, match="c: expected dtype uint16"):
        N.wgmma_m64nNk32(a, b, c, d_type="f16")
    with pytest.raises(TcforgeError, match="N must be a multiple of 8"):
        N.wgmma_m64nNk32(a, np.zeros((32, 12), np.uint8), np.zeros((64, 12), np.uint32))
    with pytest.raises(TcforgeError, match="leading dims"):
        N.wgmma_m64nNk32(a[None], b[None], np.zeros((2, 64, 8), np.uint32))
    with pytest.raises(TcforgeError, match="f32 only"):
        N.wgmma_m64nNk16(np.zeros((64, 16), np.uint16), np.zeros((16, 8), np.uint16), np.zeros((64, 8), np.uint16),
                         ab_type="bf16", d_type="f16")
    with pytest.raises(TcforgeError, match="unknown form"):
        N.tc_mma("wgmma.m64n8k64.f32.e4m3.e4m3", a, b, c)


def test_mma_bad_arguments():
    a = np.zeros((16, 16), np.uint16)
    b = np.zeros((16, 8), np.uint16)
    c = np.zeros((16, 8), np.uint32)
    with pytest.raises(TcforgeError, match="ab_type"):
        N.mma_m16n8k16_f32(a, b, c, ab_type="tf32")
    with pytest.raises(UnsupportedError):
        N.mma_m16n8k16_f32(a, b, c, model="ada")
    with pytest.raises(TcforgeError, match="b: expected shape"):
        N.mma_m16n8k16_f32(a, np.zeros((16, 16), np.uint16), np.zeros((16, 16), np.uint32))
    with pytest.raises(TcforgeError, match="a: expected dtype uint8"):
        N.mma_m16n8k32_f8(a, b, c)
    with pytest.raises(TcforgeError, match="b_type"):
        N.mma_m16n8k32_f8(np.zeros((16, 32), np.uint8), np.zeros((32, 8), np.uint8), c, b_type="f16")


# ---------------------------------------------------------------- the CUDA generator's host twin, the live GPU
def test_cuda_generator_host_twin_matches_numpy(tmp_path):
    """wgmma_kernels.cu built with -DTC_HOST_TWIN generates the same inputs as tc_tile_inputs (every form, family)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed (the host twin is built from tools/truth/wgmma_kernels.cu)")
    exe = tmp_path / "twin"
    subprocess.run([nvcc, "-DTC_HOST_TWIN", "-O2", "-x", "cu", str(REPO / "tools" / "truth" / "wgmma_kernels.cu"),
                    "-o", str(exe)], check=True, capture_output=True)
    for index, form in enumerate(TC.FORM_NAMES):
        spec = TC.get_form(form)
        fa, fb, fc = (TC.FORMATS[x] for x in (spec.a, spec.b, spec.c))
        for family in FAMILIES:
            n, start = 3, 12000
            args = [TC.FORMAT_IDS[spec.a], TC.FORMAT_IDS[spec.b], TC.FORMAT_IDS[spec.c], family, spec.m, spec.n,
                    spec.k, T.TRUTH_SEED, T.tc_stream(index, family), start, n]
            raw = subprocess.run([str(exe), *map(str, args)], check=True, capture_output=True).stdout
            na, nb = n * spec.m * spec.k * fa.nbytes, n * spec.k * spec.n * fb.nbytes
            got = (np.frombuffer(raw[:na], fa.dtype), np.frombuffer(raw[na: na + nb], fb.dtype),
                   np.frombuffer(raw[na + nb:], fc.dtype))
            want = T.tc_tile_inputs(form, family, T.TRUTH_SEED, start, n)
            for g, w in zip(got, want, strict=True):
                assert np.array_equal(g, w.reshape(-1)), f"{form}, family {family}"


@pytest.mark.gpu
def test_live_measurement_matches_packed_truth(truth, tmp_path):
    """On a Hopper GPU: the first 256 tiles per family of two forms, measured now, equal the packed truth."""
    pytest.importorskip("cupy")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is needed to build tools/truth/wgmma_kernels.cu")
    from tools.truth import tc_truth

    backend = tc_truth.CupyTC(tc_truth.get_cubin(tmp_path / "nocarry", tmp_path)[0])
    for name, section in (("wgmma.m64n8k32.f32.e4m3.e4m3", "wgmma"), ("mma.m16n8k16.f32.bf16.bf16", "hmma_f32")):
        _measured(truth, name)
        res: dict = {}
        tc_truth.section(backend, res, section, tc_truth.BLOCK_TILES, int(truth["seed"]))
        got = res[f"tc_{section}"]
        for family in FAMILIES:
            key = T.tc_key(name, family, "sha")
            assert np.array_equal(got[key][0], truth[key][0]), f"{name}, family {family}"



# ---------------------------------------------------------------- the fp8 GEMM model (tcforge.gemm.matmul on e4m3)
GEMM_FP8_FILE = "gemm_fp8_outputs.npz"
GEMM_FP8_HOWTO = ("run `PYTHONPATH=src:. python3 -m tools.truth.gemm_fp8_check run --out DIR` on an H100/H200 and "
                  "copy DIR/gemm_fp8_outputs.npz to tests/data/numerics")


def _e4m3(rng, shape, scale=2.0) -> np.ndarray:
    import ml_dtypes

    return np.clip(rng.standard_normal(shape) * scale, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


@pytest.mark.parametrize("mode", TC.GEMM_FP8_MODES)
def test_gemm_fp8_chains_the_wgmma_form(mode):
    """The GEMM model is tc_mma chained over k32 steps: fast onto one accumulator, promote per 128 of K into f32."""
    rng = np.random.default_rng(5)
    a, b = _e4m3(rng, (64, 288)), _e4m3(rng, (288, 16))
    a[3, 7], b[100, 2] = 0x7E, 0xFE  # +448, -448
    pad_a, pad_b = np.zeros((64, 384), np.uint8), np.zeros((384, 16), np.uint8)
    pad_a[:, :288], pad_b[:288] = a, b
    c = np.zeros((64, 16), np.uint32)
    tot = np.zeros((64, 16), np.float32)
    for s in range(384 // 32):
        ks = slice(32 * s, 32 * s + 32)
        if mode == "promote" and s % 4 == 0:
            c = np.zeros((64, 16), np.uint32)
        c = TC.tc_mma("wgmma.m64n8k32.f32.e4m3.e4m3", pad_a[:, ks], pad_b[ks], c)
        if mode == "promote" and s % 4 == 3:
            tot = tot + c.view(np.float32)
    want = c.view(np.float32) if mode == "fast" else tot
    got = TC.gemm_fp8_acc(a, b, mode, rows_per_pass=24)
    assert np.array_equal(got.astype(np.float32).view(np.uint32), want.view(np.uint32))
    scaled = (want * np.float32(np.float32(0.75) * np.float32(1.25))).astype(np.float32)
    assert np.array_equal(TC.gemm_fp8(a, b, 0.75, 1.25, "fp32", mode), scaled.view(np.uint32))


@pytest.mark.parametrize("k", [32, 100, 128])
def test_gemm_fp8_promote_equals_fast_within_one_stage(k):
    """Up to 128 of K (one ring stage) there is nothing to promote: both modes give the same bits."""
    rng = np.random.default_rng(k)
    a, b = _e4m3(rng, (40, k)), _e4m3(rng, (k, 24))
    for out in TC.GEMM_OUT_DTYPES:
        assert np.array_equal(TC.gemm_fp8(a, b, 0.5, 3.0, out, "fast"), TC.gemm_fp8(a, b, 0.5, 3.0, out, "promote"))


def test_gemm_fp8_near_float64():
    """Benign inputs: within the 13-bit steps' bound of the exact product, promotion closer than fast accumulation."""
    rng = np.random.default_rng(7)
    a, b = _e4m3(rng, (64, 1024)), _e4m3(rng, (1024, 48))
    va, vb = TC.values_of(a, TC.FORMATS["e4m3"]), TC.values_of(b, TC.FORMATS["e4m3"])
    exact, mag = va @ vb, np.abs(va) @ np.abs(vb)
    err = {}
    for mode in TC.GEMM_FP8_MODES:
        acc = TC.gemm_fp8_acc(a, b, mode)
        # each k32 step cuts its 33 addends to 13 bits below the largest (|.| <= the running sum of |products|)
        assert np.all(np.abs(acc - exact) <= (1024 // 32) * 34 * 2.0**-13 * mag)
        err[mode] = np.linalg.norm(acc - exact) / np.linalg.norm(exact)
    assert err["promote"] < err["fast"] < 1e-2
    assert err["promote"] < 2e-4


def test_gemm_fp8_epilogue_rounds_and_flushes():
    """Epilogue: f32 product by sa * sb (subnormal results flushed, --use_fast_math), then cvt.rn to bf16 / fp16."""
    import ml_dtypes

    acc = np.array([1.0, -3.0, 2.0**-100, 1e30, 65520.0, np.nan, 1.0 + 2.0**-8])
    f32 = TC.gemm_fp8_epilogue(acc, 2.0**-30, 1.0, "fp32").view(np.float32)
    assert f32[2] == 0 and f32[0] == np.float32(2.0**-30)  # 2^-130 is subnormal: flushed
    bf = TC.gemm_fp8_epilogue(acc, 1.0, 1.0, "bf16")
    want = acc.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    assert np.array_equal(bf[:5], want[:5]) and bf[5] == 0x7FFF and bf[6] == 0x3F80  # a tie to even
    f16 = TC.gemm_fp8_epilogue(acc, 1.0, 1.0, "fp16")
    assert f16[3] == 0x7C00 and f16[4] == 0x7C00 and f16[5] == 0x7FFF  # overflow to inf (65520 rounds up)
    with pytest.raises(TcforgeError, match="out_dtype"):
        TC.gemm_fp8_epilogue(acc, 1.0, 1.0, "f8")
    with pytest.raises(TcforgeError, match="mode"):
        TC.gemm_fp8(np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.uint8), 1.0, 1.0, "fp32", "slow")
    with pytest.raises(TcforgeError, match="uint8"):
        TC.gemm_fp8_acc(np.zeros((2, 3), np.uint8), np.zeros((4, 2), np.uint8))


def test_gemm_fp8_check_plumbing(tmp_path, capsys):
    """The device script's file and comparison on the CPU: the model's own outputs pass, one flipped bit fails."""
    from tools.truth import gemm_fp8_check as G

    path = G.run(tmp_path, 3, ["nan_bf16", "tiny_fp32"], fake=True)
    assert G.check(path) == 0
    z = dict(np.load(path))
    z["tiny_fp32__promote"] = z["tiny_fp32__promote"].copy()
    z["tiny_fp32__promote"][5, 6] ^= 1
    bad = tmp_path / "bad.npz"
    np.savez(bad, **z)
    assert G.check(bad) == 1
    assert "(5, 6): got" in capsys.readouterr().out


def test_gemm_fp8_matches_the_device(data_dir):
    """The H100's outputs of tcforge.gemm.matmul (auto and promote, unsplit) equal the model's bit for bit."""
    path = data_dir / "numerics" / GEMM_FP8_FILE
    if not path.is_file():
        pytest.skip(f"no device outputs of the fp8 GEMM yet ({GEMM_FP8_FILE} absent): {GEMM_FP8_HOWTO}")
    from tools.truth import gemm_fp8_check as G

    meta = json.loads(str(np.load(path)["meta"]))
    assert not meta["fake"], f"{GEMM_FP8_FILE} holds a CPU fake run, not device outputs"
    assert G.check(path) == 0
