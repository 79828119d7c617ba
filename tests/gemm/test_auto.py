"""`auto` and the launch model without a GPU: on the model's measured points (data/measured_points.json) `auto` runs a
variant within 4 % of the fastest and the model's time for it is within 35 % of the measured kernel; `auto`'s picks by
shape (tcforge.gemm.auto: the tiles the launch model and its rules choose); the model's split counts and tile costs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.gemm.test_plan import BF16, F8, F16, F32, FakeTensor, col_major

from tcforge.gemm import codegen, plan_matmul
from tcforge.gemm.auto import N2_MIN_CLUSTERS, N2_RULE_CLUSTERS, n2_build, pick_variant, swap_order
from tcforge.gemm.config import MAX_SMEM, PAIR_MIN_STAGES, pair_config
from tcforge.gemm.model import (
    ONE_ROUND_COST,
    SPLIT_BY_MODEL,
    _measured_data,
    choose_splits,
    cluster_tiles,
    cost_key,
    estimate_us,
    measured_points,
    measured_sets,
)
from tcforge.gemm.variants import VARIANTS

# every measured point's kernel times by variant (data/measured_points.json, its sets merged in the order measured)
MEASURED = measured_points()
# points whose fastest variant is one `auto` does not weigh there, and why: the test compares `auto` with the best
# of the others and asserts the named one is fastest (so the entry goes when a rule takes it)
NOT_WEIGHED = {
    # the n2 tile at N = 1024 (16 clusters): 10 % faster than sw32 at 80 x 1024 x 1024 16-bit, slower at 80 x 1024 x
    # 4096-14336 and 7 % slower than sw16 for fp8 at 80 x 1024 x 1024 (set n2_band); `auto` weighs it from 32 clusters
    ((80, 1024, 1024), "fp16", "col"): "sw40n2",
    ((80, 1024, 1024), "fp16", "row"): "sw40n2",
}
# where `auto` runs a variant more than 4 % slower than the best measured, and why (the worst 9.5 %, a noisy timing)
SLOW_AUTO = [
    ((1024, 1024, 16384), "e4m3", "col"),  # rung 9 + split-K 38.1 us, t64 35.0 (lean_template_refit): predicted the
    # other way
    ((2048, 1024, 8192), "fp16", "col"),  # rung 9 67.3 us, t128 62.9: one cost per k-tile misses t128's 2nd round
    ((16, 12288, 2048), "fp16", "col"),  # sw16 14.7 us, sw16c4 without PDL 13.9: at 24 clusters the other three
    # points (and M = 32) run level or faster on the 64-row tile, so C4_LOW_FILL stops below it
    ((97, 4096, 2048), "e4m3", "col"),  # sw56n2 by rule 5.0 us, sw112 4.8: at 97 rows the n2 tile's second CTA
    # holds 41 of its 56 rows (TMA zero fill; 104-112 rows run faster), and K = 2048 is short
    ((64, 28672, 4096), "fp16", "col"),  # t64 66.6 us, sw64c4 60.8 (lean_template_refit) — yet `auto`'s own row in
    # the same run ran t64 in 60.8 (HBM-bound: 235 MB of weights)
    ((64, 2048, 4096), "fp16", "col"),  # sw32n2 8.2 us as predicted, sw32 7.8 where its constant (fitted on an
    # earlier template) predicts 8.6
    ((64, 16384, 4096), "e4m3", "col"),  # t64 21.2 us, sw64 20.0 (graph-timed 19.6 against 19.5): the model ties
    # them (rows40_64_wide_n)
    ((40, 20480, 4096), "e4m3", "col"),  # sw64 27.8 us, sw64c4 26.6: its 80 clusters fill none of the 4-CTA rules
    ((40, 20480, 4096), "fp16", "col"),  # sw64 54.0 us, sw64c4 51.9 (the same; 48-64 rows: sw64 within 4 %)
]


# where the model's time for `auto`'s (fastest) pick is more than 35 % off the measured kernel, and why
MODEL_MISS = {
    # t64 in one round of 96 tiles: 8.5 us, 0.20 us per fp8 k-tile on the lean template against its constant 0.30
    # (fitted on 16-bit launches of an earlier template; n2_long_n)
    ((128, 6144, 4096), "e4m3", "col"),
    # sw64c4 in one round of 18 clusters: 10.0 us against the model's 13.5 (its 0.36 us per k-tile fitted where the
    # clusters fill a round; lean_template_refit)
    ((64, 9216, 4096), "e4m3", "col"),
    # sw64 in one round of 80 tiles (61 % of the SMs): 10.9 us against the model's 14.8 (n2_past_one_round)
    ((64, 5120, 4096), "fp16", "col"),
    # sw64 in one round of 128 tiles: 7.5 us for fp8 against the model's 11.2 (its fp8 per-k-tile cost fitted on an
    # earlier template; n2_past_one_round)
    ((64, 8192, 4096), "e4m3", "col"),
    # t64 in one round of 80 tiles: 13.7 / 15.5 / 7.9 us against the model's 21.2 / 21.2 / 11.6 (as at 128 x 6144
    # above; n2_past_one_round)
    ((128, 5120, 4096), "bf16", "col"),
    ((128, 5120, 4096), "fp16", "col"),
    ((128, 5120, 4096), "e4m3", "col"),
}


def test_measured_points_are_named_sets() -> None:
    """The data file's sets have unique names and every point names a known set, a positive shape, a dtype, a B
    layout and variants `auto` or the ladder knows, with positive times."""
    from tcforge.gemm.variants import VARIANTS

    names = measured_sets()
    assert len(names) == len(set(names)) == 38
    for p in _measured_data()["points"]:
        assert p["set"] in names and len(p["shape"]) == 3 and min(p["shape"]) >= 1, p
        assert p["dtype"] in ("fp16", "bf16", "e4m3") and p["layout"] in ("col", "row"), p
        assert p["microseconds"] and all(v in VARIANTS and t > 0 for v, t in p["microseconds"].items()), p
    with pytest.raises(KeyError, match="no measured set named nonesuch"):
        measured_points(["nonesuch"])


def test_auto_picks_within_4_percent_of_the_measured_best() -> None:
    """On the measured points `auto` runs a variant at most 4 % slower than the fastest measured there — on all but the
    nine of 582 in SLOW_AUTO, those at most 10 % (against the best variant it weighs where NOT_WEIGHED names a
    faster one it does not) — and the model's time for it is within 35 % of the measured kernel (but at MODEL_MISS).
    The candidates are rung 9 (without the cluster where its tiles fill one round and M >= 1024), its stream-K build,
    the 64x128 tile, and t320, t192, t160, t144 (over a row-major 16-bit B its swapped form t144s, in one round), t128
    and t64x192 where they need no split (the 128-row ones above 64 rows, t64x192 above SMALL_M, t320 and t160 in at
    most two rounds); for small M the swapped tiles (sw8 / sw16 / sw32 / sw64, the one fitting M first; at 65-112 rows
    sw80 / sw96 / sw112 where M fits them) weigh in too, and the fitting one's 4-CTA-cluster build where its clusters
    fill most of a round (N = 13312-14336 at M <= 32) or at most 3/4 of one (N = 9216-11008, launched without PDL);
    for fp8 also sw64c4 (33-64 rows) and, in the part-empty band only, sw128c4 (97-128 rows); for 65-96 rows sw80c4 /
    sw96c4 in any one round or a nearly full last one, for 97-128 rows of a K-major B n80c4 / n96c4 (clusters along N)
    in one round at least 3/4 full; at 33-128 rows the n2 tiles (sw32n2 ... sw64n2) in one round of 32-66 clusters;
    at 33-64 rows sw64 over t64 where t64's last round is under half full.
    """
    from tcforge.gemm.model import estimate_us
    from tcforge.gemm.variants import VARIANTS

    slow = []
    for (shape, kind, layout), times in MEASURED.items():
        m, n, k = shape
        dt = F8 if kind == "e4m3" else F16  # (bf16 and fp16 launches are alike to the model)
        b = col_major(k, n, dt) if layout == "col" else FakeTensor((k, n), dt)
        picked = pick_variant(plan_matmul(FakeTensor((m, k), dt), b), 132).name
        # rung 9's spread-epilogue build (unsplit): the same tile and bits, measured within 1.5 % of rung 9, so the
        # points' rung 9 times stand for it
        picked = "hoist" if picked == "hoist_es" else picked
        assert picked in times, (shape, kind, layout, picked)
        skip = NOT_WEIGHED.get((shape, kind, layout))
        if skip:
            assert min(times, key=times.get) == skip, (shape, kind, layout, times)
            times = {v: t for v, t in times.items() if v != skip}
        best = min(times.values())
        assert times[picked] <= 1.10 * best, (shape, kind, layout, picked, times)
        if times[picked] > 1.04 * best:
            slow.append((shape, kind, layout))
        sk = picked == "streamk"
        predicted = estimate_us(VARIANTS["hoist" if sk else picked], m, n, k, kind, 132, streamk=sk,
                                b_kmajor=layout == "col")
        if (shape, kind, layout) not in MODEL_MISS:
            assert abs(predicted / times[picked] - 1) < 0.35, (shape, kind, picked, predicted, times[picked])
    assert len(MEASURED) == 582 and sorted(slow) == sorted(SLOW_AUTO), slow


def test_wide_64_row_swapped_tiles_stream_b_once_and_keep_the_pair_split() -> None:
    """sw80 / sw96 (65-96 rows with a short N): one column of 64-row tiles where sw64 needs two, split 2 over K at
    80 x 4096 x 4096 as sw64 is at 64 rows; as many stages as fit, their pair builds giving up stages for the receive
    slot (not below PAIR_MIN_STAGES) while the narrower tiles' pairs keep their rings; BN-row staging buffers; the
    wgmma's n80 / n96. `auto` weighs each only where M fits it (swap_order: 65-80 rows sw80, 81-96 sw96, 97-112
    sw112); sw128 is not in the model's order (its own fp8 rule, auto.sw128_fp8_build)."""
    sw64, sw80, sw96 = (VARIANTS[n].config for n in ("sw64", "sw80", "sw96"))
    assert cluster_tiles(sw80, 80, 4096) == 64 and cluster_tiles(sw64, 80, 4096) == 128
    assert cluster_tiles(sw96, 96, 4096) == 64 and cluster_tiles(sw80, 96, 4096) == 128
    assert sw80.smem_bytes() == 11 * (64 + 80) * 128 + 2 * 80 * 128 + 2 * 11 * 8 + 1024
    assert sw96.smem_bytes() == 10 * (64 + 96) * 128 + 2 * 96 * 128 + 2 * 10 * 8 + 1024
    assert replace(sw80, stages=12).smem_total() > MAX_SMEM and replace(sw96, stages=11).smem_total() > MAX_SMEM
    for c, pair_stages in ((sw80, 10), (sw96, 8)):
        assert choose_splits(c, 80, 4096, 4096, "fp16", 132) == choose_splits(c, 80, 4096, 4096, "e4m3", 132) == 2
        pair = pair_config(c)
        assert pair is not None and pair.split_pair and pair.stages == pair_stages and pair.smem_total() <= MAX_SMEM
        assert replace(pair, stages=pair_stages + 1).smem_total() > MAX_SMEM  # the deepest ring beside the slot
    for name in ("sw8", "sw16", "sw32", "sw64"):
        assert pair_config(VARIANTS[name].config).stages == VARIANTS[name].config.stages
    assert pair_config(replace(sw96, bn=128, stages=PAIR_MIN_STAGES)) is None  # no room even at the floor
    assert "m64n80k16.f32.f16.f16" in codegen.render(sw80, "fp16", "fp32", False)
    assert "m64n96k32.f32.e4m3.e4m3" in codegen.render(sw96, "e4m3", "bf16", True)
    firsts = [swap_order(m)[0] for m in (64, 65, 80, 81, 96, 97, 112, 113)]
    assert firsts == ["sw64", "sw80", "sw80", "sw96", "sw96", "sw112", "sw112", "sw64"]
    assert not {"sw80", "sw96", "sw112", "sw128"} & {*swap_order(64), *swap_order(113), *swap_order(16)}
    assert "sw128" not in {v for m in range(1, 1025) for v in swap_order(m)}  # not weighed by the model


