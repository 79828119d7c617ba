"""Ada on Hopper: Ada's FP8 mma equals two chained wgmma f16 steps over the zero-padded k halves plus the IEEE -0
rule (numpy models, every input family, the published Ada vectors), and the committed GPU proof when present."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from numerics_testlib import FAMILIES, family_tiles, mismatch_message
from tools.truth import ada_lowering as L

from tcforge.numerics import truth as T

TILES = 96


@pytest.mark.parametrize("form", L.FORMS)
@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_lowering_is_ada_on_the_crosscheck_families(kind: int, form: str) -> None:
    a, b, c = family_tiles(kind, TILES, 41)
    got, want = L.lowering(a, b, c, form=form), L.ada(a, b, c)
    assert np.array_equal(got, want), mismatch_message(got, want, f"{form}, family {kind}: {FAMILIES[kind]}")


@pytest.mark.parametrize("form", L.FORMS)
@pytest.mark.parametrize(("set_name", "fam"), [(s, f) for s in L.SETS for f in sorted(L.SETS[s][1])])
def test_lowering_is_ada_on_the_proof_families(set_name: str, fam: int, form: str) -> None:
    # tiles on both sides of the first seed boundary, as the device run meets them
    start = (1 << L.SETS[set_name][2]) - TILES // 2
    a, b, c = L.tile_inputs(set_name, fam, L.ADA_SEED, start, TILES)
    got, want = L.lowering(a, b, c, form=form), L.ada(a, b, c)
    assert np.array_equal(got, want), mismatch_message(got, want, f"{form}, {set_name} family {fam}")


def test_tile_inputs_split_the_counter_space_by_seed() -> None:
    per = 1 << L.SETS["tc"][2]
    a, b, c = L.tile_inputs("tc", 3, L.ADA_SEED, per - 2, 4)
    a0, _, _ = T.tc_tile_inputs(L.TC_FORM, 3, L.ADA_SEED, per - 2, 2)
    a1, _, c1 = T.tc_tile_inputs(L.TC_FORM, 3, L.ADA_SEED + 1, 0, 2)
    assert np.array_equal(a[:2], a0) and np.array_equal(a[2:], a1) and np.array_equal(c[2:], c1)


@pytest.mark.parametrize("form", L.FORMS)
def test_the_zero_sign_rule_is_the_only_difference(form: str) -> None:
    """wgmma writes +0 for every zero result; Ada's -0 (C = -0, all 32 products -0) needs the rule, nothing else."""
    a, b, c = L.tile_inputs("tc", 3, L.ADA_SEED, 0, 256)  # rows of +-0 against B >= 0, C often +-0
    raw, want = L.lowering(a, b, c, zero_sign=False, form=form), L.ada(a, b, c)
    differ = raw != want
    assert differ.sum() > 100
    assert (raw[differ] == 0).all() and (want[differ] == 0x8000).all()
    assert (c[differ] == 0x8000).all() and L.products_all_negzero(a, b)[differ].all()


def _one_output(a_row: list[int], b_col: list[int], c00: int) -> tuple[np.ndarray, ...]:
    """A tile whose only nonzero data is row 0 of A, column 0 of B and C[0, 0]."""
    a = np.zeros((1, 16, 32), np.uint8)
    b = np.zeros((1, 32, 8), np.uint8)
    c = np.zeros((1, 16, 8), np.uint16)
    a[0, 0], b[0, :, 0], c[0, 0, 0] = a_row, b_col, c00
    return a, b, c


