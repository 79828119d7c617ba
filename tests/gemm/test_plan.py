"""`matmul`'s plan without a GPU: input validation runs before torch/CUDA (each bad input is a TcforgeError saying what
to change); the launch plan (split-K and its reduction, the persistent grid, PDL, L2 promotion, launch options);
stream-K's schedule (the one the kernel computes, mirrored in tcforge.gemm.streamk) covers every k-tile of every unit
exactly once, gives each cluster at most one partial (run first) and one owner segment (run last), owners wait only
for earlier clusters' partials (no cycle) and, where a share is longer than a unit, not at all; the launcher's choice
of how many units to share. `auto`'s picks and the tile costs: test_auto.py (which takes the fakes below)."""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass, replace

import pytest

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.gemm import codegen, matmul, plan_matmul
from tcforge.gemm.auto import pick_variant
from tcforge.gemm.check import fast_accum_peer
from tcforge.gemm.config import split_config
from tcforge.gemm.model import (
    SWAP_PDL_MIN_FILL,
    choose_splits,
    choose_streamk,
    choose_streamk_small,
    cluster_tiles,
    fused_split_batches,
    fused_split_pays,
    fused_split_us,
    pdl_pays,
    persistent_clusters,
    planes_split_us,
)
from tcforge.gemm.plan import Device, LaunchOptions, l2_promotion, plan_launch
from tcforge.gemm.streamk import cluster_segments, fits_int32, owner_waits, schedule
from tcforge.gemm.variants import VARIANTS

# tensor-like fakes for planning without torch or a GPU (shape, dtype, device, stride(), data_ptr(), t())


@dataclass
class FakeDevice:
    type: str = "cuda"
    index: int = 0

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


@dataclass
class FakeTensor:
    shape: tuple[int, ...]
    dtype: str = "torch.float16"
    device: FakeDevice = None  # type: ignore[assignment]
    strides: tuple[int, ...] | None = None
    ptr: int = 1 << 20

    def __post_init__(self) -> None:
        if self.device is None:
            self.device = FakeDevice()
        if self.strides is None:  # contiguous
            s, acc = [], 1
            for d in reversed(self.shape):
                s.append(acc)
                acc *= max(1, d)
            self.strides = tuple(reversed(s))

    def stride(self) -> tuple[int, ...]:
        return self.strides  # type: ignore[return-value]

    def data_ptr(self) -> int:
        return self.ptr

    def t(self) -> FakeTensor:
        return FakeTensor(tuple(reversed(self.shape)), self.dtype, self.device, tuple(reversed(self.strides)), self.ptr)


def col_major(k: int, n: int, dtype: str = "torch.float8_e4m3fn") -> FakeTensor:
    """A (K, N) tensor stored column-major (b.t() contiguous), as torch._scaled_mm wants b."""
    return FakeTensor((n, k), dtype).t()


F16, BF16, F8, F32 = "torch.float16", "torch.bfloat16", "torch.float8_e4m3fn", "torch.float32"


def test_plain_fp16_plan() -> None:
    p = plan_matmul(FakeTensor((256, 512)), FakeTensor((512, 384)))
    assert (p.m, p.n, p.k, p.in_kind, p.out_kind, p.b_kmajor) == (256, 384, 512, "fp16", "fp16", False)
    assert not p.copy_a and not p.copy_b and p.k_padded == 512
    assert p.variant.name == "hoist"


def test_out_dtypes_and_b_layouts() -> None:
    p = plan_matmul(FakeTensor((64, 64)), FakeTensor((64, 32)).t().t(), out_dtype=F32)
    assert p.out_kind == "fp32"
    p = plan_matmul(FakeTensor((64, 64), BF16), col_major(64, 32, BF16))
    assert p.b_kmajor and p.out_kind == "bf16"
    p = plan_matmul(
        FakeTensor((64, 64), F8),
        col_major(64, 32),
        out_dtype=F16,
        scale_a=FakeTensor((), F32),
        scale_b=FakeTensor((1,), F32),
    )
    assert p.in_kind == "e4m3" and p.out_kind == "fp16" and p.b_kmajor


