"""The launch plan: a pure function of the validated problem, the device's properties and the launch options.

`plan_launch` picks the variant (`auto`), the build (plain, split-K, pair), the split count and how splits reduce,
the persistent grid, the stream-K share, PDL and the operands' L2 promotion — no torch, no CUDA.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tcforge.errors import TcforgeError
from tcforge.gemm.auto import pick_variant
from tcforge.gemm.config import KernelConfig, pair_config, split_config
from tcforge.gemm.model import (
    c4_resident,
    choose_splits,
    choose_streamk,
    choose_streamk_small,
    cluster_tiles,
    fused_split_pays,
    pdl_pays,
    persistent_clusters,
)
from tcforge.gemm.streamk import fits_int32
from tcforge.gemm.validate import Plan
from tcforge.gemm.variants import Variant

SPLIT_MODES = ("auto", "fused", "planes", "pair")
L2_128B, L2_256B = 2, 3  # tensor-map L2 promotion (runtime.tensormap.L2_PROMOTION_128B / _256B)


def _pdl_default() -> bool:
    return os.environ.get("TCFORGE_PDL", "1") != "0"


@dataclass(frozen=True)
class LaunchOptions:
    """How launches are made (the same bits either way).

    poison_output: fill C (and split-K / stream-K workspaces) with NaN before every launch, so unwritten outputs show
    (tests). pdl: programmatic dependent launch where `model.pdl_pays` says it was measured faster (the launch may set
    up while the previous kernel finishes; it reads nothing before that kernel completes); TCFORGE_PDL=0 makes the
    default False. l2_promotion: None picks by tile (128 B for the swapped tiles, 256 B else); 0-3 forces it (none,
    64 B, 128 B, 256 B). cluster_policy: the cluster scheduling-policy preference of every cluster launch (0: the
    driver's default).
    """

    poison_output: bool = False
    pdl: bool = field(default_factory=_pdl_default)
    l2_promotion: int | None = None
    cluster_policy: int = 0

    def __post_init__(self) -> None:
        if self.l2_promotion is not None and self.l2_promotion not in (0, 1, 2, 3):
            raise TcforgeError(f"l2_promotion must be None or 0..3 (none, 64B, 128B, 256B), got {self.l2_promotion!r}")


@dataclass(frozen=True)
class Device:
    """What a plan needs of the GPU: its SM count and, where the driver can say, how many clusters of a build's kernel
    fit at once (`resident(config)`, None when unknown: then SMs / cluster size, and no stream-K)."""

    sm_count: int = 132
    resident: Callable[[KernelConfig], int | None] | None = field(default=None, compare=False)

    def resident_clusters(self, config: KernelConfig) -> int | None:
        """The driver's count of resident clusters for a build, or None."""
        return self.resident(config) if self.resident is not None else None


@dataclass(frozen=True)
class LaunchPlan:
    """Everything a launch needs beyond the tensors: the problem (with the variant `auto` chose), the build's config,
    the K splits and how they reduce, the grid, the stream-K share, PDL and L2 promotion."""

    problem: Plan
    config: KernelConfig
    splits: int  # K splits of each tile (1: none)
    fused: bool  # a split launch reduced inside the kernel (else through fp32 planes and tcf_splitk_reduce)
    clusters: int  # the persistent grid in clusters (a non-persistent launch: one per unit)
    sk_units: int  # units shared by stream-K (0: none)
    pdl: bool
    l2_promotion: int
    resident: int | None = None  # the driver's resident-cluster count the grid was sized with

    @property
    def variant(self) -> Variant:
        """The variant that runs."""
        return self.problem.variant

    @property
    def planes(self) -> bool:
        """A split launch reduced through one fp32 plane of C per split and a second kernel."""
        return self.splits > 1 and not self.fused

    @property
    def grid(self) -> int:
        """CTAs launched."""
        return self.clusters * self.config.cm

    @property
    def units(self) -> int:
        """Work units: cluster tiles times K splits."""
        return cluster_tiles(self.config, self.problem.m, self.problem.n) * self.splits


def launch_config(variant: Variant, plan: Plan, sms: int) -> tuple[KernelConfig, int]:
    """The kernel config and split count this variant uses for this shape."""
    splits = 1
    if variant.splitk_auto:
        splits = choose_splits(variant.config, plan.m, plan.n, plan.k_padded, plan.in_kind, sms)
    cfg = variant.config if splits == 1 else split_config(variant.config)
    return cfg, splits


def small_streamk(variant: Variant, plan: Plan, sms: int) -> int:
    """Clusters when stream-K `variant` shares every unit of a launch it would otherwise split over K (as many pieces
    at once as split-K, each >= 4 k-tiles: no fp32 planes, no reduction kernel); 0 when it would not."""
    c = variant.config
    splits = launch_config(variant, plan, sms)[1]
    if not (c.streamk and variant.persistent) or splits == 1:
        return 0
    units = cluster_tiles(c, plan.m, plan.n)
    return choose_streamk_small(units, sms // c.cm, -(-plan.k_padded // c.bk(plan.in_kind)), splits)


def l2_promotion(config: KernelConfig, options: LaunchOptions) -> int:
    """L2 promotion of a launch's operand maps: 128 B for the swapped tiles, which stream each weight row 128 bytes per
    k-tile (2-4 % faster than 256 B at 8-32 x 14336 x 4096), 256 B for the others; or as the options force it."""
    if options.l2_promotion is not None:
        return options.l2_promotion
    return L2_128B if config.swap_ab else L2_256B


def operand_promotion(promotion: int, row_bytes: int, options: LaunchOptions) -> int:
    """The L2 promotion of one operand's map: the launch's, except that rows which start only 16-byte aligned (a
    contiguous 16-bit K = 1000) take 128 B where the launch takes 256 B: 1000³ 11 % faster on the H100
    (docs/gemm.md, "Row alignment"); options that force a promotion force it for every map."""
    if options.l2_promotion is None and promotion == L2_256B and row_bytes % 32:
        return L2_128B
    return promotion


def plan_launch(plan: Plan, device: Device | None = None, options: LaunchOptions | None = None, *,
                splits: int | None = None, streamk: tuple[int, int] | None = None,
                split_mode: str = "auto") -> LaunchPlan:
    """The launch plan of a validated problem. `splits` forces a split-K factor and `streamk=(clusters, sk_units)` a
    stream-K grid and share (tests; either keeps an `auto` plan's variant as it is). A split launch of a TMA variant
    reduces inside the kernel ("fused") or through fp32 planes ("planes"), the same bits either way; two splits of a
    swapped tile run as 2-CTA clusters whose split 1 sends its partial into split 0's shared memory ("pair").
    `split_mode="auto"` takes the pair where there is one, else the one `fused_split_pays` predicts faster."""
    if split_mode not in SPLIT_MODES:
        raise TcforgeError(f"split_mode must be one of {', '.join(SPLIT_MODES)}, got {split_mode!r}")
    device = device if device is not None else Device()
    options = options if options is not None else LaunchOptions()
    sms = device.sm_count
    free = splits is None and streamk is None
    if free:
        plan = replace(plan, variant=pick_variant(plan, sms))
    v, m, n = plan.variant, plan.m, plan.n
    cfg, nsplit = launch_config(v, plan, sms)
    if splits is not None:
        cfg, nsplit = (v.config if splits == 1 else split_config(v.config)), splits
    # a stream-K variant shares all of a small launch's units instead of splitting K
    small_sk = small_streamk(v, plan, sms) if free else 0
    if small_sk:
        cfg, nsplit = v.config, 1
    pair = pair_config(v.config) if cfg.splitk_fused and nsplit == 2 else None
    if split_mode == "pair" and pair is None:
        raise TcforgeError(f"split_mode='pair' needs a swapped tile split exactly 2 ways, not {v.name} "
                           f"with {nsplit} split(s)")
    if pair is not None and split_mode in ("auto", "pair"):
        cfg = pair
    fused = cfg.splitk_fused and nsplit > 1 and (
        split_mode in ("fused", "pair") or (split_mode == "auto" and (cfg.split_pair or
                                                                      fused_split_pays(cfg, m, n, nsplit))))
    units = cluster_tiles(cfg, m, n) * nsplit
    num_kt = -(-plan.k_padded // cfg.bk(plan.in_kind))
    sk_units, resident = 0, None
    if v.persistent:
        # clusters of 4+ are sized by the driver (a GPC holds fewer of them than SMs / 4); stream-K owners wait for
        # other clusters' partials, so every cluster must be resident: no count, no stream-K
        if cfg.cm >= 4 or cfg.streamk:
            resident = device.resident_clusters(cfg)
        clusters = persistent_clusters(units, sms, cfg.cm, resident)
        if small_sk and not resident:  # split K as the variant would
            return plan_launch(plan, device, options, splits=launch_config(v, plan, sms)[1], split_mode=split_mode)
        if small_sk:
            clusters, sk_units = min(small_sk, resident), units
        elif cfg.streamk and resident:
            sk_units = choose_streamk(units, clusters, num_kt)
        if not fits_int32(clusters, sk_units, num_kt):
            sk_units = 0
    else:
        clusters = units
    if cfg.split_pair:  # CTAs launch in pairs (a split-0 CTA and its split-1 peer): an even grid
        clusters -= clusters % 2
    if streamk is not None and cfg.streamk:
        clusters, sk_units = streamk
        if not (clusters >= 1 and 0 <= sk_units <= units and fits_int32(clusters, sk_units, num_kt)):
            raise TcforgeError(f"forced stream-K needs clusters >= 1, 0 <= sk_units <= {units}, a 32-bit schedule")
    # a swapped launch's PDL depends on how much of one round of resident clusters it fills
    c4_round = (resident or c4_resident(sms)) if v.persistent else 0
    in_round = c4_round if cfg.cm >= 4 else sms // cfg.cm
    pdl = options.pdl and pdl_pays(cfg, plan.in_kind, units, clusters, num_kt, nsplit, in_round)
    return LaunchPlan(plan, cfg, nsplit, fused, clusters, sk_units, pdl, l2_promotion(cfg, options), resident)
