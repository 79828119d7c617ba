"""The ladder's configs: every rung builds within sm_90's limits, renders a kernel, and split-K triggers where meant."""

from __future__ import annotations

import re
import sys

import pytest

from tcforge.errors import TcforgeError
from tcforge.gemm import codegen
from tcforge.gemm.build import all_builds, configs_of
from tcforge.gemm.variants import LADDER, MAX_SMEM, SWEEP, VARIANTS, choose_splits


def test_ladder_has_nine_cumulative_rungs() -> None:
    assert [v.rung for v in LADDER] == list(range(1, 10))
    assert not LADDER[0].config.use_tma and LADDER[1].config.use_tma
    assert LADDER[2].config.bn == 256 and LADDER[2].config.setmaxnreg and LADDER[2].config.nc == 2
    assert LADDER[3].config.cm == 2 and LADDER[4].config.tma_store and LADDER[5].config.bk_bytes == 128
    assert LADDER[6].persistent and LADDER[6].group_m > 1 and LADDER[7].splitk_auto and LADDER[8].config.hoist
    assert VARIANTS["r6"] is LADDER[5]


@pytest.mark.parametrize("variant", LADDER + SWEEP, ids=lambda v: v.name)
def test_every_config_fits(variant) -> None:  # noqa: ANN001
    for cfg in configs_of(variant):
        cfg.check()
        assert cfg.smem_bytes() <= MAX_SMEM
        assert cfg.threads in (256, 384)


def test_rendered_source_defines_and_wgmma_operands() -> None:
    cfg = VARIANTS["bk64"].config
    src = codegen.render(cfg, "fp16", "fp32", False)
    assert "#define BK 64\n" in src and "#define CM 2\n" in src and "#define TMA_STORE 1\n" in src
    assert "m64n256k16.f32.f16.f16" in src and "p, 1, 1, 0, 1;" in src  # B transposed (MN-major)
    # wgmma_tile: 128 accumulators (m64n256); wgmma_half: 64 (m64n128, the promoting fp8 builds' partial sums);
    # wgmma_tile_sd: 128 (the stream-K builds' first k-tile, scale-d as an argument)
    assert len(re.findall(r'"\+f"\(d\[\d+\]\)', src)) == 128 + 64 + 128
    assert "void wgmma_tile_sd(float (&d)[128], uint64_t da, uint64_t db, int scale_d)" in src
    assert "m64n128k16.f32.f16.f16" in src and "int scale_d" in src
    assert "#define PROMOTE 1" not in src  # only promoting builds set it (the template defaults it to 0)
    fp8 = codegen.render(cfg, "e4m3", "bf16", True)
    assert "#define BK 128\n" in fp8 and "m64n256k32.f32.e4m3.e4m3" in fp8 and "p, 1, 1;" in fp8
    promoted = codegen.render(VARIANTS["promote"].config, "e4m3", "bf16", True)
    assert "#define PROMOTE 1\n" in promoted and "m64n128k32.f32.e4m3.e4m3" in promoted


