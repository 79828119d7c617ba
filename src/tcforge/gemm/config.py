"""The kernel's compile-time options (`KernelConfig`, mirroring gemm_sm90.cu's switches) and the dtype tables."""

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
    # consumers only, not every CTA's (LOCAL_EMPTY): n80c4 / n96c4, 1-3 % faster
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
    # operands loaded with cp.async by two producer warps each instead of TMA (bit 1 the kernel's A, bit 2 its B; CPA):
    # rows that start only 16-byte aligned, which TMA reads at less than half speed (docs/gemm.md, "Row alignment")
    cpa: int = 0
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
        if self.cpa and (not 0 <= self.cpa <= 3 or not self.use_tma or not self.hoist or self.cm != 1 or self.diag
                         or self.timeline):
            raise TcforgeError(f"{self}: cp.async operands (cpa: bit 1 A, bit 2 B) need the TMA path's producer "
                               "warpgroup with two producer roles (hoist), no cluster, no diagnostics or timeline")
        if self.promote and (rows != 64 or self.pingpong or self.bn % 16):
            raise TcforgeError(f"{self}: promotion needs one m64 block per consumer warpgroup, no ping-pong, "
                               "BN % 16 == 0")


def split_config(config: KernelConfig) -> KernelConfig:
    """The split-K build of a config. TMA variants: the same kernel with SK_FUSED, which per launch either reduces
    inside the kernel (the last split of a tile adds the others' partials and runs the normal epilogue) or writes
    fp32 planes for tcf_splitk_reduce (the plan's split mode). The cp.async baseline: planes only, written directly
    (no staging buffers)."""
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
