"""Stream-K: the schedule the kernel computes (mirrored in tcforge.gemm.streamk) covers every k-tile of every unit
exactly once, gives each cluster at most one partial (run first) and one owner segment (run last), owners wait only for
earlier clusters' partials (no cycle) and, where a share is longer than a unit, not at all; the launcher's choice of how
many units to share."""

from __future__ import annotations

import itertools

import pytest

from tcforge.gemm.model import choose_splits, choose_streamk, choose_streamk_small
from tcforge.gemm.streamk import cluster_segments, fits_int32, owner_waits, schedule
from tcforge.gemm.variants import VARIANTS

CASES = [
    # (clusters, units, sk_units, num_kt): 4096^3 (66 clusters of 2 CTAs, 256 units, 64 k-tiles), 8192^3, the
    # no-cluster grid, tiny forced ones with 3 contributors per tile, a range inside one tile, empty ranges
    (66, 256, 58, 64),
    (66, 1024, 34, 128),
    (132, 512, 116, 64),
    (3, 16, 4, 16),
    (3, 2, 2, 3),
    (5, 2, 2, 3),
    (7, 3, 1, 5),
    (4, 9, 9, 1),
    (66, 60, 60, 16),
]


@pytest.mark.parametrize("clusters,units,sk_units,num_kt", CASES)
def test_every_k_tile_runs_once(clusters: int, units: int, sk_units: int, num_kt: int) -> None:
    segs = schedule(clusters, units, sk_units, num_kt)
    covered = {(u, k): 0 for u in range(units) for k in range(num_kt)}
    for s in itertools.chain.from_iterable(segs):
        assert 0 <= s.kt0 < s.kt1 <= num_kt
        for k in range(s.kt0, s.kt1):
            covered[(s.unit, k)] += 1
    assert set(covered.values()) == {1}


@pytest.mark.parametrize("clusters,units,sk_units,num_kt", CASES)
def test_roles_and_waits_are_acyclic(clusters: int, units: int, sk_units: int, num_kt: int) -> None:
    segs = schedule(clusters, units, sk_units, num_kt)
    dp = units - sk_units
    partial_of = {}
    for c, mine in enumerate(segs):
        shared = [s for s in mine if s.unit >= dp]
        partials = [i for i, s in enumerate(shared) if s.role == "partial"]
        owners = [i for i, s in enumerate(shared) if s.role == "owner"]
        assert len(partials) <= 1 and len(owners) <= 1
        if partials:  # the partial runs first (it never waits), and it is where the cluster's share ends
            assert partials == [0] and shared[0].kt1 < num_kt
            partial_of[c] = shared[0]
        if owners:  # the owner ends its unit's K, is where the share begins, and runs last
            assert shared[owners[0]].kt1 == num_kt and shared[owners[0]].kt0 > 0
            assert owners[0] == len(shared) - 1
        for s in shared:
            assert (s.role == "whole") == (s.kt0 == 0 and s.kt1 == num_kt)
    # each owner adds exactly the partials of its unit, all from earlier clusters; every partial has one owner
    consumed = []
    for c, mine in enumerate(segs):
        for s in mine:
            if s.role == "owner":
                assert s.contributors and all(x < c for x in s.contributors)
                assert [partial_of[x].unit for x in s.contributors] == [s.unit] * len(s.contributors)
                assert partial_of[s.contributors[0]].kt1 == s.kt0  # the pieces tile K without gaps
                pieces = sorted((partial_of[x].kt0, partial_of[x].kt1) for x in s.contributors) + [(s.kt0, s.kt1)]
                assert pieces[0][0] == 0 and all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
                consumed += s.contributors
    assert sorted(consumed) == sorted(partial_of)


def test_owners_run_last_so_they_wait_only_where_a_share_is_shorter_than_a_unit() -> None:
    """3072^3 (144 units of 48 k-tiles, 78 shared over 66 clusters: shares of ~57 k-tiles): no owner waits — run in
    range order, an owner piece came first and waited for a partial of up to 43 k-tiles (25 us measured). At 4096^3
    (shares of ~56 k-tiles, units of 64) an owner can still wait, for at most unit - share k-tiles."""
    segs = schedule(66, 144, 78, 48)
    assert max(owner_waits(segs, 144, 78)) == 0
    assert sum(s.role == "owner" for m in segs for s in m) > 50
    waits = owner_waits(schedule(66, 256, 58, 64), 256, 58)
    assert 0 < max(waits) <= 64 - 56
    # the order: partial, whole units, owner (cluster 5 at 3072^3 has all three)
    assert [s.role for s in schedule(66, 144, 78, 48)[5] if s.unit >= 66] == ["partial", "whole", "owner"]