@pytest.mark.parametrize("variant", ["baseline", "r3", 5, "bk64_s3", "auto"])
def test_variants_resolve(variant: object) -> None:
    plan_matmul(FakeTensor((8, 8)), FakeTensor((8, 8)), variant=variant)


def test_unaligned_strides_take_the_padded_copy_path() -> None:
    p = plan_matmul(FakeTensor((7, 7)), FakeTensor((7, 7)))
    assert p.copy_a and p.copy_b and p.k_padded == 8
    p = plan_matmul(FakeTensor((16, 32)), FakeTensor((32, 7)))  # N = 7: B's row stride is 14 bytes
    assert not p.copy_a and p.copy_b
    p = plan_matmul(FakeTensor((16, 32), ptr=(1 << 20) + 2), FakeTensor((32, 8)))  # misaligned base
    assert p.copy_a and not p.copy_b
    p = plan_matmul(FakeTensor((16, 24), F8), col_major(24, 16))  # fp8 needs K % 16
    assert p.copy_a and p.copy_b and p.k_padded == 32


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "err", "msg"),
    [
        (FakeTensor((4, 8)), FakeTensor((9, 4)), {}, TcforgeError, "a.shape\\[1\\] must equal b.shape\\[0\\]"),
        (FakeTensor((4, 8, 2)), FakeTensor((8, 4)), {}, TcforgeError, "a must be 2-D"),
        (FakeTensor((4, 8), F32), FakeTensor((8, 4), F32), {}, UnsupportedError, "cast with a.to"),
        (FakeTensor((4, 8)), FakeTensor((8, 4), BF16), {}, UnsupportedError, "same dtype"),
        (FakeTensor((4, 8)), FakeTensor((8, 4)), {"out_dtype": BF16}, UnsupportedError, "choose one of fp16, fp32"),
        (FakeTensor((4, 8), device=FakeDevice("cpu")), FakeTensor((8, 4)), {}, TcforgeError, r"a\.cuda\(\)"),
        (FakeTensor((4, 8)), FakeTensor((8, 4), device=FakeDevice("cuda", 1)), {}, TcforgeError, "same device"),
        (FakeTensor((4, 8), strides=(2, 8)), FakeTensor((8, 4)), {}, TcforgeError, "a.contiguous"),
        (FakeTensor((4, 16), F8, strides=(1, 4)), col_major(16, 4), {}, TcforgeError, "float8 a must be row-major"),
        (FakeTensor((4, 8), strides=(1, 4)), FakeTensor((8, 4)), {"variant": "sw16"}, TcforgeError,
         "needs a row-major a"),
        (FakeTensor((4, 8)), FakeTensor((8, 4), strides=(8, 2)), {}, TcforgeError, "b.contiguous"),
        (FakeTensor((4, 16), F8), FakeTensor((16, 4), F8), {}, TcforgeError, "column-major"),
        (
            FakeTensor((4, 8)),
            FakeTensor((8, 4)),
            {"scale_a": FakeTensor((), F32)},
            TcforgeError,
            "float8_e4m3fn inputs only",
        ),
        (FakeTensor((4, 16), F8), col_major(16, 4), {"scale_a": FakeTensor((2,), F32)}, TcforgeError, "one element"),
        (FakeTensor((4, 16), F8), col_major(16, 4), {"scale_a": 2.0}, TcforgeError, "float32 CUDA tensor"),
        (FakeTensor((4, 8)), FakeTensor((8, 4)), {"variant": "fastest"}, TcforgeError, "unknown variant"),
        ([[1.0]], FakeTensor((8, 4)), {}, TcforgeError, "a must be a torch tensor"),
        (FakeTensor((0, 8)), FakeTensor((8, 4)), {}, TcforgeError, "M = 0"),
    ],
)
def test_bad_inputs_say_what_to_change(a: object, b: object, kwargs: dict, err: type, msg: str) -> None:
    with pytest.raises(err, match=msg):
        matmul(a, b, **kwargs)


