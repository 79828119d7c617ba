"""`auto`: the variant for a problem — candidate tiles scored by the launch model, then a few measured rules.

1. Rung 9 (128x256 in 2-CTA clusters), or without the cluster where its tiles fill one round, or its stream-K build
   where its last round is thin; then t320, t192, t160, t144 (t144s over a row-major 16-bit B), t128, t64x192 and
   t64, each where it needs no split, the fastest by `model.estimate_us` (a smaller tile must win by TILE_MARGIN).
2. Small M (a K-major a): the swapped tiles, the one fitting M first, where predicted faster still.
3. Rules where the model cannot tell tiles apart: sw64 over a thin last round of t64; the tiles in 4-CTA clusters
   (along N, or swapped) where their clusters fill a round; sw128 for long-K fp8; the n2 tiles in one round.
4. Rung 9 unsplit runs its spread-epilogue build (the same bits, fewer cycles).
"""

from __future__ import annotations

from tcforge.gemm.config import KernelConfig
from tcforge.gemm.model import (
    C4_MIN_FILL,
    SPLIT_BY_MODEL_MIN_TILES,
    c4_resident,
    choose_splits,
    cluster_tiles,
    estimate_us,
    thin_last_round,
    underfilled,
)
from tcforge.gemm.validate import Plan
from tcforge.gemm.variants import AUTO, SMALL_AUTO, SMALL_M, VARIANTS, Variant

AUTO_DEFER = "hoist_es"  # rung 9 with the spread deferred epilogue: where rung 9 runs unsplit
AUTO_SK = "streamk"  # rung 9 + stream-K: where rung 9's last round is thin
AUTO_CM1 = "tuned"  # rung 9 without the cluster: one round, over half full, M >= CM1_MIN_M (its CTAs wait for none)
CM1_MIN_M = 1024  # (below it the pair halves the weight rows' L2 traffic, which small M is bound by)
MID_AUTO = "t192"  # 128x192 tiles fill the rounds better (3072^3)
NARROW_AUTO = "t144"  # 128x144 tiles fill one round where wider ones do not (1536^3)
NARROW_SWAP_AUTO = "t144s"  # ... over a row-major 16-bit B as the swapped product, which loads no third slab
WIDE_AUTO = "t320"  # 128x320 tiles fill one or two rounds better (1280x4096x4096)
NARROW160_AUTO = "t160"  # 128x160 tiles fill the rounds better (2304x1024x4096)
SMALL_WIDE_AUTO = "t64x192"  # 64x192 tiles fill one round better than 64x128 and 128x128 (768x1536^2)
SQUARE_AUTO = "t128"  # 128x128 tiles fill the rounds without a split (384-512 x 4096 x 4096)
SMALL_SWAP64 = "sw64"  # over t64 at 33-64 rows where t64's last round is under half full
SWAP_AUTO = {8: "sw8", 16: "sw16", 32: "sw32", 64: "sw64"}  # the swapped tiles, by the M they fit
# 65-112 rows: the 64-row swapped tile as wide as M, where M fits it in one column of tiles (B streamed once)
SWAP_WIDE = {80: "sw80", 96: "sw96", 112: "sw112"}
SWAP_MAX_M = 1024  # the swapped tiles are weighed up to this M
# sw128 for fp8 at 113-128 rows with K >= SW128_FP8_MIN_K and N in SW128_FP8_N, by rule (the model ties it with t64)
SW128_FP8_MIN_K = 8192
SW128_FP8_N = (2048, 8192)
# the 4-CTA-cluster swapped builds, by BN; sw64c4 / sw128c4 for fp8 only (16-bit level with t64 / t128 or slower),
# sw128c4 in the low-fill band only, sw80c4 / sw96c4 in any one round
SWAP_C4 = {8: "sw8c4", 16: "sw16c4", 32: "sw32c4", 64: "sw64c4", 80: "sw80c4", 96: "sw96c4", 128: "sw128c4"}
C4_FP8_ONLY = {"sw64c4", "sw128c4"}
C4_LOW_BAND_ONLY = {"sw128c4"}
C4_ANY_ONE_ROUND = {"sw80c4", "sw96c4"}
C4_LOW_FILL = 0.75  # ... or one round of them fills at most this much of the resident clusters (launched without PDL)
# 97-128 rows of a K-major B: the 128x80 / 128x96 tile in 4-CTA clusters along N where those make one round at least
# CN_MIN_FILL full and the 64x128 tile would need two
CN_AUTO = ("n80c4", "n96c4")
CN_MIN_M = 97
CN_MIN_FILL = 0.75
# 33-128 rows: the n2 tile as wide as half of M where its clusters make one round of at least N2_MIN_CLUSTERS; by
# rule from N2_RULE_CLUSTERS (N >= 3072), below that where the model predicts it faster
N2_AUTO = {32: "sw32n2", 40: "sw40n2", 48: "sw48n2", 56: "sw56n2", 64: "sw64n2"}
N2_MIN_M = 33
N2_MIN_CLUSTERS = 32
N2_RULE_CLUSTERS = 48
# at 97-112 rows with sw112's tiles >= 32 the narrower swapped tiles ran above the model: sw112 is taken within this
# margin of the best prediction, and the others must beat it by as much
SW112_NARROW_MARGIN = 0.20
# stream-K for rung 9 only where the model predicts at least this gain (idle SMs cost less than their share under
# the power cap); also for 16-bit launches of two rounds, the second at most 3/4 full, with >= SK_LONG_KTILES k-tiles
STREAMK_MIN_GAIN = 0.04
SK_LONG_KTILES = 128
# a smaller tile must beat a larger one by this much: per flop the larger moves fewer bytes (the power cap rewards it)
TILE_MARGIN = 0.02


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pick_variant(plan: Plan, sms: int) -> Variant:
    """The variant `auto` runs for a validated plan on `sms` SMs (an explicit variant is returned unchanged)."""
    if not plan.auto:
        return plan.variant
    args = (plan.m, plan.n, plan.k_padded, plan.in_kind, sms)
    best, t_best = _scored(plan, sms)
    if plan.m <= SWAP_MAX_M and plan.a_kmajor:  # the swapped product reads a K-major
        best, t_best = _swapped(plan, sms, best, t_best)
        best = _small_m_rules(plan, sms, best)
    if best.name == AUTO and choose_splits(best.config, *args) == 1:
        best = VARIANTS[AUTO_DEFER]
    return best