@pytest.mark.parametrize(
    ("a_row", "b_col", "c00", "want"),
    [
        ([0x7E] * 16 + [0xFE] * 16, [0x7E] * 32, 0x0000, 0x7C00),  # block 1 overflows: +inf passes block 2's -sum
        ([0x7E] * 32, [0x7E] * 32, 0xFC00, 0xFC00),  # C = -inf passes through a +overflowing sum (Ada, not HADD2)
        ([0x38] * 31 + [0x7F], [0x38] * 32, 0x3C00, 0x7FFF),  # a NaN code in the second half
        ([0x80] * 32, [0x38] * 32, 0x8000, 0x8000),  # every product -0 and C = -0: -0
        ([0x80] * 31 + [0x00], [0x38] * 32, 0x8000, 0x0000),  # one +0 product: +0
        # subnormal operands (exponent -6 each) onto a subnormal C: block 1 gives 2^-14 + 2^-24, block 2 adds 2^-14
        # and the tie 2^-13 + 2^-24 rounds to even
        ([0x01] * 32, [0x01] * 32, 0x0001, 0x0800),
        # C = 2048 sets M = 11: each product 2^-3 lies below 2^(M - 13) and is cut to 0 (the exact sum 2050 is 0x6801)
        ([0x20] * 16 + [0] * 16, [0x38] * 32, 0x6800, 0x6800),
    ],
)
def test_hand_worked_outputs(a_row: list[int], b_col: list[int], c00: int, want: int) -> None:
    a, b, c = _one_output(a_row, b_col, c00)
    ada = L.ada(a, b, c)
    assert int(ada[0, 0, 0]) == want, f"Ada model: {int(ada[0, 0, 0]):#06x}, expected {want:#06x}"
    for form in L.FORMS:
        got = L.lowering(a, b, c, form=form)
        assert np.array_equal(got, ada), mismatch_message(got, ada, f"{form} lowering vs Ada")


def test_shared_b_keeps_a_nan_of_the_other_half() -> None:
    """Shared B: step 1 multiplies B's k 16..31 by zeros of A; a NaN there makes step 1 NaN, as Ada's row/column
    rule wants (the final result is NaN either way)."""
    a, b, c = _one_output([0x38] * 32, [0x38] * 31 + [0x7F], 0x3C00)
    for form in L.FORMS:
        assert int(L.lowering(a, b, c, form=form)[0, 0, 0]) == 0x7FFF == int(L.ada(a, b, c)[0, 0, 0])


@pytest.mark.parametrize("form", L.FORMS)
def test_published_ada_vectors_through_the_lowering(form: str) -> None:
    a, b, c, d00 = L.published_tiles()
    got = L.lowering(a, b, c, form=form)
    assert np.array_equal(got[:, 0, 0], d00), mismatch_message(got[:, 0, 0], d00, f"published Ada vectors, {form}")
    got[:, 0, 0] = 0
    assert not got.any()


def test_dry_run_plumbing(tmp_path) -> None:
    """run --dry-run (numpy standing in for the GPU) writes files that check and check_proof read."""
    assert L.run(tmp_path, 64, 16, dry_run=True, sets=list(L.SETS), build_cubin=False) == 0
    assert L.check(tmp_path) == 0
    assert L.check_proof(tmp_path / f"{L.PROOF_NAME}.npz") == [
        "a dry run (numpy standing in for the GPU), not hardware truth"]


def test_committed_gpu_proof(data_dir) -> None:
    path = data_dir / "numerics" / f"{L.PROOF_NAME}.npz"
    if not path.is_file():
        pytest.skip(f"no GPU proof committed yet ({path.name} absent): run `PYTHONPATH=src:. python3 -m "
                    f"tools.truth.ada_lowering run --out DIR` on a Hopper GPU and commit DIR/{path.name}")
    assert path.stat().st_size <= 1 << 20
    with np.load(path) as z:
        tiles = int(z["tiles_per_family"])
        counts = z["counts"]
    assert tiles >= 10_000_000
    assert (counts[:, L.CNT["bad_outputs"]] == 0).all() and (counts[:, L.CNT["bad_outputs_shared"]] == 0).all()
    problems = L.check_proof(path)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_kernel_builds_for_sm90a_without_spills(tmp_path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")
    _, info = L.build(tmp_path)
    ptxas = info["ptxas"]
    assert ptxas["spill_stores"] == 0 and ptxas["spill_loads"] == 0 and ptxas["stack"] == 0, ptxas["raw"]
    assert 0 < ptxas["registers"] <= 96, ptxas["raw"]  # 5 blocks of 128 threads per SM