def test_n2_build_takes_the_width_half_of_m_needs_in_one_round_of_32_to_66_clusters() -> None:
    """`auto`'s n2 tile: for 33-128 rows the narrowest whose two CTAs hold M (33-64
    rows sw32n2, 65-80 sw40n2, 81-96 sw48n2, 97-112 sw56n2, 113-128 sw64n2), only where its clusters make one round
    of N2_MIN_CLUSTERS-66 on 132 SMs (N = 2048-4224: 32-66 row tiles of 64 weight rows); by rule from
    N2_RULE_CLUSTERS (48: N >= 3072), below it by the model; and its one-round cost from ONE_ROUND_COST."""
    assert (N2_MIN_CLUSTERS, N2_RULE_CLUSTERS) == (32, 48)
    for m, name in ((33, "sw32n2"), (64, "sw32n2"), (65, "sw40n2"), (80, "sw40n2"), (81, "sw48n2"), (96, "sw48n2"),
                    (97, "sw56n2"), (112, "sw56n2"), (113, "sw64n2"), (128, "sw64n2")):
        v = n2_build(m, 4096, 132)
        assert v is not None and v.name == name, m
        assert cluster_tiles(v.config, m, 4096) == 64 and cost_key(v.config) in ONE_ROUND_COST
    for m, n in ((32, 4096), (129, 4096), (64, 1024), (64, 1984), (96, 4288), (128, 8192), (100, 14336)):
        assert n2_build(m, n, 132) is None, (m, n)
    assert n2_build(64, 2048, 132).name == "sw32n2" and n2_build(128, 4224, 132).name == "sw64n2"  # 32 / 66 clusters
    assert n2_build(128, 4096, 128) is not None and n2_build(128, 4096, 126) is None  # one round: sms // 2 clusters