def test_column_major_a_is_the_kernels_mn_major_a() -> None:
    """A column-major 16-bit a (a.t() contiguous: a transposed view) runs as the kernel's MN-major A operand, with
    its column stride as the leading stride; misaligned or overlapping column strides take the padded copy; `auto`
    then weighs only the tiles that read A MN-major (not the swapped ones)."""
    from tcforge.gemm.build import Build, a_layouts, all_builds
    from tcforge.gemm.codegen import defines, tag
    from tcforge.gemm.variants import VARIANTS

    a = FakeTensor((4096, 512)).t()  # (512, 4096) column-major: strides (1, 512)
    p = plan_matmul(a, FakeTensor((4096, 256)))
    assert (p.m, p.k, p.a_kmajor, p.copy_a, p.b_kmajor) == (512, 4096, False, False, False)
    assert plan_matmul(FakeTensor((4096, 512), BF16).t(), col_major(4096, 256, BF16)).b_kmajor
    assert plan_matmul(FakeTensor((4096, 100)).t(), FakeTensor((4096, 8))).copy_a  # column stride 100: not 16 B
    assert plan_matmul(FakeTensor((8, 64), strides=(1, 0)), FakeTensor((64, 8))).copy_a  # broadcast columns
    assert plan_matmul(FakeTensor((8, 64), strides=(0, 1)), FakeTensor((64, 8))).copy_a  # broadcast rows
    assert plan_matmul(FakeTensor((1, 64)), FakeTensor((64, 8))).a_kmajor  # a single row is row-major
    # small M with a column-major a: the swapped tiles read a K-major, so auto keeps a tile that reads it MN-major
    col = plan_matmul(FakeTensor((4096, 16)).t(), FakeTensor((4096, 4096)))
    assert pick_variant(col, 132).name == "t64"
    row = plan_matmul(FakeTensor((16, 4096)), FakeTensor((4096, 4096)))
    assert pick_variant(row, 132).name == "sw16"
    hoist = VARIANTS["hoist"].config
    d = defines(hoist, "fp16", "fp32", False, a_kmajor=False)
    assert d["A_MN"] == 1 and d["B_KMAJOR"] == 0
    assert "A_MN" not in defines(hoist, "fp16", "fp32", False)
    assert "_am_" in tag(hoist, "fp16", "fp32", False, False) and "_am_" not in tag(hoist, "fp16", "fp32", False)
    assert a_layouts(hoist, "e4m3") == (True,) and a_layouts(VARIANTS["sw16"].config, "fp16") == (True,)
    with pytest.raises(ValueError, match="column-major-a"):
        Build(hoist, "e4m3", "bf16", True, a_kmajor=False)
    cols = [b for b in all_builds() if not b.a_kmajor]
    assert cols and all(b.in_kind != "e4m3" and not b.config.swap_ab and not b.config.cluster_n for b in cols)
    # the clusters along N multicast row slices of a K-major a: a column-major a is refused, saying what to do
    assert a_layouts(VARIANTS["n96c4"].config, "fp16") == (True,)
    with pytest.raises(TcforgeError, match="n96c4.*multicasts row slices.*row-major a.*a.contiguous"):
        plan_matmul(FakeTensor((4096, 96)).t(), FakeTensor((4096, 11008)), variant="n96c4")
    # the swapped clusters along N (sw56n2) multicast b's rows: refused as swapped, reading a K-major
    with pytest.raises(TcforgeError, match=r"sw56n2.*C\^T = B\^T A\^T.*row-major a.*a.contiguous"):
        plan_matmul(FakeTensor((4096, 104)).t(), FakeTensor((4096, 4096)), variant="sw56n2")
    assert len(list(all_builds(a_col=False))) + len(cols) == len(list(all_builds()))


