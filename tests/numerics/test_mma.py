"""The FP8 mma.sync emulator (`mma.py`, models "ada" and "hopper"): bit for bit against the independent `Fraction`
reference, every shared hardware sample and hand-worked tiles; the Hopper accumulator candidates scored on the H200
truth; the benchmark's plumbing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from numerics_testlib import FAMILIES, SAMPLES, family_tiles, load_published, load_tiles, mismatch_message
from tests.marks import thinned

from tcforge.numerics import MODELS, mma_m16n8k32_e4m3_f16
from tcforge.numerics.bench import main as bench_main
from tcforge.numerics.mma import HOPPER_FRAC_BITS
from tcforge.numerics.mma_reference import mma_reference
from tcforge.numerics.mma_variants import hopper_truncated

SHARED_FILES = ("ada_published_0-999.npz", "h200_published_0-999.npz", "h200_mma_tiles_sample.npz")
ACC_KINDS = (0, 4, 5, 6)  # the H200 truth families the accumulator candidates are scored on
ACC_TILES = 256
ONE, TWO_M5, TWO_M6, TWO_M9, MAX = 0x38, 0x10, 0x08, 0x01, 0x7E  # e4m3 codes of 1, 2^-5, 2^-6, 2^-9, 448
POS_INF, NEG_INF, NAN = 0x7C00, 0xFC00, 0x7FFF


# ---------------------------------------------------------------- fast path vs the Fraction reference
# Two independent implementations of each model agree bit for bit: the vectorised float64 path (`mma.py`) and the
# per-element `Fraction` reference (`mma_reference.py`), on random tiles of every input family.
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", thinned(sorted(FAMILIES), 3))
def test_fast_matches_reference(model: str, kind: int) -> None:
    a, b, c = family_tiles(kind, 3, seed=1)
    got = mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = mma_reference(a, b, c, model)
    assert np.array_equal(got, want), mismatch_message(got, want, f"{model}, family {kind}: fast vs reference")


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_fast_matches_reference_many(model: str, kind: int) -> None:
    a, b, c = family_tiles(kind, 16, seed=2)
    got = mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = mma_reference(a, b, c, model)
    assert np.array_equal(got, want), mismatch_message(got, want, f"{model}, family {kind}: fast vs reference")


def test_families_are_not_degenerate() -> None:
    """The random families reach what they are meant to: NaN, inf, overflow, subnormal and zero results."""
    d = {k: mma_m16n8k32_e4m3_f16(*family_tiles(k, 20, seed=3), "ada") for k in FAMILIES}
    assert np.count_nonzero((d[2] & 0x7FFF) == 0x7C00) > 100
    assert np.count_nonzero(((d[3] & 0x7C00) == 0) & ((d[3] & 0x3FF) != 0)) > 100
    assert np.count_nonzero(d[4] == 0x7FFF) > 100 and np.count_nonzero(d[4] != 0x7FFF) > 100
    assert np.count_nonzero((d[5] & 0x7FFF) == 0) > 10


def test_leading_dims_and_chunking() -> None:
    """Any leading shape (incl. more tiles than one vectorised chunk) gives the same bits as tile-by-tile calls."""
    a, b, c = family_tiles(0, 150, seed=4)
    for model in MODELS:
        whole = mma_m16n8k32_e4m3_f16(a.reshape(3, 50, 16, 32), b.reshape(3, 50, 32, 8), c.reshape(3, 50, 16, 8), model)
        assert whole.shape == (3, 50, 16, 8) and whole.dtype == np.uint16
        single = np.stack([mma_m16n8k32_e4m3_f16(a[t], b[t], c[t], model) for t in range(0, 150, 37)])
        assert np.array_equal(whole.reshape(150, 16, 8)[::37], single)


# ---------------------------------------------------------------- the shared hardware samples
# Every shared hardware sample (1000 + 1000 published vectors, 600 H200 tiles): 0 misses.
@pytest.mark.parametrize(
    ("fname", "model"), [("ada_published_0-999.npz", "ada"), ("h200_published_0-999.npz", "hopper")]
)
def test_published_vectors(fname: str, model: str) -> None:
    a, b, c, want = load_published(SAMPLES / fname)
    assert a.shape[0] == 1000
    got = mma_m16n8k32_e4m3_f16(a, b, c, model)
    assert np.array_equal(got[:, 0, 0], want), mismatch_message(got[:, 0, 0], want, f"{model} vs {fname}")
    # every other output sees only zero products and C = +0
    rest = got.copy()
    rest[:, 0, 0] = 0
    assert not rest.any(), mismatch_message(rest, np.zeros_like(rest), "zero outputs")


@pytest.mark.parametrize("kind", range(6))
def test_h200_tiles_hopper(kind: int) -> None:
    z = load_tiles(SAMPLES / "h200_mma_tiles_sample.npz")
    sel = z["kind"] == kind
    assert sel.sum() == 100
    got = mma_m16n8k32_e4m3_f16(z["a"][sel], z["b"][sel], z["c"][sel], "hopper")
    assert np.array_equal(got, z["d"][sel]), mismatch_message(got, z["d"][sel], f"hopper, family {kind}")


def test_h200_tiles_cover_the_special_values() -> None:
    """The tile sample really exercises what the special-value rules claim (NaN, inf, -0, overflow, subnormals)."""
    z = load_tiles(SAMPLES / "h200_mma_tiles_sample.npz")
    d = z["d"]
    assert np.count_nonzero(d == 0x7FFF) > 100  # canonical NaN
    assert np.count_nonzero((d & 0x7FFF) == 0x7C00) > 100  # +-inf from C and from overflow
    assert np.count_nonzero(((d & 0x7C00) == 0) & ((d & 0x3FF) != 0)) > 100  # subnormal results
    cancel = z["kind"] == 5
    assert np.count_nonzero(z["c"][cancel] == 0x8000) > 100 and np.count_nonzero(d[cancel] == 0) > 100


@pytest.mark.parametrize("fname", SHARED_FILES)
def test_committed_copies_match_shared(fname: str, shared_dir: Path) -> None:
    src = shared_dir / "data" / "numerics" / fname
    digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (src, SAMPLES / fname)]
    assert digest[0] == digest[1], f"tests/data/numerics/shared/{fname} differs from ../shared"


# ---------------------------------------------------------------- which HMMA accumulator the H200 has
# The candidates of `mma_variants` scored on the committed H200 truth (full tiles of families 0, 4, 5, 6). Only the
# shipped one (25 bits below the largest addend, product exponent = sum of the operand exponents) has zero
# mismatches; the failure message of each check is the table of counts.
@pytest.fixture(scope="module")
def truth_tiles(data_dir: Path) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    path = data_dir / "numerics" / "h200_mma_truth.npz"
    if not path.is_file():
        pytest.skip("tests/data/numerics/h200_mma_truth.npz is not present")
    from tcforge.numerics import truth

    z = truth.load_truth("h200_mma_truth", path.parent)
    out = []
    for k in ACC_KINDS:
        a, b, c = truth.mma_tile_inputs(k, truth.TRUTH_SEED, 0, ACC_TILES)
        out.append((a, b, c, z[f"k{k}_d"][:ACC_TILES]))
    return out


def _score(tiles: list[tuple[np.ndarray, ...]], frac_bits: int | None, rule: str) -> list[int]:
    return [int(np.count_nonzero(hopper_truncated(a, b, c, frac_bits, rule) != d)) for a, b, c, d in tiles]


def test_only_the_shipped_accumulator_fits(truth_tiles: list[tuple[np.ndarray, ...]]) -> None:
    table = {(f, r): _score(truth_tiles, f, r) for r in ("operands", "value") for f in (None, 23, 24, 25, 26, 27)}
    text = "; ".join(f"{r} {f if f is not None else 'exact'}: {v}" for (f, r), v in table.items())
    shipped = (HOPPER_FRAC_BITS, "operands")
    assert sum(table[shipped]) == 0, f"shipped accumulator mismatches (families {ACC_KINDS}) -- {text}"
    rejected = [k for k, v in table.items() if k != shipped and sum(v) == 0]
    assert not rejected, f"candidates the data cannot tell from the shipped one: {rejected} -- {text}"


def test_shipped_fast_path_equals_the_candidate(truth_tiles: list[tuple[np.ndarray, ...]]) -> None:
    for a, b, c, d in truth_tiles:
        fast = mma_m16n8k32_e4m3_f16(a, b, c, "hopper")
        slow = hopper_truncated(a, b, c, HOPPER_FRAC_BITS, "operands")
        assert np.array_equal(fast, slow) and np.array_equal(fast, d), (
            f"fast vs candidate {np.count_nonzero(fast != slow)}, fast vs H200 {np.count_nonzero(fast != d)}"
        )


# ---------------------------------------------------------------- hand-built tiles
# Bit values worked out by hand: NaN codes, +-inf and NaN in C, overflow, signed zeros, subnormals, and the rounding
# steps that tell the Ada and Hopper models apart.
def zero_tiles() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros((16, 32), np.uint8), np.zeros((32, 8), np.uint8), np.zeros((16, 8), np.uint16)


def dot(pairs: dict[int, tuple[int, int]], c: int, model: str) -> int:
    """Output (0, 0) of a tile whose row 0 / column 0 hold the given (a, b) codes at positions k."""
    a, b, cc = zero_tiles()
    for k, (x, y) in pairs.items():
        a[0, k], b[k, 0] = x, y
    cc[0, 0] = c
    return int(mma_m16n8k32_e4m3_f16(a, b, cc, model)[0, 0])


@pytest.mark.parametrize("model", ["ada", "hopper"])
def test_nan_codes_poison_their_row_and_column(model: str) -> None:
    a, b, c = zero_tiles()
    a[3, 7] = 0x7F  # NaN in row 3 of A: the whole output row is NaN even though B is all zero
    b[20, 5] = 0xFF  # NaN in column 5 of B
    c[9, 1] = 0x7E01  # NaN payload in C
    d = mma_m16n8k32_e4m3_f16(a, b, c, model)
    want = np.zeros((16, 8), np.uint16)
    want[3, :] = NAN
    want[:, 5] = NAN
    want[9, 1] = NAN
    assert np.array_equal(d, want)


@pytest.mark.parametrize("model", ["ada", "hopper"])
@pytest.mark.parametrize("c", [POS_INF, NEG_INF])
def test_infinite_c_passes_through_finite_products(model: str, c: int) -> None:
    assert dot({0: (MAX, ONE), 9: (ONE, 0xB8)}, c, model) == c
    # a single 448 x 448 product (200704) overflows the Hopper HMMA to +inf: +inf + (-inf) in HADD2 is NaN
    want = NAN if (model == "hopper" and c == NEG_INF) else c
    assert dot({0: (MAX, MAX)}, c, model) == want


def test_overflow_and_opposite_infinity() -> None:
    """16 x 448^2 overflows f16. Hopper: the HMMA gives +inf, HADD2 with C = -inf gives NaN. Ada (assumed IEEE): the
    products are exact and finite, so C = -inf wins."""
    big = {k: (MAX, MAX) for k in range(16)}
    for model in ("ada", "hopper"):
        assert dot(big, 0, model) == POS_INF
        assert dot({k: (MAX, 0xFE) for k in range(16)}, 0, model) == NEG_INF
    assert dot(big, NEG_INF, "hopper") == NAN
    assert dot(big, NEG_INF, "ada") == NEG_INF
    # 65504 + 15 rounds back to 65504; 65504 + 16 = 65520 is the tie with 2^16 and rounds to even: +inf
    for model in ("ada", "hopper"):
        assert dot({0: (0x47, 0x48)}, 0x7BFF, model) == 0x7BFF  # 3.75 * 4
        assert dot({0: (0x48, 0x48)}, 0x7BFF, model) == POS_INF  # 4 * 4


@pytest.mark.parametrize("model", ["ada", "hopper"])
def test_exact_cancellation_gives_plus_zero(model: str) -> None:
    pairs = {0: (0x44, 0x3A), 1: (0x44, 0xBA), 16: (MAX, ONE), 18: (MAX, 0xB8)}
    assert dot(pairs, 0x8000, model) == 0x0000
    assert dot(pairs, 0x0000, model) == 0x0000


def test_zero_products_and_negative_zero_c() -> None:
    """Nothing nonzero to add: Hopper's HMMA accumulator is +0 and +0 + (-0) = +0; Ada (assumed IEEE) keeps -0 only
    when C is -0 and every product is a negative zero."""
    assert dot({}, 0x8000, "hopper") == 0x0000
    assert dot({}, 0x8000, "ada") == 0x0000  # the zero codes 0x00 x 0x00 are +0 products
    a, b, c = zero_tiles()
    a[0, :] = 0x80  # -0 times +0 everywhere: all products are -0
    c[0, 0] = 0x8000
    assert int(mma_m16n8k32_e4m3_f16(a, b, c, "ada")[0, 0]) == 0x8000
    assert int(mma_m16n8k32_e4m3_f16(a, b, c, "hopper")[0, 0]) == 0x0000


@pytest.mark.parametrize("model", ["ada", "hopper"])
def test_subnormal_result(model: str) -> None:
    # 2^-9 * 2^-9 = 2^-18 = 64 * 2^-24 (f16 subnormal 0x0040); minus 2^-24 from C gives 63 * 2^-24
    assert dot({0: (TWO_M9, TWO_M9)}, 0x0000, model) == 0x0040
    assert dot({0: (TWO_M9, TWO_M9)}, 0x8001, model) == 0x003F


def test_ada_truncation_vs_hopper_exact_sum() -> None:
    """1 + 2^-11 + 2^-18 in one block/HMMA: Ada cuts 2^-18 (13 bits below 2^0) and rounds the tie to even (1.0);
    the Hopper HMMA sums exactly and rounds up to 1 + 2^-10."""
    pairs = {0: (ONE, ONE), 1: (TWO_M6, TWO_M5), 4: (TWO_M9, TWO_M9)}
    assert dot(pairs, 0, "ada") == 0x3C00
    assert dot(pairs, 0, "hopper") == 0x3C01


def test_hopper_rounds_after_each_hmma() -> None:
    """k=0,1 go to the first HMMA, k=2 to the second: 1 + 2^-11 ties to 1.0, then 1.0 + 2^-11 ties to 1.0 again.
    Ada sums all three in one block exactly (1 + 2^-10)."""
    pairs = {0: (ONE, ONE), 1: (TWO_M6, TWO_M5), 2: (TWO_M6, TWO_M5)}
    assert dot(pairs, 0, "hopper") == 0x3C00
    assert dot(pairs, 0, "ada") == 0x3C01


def test_ada_c_enters_the_first_block() -> None:
    """C = 2048 and 1 + 1 in the second block: with C in block 1, block 2 sees acc 2048 (exponent 11) and adds 2
    exactly (2050, an f16). One +1 in each block would each tie back to 2048 (f16 spacing 2 there)."""
    assert dot({0: (ONE, ONE)}, 0x6800, "ada") == 0x6800  # 2049 ties to even 2048
    assert dot({16: (ONE, ONE), 17: (ONE, ONE)}, 0x6800, "ada") == 0x6801  # 2050
    assert dot({0: (ONE, ONE), 16: (ONE, ONE)}, 0x6800, "ada") == 0x6800  # two ties, each back to 2048


def test_hopper_hmma_cuts_addends_25_bits_below_the_largest() -> None:
    """256 * 128 = 2^15 (operand exponents 8 + 7), + 16 (half an ulp of 2^15: a tie), + 2^-11 (2^-5 * 2^-6): the
    unit is 2^(15 - 25) = 2^-10, so 2^-11 is cut and the tie rounds to even 2^15. An exact sum would round up.
    With 2^-10 (2^-5 * 2^-5) instead, the small term survives and breaks the tie upwards."""
    big, tie = (0x78, 0x70), (0x48, 0x48)
    assert dot({0: big, 1: tie, 4: (TWO_M5, TWO_M6)}, 0, "hopper") == 0x7800
    assert dot({0: big, 1: tie, 4: (TWO_M5, TWO_M5)}, 0, "hopper") == 0x7801
    assert dot({0: big, 1: tie, 4: (TWO_M5, TWO_M5)}, 0, "ada") == 0x7800  # Ada cuts at 2^(15 - 13)


def test_hopper_aligns_on_operand_exponents() -> None:
    """192 * 192 = 36864 = 1.125 * 2^15, but its operand exponents sum to 7 + 7 = 14: the unit is 2^(14 - 25) = 2^-11,
    so a 2^-11 term survives and breaks the tie of + 16 upwards (0x7881); aligning on the value's exponent (15)
    would cut it (0x7880)."""
    pairs = {0: (0x74, 0x74), 1: (0x48, 0x48), 4: (TWO_M5, TWO_M6)}
    assert dot(pairs, 0, "hopper") == 0x7881
    assert dot(pairs, 0, "ada") == 0x7880


# ---------------------------------------------------------------- the benchmark
# It runs, writes its JSON and reports a throughput per model (speed itself is not asserted here: the figure
# belongs to `OMP_NUM_THREADS=1 taskset -c 0 tcforge bench numerics`).
def test_bench_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "n.json"
    bench_main(["--tiles", "64", "--repeat", "1", "--json", str(out)])
    report = json.loads(out.read_text())
    assert set(report["models"]) == {"ada", "hopper"}
    for r in report["models"].values():
        assert r["outputs"] == 64 * 128 and r["outputs_per_s_cpu"] > 0
    assert "M outputs/s" in capsys.readouterr().out


def test_bench_rejects_unknown_models(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="valid models: ada, hopper"):
        bench_main(["--models", "volta", "--json", str(tmp_path / "x.json")])



def test_bench_times_the_tensor_core_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f.json"
    bench_main(["--models", "", "--forms", "mma.m16n8k16.f16.f16.f16,wgmma.m64n8k32.f32.e4m3.e4m3",
                "--form-tiles", "4", "--repeat", "1", "--json", str(out)])
    forms = json.loads(out.read_text())["forms"]
    assert forms["mma.m16n8k16.f16.f16.f16"]["outputs"] == 4 * 16 * 8
    assert forms["wgmma.m64n8k32.f32.e4m3.e4m3"]["outputs"] == 4 * 64 * 8
    assert capsys.readouterr().out.count("M outputs/s") == 2
    with pytest.raises(ValueError, match="valid forms: wgmma.m64n8k32"):
        bench_main(["--forms", "mma.m16n8k8.f16", "--json", str(tmp_path / "x.json")])