def test_sw112_splits_where_the_model_predicts_the_split_launch_faster() -> None:
    """sw112 (no pair: its splits meet in L2 slots) in one round of units: 0.17 us per k-tile and 1.1x the HBM rate,
    1.2 us more per split reduction (ONE_ROUND_COST, SLOT_EXTRA_US), fitted on the set sw112_split_by_model; the model
    decides its split count there — unsplit with up to 32 k-tiles at N = 4096 (fp8 97 x 4096 x 4096: 7.5 us unsplit,
    9.1 split 2), split with more (bf16 97 x 4096 x 4096: 12.5 split, 12.9 unsplit) and at N = 2048 from 24 k-tiles
    of 16-bit; below 32 tiles (N < 2048) the rule of choose_splits as before."""
    v = VARIANTS["sw112"]
    c = v.config
    assert cost_key(c) in SPLIT_BY_MODEL and pair_config(c) is None
    cases = (((97, 4096, 4096), "e4m3", 1, 7.5), ((97, 4096, 4096), "bf16", 2, 12.5),
             ((97, 4096, 2048), "bf16", 1, 7.4), ((112, 4096, 3072), "e4m3", 1, 6.3),
             ((97, 2048, 4096), "bf16", 4, 9.5), ((112, 2048, 6144), "e4m3", 4, 8.3),
             ((97, 2048, 2048), "e4m3", 1, 4.8), ((97, 4096, 6144), "bf16", 2, 19.1))
    for (m, n, k), kind, splits, measured in cases:
        assert choose_splits(c, m, n, k, kind, 132) == splits, (m, n, k, kind)
        assert abs(estimate_us(v, m, n, k, kind, 132) / measured - 1) < 0.17, (m, n, k, kind)
    assert choose_splits(c, 97, 1024, 4096, "bf16", 132) == 8  # 16 tiles: the rule (kt // 4, SMs per tile)
    # several rounds keep the one cost fitted before (0.26 us per k-tile)
    assert estimate_us(v, 104, 16384, 4096, "bf16", 132) == pytest.approx(2 * 64 * 0.26 + 2.0)