def test_swapped_variant_takes_either_b_layout() -> None:
    """The swapped product reads B as its A operand: K-major from column-major B, MN-major from row-major 16-bit
    B; it tiles over (N, M)."""
    from tcforge.gemm.codegen import defines
    from tcforge.gemm.model import cluster_tiles
    from tcforge.gemm.variants import VARIANTS

    assert not plan_matmul(FakeTensor((16, 64)), FakeTensor((64, 4096)), variant="sw16").b_kmajor
    assert plan_matmul(FakeTensor((16, 64)), col_major(64, 4096, "torch.float16"), variant="sw16").b_kmajor
    cfg = VARIANTS["sw16"].config
    row_b = defines(cfg, "fp16", "fp32", False)
    assert row_b["A_MN"] == 1 and row_b["B_KMAJOR"] == 1
    assert "A_MN" not in defines(cfg, "fp16", "fp32", True)
    assert cluster_tiles(cfg, 16, 4096) == 64  # 64-column tiles of C, one 16-row tile
    assert cluster_tiles(VARIANTS["sw32"].config, 64, 4096) == 128


def test_split_k_only_when_tiles_leave_sms_idle() -> None:
    cfg = VARIANTS["splitk"].config
    assert choose_splits(cfg, 4096, 4096, 4096, "fp16", 132) == 1
    s = choose_splits(cfg, 256, 256, 65536, "fp16", 132)
    assert 2 <= s <= 16
    kt = 65536 // 64
    per = -(-kt // s)
    assert (s - 1) * per < kt  # every split has work
    assert choose_splits(cfg, 64, 64, 128, "fp16", 132) == 1  # too little K to share


def test_persistent_grid_is_one_round_of_resident_clusters() -> None:
    assert persistent_clusters(512, 132, 1, None) == 132
    assert persistent_clusters(512, 132, 2, None) == 66
    # clusters of 4 fit 4 per GPC: 8 GPCs of 16-18 SMs hold 32, not 132 // 4 = 33 (a 33rd would run a second round)
    assert persistent_clusters(512, 132, 4, 32) == 32
    assert persistent_clusters(10, 132, 4, 32) == 10  # fewer work units than resident clusters
    assert persistent_clusters(512, 132, 2, 0) == 66  # failed query: SMs / cluster size


def test_split_reduction_choice_follows_the_load_batches() -> None:
    """The in-kernel reduction's last split reads every slot in batches of loads (fused_split_batches mirrors the
    kernel): one batch for the swapped 16-row tile's two splits, one per slot for the 64x128 tile, 8 per slot beside
    rung 9's 128 accumulators. Where a slice needs many batches and the planes are small, the planes win (measured
    at 16 splits: 256x256x65536, 512x512x16384)."""
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
    """PDL where it was measured faster: every swapped tile, every fp8 launch,
    16-bit t64 with <= 16 k-tiles per CTA (1024^3, 128x4096x1024 split 2); not 16-bit t64 with 32-64 k-tiles per
    CTA on 112-128 CTAs, nor 16-bit rung 9 at 4096^3."""
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


def test_pdl_is_off_for_one_underfilled_round_of_4_cta_swapped_clusters() -> None:
    """A 4-CTA-cluster swapped launch of one round under C4_MIN_FILL of the resident
    clusters ran 3-6 us per GEMM slower with PDL; with most of a round, two rounds or a split it ran faster."""
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
    """An unsplit one-CTA swapped launch on 72-96 of 132 SMs ran 0.4-5.6 us per GEMM
    slower with PDL (16-bit; fp8 from 0.2 us faster to 2.7 us slower), level on 104-112 (fp8 faster with it on 104);
    split launches and the n2 tiles keep it."""
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


def test_the_cublas_mode_each_variant_is_compared_with() -> None:
    """fp8 launches that do not promote are checked against cuBLAS's use_fast_accum=True output (their bits), the
    promoting variants against its default; 16-bit inputs have one cuBLAS mode."""
    assert fast_accum_peer("hoist", "e4m3") and fast_accum_peer("auto", "e4m3") and fast_accum_peer("hoist_ed", "e4m3")
    assert not fast_accum_peer("promote", "e4m3") and not fast_accum_peer("promote_cm1", "e4m3")
    assert not fast_accum_peer("hoist", "bf16") and not fast_accum_peer("promote", "fp16")
    # experiment specs: their variant's mode, unless they override promote
    assert fast_accum_peer("t64@cpa=3", "e4m3") and not fast_accum_peer("promote_cm1@cpa=1", "e4m3")
    assert not fast_accum_peer("hoist@promote=true", "e4m3")
    assert fast_accum_peer("promote@stages=3+promote=false", "e4m3")


def test_l2_promotion_is_128_bytes_for_the_swapped_tiles_and_256_for_the_rest() -> None:
    """The operand maps' L2 promotion by tile: 128 B where a swapped small-M tile streams each weight row 128 bytes
    per k-tile (measured 2-4 % faster than 256 B at 8-32 x 14336 x 4096), 256 B elsewhere; LaunchOptions.l2_promotion
    forces one value for every launch (the bench's --l2-promotion) and refuses anything but None and 0..3."""
    from tcforge.runtime.tensormap import L2_PROMOTION_128B, L2_PROMOTION_256B

    default = LaunchOptions()
    assert l2_promotion(VARIANTS["sw16c4"].config, default) == L2_PROMOTION_128B
    assert l2_promotion(VARIANTS["sw64"].config, default) == L2_PROMOTION_128B
    assert l2_promotion(VARIANTS["hoist_ed"].config, default) == L2_PROMOTION_256B
    assert l2_promotion(VARIANTS["t64"].config, default) == L2_PROMOTION_256B
    forced = LaunchOptions(l2_promotion=1)
    assert l2_promotion(VARIANTS["sw16"].config, forced) == l2_promotion(VARIANTS["hoist"].config, forced) == 1
    with pytest.raises(TcforgeError, match="l2_promotion must be None or 0..3"):
        LaunchOptions(l2_promotion=4)


def test_launch_options_are_explicit_and_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """LaunchOptions replaces module switches: PDL on unless TCFORGE_PDL=0 when the options are made, no poisoning,
    the driver's cluster policy; a plan made with PDL off launches without it; options cannot be changed in place."""
    import dataclasses

    monkeypatch.delenv("TCFORGE_PDL", raising=False)
    assert LaunchOptions() == LaunchOptions(poison_output=False, pdl=True, l2_promotion=None, cluster_policy=0)
    monkeypatch.setenv("TCFORGE_PDL", "0")
    assert not LaunchOptions().pdl
    with pytest.raises(dataclasses.FrozenInstanceError):
        LaunchOptions().pdl = True  # type: ignore[misc]
    p = plan_matmul(FakeTensor((16, 4096)), col_major(4096, 4096, F16))
    assert plan_launch(p, options=LaunchOptions(pdl=True)).pdl
    assert not plan_launch(p, options=LaunchOptions(pdl=False)).pdl


def test_poisoned_result_poisons_the_one_launch_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benches' check before timing fills the launch's outputs with NaN, launches it once and returns its result;
    a failing launch raises."""
    import types

    from tcforge.gemm.check import poisoned_result

    # no GPU (nor torch) needed: a stand-in torch whose synchronize does nothing
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    seen = []

    class Launch:
        def poison_outputs(self) -> None:
            seen.append("poison")

        def __call__(self) -> None:
            seen.append("launch")

        def result(self) -> str:
            return "C"

    class Failing(Launch):
        def __call__(self) -> None:
            raise RuntimeError("launch failed")

    assert poisoned_result(Launch()) == "C" and seen == ["poison", "launch"]
    with pytest.raises(RuntimeError, match="launch failed"):
        poisoned_result(Failing())


def test_the_launch_plan_is_a_pure_function_of_problem_device_and_options() -> None:
    """plan_launch needs no GPU: the same inputs give the same frozen plan; the driver's resident-cluster count (the
    device's `resident`) is asked for only where it sizes the grid, and stream-K runs only with it; two splits of a
    swapped tile run as a pair reduced in the kernel; forced splits keep the variant resolved by M."""
    import dataclasses

    p = plan_matmul(FakeTensor((4096, 4096)), FakeTensor((4096, 4096)))
    lp = plan_launch(p, options=LaunchOptions(pdl=True))
    assert lp == plan_launch(p, options=LaunchOptions(pdl=True))
    assert (lp.variant.name, lp.splits, lp.grid, lp.sk_units, lp.pdl, lp.l2_promotion) == ("hoist_es", 1, 132, 0,
                                                                                            False, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        lp.splits = 2  # type: ignore[misc]
    big = plan_matmul(FakeTensor((5120, 5120)), FakeTensor((5120, 5120)))
    assert (plan_launch(big).variant.name, plan_launch(big).sk_units) == ("streamk", 0)  # no count: no stream-K
    asked = []
    lp = plan_launch(big, Device(132, lambda cfg: asked.append(cfg) or 66))
    assert (lp.sk_units, lp.resident, lp.grid) == (70, 66, 132) and [c.streamk for c in asked] == [True]
    small = plan_matmul(FakeTensor((16, 4096)), col_major(4096, 4096, F16))
    lp = plan_launch(small)
    assert (lp.variant.name, lp.splits, lp.fused, lp.planes, lp.config.split_pair, lp.grid) == ("sw16", 2, True,
                                                                                                False, True, 128)
    assert replace(lp.config, split_pair=False, splitk_fused=False) == VARIANTS["sw16"].config
    assert plan_launch(small, splits=1).variant.name == "t64" and plan_launch(small, Device(114)).grid <= 114
    with pytest.raises(TcforgeError, match="split_mode must be one of"):
        plan_launch(small, split_mode="tree")


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


def test_padded_copies_get_rows_of_128_bytes() -> None:
    """An operand tcforge copies gets rows padded to 128 bytes, whatever its element size and layout (TMA reads rows
    that start only 16-byte aligned at less than half speed: docs/gemm.md "Row alignment")."""
    from tcforge.gemm import api

    assert api.COPY_PITCH_BYTES == 128
    k_major = FakeTensor((300, 1001), "torch.bfloat16")  # K-major a: K 1001 -> k_padded 1008 -> rows of 1024
    assert api._storage_shape(k_major, True, 1008, 8) == (300, 1024)
    assert api._leading(k_major, True, True, 1008, 8) == 1024
    mn_major = FakeTensor((520, 129), "torch.float16")  # MN-major (K, M) rows of 129 -> 192 elements
    assert api._storage_shape(mn_major, False, 520, 8) == (520, 192)
    fp8 = FakeTensor((64, 200), "torch.float8_e4m3fn")  # one-byte elements: 16 per 16 bytes, rows of 256
    assert api._storage_shape(fp8, True, 208, 16) == (64, 256)


def test_rows_that_start_16_byte_aligned_take_128_byte_promotion() -> None:
    """An operand whose rows start only 16-byte aligned gets 128-byte L2 promotion where the launch takes 256 B; the
    swapped tiles' 128 B and any promotion the options force stay."""
    from tcforge.gemm.plan import L2_128B, L2_256B, operand_promotion

    free, forced = LaunchOptions(), LaunchOptions(l2_promotion=L2_256B)
    assert operand_promotion(L2_256B, 2000, free) == L2_128B  # bf16 K = 1000: 2000-byte rows
    assert operand_promotion(L2_256B, 2048, free) == L2_256B
    assert operand_promotion(L2_256B, 2080, free) == L2_256B  # 32-byte aligned
    assert operand_promotion(L2_128B, 2000, free) == L2_128B
    assert operand_promotion(L2_256B, 2000, forced) == L2_256B
    assert operand_promotion(0, 2000, LaunchOptions(l2_promotion=0)) == 0
