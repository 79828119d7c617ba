"""The launch-time model: how a tile divides a launch (tiles, rounds, K splits, stream-K share) and what it costs.

Constants are fitted on the kernel times in data/measured_points.json (one H200, power-capped), by tile (BM, BN, CM;
"n" appended for a cluster along N): microseconds per k-tile of one tile, the fixed cost of a launch, what reducing a
split launch adds. Used to rank tiles for `auto` (tcforge.gemm.auto) and to decide splits, stream-K and PDL. The
points themselves (kernel times by shape, dtype, layout, variant) are read by `measured_points`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from tcforge.gemm.config import IN_BYTES, KernelConfig, pair_config
from tcforge.gemm.variants import Variant

# microseconds per k-tile of one tile (128x256 per CTA in 2-CTA clusters; the others per CTA)
COST_KT_US = {(128, 320, 1): 1.08, (128, 256, 2): 0.87, (128, 256, 1): 0.82, (128, 192, 1): 0.66, (128, 160, 1): 0.57,
              (128, 144, 1): 0.52, (128, 128, 1): 0.50, (64, 192, 1): 0.40, (64, 128, 1): 0.30, (64, 8, 1): 0.17,
              (64, 16, 1): 0.17, (64, 32, 1): 0.18, (64, 64, 1): 0.20,  # 64 x 8..64: swapped
              (128, 8, 4): 0.30, (128, 16, 4): 0.30, (128, 32, 4): 0.32,  # 128 x 8..32 swapped, 4-CTA clusters
              (128, 64, 4): 0.36, (128, 128, 4): 0.45,  # sw64c4, sw128c4
              (128, 80, 4): 0.40, (128, 96, 4): 0.42, (128, 112, 4): 0.47,  # sw80c4 .. sw112c4
              (64, 80, 1): 0.20, (64, 96, 1): 0.22,  # sw80, sw96 where M fits them
              (64, 112, 1): 0.26,  # sw112 at 97-112 rows (one round: ONE_ROUND_COST)
              (128, 80, 4, "n"): 0.36, (128, 96, 4, "n"): 0.43, (128, 128, 4, "n"): 0.45}  # n80c4, n96c4, n128c4
COST_FIXED_US = {(128, 320, 1): 3.0, (128, 256, 2): 4.0, (128, 256, 1): 3.0, (128, 192, 1): 4.0, (128, 160, 1): 2.5,
                 (128, 144, 1): 2.5, (128, 128, 1): 2.0, (64, 192, 1): 1.5, (64, 128, 1): 2.0, (64, 8, 1): 2.0,
                 (64, 16, 1): 2.0, (64, 32, 1): 2.0, (64, 64, 1): 2.0, (128, 8, 4): 2.0, (128, 16, 4): 2.0,
                 (128, 32, 4): 2.0, (128, 64, 4): 2.0, (128, 128, 4): 2.0, (128, 80, 4): 2.0, (128, 96, 4): 2.0,
                 (128, 112, 4): 2.0, (128, 80, 4, "n"): 2.0, (128, 96, 4, "n"): 2.0, (128, 128, 4, "n"): 2.0,
                 (64, 80, 1): 2.0, (64, 96, 1): 2.0, (64, 112, 1): 2.0, (64, 32, 2, "n"): 2.2, (64, 40, 2, "n"): 2.1,
                 (64, 48, 2, "n"): 2.2, (64, 56, 2, "n"): 2.3, (64, 64, 2, "n"): 1.6}
# a split launch's reduction: inside the kernel the last split of each tile slice reads every split's slot,
# latency-bound (a fixed part plus one L2 round trip per batch of loads); through planes, a second launch plus bytes
FUSED_FIXED_US = 0.8
FUSED_BATCH_US = 0.4
PLANES_FIXED_US = 1.4
PLANES_US_PER_BYTE = 0.6e-6
# (cost per k-tile, HBM efficiency) of tiles refitted on their one-round launches: sw112 at 97-112 rows (its splits
# meet in L2 slots, SLOT_EXTRA_US above fused_split_us) and the n2 tiles in their one round of 32-66 clusters
ONE_ROUND_COST = {(64, 112, 1): (0.17, 1.1), (64, 32, 2, "n"): (0.094, 1.03), (64, 40, 2, "n"): (0.099, 1.01),
                  (64, 48, 2, "n"): (0.096, 0.99), (64, 56, 2, "n"): (0.098, 0.96), (64, 64, 2, "n"): (0.115, 0.86)}
SLOT_EXTRA_US = {(64, 112, 1): 1.2}
# the n2 tiles are measured (and weighed by `auto`) in one round only: in several their one round's cost per k-tile
COST_KT_US.update({key: cost for key, (cost, _) in ONE_ROUND_COST.items() if key[2:] == (2, "n")})
SPLIT_BY_MODEL = frozenset(ONE_ROUND_COST)  # the tiles whose split count the model decides (choose_splits)
SPLIT_BY_MODEL_MIN_TILES = 32  # ... where its tiles are as many as measured (N >= 2048); fewer split by rule
# no launch is faster than streaming its operands and C once from HBM (a device-to-device copy: 4.27 TB/s)
HBM_BYTES_PER_US = 4.2e6
HBM_EFFICIENCY = {(64, 128, 1): 0.9, (64, 64, 1): 0.9, (64, 8, 1): 1.1, (64, 80, 1): 1.1, (64, 96, 1): 1.1}
STREAMK_FIXUP_US = {"fp16": 6.0, "bf16": 6.0, "e4m3": 10.0}  # what stream-K's fix-up adds (fp8 measured dearer)
# tiles of partial slabs costed by their own width over an MN-major B too (t160 measured so over either layout)
MN_OWN_WIDTH = {160}
# 4-CTA clusters of the swapped builds resident at once per SM (the driver's count: 30 on 132 SMs)
C4_RESIDENT_PER_SM = 30 / 132
# a 4-CTA swapped build's clusters fill at least this much of their last round of resident clusters: `auto` takes it
# there (auto.c4_pays) and launches it with PDL (pdl_pays)
C4_MIN_FILL = 0.85
# PDL for 16-bit launches of the non-swapped tiles whose CTAs each run at most this many k-tiles (the fixed launch
# and set-up time it hides is a large part of such a launch; with 32-64 it measured 1-9 % slower, cause not found)
PDL_MAX_KTILES = 16
# ... and an unsplit one-CTA swapped launch only where it fills at least this much of one round of the SMs
SWAP_PDL_MIN_FILL = 0.75
SK_MAX_PIECES = 4  # stream-K in place of split-K: a unit shared by at most this many clusters (owners add serially)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def kernel_dims(config: KernelConfig, m: int, n: int) -> tuple[int, int]:
    """The (M, N) the kernel tiles: the problem's, or (N, M) for the swapped product C^T = B^T A^T."""
    return (n, m) if config.swap_ab else (m, n)


