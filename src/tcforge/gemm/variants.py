"""The variant registry: each rung of the ladder and each tile `auto` can run, by name (pure Python, no CUDA needed).

A variant is a `KernelConfig` (the compile-time options of kernels/gemm_sm90.cu) plus launch policy (persistent grid,
tile order, split-K). Rungs are cumulative, as in the write-up: each adds one change to the one before. What was
measured and not kept is in docs/gemm.md.

Variant specs for experiments: `NAME@field=value+field=value` is the registered variant NAME with its kernel config
overridden (`hoist@diag=2`: rung 9 without its stores; `hoist_es@epi_bufs=4+stages=3`), so a bench can time a
one-build change beside the shipped variants without registering it. Never reachable through `matmul`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.gemm.config import (  # noqa: F401  (re-exported: codegen, build and tools import them from here)
    IN_BYTES,
    IN_KINDS,
    LADDER_COMBOS,
    MAX_SMEM,
    OUT_BYTES,
    OUT_KINDS,
    SUPPORTED,
    KernelConfig,
    pair_config,
    split_config,
)


@dataclass(frozen=True)
class Variant:
    """One rung: a kernel config plus launch policy, with the write-up-style note of what changed."""

    name: str
    rung: int
    title: str
    config: KernelConfig
    persistent: bool = False
    group_m: int = 1
    splitk_auto: bool = False


_R1 = KernelConfig(use_tma=False, bm=128, bn=128, bk_bytes=64, stages=3, nc=2, setmaxnreg=False)
_R2 = KernelConfig(use_tma=True, bm=128, bn=128, bk_bytes=64, stages=4, nc=1, setmaxnreg=False)
_R3 = KernelConfig(use_tma=True, bm=128, bn=256, bk_bytes=64, stages=4, nc=2, setmaxnreg=True)
_R4 = replace(_R3, cm=2)
_R5 = replace(_R4, tma_store=True)
_R6 = replace(_R5, bk_bytes=128, stages=4)
_R9 = replace(_R6, hoist=True)

LADDER: list[Variant] = [
    Variant("baseline", 1, "cp.async by all threads + wgmma from shared, 128x128 tile", _R1),
    Variant("tma_ws", 2, "TMA + mbarrier ring, producer / consumer warpgroups", _R2),
    Variant("bn256", 3, "128x256 tile, two consumer warpgroups, setmaxnreg 40/232", _R3),
    Variant("cluster2", 4, "2-CTA cluster, B multicast", _R4),
    Variant("tma_store", 5, "staged epilogue: swizzled shared memory + TMA store", _R5),
    Variant("bk64", 6, "128-byte K rows (BK=64 for 16-bit), 4 stages (best of the sweep)", _R6),
    Variant("persistent", 7, "persistent grid, grouped tile order, epilogue overlaps next loads", _R6, True, 8),
    Variant("splitk", 8, "split-K over idle SMs when tiles < SMs/2", _R6, True, 8, True),
    Variant("hoist", 9, "descriptors built once per kernel", _R9, True, 8, True),
]
# the stage sweep of rung 6 (kept selectable so the sweep can be re-run)
SWEEP: list[Variant] = [Variant(f"bk64_s{s}", 6, f"rung 6 with {s} stages", replace(_R6, stages=s)) for s in (2, 3)]
# around rung 7 (persistent): no cluster; a 256x128 tile (each consumer owns 128 rows x 128 columns); ping-pong
SWEEP += [
    Variant("persist_cm1", 7, "rung 7 without the cluster", replace(_R6, cm=1), True, 8),
    Variant("bm256_bn128", 7, "rung 7 with 256x128 tiles, 3 stages", replace(_R6, bm=256, bn=128, stages=3), True, 8),
    Variant("pingpong", 7, "persistent ping-pong: 128x128 tile per consumer warpgroup, 5 stages",
            replace(_R6, cm=1, bn=128, stages=5, pingpong=True), True, 8),
    Variant("pingpong_cm2", 7, "ping-pong with the 2-CTA cluster", replace(_R6, cm=2, bn=128, stages=5, pingpong=True),
            True, 8),
    Variant("tuned_pp", 9, "ping-pong + split-K + hoisted descriptors",
            replace(_R9, cm=1, bn=128, stages=5, pingpong=True, relaxed=True), True, 8, True),
    Variant("tuned_cm2", 9, "rung 9 + relaxed slot release", replace(_R9, relaxed=True), True, 8, True),
    Variant("tuned", 9, "rung 9 without the cluster, relaxed release", replace(_R9, cm=1, relaxed=True), True, 8, True),
]
# 16-bit C: each tile's accumulators packed to 16-bit pairs and stored under the next tile's first wgmmas (the
# tensor core waits for the pack, not for the staging and the TMA stores); no split builds
SWEEP += [
    Variant("hoist_ed", 9, "rung 9 + deferred epilogue (16-bit C stored under the next tile's wgmmas)",
            replace(_R9, epi_defer=True), True, 8),
    Variant("tuned_ed", 9, "tuned + deferred epilogue", replace(_R9, cm=1, relaxed=True, epi_defer=True), True, 8),
]
# the deferred epilogue spread over the next tile's k-tiles, one sub-tile each, fp32 C half deferred: `auto` wherever
# it would run rung 9 unsplit (1.0-1.5 % fewer cycles than rung 9 at 4096^3; docs/gemm.md, "A spread epilogue")
SWEEP += [
    Variant("hoist_es", 9, "rung 9 + spread deferred epilogue (one sub-tile per k-tile of the next tile; fp32 C half "
            "deferred)", replace(_R9, epi_defer=True, epi_spread=True), True, 8),
]

# small M: a 64-row tile (one consumer warpgroup), no cluster, split-K when the tiles leave SMs idle
SWEEP.append(
    Variant("bm64", 9, "64x256 tile, one consumer warpgroup, 5 stages, persistent + split-K + hoisted (for M <= 64)",
            KernelConfig(bm=64, bn=256, bk_bytes=128, stages=5, nc=1, setmaxnreg=False, cm=1, tma_store=True,
                         hoist=True), True, 8, True)
)
# after rung 9 (each measured no faster than it: docs/gemm.md): the staged epilogue's stores never wait inside a
# tile (4 buffers per consumer warpgroup: a whole 16-bit tile, half an fp32 one), paid for with one ring stage
_E4 = replace(_R9, stages=3, epi_bufs=4)
SWEEP += [
    Variant("epi4", 9, "rung 9, 3 stages, 4 epilogue buffers per consumer (stores do not wait in a tile)", _E4, True,
            8, True),
    Variant("epi4_cm1", 9, "epi4 without the cluster, relaxed release", replace(_E4, cm=1, relaxed=True), True, 8,
            True),
    # a whole fp32 tile staged (128 KB): the ring shrinks to 4 stages of 64-byte K rows (rung 5's BK)
    Variant("epi8_bk32", 9, "rung 9 with BK=32, 4 stages, 8 epilogue buffers (a whole fp32 tile)",
            replace(_R9, bk_bytes=64, stages=4, epi_bufs=8), True, 8, True),
]
# fewer bytes moved for more clock under the power cap: a 4-CTA cluster quarters each CTA's B traffic from L2; a
# 16-cluster-row raster keeps all of A in L2 (neither faster: docs/gemm.md "after rung 9")
SWEEP += [
    Variant("cluster4", 9, "rung 9 with a 4-CTA cluster (B multicast to 4)", replace(_R9, cm=4), True, 4, True),
    Variant("hoist_g16", 9, "rung 9 with 16 cluster rows per raster group", _R9, True, 16, True),
]

# fp8 with fp32 promotion (as cuBLAS without use_fast_accum): each stage's 4 k-steps are summed by the tensor core
# in two 128-column halves (64 partial registers beside the 128 totals), then added into the fp32 totals; 16-bit
# inputs build rung 9 unchanged
SWEEP.append(
    Variant("promote", 9, "rung 9 + fp8 partial sums promoted to fp32 every stage (K = 128)",
            replace(_R9, promote=True), True, 8, True)
)
SWEEP.append(
    Variant("promote_cm1", 9, "promote without the cluster, relaxed release (as `tuned`)",
            replace(_R9, cm=1, relaxed=True, promote=True), True, 8, True)
)

# stream-K for the last wave: the units past the last full round share their k-tiles evenly over every cluster.
# The producer's stream-K walk needs 48 registers in the 2-CTA build (40 spills), so the consumers get 224
SWEEP += [
    Variant("streamk", 9, "rung 9 + stream-K for the units past the last full wave",
            replace(_R9, streamk=True, producer_regs=48, consumer_regs=224), True, 8, True),
    Variant("streamk_cm1", 9, "stream-K without the cluster, relaxed release (as `tuned`)",
            replace(_R9, cm=1, relaxed=True, streamk=True), True, 8, True),
]

_T64 = KernelConfig(bm=64, bn=128, bk_bytes=128, stages=8, nc=1, setmaxnreg=False, cm=1, tma_store=True, hoist=True)
_T128 = KernelConfig(bm=128, bn=128, bk_bytes=128, stages=5, nc=2, cm=1, tma_store=True, hoist=True)
# small problems (512^3, 1024^3, small M): smaller tiles spread the work over more SMs in one launch (no cluster)
SWEEP += [
    Variant("t128", 9, "128x128 tile, two consumer warpgroups (64x128 each), no cluster, 5 stages, persistent + "
            "split-K + hoisted", _T128, True, 8, True),
    Variant("t64", 9, "64x128 tile, one consumer warpgroup, no cluster, 8 stages, persistent + split-K + hoisted",
            _T64, True, 8, True),
    Variant("t64_sk", 9, "t64 + stream-K (a launch t64 would split over K shares its units instead)",
            replace(_T64, streamk=True), True, 8, True),
]
# a wider 64-row tile where 64x128 tiles overflow one round and 128-row ones leave SMs idle (768x1536x1536)
SWEEP.append(
    Variant("t64x192", 9, "64x192 tile, one consumer warpgroup, no cluster, 6 stages, persistent + split-K + hoisted",
            replace(_T64, bn=192, stages=6), True, 8, True)
)
# mid-size problems whose 128x256 cluster tiles fill their rounds badly (3072^3: 2.18 rounds): 128x192, no cluster
# (three 64-column slabs of a row-major B do not split over two CTAs)
SWEEP.append(
    Variant("t192", 9, "128x192 tile, two consumer warpgroups (64x192 each), no cluster, 4 stages, persistent + "
            "split-K + hoisted", KernelConfig(bm=128, bn=192, bk_bytes=128, stages=4, nc=2, cm=1, tma_store=True,
                                             hoist=True), True, 8, True)
)
# a width that is not a multiple of 64, so the tiles fill one round where no 64-multiple does (1536^3: 132 tiles);
# a row-major B is still loaded in whole 64-column slabs, the last 16 columns of each tile stored from registers
_T144 = KernelConfig(bm=128, bn=144, bk_bytes=128, stages=4, nc=2, cm=1, tma_store=True, hoist=True)
SWEEP.append(
    Variant("t144", 9, "128x144 tile, two consumer warpgroups (64x144 each), no cluster, 4 stages, persistent + "
            "split-K + hoisted", _T144, True, 8, True)
)
# t144 over a row-major 16-bit B without its third slab: the swapped product, B^T its MN-major A operand (128 rows of
# N: two whole slabs) and a's K-major rows its B (144 of M), so a stage moves t144's bytes over a column-major B
SWEEP.append(
    Variant("t144s", 9, "swapped product C^T = B^T A^T: 128 columns of C (two consumers of 64) x 144 rows per tile, "
            "no cluster, 4 stages, persistent + split-K + hoisted", replace(_T144, swap_ab=True), True, 8, True)
)
# 160 columns: 1280x4096x4096 makes 260 tiles, two full rounds; 2.5 slabs of a row-major B (three loaded)
SWEEP.append(
    Variant("t160", 9, "128x160 tile, two consumer warpgroups (64x160 each), no cluster, 4 stages, persistent + "
            "split-K + hoisted", replace(_T144, bn=160), True, 8, True)
)
# 320 columns: 130 tiles in one round at 1280x4096x4096 where t160 runs 260 in two, a third fewer bytes into shared
# memory per flop; each consumer's 64x320 is an n256 and an n64 wgmma per k-step; 3 stages of 56 KB
SWEEP.append(
    Variant("t320", 9, "128x320 tile, two consumer warpgroups (64x320 each: n256 + n64 wgmmas), no cluster, 3 stages, "
            "persistent + split-K + hoisted", replace(_T144, bn=320, stages=3), True, 8, True)
)

# small M: the swapped product C^T = B^T A^T puts M in the wgmma's N (8-64) instead of padding it to 64 rows, and
# 64-row tiles run over N; B becomes the A operand (K-major from column-major B, MN-major from row-major 16-bit B);
# one consumer warpgroup, a deep ring of small stages (the launch streams B)
_SW = KernelConfig(bm=64, bn=16, bk_bytes=128, stages=18, nc=1, setmaxnreg=False, cm=1, tma_store=True, hoist=True,
                   swap_ab=True)
SWEEP += [
    Variant(f"sw{bn}", 9, f"swapped product C^T = B^T A^T: 64 columns of C x {bn} rows per tile, {st} stages, "
            "persistent + split-K + hoisted", replace(_SW, bn=bn, stages=st), True, 8, True)
    for bn, st in ((8, 18), (16, 18), (32, 16), (64, 12))
]
# 65-128 rows with a short N: the 64-row swapped tile as wide as M, so B is streamed once; as many stages as fit
SWEEP += [
    Variant(f"sw{bn}", 9, f"swapped product C^T = B^T A^T: 64 columns of C x {bn} rows per tile, {st} stages, "
            "persistent + split-K + hoisted", replace(_SW, bn=bn, stages=st), True, 8, True)
    for bn, st in ((80, 11), (96, 10), (112, 8), (128, 8))
]
# skinny launches with a long N (16x14336x4096): a 128-row swapped tile (two consumers sharing the activations) in
# 4-CTA clusters along the kernel's M that multicast the activations, so fewer, larger CTAs saturate HBM
SWEEP += [
    Variant(f"sw{bn}c4", 9, f"swapped product: 128 columns of C x {bn} rows per tile (two consumers), 4-CTA clusters "
            f"multicasting the activations, {st} stages, persistent + split-K + hoisted",
            replace(_SW, bm=128, nc=2, bn=bn, stages=st, cm=4), True, 8, True)
    for bn, st in ((8, 10), (16, 10), (32, 9), (64, 8), (80, 7), (96, 6), (112, 5), (128, 5))
]
# 65-128 rows with a long N (96x11008x4096): a 128 (M) x BN tile in 4-CTA clusters along N, each CTA loading a
# quarter of A's rows and multicasting it; no setmaxnreg (the even split holds 64 x 96 accumulators)
SWEEP += [
    Variant(f"n{bn}c4", 9, f"128x{bn} tile, two consumer warpgroups, 4-CTA clusters along N multicasting A, 6 stages, "
            "persistent + hoisted" + (", B's loads paced by this CTA alone" if bn < 128 else ""),
            KernelConfig(bm=128, bn=bn, bk_bytes=128, stages=6, nc=2, setmaxnreg=False, cm=4, cluster_n=True,
                         tma_store=True, hoist=True, local_empty=bn < 128), True, 8)
    for bn in (80, 96, 128)
]


def _max_stages(config: KernelConfig) -> KernelConfig:
    """The config with as many ring stages as fit in shared memory."""
    st = config.stages
    while replace(config, stages=st + 1).smem_total() <= MAX_SMEM:
        st += 1
    while st > 1 and replace(config, stages=st).smem_total() > MAX_SMEM:
        st -= 1
    return replace(config, stages=st)


# 33-128 rows with N of a few thousand: the 64-row swapped tile of about half of M in 2-CTA clusters along the
# problem's M, the two CTAs each loading half of the weight rows and multicasting it (the weights leave L2 once per
# cluster, 2 x N/64 CTAs run unsplit); as many stages as fit
SWEEP += [
    Variant(f"sw{bn}n2", 9, f"swapped product: 64 columns of C x {bn} rows per tile, 2-CTA clusters along M "
            "(the problem's) multicasting the weight rows, persistent + hoisted",
            _max_stages(replace(_SW, bn=bn, cm=2, cluster_n=True)), True, 8)
    for bn in (32, 40, 48, 56, 64)
]

VARIANTS: dict[str, Variant] = {v.name: v for v in LADDER + SWEEP}
for _v in LADDER:
    VARIANTS[f"r{_v.rung}"] = _v
AUTO = "hoist"  # rung 9: `auto`'s starting point where M > SMALL_M (the launch model refines it by shape)
SMALL_AUTO = "t64"  # ... and at or below SMALL_M rows
SMALL_M = 128


def resolve_variant(name: object, m: int | None = None) -> Variant:
    """A variant by name ('bn256'), rung ('r3' or 3) or 'auto' (rung 9; the 64x128 tile when m <= SMALL_M; the
    plan refines it by shape: auto.pick_variant); TcforgeError else."""
    if isinstance(name, int) and not isinstance(name, bool):
        name = f"r{name}"
    if not isinstance(name, str):
        raise TcforgeError(f"variant must be a string such as 'auto' or 'bn256', got {type(name).__name__}")
    if name == "auto" and m is not None and m <= SMALL_M:
        return VARIANTS[SMALL_AUTO]
    key = AUTO if name == "auto" else name
    if key not in VARIANTS:
        raise TcforgeError(f"unknown variant {name!r}; choose 'auto' or one of {', '.join(VARIANTS)}")
    return VARIANTS[key]


# variant specs --------------------------------------------------------------------------------------------------------


def parse_spec(spec: str) -> tuple[str, dict[str, int | bool]]:
    """The registered variant's name and the KernelConfig overrides of a spec (integers, or true / false for
    flags); a TcforgeError names what cannot be read."""
    name, _, rest = spec.partition("@")
    if name not in VARIANTS:
        raise TcforgeError(f"variant spec {spec!r}: no variant {name!r}")
    known = {f.name for f in fields(KernelConfig)}
    overrides: dict[str, int | bool] = {}
    for item in filter(None, rest.split("+")):
        field, eq, value = item.partition("=")
        if not eq or not field or not value:
            raise TcforgeError(f"variant spec {spec!r}: overrides are field=value, joined by '+'")
        if field not in known:
            raise TcforgeError(f"variant spec {spec!r}: KernelConfig has no field {field!r}")
        low = value.lower()
        if low in ("true", "false"):
            overrides[field] = low == "true"
        elif value.lstrip("-").isdecimal():
            overrides[field] = int(value)
        else:
            raise TcforgeError(f"variant spec {spec!r}: {field}={value} is neither an integer nor true / false")
    return name, overrides


def computes_c(spec: str) -> bool:
    """Whether a spec's build computes C (the diagnostic builds do not: nothing to check them against)."""
    return not parse_spec(spec)[1].get("diag")


