"""`matmul`: the Hopper GEMM on torch CUDA tensors (validate, then compile, load and launch via tcforge.runtime)."""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import replace
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.gemm.build import Build
from tcforge.gemm.codegen import KERNEL_NAME, REDUCE_NAME
from tcforge.gemm.streamk import fits_int32
from tcforge.gemm.validate import Plan, plan_matmul
from tcforge.gemm.variants import (
    IN_BYTES,
    OUT_BYTES,
    OUT_KINDS,
    KernelConfig,
    Variant,
    c4_resident,
    choose_splits,
    choose_streamk,
    choose_streamk_small,
    cluster_tiles,
    fused_split_pays,
    kernel_dims,
    pair_config,
    pdl_pays,
    split_config,
)

_kernels: dict[tuple[Build, int], Any] = {}
_sms: dict[int, int] = {}
_lock = threading.Lock()
# tests set this: C (and the split-K workspace) is filled with NaN before every launch, so unwritten outputs show
POISON_OUTPUT = False
# programmatic dependent launch: a GEMM launch may start (set up its barriers, fetch its tensor maps) while the
# kernel before it in the stream finishes; the kernel waits for that kernel's completion before it touches global
# memory (griddepcontrol.wait), so results are the same. Used where variants.pdl_pays says it was measured faster;
# TCFORGE_PDL=0 (or api.PDL = False) launches everything plainly.
PDL = os.environ.get("TCFORGE_PDL", "1") != "0"
# L2 promotion of the operands' tensor maps (tensormap.L2_PROMOTION_*: 0 none, 1 64B, 2 128B, 3 256B). None: by tile
# (l2_promotion); a number forces it for every launch (bench/gemm_small.py --l2-promotion)
L2_PROMOTION: int | None = None
# cluster scheduling-policy preference of every cluster launch (driver.CLUSTER_POLICIES; 0: the driver's default)
CLUSTER_POLICY = 0
# %globaltimer stamps per CTA written by a timeline build (the kernel's TL_SLOTS; bench/gemm_timeline.py)
TIMELINE_SLOTS = 16


def l2_promotion(config: KernelConfig) -> int:
    """L2 promotion of a launch's operand maps: 128 B for the swapped small-M tiles, which stream each weight row 128
    bytes per k-tile (8-32 x 14336 x 4096 and 16x28672x4096 2-4 % faster than with 256 B, 16x11008x4096 0-2 %:
    gemm_small_s25l2_*.json, gemm_small_s25l2b_*.json), 256 B for the others (4096^3, 256x4096x4096: no difference
    measured)."""
    if L2_PROMOTION is not None:
        if L2_PROMOTION not in (0, 1, 2, 3):
            raise TcforgeError(f"api.L2_PROMOTION must be None or 0..3 (none, 64B, 128B, 256B), got {L2_PROMOTION!r}")
        return L2_PROMOTION
    from tcforge.runtime.tensormap import L2_PROMOTION_128B, L2_PROMOTION_256B

    return L2_PROMOTION_128B if config.swap_ab else L2_PROMOTION_256B


def matmul(
    a: Any,
    b: Any,
    *,
    out_dtype: Any = None,
    scale_a: Any = None,
    scale_b: Any = None,
    variant: str | int = "auto",
) -> Any:
    """C = (scale_a * a) @ (scale_b * b) on an sm_90a GPU; a (M, K) and b (K, N) each row- or column-major.

    fp16 -> fp16/fp32, bf16 -> bf16/fp32, e4m3 -> bf16/fp16/fp32 (a row-major, b column-major, per-tensor float32
    scales). A column-major 16-bit a (a transposed view) is read in place as the kernel's MN-major A operand.
    Any M, N, K >= 1. Operands whose row stride or base is not 16-byte aligned are first copied into a padded buffer
    (a documented slower path); wrong dtypes, shapes, layouts or devices raise TcforgeError saying what to change.
    Where measured faster the launch uses programmatic dependent launch (it may set up while the previous kernel in
    the stream finishes, and reads nothing before that kernel has completed); TCFORGE_PDL=0 turns that off.
    """
    plan = plan_matmul(a, b, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b, variant=variant)
    return run_plan(plan, a, b, scale_a, scale_b)


_cluster_cap: dict[tuple[int, int, int], int] = {}