def cluster_tiles(config: KernelConfig, m: int, n: int) -> int:
    """Output tiles of an M x N launch, one per cluster (BM*CM rows x BN columns, or BM x BN*CM along N): the
    kernel's units before split-K."""
    km, kn = kernel_dims(config, m, n)
    if config.cluster_n:
        return _cdiv(km, config.bm) * _cdiv(kn, config.bn * config.cm)
    return _cdiv(km, config.bm * config.cm) * _cdiv(kn, config.bn)


def c4_resident(sms: int) -> int:
    """4-CTA clusters resident at once on `sms` SMs by the measured ratio, where the driver's count is not known."""
    return max(1, int(sms * C4_RESIDENT_PER_SM))


def thin_last_round(config: KernelConfig, m: int, n: int, sms: int) -> bool:
    """Whether a launch's (cluster) tiles run in more than one round of the SMs' clusters and the last round is
    under half full."""
    tiles, clusters = cluster_tiles(config, m, n), sms // config.cm
    return tiles > clusters and tiles % clusters < clusters / 2


def underfilled(config: KernelConfig, m: int, n: int, sms: int) -> bool:
    """Whether a launch's tiles (cluster tiles) leave more than half the SMs (clusters) idle."""
    return cluster_tiles(config, m, n) * 2 <= sms // config.cm


def cost_key(config: KernelConfig, b_kmajor: bool = True) -> tuple:
    """The model's key for a tile: (BM, BN, CM) — BN as loaded (whole slabs of an MN-major B unless MN_OWN_WIDTH),
    "n" appended for a cluster along N (the 128x96 tile in 4-CTA clusters is not the swapped 128x96 one)."""
    bn = config.bn if b_kmajor or config.bn in MN_OWN_WIDTH else config.b_rows
    return (config.bm, bn, config.cm) + (("n",) if config.cluster_n else ())