def check_specs(specs: Iterable[str], real: bool = False) -> list[str]:
    """The specs, each checked before anything is launched: readable, and with `real` computing C (a bench that
    checks its kernels against cuBLAS has nothing to check a diagnostic build against); a TcforgeError names the
    first that is not, for the tool to report as a usage error."""
    out = list(specs)
    for spec in out:
        parse_spec(spec)
        if real and not computes_c(spec):
            raise TcforgeError(f"{spec}: a diagnostic build computes no C (time it with bench/gemm_bound.py --diags)")
    return out


def with_spec(plan: Any, spec: str) -> Any:
    """A plan made for the spec's variant, with the spec's overrides applied (the variant then named `spec`); the
    config's own check refuses what the kernel cannot build."""
    _, overrides = parse_spec(spec)
    if not overrides:
        return plan
    v = plan.variant
    config = replace(v.config, **overrides)
    config.check()
    return replace(plan, variant=replace(v, name=spec, config=config))


def plan_spec(a: Any, b: Any, spec: str, **kwargs: Any) -> Any:
    """`plan_matmul` for a spec: the plan of its registered variant (kwargs: out_dtype, scales), overridden."""
    from tcforge.gemm.validate import plan_matmul

    return with_spec(plan_matmul(a, b, variant=parse_spec(spec)[0], **kwargs), spec)