def _rung9(plan: Plan, sms: int) -> tuple[Variant, float]:
    """Rung 9, its cluster-less build (one round, over half full, M >= CM1_MIN_M) or its stream-K build (a thin last
    round, or a long-K 16-bit second round at most 3/4 full, where predicted STREAMK_MIN_GAIN faster)."""
    args, kw = (plan.m, plan.n, plan.k_padded, plan.in_kind, sms), {"b_kmajor": plan.b_kmajor}
    big = VARIANTS[AUTO]
    clusters = sms // big.config.cm
    units = cluster_tiles(big.config, plan.m, plan.n)
    if clusters / 2 < units <= clusters and plan.m >= CM1_MIN_M:
        big = VARIANTS[AUTO_CM1]
    t_big = estimate_us(big, *args, **kw)
    long_k = (plan.in_kind != "e4m3" and clusters < units <= 2 * clusters and units % clusters <= 0.75 * clusters
              and _cdiv(plan.k_padded, big.config.bk(plan.in_kind)) >= SK_LONG_KTILES)
    if thin_last_round(VARIANTS[AUTO].config, plan.m, plan.n, sms) or long_k:
        t_sk = estimate_us(big, *args, streamk=True, **kw)
        if t_sk <= t_big * (1 - STREAMK_MIN_GAIN):
            return VARIANTS[AUTO_SK], t_sk
    return big, t_big


def candidates(plan: Plan) -> tuple[tuple[str, int | None, int, float], ...]:
    """The tiles weighed beside rung 9, largest first: (name, most rounds of tiles it is weighed in, rows M must
    exceed, margin it must win by). The 128-row tiles above 64 rows only; t320 (which moves fewer bytes per flop than
    any but rung 9) and t160 in at most two rounds; t144s over a row-major 16-bit B in one."""
    narrow = ((NARROW_SWAP_AUTO, 1, 64, TILE_MARGIN) if not plan.b_kmajor and plan.in_kind != "e4m3" and plan.a_kmajor
              else (NARROW_AUTO, None, 64, TILE_MARGIN))
    return ((WIDE_AUTO, 2, 64, 0.0), (MID_AUTO, None, 64, TILE_MARGIN), (NARROW160_AUTO, 2, 64, TILE_MARGIN), narrow,
            (SQUARE_AUTO, None, 64, TILE_MARGIN), (SMALL_WIDE_AUTO, None, SMALL_M, TILE_MARGIN))