def choose_splits(config: KernelConfig, m: int, n: int, k: int, in_kind: str, sms: int) -> int:
    """Split-K factor: split K when the tiles leave more than half the SMs idle and K is long enough to share; for
    the tiles in SPLIT_BY_MODEL (as many tiles as measured) only where the model predicts the split faster."""
    tiles = cluster_tiles(config, m, n)
    kt = _cdiv(k, config.bk(in_kind))
    if not underfilled(config, m, n, sms) or kt < 8:
        return 1
    splits = min(kt // 4, max(1, (sms // config.cm) // tiles), 16)
    if splits <= 1:
        return 1
    per = -(-kt // splits)
    splits = -(-kt // per)  # every split gets at least one k-tile
    if cost_key(config) in SPLIT_BY_MODEL and not config.split_pair and tiles >= SPLIT_BY_MODEL_MIN_TILES:
        one = launch_us(config, m, n, k, in_kind, sms, 1, False, True)
        if one <= launch_us(config, m, n, k, in_kind, sms, splits, False, True):
            return 1
    return splits


def estimate_us(variant: Variant, m: int, n: int, k: int, in_kind: str, sms: int, streamk: bool = False,
                b_kmajor: bool = True) -> float:
    """Predicted time of a launch of one of `auto`'s tiles: rounds of tiles over the clusters, each round one unit's
    k-tiles, or streaming the operands from HBM if that takes longer, plus the fixed cost and, when it splits K, the
    reduction; with `streamk`, every cluster's even share of all k-tiles plus the fix-up. A tile of partial 64-column
    slabs over an MN-major B costs what the tile of the padded width does (unless MN_OWN_WIDTH). Within ~30 % of the
    measured kernels; used only to rank tiles."""
    c = variant.config
    splits = choose_splits(c, m, n, k, in_kind, sms) if variant.splitk_auto and not streamk else 1
    return launch_us(c, m, n, k, in_kind, sms, splits, streamk, b_kmajor)


def launch_us(c: KernelConfig, m: int, n: int, k: int, in_kind: str, sms: int, splits: int, streamk: bool,
              b_kmajor: bool) -> float:
    """estimate_us for a given split count."""
    key = cost_key(c, b_kmajor)
    tiles = cluster_tiles(c, m, n)
    clusters = max(1, sms // c.cm)
    kt = _cdiv(k, c.bk(in_kind))
    one_round = ONE_ROUND_COST.get(key) if tiles * splits <= clusters and not streamk else None
    cost_kt, hbm = one_round or (COST_KT_US[key], HBM_EFFICIENCY.get(key, 1.0))
    floor = ((m + n) * k * IN_BYTES[in_kind] + m * n * 2) / (HBM_BYTES_PER_US * hbm)
    if streamk:
        t = tiles * kt / clusters * cost_kt
        return max(t, floor) + COST_FIXED_US[key] + STREAMK_FIXUP_US[in_kind]
    t = _cdiv(tiles * splits, clusters) * _cdiv(kt, splits) * cost_kt
    return max(t, floor) + COST_FIXED_US[key] + (split_reduce_us(c, m, n, splits) if splits > 1 else 0.0)


def fused_split_batches(config: KernelConfig, splits: int) -> int:
    """Batches of loads in flight the in-kernel split-K's last split issues per thread (mirrors C4 / G / U in
    fused_split_arrive): up to 16 float4 of one slot (8 beside 128 accumulators), several slots when one holds
    fewer than 8."""
    mi, c4 = config.wg_rows // 64, config.bn // 8
    g = c4 if c4 <= 16 and mi * c4 * 4 <= 64 else min(c4, 8)
    u = 8 // c4 if g == c4 and c4 < 8 else 1
    return mi * _cdiv(c4, g) * _cdiv(splits, u)


def fused_split_us(config: KernelConfig, splits: int) -> float:
    """Predicted cost of reducing a split launch inside the kernel (the last split's loads, latency-bound)."""
    return FUSED_FIXED_US + FUSED_BATCH_US * fused_split_batches(config, splits)


def planes_split_us(m: int, n: int, splits: int) -> float:
    """Predicted cost of reducing a split launch through fp32 planes (a second launch, bytes of planes)."""
    return PLANES_FIXED_US + splits * m * n * 4 * PLANES_US_PER_BYTE


def fused_split_pays(config: KernelConfig, m: int, n: int, splits: int) -> bool:
    """Whether a split launch reduces inside the kernel rather than through planes: faster up to a few slots per
    tile (no second launch), slower where one SM must read many. The 64-row swapped tiles wider than 64 columns
    always (their slots measured faster than the planes the batch count predicts cheaper)."""
    if config.swap_ab and config.cm == 1 and config.bn > 64:  # (not measured for the 4-CTA builds)
        return True
    return fused_split_us(config, splits) <= planes_split_us(m, n, splits)


def split_reduce_us(config: KernelConfig, m: int, n: int, splits: int) -> float:
    """What reducing a split launch adds: the cheapest way (the cp.async baseline has only planes; two splits of a
    swapped tile pass the partial through DSMEM, the fixed part only)."""
    planes = planes_split_us(m, n, splits)
    if splits == 2 and pair_config(config) is not None:
        return min(planes, FUSED_FIXED_US)
    fused = fused_split_us(config, splits) + SLOT_EXTRA_US.get(cost_key(config), 0.0)
    return min(planes, fused) if config.use_tma else planes


def pdl_pays(
    config: KernelConfig, in_kind: str, units: int, ctas: int, num_kt: int, splits: int, resident: int = 0
) -> bool:
    """Whether a launch of `units` work units (tiles x splits) on `ctas` CTAs (clusters for clustered builds) is
    made with programmatic dependent launch: the swapped tiles and fp8 always, 16-bit non-swapped launches with at
    most PDL_MAX_KTILES k-tiles per CTA; but not an unsplit swapped launch of one round filling under
    SWAP_PDL_MIN_FILL of the SMs (one-CTA builds; `resident` = the SM count) or under C4_MIN_FILL of the resident 4-CTA
    clusters: with that many SMs idle the next launch's early CTAs cost more than the overlap gives."""
    fill = C4_MIN_FILL if config.cm >= 4 else SWAP_PDL_MIN_FILL if config.cm == 1 else 0.0
    if config.swap_ab and splits == 1 and resident and units < fill * resident:
        return False
    if config.swap_ab or in_kind == "e4m3":
        return True
    return _cdiv(units, max(1, ctas)) * _cdiv(num_kt, max(1, splits)) <= PDL_MAX_KTILES


def choose_streamk(units: int, clusters: int, num_kt: int) -> int:
    """Units whose k-tiles the clusters share (stream-K), 0 for none: the remainder past the last full round of
    clusters, plus one round when that remainder is under half a round (so each cluster's share is >= half a tile);
    all units when they fill under 7/8 of one round. Needs >= 4 k-tiles per unit to be worth the partials."""
    if num_kt < 4 or units < 1 or clusters < 2:
        return 0
    if units <= clusters:
        return units if units * 8 < clusters * 7 else 0
    r = units % clusters
    if r == 0:
        return 0
    return r if 2 * r >= clusters else r + clusters


def choose_streamk_small(units: int, clusters: int, num_kt: int, splits: int) -> int:
    """Clusters for a launch whose units are all shared by stream-K instead of split `splits` ways over K (no fp32
    planes, no reduction kernel): each unit in at most SK_MAX_PIECES pieces of >= 4 k-tiles; 0 (keep split-K) unless
    that runs at least as many pieces at once as split-K would."""
    g = min(clusters, units * SK_MAX_PIECES, units * num_kt // 4)
    return g if splits > 1 and g >= units * splits else 0


def persistent_clusters(units: int, sms: int, cm: int, resident: int | None) -> int:
    """Clusters of a persistent launch: one round of resident clusters (the driver's count when known, else SMs/cm),
    never more than there are work units. More clusters than fit at once would run a second, mostly idle round."""
    cap = resident if resident and resident > 0 else sms // cm
    return max(1, min(units, cap, sms // cm))


# the measured points --------------------------------------------------------------------------------------------------

MEASURED_PATH = Path(__file__).resolve().parent / "data" / "measured_points.json"

# a point: ((M, N, K), dtype, layout), layout "col" (B column-major) or "row"
MeasuredKey = tuple[tuple[int, int, int], str, str]


@lru_cache(maxsize=1)
def _measured_data() -> dict[str, Any]:
    return json.loads(MEASURED_PATH.read_text())


def measured_sets() -> list[str]:
    """Every set's name, in the order measured."""
    return [s["name"] for s in _measured_data()["sets"]]


def measured_points(sets: Iterable[str] | None = None,
                    without: Iterable[str] = ()) -> dict[MeasuredKey, dict[str, float]]:
    """Each point's microseconds by variant over the named sets (all when None, less `without`), merged in the order
    measured: a later set's time of a variant at a point replaces an earlier one's. KeyError names an unknown set."""
    names = measured_sets()
    keep = set(names if sets is None else sets) - set(without)
    unknown = sorted((keep | set(without)) - set(names))
    if unknown:
        raise KeyError(f"no measured set named {', '.join(unknown)}")
    out: dict[MeasuredKey, dict[str, float]] = {}
    for p in _measured_data()["points"]:
        if p["set"] in keep:
            key = (tuple(p["shape"]), p["dtype"], p["layout"])
            out[key] = {**out.get(key, {}), **p["microseconds"]}  # type: ignore[index]
    return out