def test_auto_takes_the_small_m_tile_up_to_128_rows() -> None:
    assert plan_matmul(FakeTensor((64, 64)), FakeTensor((64, 64))).variant.name == "t64"
    assert plan_matmul(FakeTensor((128, 64)), FakeTensor((64, 64))).variant.name == "t64"
    assert plan_matmul(FakeTensor((129, 64)), FakeTensor((64, 64))).variant.name == "hoist"
    assert plan_matmul(FakeTensor((8, 64)), FakeTensor((64, 64)), variant="persistent").variant.name == "persistent"


def test_auto_takes_the_small_tile_where_rung_9_leaves_half_the_gpu_idle() -> None:
    """`auto` is rung 9 where its cluster tiles keep half the SMs busy; small M and launches with fewer tiles take
    the 64x128 tile (split over K where it fills too few SMs) or a swapped tile (measured: 1024^3
    0.35x -> 0.85x, 256x4096x4096 0.67x -> 0.87x, 16x4096x4096 0.78x -> 1.03x of cuBLAS); an explicit variant is
    never changed."""
    def plan(m: int, n: int, k: int, variant: str = "auto") -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)), variant=variant)

    assert pick_variant(plan(4096, 4096, 4096), 132).name == "hoist_es"  # no split: rung 9
    assert pick_variant(plan(3072, 3072, 3072), 132).name == "t192"  # 384 tiles of 128x192: 2.9 rounds
    # 1280x4096x4096: 80 units, 14/66 in the second round; stream-K shares them, 260 tiles of 128x160 fill two
    # rounds, 130 of 128x320 one (t320 73.9 us, t160 76.1, stream-K 81.2)
    assert pick_variant(plan(1280, 4096, 4096), 132).name == "t320"
    # 160 units: 28/66 in the third round, stream-K; 260 tiles of 128x320 in two rounds are faster (147.3 / 147.8 us)
    assert pick_variant(plan(2560, 4096, 4096), 132).name == "t320"
    assert pick_variant(plan(3840, 4096, 4096), 132).name != "t320"  # 390 tiles: three rounds
    # two rounds, the second 46/66 full: stream-K for 16-bit with >= SK_LONG_KTILES k-tiles only
    assert pick_variant(plan(1792, 4096, 14336), 132).name == "streamk"  # 224 k-tiles
    assert pick_variant(plan(1792, 4096, 8192), 132).name == "streamk"  # 128
    assert pick_variant(plan(1792, 4096, 4096), 132).name == "hoist_es"  # 64
    assert pick_variant(plan(2048, 6144, 8192), 132).name == "hoist_es"  # 192 units: three rounds
    assert pick_variant(plan(8192, 8192, 8192), 132).name == "hoist_es"  # 1024 units: 34/66, over half
    assert pick_variant(plan(5120, 5120, 5120), 132).name == "streamk"  # 400 units: 6 rounds + 4 units
    assert pick_variant(plan(2560, 2560, 2560), 132).name == "hoist_es"  # 100 units: 34/66
    assert pick_variant(plan(256, 14336, 4096), 132).name == "hoist_es"  # 56 units: no split either
    # one round of rung 9's cluster tiles with M >= CM1_MIN_M: rung 9 without the cluster
    assert pick_variant(plan(2048, 2048, 2048), 132).name == "tuned"  # 64 units of 66
    assert pick_variant(plan(4096, 1024, 1024), 132).name == "tuned"
    assert pick_variant(plan(2048, 4096, 2048), 132).name == "hoist_es"  # 128 units: two rounds
    assert pick_variant(plan(2048, 1024, 8192), 132).name == "hoist"  # 32 units: half a round, split
    # 132 swapped 128x144 tiles: one round, no third slab of the row-major B (t160: 120 tiles, t192: 96)
    assert pick_variant(plan(1536, 1536, 1536), 132).name == "t144s"
    assert pick_variant(plan(6144, 6144, 6144), 132).name == "hoist_es"  # 576 units: 48/66, over half
    assert pick_variant(plan(16384, 16384, 16384), 132).name == "hoist_es"  # 62 rounds + 4: 1.4 % to gain
    assert pick_variant(plan(256, 4096, 4096), 132).name == "t64"  # 128 tiles: no split
    assert pick_variant(plan(1024, 1024, 1024), 132).name == "t64"
    assert pick_variant(plan(512, 512, 512), 132).name == "sw32"  # swapped: 128 tiles of 64x32, one round
    assert pick_variant(plan(64, 4096, 4096), 132).name == "sw32n2"  # 64 clusters of two 64x32 tiles
    assert pick_variant(plan(64, 14336, 4096), 132).name == "t64"  # 112 tiles
    # at most 64 rows no 128-row tile (t144's 114 tiles at 48 x 16384 ran 0.66-0.72x of cuBLAS, t64 0.97-1.04x), and
    # sw64 over t64 where t64's last round is thin (160 tiles at N = 20480), over either B layout
    assert pick_variant(plan(48, 16384, 4096), 132).name == "t64"
    assert pick_variant(plan(48, 20480, 4096), 132).name == "sw64"  # row-major B too (rows40_64_wide_n_rowb)
    f16 = "torch.float16"
    for m, n, pick in ((48, 20480, "sw64"), (64, 24576, "sw64"), (64, 16384, "t64"), (64, 28672, "t64"),
                       (32, 20480, "sw32"), (128, 16384, "t144")):  # above 64 rows the 128-row tiles as before
        assert pick_variant(plan_matmul(FakeTensor((m, 4096), f16), col_major(4096, n, f16)), 132).name == pick
    assert pick_variant(plan(16, 64, 65536), 132).name == "sw16"  # 1 tile of 64x16, split 16 ways
    assert pick_variant(plan(512, 512, 256), 132).name == "sw32"  # 4 k-tiles: 128 swapped tiles, no split
    assert pick_variant(plan(16, 4096, 4096), 132).name == "sw16"  # 16 rows: the wgmma's N, not 64 rows
    assert pick_variant(plan(1, 4096, 4096), 132).name == "sw8"  # 7 rows of TMA zero fill, not 15
    # a long N: the fitting swapped width's 128-row tile in 4-CTA clusters where they fill >= 85 % of their last
    # round of the 30 resident clusters or one round of at most 75 % (launched without PDL), else the 64-row
    # swapped tile
    assert pick_variant(plan(8, 14336, 4096), 132).name == "sw8c4"  # 28 clusters of 30
    assert pick_variant(plan(16, 14336, 4096), 132).name == "sw16c4"
    assert pick_variant(plan(32, 28672, 4096), 132).name == "sw32c4"  # 56: the second round 26 of 30
    assert pick_variant(plan(16, 12288, 4096), 132).name == "sw16"  # 24 of 30: level to 10 % slower
    assert pick_variant(plan(16, 16384, 4096), 132).name == "sw16"  # 32: a second round of 2
    assert pick_variant(plan(16, 11008, 4096), 132).name == "sw16c4"  # 22 of 30, one round
    assert pick_variant(plan(16, 9216, 4096), 132).name == "sw16c4"  # 18 of 30
    assert pick_variant(plan(32, 9216, 4096), 132).name == "sw32c4"  # over t64 (the model ties them)
    assert pick_variant(plan(8, 11008, 4096), 132).name == "sw8c4"
    assert pick_variant(plan(16, 8192, 4096), 132).name == "sw16"  # 16 clusters would split K
    # the 64-column width's 4-CTA build: fp8 only (its 16-bit launches measured level with t64 or slower)
    fp8 = "torch.float8_e4m3fn"
    for m, n, pick in ((64, 11008, "sw64c4"), (48, 9216, "sw64c4"), (64, 14336, "sw64c4"), (1024, 14336, "streamk")):
        p8 = plan_matmul(FakeTensor((m, 4096), fp8), col_major(4096, n, fp8))
        assert pick_variant(p8, 132).name == pick, m  # 1024 rows: no swapped tile's 4-CTA build
    assert pick_variant(plan(64, 11008, 4096), 132).name == "t64"
    # 65-96 rows: the 80- / 96-column swapped 4-CTA builds, every dtype, in any one round of clusters or a nearly full
    # last one (not a thin second: 16384, where the 64-row swapped tile of that width runs); 97-128 rows of a K-major
    # B: the 128x96 or 128x80 tile in clusters along N, the one making more of one round (>= 3/4: n96c4 29 of 30 at
    # 11008, n80c4 29 at 9216 and 28 at 8704; not at 14336, nor at 8192, where t64's 128 tiles run one round), t128
    # over a row-major 16-bit B (whole slabs there)
    for m, n, dtype, col_b, pick in ((65, 11008, F16, False, "sw80c4"), (80, 12288, fp8, True, "sw80c4"),
                                     (96, 9216, BF16, True, "sw96c4"), (88, 28672, F16, True, "sw96c4"),
                                     (96, 16384, F16, True, "sw96"), (97, 11008, fp8, True, "n96c4"),
                                     (128, 9216, BF16, True, "n80c4"), (128, 11008, F16, False, "t128"),
                                     (104, 8704, fp8, True, "n80c4"), (120, 10240, BF16, True, "n96c4"),
                                     (128, 14336, fp8, True, "t128"), (128, 8192, BF16, True, "t64"),
                                     (112, 12288, F16, True, "t128")):
        b = col_major(4096, n, dtype) if col_b else FakeTensor((4096, n), dtype)
        assert pick_variant(plan_matmul(FakeTensor((m, 4096), dtype), b), 132).name == pick, (m, n, dtype)
    # 65-112 rows with N up to 8192 (16384 at 65-96): the 64-row swapped tile as wide as M (sw80 to 80 rows, sw96 to
    # 96, sw112 to 112), split over K where its tiles leave SMs idle; not at 64 rows (sw64), not where M is wider than
    # it (sw80 at 96 rows streams B twice), sw128 at 113-128 rows for fp8 with K >= 8192 and N of 2048-8192 only
    # (else t64 / sw64), and not over the 4-CTA builds' long N; the n2 tile as
    # wide as half of M where its clusters make one round of 48-66 (N = 3072-4224; n2_band: 65x4096x4096 fp16
    # 11.3 -> 10.2 us, 128x4096x8192 fp8 12.7 -> 11.0, 124x4096x4096 fp8 7.7 -> 6.7), not at N = 1024 or 8192
    for m, n, k, dtype, col_b, pick in ((65, 4096, 4096, F16, False, "sw40n2"), (80, 4096, 4096, fp8, True, "sw40n2"),
                                        (81, 4096, 4096, BF16, True, "sw48n2"), (96, 8192, 4096, F16, False, "sw96"),
                                        (72, 1024, 14336, fp8, True, "sw80"), (64, 4096, 4096, F16, True, "sw32n2"),
                                        (97, 4096, 4096, BF16, True, "sw56n2"), (113, 4096, 4096, BF16, True, "sw64n2"),
                                        (128, 4096, 8192, fp8, True, "sw64n2"), (120, 2048, 14336, fp8, True, "sw128"),
                                        (128, 4096, 8192, BF16, True, "sw64n2"), (124, 4096, 4096, fp8, True, "sw64n2"),
                                        (128, 1024, 14336, fp8, True, "sw64"),
                                        (80, 11008, 4096, BF16, True, "sw80c4")):
        b = col_major(k, n, dtype) if col_b else FakeTensor((k, n), dtype)
        assert pick_variant(plan_matmul(FakeTensor((m, k), dtype), b), 132).name == pick, (m, n, k, dtype)
    assert pick_variant(plan(16, 14336, 4096, "sw16"), 132).name == "sw16"  # explicit
    assert pick_variant(plan(63, 4096, 4096), 132).name == "sw32n2"
    assert pick_variant(plan(512, 512, 16384), 132).name == "t64"  # 32 tiles split 4 ways, reduced in-kernel
    assert pick_variant(plan(64, 14336, 4096), 132).name == "t64"  # 112 tiles: one round, no split
    assert pick_variant(plan(256, 4096, 4096, "hoist"), 132).name == "hoist"  # explicit
    assert pick_variant(plan(256, 4096, 4096, "hoist"), 132).name == "hoist"
    # rung 9 unsplit stores C under the next tile's k-tiles (hoist_es), fp32 C too; split launches run rung 9
    f32 = plan_matmul(FakeTensor((4096, 4096)), FakeTensor((4096, 4096)), out_dtype=F32)
    assert pick_variant(f32, 132).name == "hoist_es"


