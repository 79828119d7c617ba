"""The GEMM's variants: the ladder's configs (every rung builds within sm_90's limits, renders a kernel, and refuses
what it cannot build) and variant specs with kernel-config overrides (what the benches' experiment builds are). Their
compiled builds and SASS: test_ptxas.py."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from tcforge.errors import TcforgeError
from tcforge.gemm import codegen
from tcforge.gemm.build import all_builds, configs_of
from tcforge.gemm.config import MAX_SMEM
from tcforge.gemm.variants import LADDER, SWEEP, VARIANTS, check_specs, computes_c, parse_spec, with_spec


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
    assert all(f"constexpr int {d};\n" in src for d in ("BK = 64", "CM = 2", "TMA_STORE = 1"))
    assert "m64n256k16.f32.f16.f16" in src and "p, 1, 1, 0, 1;" in src  # B transposed (MN-major)
    # wgmma_tile: 128 accumulators (m64n256); wgmma_half: 64 (m64n128, the promoting fp8 builds' partial sums);
    # wgmma_tile_sd: 128 (the stream-K builds' first k-tile, scale-d as an argument)
    assert len(re.findall(r'"\+f"\(d\[\d+\]\)', src)) == 128 + 64 + 128
    assert "void wgmma_tile_sd(float (&d)[128], uint64_t da, uint64_t db, int scale_d)" in src
    assert "m64n128k16.f32.f16.f16" in src and "int scale_d" in src
    assert "constexpr int PROMOTE = 1;" not in src  # only promoting builds set it (the others render 0)
    fp8 = codegen.render(cfg, "e4m3", "bf16", True)
    assert "constexpr int BK = 128;\n" in fp8 and "m64n256k32.f32.e4m3.e4m3" in fp8 and "p, 1, 1;" in fp8
    promoted = codegen.render(VARIANTS["promote"].config, "e4m3", "bf16", True)
    assert "constexpr int PROMOTE = 1;\n" in promoted and "m64n128k32.f32.e4m3.e4m3" in promoted


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
    assert all(f"constexpr int {d};\n" in src for d in ("EPI_BUFS = 4", "PRODUCER_REGS = 40", "STAGES = 3"))
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
        # on the device waiting for the rest (a stream-K build, before this check)
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
        assert "constexpr int EPI_DEFER = 1;\n" in src and "constexpr int EPI_SPREAD = 1;\n" in src, b.tag()
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
        assert ("constexpr int EPI_DEFER = 1;\n" in b.source()) == (b.out_kind != "fp32"), b.tag()
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
    assert "constexpr int BN = 144;\n" in src and "m64n144k16.f32.f16.f16" in src and "p, 1, 1, 0, 1;" in src
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
    assert "constexpr int BN = 320;\n" in src and "m64n256k16.f32.f16.f16" in src and "m64n64k16.f32.f16.f16" in src
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


def test_split_k_builds_reduce_inside_the_kernel_or_through_planes() -> None:
    """Every TMA split-K variant's split build is SK_FUSED (one build, two reductions chosen per launch); the cp.async
    baseline has only planes; the fused build refuses the planes build, stream-K and the cp.async path."""
    from dataclasses import replace

    from tcforge.gemm.config import split_config

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
            assert "constexpr int SK_PAIR = 1;\n" in codegen.render(pair[0], "fp16", "fp32", False)
            assert pair[0].smem_bytes() > replace(split, stages=pair[0].stages).smem_bytes()
        assert split.tma_store == main.tma_store and split.epi_bufs == main.epi_bufs, v.name
        src = codegen.render(split, "fp16", "fp32", False)
        assert "constexpr int SK_FUSED = 1;\n" in src and "constexpr int SPLITK = 0;\n" in src
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


def test_a_cluster_along_n_multicasts_row_slices_of_a() -> None:
    """n96c4 / n128c4: 4-CTA clusters along N — each CTA's A box is a quarter of the tile's rows (multicast), its B
    box the whole tile (not multicast); a cluster covers four column tiles of one row band, so 96 x 11008 makes 29
    cluster tiles (115 CTA tiles, the last cluster's fourth past N); CLUSTER_N in the source and the tag; refused with
    a swap, split-K, stream-K or a single CTA."""
    from dataclasses import replace

    from tcforge.gemm.model import cluster_tiles

    c = VARIANTS["n96c4"].config
    assert (c.bm, c.bn, c.cm, c.cluster_n, c.a_box_rows, c.b_box_rows, c.b_multicast) == (128, 96, 4, True, 32, 96, 1)
    hoist = VARIANTS["hoist"].config
    assert (hoist.a_box_rows, hoist.b_box_rows, hoist.b_multicast) == (128, 128, 2)
    assert cluster_tiles(c, 96, 11008) == 29 and cluster_tiles(VARIANTS["n128c4"].config, 96, 11008) == 22
    assert cluster_tiles(c, 300, 1000) == 3 * 3 and cluster_tiles(hoist, 300, 1000) == 2 * 4
    # 96 columns: 2 slabs; three barriers per stage (full, the cluster's empty, the local empty: LOCAL_EMPTY)
    assert c.smem_bytes() == 6 * (128 + 128) * 128 + 2 * 2 * 64 * 128 + 3 * 6 * 8 + 1024
    src = codegen.render(c, "e4m3", "bf16", True)
    assert all(f"constexpr int {d};\n" in src for d in ("CLUSTER_N = 1", "CM = 4")) and "m64n96k32.f32.e4m3.e4m3" in src
    assert "CLUSTER_N 1" not in codegen.render(hoist, "e4m3", "bf16", True)
    assert codegen.tag(c, "e4m3", "bf16", True).endswith("_cm4_st_h_cn_le")
    for bad in (replace(c, cm=1), replace(c, splitk_fused=True), replace(c, streamk=True),
                replace(c, bm=64, nc=1, cm=16)):
        with pytest.raises(TcforgeError, match="cluster along N|swapped"):
            bad.check()


def test_local_empty_barrier_paces_the_own_operand_of_n80c4_and_n96c4_only() -> None:
    """LOCAL_EMPTY (n80c4 / n96c4: B's producer thread waits for this CTA's consumers, not the cluster's; 1-3 % faster):
    defined in their sources only, a stage's barrier more of shared memory, and refused where
    there is no cluster, one producer thread (no hoisting), a swapped product or the pair split."""
    from dataclasses import replace

    from tcforge.gemm.build import all_builds

    assert [n for n in ("n80c4", "n96c4", "n128c4", "hoist", "sw96c4") if VARIANTS[n].config.local_empty] == [
        "n80c4", "n96c4"]
    les = {b.tag() for b in all_builds() if b.config.local_empty}
    assert les and all("_cn_le" in t for t in les)
    c = VARIANTS["n96c4"].config
    assert "constexpr int LOCAL_EMPTY = 1;\n" in codegen.render(c, "bf16", "bf16", True)
    assert "LOCAL_EMPTY 1" not in codegen.render(VARIANTS["n128c4"].config, "bf16", "bf16", True)
    assert c.smem_bytes() - replace(c, local_empty=False).smem_bytes() == c.stages * 8
    replace(VARIANTS["hoist"].config, local_empty=True).check()  # a cluster along M: A's thread paced locally
    for bad in (replace(c, cm=1, cluster_n=False), replace(c, hoist=False), replace(VARIANTS["sw96c4"].config,
                                                                                    local_empty=True)):
        with pytest.raises(TcforgeError, match="local empty barrier"):
            bad.check()


def test_cp_async_operands_are_an_option_of_the_two_role_producer_without_a_cluster() -> None:
    """`cpa` renders CPA and names the build `_ca<bits>`; it needs hoisting (two producer roles), no cluster, no
    diagnostics or timeline, and bits 1-3; no registered variant sets it."""
    from dataclasses import replace

    t64 = VARIANTS["t64"].config
    c = replace(t64, cpa=3)
    c.check()
    assert "constexpr int CPA = 3;\n" in codegen.render(c, "bf16", "bf16", True)
    assert "constexpr int CPA = 0;\n" in codegen.render(t64, "bf16", "bf16", True)
    assert codegen.tag(c, "bf16", "bf16", True).endswith("_ca3")
    assert not any(v.config.cpa for v in VARIANTS.values())
    for bad in (replace(c, hoist=False), replace(VARIANTS["hoist"].config, cpa=1), replace(c, cpa=4),
                replace(c, diag=2), replace(c, timeline=True)):
        with pytest.raises(TcforgeError, match="cp.async operands"):
            bad.check()


@pytest.mark.parametrize(("name", "bn", "stages"), [("sw32n2", 32, 17), ("sw40n2", 40, 16), ("sw48n2", 48, 14),
                                                    ("sw56n2", 56, 13), ("sw64n2", 64, 13)])
def test_swapped_tile_in_a_cluster_along_n_shares_the_weight_rows(name: str, bn: int, stages: int) -> None:
    """sw32n2 ... sw64n2 (cuBLAS's 64xW 1x2 tiles at 65-128 x 4096 x 4096): the 64-row swapped tile, two CTAs along
    the problem's M each loading half of the 64 weight rows (K-major: 32 rows; an MN-major slab: 32 of its 64 k-rows)
    and multicasting them, its activation rows whole; the most stages that fit in 227 KB; never split."""
    from dataclasses import replace

    from tcforge.gemm.model import cluster_tiles

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
        assert all(f"constexpr int {d};\n" in src for d in ("CLUSTER_N = 1", "TRANS_C = 1", "CM = 2"))
        assert f"m64n{bn}k{32 if in_kind == 'e4m3' else 16}" in src
    for bad in (replace(c, splitk_fused=True), replace(c, streamk=True), replace(c, cm=1)):
        with pytest.raises(TcforgeError, match="cluster along N"):
            bad.check()


def test_diagnostic_builds_are_named_defined_and_refused_where_meaningless() -> None:
    """`diag` (bench/gemm_bound.py): an option value (0 when off) and a tag suffix only when set; refused outside
    1..7 and on split, stream-K, promoting, ping-pong or cp.async builds; never a named variant (matmul cannot reach
    it)."""
    from dataclasses import replace

    r9 = VARIANTS["hoist"].config
    plain = codegen.render(r9, "fp16", "fp32", False)
    assert "constexpr int DIAG = 0;\n" in plain
    d3 = replace(r9, diag=3)
    src = codegen.render(d3, "fp16", "fp32", False)
    assert src.startswith("constexpr int IN_KIND") and "constexpr int DIAG = 3;\n" in src
    assert codegen.tag(d3, "fp16", "fp32", False) == codegen.tag(r9, "fp16", "fp32", False) + "_diag3"
    for bad in (replace(r9, diag=8), replace(r9, diag=-1), replace(r9, diag=1, splitk=True),
                replace(r9, diag=2, streamk=True, producer_regs=48, consumer_regs=224),
                replace(r9, diag=1, splitk_fused=True), replace(r9, diag=4, promote=True),
                replace(VARIANTS["pingpong"].config, diag=3), replace(VARIANTS["baseline"].config, diag=2)):
        with pytest.raises(TcforgeError, match="diag"):
            bad.check()
    assert all(v.config.diag == 0 for v in VARIANTS.values())


def test_timeline_builds_are_named_defined_and_refused_where_meaningless() -> None:
    """`timeline` (bench/gemm_timeline.py): an option value (0 when off) and a `_tl` tag only when set; refused on
    split, stream-K, promoting, ping-pong, diagnostic and cp.async builds (its stamps use the split workspace pointer);
    the split build of a timeline config drops it; never a named variant."""
    from dataclasses import replace

    from tcforge.gemm.api import TIMELINE_SLOTS
    from tcforge.gemm.config import split_config

    r9 = VARIANTS["hoist"].config
    assert "constexpr int TIMELINE = 0;\n" in codegen.render(r9, "bf16", "bf16", False)
    tl = replace(r9, timeline=True)
    tl.check()
    replace(VARIANTS["n96c4"].config, timeline=True).check()
    assert "constexpr int TIMELINE = 1;\n" in codegen.render(tl, "bf16", "bf16", False)
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


@dataclass(frozen=True)
class _Plan:
    variant: object


def test_spec_carries_kernel_config_overrides() -> None:
    assert parse_spec("hoist") == ("hoist", {})
    assert parse_spec("hoist@diag=2") == ("hoist", {"diag": 2})
    assert parse_spec("hoist_es@epi_bufs=4+stages=3+relaxed=true+") == (
        "hoist_es", {"epi_bufs": 4, "stages": 3, "relaxed": True})
    assert computes_c("hoist_es@epi_bufs=4") and not computes_c("hoist@diag=2")


@pytest.mark.parametrize(("spec", "says"), [
    ("nosuch@diag=2", "no variant 'nosuch'"),
    ("hoist@diag", "overrides are field=value"),
    ("hoist@=2", "overrides are field=value"),
    ("hoist@bogus=1", "no field 'bogus'"),
    ("hoist@stages=four", "neither an integer nor true / false"),
])
def test_spec_refuses_what_it_cannot_read(spec: str, says: str) -> None:
    with pytest.raises(TcforgeError, match=says):
        parse_spec(spec)


def test_spec_replaces_the_plans_kernel_config_and_names_it() -> None:
    plan = _Plan(VARIANTS["hoist_es"])
    assert with_spec(plan, "hoist_es") is plan
    es4 = with_spec(plan, "hoist_es@epi_bufs=4+stages=3")
    assert es4.variant.name == "hoist_es@epi_bufs=4+stages=3"
    assert (es4.variant.config.epi_bufs, es4.variant.config.stages) == (4, 3)
    assert es4.variant.config.epi_spread and plan.variant.config.stages == 4
    with pytest.raises(TcforgeError, match="deferred epilogue"):  # the config's own check: no diagnostics with it
        with_spec(plan, "hoist_es@diag=2")


def test_check_specs_reads_every_spec_before_anything_launches() -> None:
    assert check_specs(["hoist_es", "hoist@diag=2"]) == ["hoist_es", "hoist@diag=2"]
    assert check_specs(iter(["hoist_es@epi_bufs=4"]), real=True) == ["hoist_es@epi_bufs=4"]
    with pytest.raises(TcforgeError, match="no field 'bogus'"):
        check_specs(["hoist", "hoist@bogus=1"])
    with pytest.raises(TcforgeError, match="hoist@diag=2: a diagnostic build computes no C"):
        check_specs(["hoist_es", "hoist@diag=2"], real=True)