def test_4096_cube_shares_the_last_58_units_over_66_clusters() -> None:
    assert choose_streamk(256, 66, 64) == 58
    segs = schedule(66, 256, 58, 64)
    work = [sum(s.kt1 - s.kt0 for s in mine) for mine in segs]
    assert max(work) - min(work) <= 1 and sum(work) == 256 * 64  # every cluster ends together (3 units + ~56 k)
    assert choose_streamk(1024, 66, 128) == 34  # 8192^3
    assert choose_streamk(4096, 66, 256) == 4 + 66  # 16384^3: a small remainder takes one more round
    assert choose_streamk(264, 66, 64) == 0  # full rounds
    assert choose_streamk(256, 66, 3) == 0  # too little K to share
    assert choose_streamk(40, 66, 64) == 40 and choose_streamk(64, 66, 64) == 0  # one partial round: only if < 7/8


def test_int32_guard() -> None:
    assert fits_int32(66, 58, 64) and not fits_int32(132, 264, 2**16)


def test_cluster_with_a_range_inside_one_tile_is_a_partial_only() -> None:
    # 2 units of 3 k-tiles over 5 clusters (ranges start at 0, 1, 2, 3, 4; the last ends at 6): some inside a tile
    segs = [cluster_segments(c, 5, 2, 2, 3) for c in range(5)]
    assert [[(s.unit, s.kt0, s.kt1, s.role) for s in m] for m in segs] == [
        [(0, 0, 1, "partial")],
        [(0, 1, 2, "partial")],
        [(0, 2, 3, "owner")],
        [(1, 0, 1, "partial")],
        [(1, 1, 3, "owner")],
    ]
    assert segs[2][0].contributors == (1, 0) and segs[4][0].contributors == (3,)


def test_streamk_variants_build_streamk_and_split_k_without_it() -> None:
    from tcforge.gemm import codegen
    from tcforge.gemm.build import configs_of

    for name in ("streamk", "streamk_cm1"):
        main, split = configs_of(VARIANTS[name])
        assert main.streamk and main.tma_store and not split.streamk and split.splitk_fused
        assert "constexpr int STREAMK = 1;\n" in codegen.render(main, "fp16", "fp32", False)
        assert "constexpr int STREAMK = 1;" not in codegen.render(split, "fp16", "fp32", False)
    assert "constexpr int STREAMK = 1;" not in codegen.render(VARIANTS["hoist"].config, "fp16", "fp32", False)


def test_small_launches_share_every_unit_instead_of_splitting_k() -> None:
    """Where split-K would split (tiles under half the SMs), a stream-K variant shares all units over up to 4 pieces
    of >= 4 k-tiles each, if that runs as many pieces at once as split-K would; else split-K stays."""
    cfg = VARIANTS["streamk"].config
    # 1024^3 fp16: 16 units of 16 k-tiles -> 64 clusters of 4 k-tiles (split-K would have split 4 ways)
    assert choose_splits(cfg, 1024, 1024, 1024, "fp16", 132) == 4
    assert choose_streamk_small(16, 66, 16, 4) == 64
    assert choose_streamk_small(16, 66, 64, 4) == 64  # 256x4096x4096
    # 1024^3 fp8: 8 k-tiles per unit, split-K 2 ways -> 32 pieces of 4 k-tiles
    assert choose_splits(cfg, 1024, 1024, 1024, "e4m3", 132) == 2
    assert choose_streamk_small(16, 66, 8, 2) == 32
    assert choose_streamk_small(4, 66, 8, 2) == 8  # 512^3: 8 pieces, as split-K's 4 tiles x 2
    # 256x384x65536: split-K runs 2 x 16 pieces at once, stream-K could run only 8 (4 per unit)
    assert choose_splits(cfg, 256, 384, 65536, "fp16", 132) == 16
    assert choose_streamk_small(2, 66, 1024, 16) == 0
    assert choose_streamk_small(16, 66, 64, 1) == 0  # no split: nothing to replace
    t64 = VARIANTS["t64_sk"].config  # 64x4096x4096: 32 tiles of 64 k-tiles, split 4 ways -> 128 CTAs
    assert choose_splits(t64, 64, 4096, 4096, "fp16", 132) == 4
    assert choose_streamk_small(32, 132, 64, 4) == 128
    for units, clusters, kt in [(16, 66, 16), (16, 66, 64), (30, 132, 40)]:
        g = choose_streamk_small(units, clusters, kt, 2)
        segs = schedule(g, units, units, kt)
        pieces = {}
        for mine in segs:
            for s in mine:
                pieces[s.unit] = pieces.get(s.unit, 0) + 1
                assert s.kt1 - s.kt0 >= 1
        assert max(pieces.values()) <= 5  # an uneven split can cut a unit into one more piece than the ratio