def test_auto_runs_sw112_split_as_the_model_predicts_within_its_margin() -> None:
    """97-112 rows x N = 2048-4096 (sw112_split_by_model): sw112 runs unsplit where the
    model predicts that faster (fp8 with up to 32 k-tiles: 104x4096x4096 7.4 us against 8.4-9.1 split; 16-bit K <=
    2048-3072), split with more (bf16 104x4096x4096 split 2, N = 2048 x 4096 split 4). `auto` took it there within
    SW112_NARROW_MARGIN of the best prediction; now it runs the n2 tile there
    (sw56n2, unsplit: n2_band, 104x4096x4096 bf16 12.0 -> 10.6 us, 97x2048x3072 fp8 5.9 -> 4.8), and sw112 where
    that is not weighed (N = 16384: t128; 97-112 x 8192 keeps sw112's rule)."""
    from tcforge.gemm.plan import launch_config

    for m, n, k, dtype, splits in ((97, 4096, 2048, F8, 1), (104, 4096, 4096, F8, 1), (112, 4096, 3072, F8, 1),
                                   (97, 2048, 3072, F8, 1), (104, 4096, 4096, BF16, 2), (97, 4096, 2048, BF16, 1),
                                   (112, 2048, 4096, BF16, 4), (104, 4096, 8192, F8, 2)):
        b = col_major(k, n, dtype)
        explicit = plan_matmul(FakeTensor((m, k), dtype), b, variant="sw112")
        assert launch_config(explicit.variant, explicit, 132)[1] == splits, (m, n, k, dtype)
        p = plan_matmul(FakeTensor((m, k), dtype), b)
        v = pick_variant(p, 132)
        assert (v.name, launch_config(v, p, 132)[1]) == ("sw56n2", 1), (m, n, k, dtype)
    assert pick_variant(plan_matmul(FakeTensor((104, 4096), F16), col_major(4096, 16384, F16)), 132).name == "t128"


