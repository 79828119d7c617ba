"""The emulators of tcforge.numerics against the committed H200 truth (tests/data/numerics/h200_*.npz, made by
tools/truth/generate.py): zero mismatches expected; a failure reports the mismatch count and the first indices. Also
tcforge.numerics.truth itself (the RNG, the family generators, digests, bad input) and, on a GPU, a slice of the
truth measured again live."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.marks import thinned

import tcforge.numerics as N
from tcforge.errors import TcforgeError
from tcforge.numerics import truth as T

KINDS = sorted(T.MMA_KINDS)
CHUNK_TILES = 4096
TOOLS = Path(__file__).resolve().parents[2] / "tools" / "truth"


@pytest.fixture(scope="module")
def mma_truth(data_dir):
    return T.load_truth("h200_mma_truth", data_dir / "numerics")


@pytest.fixture(scope="module")
def twin(data_dir):
    return T.load_truth("h200_rng_twin", data_dir / "numerics")


@pytest.fixture(scope="module")
def cvt(data_dir):
    return T.load_truth("h200_cvt", data_dir / "numerics")


@pytest.fixture(scope="module")
def ew(data_dir):
    return T.load_truth("h200_elementwise", data_dir / "numerics")


@pytest.fixture(scope="module")
def apx(data_dir):
    return T.load_truth("h200_approx", data_dir / "numerics")


def _report(bad: np.ndarray, what: str) -> str:
    idx = np.flatnonzero(bad)
    return f"{what}: {idx.size} mismatches; first indices {idx[:10].tolist()}"


# ---------------------------------------------------------------- RNG twin (CUDA == numpy)
def test_rng_words_match_the_cuda_twin(twin):
    for key, words in twin.items():
        if key.startswith("words_stream"):
            stream = int(key.removeprefix("words_stream"))
            ref = T.rng_u32(T.TRUTH_SEED, stream, np.arange(1000, 1000 + words.size, dtype=np.uint64))
            assert np.array_equal(ref, words), _report(ref != words, key)


@pytest.mark.parametrize("kind", KINDS)
def test_mma_inputs_match_the_cuda_twin(twin, kind):
    ga, gb, gc = twin[f"k{kind}_gpu_a"], twin[f"k{kind}_gpu_b"], twin[f"k{kind}_gpu_c"]
    a, b, c = T.mma_tile_inputs(kind, T.TRUTH_SEED, 0, ga.shape[0])
    bad = (a != ga).any(axis=(1, 2)) | (b != gb).any(axis=(1, 2)) | (c != gc).any(axis=(1, 2))
    assert not bad.any(), _report(bad, f"kind {kind} tiles whose inputs differ")


# ---------------------------------------------------------------- mma
@pytest.mark.parametrize("kind", KINDS)
def test_mma_hopper_full_tiles(mma_truth, kind):
    d = mma_truth[f"k{kind}_d"]
    a, b, c = T.mma_tile_inputs(kind, T.TRUTH_SEED, 0, d.shape[0])
    got = N.mma_m16n8k32_e4m3_f16(a, b, c, "hopper")
    bad = (got != d).any(axis=(1, 2))
    detail = ""
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        r, col = np.argwhere(got[t] != d[t])[0]
        detail = f"; tile {t} [{r},{col}]: got {got[t, r, col]:#06x}, H200 {d[t, r, col]:#06x}"
    assert not bad.any(), _report(bad, f"kind {kind} ({T.MMA_KINDS[kind]}) tiles") + detail


@pytest.mark.parametrize("kind", thinned(KINDS, 3))
def test_mma_hopper_all_tile_digests(mma_truth, kind):
    digests = mma_truth[f"k{kind}_digest"]
    bad = np.zeros(digests.size, dtype=bool)
    for start in range(0, digests.size, CHUNK_TILES):
        n = min(CHUNK_TILES, digests.size - start)
        a, b, c = T.mma_tile_inputs(kind, T.TRUTH_SEED, start, n)
        got = T.tile_digests(N.mma_m16n8k32_e4m3_f16(a, b, c, "hopper"))
        bad[start : start + n] = got != digests[start : start + n]
    assert not bad.any(), _report(bad, f"kind {kind} ({T.MMA_KINDS[kind]}) of {digests.size} tiles")


def test_mma_truth_covers_tens_of_thousands_of_tiles_per_family(mma_truth):
    assert sorted(mma_truth["kinds"].tolist()) == KINDS
    assert all(mma_truth[f"k{k}_digest"].size == int(mma_truth["tiles"]) >= 32768 for k in KINDS)


# ---------------------------------------------------------------- conversions
def test_cvt_e4m3x2_from_each_half_exhaustive(cvt):
    v = np.arange(65536, dtype=np.uint32)
    lo = N.cvt_rn_satfinite_e4m3x2_f16x2(v)
    hi = N.cvt_rn_satfinite_e4m3x2_f16x2(v << np.uint32(16))
    assert np.array_equal(lo, cvt["e4m3x2_from_lo"]), _report(lo != cvt["e4m3x2_from_lo"], "low half")
    assert np.array_equal(hi, cvt["e4m3x2_from_hi"]), _report(hi != cvt["e4m3x2_from_hi"], "high half")
    single = N.f16_to_e4m3_satfinite(v.astype(np.uint16))
    assert np.array_equal(single, (cvt["e4m3x2_from_lo"] & 0xFF).astype(np.uint8))


def test_cvt_e4m3x2_pairing_random_words(cvt):
    # the device checked all 2^32 words against (high table's upper byte | low table's lower byte)
    assert int(cvt["pair_bad_count"]) == 0
    x = T.rng_u32(T.TRUTH_SEED, 0x400, np.arange(1 << 18, dtype=np.uint64))
    want = (cvt["e4m3x2_from_hi"][x >> 16] & 0xFF00) | (cvt["e4m3x2_from_lo"][x & 0xFFFF] & 0x00FF)
    got = N.cvt_rn_satfinite_e4m3x2_f16x2(x)
    assert np.array_equal(got, want.astype(np.uint16)), _report(got != want, "pairs")


def test_cvt_f16x2_from_e4m3x2_exhaustive(cvt):
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    got = N.cvt_rn_f16x2_e4m3x2(codes)
    assert np.array_equal(got, cvt["f16x2_from_e4m3x2"]), _report(got != cvt["f16x2_from_e4m3x2"], "decode")
    single = N.e4m3_to_f16(np.arange(256, dtype=np.uint8))
    assert np.array_equal(single, (cvt["f16x2_from_e4m3x2"][:256] & 0xFFFF).astype(np.uint16))


# ---------------------------------------------------------------- f16 / f32 element-wise ops
F16_OPS = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "max": 2, "min": 2, "neg": 1, "abs": 1}


def _check_ew(ew, name: str, got: np.ndarray) -> None:
    head = ew[f"{name}_head"]
    bad_head = got[: head.size] != head
    digests = T.chunk_digests(got, int(ew["chunk"]))
    bad_chunks = np.flatnonzero(digests != ew[f"{name}_digest"])
    msg = _report(bad_head, f"{name}: first {head.size} results")
    if bad_head.any():
        i = int(np.flatnonzero(bad_head)[0])
        msg += f"; element {i}: got {int(got[i]):#x}, H200 {int(head[i]):#x}"
    assert not bad_head.any() and bad_chunks.size == 0, f"{msg}; mismatching digest chunks {bad_chunks[:10].tolist()}"


@pytest.mark.parametrize("op", list(F16_OPS))
def test_f16_scalar_ops(ew, op):
    n = int(ew["n_f16"])
    args = [T.f16_operands(T.TRUTH_SEED, T.STREAM_F16 + i, n) for i in range(F16_OPS[op])]
    _check_ew(ew, f"f16_{op}", getattr(N, f"f16_{op}")(*args))


@pytest.mark.parametrize("op", list(F16_OPS))
def test_f16x2_packed_ops(ew, op):
    n = int(ew["n_f16x2"])
    args = [T.f16_operands(T.TRUTH_SEED, T.STREAM_F16X2 + i, 2 * n).view(np.uint32) for i in range(F16_OPS[op])]
    _check_ew(ew, f"f16x2_{op}", getattr(N, f"f16x2_{op}")(*args))


def test_cvt_rn_f16_f32(ew):
    x = T.f32_operands(T.TRUTH_SEED, T.STREAM_F32, int(ew["n_f32"]))
    _check_ew(ew, "cvt_f16_f32", N.f32_to_f16_rn(x.view(np.float32)))


@pytest.mark.parametrize("op", ["mul", "add"])
def test_f32_ftz_ops(ew, op):
    x, y = (T.f32_operands(T.TRUTH_SEED, T.STREAM_F32 + i, int(ew["n_f32"])).view(np.float32) for i in range(2))
    fn = N.f32_mul_ftz if op == "mul" else N.f32_add_ftz
    _check_ew(ew, f"{op}_ftz_f32", np.asarray(fn(x, y)).view(np.uint32))


def test_f32_mul_ftz_at_the_underflow_edge(apx):
    """mul.ftz.f32 near 2^-126: the H200 rounds to 24 bits with unbounded exponent, then flushes below 2^-126."""
    n = int(apx["edge_n"])
    a, b = T.edge_operands(T.TRUTH_SEED, n)
    got = np.asarray(N.f32_mul_ftz(a.view(np.float32), b.view(np.float32))).view(np.uint32)
    head, crafted = apx["edge_mul_head"], apx["edge_mul_crafted"]
    bad = np.concatenate([got[: head.size] != head, got[n - crafted.size :] != crafted])
    digests = T.chunk_digests(got, 1 << 14)
    bad_chunks = np.flatnonzero(digests != apx["edge_mul_digest"])
    msg = _report(bad, "edge products (head, then the 4096 crafted)")
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        i = i if i < head.size else n - crafted.size + (i - head.size)
        msg += f"; pair {i}: {a[i]:#010x} * {b[i]:#010x}"
    assert not bad.any() and bad_chunks.size == 0, f"{msg}; mismatching digest chunks {bad_chunks[:10].tolist()}"


def test_ex2_product_domain_inputs_are_mul_ftz_of_f16_values(apx):
    f16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    x = N.f16_to_f32(f16)
    prod = np.asarray(N.f32_mul_ftz(x, np.full(65536, 0x3FB8AA3B, np.uint32).view(np.float32))).view(np.uint32)
    ok = ~np.isnan(x)  # NaN payloads aside (both canonical), every product must match the device's
    assert np.array_equal(prod[ok], apx["ex2prod_x"][ok]), _report(prod[ok] != apx["ex2prod_x"][ok], "products")


def test_independent_float64_hopper_reference_reproduces_the_h200(mma_truth):
    """tools/truth/tc_truth.py's hopper_mma (a separate float64 statement of the Hopper model) on the full tiles."""
    from tools.truth import tc_truth

    for kind in KINDS:
        d = mma_truth[f"k{kind}_d"][:256]
        with np.errstate(all="ignore"):
            got = tc_truth.hopper_mma(*T.mma_tile_inputs(kind, T.TRUTH_SEED, 0, d.shape[0]))
        bad = (got != d).any(axis=(1, 2))
        assert not bad.any(), _report(bad, f"reference, kind {kind} tiles")