def _scored(plan: Plan, sms: int) -> tuple[Variant, float]:
    """The fastest by the model of rung 9's choice, the candidate tiles that need no split, and the 64x128 tile."""
    args, kw = (plan.m, plan.n, plan.k_padded, plan.in_kind, sms), {"b_kmajor": plan.b_kmajor}
    scored = [(*_rung9(plan, sms), 0.0)]
    for name, rounds, min_rows, margin in candidates(plan):
        v = VARIANTS[name]
        if rounds is not None and cluster_tiles(v.config, plan.m, plan.n) > rounds * sms:
            continue
        if plan.m > min_rows and choose_splits(v.config, *args) == 1:
            scored.append((v, estimate_us(v, *args, **kw), margin))
    small = VARIANTS[SMALL_AUTO]
    scored.append((small, estimate_us(small, *args, **kw), TILE_MARGIN))
    best, t_best, _ = scored[0]
    for v, t, margin in scored[1:]:
        if t * (1 + margin) < t_best:
            best, t_best = v, t
    return best, t_best


def swap_order(m: int) -> list[str]:
    """The swapped tiles `auto` weighs, the one whose BN fits M first (the narrowest of 8 / 16 / 32 / 64 columns
    that holds M; 64 above): where the model cannot tell them apart (launches bound by streaming B) the fitting one
    runs (fewer of the activation box's rows are TMA zero fill). At 65-112 rows the SWAP_WIDE tile holding M first."""
    fit = next((v for bn, v in SWAP_AUTO.items() if m <= bn), SWAP_AUTO[64])
    narrower = max(SWAP_AUTO)  # a SWAP_WIDE tile holds M above the next narrower width only
    wide = []
    for bn in sorted(SWAP_WIDE):
        if narrower < m <= bn:
            wide.append(SWAP_WIDE[bn])
        narrower = bn
    return wide + [fit] + [v for v in SWAP_AUTO.values() if v != fit]


def narrower_swap_margin(wide: str, m: int, n: int, sms: int) -> float:
    """How much faster than the SWAP_WIDE tile `wide` a narrower swapped tile (or any other) must be predicted to be
    taken instead: SW112_NARROW_MARGIN for sw112 where its tiles are >= 32 and leave half the SMs idle unsplit (N =
    2048-4224 at 97-112 rows), none elsewhere."""
    c = VARIANTS[wide].config
    if wide == SWAP_WIDE[112] and cluster_tiles(c, m, n) >= SPLIT_BY_MODEL_MIN_TILES and underfilled(c, m, n, sms):
        return SW112_NARROW_MARGIN
    return 0.0


def _swapped(plan: Plan, sms: int, best: Variant, t_best: float) -> tuple[Variant, float]:
    """The swapped tiles in swap_order where predicted faster than `best` (the SWAP_WIDE tile within its margin, the
    others then having to beat it by as much)."""
    args, kw = (plan.m, plan.n, plan.k_padded, plan.in_kind, sms), {"b_kmajor": plan.b_kmajor}
    t_wide, margin = float("inf"), 0.0
    for name in swap_order(plan.m):
        t = estimate_us(VARIANTS[name], *args, **kw)
        if name in SWAP_WIDE.values():
            t_wide, margin = t, narrower_swap_margin(name, plan.m, plan.n, sms)
            if t < t_best * (1 + margin):
                best, t_best = VARIANTS[name], t
        elif t < t_best and t * (1 + margin) < t_wide:
            best, t_best = VARIANTS[name], t
    return best, t_best