def test_auto_takes_the_144_column_tile_where_it_fills_a_round_over_k_major_b() -> None:
    """t144 fills one round where no 64-multiple width does (1536^3: 132 tiles against t192's 96); over a K-major B
    (fp8, column-major 16-bit b) it loads exactly its 144 rows and measured 7-13 % faster than t192 there; over an
    MN-major B it loads three whole slabs like t192 and measured the same per k-tile, so over a row-major 16-bit B
    (row-major a) `auto` weighs its swapped form t144s instead (B^T as the MN-major A operand in whole slabs: t144's
    bytes over a K-major B, costed so; 1536^3 0.93 / 0.94x against t160's 0.87 / 0.84x, t144_swapped);
    it is not weighed where it would split K."""
    from tcforge.gemm.model import estimate_us
    from tcforge.gemm.variants import VARIANTS

    f8, f16 = "torch.float8_e4m3fn", "torch.float16"

    def pick(m: int, n: int, k: int, dt: str, col: bool) -> str:
        b = col_major(k, n, dt) if col else FakeTensor((k, n), dt)
        return pick_variant(plan_matmul(FakeTensor((m, k), dt), b), 132).name

    assert pick(1536, 1536, 1536, f8, True) == "t144"
    assert pick(1536, 1536, 1536, f16, True) == "t144"
    assert pick(1536, 1536, 1536, f16, False) == "t144s"  # 132 swapped tiles in one round, no third slab
    assert pick(1536, 1536, 6144, f8, True) == "t144"
    assert pick(2560, 2560, 2560, f16, True) == "t144"  # 3 rounds of 144 columns against rung 9's 2 of 256
    # t144 would split K in two; 72 tiles of 128x128 need not, 96 of 64x192 fill more SMs (t64x192_mid:
    # 6.0 against t128's 7.2 us, fp16 10.0 against 11.7)
    assert pick(768, 1536, 1536, f8, True) == "t64x192" and pick(768, 1536, 1536, f16, False) == "t64x192"
    assert pick(512, 2048, 2048, f16, False) == "t64"  # 128 tiles of 64x128: one round (t64x192 12.0 us, t64 9.6)
    # 128 rows: 112 tiles of 128x128 in one round against t64's 224 in two (35.7 against 40.5 us, t160 40.7:
    # t64_t128_rows128_1024); at 4096 columns t64's 64 tiles fill one round (13.0 against t128's 14.6)
    # (the n2 tile at 4096 columns: 10.8 against t64's 12.5, n2_band)
    assert pick(128, 14336, 4096, f16, False) == "t128" and pick(128, 4096, 4096, f16, False) == "sw64n2"
    assert pick(4096, 4096, 4096, f16, True) == "hoist_es" and pick(3072, 3072, 3072, f16, True) == "t192"
    t144, t192 = VARIANTS["t144"], VARIANTS["t192"]
    assert estimate_us(t144, 1536, 1536, 1536, "fp16", 132, b_kmajor=False) == estimate_us(
        t192, 1536, 1536, 1536, "fp16", 132)  # one round each, the same k-tiles, costed alike
    assert estimate_us(t144, 1536, 1536, 1536, "fp16", 132) < 0.85 * estimate_us(t192, 1536, 1536, 1536, "fp16", 132)