# ---------------------------------------------------------------- tcforge.numerics.truth itself
# The RNG's fixed values, the family generators' invariants, digests and bad input.
def test_mix32_is_a_fixed_bijective_hash():
    x = np.arange(1 << 16, dtype=np.uint32)
    h = T.mix32(x)
    assert np.unique(h).size == x.size
    assert int(T.mix32(np.array([0], np.uint32))[0]) == 0
    # an independent pure-Python statement of the hash (the CUDA twin is proved equal by the device words)
    def py_mix32(v: int) -> int:
        v ^= v >> 16
        v = (v * 0x7FEB352D) & 0xFFFFFFFF
        v ^= v >> 15
        v = (v * 0x846CA68B) & 0xFFFFFFFF
        return v ^ (v >> 16)

    for v in (1, 2, 0xDEADBEEF, 0xFFFFFFFF):
        assert int(T.mix32(np.array([v], np.uint32))[0]) == py_mix32(v)
    key = py_mix32(py_mix32(5) ^ 9)
    assert int(T.rng_u32(5, 9, np.array([77]))[0]) == py_mix32((py_mix32(77 ^ key) + key) & 0xFFFFFFFF)


def test_rng_is_counter_based():
    idx = np.arange(100, 200, dtype=np.uint64)
    whole = T.rng_u32(7, 3, np.arange(0, 300, dtype=np.uint64))
    assert np.array_equal(T.rng_u32(7, 3, idx), whole[100:200])
    assert not np.array_equal(T.rng_u32(7, 4, idx), whole[100:200])
    assert not np.array_equal(T.rng_u32(8, 3, idx), whole[100:200])


