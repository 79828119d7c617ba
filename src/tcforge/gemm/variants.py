"""The ladder: each rung of the Hopper GEMM as a named, kept-in-code variant (pure Python, no CUDA needed).

A rung is a `KernelConfig` (the compile-time options of kernels/gemm_sm90.cu) plus launch policy (persistent grid,
tile order, split-K). Rungs are cumulative, as in the write-up: each adds one change to the one before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcforge.errors import TcforgeError

IN_KINDS = {"fp16": 0, "bf16": 1, "e4m3": 2}
OUT_KINDS = {"fp32": 0, "fp16": 1, "bf16": 2}
IN_BYTES = {"fp16": 2, "bf16": 2, "e4m3": 1}
OUT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
# (input, output) pairs the engine supports; the first of each input is its default output
SUPPORTED = {
    "fp16": ("fp16", "fp32"),
    "bf16": ("bf16", "fp32"),
    "e4m3": ("bf16", "fp16", "fp32"),
}
LADDER_COMBOS = [
    ("fp16", "fp32"),
    ("bf16", "bf16"),
    ("fp16", "fp16"),
    ("e4m3", "bf16"),
    ("e4m3", "fp16"),
    ("e4m3", "fp32"),
]
MAX_SMEM = 232448  # 227 KB per block on sm_90


@dataclass(frozen=True)
class KernelConfig:
    """Compile-time options of gemm_sm90.cu (one cubin per config x dtypes x B layout)."""

    use_tma: bool = True
    bm: int = 128
    bn: int = 256
    bk_bytes: int = 128  # bytes of K per stage row: 64 -> BK 32 (16-bit), 128 -> BK 64 (16-bit) / 128 (fp8)
    stages: int = 4
    nc: int = 2  # consumer warpgroups
    setmaxnreg: bool = True
    cm: int = 1  # CTAs per cluster along M (B multicast)
    cluster_n: bool = False  # the cm CTAs run along N instead (one row band, cm column tiles) and multicast A
    # in a cluster, the producer thread of the operand this CTA alone reads (B along N, A along M) waits for this CTA's
    # consumers only, not every CTA's (LOCAL_EMPTY): n80c4 / n96c4, 1-3 % faster (gemm_small_s31_le.json)
    local_empty: bool = False
    tma_store: bool = False
    splitk: bool = False
    hoist: bool = False
    pingpong: bool = False  # consumers own alternate whole tiles (needs a persistent grid)
    relaxed: bool = False  # release ring slots with a relaxed arrive (no MEMBAR)
    epi_bufs: int = 2  # staged epilogue: 8 KB staging buffers per consumer warpgroup (BN/EPI_N = a whole tile)
    producer_regs: int = 40  # setmaxnreg target of the producer warpgroup
    consumer_regs: int = 232  # setmaxnreg target of each consumer warpgroup
    promote: bool = False  # fp8: per stage, partial sums of each N half added into fp32 totals (no effect on 16-bit)
    # 16-bit C of unsplit tiles: a tile's accumulators packed to 16 bits, staged and stored under the next tile's
    # first wgmmas (fp32-output builds of such a variant are plain builds, unless epi_spread)
    epi_defer: bool = False
    # with epi_defer: the held sub-tiles staged one per k-tile of the next tile (EPI_SPREAD), not all under its first;
    # fp32 C then defers too (its first half staged at the tile's end, the second held in registers)
    epi_spread: bool = False
    streamk: bool = False  # the units past the last full wave shared k-tile by k-tile (persistent TMA builds)
    streamk_trace: bool = False  # diagnostics only: per-warpgroup %globaltimer stamps (bench/gemm_streamk_trace.py)
    timeline: bool = False  # diagnostics only: per-CTA %globaltimer stamps (bench/gemm_timeline.py; TIMELINE)
    swap_ab: bool = False  # C^T = B^T A^T: the tile's rows run over N, its BN columns over M (small M)
    splitk_fused: bool = False  # split-K inside the kernel: the last split of a tile adds the partials and stores it
    split_pair: bool = False  # with splitk_fused, 2 splits: a tile's two CTAs in a cluster, the partial sent by DSMEM
    # diagnostics only (bench/gemm_bound.py; C is not computed, never reachable through matmul): bit 1 no loads after
    # each CTA's first ring fill, bit 2 no epilogue stores, bit 4 no wgmma
    diag: int = 0

    def bk(self, in_kind: str) -> int:
        """K elements per stage for an input type."""
        return self.bk_bytes // IN_BYTES[in_kind]

    @property
    def threads(self) -> int:
        """Threads per CTA: a producer warpgroup (TMA path) plus the consumer warpgroups."""
        return 128 * (self.nc + 1) if self.use_tma else 128 * self.nc

    @property
    def wg_rows(self) -> int:
        """Rows of C one consumer warpgroup computes per tile."""
        return self.bm if self.pingpong else self.bm // self.nc

    @property
    def slot_floats(self) -> int:
        """One consumer warpgroup's fp32 accumulators (SK_SLOT in the kernel): a stream-K / split-K partial slot."""
        return 128 * (self.wg_rows // 64) * (self.bn // 2)

    @property
    def b_rows(self) -> int:
        """B's rows of K-major bytes per ring stage: BN, rounded up to whole 64-column slabs when BN is not a
        multiple of 64 (B_SLABS in the kernel: an MN-major B loads whole slabs; the K-major build of such a tile
        keeps the same reservation, a few KB it does not use)."""
        return self.bn if self.swap_ab or self.bn % 64 == 0 else -(-self.bn // 64) * 64

    @property
    def b_box_rows(self) -> int:
        """Rows of one TMA box of a K-major B (B_BOX in the kernel): this CTA's BN/CM rows, in two boxes where they
        are more than a box may hold (256)."""
        rows = self.bn // self.b_multicast
        return rows // 2 if rows > 256 else rows

    @property
    def b_multicast(self) -> int:
        """CTAs each B tile is multicast to (B_MC in the kernel): the cluster along M, none along N."""
        return 1 if self.cluster_n else self.cm

    def a_mn_box_k(self, in_kind: str) -> int:
        """K rows of one TMA box of an MN-major A slab: BK, or this CTA's BK/CM share in a cluster along N."""
        return self.bk(in_kind) // self.cm if self.cluster_n else self.bk(in_kind)

    @property
    def a_box_rows(self) -> int:
        """Rows of one TMA box of a K-major A: the tile's BM, or this CTA's BM/CM share in a cluster along N."""
        return self.bm // self.cm if self.cluster_n else self.bm

    def smem_bytes(self) -> int:
        """Dynamic shared memory, mirroring SMEM_BYTES in the kernel source (at least it: see b_rows)."""
        ring = self.stages * (self.bm + self.b_rows) * self.bk_bytes
        # EPI_BUF: a warpgroup's rows of 128 bytes; BN rows for a swapped tile wider than them (it stages C^T)
        buf_rows = self.bn if self.swap_ab and self.bn > self.wg_rows else self.wg_rows
        epi = self.nc * self.epi_bufs * buf_rows * 128 if (self.tma_store and not self.splitk) else 0
        pair = self.nc * (self.slot_floats * 4 + 16) if self.split_pair else 0  # receive slots + their two mbarriers
        return ring + epi + pair + (3 if self.local_empty else 2) * self.stages * 8 + 1024

    def smem_total(self) -> int:
        """Dynamic plus static shared memory (the in-kernel split-K's per-warpgroup "last" flags): what must fit."""
        return self.smem_bytes() + (16 if self.splitk_fused else 0)

    def check(self) -> None:
        """Refuse configurations the kernel cannot build (the static_asserts, in Python words)."""
        rows = self.wg_rows
        if rows % 64 or (rows // 64) * self.bn // 2 > 160:
            raise TcforgeError(f"{self}: each consumer warpgroup needs a multiple of 64 rows and <= 160 accumulators")
        if self.bn % 8 or not 8 <= self.bn <= 320:
            raise TcforgeError(f"{self}: BN must be a multiple of 8 up to 320 (over 256: two wgmmas per m64 block)")
        if self.bn % 64 and not self.swap_ab and (self.b_multicast > 1 or not self.use_tma):
            raise TcforgeError(f"{self}: a BN of partial 64-column slabs needs the TMA path and no multicast of B")
        # (an MN-major A is 16-bit: BK = bk_bytes / 2 k-rows per slab, shared between the cluster's CTAs)
        if self.cluster_n and (self.cm < 2 or self.bm % (8 * self.cm) or (self.bk_bytes // 2) % (8 * self.cm)
                               or self.splitk or self.streamk or self.splitk_fused):
            raise TcforgeError(f"{self}: a cluster along N needs >= 2 CTAs sharing A in whole 8-row groups (of BM "
                               "rows; of an MN-major A's BK k-rows), and no split-K or stream-K")
        if self.bk_bytes not in (64, 128):
            raise TcforgeError(f"{self}: bk_bytes must be 64 or 128")
        if self.smem_total() > MAX_SMEM:
            raise TcforgeError(f"{self}: needs {self.smem_total()} B of shared memory (> {MAX_SMEM})")
        if (self.cm > 1 or self.tma_store or self.hoist) and not self.use_tma:
            raise TcforgeError(f"{self}: clusters, the staged epilogue and hoisted descriptors need the TMA path")
        if self.local_empty and (self.cm < 2 or not self.hoist or self.split_pair or self.swap_ab):
            raise TcforgeError(f"{self}: a local empty barrier is for (non-swapped, non-pair) cluster builds with two "
                               "producer threads (hoist)")
        if not 2 <= self.epi_bufs <= 8:
            raise TcforgeError(f"{self}: epi_bufs must be 2..8")
        regs = self.producer_regs * 128 + self.consumer_regs * 128 * self.nc
        pr, cr = self.producer_regs, self.consumer_regs
        if pr % 8 or cr % 8 or not 24 <= pr <= cr <= 256:
            raise TcforgeError(f"{self}: setmaxnreg targets must be multiples of 8 in 24..256, producer <= consumer")
        # setmaxnreg moves registers within what the CTA was launched with (its per-thread count, at most 65536 /
        # threads rounded down to 8, times its threads); asking for more makes setmaxnreg.inc wait forever (a hang)
        pool = min(255, 65536 // self.threads) // 8 * 8 * self.threads
        if self.setmaxnreg and regs > pool:
            raise TcforgeError(f"{self}: setmaxnreg targets need {regs} registers, the CTA holds {pool} "
                               f"({self.threads} threads): lower a target")
        if not 0 <= self.diag <= 7:
            raise TcforgeError(f"{self}: diag is a 3-bit mask (1 no loads, 2 no stores, 4 no wgmma)")
        if self.diag and (not self.use_tma or self.splitk or self.streamk or self.splitk_fused or self.promote
                          or self.pingpong):
            raise TcforgeError(f"{self}: the diagnostic builds are unsplit TMA builds without stream-K, promotion or "
                               "ping-pong")
        if self.streamk_trace and not self.streamk:
            raise TcforgeError(f"{self}: the stream-K trace needs a stream-K build")
        if self.timeline and (not self.use_tma or self.splitk or self.splitk_fused or self.streamk or self.promote
                              or self.pingpong or self.diag or self.nc > 3):
            raise TcforgeError(f"{self}: the timeline is for unsplit TMA builds without stream-K, promotion, ping-pong "
                               "or diagnostics, with at most three consumer warpgroups (its stamps use the split "
                               "workspace's pointer)")
        if self.streamk and (not self.use_tma or self.pingpong or self.splitk or self.promote):
            raise TcforgeError(f"{self}: stream-K needs the TMA path, no ping-pong, no split-K build, no promotion")
        if self.splitk_fused and (not self.use_tma or self.splitk or self.streamk):
            raise TcforgeError(f"{self}: in-kernel split-K needs the TMA path and neither the planes nor stream-K")
        if self.split_pair and (not self.splitk_fused or self.cm != 1 or self.pingpong):
            raise TcforgeError(f"{self}: pair split-K needs an in-kernel split-K build without a cluster or ping-pong")
        if self.swap_ab and (not self.use_tma or self.pingpong or rows != 64 or self.bn > 160):
            raise TcforgeError(f"{self}: the swapped product needs the TMA path, no ping-pong, one 64-row block per "
                               "consumer warpgroup and BN a multiple of 8 up to 160")
        if self.epi_defer and (not self.tma_store or self.splitk or self.streamk or self.splitk_fused or self.pingpong
                               or self.swap_ab or self.promote or rows != 64 or self.bn % 64 or self.diag):
            raise TcforgeError(f"{self}: the deferred epilogue needs the staged epilogue of unsplit tiles, one m64 "
                               "block per consumer warpgroup, whole sub-tiles, no stream-K, ping-pong, swap or "
                               "promotion")
        if self.epi_spread and not self.epi_defer:
            raise TcforgeError(f"{self}: a spread epilogue is a deferred one (epi_defer)")
        if self.promote and (rows != 64 or self.pingpong or self.bn % 16):
            raise TcforgeError(f"{self}: promotion needs one m64 block per consumer warpgroup, no ping-pong, "
                               "BN % 16 == 0")


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
# experiments around rung 7 (persistent): no cluster; a 256x128 tile (each consumer owns 128 rows x 128 columns)
SWEEP += [
    Variant("persist_cm1", 7, "rung 7 without the cluster", replace(_R6, cm=1), True, 8),
    Variant("bm256_bn128", 7, "rung 7 with 256x128 tiles, 3 stages", replace(_R6, bm=256, bn=128, stages=3), True, 8),
    # the measured best: rung 9 without the cluster (see docs/gemm.md, rung 4)
    Variant(
        "pingpong",
        7,
        "persistent ping-pong: 128x128 tile per consumer warpgroup, 5 stages",
        replace(_R6, cm=1, bn=128, stages=5, pingpong=True),
        True,
        8,
    ),
    Variant(
        "pingpong_cm2",
        7,
        "ping-pong with the 2-CTA cluster",
        replace(_R6, cm=2, bn=128, stages=5, pingpong=True),
        True,
        8,
    ),
    Variant(
        "tuned_pp",
        9,
        "ping-pong + split-K + hoisted descriptors",
        replace(_R9, cm=1, bn=128, stages=5, pingpong=True, relaxed=True),
        True,
        8,
        True,
    ),
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
# the deferred epilogue spread over the next tile's k-tiles, one sub-tile each (no k-tile waits for the write burst of
# every SM finishing a tile at once), and for fp32 C too: half its sub-tiles staged at the tile's end, half held in
# the registers a 16-bit tile packs into. `auto` wherever it would run rung 9 unsplit: at 4096^3 1.0-1.5 %
# fewer cycles than hoist_ed / rung 9 at a locked clock, 0.5-0.6 % fewer than cuBLAS's kernel (gemm_ncu_s35_*.txt),
# +0.4-1.6 % at the power cap (gemm_energy_s35_*.json; docs/gemm.md, "A spread epilogue").
# Also measured, not kept (gemm_energy_s35_es*.json, gemm_ncu_s35_hoist_es5.txt): 4 staging buffers and 3 ring stages
# (fp32's first half never waits: 0.5-1 % slower than hoist_es at the cap), fp32 C holding 5 of its 8 sub-tiles
# (the most that does not spill; the same cycles as 4)
# Also measured at 4096^3, not kept (docs/gemm.md, "Where fp32 C's cycles go"; gemm_ncu_s36_cycles.txt,
# gemm_energy_s36_*.json): the held sub-tiles stored from registers with st.global instead of staged (EPI_DIRECT,
# code in commit 5ad5dd0; hoist_esd, and hoist_esd2 with fp32's first half too) — bit-identical; at a locked clock
# fp32 C level with hoist_es (0.994-1.005x cuBLAS's cycles), 16-bit C 7 % more cycles (half-sector stores); at the cap
# 1.4-1.7 % / 5.8 % / 10 % slower than hoist_es (fp32 / bf16 / fp8); 32-byte-deep stages (6 with 4 staging buffers,
# or 8) 0.4-1.4 % more cycles, 1.2-2.3 % slower at the cap
# Measured in the nineteenth session of 2026-12-02, not kept (docs/gemm.md, "Fewer fences, an early first half, and the
# epilogue-free bound"): paired staging, two sub-tiles per shared-memory fence (EPI_PAIR, spec hoist_es@epi_pair=true,
# code in commit ce2ec57) — bit-identical, 0.7-1.2 % more cycles than hoist_es at a locked clock
# (gemm_ncu_s37_pair.txt), 0.6-1.4 % slower at the cap; the last k-tile as two N halves, the first half's epilogue
# under the second's wgmmas (EPI_EARLY, spec hoist_es@epi_early=true, code in commit 2a0aac3) — bit-identical,
# sanitizer-clean, fp32 C 0.3-0.4 % fewer cycles, 16-bit C 0.5 % more (gemm_ncu_s37_early.txt), at the cap 0.1 % /
# 0.6 % / 1.1 % slower than hoist_es (fp32 / bf16 / fp8; gemm_energy_s37_early.json)
SWEEP += [
    Variant("hoist_es", 9, "rung 9 + spread deferred epilogue (one sub-tile per k-tile of the next tile; fp32 C half "
            "deferred)", replace(_R9, epi_defer=True, epi_spread=True), True, 8),
]

# small M: a 64-row tile (one consumer warpgroup), no cluster, split-K when the tiles leave SMs idle
SWEEP.append(
    Variant(
        "bm64",
        9,
        "64x256 tile, one consumer warpgroup, 5 stages, persistent + split-K + hoisted (for M <= 64)",
        KernelConfig(bm=64, bn=256, bk_bytes=128, stages=5, nc=1, setmaxnreg=False, cm=1, tma_store=True, hoist=True),
        True,
        8,
        True,
    )
)
# setmaxnreg 24 or 32 for the producer (the published 24/240 split) makes its branch spill 4-76 bytes: not kept.
# after rung 9 (each measured no faster than it: docs/gemm.md): the staged epilogue's stores never wait inside a
# tile (4 buffers per consumer warpgroup: a whole 16-bit tile, half an fp32 one), paid for with one ring stage
_E4 = replace(_R9, stages=3, epi_bufs=4)
SWEEP += [
    Variant(
        "epi4",
        9,
        "rung 9, 3 stages, 4 epilogue buffers per consumer (stores do not wait in a tile)",
        _E4,
        True,
        8,
        True,
    ),
    Variant(
        "epi4_cm1", 9, "epi4 without the cluster, relaxed release", replace(_E4, cm=1, relaxed=True), True, 8, True
    ),
    # a whole fp32 tile staged (128 KB): the ring shrinks to 4 stages of 64-byte K rows (rung 5's BK)
    Variant(
        "epi8_bk32",
        9,
        "rung 9 with BK=32, 4 stages, 8 epilogue buffers (a whole fp32 tile)",
        replace(_R9, bk_bytes=64, stages=4, epi_bufs=8),
        True,
        8,
        True,
    ),
]
# the H200 runs these GEMMs at its 700 W limit (SM clock 1.3-1.5 GHz, not 1.98: docs/gemm.md "after rung 9"), so
# fewer bytes moved might buy clock: a 4-CTA cluster quarters each CTA's B traffic from L2 (measured 0.72x: 33
# clusters of 4 do not all fit in the GPCs at once, the persistent grid runs in two rounds); a 16-cluster-row raster
# keeps all of A (4096 rows) in L2 so B is read from HBM once instead of twice (measured: no change)
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
# Also measured (commit 72f4e5a, gemm_small_s24_prom.json / gemm_energy_s24_prom.json; bit-identical to cuBLAS's
# promoted output), not kept: the halves with each stage's A fragments loaded into registers once (ldmatrix) and
# read by both halves' wgmmas, so A leaves shared memory once per stage (6-8 % slower than promote at 1560 MHz
# against 1470-1500: stalls, not energy); and cuBLAS's promoted tile, 128x128 in a 2-CTA cluster with 6 stages,
# with two alternating partial sets so a stage's wgmmas run while the one before is added (16-20 % slower; per
# SM cycle 0.59 TFLOP/s per MHz against cuBLAS's 0.78 on the same tile)

# stream-K for the last wave (the write-up's "what is left"): at 4096^3 the 256 cluster tiles fill 3.88 rounds of
# the 66 clusters; the last 58 tiles' k-tiles are shared evenly instead, so every cluster ends at the same time
SWEEP += [
    # the producer's stream-K walk needs 48 registers in the 2-CTA build (40 spills 8 bytes), so the consumers get
    # 224 (48 + 2 x 232 is more than the 384 x 168 registers the CTA holds: setmaxnreg.inc would wait forever)
    Variant("streamk", 9, "rung 9 + stream-K for the units past the last full wave",
            replace(_R9, streamk=True, producer_regs=48, consumer_regs=224), True, 8, True),
    Variant("streamk_cm1", 9, "stream-K without the cluster, relaxed release (as `tuned`)",
            replace(_R9, cm=1, relaxed=True, streamk=True), True, 8, True),
]

_T64 = KernelConfig(bm=64, bn=128, bk_bytes=128, stages=8, nc=1, setmaxnreg=False, cm=1, tma_store=True, hoist=True)
_T128 = KernelConfig(bm=128, bn=128, bk_bytes=128, stages=5, nc=2, cm=1, tma_store=True, hoist=True)
# small problems (512^3, 1024^3, small M): rung 9's 128x256 cluster tiles leave most SMs idle or split K into a
# second kernel; smaller tiles spread the same work over more SMs in one launch (no cluster: a pair would halve it)
SWEEP += [
    Variant(
        "t128",
        9,
        "128x128 tile, two consumer warpgroups (64x128 each), no cluster, 5 stages, persistent + split-K + hoisted",
        _T128,
        True,
        8,
        True,
    ),
    Variant(
        "t64",
        9,
        "64x128 tile, one consumer warpgroup, no cluster, 8 stages, persistent + split-K + hoisted",
        _T64,
        True,
        8,
        True,
    ),
    Variant("t64_sk", 9, "t64 + stream-K (a launch t64 would split over K shares its units instead)",
            replace(_T64, streamk=True), True, 8, True),
]
# Also measured at 128-1024 rows (gemm_small_s23_t64cm2_*.json), not kept: t64 in 2-CTA clusters along M sharing B
# by multicast, as cuBLAS runs its 64x128 tiles at 256x4096x4096 — slower than t64 at 35 of 40 points (up to 21 %),
# as rung 9's pair is in one round
# a wider 64-row tile, one consumer warpgroup: where 64x128 tiles overflow one round and 128-row ones leave SMs idle
# (768x1536x1536: t64 144 tiles, t128 72, 64x192 96), 6 stages of 32 KB. Measured 5-23 % faster than t128 at
# 384-1024 rows x 1536-4096 (gemm_small_s23_t64w_*.json; in a second run 4 % slower at 384x4096x4096 fp16). Also
# measured there, not kept: 64x160 (three slabs of a row-major B for 160 columns; slower than 64x192 or t64 at every
# point but one, by up to 84 %)
SWEEP.append(
    Variant("t64x192", 9, "64x192 tile, one consumer warpgroup, no cluster, 6 stages, persistent + split-K + hoisted",
            replace(_T64, bn=192, stages=6), True, 8, True)
)
# mid-size problems whose 128x256 cluster tiles fill their rounds badly (1536^3: 36 cluster tiles on 66 clusters,
# cuBLAS runs 96x192 tiles there; 3072^3: 2.18 rounds): a 128x192 tile, two consumers of 64x192 (96 accumulators),
# 4 stages of 40 KB, no cluster (three 64-column slabs of row-major B do not split over two CTAs).
# Also measured, not kept: t128 + stream-K (1536^3 0.72-0.75x of cuBLAS against t192's 0.79-0.92x; slower elsewhere)
SWEEP.append(
    Variant("t192", 9, "128x192 tile, two consumer warpgroups (64x192 each), no cluster, 4 stages, persistent + "
            "split-K + hoisted", KernelConfig(bm=128, bn=192, bk_bytes=128, stages=4, nc=2, cm=1, tma_store=True,
                                             hoist=True), True, 8, True)
)
# Also measured at 1024-1536 rows with one round of 72-96 tiles (gemm_small_s23_t192sk*_rowb.json), not kept: t192
# with stream-K — as launched, one CTA per tile and no sharing (level with t192); with every tile's k-tiles shared
# over all 132 SMs (a launcher change tried for it) 0.60-0.83x of cuBLAS, where `auto` (t160 / t144 / t128) ran at
# 0.81-1.08x in the call before: each CTA's 13-18 k-tiles end inside a tile, so every tile pays the partials' fix-up
# a tile width that is not a multiple of 64, so the tiles fill one round of the SMs where no 64-multiple does
# (1536^3: 12 x 11 = 132 tiles of 128x144 against t192's 96 of 128x192; cuBLAS runs 192x96 tiles there for 16-bit,
# 144x128 for fp8). Row-major B is still loaded in whole 64-column slabs (3 per stage, the third a quarter used:
# 16-column 32B-swizzled slabs measured 25-50 % slower) and the last 16 columns of each tile are stored from
# registers (a 128-byte TMA sub-tile would cross into the next tile).
_T144 = KernelConfig(bm=128, bn=144, bk_bytes=128, stages=4, nc=2, cm=1, tma_store=True, hoist=True)
SWEEP.append(
    Variant("t144", 9, "128x144 tile, two consumer warpgroups (64x144 each), no cluster, 4 stages, persistent + "
            "split-K + hoisted", _T144, True, 8, True)
)
# t144 over a row-major 16-bit B without its third slab: the swapped product C^T = B^T A^T, its A operand B^T
# (MN-major: 128 rows of N are two whole 64-column slabs) and its B operand a's K-major rows (144 of M, no slabs), so
# a stage moves t144's 34 KB over a column-major B instead of 40 KB; C^T staged as 144 rows of 128 bytes per
# warpgroup (experiment: 1536^3 16-bit with row-major B, where t160 runs 0.84-0.89x of cuBLAS)
SWEEP.append(
    Variant("t144s", 9, "swapped product C^T = B^T A^T: 128 columns of C (two consumers of 64) x 144 rows per tile, "
            "no cluster, 4 stages, persistent + split-K + hoisted", replace(_T144, swap_ab=True), True, 8, True)
)
# 160 columns: 1280x4096x4096 makes 260 tiles, two full rounds (rung 9's cluster tiles 80 on 66 clusters, t192's 220
# on 132 SMs); 2.5 slabs of a row-major B (three loaded), the last 32 columns of 16-bit C stored from registers.
# Measured 1-13 % faster than `auto`'s earlier pick where its tiles fill at most two rounds, up to 8 % slower than
# rung 9 / stream-K in three or more (docs/gemm.md, "A pair without multicast, ... a 128x160 tile")
SWEEP.append(
    Variant("t160", 9, "128x160 tile, two consumer warpgroups (64x160 each), no cluster, 4 stages, persistent + "
            "split-K + hoisted", replace(_T144, bn=160), True, 8, True)
)
# 320 columns (cuBLAS's 320x128 tile at 1280x4096x4096, in its column-major view): 130 tiles in one round where t160
# runs 260 in two, a third fewer bytes into shared memory per flop than t160 over a row-major B (five whole slabs);
# each consumer's 64x320 is an n256 and an n64 wgmma per k-step (160 accumulators, within ptxas's 168 registers);
# 3 stages of 56 KB
SWEEP.append(
    Variant("t320", 9, "128x320 tile, two consumer warpgroups (64x320 each: n256 + n64 wgmmas), no cluster, 3 stages, "
            "persistent + split-K + hoisted", replace(_T144, bn=320, stages=3), True, 8, True)
)

# Also measured at 2048^3-8192^3 and 4096x14336x4096 (docs/gemm.md, "Exchanged operands"), not kept (code in commit
# 9d0b0ec): rung 9 with the wgmma's operands exchanged as cuBLAS issues them (B's stage as A, 64 columns per m64
# block, A's 128 rows as N, C^T per consumer written back transposed) — bit-identical, 0-4 % slower; with block 0 of
# each tile stored while block 1's last wgmmas run, level with rung 9 at a locked clock, no faster.
# Also measured at 2048^3-8192^3 and mid shapes (docs/gemm.md, "A pair without multicast"), not kept (code in commit
# 41b9405): rung 9's 2-CTA pair with each CTA loading all of B itself (slots still released by the pair, so the two
# CTAs ask L2 for the same rows at about the same time) — 0-3 % slower than rung 9, 10-11 % more L2 sectors read.
# Also measured at 4096^3 (docs/gemm.md, "Two offsets that did not hold"), not kept: rung 9 / hoist_ed with consumer
# warpgroup 1 started 1-3 k-tiles after warpgroup 0 (branch exp-wg-skew; the offset is gone by the last tile, same
# cycles at a locked clock), with a smaller first burst of loads (branch exp-fair-start; slower at 128x11008, level
# at 4096^3), and rung 9 with fp32 C stored straight from registers (branch exp-direct-epi, tma_store=False: 2 % more
# cycles, 1-7 % slower).
# Also measured on the 16-bit mid shapes where t128 / t192 trail cuBLAS (docs/gemm.md, "Same design, more cycles"),
# not kept: a 128x128 ping-pong tile with the 2-CTA cluster (cuBLAS's choice there: 0.56-0.97x, below t128
# everywhere), t128 with 6 stages (within +-0.04 of t128), t128 with the cluster (0.1-0.2 below it at 384 and 1408
# rows, +0.03 at 2048x1024x8192), and a 192x96 tile of three 64x96 consumers (1536^3 0.76-0.85x, t192 0.82-0.85x,
# `auto` 0.82-0.97x).

# small M: the swapped product C^T = B^T A^T puts M in the wgmma's N (16, 32 or 64) instead of padding it to 64
# rows, and 64-row tiles run over N (cuBLAS's 64x16 / 64x32 / 64x64 tiles for M = 16 / 64 / 128); B becomes the A
# operand (K-major from column-major B, MN-major from row-major 16-bit B); one consumer warpgroup, a deep ring of
# small stages (the launch streams B)
_SW = KernelConfig(bm=64, bn=16, bk_bytes=128, stages=18, nc=1, setmaxnreg=False, cm=1, tma_store=True, hoist=True,
                   swap_ab=True)
SWEEP += [
    Variant(f"sw{bn}", 9, f"swapped product C^T = B^T A^T: 64 columns of C x {bn} rows per tile, {st} stages, "
            "persistent + split-K + hoisted", replace(_SW, bn=bn, stages=st), True, 8, True)
    for bn, st in ((8, 18), (16, 18), (32, 16), (64, 12))
]
# 65-128 rows with a short N (80x4096x4096): the 64-row swapped tile as wide as M, so B is streamed once (sw64 needs a
# second column of tiles past 64 rows, t64 / t128 pad M to 128 rows): 64 tiles at N = 4096, split 2 over K as sw64 is
# at 64 rows. As many stages as fit (sw80: 11 of 18 KB, sw96: 10 of 20 KB, sw112 / sw128: 8 of 22 / 24 KB; 88 / 80 /
# 64 KB of weight rows in flight where sw64 holds 96); the pair split-K builds of sw80 / sw96 give up one / two
# stages for the receive slot (pair_config; sw112 / sw128 have none: under PAIR_MIN_STAGES would remain), and
# measured 3-13 % faster than the L2 slots on the full ring (split_mode "fused") at two splits
# (gemm_small_s28_wide*.json). `auto` weighs sw80 / sw96 / sw112 where M fits them (SWAP_WIDE; docs/gemm.md, "65-112
# rows")
SWEEP += [
    Variant(f"sw{bn}", 9, f"swapped product C^T = B^T A^T: 64 columns of C x {bn} rows per tile, {st} stages, "
            "persistent + split-K + hoisted", replace(_SW, bn=bn, stages=st), True, 8, True)
    for bn, st in ((80, 11), (96, 10), (112, 8), (128, 8))
]
# skinny launches with a long N (16x14336x4096): a 128-row swapped tile (two consumers of 64 rows sharing the
# activations in shared memory) in 4-CTA clusters along the kernel's M that multicast the activations (the kernel's
# B, A^T) — cuBLAS's nvjet_..._128x16_64x11_4x1 at 16x14336x4096 fp16. A 64-row swapped tile streams B at ~35-40 GB/s
# per SM, so HBM is saturated only when ~110+ SMs stream at once: 224 tiles of 64 rows run 1.7 rounds of 132 SMs, 28
# clusters of four 128-row tiles one round of 112. Measured (bench/results/gemm_small_s25c4_*.json, graph-timed, x
# cuBLAS, fp16->fp32 / bf16 / e4m3 for M = 8, 16, 32 and both B layouts): where the clusters fill >= 85 % of the
# last round (N = 14336: 28 of the 30 resident clusters; 28672: 26 of 30) 2-7 % faster than the 64-row tile; at 80 %
# (12288) 4-10 % slower, with a thin second round (16384: 32 clusters) 25 % slower (api.refine_auto: C4_MIN_FILL).
# Also measured, not kept (gemm_small_s25_cl_m16/m32/m64.json, gemm_small_s25r_*.json): the 64-row swapped tiles in
# 2-CTA clusters (cuBLAS's 64x16 2x1 for bf16: ours 2-18 % slower than without the cluster), the 128-row tile without
# a cluster (level with the 64-row tile), relaxed slot release for the swapped tiles (within +-1 %), and split counts
# that fill the rounds (16x14336x4096 split 4: 896 units, 97 % of 7 rounds — 30-60 % slower: with several units per
# CTA each split unit costs 2-4 us, which is why choose_splits never gives a CTA more than one)
SWEEP += [
    Variant(f"sw{bn}c4", 9, f"swapped product: 128 columns of C x {bn} rows per tile (two consumers), 4-CTA clusters "
            f"multicasting the activations, {st} stages, persistent + split-K + hoisted",
            replace(_SW, bm=128, nc=2, bn=bn, stages=st, cm=4), True, 8, True)
    for bn, st in ((8, 10), (16, 10), (32, 9), (64, 8), (80, 7), (96, 6), (112, 5), (128, 5))
]

# 65-128 rows with a long N (96x11008x4096): cuBLAS runs nvjet_..._96x128_128x7_4x1 there — in our orientation a
# 128 (M) x 96 (N) tile, 4-CTA clusters along N multicasting the activations' row band (115 CTAs at N = 11008 where
# the 128-row swapped tile makes 86). The same tile here: two consumers of 64 x BN, each CTA loading a quarter of A's
# rows and multicasting it, its own B whole; 6 stages (a 96-column B stage reserves 128 rows: whole slabs). No
# setmaxnreg: 64 x 96 accumulators need no more than the even split (82 registers), and with the producer cut to 40
# its A multicast spilled 4 bytes in the K-major 96-column builds
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


# 33-128 rows with N of a few thousand (65-128 x 4096 x 4096): cuBLAS runs nvjet_..._64xW_..._1x2_h (W = 32 / 40 / 48
# / 56 / 64: about half of M) — in our orientation the 64-row swapped tile of W columns in 2-CTA clusters along the
# kernel's N: the two CTAs take the two column halves of M, each loading half of the 64 weight rows (or, over a
# row-major 16-bit B, half of each slab's k-rows) and multicasting it, so the weights leave L2 once per cluster and
# 2 x N/64 CTAs run unsplit (128 at N = 4096) where sw112 runs 64 or splits K through L2 slots. As many stages as fit.
# Measured first (gemm_small_s29_n2*.json) slower than `auto`'s picks: our CTAs of this tile took in ~80 GB/s each
# (15 KB per k-tile), cuBLAS's ~110. The cause (twelfth session of 2026-12-01, ncu's SASS source page: one producer
# thread running ~47 dependent instructions per k-tile and the consumers ~67, the division of a k-tile counter by 13
# stages and descriptors rebuilt per wgmma among them) went with rung 9's lean loops (two producer threads, a ring
# position, running descriptors): sw56n2 at 104 x 4096 x 4096 13.1 -> 9.9-10.1 us (bf16; cuBLAS 9.3-9.7), so `auto`
# weighs them now (n2_build). The other orientation — two CTAs along the weight rows multicasting the activations
# (sw32/48/64/96/112 with CM = 2) — measured 1.1-1.4x slower than this one (gemm_small_s29_m2*.json, not kept), and
# each row tile starting its k-tiles at its own offset (the activations not read by every CTA at once) 7-25 % slower
# (gemm_small_s29_rot*.json, not kept)
SWEEP += [
    Variant(f"sw{bn}n2", 9, f"swapped product: 64 columns of C x {bn} rows per tile, 2-CTA clusters along M "
            "(the problem's) multicasting the weight rows, persistent + hoisted",
            _max_stages(replace(_SW, bn=bn, cm=2, cluster_n=True)), True, 8)
    for bn in (32, 40, 48, 56, 64)
]
SMALL_M = 128  # `auto` takes the small tile at or below this M (measured: gemm_smallm.json, gemm_small.json)

VARIANTS: dict[str, Variant] = {v.name: v for v in LADDER + SWEEP}
for _v in LADDER:
    VARIANTS[f"r{_v.rung}"] = _v
AUTO = "hoist"  # rung 9: `auto` where its tiles fill the GPU without splitting K
AUTO_DEFER = "hoist_es"  # rung 9 with the spread deferred epilogue: `auto` where rung 9 runs unsplit
AUTO_SK = "streamk"  # rung 9 + stream-K: `auto` where rung 9's last round is thin (below)
# rung 9 without the cluster: `auto` instead of rung 9 where rung 9's cluster tiles fill one round, more than half of
# it (no split), and M >= CM1_MIN_M. Measured (gemm_small_s22_cm.json, kernel time, three dtype pairs): 2048^3
# 4.6-6.3 %, 4096x1024x1024 6.6-9.1 %, 2048x2048x4096 2.0-2.8 %, 1024x4096x4096 -0.5-2.9 % faster than rung 9, with
# column-major B 1.3-11.5 % at the same four shapes (gemm_small_s22_cm_colb.json); with two rounds mixed (2560^3
# 0-1.8 %, 2048x4096x2048 -0.5-4.0 %, 4096x2048x2048 -1.6-0 %, 512x14336x4096 -2.6-0.3 %) and slower from four
# (4096^3 0.2-2.3 %, 8192^3 0.3-4.2 %: there the pair's multicast saves energy under the power cap); at 256 rows
# (256x14336x4096) level to 4.5 % slower (gemm_small_s20_cm1_rowb.json too: the pair halves the weight rows' L2
# traffic, which small M is bound by)
AUTO_CM1 = "tuned"
CM1_MIN_M = 1024
MID_AUTO = "t192"  # `auto` where 128x192 tiles fill the rounds better (3072^3)
NARROW_AUTO = "t144"  # `auto` where 128x144 tiles fill one round and wider ones do not (1536^3)
# ... over a row-major 16-bit B (with a row-major a) as the swapped product, which loads no third slab: costed as
# t144 over a K-major B (b_rows = 144: the model's key is t144's)
NARROW_SWAP_AUTO = "t144s"
WIDE_AUTO = "t320"  # `auto` where 128x320 tiles fill one or two rounds better (1280x4096x4096, 2560x4096x4096)
NARROW160_AUTO = "t160"  # `auto` where 128x160 tiles fill the rounds better (1280x4096x4096, 2304x1024x4096)
SMALL_WIDE_AUTO = "t64x192"  # `auto` where 64x192 tiles fill one round better than 64x128 and 128x128 (768x1536^2)
SQUARE_AUTO = "t128"  # `auto` where 128x128 tiles fill the rounds without a split (384-512 x 4096 x 4096)
SMALL_AUTO = "t64"  # `auto` for small M and launches rung 9 would split over K (t64_sk was, before in-kernel split-K)
SMALL_SWAP64 = "sw64"  # `auto` over t64 at 33-64 rows where t64's last round is under half full (thin_last_round)
SWAP_AUTO = {8: "sw8", 16: "sw16", 32: "sw32", 64: "sw64"}  # `auto`'s swapped tiles, by the M they fit
# 65-96 rows: the 64-row swapped tile as wide as M, weighed only where M fits it in one column of tiles (65-80 rows
# sw80, 81-96 sw96): there it streams B once where sw64 / t64 / t128 stream it twice or pad M, measured 1.1-2.1x
# faster than `auto`'s earlier pick at 65-96 x N = 1024-8192 (gemm_small_s28_wide*.json: 80x4096x4096 bf16 0.61x ->
# 1.06x of cuBLAS, fp8 0.59x -> 0.92x, 96x4096x4096 fp16->fp32 0.95x -> 1.44x) and 1.02-1.30x faster than t128 at
# 16384 (gemm_small_s28_n16384*.json); the 4-CTA builds stay where c4_build takes them (9216-14336, 28672); wider than
# M (sw80 at 96 rows: two column tiles) it measured 1.6-2.4x slower than sw96, which the model's per-k-tile cost
# does not see
# 97-112 rows: sw112 the same way (97-104 x 4096 x 4096 1.05-1.20x faster than t64 split 2, 112 x 4096 x 14336 fp8
# 1.20x; gemm_small_s28_w128*.json). Not sw128 (113-128 rows): level with t64 at 120-128 x 4096 x 4096 16-bit and
# 1.2x slower than sw64 for fp8 there, 1.02-1.16x faster than t64 at 128 x 4096 x 11008 — one cost per k-tile cannot
# tell those apart, and its cost key is t64's (64, 128, 1)
SWAP_WIDE = {80: "sw80", 96: "sw96", 112: "sw112"}
# ... but sw128 for fp8 at 113-128 rows with K >= SW128_FP8_MIN_K and N in SW128_FP8_N, over the model: there it
# measured 1.07-1.17x faster than t64, `auto`'s pick, at all six points (128 x 2048-8192 x 8192-14336, 116-120 x
# 4096-8192 x 11008; gemm_small_s28_sw128.json, _w128.json); with K = 4096 1.2x slower than sw64, and for 16-bit
# from 10 % slower to 7 % faster
SW128_FP8_MIN_K = 8192
SW128_FP8_N = (2048, 8192)  # the measured N (at N = 1024 the model's sw64 and sw32 split more ways)
# 4-CTA-cluster builds, by BN (sw112c4 is not among them: at 112 rows it measured 7-9 % behind n96c4)
SWAP_C4 = {8: "sw8c4", 16: "sw16c4", 32: "sw32c4", 64: "sw64c4", 80: "sw80c4", 96: "sw96c4", 128: "sw128c4"}
# ... taken for fp8 only: sw64c4's 16-bit launches measured level with t64 where its clusters fill a round (64 x 14336
# and 28672 x 4096: -2..+2 %) and 3-6 % slower in part-empty ones (48-64 x 9216-11008), its fp8 ones 1.0-1.5x faster
# than t64's there (gemm_small_s26_sw64c4*.json); sw128c4 (65-128 rows) against t128 (gemm_small_s26_sw128c4*.json):
# 16-bit 5 % faster to 8 % slower, fp8 in a part-empty round 10-26 % faster at N = 11008 (80-128 rows) and 3 % slower
# at 128 x 9216, in full rounds 2-3 % slower — so fp8 only, and for sw128c4 only in the part-empty band
C4_FP8_ONLY = {"sw64c4", "sw128c4"}
C4_LOW_BAND_ONLY = {"sw128c4"}
# ... and taken in any one round, the band between C4_LOW_FILL and C4_MIN_FILL too: sw80c4 / sw96c4 at 24 clusters
# (72-96 x 12288 x 2048-4096) measured 1.06-1.44x faster than t128, `auto`'s pick there (gemm_small_s27_gap*.json);
# with a thin second round (16384: 32 clusters) 0.79-0.88x of it, so not there
C4_ANY_ONE_ROUND = {"sw80c4", "sw96c4"}
C4_MIN_FILL = 0.85  # `auto` takes it where its clusters fill at least this much of their last round (above)
# ... or where one round of them fills at most this much of the resident clusters, launched without PDL (pdl_pays):
# 16 x 9216-11008 x 2048-4096 and 32 x 11008 x 2048-4096, 18-22 clusters, 3-21 % faster than the 64-row tile
# (gemm_small_s26_pdlmap*.json); at 24 clusters (12288) from 5 % faster to 10 % slower, so not taken there
C4_LOW_FILL = 0.75
C4_RESIDENT_PER_SM = 30 / 132  # 4-CTA clusters of these builds resident at once (cudaOccupancyMaxActiveClusters)
# sw80c4 and sw96c4 (65-96 rows), unlike sw64c4 / sw128c4, are taken for 16-bit inputs too: at 72-96 x 9216-14336 x
# 2048-4096 they measured 1.05-1.29x faster than t128, `auto`'s pick before, for bf16 over column-major B and fp16->fp32
# over row-major B, 1.07-1.22x than sw128c4 / t128 for fp8 (gemm_small_s27_swc4*.json)
# 97-128 rows: the 128x96 or 128x80 tile in 4-CTA clusters along N (cuBLAS's own tiles at 128 x 11008 and 9216)
# where its clusters make one round of at least CN_MIN_FILL of the resident ones, the one with more clusters: n96c4
# at 112-128 x 9216-11008 x 2048-4096 1.04-1.21x faster than t128 / sw128c4 (16-bit / fp8; gemm_small_s27_cn*.json,
# _swc4*.json), in two rounds (14336) 1.21-1.29x slower; n80c4 (29 clusters at 9216) 1.01-1.10x faster than n96c4 (24)
# there and at 8704 (gemm_small_s27_n80*.json). Not where the 64x128 tile runs one round (128 x 8192: 128 tiles, t64
# 1.07-1.14x faster than n80c4's 26 clusters)
CN_AUTO = ("n80c4", "n96c4")
CN_MIN_M = 97
CN_MIN_FILL = 0.75
# 33-128 rows: the n2 tile as wide as half of M (sw32n2 ... sw64n2) where its clusters make one round of 32-66 (N =
# 2048-4224): on the lean template it measured faster than every variant the measured points held at 84 of 97 of
# them (33-128 x 2048-4096, gemm_small_s30_band.json: 104x4096x4096 bf16 12.0 -> 10.6 us with sw56n2, fp8 7.2 ->
# 6.5; 128x4096x8192 fp8 12.7 -> 11.0; 65x4096x4096 bf16 11.2 -> 10.1), and lost at N = 1024 (16 clusters), at
# 128 x 2048 x 14336 (sw128 / t64 11-14 % faster) and to sw112 at 97-112 x 2048 x 6144 bf16 (4-15 %); `auto` takes
# it over whatever else from N2_RULE_CLUSTERS clusters (N >= 3072: faster at all 61 measured points but two, 97 x 4096 x
# 2048-3072 fp8, 1-3 % behind sw112) and below that (N = 2048: 64 CTAs, where the others split K over all SMs) where
# the model (ONE_ROUND_COST, below) predicts it faster than its other pick
N2_AUTO = {32: "sw32n2", 40: "sw40n2", 48: "sw48n2", 56: "sw56n2", 64: "sw64n2"}
N2_MIN_M = 33
N2_MIN_CLUSTERS = 32
N2_RULE_CLUSTERS = 48
SWAP_MAX_M = 1024  # `auto` weighs the swapped tiles up to this M (512^3: sw32 0.87-0.90x of cuBLAS, t64_sk 0.60x)


def swap_order(m: int) -> list[str]:
    """The swapped tiles `auto` weighs, the one whose BN fits M first (the narrowest of 8 / 16 / 32 / 64 columns
    that holds M; 64 above): where the model cannot tell them apart (launches bound by streaming B) the fitting one
    runs, as measured (16x4096x4096: sw16 9.6 us, sw64 16.1; 1x4096x4096: sw8 8.8 us, sw16 9.7 — fewer of the
    activation box's rows are TMA zero fill). At 65-112 rows the SWAP_WIDE tile that holds M comes first."""
    fit = next((v for bn, v in SWAP_AUTO.items() if m <= bn), SWAP_AUTO[64])
    narrower = max(SWAP_AUTO)  # a SWAP_WIDE tile holds M above the next narrower width only
    wide = []
    for bn in sorted(SWAP_WIDE):
        if narrower < m <= bn:
            wide.append(SWAP_WIDE[bn])
        narrower = bn
    return wide + [fit] + [v for v in SWAP_AUTO.values() if v != fit]


# at 97-112 rows with N >= 2048 (sw112's tiles >= 32) the narrower swapped tiles (sw64 / sw32: two or more column
# tiles of M) ran 0.6-1.9 us above the model, which predicted sw64 up to 24 % faster than sw112 where sw112 (split by
# the model) measured faster at 13 of 16 points (gemm_small_s29_sw112k.json): there sw112 is taken within this
# margin of the best prediction and the others must beat it by as much (sw64 stays at the four points predicted
# 22-24 % faster, measured 1 % slower to 4 % faster than sw112)
SW112_NARROW_MARGIN = 0.20


def narrower_swap_margin(wide: str, m: int, n: int, sms: int) -> float:
    """How much faster than the SWAP_WIDE tile `wide` a narrower swapped tile (or any other) must be predicted to be
    taken instead: SW112_NARROW_MARGIN for sw112 where measured (its tiles >= 32, leaving half the SMs idle unsplit:
    N = 2048-4224 at 97-112 rows), none elsewhere."""
    c = VARIANTS[wide].config
    if wide == SWAP_WIDE[112] and cluster_tiles(c, m, n) >= SPLIT_BY_MODEL_MIN_TILES and underfilled(c, m, n, sms):
        return SW112_NARROW_MARGIN
    return 0.0


def resolve_variant(name: object, m: int | None = None) -> Variant:
    """A variant by name ('bn256'), rung ('r3' or 3) or 'auto' (rung 9; the 64x128 tile when m <= SMALL_M; the
    launcher refines it by shape: api.refine_auto); TcforgeError else."""
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


SK_MAX_PIECES = 4  # stream-K in place of split-K: a unit shared by at most this many clusters (owners add serially)


def choose_streamk_small(units: int, clusters: int, num_kt: int, splits: int) -> int:
    """Clusters for a launch whose units are all shared by stream-K instead of split `splits` ways over K (no fp32
    planes, no reduction kernel): each unit in at most SK_MAX_PIECES pieces of >= 4 k-tiles; 0 (keep split-K) unless
    that runs at least as many pieces at once as split-K would."""
    g = min(clusters, units * SK_MAX_PIECES, units * num_kt // 4)
    return g if splits > 1 and g >= units * splits else 0


# `auto`'s launch-time model (measured on the H200, power-capped, bench/results/gemm_small_edges.json,
# gemm_small_auto_v1.json, gemm_small_owner_last.json, gemm_small_mid.json, gemm_small_bigtail.json; the 128x144 and
# 128x128 tiles from gemm_small_t144a..c.json and gemm_small_t128c..d.json, gemm_small_smallm_t128a..b.json), by
# tile (BM, BN, CM): microseconds per k-tile of one tile (128x256 per CTA in 2-CTA clusters; the others per CTA)
# and the fixed cost of a launch; the rate at which split-K's fp32 planes are written and reduced; what stream-K's
# fix-up adds (fp8 measured dearer: 8-13 us against 16-bit's 0-14, at half the k-tiles per unit). t128 measured
# 0.40 us per k-tile in one round of 96 CTAs (384x4096x4096) to 0.53 in two rounds of 132 (4096x1024x1024). Rung 9
# without the cluster (128, 256, 1) from its one-round launches only, where `auto` weighs it (gemm_small_s22_cm.json:
# 16-64 k-tiles, 9.7-56.5 us). t320 (128, 320, 1) fitted on its launches of one and two rounds
# (gemm_small_s23_t320*.json: 15-244 us, within 11 %), t64x192 (64, 192, 1) on its one-round launches
# (gemm_small_s23_t64w_*.json: 6-27 us, within 11 %).
COST_KT_US = {(128, 320, 1): 1.08, (128, 256, 2): 0.87, (128, 256, 1): 0.82, (128, 192, 1): 0.66, (128, 160, 1): 0.57,
              (128, 144, 1): 0.52, (128, 128, 1): 0.50, (64, 192, 1): 0.40, (64, 128, 1): 0.30, (64, 8, 1): 0.17,
              (64, 16, 1): 0.17, (64, 32, 1): 0.18, (64, 64, 1): 0.20,  # 64 x 8..64: swapped
              (128, 8, 4): 0.30, (128, 16, 4): 0.30, (128, 32, 4): 0.32,  # 128 x 8..32 swapped, 4-CTA clusters
              (128, 64, 4): 0.36, (128, 128, 4): 0.45,  # sw64c4, sw128c4 (gemm_small_s26_sw64c4*.json, _sw128c4*)
              (128, 80, 4): 0.40, (128, 96, 4): 0.42, (128, 112, 4): 0.47,  # sw80c4 .. sw112c4 (_s27_swc4*.json)
              (64, 80, 1): 0.20, (64, 96, 1): 0.22,  # sw80, sw96 where M fits them (gemm_small_s28_wide*.json)
              (64, 112, 1): 0.26,  # sw112 at 97-112 rows (gemm_small_s28_w128*.json; one round: ONE_ROUND_COST)
              # n80c4, n96c4, n128c4 (gemm_small_s27_cn*.json, _s27_n80.json)
              (128, 80, 4, "n"): 0.36, (128, 96, 4, "n"): 0.43, (128, 128, 4, "n"): 0.45}
COST_FIXED_US = {(128, 320, 1): 3.0, (128, 256, 2): 4.0, (128, 256, 1): 3.0, (128, 192, 1): 4.0, (128, 160, 1): 2.5,
                 (128, 144, 1): 2.5, (128, 128, 1): 2.0, (64, 192, 1): 1.5, (64, 128, 1): 2.0, (64, 8, 1): 2.0,
                 (64, 16, 1): 2.0, (64, 32, 1): 2.0, (64, 64, 1): 2.0, (128, 8, 4): 2.0, (128, 16, 4): 2.0,
                 (128, 32, 4): 2.0, (128, 64, 4): 2.0, (128, 128, 4): 2.0, (128, 80, 4): 2.0, (128, 96, 4): 2.0,
                 (128, 112, 4): 2.0, (128, 80, 4, "n"): 2.0, (128, 96, 4, "n"): 2.0, (128, 128, 4, "n"): 2.0,
                 (64, 80, 1): 2.0, (64, 96, 1): 2.0, (64, 112, 1): 2.0, (64, 32, 2, "n"): 2.2, (64, 40, 2, "n"): 2.1,
                 (64, 48, 2, "n"): 2.2, (64, 56, 2, "n"): 2.3, (64, 64, 2, "n"): 1.6}
# a split launch's reduction (bench/results/gemm_small_fsk*.json): inside the kernel, the last split of each tile
# slice reads every split's slot, latency-bound — a fixed part plus one L2 round trip per batch of loads (the kernel's
# batches: fused_split_batches); through planes, the reduction kernel's launch plus bytes of fp32 planes
FUSED_FIXED_US = 0.8
FUSED_BATCH_US = 0.4
PLANES_FIXED_US = 1.4
PLANES_US_PER_BYTE = 0.6e-6
# sw112 in one round of units (97-112 rows x N <= 4224, split or not; gemm_small_s29_sw112k.json, 32 points,
# fp8 and bf16, K = 2048-6144): 0.17 us per k-tile (fitted on its unsplit launches, within 5 %) and 1.1x the HBM
# rate (its split launches at K = 4096-6144), where one cost of 0.26 had been fitted on split launches only; its
# splits meet in L2 slots (no pair build) and measured 0.7-1.4 us above fused_split_us at 2 and 4 splits
# (SLOT_EXTRA_US). With these the model decides where it splits (SPLIT_BY_MODEL), within 6 % of the faster of its
# split and unsplit launch at all 32 points. Launches of several rounds keep COST_KT_US (not measured against it)
# the n2 tiles (sw32n2 ... sw64n2) in their one round of 32-66 clusters (gemm_small_s30_band.json, _s30_n2fit.json:
# 138 launches at 33-128 x 2048-4096 x 2048-14336, bf16 / fp16 / fp8): the per-k-tile cost and fixed part fitted at
# N = 2048, where the SMs bound them (each CTA takes in ~150 GB/s; within 7 %), and the HBM rate at N = 3072-4096,
# where that does (within 16 %: there `auto` takes them by rule, N2_RULE_CLUSTERS)
ONE_ROUND_COST = {(64, 112, 1): (0.17, 1.1), (64, 32, 2, "n"): (0.094, 1.03), (64, 40, 2, "n"): (0.099, 1.01),
                  (64, 48, 2, "n"): (0.096, 0.99), (64, 56, 2, "n"): (0.098, 0.96), (64, 64, 2, "n"): (0.115, 0.86)}
SLOT_EXTRA_US = {(64, 112, 1): 1.2}
# the n2 tiles are measured (and weighed by `auto`) in one round only: in several their one round's cost per k-tile
COST_KT_US.update({key: cost for key, (cost, _) in ONE_ROUND_COST.items() if key[2:] == (2, "n")})
SPLIT_BY_MODEL = frozenset(ONE_ROUND_COST)  # the tiles whose one-round launches the model was refitted on
SPLIT_BY_MODEL_MIN_TILES = 32  # ... where its tiles are as many as measured (N >= 2048); fewer split by rule
# two splits of a swapped tile through DSMEM cost the fixed part only (split_reduce_us: split 0 reads the partial
# from its own shared memory; measured 0-0.5 us below the L2 slots, more for larger slots: gemm_small_pair_a.json,
# gemm_small_pair_b.json; with it `auto` takes the pair-split 64-column tile at 64x4096x4096 fp8, 7.1 us against the
# 32-column tile's 7.9)

# no launch is faster than streaming its operands and C once from HBM (small M: B alone). The swapped 16- and
# 32-column tiles reach 4.2 TB/s (16x4096x4096: 33.6 MB in 9.6 us with 2 us fixed and a reduction, a
# device-to-device copy 4.27), the 64x128 tile and the swapped 64-column tile 90 % of it (gemm_small_swap.json,
# gemm_small_swap_rowb.json: with these, `auto` is within 3.3 % of the best measured variant on all 72 points); the
# 8-column swapped tile streams B faster than the copy rate (1x4096x4096: 33.6 MB in 8.8 us including a 2-way split
# reduced in the kernel, ~4.5 TB/s: gemm_small_sw8_a.json)
HBM_BYTES_PER_US = 4.2e6
# sw80 / sw96 where M fits them ran at 0.84-1.37x of the floor's rate (gemm_small_s28_wide*.json), and at 80 x 16384 x
# 4096 (two rounds) 14-16 % faster than t128, which the full rate tied them with (gemm_small_s28_auto_more*.json)
HBM_EFFICIENCY = {(64, 128, 1): 0.9, (64, 64, 1): 0.9, (64, 8, 1): 1.1, (64, 80, 1): 1.1, (64, 96, 1): 1.1}
STREAMK_FIXUP_US = {"fp16": 6.0, "bf16": 6.0, "e4m3": 10.0}
# stream-K for rung 9 only where the model predicts at least this gain: the idle SMs of a thin last round cost less
# than their share of the time on a power-capped GPU (4096^3: 3 % predicted, 1-4 % lost; 8192x14336x8192 2.8 %
# predicted, nothing gained; 5120^3 13 % predicted, 6-9 % gained: gemm_streamk.json, gemm_small_bigtail.json)
STREAMK_MIN_GAIN = 0.04
# stream-K also where rung 9's tiles run two rounds with the second over half (at most 3/4) full, for 16-bit inputs
# with at least this many k-tiles per tile: measured 1.1-9.1 % faster (1792x4096x8192, 1792x4096x14336,
# 512x14336x8192, 3584x2048x8192); with 64 k-tiles, in three rounds or for fp8 it lost 1-13 %
# (gemm_small_s22_skhalf.json)
SK_LONG_KTILES = 128
# a smaller tile must beat a larger one by this much: per flop the larger moves fewer bytes, which the power cap
# rewards (8192^3: t192 predicted 0.4 % faster than rung 9, measured 2-5 % slower)
TILE_MARGIN = 0.02


# tiles of partial slabs costed by their own width over an MN-major B as well: t160 measured 0.51-0.59 us per k-tile
# over row-major 16-bit B (1536^3, 512x5120x4096, 2304x1024x4096, 1280x4096x4096: gemm_small_s22_t160_rowb.json),
# as over a column-major one, 5-7 % below t192 at the same rounds
MN_OWN_WIDTH = {160}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def cost_key(config: KernelConfig, b_kmajor: bool = True) -> tuple:
    """The model's key for a tile: (BM, BN, CM) — BN as loaded (whole slabs of an MN-major B unless MN_OWN_WIDTH),
    "n" appended for a cluster along N (the 128x96 tile in 4-CTA clusters is not the swapped 128x96 one)."""
    bn = config.bn if b_kmajor or config.bn in MN_OWN_WIDTH else config.b_rows
    return (config.bm, bn, config.cm) + (("n",) if config.cluster_n else ())


def estimate_us(variant: Variant, m: int, n: int, k: int, in_kind: str, sms: int, streamk: bool = False,
                b_kmajor: bool = True) -> float:
    """Predicted time of a launch of one of `auto`'s tiles (rung 9, t192, t160, t144, t128, t64, the swapped
    sw8/16/32/64): rounds of tiles over the clusters, each round one unit's k-tiles, or streaming the operands from
    HBM if that takes longer, plus the fixed cost and, when it splits K, the fp32 planes; with `streamk`, every
    cluster's even share of all k-tiles plus the fix-up. t144 over an MN-major B (row-major 16-bit `b`) loads whole
    slabs and costs per k-tile what the tile of that padded width does (measured: t144 and t192 0.51 / 0.52 us per
    k-tile at 1536^3 fp16); t160 loads whole slabs too but measured its own width's cost over either B layout
    (MN_OWN_WIDTH). Within ~30 % of the measured kernels from 16x4096x4096 to 8192^3 and 1024x1024x65536; used only to
    rank the tiles for `auto`."""
    c = variant.config
    splits = choose_splits(c, m, n, k, in_kind, sms) if variant.splitk_auto and not streamk else 1
    return _estimate_us(c, m, n, k, in_kind, sms, splits, streamk, b_kmajor)


def _estimate_us(c: KernelConfig, m: int, n: int, k: int, in_kind: str, sms: int, splits: int, streamk: bool,
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
    """Whether a split launch reduces inside the kernel rather than through planes: measured faster up to a few
    slots per tile (no second launch), slower where one SM must read many (16 splits: 256x256x65536). The 64-row
    swapped tiles wider than 64 columns always: at 4-8 splits their slots measured 0.1-3.0 us faster than the planes the
    batch count predicted cheaper (sw80 / sw96 / sw112 at 72-104 x 1024-2048 x 11008-14336,
    gemm_small_s28_splitmode.json)."""
    if config.swap_ab and config.cm == 1 and config.bn > 64:  # (not measured for the 4-CTA builds)
        return True
    return fused_split_us(config, splits) <= planes_split_us(m, n, splits)


# programmatic dependent launch (api.PDL): 16-bit launches of the non-swapped tiles whose CTAs each run at most this
# many k-tiles get it (the fixed launch and set-up time it hides is a large part of such a launch)
PDL_MAX_KTILES = 16
# ... and an unsplit one-CTA swapped launch only where it fills at least this much of one round of the SMs
# (pdl_pays: 72-96 of 132 measured faster without, 104 and 112 level or faster with)
SWAP_PDL_MIN_FILL = 0.75


def pdl_pays(
    config: KernelConfig, in_kind: str, units: int, ctas: int, num_kt: int, splits: int, resident: int = 0
) -> bool:
    """Whether a launch of `units` work units (tiles x splits) on `ctas` CTAs (clusters for clustered builds) is
    made with programmatic dependent launch. Measured, each point with and without it in one run
    (gemm_pdl_s16b*.json, gemm_pdl_s16c*.json, gemm_pdl_s16e_mid.json): the swapped tiles 0.4-0.8 us faster at every
    point (1-128 rows, 512^3; all dtype pairs; pair and fused splits); fp8 never slower (t64 1024^3 +15 %, 256x4096x4096
    +5-10 %, rung 9 2048^3 +4 %, 4096^3 within noise); 16-bit t64 faster with <= 16 k-tiles per CTA (1024^3 7.4 ->
    6.7 us, 128x4096x1024) but 1-9 % slower with 32-64 (128-512 x 4096 x 4096, 64 x 14336 x 4096), rung 9 and t192
    within +-2 %. The cause of the 16-bit loss is not found (the cubin is the same; only the launch attribute
    differs). Not for an unsplit swapped launch of one round that fills under SWAP_PDL_MIN_FILL of the SMs (one-CTA
    builds; `resident` = the SM count) or under C4_MIN_FILL of the resident 4-CTA clusters: with that many SMs idle
    the next launch's early CTAs cost more than the overlap gives (cause not found). 4-CTA clusters at 16 and 32 x
    9216-11008 x 2048-4096: graph-timed 3.9-5.7 us per GEMM slower with PDL than without, where the kernel alone takes
    6-25 us, 0.6-2.1 us at 12288 (gemm_small_s26_pdlmap*.json). One-CTA swapped tiles (sw8 ... sw128) on 72-96 of 132
    SMs (1-120 x 4608-6144 x 2048-8192, either B layout): 16-bit 0.4-5.6 us slower with PDL (48 x 5120 the one
    exception, 0.2-0.6 us faster), fp8 from 0.2 us faster to 2.7 us slower, the kernels' own times unchanged; on 104
    SMs 16-bit level and fp8 0.2-0.5 us faster with it, on 112 level (gemm_small_s34_pdl_*.json,
    gemm_small_s34_pdlrule_*.json). Split launches, measured faster with PDL, and the 2-CTA n2 tiles, measured with
    it only, keep it."""
    fill = C4_MIN_FILL if config.cm >= 4 else SWAP_PDL_MIN_FILL if config.cm == 1 else 0.0
    if config.swap_ab and splits == 1 and resident and units < fill * resident:
        return False
    if config.swap_ab or in_kind == "e4m3":
        return True
    return _cdiv(units, max(1, ctas)) * _cdiv(num_kt, max(1, splits)) <= PDL_MAX_KTILES


def split_config(config: KernelConfig) -> KernelConfig:
    """The split-K build of a config. TMA variants: the same kernel with SK_FUSED, which per launch either reduces
    inside the kernel (the last split of a tile adds the others' partials and runs the normal epilogue) or writes
    fp32 planes for tcf_splitk_reduce (api.prepare_plan's split_mode). The cp.async baseline: planes only, written
    directly (no staging buffers)."""
    if config.use_tma:
        return replace(config, splitk_fused=True, streamk=False, streamk_trace=False, timeline=False)
    return replace(config, splitk=True, tma_store=False, epi_bufs=2, streamk=False, streamk_trace=False, timeline=False)


PAIR_MIN_STAGES = 8  # a pair build gives up ring stages for its receive slot down to this many, no further


def pair_config(config: KernelConfig) -> KernelConfig | None:
    """The pair split-K build of a config (two splits, the partial moved by DSMEM inside a 2-CTA cluster), or None
    where it does not apply: the swapped tiles only, where the receive slot fits beside the ring — the variant's own
    ring (sw8 ... sw64), or for the wider tiles one cut to make room, not below PAIR_MIN_STAGES (sw80: 11 stages, its
    pair 10; sw96: 10 and 8); rung 9 and t64 have no room for it. Measured 0-0.5 us faster than the in-kernel
    reduction through L2 slots, the same bits."""
    if not (config.swap_ab and config.use_tma) or config.cm > 1:
        return None
    pair = replace(split_config(config), split_pair=True)
    while pair.smem_total() > MAX_SMEM and pair.stages > PAIR_MIN_STAGES:
        pair = replace(pair, stages=pair.stages - 1)
    return pair if pair.smem_total() <= MAX_SMEM else None


def split_reduce_us(config: KernelConfig, m: int, n: int, splits: int) -> float:
    """What reducing a split launch adds: the cheapest way (the cp.async baseline has only planes; two splits of a
    swapped tile pass the partial through DSMEM)."""
    planes = planes_split_us(m, n, splits)
    if splits == 2 and pair_config(config) is not None:
        return min(planes, FUSED_FIXED_US)
    fused = fused_split_us(config, splits) + SLOT_EXTRA_US.get(cost_key(config), 0.0)
    return min(planes, fused) if config.use_tma else planes


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
    """4-CTA clusters resident at once on `sms` SMs by the measured ratio (C4_RESIDENT_PER_SM), for `auto`'s fill rules
    and where the driver's count is not known."""
    return max(1, int(sms * C4_RESIDENT_PER_SM))


def c4_pays(config: KernelConfig, m: int, n: int, sms: int, low_band_only: bool = False,
            any_one_round: bool = False) -> bool:
    """Whether `auto` runs a 4-CTA-cluster swapped build: its clusters fill at least C4_MIN_FILL of their last round
    of resident clusters (not with `low_band_only`), or they are one round filling at most C4_LOW_FILL of it
    (launched without PDL there: pdl_pays) — any one round with `any_one_round`. Between the two, and with a thin
    last round, the narrower builds measured slower than the 64-row tile."""
    resident = c4_resident(sms)
    tiles = cluster_tiles(config, m, n)
    last = tiles % resident or resident
    one_round = tiles <= (resident if any_one_round else C4_LOW_FILL * resident)
    return (last >= C4_MIN_FILL * resident and not low_band_only) or one_round


def c4_build(m: int, n: int, k: int, in_kind: str, sms: int) -> Variant | None:
    """The 4-CTA-cluster swapped build `auto` runs for a launch, or None: the narrowest whose BN holds M (one column
    of tiles), for the dtypes it is kept for (C4_FP8_ONLY), needing no split, where c4_pays (its low-fill band only
    for C4_LOW_BAND_ONLY, any one round for C4_ANY_ONE_ROUND)."""
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
    """The cluster-along-N tile `auto` runs for a launch, or None: for CN_MIN_M-128 rows (one row band) of a K-major B
    (over a row-major 16-bit B they load two whole 64-column slabs: n96c4 measured 0.90-1.0x of t128 there), of
    CN_AUTO the one whose clusters are one round filling most (at least CN_MIN_FILL) of the resident ones — where the
    64x128 tile would need a second round (no split either way)."""
    if not (CN_MIN_M <= m <= 128 and b_kmajor) or cluster_tiles(VARIANTS[SMALL_AUTO].config, m, n) <= sms:
        return None
    resident = c4_resident(sms)
    fits = [(cluster_tiles(VARIANTS[name].config, m, n), name) for name in CN_AUTO]
    fits = [(c, name) for c, name in fits if CN_MIN_FILL * resident <= c <= resident]
    return VARIANTS[max(fits)[1]] if fits else None


def n2_build(m: int, n: int, sms: int) -> Variant | None:
    """The n2 tile `auto` weighs for a launch, or None: for N2_MIN_M-128 rows the narrowest whose two CTAs hold M,
    where its clusters make one round of at least N2_MIN_CLUSTERS (the measured band: N = 2048-4224 on 132 SMs)."""
    if not N2_MIN_M <= m <= 128:
        return None
    v = VARIANTS[next(name for bn, name in N2_AUTO.items() if m <= 2 * bn)]
    return v if N2_MIN_CLUSTERS <= cluster_tiles(v.config, m, n) <= sms // v.config.cm else None


def sw128_fp8_build(m: int, n: int, k: int, in_kind: str) -> Variant | None:
    """sw128 where `auto` runs it by rule, over the model (which ties it with t64: the same cost key): fp8 at 113-128
    rows with K >= SW128_FP8_MIN_K and N in SW128_FP8_N; None elsewhere."""
    if in_kind == "e4m3" and 112 < m <= 128 and k >= SW128_FP8_MIN_K and SW128_FP8_N[0] <= n <= SW128_FP8_N[1]:
        return VARIANTS["sw128"]
    return None


def thin_last_round(config: KernelConfig, m: int, n: int, sms: int) -> bool:
    """Whether a launch's (cluster) tiles run in more than one round of the SMs' clusters and the last round is
    under half full."""
    tiles, clusters = cluster_tiles(config, m, n), sms // config.cm
    return tiles > clusters and tiles % clusters < clusters / 2


def underfilled(config: KernelConfig, m: int, n: int, sms: int) -> bool:
    """Whether a launch's tiles (cluster tiles) leave more than half the SMs (clusters) idle."""
    return cluster_tiles(config, m, n) * 2 <= sms // config.cm


def choose_splits(config: KernelConfig, m: int, n: int, k: int, in_kind: str, sms: int) -> int:
    """Split-K factor: split K when the tiles leave more than half the SMs idle and K is long enough to share."""
    tiles = cluster_tiles(config, m, n)
    kt = _cdiv(k, config.bk(in_kind))
    if not underfilled(config, m, n, sms) or kt < 8:
        return 1
    splits = min(kt // 4, max(1, (sms // config.cm) // tiles), 16)
    if splits <= 1:
        return 1
    per = -(-kt // splits)
    splits = -(-kt // per)  # every split gets at least one k-tile
    # sw112 splits only where the model predicts the split launch faster: unsplit, its 64 CTAs of one column of tiles
    # measured 3-33 % faster than 2-4 splits with up to 32 k-tiles each at 97-112 x 2048-4096 (fp8 K <= 4096, 16-bit
    # K <= 2048; gemm_small_s29_sw112k.json), slower with more
    if cost_key(config) in SPLIT_BY_MODEL and not config.split_pair and tiles >= SPLIT_BY_MODEL_MIN_TILES:
        one = _estimate_us(config, m, n, k, in_kind, sms, 1, False, True)
        if one <= _estimate_us(config, m, n, k, in_kind, sms, splits, False, True):
            return 1
    return splits