def _small_m_rules(plan: Plan, sms: int, best: Variant) -> Variant:
    """The measured rules over the model's small-M pick: sw64 over a thin last round of t64 (33-64 rows); a cluster
    along N, else a 4-CTA swapped build, else sw128 for long-K fp8, where each pays; the n2 tile in one round."""
    m, n = plan.m, plan.n
    if best is VARIANTS[SMALL_AUTO] and 32 < m <= 64 and thin_last_round(best.config, m, n, sms):
        best = VARIANTS[SMALL_SWAP64]
    best = (cn_build(m, n, sms, plan.b_kmajor) or c4_build(m, n, plan.k_padded, plan.in_kind, sms)
            or sw128_fp8_build(m, n, plan.k_padded, plan.in_kind) or best)
    n2 = n2_build(m, n, sms)
    if n2 is not None:
        args, kw = (m, n, plan.k_padded, plan.in_kind, sms), {"b_kmajor": plan.b_kmajor}
        if cluster_tiles(n2.config, m, n) >= N2_RULE_CLUSTERS or estimate_us(n2, *args, **kw) < estimate_us(
                best, *args, **kw):
            best = n2
    return best


def c4_pays(config: KernelConfig, m: int, n: int, sms: int, low_band_only: bool = False,
            any_one_round: bool = False) -> bool:
    """Whether `auto` runs a 4-CTA-cluster swapped build: its clusters fill at least C4_MIN_FILL of their last round
    of resident clusters (not with `low_band_only`), or they are one round filling at most C4_LOW_FILL of it (any one
    round with `any_one_round`). Between the two, and with a thin last round, they measured slower than the 64-row
    tile."""
    resident = c4_resident(sms)
    tiles = cluster_tiles(config, m, n)
    last = tiles % resident or resident
    one_round = tiles <= (resident if any_one_round else C4_LOW_FILL * resident)
    return (last >= C4_MIN_FILL * resident and not low_band_only) or one_round


def c4_build(m: int, n: int, k: int, in_kind: str, sms: int) -> Variant | None:
    """The 4-CTA-cluster swapped build `auto` runs for a launch, or None: the narrowest whose BN holds M (one column
    of tiles), for the dtypes it is kept for, needing no split, where c4_pays."""
    fit_bn = next((bn for bn in sorted(SWAP_C4) if m <= bn), 0)
    c4 = VARIANTS.get(SWAP_C4.get(fit_bn, ""))
    if c4 is None or (c4.name in C4_FP8_ONLY and in_kind != "e4m3"):
        return None
    if choose_splits(c4.config, m, n, k, in_kind, sms) != 1:
        return None
    pays = c4_pays(c4.config, m, n, sms, low_band_only=c4.name in C4_LOW_BAND_ONLY,
                   any_one_round=c4.name in C4_ANY_ONE_ROUND)
    return c4 if pays else None


def cn_build(m: int, n: int, sms: int, b_kmajor: bool) -> Variant | None:
    """The cluster-along-N tile `auto` runs for a launch, or None: for CN_MIN_M-128 rows of a K-major B, of CN_AUTO
    the one whose clusters are one round filling most (at least CN_MIN_FILL) of the resident ones — where the 64x128
    tile would need a second round."""
    if not (CN_MIN_M <= m <= 128 and b_kmajor) or cluster_tiles(VARIANTS[SMALL_AUTO].config, m, n) <= sms:
        return None
    resident = c4_resident(sms)
    fits = [(cluster_tiles(VARIANTS[name].config, m, n), name) for name in CN_AUTO]
    fits = [(c, name) for c, name in fits if CN_MIN_FILL * resident <= c <= resident]
    return VARIANTS[max(fits)[1]] if fits else None


def n2_build(m: int, n: int, sms: int) -> Variant | None:
    """The n2 tile `auto` weighs for a launch, or None: for N2_MIN_M-128 rows the narrowest whose two CTAs hold M,
    where its clusters make one round of at least N2_MIN_CLUSTERS (N = 2048-4224 on 132 SMs)."""
    if not N2_MIN_M <= m <= 128:
        return None
    v = VARIANTS[next(name for bn, name in N2_AUTO.items() if m <= 2 * bn)]
    return v if N2_MIN_CLUSTERS <= cluster_tiles(v.config, m, n) <= sms // v.config.cm else None


def sw128_fp8_build(m: int, n: int, k: int, in_kind: str) -> Variant | None:
    """sw128 where `auto` runs it by rule: fp8 at 113-128 rows with K >= SW128_FP8_MIN_K and N in SW128_FP8_N."""
    if in_kind == "e4m3" and 112 < m <= 128 and k >= SW128_FP8_MIN_K and SW128_FP8_N[0] <= n <= SW128_FP8_N[1]:
        return VARIANTS["sw128"]
    return None