def test_tiles_are_regenerated_identically_from_any_start():
    a, b, c = T.mma_tile_inputs(6, 99, 0, 12)
    a2, b2, c2 = T.mma_tile_inputs(6, 99, 5, 7)
    assert np.array_equal(a[5:], a2) and np.array_equal(b[5:], b2) and np.array_equal(c[5:], c2)


@pytest.mark.parametrize("kind", sorted(T.MMA_KINDS))
def test_family_invariants(kind):
    a, b, c = T.mma_tile_inputs(kind, 1, 0, 64)
    assert a.shape == (64, 16, 32) and a.dtype == np.uint8
    assert b.shape == (64, 32, 8) and c.shape == (64, 16, 8) and c.dtype == np.uint16
    nan_codes = ((a & 0x7F) == 0x7F).any() or ((b & 0x7F) == 0x7F).any()
    assert nan_codes == (kind in (4, 8))
    c_special = ((c & 0x7C00) == 0x7C00).any()
    assert c_special == (kind in (4, 8))
    if kind == 5:
        assert np.all((c & 0x7FFF) == 0)


def test_kind5_terms_cancel_exactly():
    import ml_dtypes

    a, b, _ = T.mma_tile_inputs(5, 3, 0, 32)
    av = a.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    bv = b.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    assert np.all(np.einsum("tik,tkj->tij", av, bv) == 0)