def persistent_clusters(units: int, sms: int, cm: int, resident: int | None) -> int:
    """Clusters of a persistent launch: one round of resident clusters (the driver's count when known, else SMs/cm),
    never more than there are work units. More clusters than fit at once would run a second, mostly idle round."""
    cap = resident if resident and resident > 0 else sms // cm
    return max(1, min(units, cap, sms // cm))


def resident_clusters(fn: Any, threads: int, smem: int, cm: int, sms: int) -> int | None:
    """Clusters (CTAs when cm == 1) of a kernel that fit at once, from the driver's occupancy queries (cached); None
    when the query fails (then SMs/cm is used, and stream-K is off)."""
    from tcforge.runtime import driver

    key = (fn.handle, smem, cm)
    if key not in _cluster_cap:
        try:
            if cm > 1:
                _cluster_cap[key] = driver.max_active_clusters(fn, (threads, 1, 1), smem, cm)
            else:  # no cluster: resident CTAs per SM times SMs
                per_sm = driver.max_active_blocks_per_sm(fn, threads, smem)
                _cluster_cap[key] = per_sm * sms
        except Exception:  # an old driver or an unsupported query: fall back to SMs / cluster size
            _cluster_cap[key] = 0
    return _cluster_cap[key] or None


_sk_buffers: dict[tuple[int, int], tuple[Any, Any]] = {}


def partial_workspace(device: int, stream: int, flags: int, floats: int) -> tuple[Any, Any]:
    """fp32 partial slots and int32 flags or counters for stream-K and in-kernel split-K, one pair per (device,
    stream), grown on demand. The flags are zero between launches (each launch resets what it used), so the two
    kinds of launch share them. Launches on one stream run in order; two streams get two workspaces. (A CUDA graph
    keeps the workspace of the stream it was captured on.)"""
    import torch

    key = (device, stream)
    have = _sk_buffers.get(key)
    if have is None or have[1].numel() < flags or have[0].numel() < floats:
        nf = max(flags, have[1].numel() if have is not None else 0)
        nw = max(floats, have[0].numel() if have is not None else 0)
        ws = torch.empty(nw, dtype=torch.float32, device=f"cuda:{device}")
        fl = torch.zeros(nf, dtype=torch.int32, device=f"cuda:{device}")
        have = _sk_buffers[key] = (ws, fl)
    return have


def _ceil(x: int, y: int) -> int:
    return -(-x // y)


def _storage(x: Any, copy: bool, k_inner: bool, kp: int, align: int) -> tuple[Any, int]:
    """An operand's 2-D storage (rows of contiguous elements, K along the rows when `k_inner`, else down them) and
    its row stride in elements. With `copy` it is first copied into zeros: K padded to `kp`, an MN-major row to
    `align` elements (TMA's 16-byte strides). A single row gets the padded row length as its stride."""
    import torch

    rows, cols = (int(d) for d in x.shape)
    shape = (rows, kp) if k_inner else (kp, _ceil(cols, align) * align)
    if copy:
        padded = torch.zeros(shape, dtype=x.dtype, device=x.device)
        padded[:rows, :cols] = x
        x = padded
    return x, (x.stride(0) if x.shape[0] > 1 else shape[1])


def torch_dtype(kind: str) -> Any:
    """The torch dtype of a type kind ('fp16', 'bf16', 'fp32', 'e4m3')."""
    import torch

    return {
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "fp32": torch.float32,
        "e4m3": torch.float8_e4m3fn,
    }[kind]


def multiprocessor_count(device: int) -> int:
    """SM count of a device (cached)."""
    if device not in _sms:
        import torch

        _sms[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return _sms[device]


def kernel_for(build: Build, device: int) -> Any:
    """The loaded tcf_gemm function of one build, its dynamic shared memory limit raised (cached per device)."""
    from tcforge.runtime import loader

    key = (build, device)
    with _lock:
        fn = _kernels.get(key)
    if fn is None:
        compiled = build.compile()
        module = loader.load(compiled, device)
        fn = module.function(KERNEL_NAME)
        fn.set_max_dynamic_shared(build.config.smem_bytes())
        fn.reduce = module.function(REDUCE_NAME)
        with _lock:
            _kernels[key] = fn
    return fn


def tma_dtype(kind: str) -> int:
    """The tensor-map element type of a dtype kind (fp8 travels as bytes)."""
    from tcforge.runtime import tensormap as tm

    return {"fp16": tm.DTYPE_FLOAT16, "bf16": tm.DTYPE_BFLOAT16, "e4m3": tm.DTYPE_UINT8, "fp32": tm.DTYPE_FLOAT32}[kind]


def launch_config(variant: Variant, plan: Plan, sms: int) -> tuple[KernelConfig, int]:
    """The kernel config and split count this variant uses for this shape."""
    splits = 1
    if variant.splitk_auto:
        splits = choose_splits(variant.config, plan.m, plan.n, plan.k_padded, plan.in_kind, sms)
    cfg = variant.config if splits == 1 else split_config(variant.config)
    return cfg, splits


SPLIT_MODES = ("auto", "fused", "planes", "pair")


def small_streamk(variant: Variant, plan: Plan, sms: int) -> int:
    """Clusters when stream-K `variant` shares every unit of a launch it would otherwise split over K (as many pieces
    at once as split-K, each >= 4 k-tiles: no fp32 planes, no reduction kernel); 0 when it would not."""
    c = variant.config
    splits = launch_config(variant, plan, sms)[1]
    if not (c.streamk and variant.persistent) or splits == 1:
        return 0
    units = cluster_tiles(c, plan.m, plan.n)
    return choose_streamk_small(units, sms // c.cm, _ceil(plan.k_padded, c.bk(plan.in_kind)), splits)


def refine_auto(plan: Plan, sms: int) -> Plan:
    """`auto` by shape: of rung 9 (128x256 cluster tiles; without the cluster, `tuned`, where those fill one round
    and M >= CM1_MIN_M: 2048^3 4.6-6.3 % faster), the 128x320, 128x192, 128x160, 128x144, 128x128 and 64x192 tiles
    (where they need no split; t320 and t160 in at most two rounds; the 128-row ones above 64 rows: 48x16384x4096
    0.66-0.72x -> 0.95-1.03x of cuBLAS) and the 64x128 tile, the one `estimate_us`
    predicts fastest for the operands' B layout (a tile smaller than rung 9's and t320's must win by TILE_MARGIN);
    then, for M <= SWAP_MAX_M, a swapped tile (sw8 / sw16 / sw32 / sw64, the one fitting M first; at 65-112 rows the
    64-row swapped tile as wide as M, sw80 / sw96 / sw112: 80x4096x4096 bf16 0.61x -> 1.08x of cuBLAS, 96x4096x4096
    fp16->fp32 0.95x -> 1.39x, 80x16384x4096 0.84x -> 0.98x, 104x4096x4096 bf16 0.73x -> 0.86x) wherever it is
    predicted faster still (sw112 at N = 2048-4224 within SW112_NARROW_MARGIN of the best prediction, the others
    then having to beat it by as much, and split over K only where the model predicts the split faster: fp8
    97x4096x2048 1.00x -> 1.18x, 104x4096x4096 0.83x -> 0.96x, 97x4096x2048 bf16 0.77x -> 0.90x), and for fp8 at
    113-128 rows with K >= SW128_FP8_MIN_K sw128 by rule (128x4096x8192 0.90x -> 1.08x); and over any
    of these the fitting width's 128-row 4-CTA-cluster build (sw8c4 / sw16c4 / sw32c4 / sw80c4 / sw96c4; sw64c4 and
    sw128c4 for fp8) where that needs no split and its clusters fill at least
    C4_MIN_FILL of their last round (16x14336x4096: 0.92x -> 0.97x of cuBLAS) or one round at most C4_LOW_FILL of it
    (without PDL; 16x11008x4096 fp8 0.86x -> 1.04x, 32x9216x4096 fp8 0.57x -> 0.88x, 64x11008x4096 fp8 0.70x ->
    1.03x; sw128c4 in that band only; sw80c4 / sw96c4 in any one round: 80x11008x4096 bf16 0.71x -> 0.91x,
    72x12288x4096 0.75x -> 0.98x); for 97-128 rows of a K-major B the 128x96 or 128x80 tile in 4-CTA clusters along
    N (n96c4 / n80c4) where those make one round at least CN_MIN_FILL full and the 64x128 tile would need two
    (128x11008x4096 fp8 0.74x -> 0.89x, 128x9216x4096 fp8 0.80x -> 0.99x against t128 in the same run); and at 33-128
    rows over all of these the 64-row swapped tile as wide as half of M in 2-CTA clusters along M (sw32n2 ... sw64n2)
    where its clusters make one round of 32-66 (N = 2048-4224; by rule from N2_RULE_CLUSTERS, by the model below:
    104x4096x4096 bf16 0.87x -> 0.99x, fp8 1.00x -> 1.11x); at 33-64 rows the 64-column swapped tile over the
    64x128 one where that one's last round is under half full (40-64 x 20480 x 4096 0.75-0.92x -> 0.90-1.07x).
    Rung 9 runs its stream-K build where its last round of tiles is under half full (or, for 16-bit launches of two
    rounds with at least SK_LONG_KTILES k-tiles, at most 3/4 full) and the model predicts >= STREAMK_MIN_GAIN from
    sharing it (5120^3: 0.91x -> 0.97x of cuBLAS; 1792x4096x14336 fp16 9 %). A split launch reduces inside the
    kernel where that pays (prepare_plan). Measured: bench/results/gemm_small*.json (1024^3 0.35x -> 0.85x; 1536^3
    0.61x -> 0.79x and 3072^3 0.91x -> 0.95x with t192, 1536^3 fp8 0.93x -> 1.09x with t144, 512x4096x4096
    0.74-0.81x -> 0.90-0.98x with t128, 1280x4096x4096 0.89x -> 0.92x with t160 and -> 0.97x with t320,
    768x1536x1536 fp16 0.68x -> 0.79x with t64x192; 16x4096x4096 0.78x -> 1.03x and 512^3 0.60x -> 0.90x swapped;
    1024x1024x65536 stays rung 9 with split-K). Rung 9 unsplit runs its spread-epilogue build (hoist_es: each tile
    stored under the next tile's k-tiles, fp32 C half of it). An explicit variant is never changed."""
    from tcforge.gemm.variants import (
        AUTO,
        AUTO_CM1,
        AUTO_DEFER,
        AUTO_SK,
        CM1_MIN_M,
        MID_AUTO,
        N2_RULE_CLUSTERS,
        NARROW160_AUTO,
        NARROW_AUTO,
        NARROW_SWAP_AUTO,
        SK_LONG_KTILES,
        SMALL_AUTO,
        SMALL_M,
        SMALL_SWAP64,
        SMALL_WIDE_AUTO,
        SQUARE_AUTO,
        STREAMK_MIN_GAIN,
        SWAP_MAX_M,
        SWAP_WIDE,
        TILE_MARGIN,
        VARIANTS,
        WIDE_AUTO,
        c4_build,
        cn_build,
        estimate_us,
        n2_build,
        narrower_swap_margin,
        sw128_fp8_build,
        swap_order,
        thin_last_round,
    )

    if not plan.auto:
        return plan
    big, small = VARIANTS[AUTO], VARIANTS[SMALL_AUTO]
    args = (plan.m, plan.n, plan.k_padded, plan.in_kind, sms)
    kw = {"b_kmajor": plan.b_kmajor}  # a tile of partial slabs costs more over an MN-major B
    clusters = sms // big.config.cm
    units = cluster_tiles(big.config, plan.m, plan.n)
    # rung 9's cluster tiles in one round, over half of it (no split): rung 9 without the cluster, whose CTAs do not
    # wait for each other (the pair's multicast pays where tiles run in several rounds at the power cap, or M is small)
    if clusters / 2 < units <= clusters and plan.m >= CM1_MIN_M:
        big = VARIANTS[AUTO_CM1]
    t_big = estimate_us(big, *args, **kw)
    # a thin last round of rung 9's cluster tiles: stream-K shares it (and one round more) over every cluster; so
    # for long-K 16-bit launches of two rounds, the second at most 3/4 full (SK_LONG_KTILES)
    last = units % clusters
    long_k = (plan.in_kind != "e4m3" and clusters < units <= 2 * clusters and last <= 0.75 * clusters
              and _ceil(plan.k_padded, big.config.bk(plan.in_kind)) >= SK_LONG_KTILES)
    if thin_last_round(VARIANTS[AUTO].config, plan.m, plan.n, sms) or long_k:
        t_sk = estimate_us(big, *args, streamk=True, **kw)
        if t_sk <= t_big * (1 - STREAMK_MIN_GAIN):
            big, t_big = VARIANTS[AUTO_SK], t_sk
    # candidates from the largest tile down: a smaller one is taken only if predicted TILE_MARGIN faster. The
    # two-consumer 128x192, 128x160, 128x144 and 128x128 tiles are there to fill rounds without splitting K: their split
    # launches ran 1.3-3 us above the model (t144 at 768x1536x1536, t192 at 384x4096x4096, t128 at
    # 256x4096x4096), so they are weighed only where they need no split; t128 above 64 rows (at most 64 it pads half
    # its rows; at 128x14336x4096 its 112 tiles in one round beat t64's 224 in two: gemm_small_s23_t64cm2_rowb.json)
    # and t64x192 above SMALL_M rows only (below it the 64x128 tile and the swapped ones stream B better); t160 where
    # its tiles fill at most two rounds (in three or more it measured up to 8 % behind rung 9 and stream-K, which the
    # model does not see: gemm_small_s22_t160b_colb.json)
    # t320 moves fewer bytes per flop than every tile but rung 9's pair, so it needs no margin over rung 9; it too is
    # weighed in at most two rounds (in three or more it measured up to 10 % behind rung 9: gemm_small_s23_t320_*.json)
    # (candidate, most rounds of its tiles it is weighed in, rows M must exceed, margin it must win by)
    # the 128-row tiles (t320, t192, t160, t144, t128) above 64 rows only: at 33-64 rows x 16384-20480 the model took
    # t144 / t160, which streamed B at 0.62-0.92x of cuBLAS where t64 and sw64 ran 0.79-1.15x (gemm_small_s33_wide_*)
    # over a row-major 16-bit B the 128x144 tile runs as the swapped product (t144s: B^T its MN-major A operand in
    # whole slabs, a's rows its K-major B), which moves t144's bytes over a column-major B instead of a third slab's;
    # measured where its tiles make one round (1536^3, 1536x1536x6144) — in more (2560^3, 3072x1536^2) its kernels
    # ran 3-14 % behind `auto`'s tiles (gemm_small_s37_t144s.json)
    narrow = ((NARROW_SWAP_AUTO, 1, 64, TILE_MARGIN) if not plan.b_kmajor and plan.in_kind != "e4m3" and plan.a_kmajor
              else (NARROW_AUTO, None, 64, TILE_MARGIN))
    rules = ((WIDE_AUTO, 2, 64, 0.0), (MID_AUTO, None, 64, TILE_MARGIN), (NARROW160_AUTO, 2, 64, TILE_MARGIN),
             narrow, (SQUARE_AUTO, None, 64, TILE_MARGIN), (SMALL_WIDE_AUTO, None, SMALL_M, TILE_MARGIN))
    cands = [(big, t_big, 0.0)]
    for name, rounds, min_rows, margin in rules:
        v = VARIANTS[name]
        if rounds is not None and cluster_tiles(v.config, plan.m, plan.n) > rounds * sms:
            continue
        if plan.m > min_rows and choose_splits(v.config, *args) == 1:
            cands.append((v, estimate_us(v, *args, **kw), margin))
    cands.append((small, estimate_us(small, *args, **kw), TILE_MARGIN))
    best, t_best, _ = cands[0]
    for v, t, margin in cands[1:]:
        if t * (1 + margin) < t_best:
            best, t_best = v, t
    # the swapped product C^T = B^T A^T puts M in the wgmma's N (small M, small launches); it reads a K-major
    if plan.m <= SWAP_MAX_M and plan.a_kmajor:
        t_wide, margin = float("inf"), 0.0
        for name in swap_order(plan.m):
            t = estimate_us(VARIANTS[name], *args, **kw)
            if name in SWAP_WIDE.values():  # weighed first, within its margin of the best: the others must beat
                t_wide, margin = t, narrower_swap_margin(name, plan.m, plan.n, sms)  # it by that margin
                if t < t_best * (1 + margin):
                    best, t_best = VARIANTS[name], t
            elif t < t_best and t * (1 + margin) < t_wide:
                best, t_best = VARIANTS[name], t
        # a long N: the fitting swapped width's 128-row tile in 4-CTA clusters, where those fill their last round
        # (16x14336x4096: 28 clusters on 112 SMs stream B faster than 224 64-row tiles on 132 in 1.7 rounds) or are
        # one round of at most 3/4 of it (16x11008x4096: 22 clusters against 172 64-row tiles in 1.3 rounds)
        # — over whatever the model preferred: where those pay it was measured faster than the 64x128 tile too, which
        # the model ties with it or prefers at N = 9216-10240 (t64 there takes 1.04-1.31x the model's time)
        # 97-128 rows of a K-major B: the 128x96 / 128x80 tile in 4-CTA clusters along N where those make most of one
        # round
        # fp8 at 113-128 rows with a long K and N of 2048-8192: the 64-row swapped tile of 128 columns (the model's one
        # cost per k-tile ties it with t64, which it beats there by 7-17 %)
        # 33-64 rows where the 64x128 tile's tiles spill into a last round under half full (N = 16.9-25.3 K at 132
        # SMs): the 64-column swapped tile, whose tiles fill rounds twice as finely (the model ties the two): 40-64 x
        # 20480 x 4096 3-9 % faster than t64 over a K-major B, 5-14 % over a row-major one (gemm_small_s33_wide_*.json,
        # gemm_small_s33_rowb.json)
        if best is small and 32 < plan.m <= 64 and thin_last_round(small.config, plan.m, plan.n, sms):
            best = VARIANTS[SMALL_SWAP64]
        best = (cn_build(plan.m, plan.n, sms, plan.b_kmajor) or c4_build(*args)
                or sw128_fp8_build(plan.m, plan.n, plan.k_padded, plan.in_kind) or best)
        # 33-128 rows with 32-66 clusters of the n2 tile (N = 2048-4224): it from N2_RULE_CLUSTERS clusters on, below
        # that where the model predicts it faster
        n2 = n2_build(plan.m, plan.n, sms)
        if n2 is not None and (cluster_tiles(n2.config, plan.m, plan.n) >= N2_RULE_CLUSTERS
                               or estimate_us(n2, *args, **kw) < estimate_us(best, *args, **kw)):
            best = n2
    # (t64_sk, sharing a split launch's units by stream-K, was `auto` where t64 split K with M >= 64 until split-K
    # reduced inside the kernel: since then t64 is as fast or faster there, gemm_small_fsk2_*.json)
    # rung 9 unsplit (in more than one round: one round runs `tuned`): its build that stores each tile under the next
    # tile's k-tiles, one sub-tile per k-tile (fp32 C: half of it) — the same bits, 1.0-1.5 % fewer cycles than rung 9
    # / hoist_ed at a locked clock at 4096^3 (gemm_ncu_s35_*.txt), +0.4-1.6 % at the power cap
    # (gemm_energy_s35_es*.json)
    if best.name == AUTO and choose_splits(best.config, *args) == 1:
        best = VARIANTS[AUTO_DEFER]
    return replace(plan, variant=best)


def run_plan(
    plan: Plan,
    a: Any,
    b: Any,
    scale_a: Any = None,
    scale_b: Any = None,
    *,
    splits: int | None = None,
    streamk: tuple[int, int] | None = None,
    split_mode: str = "auto",
) -> Any:
    """Execute a validated plan (padding copies, tensor maps, launch, split-K reduction) and return C."""
    prepared = prepare_plan(plan, a, b, scale_a, scale_b, splits=splits, streamk=streamk, split_mode=split_mode)
    prepared()
    return prepared.result()


class Prepared:
    """A launch with every argument built (buffers, tensor maps): calling it only enqueues the kernel(s)."""

    def __init__(
        self,
        fn: Any,
        grid: tuple[int, int, int],
        threads: int,
        smem: int,
        args: list[Any],
        reduce: tuple[tuple[int, int, int], list[Any]] | None,
        c: Any,
        n: int,
        keep: list[Any],
        sk_units: int = 0,
        poison: list[Any] | None = None,
        splits: int = 1,
        pdl: bool = False,
    ) -> None:
        self.fn, self.grid, self.threads, self.smem, self.args = fn, grid, threads, smem, args
        self.reduce, self.c, self.n, self.keep = reduce, c, n, keep
        self.sk_units = sk_units  # units shared by stream-K in this launch (0: none)
        self.splits = splits  # K splits of each tile (1: none)
        self.poison = poison or []  # buffers filled with NaN before each launch when POISON_OUTPUT is set
        self.pdl = pdl  # the GEMM launch may overlap the previous kernel's tail (PDL; prepare_plan: pdl_pays)

    def __call__(self) -> None:
        """Enqueue on the current torch stream (graph capture works)."""
        import torch

        from tcforge.runtime import driver

        if POISON_OUTPUT:
            for t in self.poison:
                t.fill_(float("nan"))
        stream = torch.cuda.current_stream().cuda_stream
        driver.launch(self.fn, self.grid, (self.threads, 1, 1), self.args, shared_bytes=self.smem, stream=stream,
                      pdl=self.pdl, cluster_policy=CLUSTER_POLICY)
        if self.reduce is not None:
            driver.launch(self.fn.reduce, self.reduce[0], (256, 1, 1), self.reduce[1], stream=stream)

    def result(self) -> Any:
        """C (a contiguous (M, N) tensor)."""
        return self.c if self.c.shape[1] == self.n else self.c[:, : self.n].contiguous()


def prepare_plan(
    plan: Plan,
    a: Any,
    b: Any,
    scale_a: Any = None,
    scale_b: Any = None,
    *,
    splits: int | None = None,
    streamk: tuple[int, int] | None = None,
    split_mode: str = "auto",
    timeline: Any = None,
) -> Prepared:
    """Build buffers, tensor maps and kernel arguments for a validated plan (no launch). `splits` forces a split-K
    factor, `streamk=(clusters, sk_units)` a stream-K grid and share (tests: both roles on small shapes). A split
    launch of a TMA variant reduces inside the kernel ("fused") or through fp32 planes and tcf_splitk_reduce
    ("planes"), the same bits either way; two splits of a swapped tile run as 2-CTA clusters whose split 1 sends its
    partial into split 0's shared memory ("pair", the same bits again). `split_mode="auto"` takes the pair where
    there is one, else the one `fused_split_pays` predicts faster. A diagnostic build with `config.timeline` writes
    its per-CTA stamps into `timeline` (an int64 CUDA tensor of >= grid x TIMELINE_SLOTS entries;
    bench/gemm_timeline.py)."""
    if split_mode not in SPLIT_MODES:
        raise TcforgeError(f"split_mode must be one of {', '.join(SPLIT_MODES)}, got {split_mode!r}")
    import torch

    from tcforge.runtime import tensormap as tm

    m, n, kp = plan.m, plan.n, plan.k_padded
    ib, ob = IN_BYTES[plan.in_kind], OUT_BYTES[plan.out_kind]
    align = 16 // ib
    dev = plan.device_index
    with torch.cuda.device(dev):
        sms = multiprocessor_count(dev)
        if splits is None and streamk is None:
            plan = refine_auto(plan, sms)
        cfg, nsplit = launch_config(plan.variant, plan, sms)
        if splits is not None:  # forced (tests)
            nsplit = splits
            cfg = plan.variant.config if splits == 1 else split_config(plan.variant.config)
        # a stream-K variant shares all of a small launch's units instead of splitting K
        small_sk = small_streamk(plan.variant, plan, sms) if splits is None and streamk is None else 0
        if small_sk:
            cfg, nsplit = plan.variant.config, 1
        # each operand's 2-D storage as TMA reads it: a (M, K) or, column-major, a.t() (K, M) — the MN-major A; b
        # (K, N) row-major (MN-major) or, column-major, b.t() (N, K)
        a2, lda = _storage(a if plan.a_kmajor else a.t(), plan.copy_a, plan.a_kmajor, kp, align)
        b2, ldb = _storage(b.t() if plan.b_kmajor else b, plan.copy_b, plan.b_kmajor, kp, align)
        oc = 16 // ob
        ldc = -(-n // oc) * oc
        c = torch.empty((m, ldc), dtype=torch_dtype(plan.out_kind), device=a.device)
        # two splits of a swapped tile: a 2-CTA cluster whose split 1 moves its partial into split 0 through DSMEM
        pair = pair_config(plan.variant.config) if cfg.splitk_fused and nsplit == 2 else None
        if split_mode == "pair" and pair is None:
            raise TcforgeError(f"split_mode='pair' needs a swapped tile split exactly 2 ways, not {plan.variant.name} "
                               f"with {nsplit} split(s)")
        if pair is not None and split_mode in ("auto", "pair"):
            cfg = pair
        fused = cfg.splitk_fused and nsplit > 1 and (
            split_mode in ("fused", "pair") or (split_mode == "auto" and (cfg.split_pair or
                                                                          fused_split_pays(cfg, m, n, nsplit))))
        planes = nsplit > 1 and not fused  # one fp32 plane of C per split, summed by tcf_splitk_reduce
        target = c
        if planes:
            target = torch.empty((nsplit, m, ldc), dtype=torch.float32, device=a.device)

        build = Build(cfg, plan.in_kind, plan.out_kind, plan.b_kmajor, plan.a_kmajor)
        fn = kernel_for(build, dev)
        bk = cfg.bk(plan.in_kind)
        # the kernel's operands: (A, B) = (a, b); the swapped product C^T = B^T A^T takes B^T as its A (K-major from
        # column-major b, MN-major from row-major b) and A^T (a's K-major rows) as its K-major B, over (M, N) = (n, m)
        km, kn = kernel_dims(cfg, m, n)
        ka_ptr, k_lda, kb_ptr, k_ldb = a2.data_ptr(), lda, b2.data_ptr(), ldb
        if cfg.swap_ab:
            ka_ptr, k_lda, kb_ptr, k_ldb = kb_ptr, k_ldb, ka_ptr, k_lda
        if cfg.use_tma:
            dt = tma_dtype(plan.in_kind)
            promo = l2_promotion(cfg)
            if (cfg.swap_ab and not plan.b_kmajor) or not plan.a_kmajor:
                # an MN-major A (B^T from row-major B, or a column-major a): 64-column slabs, as an MN-major B loads
                map_a = tm.encode_tiled(dt, ib, ka_ptr, [km, kp], [k_lda * ib], [64, cfg.a_mn_box_k(plan.in_kind)],
                                        swizzle=128, l2_promotion=promo)
            else:
                # a cluster along N: each CTA loads its BM/CM share of the row band (and multicasts it)
                map_a = tm.encode_tiled(dt, ib, ka_ptr, [kp, km], [k_lda * ib], [bk, cfg.a_box_rows],
                                        swizzle=cfg.bk_bytes, l2_promotion=promo)
            if plan.b_kmajor or cfg.swap_ab:
                box_b = [bk, cfg.b_box_rows]
                map_b = tm.encode_tiled(dt, ib, kb_ptr, [kp, kn], [k_ldb * ib], box_b, swizzle=cfg.bk_bytes,
                                        l2_promotion=promo)
            else:
                map_b = tm.encode_tiled(dt, ib, kb_ptr, [kn, kp], [k_ldb * ib], [64, bk], swizzle=128,
                                        l2_promotion=promo)
        else:
            map_a = map_b = tm.TensorMap.zeros()
        if cfg.tma_store and not cfg.splitk:
            # a staged sub-tile: 128 bytes of a C row by the warpgroup's rows (swapped: by the tile's BN rows of C)
            box_c = [128 // ob, cfg.bn if cfg.swap_ab else 16]  # one warp's 16 rows per store (kernel: epilogue_tma)
            map_c = tm.encode_tiled(tma_dtype(plan.out_kind), ob, c.data_ptr(), [n, m], [ldc * ob], box_c, swizzle=128)
        else:
            map_c = tm.TensorMap.zeros()
        sa = ctypes.c_void_p(scale_a.data_ptr() if scale_a is not None else None)
        sb = ctypes.c_void_p(scale_b.data_ptr() if scale_b is not None else None)
        units = cluster_tiles(cfg, m, n) * nsplit
        num_kt = _ceil(kp, bk)
        sk_units = 0
        resident = None
        if plan.variant.persistent:
            # clusters of 4+ are sized by the driver (a GPC holds fewer of them than SMs / 4); pairs keep SMs / 2, the
            # grid every measured ladder figure used. Stream-K owners wait for other clusters' partials, so every
            # cluster must be resident: the driver's count is required there (no count, no stream-K).
            if cfg.cm >= 4 or cfg.streamk:
                resident = resident_clusters(fn, cfg.threads, cfg.smem_bytes(), cfg.cm, sms)
            clusters = persistent_clusters(units, sms, cfg.cm, resident)
            if small_sk and not resident:  # no residency count: stream-K is off, split K as the variant would
                return prepare_plan(plan, a, b, scale_a, scale_b, splits=launch_config(plan.variant, plan, sms)[1],
                                    split_mode=split_mode)
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
        if streamk is not None and cfg.streamk:  # forced (tests)
            clusters, sk_units = streamk
            if not (clusters >= 1 and 0 <= sk_units <= units and fits_int32(clusters, sk_units, num_kt)):
                raise TcforgeError(f"forced stream-K needs clusters >= 1, 0 <= sk_units <= {units}, a 32-bit schedule")
        sk_ws = sk_flags = None
        if cfg.timeline:  # the stamps go where an unsplit launch's (unused) split workspace pointer points
            if timeline is None or timeline.dtype != torch.int64 or not timeline.is_cuda:
                raise TcforgeError(f"{plan.variant.name} is a timeline build: pass timeline=<int64 CUDA tensor>")
            ctas = clusters * cfg.cm
            if timeline.numel() < ctas * TIMELINE_SLOTS:
                raise TcforgeError(f"timeline holds {timeline.numel()} stamps, the launch writes "
                                   f"{ctas * TIMELINE_SLOTS} ({ctas} CTAs x {TIMELINE_SLOTS})")
            sk_ws = timeline
        elif timeline is not None:
            raise TcforgeError(f"timeline= is for a timeline build (config.timeline), not {plan.variant.name}")
        slot_floats = cfg.slot_floats
        stream = torch.cuda.current_stream().cuda_stream
        if sk_units:  # a slot and a flag per (cluster, CTA, consumer warpgroup)
            slots = clusters * cfg.cm * cfg.nc
            sk_ws, sk_flags = partial_workspace(dev, stream, slots, slots * slot_floats)
        elif planes and cfg.splitk_fused:  # the in-kernel split-K build writes its planes into sk_ws
            sk_ws = target
        elif fused and cfg.split_pair:  # no workspace: a non-null flag pointer selects the in-kernel reduction
            sk_ws, sk_flags = partial_workspace(dev, stream, 1, 4)
        elif fused:  # a counter per tile slice, a slot per slice and split
            slices = cluster_tiles(cfg, m, n) * cfg.cm * (1 if cfg.pingpong else cfg.nc)
            sk_ws, sk_flags = partial_workspace(dev, stream, slices, slices * nsplit * slot_floats)
        args = [
            map_a,
            map_b,
            map_c,
            ctypes.c_void_p(ka_ptr),
            ctypes.c_void_p(kb_ptr),
            ctypes.c_void_p((c if cfg.splitk_fused else target).data_ptr()),
            ctypes.c_int(km),
            ctypes.c_int(kn),
            ctypes.c_int(kp),
            ctypes.c_longlong(k_lda),
            ctypes.c_longlong(k_ldb),
            ctypes.c_longlong(ldc),
            sa,
            sb,
            ctypes.c_int(nsplit),
            ctypes.c_int(plan.variant.group_m),
            ctypes.c_void_p(sk_ws.data_ptr() if sk_ws is not None else None),
            ctypes.c_void_p(sk_flags.data_ptr() if sk_flags is not None else None),
            ctypes.c_int(sk_units),
        ]
        grid = (clusters * cfg.cm, 1, 1)
        reduce = None
        if planes:
            total = m * ldc
            rgrid = max(1, min(_ceil(total, 256), sms * 8))
            rargs = [
                ctypes.c_void_p(target.data_ptr()),
                ctypes.c_void_p(c.data_ptr()),
                ctypes.c_int(m),
                ctypes.c_int(n),
                ctypes.c_longlong(ldc),
                ctypes.c_int(nsplit),
                sa,
                sb,
                ctypes.c_int(OUT_KINDS[plan.out_kind]),
            ]
            reduce = ((rgrid, 1, 1), rargs)
        keep = [c, target, a2, b2, scale_a, scale_b, sk_flags, sk_ws]
        # C, the split-K planes and the stream-K partial slots: anything a launch must write before it is read
        poison = [c] + ([target] if target is not c else []) + ([sk_ws] if sk_units or fused else [])
        # a swapped launch's PDL depends on how much of one round of resident clusters it fills (pdl_pays, which
        # weighs that per cluster size): 4-CTA clusters by the driver's count, the others SMs / cluster size
        c4_round = (resident or c4_resident(sms)) if plan.variant.persistent else 0
        in_round = c4_round if cfg.cm >= 4 else sms // cfg.cm
        pdl = PDL and pdl_pays(cfg, plan.in_kind, units, clusters, num_kt, nsplit, in_round)
        return Prepared(
            fn, grid, cfg.threads, cfg.smem_bytes(), args, reduce, c, n, keep, sk_units, poison, nsplit, pdl
        )