def test_split_k_only_when_tiles_leave_sms_idle() -> None:
    cfg = VARIANTS["splitk"].config
    assert choose_splits(cfg, 4096, 4096, 4096, "fp16", 132) == 1
    s = choose_splits(cfg, 256, 256, 65536, "fp16", 132)
    assert 2 <= s <= 16
    kt = 65536 // 64
    per = -(-kt // s)
    assert (s - 1) * per < kt  # every split has work
    assert choose_splits(cfg, 64, 64, 128, "fp16", 132) == 1  # too little K to share


def test_builds_cover_every_dtype_and_layout() -> None:
    builds = list(all_builds())
    pairs = {(b.in_kind, b.out_kind, b.b_kmajor) for b in builds}
    assert ("fp16", "fp32", False) in pairs and ("fp16", "fp32", True) in pairs
    assert ("e4m3", "bf16", True) in pairs and ("e4m3", "bf16", False) not in pairs
    assert len({b.tag() for b in builds}) == len(builds)


def test_epilogue_buffers_are_counted_and_named() -> None:
    e4 = VARIANTS["epi4"].config
    assert e4.epi_bufs == 4 and e4.stages == 3
    # 3 stages x (128 + 256) rows x 128 B, + 2 consumers x 4 buffers x 64 rows x 128 B, + barriers + slack
    assert e4.smem_bytes() == 3 * 384 * 128 + 2 * 4 * 64 * 128 + 2 * 3 * 8 + 1024
    src = codegen.render(e4, "bf16", "bf16", True)
    assert "#define EPI_BUFS 4\n" in src and "#define PRODUCER_REGS 40\n" in src and "#define STAGES 3\n" in src
    assert "_e4" in codegen.tag(e4, "bf16", "bf16", True)
    assert "_e" not in codegen.tag(VARIANTS["hoist"].config, "bf16", "bf16", True).split("_h")[-1]
    # the split-K build keeps the staged epilogue (the in-kernel reduction's last split stores through it)
    split = [c for c in configs_of(VARIANTS["epi4"]) if c.splitk_fused or c.splitk]
    assert len(split) == 1 and split[0].splitk_fused and split[0].epi_bufs == 4 and split[0].tma_store
    assert split[0].smem_bytes() == e4.smem_bytes()
    whole = VARIANTS["epi8_bk32"].config
    assert whole.epi_bufs * 128 // 4 == whole.bn  # 8 sub-tiles of 32 fp32 columns = the whole 256-column tile
    assert whole.smem_bytes() <= MAX_SMEM


def test_config_refuses_bad_epilogue_and_register_splits() -> None:
    from dataclasses import replace

    e4 = VARIANTS["epi4"].config
    for bad in (
        replace(e4, epi_bufs=1),
        replace(e4, epi_bufs=9),
        replace(e4, producer_regs=36),
        replace(e4, producer_regs=40, consumer_regs=240),  # 40*128 + 2*240*128 > 65536
        # 48*128 + 2*232*128 = 65536, but the 384-thread CTA holds 168 x 384 = 64512 registers: setmaxnreg.inc hung
        # on the device waiting for the rest (a stream-K build of this session, before this check)
        replace(e4, producer_regs=48, consumer_regs=232),
        replace(e4, stages=4),  # 192 KB ring + 64 KB staging > 227 KB
    ):
        with pytest.raises(TcforgeError):
            bad.check()


def test_hoisted_descriptors_are_a_tma_path_option() -> None:
    """Rung 9's hoisted descriptors (mma_stage_desc) exist on the TMA path only: a cp.async build with hoisting is
    refused by name, so the kernel's per-address mma_stage needs no hoisted copy."""
    from dataclasses import replace

    base = VARIANTS["baseline"].config
    assert not base.use_tma and not base.hoist
    with pytest.raises(TcforgeError, match="hoisted descriptors need the TMA path"):
        replace(base, hoist=True).check()
    replace(VARIANTS["tma_ws"].config, hoist=True).check()  # the same option on the TMA path builds


def test_spread_epilogue_defers_fp32_c_too() -> None:
    """epi_spread: EPI_DEFER and EPI_SPREAD in every build of hoist_es, fp32 C included (hoist_ed's fp32 builds are
    plain rung 9); refused without a deferred epilogue."""
    from dataclasses import replace

    es = VARIANTS["hoist_es"].config
    assert es == replace(VARIANTS["hoist_ed"].config, epi_spread=True) and not VARIANTS["hoist_es"].splitk_auto
    builds = list(all_builds([VARIANTS["hoist_es"]]))
    assert {b.out_kind for b in builds} == {"fp32", "fp16", "bf16"}
    for b in builds:
        assert b.config == es, b.tag()
        src = b.source()
        assert "#define EPI_DEFER 1\n" in src and "#define EPI_SPREAD 1\n" in src, b.tag()
    with pytest.raises(TcforgeError, match="spread epilogue is a deferred one"):
        replace(VARIANTS["hoist"].config, epi_spread=True).check()


def test_deferred_epilogue_is_a_16_bit_output_build_of_unsplit_tiles() -> None:
    """epi_defer packs C to 16 bits under the next tile's wgmmas: EPI_DEFER is set for 16-bit C only (a fp32-output
    build of the variant is the plain build), and refused with split-K, stream-K, ping-pong, swap or two m64 blocks."""
    from dataclasses import replace

    ed = VARIANTS["hoist_ed"].config
    assert ed == replace(VARIANTS["hoist"].config, epi_defer=True) and not VARIANTS["hoist_ed"].splitk_auto
    builds = list(all_builds([VARIANTS["hoist_ed"]]))
    for b in builds:
        assert b.config.epi_defer == (b.out_kind != "fp32"), b.tag()
        assert ("#define EPI_DEFER 1\n" in b.source()) == (b.out_kind != "fp32"), b.tag()
    plain = {b.tag() for b in all_builds([VARIANTS["hoist"]])}
    assert all(b.tag() in plain for b in builds if b.out_kind == "fp32")
    for bad in (replace(ed, splitk_fused=True), replace(ed, streamk=True), replace(ed, tma_store=False),
                replace(ed, bm=256, bn=128, stages=3), replace(ed, cm=1, pingpong=True, bn=128)):
        with pytest.raises(TcforgeError, match="deferred epilogue"):
            bad.check()


def test_a_tile_width_of_partial_slabs_reserves_whole_slabs() -> None:
    """t144 (128x144): an MN-major B is loaded in whole 64-column slabs, so each stage reserves 3 slabs (192 rows
    of 128 bytes) — for either layout — and the 144 columns are one m64n144 wgmma; the staged epilogue stores the
    whole 128-byte sub-tiles by TMA and the last 16 columns from registers (the kernel's BN % EPI_N tail)."""
    from dataclasses import replace

    t144 = VARIANTS["t144"].config
    assert (t144.bm, t144.bn, t144.cm, t144.b_rows) == (128, 144, 1, 192)
    # 4 stages x (128 + 192) rows x 128 B + 2 consumers x 2 buffers x 64 rows x 128 B + barriers + slack
    assert t144.smem_bytes() == 4 * 320 * 128 + 2 * 2 * 64 * 128 + 2 * 4 * 8 + 1024
    assert VARIANTS["t192"].config.b_rows == 192 and VARIANTS["sw8"].config.b_rows == 8  # swapped: K-major, exact
    src = codegen.render(t144, "fp16", "fp32", False)
    assert "#define BN 144\n" in src and "m64n144k16.f32.f16.f16" in src and "p, 1, 1, 0, 1;" in src
    assert len(re.findall(r'"\+f"\(d\[\d+\]\)', src)) == 72 + 36 + 72  # m64n144: 72 accumulators (tile, half, tile_sd)
    assert "m64n144k32.f32.e4m3.e4m3" in codegen.render(t144, "e4m3", "bf16", True)
    for bad in (replace(t144, cm=2), replace(t144, bn=140), replace(t144, bn=328), replace(t144, use_tma=False)):
        with pytest.raises(TcforgeError, match="BN|slabs|accumulators"):
            bad.check()


def test_a_tile_wider_than_256_columns_issues_two_wgmmas() -> None:
    """t320 (128x320): each consumer's 64x320 is an n256 wgmma on accumulators 0-127 and an n64 on 128-159, the
    second's B descriptor advanced to column 256 (four whole slabs of an MN-major B, 256 rows of a K-major one); a
    K-major B's 320 rows are loaded as two boxes of 160 (a TMA box holds at most 256 rows); 3 stages of 56 KB."""
    from dataclasses import replace

    t320 = VARIANTS["t320"].config
    assert (t320.bm, t320.bn, t320.cm, t320.stages, t320.b_rows, t320.b_box_rows) == (128, 320, 1, 3, 320, 160)
    assert VARIANTS["hoist"].config.b_box_rows == 128 and VARIANTS["tuned"].config.b_box_rows == 256
    assert t320.smem_bytes() == 3 * (128 + 320) * 128 + 2 * 2 * 64 * 128 + 2 * 3 * 8 + 1024
    src = codegen.render(t320, "fp16", "fp32", False)
    assert "#define BN 320\n" in src and "m64n256k16.f32.f16.f16" in src and "m64n64k16.f32.f16.f16" in src
    assert "void wgmma_tile(float (&d)[160], uint64_t da, uint64_t db)" in src
    assert "wgmma_tile_lo(*reinterpret_cast<float (*)[128]>(&d[0]), da, db);" in src
    assert "wgmma_tile_hi(*reinterpret_cast<float (*)[32]>(&d[128]), da," in src
    assert "db + (uint64_t)((B_KMAJOR ? 256 * BK_BYTES : 4 * B_SLAB) >> 4)" in src
    # tile and tile_sd: 128 + 32 accumulators each; wgmma_half (promotion's BN/2 = 160 columns): one m64n160, 80
    assert len(re.findall(r'"\+f"\(d\[\d+\]\)', src)) == 160 + 80 + 160
    fp8 = codegen.render(t320, "e4m3", "bf16", True)
    assert "m64n256k32.f32.e4m3.e4m3" in fp8 and "m64n64k32.f32.e4m3.e4m3" in fp8
    for bad in (replace(t320, bn=328), replace(t320, bm=256), replace(t320, stages=4)):
        with pytest.raises(TcforgeError, match="BN|accumulators|shared memory"):
            bad.check()


def test_persistent_grid_is_one_round_of_resident_clusters() -> None:
    from tcforge.gemm.api import persistent_clusters

    assert persistent_clusters(512, 132, 1, None) == 132
    assert persistent_clusters(512, 132, 2, None) == 66
    # clusters of 4 fit 4 per GPC: 8 GPCs of 16-18 SMs hold 32, not 132 // 4 = 33 (a 33rd would run a second round)
    assert persistent_clusters(512, 132, 4, 32) == 32
    assert persistent_clusters(10, 132, 4, 32) == 10  # fewer work units than resident clusters
    assert persistent_clusters(512, 132, 2, 0) == 66  # failed query: SMs / cluster size


def test_split_k_builds_reduce_inside_the_kernel_or_through_planes() -> None:
    """Every TMA split-K variant's split build is SK_FUSED (one build, two reductions chosen per launch); the cp.async
    baseline has only planes; the fused build refuses the planes build, stream-K and the cp.async path."""
    from dataclasses import replace

    from tcforge.gemm.build import split_config

    for v in LADDER + SWEEP:
        if not v.splitk_auto:
            continue
        main, split, *pair = configs_of(v)
        assert split.splitk_fused and not split.splitk and not split.streamk, v.name
        # the swapped tiles add the pair build (two splits in a 2-CTA cluster, the partial moved through DSMEM);
        # not those already in a cluster (sw8c4 / sw16c4 / sw32c4 / sw64c4: their two splits reduce through L2)
        # nor sw112 / sw128, whose receive slot leaves fewer than PAIR_MIN_STAGES stages beside it
        has_pair = v.config.swap_ab and v.config.cm == 1 and v.config.bn <= 96
        assert [p.split_pair for p in pair] == ([True] if has_pair else []), v.name
        if pair:  # the split build plus the receive slot, on the same ring or one cut to make room (sw80 / sw96)
            assert pair[0] == replace(split, split_pair=True, stages=pair[0].stages) and pair[0].stages <= split.stages
            assert "#define SK_PAIR 1\n" in codegen.render(pair[0], "fp16", "fp32", False)
            assert pair[0].smem_bytes() > replace(split, stages=pair[0].stages).smem_bytes()
        assert split.tma_store == main.tma_store and split.epi_bufs == main.epi_bufs, v.name
        src = codegen.render(split, "fp16", "fp32", False)
        assert "#define SK_FUSED 1\n" in src and "#define SPLITK 0\n" in src
        assert "_fsk" in codegen.tag(split, "fp16", "fp32", False)
    assert "SK_FUSED 1" not in codegen.render(VARIANTS["hoist"].config, "fp16", "fp32", False)
    assert split_config(VARIANTS["baseline"].config).splitk  # no TMA path: planes, written directly
    for bad in (replace(VARIANTS["hoist"].config, splitk_fused=True, splitk=True),
                replace(VARIANTS["hoist"].config, splitk_fused=True, split_pair=True),  # a 2-CTA cluster already
                replace(VARIANTS["sw16"].config, split_pair=True),  # no in-kernel split-K build
                replace(VARIANTS["streamk"].config, splitk_fused=True),
                replace(VARIANTS["baseline"].config, splitk_fused=True)):
        with pytest.raises(TcforgeError):
            bad.check()


def test_split_reduction_choice_follows_the_load_batches() -> None:
    """The in-kernel reduction's last split reads every slot in batches of loads (fused_split_batches mirrors the
    kernel): one batch for the swapped 16-row tile's two splits, one per slot for the 64x128 tile, 8 per slot beside
    rung 9's 128 accumulators. Where a slice needs many batches and the planes are small, the planes win (measured
    at 16 splits: 256x256x65536, 512x512x16384)."""
    from tcforge.gemm.variants import fused_split_batches, fused_split_pays, fused_split_us, planes_split_us

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
    """PDL where it was measured faster (gemm_pdl_s16b*/s16c*/s16e*.json): every swapped tile, every fp8 launch,
    16-bit t64 with <= 16 k-tiles per CTA (1024^3, 128x4096x1024 split 2); not 16-bit t64 with 32-64 k-tiles per
    CTA on 112-128 CTAs, nor 16-bit rung 9 at 4096^3."""
    from tcforge.gemm.variants import VARIANTS, choose_splits, cluster_tiles, pdl_pays, split_config

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


def test_a_128_column_swapped_tile_stages_c_transposed_in_128_row_buffers() -> None:
    """sw128c4: the swapped product up to 128 activation columns (BN over the warpgroup's 64 rows); its staging
    buffers hold BN rows of C^T (EPI_BUF in the kernel), the narrower swapped tiles keep 64-row buffers (their builds
    unchanged); t144s stages 144-row buffers, and BN 168 is refused."""
    from dataclasses import replace

    from tcforge.gemm.variants import VARIANTS

    c = VARIANTS["sw128c4"].config
    assert (c.bn, c.bm, c.cm, c.stages) == (128, 128, 4, 5)
    assert c.smem_bytes() == 5 * (128 + 128) * 128 + 2 * 2 * 128 * 128 + 2 * 5 * 8 + 1024
    assert VARIANTS["sw16c4"].config.smem_bytes() == 10 * (128 + 16) * 128 + 2 * 2 * 64 * 128 + 2 * 10 * 8 + 1024
    t = VARIANTS["t144s"].config
    assert t.swap_ab and (t.bm, t.bn, t.nc, t.cm, t.stages) == (128, 144, 2, 1, 4)
    assert t.b_rows == 144 and t.smem_bytes() == 4 * (128 + 144) * 128 + 2 * 2 * 144 * 128 + 2 * 4 * 8 + 1024
    with pytest.raises(TcforgeError, match="up to 160"):
        replace(c, bn=168, stages=2).check()


def test_wide_64_row_swapped_tiles_stream_b_once_and_keep_the_pair_split() -> None:
    """sw80 / sw96 (65-96 rows with a short N): one column of 64-row tiles where sw64 needs two, split 2 over K at
    80 x 4096 x 4096 as sw64 is at 64 rows; as many stages as fit, their pair builds giving up stages for the receive
    slot (not below PAIR_MIN_STAGES) while the narrower tiles' pairs keep their rings; BN-row staging buffers; the
    wgmma's n80 / n96. `auto` weighs each only where M fits it (swap_order: 65-80 rows sw80, 81-96 sw96, 97-112
    sw112); sw128 is not in the model's order (its own fp8 rule, api.refine_auto: SW128_FP8_MIN_K)."""
    from dataclasses import replace

    from tcforge.gemm.variants import PAIR_MIN_STAGES, cluster_tiles, pair_config, swap_order

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


def test_a_cluster_along_n_multicasts_row_slices_of_a() -> None:
    """n96c4 / n128c4: 4-CTA clusters along N — each CTA's A box is a quarter of the tile's rows (multicast), its B
    box the whole tile (not multicast); a cluster covers four column tiles of one row band, so 96 x 11008 makes 29
    cluster tiles (115 CTA tiles, the last cluster's fourth past N); CLUSTER_N in the source and the tag; refused with
    a swap, split-K, stream-K or a single CTA."""
    from dataclasses import replace

    from tcforge.gemm.variants import cluster_tiles

    c = VARIANTS["n96c4"].config
    assert (c.bm, c.bn, c.cm, c.cluster_n, c.a_box_rows, c.b_box_rows, c.b_multicast) == (128, 96, 4, True, 32, 96, 1)
    hoist = VARIANTS["hoist"].config
    assert (hoist.a_box_rows, hoist.b_box_rows, hoist.b_multicast) == (128, 128, 2)
    assert cluster_tiles(c, 96, 11008) == 29 and cluster_tiles(VARIANTS["n128c4"].config, 96, 11008) == 22
    assert cluster_tiles(c, 300, 1000) == 3 * 3 and cluster_tiles(hoist, 300, 1000) == 2 * 4
    # 96 columns: 2 slabs; three barriers per stage (full, the cluster's empty, the local empty: LOCAL_EMPTY)
    assert c.smem_bytes() == 6 * (128 + 128) * 128 + 2 * 2 * 64 * 128 + 3 * 6 * 8 + 1024
    src = codegen.render(c, "e4m3", "bf16", True)
    assert "#define CLUSTER_N 1\n" in src and "#define CM 4\n" in src and "m64n96k32.f32.e4m3.e4m3" in src
    assert "CLUSTER_N 1" not in codegen.render(hoist, "e4m3", "bf16", True)
    assert codegen.tag(c, "e4m3", "bf16", True).endswith("_cm4_st_h_cn_le")
    for bad in (replace(c, cm=1), replace(c, splitk_fused=True), replace(c, streamk=True),
                replace(c, bm=64, nc=1, cm=16)):
        with pytest.raises(TcforgeError, match="cluster along N|swapped"):
            bad.check()


def test_local_empty_barrier_paces_the_own_operand_of_n80c4_and_n96c4_only() -> None:
    """LOCAL_EMPTY (n80c4 / n96c4: B's producer thread waits for this CTA's consumers, not the cluster's; 1-3 % faster,
    gemm_small_s31_le.json): defined in their sources only, a stage's barrier more of shared memory, and refused where
    there is no cluster, one producer thread (no hoisting), a swapped product or the pair split."""
    from dataclasses import replace

    from tcforge.gemm.build import all_builds

    assert [n for n in ("n80c4", "n96c4", "n128c4", "hoist", "sw96c4") if VARIANTS[n].config.local_empty] == [
        "n80c4", "n96c4"]
    les = {b.tag() for b in all_builds() if b.config.local_empty}
    assert les and all("_cn_le" in t for t in les)
    c = VARIANTS["n96c4"].config
    assert "#define LOCAL_EMPTY 1\n" in codegen.render(c, "bf16", "bf16", True)
    assert "LOCAL_EMPTY 1" not in codegen.render(VARIANTS["n128c4"].config, "bf16", "bf16", True)
    assert c.smem_bytes() - replace(c, local_empty=False).smem_bytes() == c.stages * 8
    replace(VARIANTS["hoist"].config, local_empty=True).check()  # a cluster along M: A's thread paced locally
    for bad in (replace(c, cm=1, cluster_n=False), replace(c, hoist=False), replace(VARIANTS["sw96c4"].config,
                                                                                    local_empty=True)):
        with pytest.raises(TcforgeError, match="local empty barrier"):
            bad.check()


@pytest.mark.parametrize(("name", "bn", "stages"), [("sw32n2", 32, 17), ("sw40n2", 40, 16), ("sw48n2", 48, 14),
                                                    ("sw56n2", 56, 13), ("sw64n2", 64, 13)])
def test_swapped_tile_in_a_cluster_along_n_shares_the_weight_rows(name: str, bn: int, stages: int) -> None:
    """sw32n2 ... sw64n2 (cuBLAS's 64xW 1x2 tiles at 65-128 x 4096 x 4096): the 64-row swapped tile, two CTAs along
    the problem's M each loading half of the 64 weight rows (K-major: 32 rows; an MN-major slab: 32 of its 64 k-rows)
    and multicasting them, its activation rows whole; the most stages that fit in 227 KB; never split."""
    from dataclasses import replace

    from tcforge.gemm.variants import MAX_SMEM, cluster_tiles

    v = VARIANTS[name]
    c = v.config
    assert (c.bm, c.bn, c.cm, c.cluster_n, c.swap_ab, c.nc, c.stages) == (64, bn, 2, True, True, 1, stages)
    assert (c.a_box_rows, c.b_box_rows, c.b_multicast, c.a_mn_box_k("fp16"), c.a_mn_box_k("e4m3")) == (32, bn, 1, 32,
                                                                                                         64)
    assert c.smem_total() <= MAX_SMEM < replace(c, stages=stages + 1).smem_total()
    assert not v.splitk_auto and v.persistent
    # 104 x 4096 x 4096 (kernel: 4096 x 104): 64 row tiles; sw56n2's / sw64n2's two column tiles one cluster (128
    # CTAs), the narrower ones' three two clusters (the second's rank 1 past M); 300 x 1000: 16 row tiles
    pairs = {32: 2, 40: 2, 48: 2, 56: 1, 64: 1}[bn]
    assert cluster_tiles(c, 104, 4096) == 64 * pairs
    assert cluster_tiles(c, 300, 1000) == 16 * {32: 5, 40: 4, 48: 4, 56: 3, 64: 3}[bn]
    for in_kind, b_kmajor in (("e4m3", True), ("bf16", True), ("fp16", False)):
        src = codegen.render(c, in_kind, "bf16" if in_kind != "fp16" else "fp32", b_kmajor)
        assert "#define CLUSTER_N 1\n" in src and "#define TRANS_C 1\n" in src and "#define CM 2\n" in src
        assert f"m64n{bn}k{32 if in_kind == 'e4m3' else 16}" in src
    for bad in (replace(c, splitk_fused=True), replace(c, streamk=True), replace(c, cm=1)):
        with pytest.raises(TcforgeError, match="cluster along N"):
            bad.check()


def test_n2_build_takes_the_width_half_of_m_needs_in_one_round_of_32_to_66_clusters() -> None:
    """`auto`'s n2 tile (twelfth session of 2026-12-01): for 33-128 rows the narrowest whose two CTAs hold M (33-64
    rows sw32n2, 65-80 sw40n2, 81-96 sw48n2, 97-112 sw56n2, 113-128 sw64n2), only where its clusters make one round
    of N2_MIN_CLUSTERS-66 on 132 SMs (N = 2048-4224: 32-66 row tiles of 64 weight rows); by rule from
    N2_RULE_CLUSTERS (48: N >= 3072), below it by the model; and its one-round cost from ONE_ROUND_COST."""
    from tcforge.gemm.variants import (
        N2_MIN_CLUSTERS,
        N2_RULE_CLUSTERS,
        ONE_ROUND_COST,
        cluster_tiles,
        cost_key,
        n2_build,
    )

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
    """gemm_small_s26_pdlmap*.json: a 4-CTA-cluster swapped launch of one round under C4_MIN_FILL of the resident
    clusters ran 3-6 us per GEMM slower with PDL; with most of a round, two rounds or a split it ran faster."""
    from tcforge.gemm.variants import VARIANTS, pdl_pays

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
    """gemm_small_s34_pdl*.json: an unsplit one-CTA swapped launch on 72-96 of 132 SMs ran 0.4-5.6 us per GEMM
    slower with PDL (16-bit; fp8 from 0.2 us faster to 2.7 us slower), level on 104-112 (fp8 faster with it on 104);
    split launches and the n2 tiles keep it."""
    from tcforge.gemm.variants import SWAP_PDL_MIN_FILL, VARIANTS, pdl_pays

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


def test_diagnostic_builds_are_named_defined_and_refused_where_meaningless() -> None:
    """`diag` (bench/gemm_bound.py): a #define and a tag suffix only when set, so every other build's source (and
    cache key) is unchanged; refused outside 1..7 and on split, stream-K, promoting, ping-pong or cp.async builds;
    never a named variant (matmul cannot reach it)."""
    from dataclasses import replace

    r9 = VARIANTS["hoist"].config
    plain = codegen.render(r9, "fp16", "fp32", False)
    assert "#define DIAG" not in plain.split("#ifndef DIAG")[0]
    d3 = replace(r9, diag=3)
    src = codegen.render(d3, "fp16", "fp32", False)
    assert src.startswith("#define IN_KIND") and "#define DIAG 3\n" in src.split("#ifndef DIAG")[0]
    assert codegen.tag(d3, "fp16", "fp32", False) == codegen.tag(r9, "fp16", "fp32", False) + "_diag3"
    for bad in (replace(r9, diag=8), replace(r9, diag=-1), replace(r9, diag=1, splitk=True),
                replace(r9, diag=2, streamk=True, producer_regs=48, consumer_regs=224),
                replace(r9, diag=1, splitk_fused=True), replace(r9, diag=4, promote=True),
                replace(VARIANTS["pingpong"].config, diag=3), replace(VARIANTS["baseline"].config, diag=2)):
        with pytest.raises(TcforgeError, match="diag"):
            bad.check()
    assert all(v.config.diag == 0 for v in VARIANTS.values())


def test_timeline_builds_are_named_defined_and_refused_where_meaningless() -> None:
    """`timeline` (bench/gemm_timeline.py): a #define and a `_tl` tag only when set (every other build's source and
    cache key unchanged); refused on split, stream-K, promoting, ping-pong, diagnostic and cp.async builds (its stamps
    use the split workspace pointer); the split build of a timeline config drops it; never a named variant."""
    from dataclasses import replace

    from tcforge.gemm.api import TIMELINE_SLOTS
    from tcforge.gemm.variants import split_config

    r9 = VARIANTS["hoist"].config
    assert "#define TIMELINE" not in codegen.render(r9, "bf16", "bf16", False).split("#ifndef TIMELINE")[0]
    tl = replace(r9, timeline=True)
    tl.check()
    replace(VARIANTS["n96c4"].config, timeline=True).check()
    assert "#define TIMELINE 1\n" in codegen.render(tl, "bf16", "bf16", False).split("#ifndef TIMELINE")[0]
    assert codegen.tag(tl, "bf16", "bf16", False) == codegen.tag(r9, "bf16", "bf16", False) + "_tl"
    assert not split_config(tl).timeline
    for bad in (replace(r9, timeline=True, splitk_fused=True), replace(r9, timeline=True, promote=True),
                replace(r9, timeline=True, diag=2), replace(VARIANTS["pingpong"].config, timeline=True),
                replace(VARIANTS["baseline"].config, timeline=True),
                replace(VARIANTS["streamk"].config, timeline=True)):
        with pytest.raises(TcforgeError, match="timeline"):
            bad.check()
    assert all(not v.config.timeline for v in VARIANTS.values())
    # the launcher sizes the stamp buffer by the kernel's slot count
    assert f"constexpr int TL_SLOTS = {TIMELINE_SLOTS};" in codegen.template()


def test_the_cublas_mode_each_variant_is_compared_with() -> None:
    """fp8 launches that do not promote are checked against cuBLAS's use_fast_accum=True output (their bits), the
    promoting variants against its default; 16-bit inputs have one cuBLAS mode."""
    from tcforge.gemm.check import fast_accum_peer

    assert fast_accum_peer("hoist", "e4m3") and fast_accum_peer("auto", "e4m3") and fast_accum_peer("hoist_ed", "e4m3")
    assert not fast_accum_peer("promote", "e4m3") and not fast_accum_peer("promote_cm1", "e4m3")
    assert not fast_accum_peer("hoist", "bf16") and not fast_accum_peer("promote", "fp16")


def test_l2_promotion_is_128_bytes_for_the_swapped_tiles_and_256_for_the_rest() -> None:
    """The operand maps' L2 promotion by tile: 128 B where a swapped small-M tile streams each weight row 128 bytes
    per k-tile (measured 2-4 % faster than 256 B at 8-32 x 14336 x 4096, gemm_small_s25l2b_*.json), 256 B elsewhere;
    api.L2_PROMOTION forces one value for every launch (the bench's --l2-promotion)."""
    from tcforge.gemm import api
    from tcforge.runtime.tensormap import L2_PROMOTION_128B, L2_PROMOTION_256B

    saved = api.L2_PROMOTION
    try:
        api.L2_PROMOTION = None
        assert api.l2_promotion(VARIANTS["sw16c4"].config) == L2_PROMOTION_128B
        assert api.l2_promotion(VARIANTS["sw64"].config) == L2_PROMOTION_128B
        assert api.l2_promotion(VARIANTS["hoist_ed"].config) == L2_PROMOTION_256B
        assert api.l2_promotion(VARIANTS["t64"].config) == L2_PROMOTION_256B
        api.L2_PROMOTION = 1
        assert api.l2_promotion(VARIANTS["sw16"].config) == api.l2_promotion(VARIANTS["hoist"].config) == 1
        api.L2_PROMOTION = 4
        with pytest.raises(TcforgeError, match="L2_PROMOTION must be None or 0..3"):
            api.l2_promotion(VARIANTS["sw16"].config)
    finally:
        api.L2_PROMOTION = saved


def test_poisoned_result_poisons_only_the_one_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benches' check before timing runs a launch with api.POISON_OUTPUT set (its output NaN-filled first) and
    restores the flag afterwards, also when the launch fails; it returns the launch's result."""
    import types

    from tcforge.gemm import api
    from tcforge.gemm.check import poisoned_result

    # no GPU (nor torch) needed: a stand-in torch whose synchronize does nothing
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    seen = []

    class Launch:
        def __call__(self) -> None:
            seen.append(api.POISON_OUTPUT)

        def result(self) -> str:
            return "C"

    class Failing(Launch):
        def __call__(self) -> None:
            raise RuntimeError("launch failed")

    monkeypatch.setattr(api, "POISON_OUTPUT", False)
    assert poisoned_result(Launch()) == "C" and seen == [True] and api.POISON_OUTPUT is False
    with pytest.raises(RuntimeError, match="launch failed"):
        poisoned_result(Failing())
    assert api.POISON_OUTPUT is False


def test_sw112_splits_where_the_model_predicts_the_split_launch_faster() -> None:
    """sw112 (no pair: its splits meet in L2 slots) in one round of units: 0.17 us per k-tile and 1.1x the HBM rate,
    1.2 us more per split reduction (ONE_ROUND_COST, SLOT_EXTRA_US), fitted on gemm_small_s29_sw112k.json; the model
    decides its split count there — unsplit with up to 32 k-tiles at N = 4096 (fp8 97 x 4096 x 4096: 7.5 us unsplit,
    9.1 split 2), split with more (bf16 97 x 4096 x 4096: 12.5 split, 12.9 unsplit) and at N = 2048 from 24 k-tiles
    of 16-bit; below 32 tiles (N < 2048) the rule of choose_splits as before."""
    from tcforge.gemm.variants import SPLIT_BY_MODEL, cost_key, estimate_us, pair_config

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