def test_digests():
    d = np.zeros((3, 16, 8), np.uint16)
    d[1, 15, 7] = 1
    g = T.tile_digests(d)
    assert g.dtype == np.uint64 and g[0] == g[2] != g[1]
    assert np.array_equal(
        T.chunk_digests(np.arange(8, dtype=np.uint16), 4), T.chunk_digests(np.arange(8, dtype=np.uint16), 4)
    )
    with pytest.raises(TcforgeError, match=r"d: expected"):
        T.tile_digests(np.zeros((2, 8, 16), np.uint16))
    with pytest.raises(TcforgeError, match=r"values: expected"):
        T.chunk_digests(np.arange(10, dtype=np.uint16), 4)


def test_bad_arguments():
    with pytest.raises(TcforgeError, match=r"kind: expected one of"):
        T.mma_tile_inputs(9, 0, 0, 1)
    with pytest.raises(TcforgeError, match=r"start/count"):
        T.mma_tile_inputs(0, 0, -1, 1)
    with pytest.raises(TcforgeError, match=r"name: no truth file"):
        T.load_truth("does_not_exist")


def test_malformed_truth_file(tmp_path):
    (tmp_path / "broken.npz").write_bytes(b"not a zip archive")
    with pytest.raises(TcforgeError, match=r"not a readable \.npz"):
        T.load_truth("broken", tmp_path)


# ---------------------------------------------------------------- on a GPU (sm_90a, CuPy, nvcc)
@pytest.mark.gpu
def test_live_measurement_matches_committed_truth(tmp_path, data_dir):
    pytest.importorskip("cupy")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is needed to build tools/truth/truth_kernels.cu")
    spec = importlib.util.spec_from_file_location("tcforge_truth_generate", TOOLS / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = tmp_path / "out"
    assert (
        gen.main(["--out", str(out), "--carry", str(tmp_path / "nocarry"), "--tiles", "256", "--only", "rng,mma,cvt"])
        == 0
    )
    mma = np.load(out / "mma.npz")
    truth = T.load_truth("h200_mma_truth", data_dir / "numerics")
    for kind in sorted(T.MMA_KINDS):
        assert int(mma[f"k{kind}_twin_bad_tiles"]) == 0
        assert np.array_equal(mma[f"k{kind}_digest"], truth[f"k{kind}_digest"][:256]), f"kind {kind}"
    cvt = np.load(out / "cvt.npz")
    committed = T.load_truth("h200_cvt", data_dir / "numerics")
    for key in ("e4m3x2_from_lo", "e4m3x2_from_hi", "f16x2_from_e4m3x2"):
        assert np.array_equal(cvt[key], committed[key]), key