def test_auto_cost_model_ranks_the_tiles_as_measured() -> None:
    """`estimate_us` against the H200: the predicted times lie within 35 % of the measured kernels, and the faster
    tile is the one measured faster."""
    from tcforge.gemm.model import estimate_us
    from tcforge.gemm.variants import VARIANTS

    big, small = VARIANTS["hoist"], VARIANTS["t64"]
    # (shape, dtype, measured rung 9 us incl. split-K reduction, measured t64 us) (smallm_swapped_t64, long_k_split)
    # (split-K reduced inside the kernel or through planes, whichever fused_split_pays picks)
    measured = [
        ((1024, 1024, 65536), "fp16", 225.5, 305.8),  # long K: rung 9 with split-K wins
        ((1024, 1024, 65536), "e4m3", 121.6, 149.0),
        ((2048, 1024, 8192), "fp16", 64.8, 82.2),
        ((1024, 1024, 1024), "fp16", 18.0, 6.8),
        ((2048, 2048, 2048), "fp16", 30.7, 39.6),
        ((256, 14336, 4096), "fp16", 58.8, 74.1),
        ((512, 512, 16384), "fp16", 25.5, 24.0),
    ]
    for (m, n, k), kind, t_big, t_small in measured:
        e_big, e_small = estimate_us(big, m, n, k, kind, 132), estimate_us(small, m, n, k, kind, 132)
        assert (e_big <= e_small) == (t_big <= t_small), (m, n, k, kind)
        assert abs(e_big / t_big - 1) < 0.35 and abs(e_small / t_small - 1) < 0.35, (m, n, k, kind, e_big, e_small)

    def plan(m: int, n: int, k: int) -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)))

    assert pick_variant(plan(1024, 1024, 65536), 132).name == "hoist"
    assert pick_variant(plan(2048, 1024, 8192), 132).name == "hoist"
    # 1280x4096x4096: rung 9 data-parallel would lose to t64 (2 rounds, the second 14/66 full); stream-K beats both,
    # t160 (two full rounds) beats stream-K
    assert estimate_us(big, 1280, 4096, 4096, "fp16", 132) > estimate_us(small, 1280, 4096, 4096, "fp16", 132)
    sk = estimate_us(big, 1280, 4096, 4096, "fp16", 132, streamk=True)
    assert estimate_us(VARIANTS["t160"], 1280, 4096, 4096, "fp16", 132) < sk < estimate_us(small, 1280, 4096, 4096,
                                                                                              "fp16", 132)
    # and t320 (one round of 130 tiles) beats t160 (73.9 against 76.1 us)
    assert estimate_us(VARIANTS["t320"], 1280, 4096, 4096, "fp16", 132) < estimate_us(VARIANTS["t160"], 1280, 4096,
                                                                                      4096, "fp16", 132)
    assert pick_variant(plan(1280, 4096, 4096), 132).name == "t320"
