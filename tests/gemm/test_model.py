"""The launch model and the launch plan: splits, stream-K, PDL, L2 promotion and the tile costs, without a GPU."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest
from gemm_testlib import F16, FakeTensor, col_major

from tcforge.errors import TcforgeError
from tcforge.gemm import codegen, plan_matmul
from tcforge.gemm.auto import N2_MIN_CLUSTERS, N2_RULE_CLUSTERS, n2_build, swap_order
from tcforge.gemm.check import fast_accum_peer
from tcforge.gemm.config import MAX_SMEM, PAIR_MIN_STAGES, pair_config, split_config
from tcforge.gemm.model import (
    ONE_ROUND_COST,
    SPLIT_BY_MODEL,
    SWAP_PDL_MIN_FILL,
    choose_splits,
    cluster_tiles,
    cost_key,
    estimate_us,
    fused_split_batches,
    fused_split_pays,
    fused_split_us,
    pdl_pays,
    persistent_clusters,
    planes_split_us,
)
from tcforge.gemm.plan import Device, LaunchOptions, l2_promotion, plan_launch
from tcforge.gemm.variants import VARIANTS


def test_split_k_only_when_tiles_leave_sms_idle() -> None:
    cfg = VARIANTS["splitk"].config
    assert choose_splits(cfg, 4096, 4096, 4096, "fp16", 132) == 1
    s = choose_splits(cfg, 256, 256, 65536, "fp16", 132)
    assert 2 <= s <= 16
    kt = 65536 // 64
    per = -(-kt // s)
    assert (s - 1) * per < kt  # every split has work
    assert choose_splits(cfg, 64, 64, 128, "fp16", 132) == 1  # too little K to share


def test_persistent_grid_is_one_round_of_resident_clusters() -> None:
    assert persistent_clusters(512, 132, 1, None) == 132
    assert persistent_clusters(512, 132, 2, None) == 66
    # clusters of 4 fit 4 per GPC: 8 GPCs of 16-18 SMs hold 32, not 132 // 4 = 33 (a 33rd would run a second round)
    assert persistent_clusters(512, 132, 4, 32) == 32
    assert persistent_clusters(10, 132, 4, 32) == 10  # fewer work units than resident clusters
    assert persistent_clusters(512, 132, 2, 0) == 66  # failed query: SMs / cluster size


def test_split_reduction_choice_follows_the_load_batches() -> None:
    """The in-kernel reduction's last split reads every slot in batches of loads (fused_split_batches mirrors the
    kernel): one batch for the swapped 16-row tile's two splits, one per slot for the 64x128 tile, 8 per slot beside
    rung 9's 128 accumulators. Where a slice needs many batches and the planes are small, the planes win (measured
    at 16 splits: 256x256x65536, 512x512x16384)."""
    v = VARIANTS
    assert fused_split_batches(v["sw16"].config, 2) == 1 and fused_split_batches(v["sw16"].config, 4) == 1
    assert fused_split_batches(v["sw32"].config, 2) == 1 and fused_split_batches(v["sw64"].config, 2) == 2
    assert fused_split_batches(v["t64"].config, 4) == 4 and fused_split_batches(v["hoist"].config, 4) == 16
    assert fused_split_batches(v["tuned_pp"].config, 2) == 2 * 2 * 2  # two m-blocks per ping-pong warpgroup
    assert fused_split_pays(v["sw16"].config, 16, 4096, 2) and fused_split_pays(v["sw64"].config, 64, 4096, 2)
    assert fused_split_pays(v["hoist"].config, 1024, 1024, 4)
    assert not fused_split_pays(v["t64"].config, 256, 256, 16)
    assert not fused_split_pays(v["hoist"].config, 512, 512, 16)
    # the swapped tiles wider than 64 columns reduce in the kernel at any split count (measured faster at 4-8 splits,
    # where the batch count predicts the planes cheaper: 80 x 1024 x 14336 split 8)
    assert fused_split_us(v["sw80"].config, 8) > planes_split_us(80, 1024, 8)
    assert all(fused_split_pays(v[n].config, 80, 1024, 8) for n in ("sw80", "sw96", "sw112", "sw128"))


def test_pdl_policy_follows_the_measured_points() -> None:
    """PDL where it was measured faster: every swapped tile, every fp8 launch,
    16-bit t64 with <= 16 k-tiles per CTA (1024^3, 128x4096x1024 split 2); not 16-bit t64 with 32-64 k-tiles per
    CTA on 112-128 CTAs, nor 16-bit rung 9 at 4096^3."""
    def policy(name: str, m: int, n: int, k: int, in_kind: str = "fp16", splits: int | None = None) -> bool:
        v = VARIANTS[name]
        c = v.config
        s = splits if splits is not None else choose_splits(c, m, n, k, in_kind, 132) if v.splitk_auto else 1
        cfg = c if s == 1 else split_config(c)
        units = cluster_tiles(cfg, m, n) * s
        ctas = min(units, 132 // cfg.cm) if v.persistent else units
        return pdl_pays(cfg, in_kind, units, ctas, -(-k // cfg.bk(in_kind)), s)

    for name in ("sw8", "sw16", "sw32", "sw64"):
        assert policy(name, 1, 4096, 4096) and policy(name, 128, 4096, 4096, "e4m3")
    assert policy("t64", 1024, 1024, 1024) and policy("t64", 1024, 1024, 1024, "e4m3")
    assert policy("t64", 128, 4096, 1024, splits=2)
    assert not policy("t64", 128, 4096, 4096, splits=2)
    assert not policy("t64", 256, 4096, 4096) and not policy("t64", 64, 14336, 4096)
    assert policy("t64", 256, 4096, 4096, "e4m3") and policy("hoist", 2048, 2048, 2048, "e4m3")
    assert not policy("hoist", 4096, 4096, 4096) and not policy("hoist", 4096, 4096, 4096, "bf16")


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


def test_pdl_is_off_for_one_underfilled_round_of_4_cta_swapped_clusters() -> None:
    """A 4-CTA-cluster swapped launch of one round under C4_MIN_FILL of the resident
    clusters ran 3-6 us per GEMM slower with PDL; with most of a round, two rounds or a split it ran faster."""
    c4, sw = VARIANTS["sw16c4"].config, VARIANTS["sw16"].config
    assert not pdl_pays(c4, "bf16", 22, 22, 64, 1, 30)  # 16x11008x4096: 22 of 30 clusters
    assert not pdl_pays(c4, "e4m3", 18, 18, 32, 1, 30)  # 16x9216x4096
    assert not pdl_pays(c4, "bf16", 24, 24, 32, 1, 30)  # 16x12288x2048: 24 of 30 (0.80)
    assert pdl_pays(c4, "bf16", 26, 26, 64, 1, 30)  # 16x13312x4096: 26 of 30 (0.87)
    assert pdl_pays(c4, "bf16", 32, 30, 64, 1, 30)  # 16x16384x4096: a second round
    assert pdl_pays(c4, "bf16", 32, 30, 16, 2, 30)  # 16x8192x2048: split over K
    assert pdl_pays(c4, "bf16", 22, 22, 64, 1)  # no residency count: as every swapped launch
    assert pdl_pays(sw, "bf16", 172, 132, 64, 1, 30)  # the 64-row tile keeps it


def test_pdl_is_off_for_one_underfilled_round_of_one_cta_swapped_tiles() -> None:
    """An unsplit one-CTA swapped launch on 72-96 of 132 SMs ran 0.4-5.6 us per GEMM
    slower with PDL (16-bit; fp8 from 0.2 us faster to 2.7 us slower), level on 104-112 (fp8 faster with it on 104);
    split launches and the n2 tiles keep it."""
    sw64, sw16, n2 = VARIANTS["sw64"].config, VARIANTS["sw16"].config, VARIANTS["sw32n2"].config
    assert not pdl_pays(sw64, "bf16", 80, 80, 64, 1, 132)  # 64 x 5120 x 4096
    assert not pdl_pays(sw64, "e4m3", 96, 96, 32, 1, 132)  # 64 x 6144 x 4096
    assert not pdl_pays(sw16, "fp16", 80, 80, 64, 1, 132)  # 16 x 5120 x 4096
    assert pdl_pays(sw64, "bf16", 112, 112, 64, 1, 132)  # 64 x 7168 x 4096: level there
    assert pdl_pays(sw64, "e4m3", 104, 104, 32, 1, 132)  # 64 x 6656 x 4096: fp8 faster with it
    assert pdl_pays(sw64, "bf16", 128, 128, 64, 1, 132) and pdl_pays(sw64, "bf16", 256, 132, 64, 1, 132)
    assert pdl_pays(sw16, "bf16", 128, 128, 64, 2, 132)  # 16 x 4096 x 4096, split 2 (the pair)
    assert pdl_pays(sw64, "bf16", 80, 80, 64, 1)  # no SM count given: as before
    assert pdl_pays(n2, "bf16", 32, 32, 64, 1, 132)  # the n2 tiles: measured with PDL only
    assert 96 < SWAP_PDL_MIN_FILL * 132 < 104  # 104 CTAs: 16-bit level, fp8 0.2-0.5 us faster with PDL


def test_the_cublas_mode_each_variant_is_compared_with() -> None:
    """fp8 launches that do not promote are checked against cuBLAS's use_fast_accum=True output (their bits), the
    promoting variants against its default; 16-bit inputs have one cuBLAS mode."""
    assert fast_accum_peer("hoist", "e4m3") and fast_accum_peer("auto", "e4m3") and fast_accum_peer("hoist_ed", "e4m3")
    assert not fast_accum_peer("promote", "e4m3") and not fast_accum_peer("promote_cm1", "e4m3")
    assert not fast_accum_peer("hoist", "bf16") and not fast_accum_peer("promote", "fp16")


def test_l2_promotion_is_128_bytes_for_the_swapped_tiles_and_256_for_the_rest() -> None:
    """The operand maps' L2 promotion by tile: 128 B where a swapped small-M tile streams each weight row 128 bytes
    per k-tile (measured 2-4 % faster than 256 B at 8-32 x 14336 x 4096), 256 B elsewhere; LaunchOptions.l2_promotion
    forces one value for every launch (the bench's --l2-promotion) and refuses anything but None and 0..3."""
    from tcforge.runtime.tensormap import L2_PROMOTION_128B, L2_PROMOTION_256B

    default = LaunchOptions()
    assert l2_promotion(VARIANTS["sw16c4"].config, default) == L2_PROMOTION_128B
    assert l2_promotion(VARIANTS["sw64"].config, default) == L2_PROMOTION_128B
    assert l2_promotion(VARIANTS["hoist_ed"].config, default) == L2_PROMOTION_256B
    assert l2_promotion(VARIANTS["t64"].config, default) == L2_PROMOTION_256B
    forced = LaunchOptions(l2_promotion=1)
    assert l2_promotion(VARIANTS["sw16"].config, forced) == l2_promotion(VARIANTS["hoist"].config, forced) == 1
    with pytest.raises(TcforgeError, match="l2_promotion must be None or 0..3"):
        LaunchOptions(l2_promotion=4)


def test_launch_options_are_explicit_and_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """LaunchOptions replaces module switches: PDL on unless TCFORGE_PDL=0 when the options are made, no poisoning,
    the driver's cluster policy; a plan made with PDL off launches without it; options cannot be changed in place."""
    import dataclasses

    monkeypatch.delenv("TCFORGE_PDL", raising=False)
    assert LaunchOptions() == LaunchOptions(poison_output=False, pdl=True, l2_promotion=None, cluster_policy=0)
    monkeypatch.setenv("TCFORGE_PDL", "0")
    assert not LaunchOptions().pdl
    with pytest.raises(dataclasses.FrozenInstanceError):
        LaunchOptions().pdl = True  # type: ignore[misc]
    p = plan_matmul(FakeTensor((16, 4096)), col_major(4096, 4096, F16))
    assert plan_launch(p, options=LaunchOptions(pdl=True)).pdl
    assert not plan_launch(p, options=LaunchOptions(pdl=False)).pdl


def test_poisoned_result_poisons_the_one_launch_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benches' check before timing fills the launch's outputs with NaN, launches it once and returns its result;
    a failing launch raises."""
    import types

    from tcforge.gemm.check import poisoned_result

    # no GPU (nor torch) needed: a stand-in torch whose synchronize does nothing
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    seen = []

    class Launch:
        def poison_outputs(self) -> None:
            seen.append("poison")

        def __call__(self) -> None:
            seen.append("launch")

        def result(self) -> str:
            return "C"

    class Failing(Launch):
        def __call__(self) -> None:
            raise RuntimeError("launch failed")

    assert poisoned_result(Launch()) == "C" and seen == ["poison", "launch"]
    with pytest.raises(RuntimeError, match="launch failed"):
        poisoned_result(Failing())


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


def test_the_launch_plan_is_a_pure_function_of_problem_device_and_options() -> None:
    """plan_launch needs no GPU: the same inputs give the same frozen plan; the driver's resident-cluster count (the
    device's `resident`) is asked for only where it sizes the grid, and stream-K runs only with it; two splits of a
    swapped tile run as a pair reduced in the kernel; forced splits keep the variant resolved by M."""
    import dataclasses

    p = plan_matmul(FakeTensor((4096, 4096)), FakeTensor((4096, 4096)))
    lp = plan_launch(p, options=LaunchOptions(pdl=True))
    assert lp == plan_launch(p, options=LaunchOptions(pdl=True))
    assert (lp.variant.name, lp.splits, lp.grid, lp.sk_units, lp.pdl, lp.l2_promotion) == ("hoist_es", 1, 132, 0,
                                                                                            False, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        lp.splits = 2  # type: ignore[misc]
    big = plan_matmul(FakeTensor((5120, 5120)), FakeTensor((5120, 5120)))
    assert (plan_launch(big).variant.name, plan_launch(big).sk_units) == ("streamk", 0)  # no count: no stream-K
    asked = []
    lp = plan_launch(big, Device(132, lambda cfg: asked.append(cfg) or 66))
    assert (lp.sk_units, lp.resident, lp.grid) == (70, 66, 132) and [c.streamk for c in asked] == [True]
    small = plan_matmul(FakeTensor((16, 4096)), col_major(4096, 4096, F16))
    lp = plan_launch(small)
    assert (lp.variant.name, lp.splits, lp.fused, lp.planes, lp.config.split_pair, lp.grid) == ("sw16", 2, True,
                                                                                                False, True, 128)
    assert replace(lp.config, split_pair=False, splitk_fused=False) == VARIANTS["sw16"].config
    assert plan_launch(small, splits=1).variant.name == "t64" and plan_launch(small, Device(114)).grid <= 114
    with pytest.raises(TcforgeError, match="split_mode must be one of"):
        plan_launch(small, split_mode="tree")
