"""matmul's input validation runs before torch/CUDA: each bad input is a TcforgeError saying what to change."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.gemm import matmul, plan_matmul


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


def test_auto_takes_the_small_m_tile_up_to_128_rows() -> None:
    assert plan_matmul(FakeTensor((64, 64)), FakeTensor((64, 64))).variant.name == "t64"
    assert plan_matmul(FakeTensor((128, 64)), FakeTensor((64, 64))).variant.name == "t64"
    assert plan_matmul(FakeTensor((129, 64)), FakeTensor((64, 64))).variant.name == "hoist"
    assert plan_matmul(FakeTensor((8, 64)), FakeTensor((64, 64)), variant="persistent").variant.name == "persistent"


def test_auto_takes_the_small_tile_where_rung_9_leaves_half_the_gpu_idle() -> None:
    """`auto` is rung 9 where its cluster tiles keep half the SMs busy; small M and launches with fewer tiles take
    the 64x128 tile (split over K where it fills too few SMs) or a swapped tile (measured: 1024^3
    0.35x -> 0.85x, 256x4096x4096 0.67x -> 0.87x, 16x4096x4096 0.78x -> 1.03x of cuBLAS); an explicit variant is
    never changed."""
    from tcforge.gemm.api import refine_auto

    def plan(m: int, n: int, k: int, variant: str = "auto") -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)), variant=variant)

    assert refine_auto(plan(4096, 4096, 4096), 132).variant.name == "hoist_es"  # no split: rung 9
    assert refine_auto(plan(3072, 3072, 3072), 132).variant.name == "t192"  # 384 tiles of 128x192: 2.9 rounds
    # 1280x4096x4096: 80 units, 14/66 in the second round; stream-K shares them, 260 tiles of 128x160 fill two
    # rounds, 130 of 128x320 one (t320 73.9 us, t160 76.1, stream-K 81.2: gemm_small_s23_t320_rowb.json)
    assert refine_auto(plan(1280, 4096, 4096), 132).variant.name == "t320"
    # 160 units: 28/66 in the third round, stream-K; 260 tiles of 128x320 in two rounds are faster (147.3 / 147.8 us)
    assert refine_auto(plan(2560, 4096, 4096), 132).variant.name == "t320"
    assert refine_auto(plan(3840, 4096, 4096), 132).variant.name != "t320"  # 390 tiles: three rounds
    # two rounds, the second 46/66 full: stream-K for 16-bit with >= SK_LONG_KTILES k-tiles only
    assert refine_auto(plan(1792, 4096, 14336), 132).variant.name == "streamk"  # 224 k-tiles
    assert refine_auto(plan(1792, 4096, 8192), 132).variant.name == "streamk"  # 128
    assert refine_auto(plan(1792, 4096, 4096), 132).variant.name == "hoist_es"  # 64
    assert refine_auto(plan(2048, 6144, 8192), 132).variant.name == "hoist_es"  # 192 units: three rounds
    assert refine_auto(plan(8192, 8192, 8192), 132).variant.name == "hoist_es"  # 1024 units: 34/66, over half
    assert refine_auto(plan(5120, 5120, 5120), 132).variant.name == "streamk"  # 400 units: 6 rounds + 4 units
    assert refine_auto(plan(2560, 2560, 2560), 132).variant.name == "hoist_es"  # 100 units: 34/66
    assert refine_auto(plan(256, 14336, 4096), 132).variant.name == "hoist_es"  # 56 units: no split either
    # one round of rung 9's cluster tiles with M >= CM1_MIN_M: rung 9 without the cluster
    assert refine_auto(plan(2048, 2048, 2048), 132).variant.name == "tuned"  # 64 units of 66
    assert refine_auto(plan(4096, 1024, 1024), 132).variant.name == "tuned"
    assert refine_auto(plan(2048, 4096, 2048), 132).variant.name == "hoist_es"  # 128 units: two rounds
    assert refine_auto(plan(2048, 1024, 8192), 132).variant.name == "hoist"  # 32 units: half a round, split
    # 132 swapped 128x144 tiles: one round, no third slab of the row-major B (t160: 120 tiles, t192: 96)
    assert refine_auto(plan(1536, 1536, 1536), 132).variant.name == "t144s"
    assert refine_auto(plan(6144, 6144, 6144), 132).variant.name == "hoist_es"  # 576 units: 48/66, over half
    assert refine_auto(plan(16384, 16384, 16384), 132).variant.name == "hoist_es"  # 62 rounds + 4: 1.4 % to gain
    assert refine_auto(plan(256, 4096, 4096), 132).variant.name == "t64"  # 128 tiles: no split
    assert refine_auto(plan(1024, 1024, 1024), 132).variant.name == "t64"
    assert refine_auto(plan(512, 512, 512), 132).variant.name == "sw32"  # swapped: 128 tiles of 64x32, one round
    assert refine_auto(plan(64, 4096, 4096), 132).variant.name == "sw32n2"  # 64 clusters of two 64x32 tiles
    assert refine_auto(plan(64, 14336, 4096), 132).variant.name == "t64"  # 112 tiles
    # at most 64 rows no 128-row tile (t144's 114 tiles at 48 x 16384 ran 0.66-0.72x of cuBLAS, t64 0.97-1.04x), and
    # sw64 over t64 where t64's last round is thin (160 tiles at N = 20480), over either B layout
    assert refine_auto(plan(48, 16384, 4096), 132).variant.name == "t64"
    assert refine_auto(plan(48, 20480, 4096), 132).variant.name == "sw64"  # row-major B too (MEASURED_S33_ROWB)
    f16 = "torch.float16"
    for m, n, pick in ((48, 20480, "sw64"), (64, 24576, "sw64"), (64, 16384, "t64"), (64, 28672, "t64"),
                       (32, 20480, "sw32"), (128, 16384, "t144")):  # above 64 rows the 128-row tiles as before
        assert refine_auto(plan_matmul(FakeTensor((m, 4096), f16), col_major(4096, n, f16)), 132).variant.name == pick
    assert refine_auto(plan(16, 64, 65536), 132).variant.name == "sw16"  # 1 tile of 64x16, split 16 ways
    assert refine_auto(plan(512, 512, 256), 132).variant.name == "sw32"  # 4 k-tiles: 128 swapped tiles, no split
    assert refine_auto(plan(16, 4096, 4096), 132).variant.name == "sw16"  # 16 rows: the wgmma's N, not 64 rows
    assert refine_auto(plan(1, 4096, 4096), 132).variant.name == "sw8"  # 7 rows of TMA zero fill, not 15
    # a long N: the fitting swapped width's 128-row tile in 4-CTA clusters where they fill >= 85 % of their last
    # round of the 30 resident clusters (gemm_small_s25c4_*.json) or one round of at most 75 % (launched without
    # PDL: gemm_small_s26_pdlmap*.json), else the 64-row swapped tile
    assert refine_auto(plan(8, 14336, 4096), 132).variant.name == "sw8c4"  # 28 clusters of 30
    assert refine_auto(plan(16, 14336, 4096), 132).variant.name == "sw16c4"
    assert refine_auto(plan(32, 28672, 4096), 132).variant.name == "sw32c4"  # 56: the second round 26 of 30
    assert refine_auto(plan(16, 12288, 4096), 132).variant.name == "sw16"  # 24 of 30: level to 10 % slower
    assert refine_auto(plan(16, 16384, 4096), 132).variant.name == "sw16"  # 32: a second round of 2
    assert refine_auto(plan(16, 11008, 4096), 132).variant.name == "sw16c4"  # 22 of 30, one round
    assert refine_auto(plan(16, 9216, 4096), 132).variant.name == "sw16c4"  # 18 of 30
    assert refine_auto(plan(32, 9216, 4096), 132).variant.name == "sw32c4"  # over t64 (the model ties them)
    assert refine_auto(plan(8, 11008, 4096), 132).variant.name == "sw8c4"
    assert refine_auto(plan(16, 8192, 4096), 132).variant.name == "sw16"  # 16 clusters would split K
    # the 64-column width's 4-CTA build: fp8 only (its 16-bit launches measured level with t64 or slower)
    fp8 = "torch.float8_e4m3fn"
    for m, n, pick in ((64, 11008, "sw64c4"), (48, 9216, "sw64c4"), (64, 14336, "sw64c4"), (1024, 14336, "streamk")):
        p8 = plan_matmul(FakeTensor((m, 4096), fp8), col_major(4096, n, fp8))
        assert refine_auto(p8, 132).variant.name == pick, m  # 1024 rows: no swapped tile's 4-CTA build
    assert refine_auto(plan(64, 11008, 4096), 132).variant.name == "t64"
    # 65-96 rows: the 80- / 96-column swapped 4-CTA builds, every dtype, in any one round of clusters or a nearly full
    # last one (not a thin second: 16384, where the 64-row swapped tile of that width runs); 97-128 rows of a K-major
    # B: the 128x96 or 128x80 tile in clusters along N, the one making more of one round (>= 3/4: n96c4 29 of 30 at
    # 11008, n80c4 29 at 9216 and 28 at 8704; not at 14336, nor at 8192, where t64's 128 tiles run one round), t128
    # over a row-major 16-bit B (whole slabs there)
    for m, n, dtype, col_b, pick in ((65, 11008, F16, False, "sw80c4"), (80, 12288, fp8, True, "sw80c4"),
                                     (96, 9216, BF16, True, "sw96c4"), (88, 28672, F16, True, "sw96c4"),
                                     (96, 16384, F16, True, "sw96"), (97, 11008, fp8, True, "n96c4"),
                                     (128, 9216, BF16, True, "n80c4"), (128, 11008, F16, False, "t128"),
                                     (104, 8704, fp8, True, "n80c4"), (120, 10240, BF16, True, "n96c4"),
                                     (128, 14336, fp8, True, "t128"), (128, 8192, BF16, True, "t64"),
                                     (112, 12288, F16, True, "t128")):
        b = col_major(4096, n, dtype) if col_b else FakeTensor((4096, n), dtype)
        assert refine_auto(plan_matmul(FakeTensor((m, 4096), dtype), b), 132).variant.name == pick, (m, n, dtype)
    # 65-112 rows with N up to 8192 (16384 at 65-96): the 64-row swapped tile as wide as M (sw80 to 80 rows, sw96 to
    # 96, sw112 to 112), split over K where its tiles leave SMs idle; not at 64 rows (sw64), not where M is wider than
    # it (sw80 at 96 rows streams B twice), sw128 at 113-128 rows for fp8 with K >= 8192 and N of 2048-8192 only
    # (else t64 / sw64), and not over the 4-CTA builds' long N; since the twelfth session of 2026-12-01 the n2 tile as
    # wide as half of M where its clusters make one round of 48-66 (N = 3072-4224; MEASURED_S30: 65x4096x4096 fp16
    # 11.3 -> 10.2 us, 128x4096x8192 fp8 12.7 -> 11.0, 124x4096x4096 fp8 7.7 -> 6.7), not at N = 1024 or 8192
    for m, n, k, dtype, col_b, pick in ((65, 4096, 4096, F16, False, "sw40n2"), (80, 4096, 4096, fp8, True, "sw40n2"),
                                        (81, 4096, 4096, BF16, True, "sw48n2"), (96, 8192, 4096, F16, False, "sw96"),
                                        (72, 1024, 14336, fp8, True, "sw80"), (64, 4096, 4096, F16, True, "sw32n2"),
                                        (97, 4096, 4096, BF16, True, "sw56n2"), (113, 4096, 4096, BF16, True, "sw64n2"),
                                        (128, 4096, 8192, fp8, True, "sw64n2"), (120, 2048, 14336, fp8, True, "sw128"),
                                        (128, 4096, 8192, BF16, True, "sw64n2"), (124, 4096, 4096, fp8, True, "sw64n2"),
                                        (128, 1024, 14336, fp8, True, "sw64"),
                                        (80, 11008, 4096, BF16, True, "sw80c4")):
        b = col_major(k, n, dtype) if col_b else FakeTensor((k, n), dtype)
        assert refine_auto(plan_matmul(FakeTensor((m, k), dtype), b), 132).variant.name == pick, (m, n, k, dtype)
    assert refine_auto(plan(16, 14336, 4096, "sw16"), 132).variant.name == "sw16"  # explicit
    assert refine_auto(plan(63, 4096, 4096), 132).variant.name == "sw32n2"
    assert refine_auto(plan(512, 512, 16384), 132).variant.name == "t64"  # 32 tiles split 4 ways, reduced in-kernel
    assert refine_auto(plan(64, 14336, 4096), 132).variant.name == "t64"  # 112 tiles: one round, no split
    assert refine_auto(plan(256, 4096, 4096, "hoist"), 132).variant.name == "hoist"  # explicit
    assert refine_auto(plan(256, 4096, 4096, "hoist"), 132).variant.name == "hoist"
    # rung 9 unsplit stores C under the next tile's k-tiles (hoist_es), fp32 C too; split launches run rung 9
    f32 = plan_matmul(FakeTensor((4096, 4096)), FakeTensor((4096, 4096)), out_dtype=F32)
    assert refine_auto(f32, 132).variant.name == "hoist_es"


def test_auto_runs_sw112_split_as_the_model_predicts_within_its_margin() -> None:
    """97-112 rows x N = 2048-4096 (gemm_small_s29_sw112k.json, _s29_auto112*.json): sw112 runs unsplit where the
    model predicts that faster (fp8 with up to 32 k-tiles: 104x4096x4096 7.4 us against 8.4-9.1 split; 16-bit K <=
    2048-3072), split with more (bf16 104x4096x4096 split 2, N = 2048 x 4096 split 4). `auto` took it there within
    SW112_NARROW_MARGIN of the best prediction; since the twelfth session of 2026-12-01 it runs the n2 tile there
    (sw56n2, unsplit: MEASURED_S30, 104x4096x4096 bf16 12.0 -> 10.6 us, 97x2048x3072 fp8 5.9 -> 4.8), and sw112 where
    that is not weighed (N = 16384: t128; 97-112 x 8192 keeps sw112's rule)."""
    from tcforge.gemm.api import launch_config, refine_auto

    for m, n, k, dtype, splits in ((97, 4096, 2048, F8, 1), (104, 4096, 4096, F8, 1), (112, 4096, 3072, F8, 1),
                                   (97, 2048, 3072, F8, 1), (104, 4096, 4096, BF16, 2), (97, 4096, 2048, BF16, 1),
                                   (112, 2048, 4096, BF16, 4), (104, 4096, 8192, F8, 2)):
        b = col_major(k, n, dtype)
        explicit = plan_matmul(FakeTensor((m, k), dtype), b, variant="sw112")
        assert launch_config(explicit.variant, explicit, 132)[1] == splits, (m, n, k, dtype)
        p = refine_auto(plan_matmul(FakeTensor((m, k), dtype), b), 132)
        assert (p.variant.name, launch_config(p.variant, p, 132)[1]) == ("sw56n2", 1), (m, n, k, dtype)
    p = refine_auto(plan_matmul(FakeTensor((104, 4096), F16), col_major(4096, 16384, F16)), 132)
    assert p.variant.name == "t128"


def test_auto_takes_the_144_column_tile_where_it_fills_a_round_over_k_major_b() -> None:
    """t144 fills one round where no 64-multiple width does (1536^3: 132 tiles against t192's 96); over a K-major B
    (fp8, column-major 16-bit b) it loads exactly its 144 rows and measured 7-13 % faster than t192 there; over an
    MN-major B it loads three whole slabs like t192 and measured the same per k-tile, so over a row-major 16-bit B
    (row-major a) `auto` weighs its swapped form t144s instead (B^T as the MN-major A operand in whole slabs: t144's
    bytes over a K-major B, costed so; 1536^3 0.93 / 0.94x against t160's 0.87 / 0.84x, gemm_small_s37_t144s.json);
    it is not weighed where it would split K."""
    from tcforge.gemm.api import refine_auto
    from tcforge.gemm.variants import VARIANTS, estimate_us

    f8, f16 = "torch.float8_e4m3fn", "torch.float16"

    def pick(m: int, n: int, k: int, dt: str, col: bool) -> str:
        b = col_major(k, n, dt) if col else FakeTensor((k, n), dt)
        return refine_auto(plan_matmul(FakeTensor((m, k), dt), b), 132).variant.name

    assert pick(1536, 1536, 1536, f8, True) == "t144"
    assert pick(1536, 1536, 1536, f16, True) == "t144"
    assert pick(1536, 1536, 1536, f16, False) == "t144s"  # 132 swapped tiles in one round, no third slab
    assert pick(1536, 1536, 6144, f8, True) == "t144"
    assert pick(2560, 2560, 2560, f16, True) == "t144"  # 3 rounds of 144 columns against rung 9's 2 of 256
    # t144 would split K in two; 72 tiles of 128x128 need not, 96 of 64x192 fill more SMs (gemm_small_s23_t64w_*.json:
    # 6.0 against t128's 7.2 us, fp16 10.0 against 11.7)
    assert pick(768, 1536, 1536, f8, True) == "t64x192" and pick(768, 1536, 1536, f16, False) == "t64x192"
    assert pick(512, 2048, 2048, f16, False) == "t64"  # 128 tiles of 64x128: one round (t64x192 12.0 us, t64 9.6)
    # 128 rows: 112 tiles of 128x128 in one round against t64's 224 in two (35.7 against 40.5 us, t160 40.7:
    # gemm_small_s23_t64cm2_rowb.json); at 4096 columns t64's 64 tiles fill one round (13.0 against t128's 14.6)
    # (since the twelfth session of 2026-12-01 the n2 tile at 4096 columns: 10.8 against t64's 12.5, MEASURED_S30)
    assert pick(128, 14336, 4096, f16, False) == "t128" and pick(128, 4096, 4096, f16, False) == "sw64n2"
    assert pick(4096, 4096, 4096, f16, True) == "hoist_es" and pick(3072, 3072, 3072, f16, True) == "t192"
    t144, t192 = VARIANTS["t144"], VARIANTS["t192"]
    assert estimate_us(t144, 1536, 1536, 1536, "fp16", 132, b_kmajor=False) == estimate_us(
        t192, 1536, 1536, 1536, "fp16", 132)  # one round each, the same k-tiles, costed alike
    assert estimate_us(t144, 1536, 1536, 1536, "fp16", 132) < 0.85 * estimate_us(t192, 1536, 1536, 1536, "fp16", 132)


def test_auto_cost_model_ranks_the_tiles_as_measured() -> None:
    """`estimate_us` against the H200: the predicted times lie within 35 % of the measured kernels, and the faster
    tile is the one measured faster."""
    from tcforge.gemm.api import refine_auto
    from tcforge.gemm.variants import VARIANTS, estimate_us

    big, small = VARIANTS["hoist"], VARIANTS["t64"]
    # (shape, dtype, measured rung 9 us incl. split-K reduction, measured t64 us): bench/results/gemm_small_fsk2_d.json
    # (split-K reduced inside the kernel or through planes, whichever fused_split_pays picks)
    measured = [
        ((1024, 1024, 65536), "fp16", 225.5, 305.8),  # long K: rung 9 with split-K wins
        ((1024, 1024, 65536), "e4m3", 121.6, 149.0),
        ((2048, 1024, 8192), "fp16", 64.8, 82.2),
        ((1024, 1024, 1024), "fp16", 18.0, 6.8),
        ((2048, 2048, 2048), "fp16", 30.7, 39.6),
        ((256, 14336, 4096), "fp16", 58.8, 74.1),
        ((512, 512, 16384), "fp16", 25.5, 24.0),
    ]
    for (m, n, k), kind, t_big, t_small in measured:
        e_big, e_small = estimate_us(big, m, n, k, kind, 132), estimate_us(small, m, n, k, kind, 132)
        assert (e_big <= e_small) == (t_big <= t_small), (m, n, k, kind)
        assert abs(e_big / t_big - 1) < 0.35 and abs(e_small / t_small - 1) < 0.35, (m, n, k, kind, e_big, e_small)

    def plan(m: int, n: int, k: int) -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)))

    assert refine_auto(plan(1024, 1024, 65536), 132).variant.name == "hoist"
    assert refine_auto(plan(2048, 1024, 8192), 132).variant.name == "hoist"
    # 1280x4096x4096: rung 9 data-parallel would lose to t64 (2 rounds, the second 14/66 full); stream-K beats both,
    # t160 (two full rounds) beats stream-K
    assert estimate_us(big, 1280, 4096, 4096, "fp16", 132) > estimate_us(small, 1280, 4096, 4096, "fp16", 132)
    sk = estimate_us(big, 1280, 4096, 4096, "fp16", 132, streamk=True)
    assert estimate_us(VARIANTS["t160"], 1280, 4096, 4096, "fp16", 132) < sk < estimate_us(small, 1280, 4096, 4096,
                                                                                              "fp16", 132)
    # and t320 (one round of 130 tiles) beats t160 (gemm_small_s23_t320_rowb.json: 73.9 against 76.1 us)
    assert estimate_us(VARIANTS["t320"], 1280, 4096, 4096, "fp16", 132) < estimate_us(VARIANTS["t160"], 1280, 4096,
                                                                                      4096, "fp16", 132)
    assert refine_auto(plan(1280, 4096, 4096), 132).variant.name == "t320"



# kernel device microseconds measured on the H200 in one run (bench/results/gemm_small_mid.json,
# gemm_small_bigtail.json: torch.profiler, fp16->fp32 with row-major B and e4m3->bf16) for rung 9, its stream-K
# build and t192
MEASURED_MID_TAIL = {
    ((1536, 1536, 1536), "fp16", "row"): {"hoist": 20.5, "streamk": 20.5, "t192": 16.2},
    ((1536, 1536, 1536), "e4m3", "col"): {"hoist": 12.2, "streamk": 12.4, "t192": 9.4},
    ((2048, 2048, 2048), "fp16", "row"): {"hoist": 30.8, "streamk": 30.7, "t192": 38.6},
    ((2048, 2048, 2048), "e4m3", "col"): {"hoist": 16.6, "streamk": 16.7, "t192": 19.9},
    ((2560, 2560, 2560), "fp16", "row"): {"hoist": 67.4, "streamk": 66.2, "t192": 73.9},
    ((2560, 2560, 2560), "e4m3", "col"): {"hoist": 33.3, "streamk": 37.5, "t192": 36.0},
    ((3072, 3072, 3072), "fp16", "row"): {"hoist": 118.4, "streamk": 108.6, "t192": 101.6},
    ((3072, 3072, 3072), "e4m3", "col"): {"hoist": 57.8, "streamk": 58.6, "t192": 51.5},
    ((1280, 4096, 4096), "fp16", "row"): {"hoist": 96.2, "streamk": 81.6, "t192": 81.7},
    ((1280, 4096, 4096), "e4m3", "col"): {"hoist": 46.2, "streamk": 46.0, "t192": 40.1},
    ((4096, 4096, 4096), "fp16", "row"): {"hoist": 229.5, "streamk": 235.1, "t192": 253.7},
    ((4096, 4096, 4096), "e4m3", "col"): {"hoist": 117.6, "streamk": 123.7, "t192": 129.1},
    ((5120, 5120, 5120), "fp16", "row"): {"hoist": 466.0, "streamk": 432.9, "t192": 474.4},
    ((5120, 5120, 5120), "e4m3", "col"): {"hoist": 242.7, "streamk": 228.3, "t192": 238.3},
    ((6144, 6144, 6144), "fp16", "row"): {"hoist": 742.8, "streamk": 730.1, "t192": 772.7},
    ((6144, 6144, 6144), "e4m3", "col"): {"hoist": 380.9, "streamk": 383.5, "t192": 385.5},
    ((8192, 8192, 8192), "fp16", "row"): {"hoist": 1743.5, "streamk": 1687.9, "t192": 1771.0},
    ((8192, 8192, 8192), "e4m3", "col"): {"hoist": 879.4, "streamk": 874.7, "t192": 914.2},
}


def test_column_major_a_is_the_kernels_mn_major_a() -> None:
    """A column-major 16-bit a (a.t() contiguous: a transposed view) runs as the kernel's MN-major A operand, with
    its column stride as the leading stride; misaligned or overlapping column strides take the padded copy; `auto`
    then weighs only the tiles that read A MN-major (not the swapped ones)."""
    from tcforge.gemm.api import refine_auto
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
    assert refine_auto(col, 132).variant.name == "t64"
    row = plan_matmul(FakeTensor((16, 4096)), FakeTensor((4096, 4096)))
    assert refine_auto(row, 132).variant.name == "sw16"
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
    from tcforge.gemm.variants import VARIANTS, cluster_tiles

    assert not plan_matmul(FakeTensor((16, 64)), FakeTensor((64, 4096)), variant="sw16").b_kmajor
    assert plan_matmul(FakeTensor((16, 64)), col_major(64, 4096, "torch.float16"), variant="sw16").b_kmajor
    cfg = VARIANTS["sw16"].config
    row_b = defines(cfg, "fp16", "fp32", False)
    assert row_b["A_MN"] == 1 and row_b["B_KMAJOR"] == 1
    assert "A_MN" not in defines(cfg, "fp16", "fp32", True)
    assert cluster_tiles(cfg, 16, 4096) == 64  # 64-column tiles of C, one 16-row tile
    assert cluster_tiles(VARIANTS["sw32"].config, 64, 4096) == 128


# kernel device microseconds (torch.profiler, split-K reduction included) of small-M and small launches, one H200
# run (bench/results/gemm_small_fsk2_a..d.json: `python3 bench/gemm_small.py --b-col ...` for column-major B as
# nn.Linear's weight.t() and every fp8 B, row-major 16-bit B without --b-col), fp16->fp32, bf16->bf16 and
# e4m3->bf16; a split launch as `auto` reduces it (inside the kernel or through planes: fused_split_pays). Points
# with M <= 64 and N = 4096 or 14336 re-measured with the 8-column swapped tile in one later run (sw8, sw16, sw32,
# sw64, t64: gemm_small_sw8_a..c.json), and those with N = 4096 once more after two-way splits of the swapped tiles
# moved to DSMEM pairs (gemm_small_pair_a..b.json); each run replaced those variants' figures there
MEASURED_SMALL_M = {
    ((1, 4096, 4096), "bf16", "col"): {"t64": 12.0, "t64_sk": 14.1, "sw16": 8.6, "sw32": 10.8, "sw64": 12.9,
                                       "sw8": 8.5},
    ((1, 4096, 4096), "e4m3", "col"): {"t64": 8.6, "t64_sk": 10.9, "sw16": 6.5, "sw32": 8.5, "sw64": 10.3, "sw8": 6.0},
    ((1, 4096, 4096), "fp16", "col"): {"t64": 12.9, "t64_sk": 16.0, "sw16": 9.5, "sw32": 13.0, "sw64": 17.1,
                                       "sw8": 8.5},
    ((8, 4096, 4096), "bf16", "col"): {"sw8": 8.5, "sw16": 8.6, "sw32": 11.6, "sw64": 15.5, "t64": 12.1},
    ((8, 4096, 4096), "e4m3", "col"): {"sw8": 5.9, "sw16": 6.1, "sw32": 7.0, "sw64": 8.5, "t64": 8.0},
    ((8, 4096, 4096), "fp16", "col"): {"sw8": 8.7, "sw16": 8.9, "sw32": 11.1, "sw64": 14.9, "t64": 12.8},
    ((16, 4096, 4096), "bf16", "col"): {"t64": 12.2, "t64_sk": 13.2, "sw16": 8.8, "sw32": 10.4, "sw64": 15.5,
                                        "sw8": 13.0},
    ((16, 4096, 4096), "e4m3", "col"): {"t64": 8.3, "t64_sk": 10.1, "sw16": 6.3, "sw32": 6.7, "sw64": 8.5, "sw8": 7.7},
    ((16, 4096, 4096), "fp16", "col"): {"t64": 11.6, "t64_sk": 14.9, "sw16": 8.8, "sw32": 9.3, "sw64": 12.5,
                                        "sw8": 12.9},
    ((32, 4096, 4096), "bf16", "col"): {"t64": 12.7, "t64_sk": 13.7, "sw16": 13.1, "sw32": 9.6, "sw64": 14.2,
                                        "sw8": 23.7},
    ((32, 4096, 4096), "e4m3", "col"): {"t64": 8.9, "t64_sk": 9.9, "sw16": 7.8, "sw32": 6.7, "sw64": 8.7, "sw8": 13.6},
    ((32, 4096, 4096), "fp16", "col"): {"t64": 13.2, "t64_sk": 14.0, "sw16": 13.2, "sw32": 9.3, "sw64": 14.2,
                                        "sw8": 24.0},
    ((64, 4096, 4096), "bf16", "col"): {"t64": 10.7, "t64_sk": 11.6, "sw16": 24.1, "sw32": 13.3, "sw64": 10.1,
                                        "sw8": 45.3},
    ((64, 4096, 4096), "e4m3", "col"): {"t64": 8.2, "t64_sk": 9.2, "sw16": 13.7, "sw32": 7.9, "sw64": 7.1, "sw8": 24.8},
    ((64, 4096, 4096), "fp16", "col"): {"t64": 10.9, "t64_sk": 11.7, "sw16": 24.3, "sw32": 13.7, "sw64": 10.2,
                                        "sw8": 45.6},
    ((128, 4096, 4096), "bf16", "col"): {"t64": 12.7, "t64_sk": 16.1, "sw16": 46.0, "sw32": 24.7, "sw64": 14.8},
    ((128, 4096, 4096), "e4m3", "col"): {"t64": 9.1, "t64_sk": 11.1, "sw16": 25.5, "sw32": 13.8, "sw64": 8.9},
    ((128, 4096, 4096), "fp16", "col"): {"t64": 13.2, "t64_sk": 16.7, "sw16": 46.2, "sw32": 25.1, "sw64": 15.4},
    ((256, 4096, 4096), "e4m3", "col"): {"hoist": 20.1, "t64": 10.3, "sw16": 48.2, "sw32": 25.4, "sw64": 15.7},
    ((256, 4096, 4096), "fp16", "col"): {"hoist": 27.8, "t64": 20.8, "sw16": 89.1, "sw32": 47.0, "sw64": 28.8},
    ((1, 14336, 4096), "e4m3", "col"): {"sw8": 17.8, "sw16": 17.9, "sw32": 18.5, "sw64": 24.4, "t64": 18.9},
    ((1, 14336, 4096), "fp16", "col"): {"sw8": 34.1, "sw16": 33.5, "sw32": 38.2, "sw64": 48.9, "t64": 36.0},
    ((8, 14336, 4096), "e4m3", "col"): {"sw8": 18.1, "sw16": 18.1, "sw32": 18.1, "sw64": 22.1, "t64": 18.5},
    ((8, 14336, 4096), "fp16", "col"): {"sw8": 34.0, "sw16": 34.3, "sw32": 34.2, "sw64": 41.2, "t64": 34.9},
    ((16, 14336, 4096), "e4m3", "col"): {"hoist": 26.0, "t64": 18.2, "sw16": 18.3, "sw32": 18.2, "sw64": 21.5,
                                         "sw8": 25.8},
    ((16, 14336, 4096), "fp16", "col"): {"hoist": 56.6, "t64": 34.0, "sw16": 34.0, "sw32": 33.4, "sw64": 39.8,
                                         "sw8": 47.9},
    ((64, 14336, 4096), "e4m3", "col"): {"hoist": 28.6, "t64": 18.1, "sw16": 42.9, "sw32": 26.9, "sw64": 19.3,
                                         "sw8": 82.0},
    ((64, 14336, 4096), "fp16", "col"): {"hoist": 55.8, "t64": 35.2, "sw16": 79.3, "sw32": 52.5, "sw64": 36.1,
                                         "sw8": 154.4},
    ((256, 14336, 4096), "e4m3", "col"): {"hoist": 32.6, "t64": 42.2, "t64_sk": 40.6, "sw16": 161.7, "sw32": 83.5,
                                          "sw64": 55.7},
    ((256, 14336, 4096), "fp16", "col"): {"hoist": 61.2, "t64": 75.3, "sw16": 302.4, "sw32": 159.0, "sw64": 101.3},
    ((512, 512, 512), "fp16", "row"): {"t64": 6.1, "t64_sk": 6.1, "sw16": 6.1, "sw32": 3.9, "sw64": 5.5},
    ((1, 4096, 4096), "fp16", "row"): {"t64": 13.0, "t64_sk": 15.6, "sw16": 9.7, "sw32": 13.0, "sw64": 16.6,
                                       "sw8": 8.4},
    ((8, 4096, 4096), "fp16", "row"): {"sw8": 8.5, "sw16": 8.8, "sw32": 10.0, "sw64": 12.7, "t64": 11.6},
    ((16, 4096, 4096), "fp16", "row"): {"t64": 13.0, "t64_sk": 14.8, "sw16": 8.8, "sw32": 10.2, "sw64": 15.5,
                                        "sw8": 12.9},
    ((32, 4096, 4096), "fp16", "row"): {"t64": 13.2, "t64_sk": 13.3, "sw16": 13.0, "sw32": 9.0, "sw64": 13.9,
                                        "sw8": 23.8},
    ((64, 4096, 4096), "fp16", "row"): {"t64": 10.6, "t64_sk": 11.7, "sw16": 23.9, "sw32": 13.2, "sw64": 10.3,
                                        "sw8": 44.7},
    ((128, 4096, 4096), "fp16", "row"): {"t64": 13.6, "t64_sk": 16.4, "sw16": 45.2, "sw32": 23.7, "sw64": 15.5},
    ((8, 14336, 4096), "fp16", "row"): {"sw8": 33.2, "sw16": 33.1, "sw32": 35.2, "sw64": 41.8, "t64": 34.8},
    ((16, 14336, 4096), "fp16", "row"): {"t64": 33.8, "t64_sk": 35.6, "sw16": 33.1, "sw32": 34.2, "sw64": 40.9,
                                         "sw8": 46.4},
    ((64, 14336, 4096), "fp16", "row"): {"t64": 33.2, "t64_sk": 33.0, "sw16": 78.4, "sw32": 49.0, "sw64": 36.6,
                                         "sw8": 150.6},
    ((128, 14336, 4096), "fp16", "row"): {"t64": 42.3, "t64_sk": 44.2, "sw16": 151.9, "sw32": 80.8, "sw64": 59.2},
    ((256, 14336, 4096), "fp16", "row"): {"hoist": 58.8, "t64": 74.1, "t64_sk": 73.7},
}
# launches that split K (long K, few tiles) or nearly do, same run
MEASURED_LONG_K = {
    ((256, 256, 65536), "e4m3", "col"): {"hoist": 27.4, "t64": 18.5, "t64_sk": 19.4},
    ((512, 512, 8192), "e4m3", "col"): {"hoist": 15.2, "t64": 9.6, "t64_sk": 10.6},
    ((512, 512, 16384), "e4m3", "col"): {"hoist": 18.1, "t64": 13.9, "t64_sk": 15.6},
    ((1024, 1024, 1024), "e4m3", "col"): {"hoist": 13.7, "t64": 4.8, "t64_sk": 4.9},
    ((2048, 1024, 8192), "e4m3", "col"): {"hoist": 39.3, "t64": 38.5, "t64_sk": 41.5},
    ((1024, 1024, 16384), "e4m3", "col"): {"hoist": 40.4, "t64": 37.6, "t64_sk": 37.3},
    ((1024, 1024, 65536), "e4m3", "col"): {"hoist": 121.6, "t64": 149.0, "t64_sk": 145.0},
    ((2048, 2048, 2048), "e4m3", "col"): {"hoist": 16.4, "t64": 21.6, "t64_sk": 23.7},
    ((256, 256, 65536), "fp16", "row"): {"hoist": 46.6, "t64": 33.3, "t64_sk": 32.3},
    ((512, 512, 8192), "fp16", "row"): {"hoist": 18.0, "t64": 13.5, "t64_sk": 14.3},
    ((512, 512, 16384), "fp16", "row"): {"hoist": 25.5, "t64": 24.0, "t64_sk": 25.5},
    ((1024, 1024, 1024), "fp16", "row"): {"hoist": 18.0, "t64": 6.8, "t64_sk": 6.8},
    ((2048, 1024, 8192), "fp16", "row"): {"hoist": 64.8, "t64": 82.2, "t64_sk": 78.0},
    ((1024, 1024, 16384), "fp16", "row"): {"hoist": 65.6, "t64": 75.6, "t64_sk": 74.4},
    ((1024, 1024, 65536), "fp16", "row"): {"hoist": 225.5, "t64": 305.8, "t64_sk": 283.8},
    ((2048, 2048, 2048), "fp16", "row"): {"hoist": 30.7, "t64": 39.6, "t64_sk": 41.4},
}


# the 128x144 tile beside the others, kernel device microseconds of one H200 session (bench/results/
# gemm_small_t144a.json, gemm_small_t144b.json: row-major 16-bit B and fp8; gemm_small_t144c.json: --b-col); where a
# point was measured before, the earlier tables keep their figures (MEASURED merges this table first)
MEASURED_T144 = {
    ((1024, 1024, 1024), "e4m3", "col"): {"hoist": 13.6, "streamk": 12.0, "t192": 10.6, "t144": 9.9, "t64": 4.7},
    ((1024, 1024, 1024), "fp16", "row"): {"hoist": 18.1, "streamk": 17.6, "t192": 12.8, "t144": 12.8, "t64": 6.7},
    ((768, 1536, 1536), "e4m3", "col"): {"hoist": 15.5, "streamk": 14.0, "t192": 11.7, "t144": 10.6, "t64": 9.1},
    ((768, 1536, 1536), "fp16", "col"): {"hoist": 19.1, "streamk": 21.5, "t192": 14.8, "t144": 13.2, "t64": 15.1},
    ((768, 1536, 1536), "fp16", "row"): {"hoist": 19.1, "streamk": 21.1, "t192": 14.8, "t144": 14.9, "t64": 14.6},
    ((1408, 1408, 1408), "e4m3", "col"): {"hoist": 11.8, "streamk": 12.1, "t192": 8.9, "t144": 7.6, "t64": 8.8},
    ((1408, 1408, 1408), "fp16", "col"): {"hoist": 19.0, "streamk": 19.2, "t192": 14.5, "t144": 12.4, "t64": 14.6},
    ((1408, 1408, 1408), "fp16", "row"): {"hoist": 19.1, "streamk": 19.3, "t192": 14.6, "t144": 13.3, "t64": 14.1},
    ((1536, 1536, 1536), "e4m3", "col"): {"hoist": 12.4, "t192": 9.3, "t144": 8.7},
    ((1536, 1536, 1536), "fp16", "col"): {"hoist": 20.6, "streamk": 20.5, "t192": 16.0, "t144": 14.3, "t64": 21.8},
    ((1536, 1536, 1536), "fp16", "row"): {"hoist": 20.7, "t192": 16.4, "t144": 16.2},
    ((3072, 1536, 1536), "e4m3", "col"): {"hoist": 21.4, "streamk": 19.8, "t192": 16.6, "t144": 15.5, "t64": 20.6},
    ((1536, 1536, 3072), "e4m3", "col"): {"hoist": 19.1, "streamk": 19.5, "t192": 15.4, "t144": 14.5, "t64": 20.2},
    ((3072, 1536, 1536), "fp16", "col"): {"hoist": 38.7, "streamk": 33.0, "t192": 30.3, "t144": 27.8, "t64": 39.3},
    ((3072, 1536, 1536), "fp16", "row"): {"hoist": 39.1, "streamk": 33.2, "t192": 30.4, "t144": 32.6, "t64": 36.4},
    ((1536, 1536, 3072), "fp16", "row"): {"hoist": 34.2, "streamk": 34.4, "t192": 28.5, "t144": 28.5, "t64": 36.6},
    ((2048, 2048, 2048), "e4m3", "col"): {"hoist": 16.9, "streamk": 16.6, "t192": 19.8, "t144": 18.5, "t64": 22.0},
    ((2048, 2048, 2048), "fp16", "row"): {"hoist": 31.8, "streamk": 30.4, "t192": 37.3, "t144": 36.8, "t64": 39.0},
    ((1536, 1536, 6144), "e4m3", "col"): {"hoist": 37.2, "t192": 33.0, "t144": 27.6},
    ((1536, 1536, 6144), "fp16", "col"): {"hoist": 64.8, "streamk": 65.0, "t192": 54.2, "t144": 49.9, "t64": 74.5},
    ((1536, 1536, 6144), "fp16", "row"): {"hoist": 65.6, "t192": 57.0, "t144": 55.0},
    ((2560, 2560, 2560), "e4m3", "col"): {"hoist": 37.5, "t192": 38.4, "t144": 37.0},
    ((2560, 2560, 2560), "fp16", "col"): {"hoist": 66.1, "streamk": 65.7, "t192": 69.3, "t144": 61.0, "t64": 83.5},
    ((2560, 2560, 2560), "fp16", "row"): {"hoist": 68.2, "t192": 73.6, "t144": 68.9},
    ((1536, 4096, 4096), "e4m3", "col"): {"hoist": 55.6, "t192": 47.4, "t144": 53.4},
    ((1536, 4096, 4096), "fp16", "row"): {"hoist": 102.9, "t192": 89.5, "t144": 103.4},
    ((3072, 3072, 3072), "e4m3", "col"): {"hoist": 62.8, "t192": 56.1, "t144": 56.8},
    ((3072, 3072, 3072), "fp16", "col"): {"hoist": 115.1, "streamk": 105.3, "t192": 98.6, "t144": 104.2, "t64": 130.8},
    ((3072, 3072, 3072), "fp16", "row"): {"hoist": 119.2, "t192": 103.8, "t144": 113.0},
}

# the 128x128 tile beside the others (same session, bench/results/gemm_small_smallm_t128a.json / _t128b.json and
# gemm_small_t128c.json / _t128d.json, the b files with --b-col); merged last: its figures replace earlier ones
MEASURED_T128 = {
    ((768, 1536, 1536), "e4m3", "col"): {"hoist": 15.5, "streamk": 14.2, "t192": 11.6, "t144": 10.7, "t128": 7.5,
                                        "t64": 9.0},
    ((768, 1536, 1536), "fp16", "col"): {"hoist": 19.1, "streamk": 21.2, "t192": 14.9, "t144": 13.4, "t128": 11.7,
                                        "t64": 15.0},
    ((768, 1536, 1536), "fp16", "row"): {"hoist": 19.0, "streamk": 21.0, "t192": 14.9, "t144": 14.6, "t128": 11.8,
                                        "t64": 14.3},
    ((128, 4096, 4096), "e4m3", "col"): {"hoist": 15.4, "t192": 14.6, "t144": 12.3, "t128": 10.7, "t64": 9.0},
    ((128, 4096, 4096), "fp16", "col"): {"hoist": 20.9, "t192": 21.4, "t144": 17.0, "t128": 14.7, "t64": 12.9},
    ((128, 4096, 4096), "fp16", "row"): {"hoist": 20.8, "t192": 20.0, "t144": 18.7, "t128": 14.8, "t64": 13.4},
    ((2048, 1024, 1024), "e4m3", "col"): {"hoist": 15.1, "streamk": 13.6, "t192": 7.6, "t144": 6.7, "t128": 6.5,
                                        "t64": 7.7},
    ((2048, 1024, 1024), "fp16", "col"): {"hoist": 18.7, "streamk": 18.6, "t192": 12.3, "t144": 10.5, "t128": 10.3,
                                        "t64": 12.2},
    ((2048, 1024, 1024), "fp16", "row"): {"hoist": 18.4, "streamk": 18.8, "t192": 11.8, "t144": 13.1, "t128": 10.3,
                                        "t64": 11.7},
    ((1408, 1408, 1408), "e4m3", "col"): {"hoist": 11.7, "streamk": 12.1, "t192": 8.9, "t144": 7.6, "t128": 7.4,
                                        "t64": 8.9},
    ((1408, 1408, 1408), "fp16", "col"): {"hoist": 19.2, "streamk": 19.3, "t192": 14.4, "t144": 12.6, "t128": 12.3,
                                        "t64": 15.0},
    ((1408, 1408, 1408), "fp16", "row"): {"hoist": 19.2, "streamk": 19.3, "t192": 14.6, "t144": 13.3, "t128": 12.5,
                                        "t64": 14.5},
    ((256, 4096, 4096), "e4m3", "col"): {"hoist": 19.9, "t192": 15.1, "t144": 13.6, "t128": 13.1, "t64": 10.6},
    ((256, 4096, 4096), "fp16", "col"): {"hoist": 30.6, "t192": 26.4, "t144": 24.3, "t128": 22.6, "t64": 19.7},
    ((256, 4096, 4096), "fp16", "row"): {"hoist": 38.0, "t192": 25.4, "t144": 24.7, "t128": 21.6, "t64": 19.8},
    ((1024, 2048, 2048), "e4m3", "col"): {"hoist": 17.5, "streamk": 17.8, "t192": 11.1, "t144": 10.2, "t128": 9.9,
                                        "t64": 11.8},
    ((1024, 2048, 2048), "fp16", "col"): {"hoist": 26.1, "streamk": 24.5, "t192": 19.3, "t144": 17.4, "t128": 17.0,
                                        "t64": 20.5},
    ((1024, 2048, 2048), "fp16", "row"): {"hoist": 23.8, "streamk": 24.3, "t192": 19.5, "t144": 19.2, "t128": 17.0,
                                        "t64": 19.8},
    ((4096, 1024, 1024), "e4m3", "col"): {"hoist": 10.8, "streamk": 10.9, "t192": 13.2, "t144": 11.5, "t128": 11.1,
                                        "t64": 13.8},
    ((4096, 1024, 1024), "fp16", "col"): {"hoist": 18.3, "streamk": 18.3, "t192": 22.1, "t144": 20.2, "t128": 19.1,
                                        "t64": 23.4},
    ((4096, 1024, 1024), "fp16", "row"): {"hoist": 18.4, "streamk": 18.4, "t192": 21.9, "t144": 22.8, "t128": 18.5,
                                        "t64": 21.9},
    ((384, 4096, 4096), "e4m3", "col"): {"hoist": 23.0, "t192": 17.1, "t144": 14.9, "t128": 14.6, "t64": 17.6},
    ((384, 4096, 4096), "fp16", "row"): {"hoist": 35.9, "t192": 31.2, "t144": 31.5, "t128": 27.9, "t64": 34.1},
    ((512, 4096, 4096), "e4m3", "col"): {"hoist": 23.1, "t192": 18.6, "t144": 17.0, "t128": 16.9, "t64": 20.2},
    ((512, 4096, 4096), "fp16", "col"): {"hoist": 38.5, "t192": 36.7, "t144": 33.0, "t128": 33.8, "t64": 39.2},
    ((512, 4096, 4096), "fp16", "row"): {"hoist": 37.8, "t192": 37.0, "t144": 35.9, "t128": 32.9, "t64": 44.7},
    ((2048, 2048, 2048), "e4m3", "col"): {"hoist": 17.2, "streamk": 17.4, "t192": 20.1, "t144": 18.6, "t128": 18.3,
                                        "t64": 22.3},
    ((2048, 2048, 2048), "fp16", "col"): {"hoist": 31.8, "streamk": 31.1, "t192": 37.6, "t144": 34.0, "t128": 33.2,
                                        "t64": 41.2},
    ((2048, 2048, 2048), "fp16", "row"): {"hoist": 31.9, "streamk": 30.5, "t192": 37.9, "t144": 37.3, "t128": 33.2,
                                        "t64": 42.8},
    ((256, 14336, 4096), "e4m3", "col"): {"hoist": 32.6, "t192": 41.2, "t144": 39.4, "t128": 39.6, "t64": 43.4},
    ((256, 14336, 4096), "fp16", "col"): {"hoist": 59.0, "t192": 76.5, "t144": 68.8, "t128": 64.2, "t64": 78.4},
    ((256, 14336, 4096), "fp16", "row"): {"hoist": 59.7, "t192": 77.1, "t144": 71.7, "t128": 63.1, "t64": 74.6},
    ((2048, 1024, 8192), "e4m3", "col"): {"hoist": 48.8, "streamk": 46.9, "t192": 38.7, "t144": 35.9, "t128": 34.4,
                                        "t64": 42.1},
    ((2048, 1024, 8192), "fp16", "col"): {"hoist": 67.3, "streamk": 67.8, "t192": 70.2, "t144": 66.2, "t128": 62.9,
                                        "t64": 81.4},
    ((2048, 1024, 8192), "fp16", "row"): {"hoist": 65.7, "streamk": 69.6, "t192": 73.4, "t144": 80.2, "t128": 65.3,
                                        "t64": 79.2},
}


# rung 9 with and without the cluster at one- to four-round shapes (bench/results/gemm_small_s22_cm.json, fp16->fp32
# with row-major B and e4m3->bf16; `auto` ran in the same run, its kernel's time joins that variant's: the mean)
MEASURED_CM1 = {
    ((2048, 2048, 2048), "fp16", "row"): {"hoist": 30.4, "tuned": 28.9, "streamk": 30.0, "t192": 37.4, "t128": 32.5},
    ((2048, 2048, 2048), "e4m3", "col"): {"hoist": 16.9, "tuned": 15.8, "streamk": 16.9, "t192": 19.9, "t128": 17.9},
    ((2560, 2560, 2560), "fp16", "row"): {"hoist": 66.9, "tuned": 65.3, "streamk": 65.4, "t192": 72.5, "t128": 72.5},
    ((2560, 2560, 2560), "e4m3", "col"): {"t144": 33.3, "hoist": 33.6, "tuned": 33.6, "streamk": 36.9, "t192": 36.0,
                                          "t128": 36.3},
    ((3072, 2048, 2048), "fp16", "row"): {"t192": 47.1, "hoist": 53.3, "tuned": 52.7, "streamk": 53.5, "t128": 50.7},
    ((3072, 2048, 2048), "e4m3", "col"): {"t192": 26.0, "hoist": 27.6, "tuned": 26.6, "streamk": 31.3, "t128": 27.0},
    ((4096, 2048, 2048), "fp16", "row"): {"hoist": 60.5, "tuned": 61.3, "streamk": 66.4, "t192": 65.5, "t128": 67.6},
    ((4096, 2048, 2048), "e4m3", "col"): {"hoist": 31.7, "tuned": 31.7, "streamk": 36.9, "t192": 33.9, "t128": 34.6},
    ((2048, 4096, 2048), "fp16", "row"): {"hoist": 63.3, "tuned": 61.8, "streamk": 65.5, "t192": 65.2, "t128": 66.7},
    ((2048, 4096, 2048), "e4m3", "col"): {"hoist": 32.2, "tuned": 31.6, "streamk": 37.2, "t192": 33.9, "t128": 34.5},
    ((2048, 2048, 4096), "fp16", "row"): {"hoist": 57.8, "tuned": 56.2, "streamk": 56.4, "t192": 71.1, "t128": 63.3},
    ((2048, 2048, 4096), "e4m3", "col"): {"hoist": 29.9, "tuned": 29.4, "streamk": 30.5, "t192": 36.0, "t128": 33.3},
    ((4096, 1024, 1024), "fp16", "row"): {"hoist": 18.0, "tuned": 16.9, "streamk": 17.9, "t192": 22.3, "t128": 18.3},
    ((4096, 1024, 1024), "e4m3", "col"): {"t128": 10.7, "hoist": 10.5, "tuned": 9.7, "streamk": 10.6, "t192": 12.8},
    ((1024, 4096, 4096), "fp16", "row"): {"hoist": 58.6, "tuned": 56.5, "streamk": 58.5, "t192": 71.0, "t128": 63.0},
    ((1024, 4096, 4096), "e4m3", "col"): {"hoist": 30.4, "tuned": 30.4, "streamk": 35.7, "t192": 38.5, "t128": 34.4},
    ((512, 14336, 4096), "fp16", "row"): {"hoist": 109.0, "tuned": 110.3, "streamk": 110.3, "t192": 120.4,
                                          "t128": 119.5},
    ((512, 14336, 4096), "e4m3", "col"): {"hoist": 62.7, "tuned": 62.9, "streamk": 69.7, "t192": 63.3, "t128": 66.8},
    ((256, 14336, 4096), "fp16", "row"): {"hoist": 59.4, "tuned": 57.6, "streamk": 57.6, "t192": 76.2, "t128": 63.3},
    ((256, 14336, 4096), "e4m3", "col"): {"hoist": 33.5, "tuned": 32.9, "streamk": 33.0, "t192": 37.9, "t128": 34.7},
    ((4096, 4096, 4096), "fp16", "row"): {"hoist": 225.7, "tuned": 227.9, "streamk": 228.1, "t192": 253.3,
                                          "t128": 250.2},
    ((4096, 4096, 4096), "e4m3", "col"): {"hoist": 122.0, "tuned": 122.0, "streamk": 130.0, "t192": 132.0,
                                          "t128": 131.2},
    ((8192, 8192, 8192), "fp16", "row"): {"hoist": 1704.9, "tuned": 1761.9, "streamk": 1690.7, "t192": 1705.4,
                                          "t128": 1931.4},
    ((8192, 8192, 8192), "e4m3", "col"): {"hoist": 870.0, "tuned": 888.8, "streamk": 881.4, "t192": 926.5,
                                          "t128": 963.9},
}

# the same with column-major B (bench/results/gemm_small_s22_cm_colb.json, fp16->fp32, `--b-col`)
MEASURED_CM1_COLB = {
    ((2048, 2048, 2048), "fp16", "col"): {"tuned": 29.4, "hoist": 32.6, "streamk": 30.4, "t192": 38.0, "t144": 34.2,
                                          "t128": 32.1},
    ((4096, 1024, 1024), "fp16", "col"): {"tuned": 17.2, "hoist": 18.1, "streamk": 18.0, "t192": 22.2, "t144": 19.6,
                                          "t128": 18.5},
    ((2048, 2048, 4096), "fp16", "col"): {"tuned": 57.5, "hoist": 58.4, "streamk": 57.3, "t192": 72.2, "t144": 66.4,
                                          "t128": 66.5},
    ((1024, 4096, 4096), "fp16", "col"): {"tuned": 58.1, "hoist": 60.6, "streamk": 59.5, "t192": 73.9, "t144": 67.4,
                                          "t128": 63.9},
}

# the 128x160 tile beside the others (bench/results/gemm_small_s22_t160_colb.json with `--b-col`, and
# gemm_small_s22_t160_rowb.json; `auto` before t160 joined it ran in the same runs)
MEASURED_T160 = {
    ((1280, 4096, 4096), "fp16", "col"): {"streamk": 81.2, "hoist": 92.8, "t192": 82.2, "t160": 74.9, "t144": 91.3,
                                          "t128": 86.8},
    ((1280, 4096, 4096), "e4m3", "col"): {"t192": 41.3, "hoist": 46.5, "streamk": 44.1, "t160": 40.0, "t144": 43.7,
                                          "t128": 42.6},
    ((2304, 1024, 4096), "fp16", "col"): {"t192": 38.5, "hoist": 43.4, "streamk": 43.4, "t160": 36.0, "t144": 51.3,
                                          "t128": 48.8},
    ((2304, 1024, 4096), "e4m3", "col"): {"t192": 20.1, "hoist": 23.7, "streamk": 23.8, "t160": 19.3, "t144": 27.5,
                                          "t128": 25.6},
    ((1280, 2048, 4096), "fp16", "col"): {"t192": 41.0, "hoist": 45.7, "streamk": 45.3, "t160": 39.5, "t144": 50.5,
                                          "t128": 49.7},
    ((1280, 2048, 4096), "e4m3", "col"): {"t192": 20.7, "hoist": 24.2, "streamk": 23.8, "t160": 20.3, "t144": 27.0,
                                          "t128": 25.8},
    ((512, 5120, 4096), "fp16", "col"): {"t192": 41.3, "hoist": 47.7, "streamk": 47.8, "t160": 38.0, "t144": 52.0,
                                         "t128": 51.1},
    ((512, 5120, 4096), "e4m3", "col"): {"t192": 20.6, "hoist": 23.8, "streamk": 23.5, "t160": 20.2, "t144": 26.5,
                                         "t128": 25.3},
    ((2560, 2048, 4096), "fp16", "col"): {"streamk": 81.4, "hoist": 92.9, "t192": 78.8, "t160": 75.3, "t144": 90.8,
                                          "t128": 85.9},
    ((2560, 2048, 4096), "e4m3", "col"): {"t192": 41.9, "hoist": 46.2, "streamk": 44.9, "t160": 40.3, "t144": 44.0,
                                          "t128": 43.6},
    ((2560, 5120, 4096), "fp16", "col"): {"streamk": 186.7, "hoist": 209.1, "t192": 203.7, "t160": 187.3, "t144": 195.0,
                                          "t128": 215.6},
    ((2560, 5120, 4096), "e4m3", "col"): {"streamk": 104.2, "hoist": 110.7, "t192": 106.8, "t160": 103.2, "t144": 104.7,
                                          "t128": 112.3},
    ((1536, 1536, 1536), "fp16", "col"): {"t144": 14.0, "hoist": 20.6, "streamk": 20.6, "t192": 15.9, "t160": 14.4,
                                          "t128": 21.7},
    ((1536, 1536, 1536), "e4m3", "col"): {"t144": 8.3, "hoist": 12.2, "streamk": 12.2, "t192": 9.3, "t160": 9.0,
                                          "t128": 12.4},
    ((3072, 3072, 3072), "fp16", "col"): {"t192": 100.2, "hoist": 117.3, "streamk": 109.3, "t160": 112.8, "t144": 103.5,
                                          "t128": 114.6},
    ((3072, 3072, 3072), "e4m3", "col"): {"t192": 51.8, "hoist": 58.7, "streamk": 60.8, "t160": 60.6, "t144": 56.4,
                                          "t128": 59.7},
    ((1280, 4096, 4096), "fp16", "row"): {"streamk": 80.0, "t192": 82.2, "t160": 77.8, "t144": 100.0},
    ((2304, 1024, 4096), "fp16", "row"): {"t192": 38.6, "streamk": 43.1, "t160": 37.4, "t144": 59.9},
    ((512, 5120, 4096), "fp16", "row"): {"t192": 42.7, "streamk": 47.1, "t160": 39.5, "t144": 54.2},
    ((1536, 1536, 1536), "fp16", "row"): {"t192": 15.9, "streamk": 20.5, "t160": 14.8, "t144": 15.6},
}

# where the model took t160 before it was limited to two rounds (gemm_small_s22_t160b_colb.json, `--b-col`; `auto`
# ran t160 at most of them)
MEASURED_T160B = {
    ((1792, 4096, 4096), "fp16", "col"): {"t160": 107.6, "hoist": 106.4, "streamk": 109.3, "t192": 121.0,
                                          "t144": 126.0},
    ((1792, 4096, 4096), "e4m3", "col"): {"t160": 61.2, "hoist": 58.5, "streamk": 68.7, "t192": 61.8, "t144": 63.8},
    ((2560, 4096, 4096), "fp16", "col"): {"streamk": 152.0, "hoist": 169.0, "t192": 166.4, "t160": 153.4,
                                          "t144": 161.5},
    ((2560, 4096, 4096), "e4m3", "col"): {"t160": 80.8, "hoist": 83.6, "streamk": 85.9, "t192": 86.0, "t144": 87.7},
    ((512, 14336, 4096), "fp16", "col"): {"t160": 111.0, "hoist": 113.0, "streamk": 114.7, "t192": 122.3,
                                          "t144": 125.0},
    ((512, 14336, 4096), "e4m3", "col"): {"t160": 62.9, "hoist": 62.9, "streamk": 69.7, "t192": 66.2, "t144": 66.2},
    ((1792, 4096, 14336), "fp16", "col"): {"t160": 356.6, "hoist": 360.6, "streamk": 333.3, "t192": 388.5,
                                           "t144": 397.7},
    ((1792, 4096, 14336), "e4m3", "col"): {"t160": 194.8, "hoist": 189.3, "streamk": 185.5, "t192": 212.0,
                                           "t144": 215.6},
    ((3584, 2048, 4096), "fp16", "col"): {"t160": 113.0, "hoist": 111.3, "streamk": 110.1, "t192": 120.3,
                                          "t144": 126.3},
    ((3584, 2048, 4096), "e4m3", "col"): {"t160": 60.2, "hoist": 58.3, "streamk": 63.7, "t192": 62.4, "t144": 64.5},
    ((1024, 5120, 4096), "fp16", "col"): {"t160": 76.1, "hoist": 95.4, "streamk": 82.6, "t192": 81.2, "t144": 90.5},
    ((1024, 5120, 4096), "e4m3", "col"): {"t160": 44.0, "hoist": 50.1, "streamk": 50.0, "t192": 44.1, "t144": 46.8},
    ((2048, 5120, 4096), "fp16", "col"): {"streamk": 150.4, "hoist": 161.8, "t192": 168.4, "t160": 150.4,
                                          "t144": 160.9},
    ((2048, 5120, 4096), "e4m3", "col"): {"t160": 83.0, "hoist": 84.5, "streamk": 85.1, "t192": 85.7, "t144": 86.9},
    ((1280, 8192, 4096), "fp16", "col"): {"streamk": 150.5, "hoist": 159.2, "t192": 169.6, "t160": 153.6,
                                          "t144": 164.7},
    ((1280, 8192, 4096), "e4m3", "col"): {"t160": 84.6, "hoist": 84.3, "streamk": 85.9, "t192": 88.9, "t144": 89.2},
    ((2304, 2048, 2048), "fp16", "col"): {"t160": 39.4, "hoist": 48.4, "streamk": 41.2, "t192": 44.6, "t144": 43.7},
    ((2304, 2048, 2048), "e4m3", "col"): {"t160": 20.7, "hoist": 26.4, "streamk": 23.8, "t192": 21.1, "t144": 23.6},
}

# t160 over a row-major B where the model took it once costed by its own width (gemm_small_s22_t160c_rowb.json)
MEASURED_T160C = {
    ((128, 14336, 4096), "fp16", "row"): {"t160": 39.9, "t192": 40.5, "t144": 40.3, "t64": 40.2, "streamk": 52.4,
                                          "hoist": 52.8},
    ((3072, 1536, 1536), "fp16", "row"): {"t160": 30.8, "t192": 31.2, "t144": 32.2, "t64": 34.7, "streamk": 33.4,
                                          "hoist": 38.8},
    ((1536, 1536, 3072), "fp16", "row"): {"t160": 28.4, "t192": 29.3, "t144": 27.8, "t64": 34.8, "streamk": 34.2,
                                          "hoist": 34.5},
    ((1536, 1536, 6144), "fp16", "row"): {"t160": 54.0, "t192": 55.8, "t144": 53.7, "t64": 70.8, "streamk": 65.6,
                                          "hoist": 64.8},
    ((768, 4096, 4096), "fp16", "row"): {"t192": 45.8, "t160": 59.5, "t144": 60.6, "t64": 57.5, "streamk": 50.5,
                                         "hoist": 53.9},
}

# rung 9 and its stream-K build where the last of two rounds is over half full, by K
# (bench/results/gemm_small_s22_skhalf.json; `auto` ran rung 9 in the same run, before SK_LONG_KTILES)
MEASURED_SKHALF = {
    ((1792, 4096, 4096), "fp16", "row"): {"hoist": 106.3, "streamk": 108.0},
    ((1792, 4096, 4096), "e4m3", "col"): {"hoist": 60.3, "streamk": 65.9},
    ((1792, 4096, 8192), "fp16", "row"): {"hoist": 210.6, "streamk": 200.5},
    ((1792, 4096, 8192), "e4m3", "col"): {"hoist": 111.6, "streamk": 118.3},
    ((1792, 4096, 14336), "fp16", "row"): {"hoist": 357.6, "streamk": 330.6},
    ((1792, 4096, 14336), "e4m3", "col"): {"hoist": 186.5, "streamk": 188.4},
    ((512, 14336, 8192), "fp16", "row"): {"hoist": 216.0, "streamk": 203.4},
    ((512, 14336, 8192), "e4m3", "col"): {"hoist": 115.5, "streamk": 118.6},
    ((3584, 2048, 4096), "fp16", "row"): {"hoist": 108.8, "streamk": 111.1},
    ((3584, 2048, 4096), "e4m3", "col"): {"hoist": 59.2, "streamk": 67.2},
    ((3584, 2048, 8192), "fp16", "row"): {"hoist": 206.4, "streamk": 204.6},
    ((3584, 2048, 8192), "e4m3", "col"): {"hoist": 109.9, "streamk": 118.8},
    ((2048, 6144, 4096), "fp16", "row"): {"hoist": 171.2, "streamk": 176.2},
    ((2048, 6144, 4096), "e4m3", "col"): {"hoist": 90.8, "streamk": 96.0},
    ((3072, 4096, 8192), "fp16", "row"): {"hoist": 328.5, "streamk": 327.7},
    ((3072, 4096, 8192), "e4m3", "col"): {"hoist": 171.4, "streamk": 182.4},
    ((2048, 6144, 8192), "fp16", "row"): {"hoist": 327.5, "streamk": 329.6},
    ((2048, 6144, 8192), "e4m3", "col"): {"hoist": 175.3, "streamk": 181.2},
}


# the 128x320 tile beside rung 9, its stream-K build and t160 (bench/results/gemm_small_s23_t320_rowb.json, and
# gemm_small_s23_t320_colb.json with `--b-col`; `auto` before t320 joined it ran in the same runs: where its pick has
# a row of its own too, the faster of the two timings of that kernel)
MEASURED_T320 = {
    ((1280, 4096, 4096), "fp16", "row"): {"t160": 76.1, "hoist": 94.0, "streamk": 81.2, "t320": 73.9},
    ((1280, 4096, 4096), "e4m3", "col"): {"t160": 40.5, "hoist": 47.7, "streamk": 44.6, "t320": 39.7},
    ((2560, 4096, 4096), "fp16", "row"): {"streamk": 147.8, "hoist": 159.1, "t160": 155.8, "t320": 147.3},
    ((2560, 4096, 4096), "e4m3", "col"): {"streamk": 85.0, "hoist": 84.4, "t160": 82.8, "t320": 80.6},
    ((3840, 4096, 4096), "fp16", "row"): {"t192": 224.9, "hoist": 222.0, "streamk": 221.4, "t160": 239.3,
                                          "t320": 216.7},
    ((3840, 4096, 4096), "e4m3", "col"): {"t192": 114.8, "hoist": 117.2, "streamk": 123.4, "t160": 120.7,
                                          "t320": 117.0},
    ((1024, 14336, 4096), "fp16", "row"): {"streamk": 206.0, "hoist": 223.1, "t160": 223.6, "t320": 209.2},
    ((1024, 14336, 4096), "e4m3", "col"): {"streamk": 114.2, "hoist": 114.4, "t160": 116.9, "t320": 115.4},
    ((4096, 14336, 4096), "fp16", "row"): {"hoist": 763.6, "streamk": 765.2, "t160": 839.9, "t320": 786.9},
    ((4096, 14336, 4096), "e4m3", "col"): {"hoist": 402.5, "streamk": 402.4, "t160": 440.2, "t320": 417.8},
    ((1280, 4096, 14336), "fp16", "row"): {"streamk": 254.2, "hoist": 309.2, "t160": 250.5, "t320": 244.2},
    ((1280, 4096, 14336), "e4m3", "col"): {"streamk": 139.5, "hoist": 168.3, "t160": 134.3, "t320": 132.4},
    ((8192, 8192, 8192), "fp16", "row"): {"hoist": 1716.0, "streamk": 1659.2, "t160": 1933.9, "t320": 1781.8},
    ((8192, 8192, 8192), "e4m3", "col"): {"hoist": 880.9, "streamk": 875.2, "t160": 964.3, "t320": 945.6},
    ((1280, 4096, 4096), "fp16", "col"): {"t160": 74.6, "hoist": 94.9, "streamk": 82.0, "t320": 73.9},
    ((2560, 4096, 4096), "fp16", "col"): {"streamk": 151.5, "hoist": 160.6, "t160": 156.0, "t320": 148.4},
    ((3840, 4096, 4096), "fp16", "col"): {"t192": 220.0, "hoist": 223.9, "streamk": 218.9, "t160": 220.1,
                                          "t320": 220.0},
    ((1024, 14336, 4096), "fp16", "col"): {"streamk": 207.3, "hoist": 215.6, "t160": 214.0, "t320": 213.3},
    ((4096, 14336, 4096), "fp16", "col"): {"hoist": 768.3, "streamk": 768.8, "t160": 770.1, "t320": 800.0},
    ((1280, 4096, 14336), "fp16", "col"): {"streamk": 251.9, "hoist": 309.1, "t160": 247.7, "t320": 238.3},
    ((8192, 8192, 8192), "fp16", "col"): {"hoist": 1689.8, "streamk": 1684.9, "t160": 1823.1, "t320": 1752.5},
}

# where `auto` took t320 once it joined (bench/results/gemm_small_s23_t320b_rowb.json, gemm_small_s23_t320b_colb.json
# with `--b-col`; `auto`'s pick timed twice: the faster)
MEASURED_T320B = {
    ((3072, 1536, 1536), "fp16", "row"): {"t320": 27.3, "hoist": 38.9, "streamk": 32.3, "t160": 30.1},
    ((3072, 1536, 1536), "e4m3", "col"): {"t144": 15.3, "hoist": 21.8, "streamk": 19.9, "t160": 16.4, "t320": 15.1},
    ((1024, 5120, 4096), "fp16", "row"): {"t320": 68.9, "hoist": 94.3, "streamk": 80.9, "t160": 75.2},
    ((1024, 5120, 4096), "e4m3", "col"): {"t320": 37.6, "hoist": 46.9, "streamk": 43.7, "t160": 42.3},
    ((2048, 5120, 4096), "fp16", "row"): {"t320": 140.1, "hoist": 153.4, "streamk": 150.5, "t160": 146.3},
    ((2048, 5120, 4096), "e4m3", "col"): {"t320": 77.0, "hoist": 82.2, "streamk": 83.5, "t160": 81.7},
    ((1280, 8192, 4096), "fp16", "row"): {"t320": 145.9, "hoist": 155.7, "streamk": 150.2, "t160": 152.2},
    ((1280, 8192, 4096), "e4m3", "col"): {"t320": 78.4, "hoist": 83.2, "streamk": 86.2, "t160": 80.9},
    ((2304, 2048, 2048), "fp16", "row"): {"t320": 35.7, "hoist": 48.5, "streamk": 39.9, "t160": 42.2},
    ((2304, 2048, 2048), "e4m3", "col"): {"t160": 20.3, "hoist": 26.3, "streamk": 23.9, "t320": 19.2},
    ((3072, 1536, 1536), "fp16", "col"): {"t144": 27.6, "hoist": 38.8, "streamk": 32.2, "t160": 28.5, "t320": 27.7},
    ((1024, 5120, 4096), "fp16", "col"): {"t320": 69.8, "hoist": 94.4, "streamk": 77.6, "t160": 71.5},
    ((2048, 5120, 4096), "fp16", "col"): {"t320": 142.8, "hoist": 153.2, "streamk": 149.2, "t160": 143.0},
    ((1280, 8192, 4096), "fp16", "col"): {"t320": 146.1, "hoist": 155.3, "streamk": 148.9, "t160": 145.5},
    ((2304, 2048, 2048), "fp16", "col"): {"t320": 35.8, "hoist": 48.5, "streamk": 39.4, "t160": 37.9},
}

# the 64x192 tile beside t64, t128, t144 and t160 at mid shapes (bench/results/gemm_small_s23_t64w_rowb.json,
# gemm_small_s23_t64w_colb.json with `--b-col`; `auto` before t64x192 joined it ran in the same runs; a kernel timed
# twice: the faster). 256x14336x4096, timed in the same runs, is left out: three rounds of t64x192, and its rung 9
# figure there (62.9 us) is 6 % above the same kernel's in the runs merged above, which would rank it by noise
MEASURED_T64W = {
    ((768, 1536, 1536), "fp16", "row"): {"t128": 11.7, "t64": 13.4, "t144": 14.3, "t160": 13.9, "t64x192": 10.0},
    ((768, 1536, 1536), "e4m3", "col"): {"t128": 7.2, "t64": 7.7, "t144": 10.3, "t160": 10.8, "t64x192": 6.0},
    ((1024, 1536, 1536), "fp16", "row"): {"t128": 12.1, "t64": 13.7, "t144": 13.2, "t160": 13.3, "t64x192": 10.6},
    ((1024, 1536, 1536), "e4m3", "col"): {"t128": 7.5, "t64": 7.9, "t144": 7.8, "t160": 8.4, "t64x192": 6.2},
    ((512, 2048, 2048), "fp16", "row"): {"t64": 9.6, "t128": 13.3, "t144": 15.0, "t160": 14.6, "t64x192": 12.0},
    ((512, 2048, 2048), "e4m3", "col"): {"t64": 5.6, "t128": 10.1, "t144": 10.7, "t160": 11.2, "t64x192": 7.0},
    ((768, 2048, 2048), "fp16", "row"): {"t128": 14.9, "t64": 17.1, "t144": 16.7, "t160": 16.2, "t64x192": 13.8},
    ((768, 2048, 2048), "e4m3", "col"): {"t128": 8.9, "t64": 9.3, "t144": 9.2, "t160": 9.9, "t64x192": 7.5},
    ((384, 4096, 4096), "fp16", "row"): {"t128": 28.5, "t64": 31.9, "t144": 30.4, "t160": 31.2, "t64x192": 27.2},
    ((384, 4096, 4096), "e4m3", "col"): {"t128": 14.8, "t64": 15.7, "t144": 15.0, "t160": 16.0, "t64x192": 13.1},
    ((640, 1536, 4096), "fp16", "row"): {"t64": 17.0, "t128": 19.3, "t144": 21.4, "t160": 21.2, "t64x192": 21.1},
    ((640, 1536, 4096), "e4m3", "col"): {"t64": 9.0, "t128": 12.6, "t144": 13.3, "t160": 14.1, "t64x192": 10.8},
    ((768, 1536, 1536), "fp16", "col"): {"t128": 11.6, "t64": 12.3, "t144": 13.0, "t160": 13.6, "t64x192": 9.4},
    ((1024, 1536, 1536), "fp16", "col"): {"t128": 12.0, "t64": 12.7, "t144": 12.3, "t160": 13.3, "t64x192": 10.4},
    ((512, 2048, 2048), "fp16", "col"): {"t64": 9.2, "t128": 13.3, "t144": 14.1, "t160": 14.8, "t64x192": 11.6},
    ((768, 2048, 2048), "fp16", "col"): {"t128": 14.9, "t64": 15.6, "t144": 15.3, "t160": 15.9, "t64x192": 13.1},
    ((384, 4096, 4096), "fp16", "col"): {"t128": 29.0, "t64": 29.4, "t144": 29.8, "t160": 29.8, "t64x192": 26.0},
    ((640, 1536, 4096), "fp16", "col"): {"t64": 16.2, "t128": 19.1, "t144": 19.9, "t160": 20.5, "t64x192": 19.3},
}

# t64 and t128 beside `auto`'s pick at 128-1024 rows (bench/results/gemm_small_s23_t64cm2_rowb.json,
# gemm_small_s23_t64cm2_colb.json with `--b-col`; the run's t64_cm2, since removed, left out; `auto` before t128 was
# weighed at 128 rows ran in the same runs; a kernel timed twice: the faster). 256x14336x4096 left out as in
# MEASURED_T64W: rung 9 runs it either way, and its fp8 figure here (34.8 us; 33.5 in an earlier run) would rank it
# 5.8 % behind another run's `tuned` — noise between runs, not a ranking
MEASURED_T128M = {
    ((128, 4096, 4096), "fp16", "row"): {"t64": 13.0, "t128": 14.6},
    ((128, 4096, 4096), "e4m3", "col"): {"sw64": 8.0, "t64": 8.5, "t128": 10.5},
    ((256, 4096, 4096), "fp16", "row"): {"t64": 18.1, "t128": 21.2},
    ((256, 4096, 4096), "e4m3", "col"): {"t64": 9.2, "t128": 12.8},
    ((384, 4096, 4096), "fp16", "row"): {"t64x192": 26.0, "t64": 31.2, "t128": 27.5},
    ((384, 4096, 4096), "e4m3", "col"): {"t64x192": 13.2, "t64": 15.5, "t128": 14.8},
    ((512, 4096, 4096), "fp16", "row"): {"t128": 31.7, "t64": 36.2},
    ((512, 4096, 4096), "e4m3", "col"): {"t128": 17.2, "t64": 18.4},
    ((128, 14336, 4096), "fp16", "row"): {"t160": 40.7, "t64": 40.5, "t128": 35.7},
    ((128, 14336, 4096), "e4m3", "col"): {"t144": 20.8, "t64": 23.4, "t128": 20.2},
    ((512, 2048, 2048), "fp16", "row"): {"t64": 9.7, "t128": 13.2},
    ((512, 2048, 2048), "e4m3", "col"): {"t64": 5.7, "t128": 10.1},
    ((1024, 1024, 1024), "fp16", "row"): {"t64": 6.4, "t128": 10.7},
    ((1024, 1024, 1024), "e4m3", "col"): {"t64": 4.3, "t128": 8.8},
    ((128, 4096, 4096), "fp16", "col"): {"t64": 12.5, "t128": 15.4},
    ((256, 4096, 4096), "fp16", "col"): {"t64": 17.1, "t128": 21.1},
    ((384, 4096, 4096), "fp16", "col"): {"t64x192": 26.4, "t64": 32.5, "t128": 28.4},
    ((512, 4096, 4096), "fp16", "col"): {"t128": 32.4, "t64": 35.0},
    ((128, 14336, 4096), "fp16", "col"): {"t144": 39.7, "t64": 38.8, "t128": 37.7},
    ((512, 2048, 2048), "fp16", "col"): {"t64": 9.0, "t128": 13.4},
    ((1024, 1024, 1024), "fp16", "col"): {"t64": 6.0, "t128": 10.6},
}

# the 4-CTA-cluster swapped tiles beside the other small-M candidates at the measured points with N = 14336, one
# run (bench/results/gemm_small_s25_c4pts_colb.json, _rowb.json): CUDA-graph medians, not profiler kernel times —
# the launches carry programmatic dependent launch, under which a profiled kernel's time includes its wait for the
# previous one (here up to 3 us apart from the graph's figure, either way); every variant's figure there replaced
MEASURED_C4 = {
    ((1, 14336, 4096), "fp16", "col"): {"sw8": 33.5, "sw16": 33.3, "sw32": 36.9, "sw64": 49.8, "t64": 36.3,
                                        "sw8c4": 31.5, "sw16c4": 31.7, "sw32c4": 31.7},
    ((1, 14336, 4096), "e4m3", "col"): {"sw8": 17.6, "sw16": 17.6, "sw32": 18.5, "sw64": 24.3, "t64": 18.9,
                                        "sw8c4": 17.1, "sw16c4": 17.3, "sw32c4": 17.5},
    ((8, 14336, 4096), "fp16", "col"): {"sw8": 33.7, "sw16": 33.5, "sw32": 34.1, "sw64": 41.6, "t64": 35.1,
                                        "sw8c4": 31.9, "sw16c4": 32.1, "sw32c4": 32.1},
    ((8, 14336, 4096), "e4m3", "col"): {"sw8": 17.8, "sw16": 17.9, "sw32": 18.0, "sw64": 23.7, "t64": 18.7,
                                        "sw8c4": 17.2, "sw16c4": 17.4, "sw32c4": 17.6},
    ((16, 14336, 4096), "fp16", "col"): {"sw8": 44.1, "sw16": 33.9, "sw32": 33.9, "sw64": 40.2, "t64": 34.0,
                                         "sw8c4": 45.2, "sw16c4": 32.2, "sw32c4": 32.1},
    ((16, 14336, 4096), "e4m3", "col"): {"sw8": 22.7, "sw16": 18.0, "sw32": 17.9, "sw64": 22.8, "t64": 18.7,
                                         "sw8c4": 21.2, "sw16c4": 17.7, "sw32c4": 17.9},
    ((8, 14336, 4096), "fp16", "row"): {"sw8": 33.6, "sw16": 33.6, "sw32": 33.8, "sw64": 43.4, "t64": 35.5,
                                        "sw8c4": 31.4, "sw16c4": 31.6, "sw32c4": 32.1},
    ((16, 14336, 4096), "fp16", "row"): {"sw8": 44.0, "sw16": 34.0, "sw32": 34.0, "sw64": 42.1, "t64": 34.2,
                                         "sw8c4": 44.3, "sw16c4": 31.7, "sw32c4": 31.7},
}


# the 4-CTA-cluster swapped builds against the 64-row tile over N and K, each with PDL as pdl_pays launches it (off
# for one round under C4_MIN_FILL of the resident clusters, unsplit): graph medians from one run
# (bench/results/gemm_small_s26_pdlmap{,32}_{on,off}.json; the 16-bit points were measured with bf16, whose launches
# are the fp16 ones' in every respect the model sees). Left out: the three 16 x 8192 points whose weights (17-34 MB)
# stay in the 50-MB L2 between replays — 38-44 % faster than the model's HBM streaming; `auto`'s sw16 was the faster
# there too (sw16c4 splits K at 16 clusters: 2.0-2.2x slower)
MEASURED_PDL_C4 = {
    ((16, 8192, 4096), "fp16", "col"): {"sw16": 18.5, "sw16c4": 30.0},
    ((16, 9216, 2048), "fp16", "col"): {"sw16": 12.2, "sw16c4": 9.6},
    ((16, 9216, 2048), "e4m3", "col"): {"sw16": 7.2, "sw16c4": 6.5},
    ((16, 9216, 4096), "fp16", "col"): {"sw16": 26.8, "sw16c4": 22.7},
    ((16, 9216, 4096), "e4m3", "col"): {"sw16": 12.2, "sw16c4": 9.8},
    ((16, 10240, 2048), "fp16", "col"): {"sw16": 12.3, "sw16c4": 9.9},
    ((16, 10240, 2048), "e4m3", "col"): {"sw16": 7.2, "sw16c4": 6.9},
    ((16, 10240, 4096), "fp16", "col"): {"sw16": 27.3, "sw16c4": 24.6},
    ((16, 10240, 4096), "e4m3", "col"): {"sw16": 12.2, "sw16c4": 9.9},
    ((16, 11008, 2048), "fp16", "col"): {"sw16": 12.5, "sw16c4": 10.4},
    ((16, 11008, 2048), "e4m3", "col"): {"sw16": 7.2, "sw16c4": 7.0},
    ((16, 11008, 4096), "fp16", "col"): {"sw16": 27.7, "sw16c4": 25.2},
    ((16, 11008, 4096), "e4m3", "col"): {"sw16": 12.5, "sw16c4": 10.4},
    ((16, 12288, 2048), "fp16", "col"): {"sw16": 14.7, "sw16c4": 13.9},
    ((16, 12288, 2048), "e4m3", "col"): {"sw16": 7.3, "sw16c4": 7.5},
    ((16, 12288, 4096), "fp16", "col"): {"sw16": 28.8, "sw16c4": 29.3},
    ((16, 12288, 4096), "e4m3", "col"): {"sw16": 14.8, "sw16c4": 15.0},
    ((16, 13312, 2048), "fp16", "col"): {"sw16": 16.0, "sw16c4": 16.4},
    ((16, 13312, 2048), "e4m3", "col"): {"sw16": 7.4, "sw16c4": 6.9},
    ((16, 13312, 4096), "fp16", "col"): {"sw16": 29.4, "sw16c4": 30.3},
    ((16, 13312, 4096), "e4m3", "col"): {"sw16": 15.9, "sw16c4": 16.2},
    ((16, 14336, 2048), "fp16", "col"): {"sw16": 17.5, "sw16c4": 17.1},
    ((16, 14336, 2048), "e4m3", "col"): {"sw16": 7.5, "sw16c4": 7.0},
    ((16, 14336, 4096), "fp16", "col"): {"sw16": 31.8, "sw16c4": 30.7},
    ((16, 14336, 4096), "e4m3", "col"): {"sw16": 17.6, "sw16c4": 17.1},
    ((32, 11008, 2048), "fp16", "col"): {"sw32": 12.7, "sw32c4": 10.6},
    ((32, 11008, 2048), "e4m3", "col"): {"sw32": 7.3, "sw32c4": 7.1},
    ((32, 11008, 4096), "fp16", "col"): {"sw32": 28.4, "sw32c4": 25.5},
    ((32, 11008, 4096), "e4m3", "col"): {"sw32": 12.8, "sw32c4": 10.8},
    ((32, 12288, 2048), "fp16", "col"): {"sw32": 15.3, "sw32c4": 16.4},
    ((32, 12288, 2048), "e4m3", "col"): {"sw32": 7.2, "sw32c4": 7.9},
    ((32, 12288, 4096), "fp16", "col"): {"sw32": 29.0, "sw32c4": 29.1},
    ((32, 12288, 4096), "e4m3", "col"): {"sw32": 15.2, "sw32c4": 15.6},
}


# the 64x128 tile against the 4-CTA builds (without PDL) where their clusters fill one round at most 3/4: graph
# medians of one run (bench/results/gemm_small_s26_t64c4_m{8,16,32}.json, bf16 for the 16-bit points); the model ties
# the two at 32 x 9216; t64 takes 1.04-1.31x the model's time here (fp8 the most)
MEASURED_T64_C4 = {
    ((8, 9216, 4096), "fp16", "col"): {"t64": 26.9, "sw8c4": 22.5},
    ((8, 9216, 4096), "e4m3", "col"): {"t64": 15.6, "sw8c4": 9.4},
    ((8, 10240, 4096), "fp16", "col"): {"t64": 29.8, "sw8c4": 24.1},
    ((8, 10240, 4096), "e4m3", "col"): {"t64": 17.2, "sw8c4": 9.7},
    ((8, 11008, 4096), "fp16", "col"): {"t64": 29.9, "sw8c4": 26.0},
    ((8, 11008, 4096), "e4m3", "col"): {"t64": 17.2, "sw8c4": 10.1},
    ((16, 9216, 4096), "fp16", "col"): {"t64": 25.4, "sw16c4": 22.9},
    ((16, 9216, 4096), "e4m3", "col"): {"t64": 15.6, "sw16c4": 10.0},
    ((16, 10240, 4096), "fp16", "col"): {"t64": 26.6, "sw16c4": 24.5},
    ((16, 10240, 4096), "e4m3", "col"): {"t64": 16.7, "sw16c4": 10.0},
    ((16, 11008, 4096), "fp16", "col"): {"t64": 29.3, "sw16c4": 26.4},
    ((16, 11008, 4096), "e4m3", "col"): {"t64": 17.0, "sw16c4": 10.2},
    ((32, 9216, 4096), "fp16", "col"): {"t64": 23.3, "sw32c4": 23.2},
    ((32, 9216, 4096), "e4m3", "col"): {"t64": 15.4, "sw32c4": 10.0},
    ((32, 10240, 4096), "fp16", "col"): {"t64": 25.8, "sw32c4": 24.5},
    ((32, 10240, 4096), "e4m3", "col"): {"t64": 16.1, "sw32c4": 10.5},
    ((32, 11008, 4096), "fp16", "col"): {"t64": 27.1, "sw32c4": 25.7},
    ((32, 11008, 4096), "e4m3", "col"): {"t64": 17.1, "sw32c4": 10.8},
}


# the 64-column swapped tile's 4-CTA-cluster build against t64 (`auto`'s pick before it) and the 64-row swapped tile
# at 48-64 rows: graph medians of one run (bench/results/gemm_small_s26_sw64c4{,r}.json; 16-bit over column-major B
# measured with bf16); `auto` takes sw64c4 for fp8 only
MEASURED_SW64C4 = {
    ((64, 9216, 4096), "fp16", "col"): {"t64": 23.1, "sw64": 29.9, "sw64c4": 24.2},
    ((64, 9216, 4096), "e4m3", "col"): {"t64": 15.6, "sw64": 13.4, "sw64c4": 10.6},
    ((64, 11008, 4096), "fp16", "col"): {"t64": 26.2, "sw64": 30.8, "sw64c4": 27.1},
    ((64, 11008, 4096), "e4m3", "col"): {"t64": 17.3, "sw64": 14.9, "sw64c4": 11.7},
    ((64, 14336, 4096), "fp16", "col"): {"t64": 33.0, "sw64": 33.4, "sw64c4": 32.8},
    ((64, 14336, 4096), "e4m3", "col"): {"t64": 18.7, "sw64": 18.2, "sw64c4": 18.5},
    ((48, 11008, 4096), "fp16", "col"): {"t64": 26.1, "sw64": 32.4, "sw64c4": 27.6},
    ((48, 11008, 4096), "e4m3", "col"): {"t64": 17.3, "sw64": 15.4, "sw64c4": 11.8},
    ((64, 28672, 4096), "fp16", "col"): {"t64": 61.6, "sw64": 67.5, "sw64c4": 61.0},
    ((64, 28672, 4096), "e4m3", "col"): {"t64": 35.2, "sw64": 35.8, "sw64c4": 33.6},
    ((64, 11008, 4096), "fp16", "row"): {"t64": 26.8, "sw64": 30.7, "sw64c4": 28.3},
    ((64, 14336, 4096), "fp16", "row"): {"t64": 33.5, "sw64": 34.2, "sw64c4": 32.7},
}


# the 128-column swapped tile's 4-CTA build against t128 (`auto`'s pick before it) and t64 at 80-128 rows: graph
# medians of one run (bench/results/gemm_small_s26_sw128c4{,r}.json; 16-bit over column-major B measured with bf16);
# `auto` takes sw128c4 for fp8 in a part-empty round only
MEASURED_SW128C4 = {
    ((128, 9216, 4096), "fp16", "col"): {"t128": 28.4, "t64": 32.2, "sw128c4": 30.8},
    ((128, 9216, 4096), "e4m3", "col"): {"t128": 14.4, "t64": 14.4, "sw128c4": 14.9},
    ((128, 11008, 4096), "fp16", "col"): {"t128": 31.0, "t64": 34.0, "sw128c4": 32.8},
    ((128, 11008, 4096), "e4m3", "col"): {"t128": 18.9, "t64": 17.4, "sw128c4": 17.1},
    ((128, 13312, 4096), "fp16", "col"): {"t128": 34.7, "t64": 36.9, "sw128c4": 35.1},
    ((128, 13312, 4096), "e4m3", "col"): {"t128": 19.9, "t64": 20.8, "sw128c4": 20.4},
    ((128, 14336, 4096), "fp16", "col"): {"t128": 36.3, "t64": 38.2, "sw128c4": 36.8},
    ((128, 14336, 4096), "e4m3", "col"): {"t128": 20.6, "t64": 22.0, "sw128c4": 21.1},
    ((96, 11008, 4096), "fp16", "col"): {"t128": 30.7, "t64": 35.4, "sw128c4": 32.1},
    ((96, 11008, 4096), "e4m3", "col"): {"t128": 19.5, "t64": 18.8, "sw128c4": 16.0},
    ((80, 11008, 4096), "fp16", "col"): {"t128": 33.4, "t64": 36.9, "sw128c4": 31.7},
    ((80, 11008, 4096), "e4m3", "col"): {"t128": 21.3, "t64": 20.4, "sw128c4": 15.7},
    ((128, 28672, 4096), "fp16", "col"): {"t128": 72.1, "t64": 75.2, "sw128c4": 70.9},
    ((128, 28672, 4096), "e4m3", "col"): {"t128": 39.1, "t64": 40.5, "sw128c4": 39.9},
    ((128, 11008, 4096), "fp16", "row"): {"t128": 31.5, "sw128c4": 33.0},
    ((128, 14336, 4096), "fp16", "row"): {"t128": 37.1, "sw128c4": 37.1},
}


# 65-128 rows at N = 9216-14336 (graph medians, us, one call each: gemm_small_s27_cn*.json, then _s27_swc4*.json,
# whose times replace the first call's at the points both measured; `auto`'s pick then, t128 / sw128c4 / t64 / t192,
# under its own name): the swapped 4-CTA builds of the width M needs (sw80c4, sw96c4, sw112c4) and the 128x96 /
# 128x128 tiles in 4-CTA clusters along N (n96c4, n128c4)
MEASURED_S27 = {
    ((96, 11008, 4096), "fp16", "col"): {"t128": 30.7, "n96c4": 29.0, "n128c4": 29.8, "sw128c4": 31.8,
        "sw80c4": 41.1, "sw96c4": 29.3, "sw112c4": 31.7},
    ((96, 11008, 4096), "e4m3", "col"): {"sw128c4": 16.2, "n96c4": 14.8, "n128c4": 17.4, "sw80c4": 22.4,
        "sw96c4": 14.5, "sw112c4": 15.8},
    ((128, 11008, 4096), "fp16", "col"): {"t128": 31.1, "n96c4": 30.0, "n128c4": 31.1, "sw128c4": 32.9,
        "sw80c4": 41.9, "sw96c4": 43.6, "sw112c4": 48.5},
    ((128, 11008, 4096), "e4m3", "col"): {"sw128c4": 17.0, "n96c4": 15.6, "n128c4": 17.6, "sw80c4": 22.7,
        "sw96c4": 23.6, "sw112c4": 26.3},
    ((80, 11008, 4096), "fp16", "col"): {"t128": 35.3, "n96c4": 28.4, "n128c4": 29.6, "sw128c4": 31.8,
        "sw80c4": 27.4, "sw96c4": 28.9, "sw112c4": 31.4},
    ((80, 11008, 4096), "e4m3", "col"): {"sw128c4": 15.6, "n96c4": 14.6, "n128c4": 17.1, "sw80c4": 12.9,
        "sw96c4": 13.8, "sw112c4": 15.4},
    ((96, 9216, 4096), "fp16", "col"): {"t128": 28.1, "n96c4": 26.4, "n128c4": 27.4, "sw128c4": 30.1, "sw80c4": 39.6,
        "sw96c4": 26.8, "sw112c4": 30.0},
    ((96, 9216, 4096), "e4m3", "col"): {"sw128c4": 15.0, "n96c4": 12.7, "n128c4": 15.9, "sw80c4": 21.1,
        "sw96c4": 12.5, "sw112c4": 14.0},
    ((128, 9216, 4096), "fp16", "col"): {"t128": 29.0, "n96c4": 27.6, "n128c4": 28.4, "sw128c4": 30.8},
    ((128, 9216, 4096), "e4m3", "col"): {"sw128c4": 14.5, "n96c4": 14.0, "n128c4": 16.1},
    ((64, 11008, 4096), "fp16", "col"): {"t64": 26.0, "n96c4": 31.5, "n128c4": 29.1, "sw128c4": 32.0},
    ((64, 11008, 4096), "e4m3", "col"): {"sw64c4": 11.6, "n96c4": 15.7, "n128c4": 17.4, "sw128c4": 15.2},
    ((128, 14336, 4096), "fp16", "col"): {"t128": 36.7, "n96c4": 47.4, "n128c4": 36.5, "sw128c4": 37.7},
    ((128, 14336, 4096), "e4m3", "col"): {"t128": 21.1, "n96c4": 26.3, "n128c4": 20.7, "sw128c4": 21.7},
    ((96, 14336, 4096), "fp16", "col"): {"t128": 36.4, "n96c4": 45.1, "n128c4": 35.6, "sw128c4": 35.5,
        "sw80c4": 46.9, "sw96c4": 33.6, "sw112c4": 35.4},
    ((96, 14336, 4096), "e4m3", "col"): {"t128": 20.7, "n96c4": 25.1, "n128c4": 20.0, "sw128c4": 20.5,
        "sw80c4": 25.2, "sw96c4": 19.4, "sw112c4": 20.3},
    ((256, 11008, 4096), "fp16", "col"): {"t192": 43.8, "n96c4": 50.4, "n128c4": 53.9, "sw128c4": 55.5},
    ((256, 11008, 4096), "e4m3", "col"): {"t192": 25.4, "n96c4": 28.3, "n128c4": 29.7, "sw128c4": 30.6},
    ((128, 4096, 4096), "fp16", "col"): {"t64": 12.2, "n96c4": 18.7, "n128c4": 22.7, "sw128c4": 27.9},
    ((128, 4096, 4096), "e4m3", "col"): {"sw64": 7.5, "n96c4": 10.6, "n128c4": 12.5, "sw128c4": 20.2},
    ((128, 11008, 2048), "fp16", "col"): {"t128": 16.2, "n96c4": 14.7, "n128c4": 16.0, "sw128c4": 16.4},
    ((128, 11008, 2048), "e4m3", "col"): {"sw128c4": 9.7, "n96c4": 8.0, "n128c4": 8.5},
    ((96, 11008, 4096), "fp16", "row"): {"t128": 31.6, "n96c4": 34.4, "n128c4": 30.1, "sw80c4": 42.4, "sw96c4": 28.9,
        "sw112c4": 31.3, "sw128c4": 31.3},
    ((128, 11008, 4096), "fp16", "row"): {"t128": 32.7, "n96c4": 32.6, "n128c4": 32.2},
    ((80, 11008, 4096), "fp16", "row"): {"t128": 34.8, "n96c4": 32.8, "n128c4": 29.2, "sw80c4": 27.2, "sw96c4": 28.3,
        "sw112c4": 30.7, "sw128c4": 30.5},
    ((128, 14336, 4096), "fp16", "row"): {"t128": 38.3, "n96c4": 50.4, "n128c4": 38.6},
    ((256, 11008, 4096), "fp16", "row"): {"t192": 46.1, "n96c4": 55.0, "n128c4": 57.8},
    ((112, 11008, 4096), "fp16", "col"): {"t128": 30.7, "sw80c4": 41.4, "sw96c4": 42.6, "sw112c4": 32.2,
        "sw128c4": 32.4, "n96c4": 29.5},
    ((112, 11008, 4096), "e4m3", "col"): {"sw128c4": 16.2, "sw80c4": 22.3, "sw96c4": 23.6, "sw112c4": 16.3,
        "n96c4": 15.3},
    ((72, 9216, 4096), "fp16", "col"): {"t128": 31.2, "sw80c4": 24.7, "sw96c4": 27.0, "sw112c4": 29.8,
        "sw128c4": 30.2, "n96c4": 25.9},
    ((72, 9216, 4096), "e4m3", "col"): {"sw128c4": 14.8, "sw80c4": 12.0, "sw96c4": 12.2, "sw112c4": 13.3,
        "n96c4": 13.9},
    ((80, 14336, 4096), "fp16", "col"): {"t128": 41.1, "sw80c4": 32.7, "sw96c4": 33.4, "sw112c4": 35.0,
        "sw128c4": 35.3, "n96c4": 44.8},
    ((80, 14336, 4096), "e4m3", "col"): {"t128": 22.6, "sw80c4": 18.6, "sw96c4": 19.2, "sw112c4": 20.1,
        "sw128c4": 20.4, "n96c4": 25.0},
    ((96, 11008, 2048), "fp16", "col"): {"t128": 16.2, "sw80c4": 22.7, "sw96c4": 13.7, "sw112c4": 15.6,
        "sw128c4": 16.0, "n96c4": 14.0},
    ((96, 11008, 2048), "e4m3", "col"): {"sw128c4": 9.8, "sw80c4": 13.4, "sw96c4": 8.4, "sw112c4": 9.1, "n96c4": 8.5},
    ((112, 11008, 4096), "fp16", "row"): {"t128": 31.3, "sw80c4": 42.9, "sw96c4": 44.5, "sw112c4": 32.3,
        "sw128c4": 32.1, "n128c4": 30.8},
    ((96, 9216, 4096), "fp16", "row"): {"t128": 28.3, "sw80c4": 40.8, "sw96c4": 26.4, "sw112c4": 28.9,
        "sw128c4": 28.8, "n128c4": 27.4},
    ((96, 14336, 4096), "fp16", "row"): {"t128": 37.8, "sw80c4": 48.0, "sw96c4": 34.0, "sw112c4": 35.5,
        "sw128c4": 36.0, "n128c4": 37.1},
}


# the picks of the final rules at points not timed before (gemm_small_s27_auto_new.json: `auto` beside t128, t64 and
# sw128c4) and the 80 %-full round / thin second round of sw80c4 and sw96c4 (gemm_small_s27_gap*.json)
MEASURED_S27B = {
    ((80, 28672, 4096), "fp16", "col"): {"sw80c4": 62.1, "t128": 77.4, "t64": 82.5, "sw128c4": 68.0},
    ((80, 28672, 4096), "e4m3", "col"): {"sw80c4": 33.9, "t128": 42.7, "t64": 46.6, "sw128c4": 37.2},
    ((72, 12288, 4096), "fp16", "col"): {"t128": 39.2, "t64": 41.3, "sw128c4": 33.0, "sw80c4": 29.6, "sw96c4": 30.7},
    ((72, 12288, 4096), "e4m3", "col"): {"t128": 23.2, "t64": 22.7, "sw128c4": 18.6, "sw80c4": 16.0, "sw96c4": 17.5},
    ((88, 11008, 4096), "fp16", "col"): {"sw96c4": 28.7, "t128": 30.6, "t64": 35.4, "sw128c4": 31.4},
    ((88, 11008, 4096), "e4m3", "col"): {"sw96c4": 14.3, "t128": 20.1, "t64": 19.3, "sw128c4": 15.8},
    ((104, 11008, 4096), "fp16", "col"): {"n96c4": 28.9, "t128": 30.2, "t64": 33.9, "sw128c4": 31.8},
    ((104, 11008, 4096), "e4m3", "col"): {"n96c4": 15.1, "t128": 18.4, "t64": 18.0, "sw128c4": 16.0},
    ((120, 9216, 4096), "fp16", "col"): {"n96c4": 26.5, "t128": 28.1, "t64": 31.9, "sw128c4": 29.9},
    ((120, 9216, 4096), "e4m3", "col"): {"n96c4": 12.5, "t128": 14.5, "t64": 14.4, "sw128c4": 15.0},
    ((128, 9216, 2048), "fp16", "col"): {"n96c4": 12.5, "t128": 14.5, "t64": 14.5, "sw128c4": 14.6},
    ((128, 9216, 2048), "e4m3", "col"): {"n96c4": 7.9, "t128": 8.6, "t64": 8.7, "sw128c4": 9.6},
    ((65, 11008, 8192), "fp16", "col"): {"sw80c4": 48.6, "t128": 72.9, "t64": 84.3, "sw128c4": 56.5},
    ((65, 11008, 8192), "e4m3", "col"): {"sw80c4": 27.5, "t128": 38.9, "t64": 42.1, "sw128c4": 31.9},
    ((96, 10240, 4096), "fp16", "col"): {"sw96c4": 28.1, "t128": 30.6, "t64": 35.0, "sw128c4": 31.0},
    ((96, 10240, 4096), "e4m3", "col"): {"sw96c4": 12.7, "t128": 19.4, "t64": 18.2, "sw128c4": 14.9},
    ((96, 12288, 4096), "fp16", "col"): {"t128": 33.3, "sw80c4": 43.2, "sw96c4": 31.3, "t64": 35.5},
    ((96, 12288, 4096), "e4m3", "col"): {"t128": 19.9, "sw80c4": 23.2, "sw96c4": 17.1, "t64": 20.3},
    ((80, 16384, 4096), "fp16", "col"): {"t128": 43.8, "sw80c4": 49.7, "sw96c4": 49.9, "t64": 45.1},
    ((80, 16384, 4096), "e4m3", "col"): {"t128": 22.8, "sw80c4": 27.1, "sw96c4": 27.5, "t64": 26.0},
    ((96, 16384, 4096), "fp16", "col"): {"t128": 40.5, "sw80c4": 60.8, "sw96c4": 49.9, "t64": 41.4},
    ((96, 16384, 4096), "e4m3", "col"): {"t128": 22.0, "sw80c4": 32.3, "sw96c4": 27.9, "t64": 24.6},
    ((80, 12288, 2048), "fp16", "col"): {"t128": 19.6, "sw80c4": 17.1, "sw96c4": 17.9, "t64": 21.0},
    ((80, 12288, 2048), "e4m3", "col"): {"t128": 11.6, "sw80c4": 8.5, "sw96c4": 9.1, "t64": 11.9},
    ((96, 13312, 4096), "fp16", "col"): {"sw96c4": 32.2, "sw80c4": 45.4, "t64": 37.2},
    ((96, 13312, 4096), "e4m3", "col"): {"sw96c4": 18.3, "sw80c4": 24.1, "t64": 21.2},
    ((72, 12288, 4096), "fp16", "row"): {"t128": 38.0, "sw80c4": 29.6, "sw96c4": 29.8},
    ((96, 16384, 4096), "fp16", "row"): {"t128": 42.9, "sw80c4": 63.1, "sw96c4": 51.3},
}


# 97-128 rows: the 128x80 tile in clusters along N beside n96c4 and t64 (gemm_small_s27_n80.json; `auto` then ran
# n96c4 or t64), and at 120 x 9216 beside n96c4 (gemm_small_s27_n80b.json, `auto` already running n80c4)
MEASURED_S27C = {
    ((128, 9216, 4096), "fp16", "col"): {"n96c4": 27.3, "n80c4": 27.0, "t64": 32.1},
    ((128, 9216, 4096), "e4m3", "col"): {"n96c4": 12.3, "n80c4": 11.7, "t64": 14.1},
    ((112, 9216, 4096), "fp16", "col"): {"n96c4": 26.9, "n80c4": 26.6, "t64": 31.6},
    ((112, 9216, 4096), "e4m3", "col"): {"n96c4": 12.5, "n80c4": 12.0, "t64": 15.1},
    ((128, 8192, 4096), "fp16", "col"): {"t64": 22.1, "n80c4": 25.4, "n96c4": 25.8},
    ((128, 8192, 4096), "e4m3", "col"): {"t64": 10.4, "n80c4": 11.0, "n96c4": 11.8},
    ((128, 9216, 2048), "fp16", "col"): {"n96c4": 12.5, "n80c4": 11.6, "t64": 14.4},
    ((128, 9216, 2048), "e4m3", "col"): {"n96c4": 7.7, "n80c4": 7.1, "t64": 8.5},
    ((104, 8704, 4096), "fp16", "col"): {"n96c4": 26.0, "n80c4": 25.4, "t64": 30.9},
    ((104, 8704, 4096), "e4m3", "col"): {"n96c4": 12.0, "n80c4": 11.3, "t64": 15.4},
    ((120, 10240, 4096), "fp16", "col"): {"n96c4": 28.8, "n80c4": 41.0, "t64": 33.5},
    ((120, 10240, 4096), "e4m3", "col"): {"n96c4": 14.3, "n80c4": 20.3, "t64": 16.2},
    ((128, 11008, 4096), "fp16", "col"): {"n96c4": 29.6, "n80c4": 41.1, "t64": 33.8},
    ((128, 11008, 4096), "e4m3", "col"): {"n96c4": 16.0, "n80c4": 21.9, "t64": 18.0},
    ((120, 9216, 4096), "fp16", "col"): {"n80c4": 26.7, "n96c4": 27.1},
    ((120, 9216, 4096), "e4m3", "col"): {"n80c4": 11.2, "n96c4": 13.0},
}


# 65-128 rows at N = 4096 (gemm_small_s27_n4096.json; `auto` ran t64 split 2): every tile here runs at 0.50-0.89x
# of cuBLAS, the swapped 4-CTA builds (split 2-4 ways) slowest — no tile of the right shape yet (docs/gemm.md)
MEASURED_S27D = {
    ((80, 4096, 4096), "fp16", "col"): {"t64": 17.9, "sw80c4": 23.4, "sw96c4": 24.5, "sw128c4": 26.9, "sw64": 19.6,
        "t128": 16.9},
    ((80, 4096, 4096), "e4m3", "col"): {"t64": 10.8, "sw80c4": 15.8, "sw96c4": 16.9, "sw128c4": 19.8, "sw64": 10.8,
        "t128": 11.4},
    ((96, 4096, 4096), "fp16", "col"): {"t64": 16.1, "sw80c4": 33.5, "sw96c4": 24.7, "sw128c4": 27.3, "sw64": 17.8,
        "t128": 15.9},
    ((96, 4096, 4096), "e4m3", "col"): {"t64": 10.4, "sw80c4": 21.0, "sw96c4": 17.2, "sw128c4": 19.8, "sw64": 9.9,
        "t128": 11.3},
    ((96, 4096, 11008), "fp16", "col"): {"t64": 30.3, "sw80c4": 74.1, "sw96c4": 49.6, "sw128c4": 53.4, "sw64": 42.9,
        "t128": 33.0},
    ((96, 4096, 11008), "e4m3", "col"): {"t64": 21.0, "sw80c4": 41.7, "sw96c4": 30.6, "sw128c4": 33.9, "sw64": 22.7,
        "t128": 20.4},
    ((128, 4096, 14336), "fp16", "col"): {"t64": 38.8, "sw80c4": 94.8, "sw96c4": 96.4, "sw128c4": 66.3, "sw64": 46.5,
        "t128": 41.4},
    ((128, 4096, 14336), "e4m3", "col"): {"t64": 25.9, "sw80c4": 51.6, "sw96c4": 53.1, "sw128c4": 40.8, "sw64": 25.4,
        "t128": 25.1},
    ((72, 4096, 4096), "fp16", "col"): {"t64": 18.6, "sw80c4": 23.0, "sw96c4": 24.3, "sw128c4": 27.0, "sw64": 20.9,
        "t128": 17.5},
    ((72, 4096, 4096), "e4m3", "col"): {"t64": 11.1, "sw80c4": 15.9, "sw96c4": 17.7, "sw128c4": 20.2, "sw64": 11.5,
        "t128": 11.6},
}


# 64-96 rows x N = 1024-8192 (gemm_small_s28_wide*.json; bf16 over column-major B as "fp16" "col", fp16->fp32 over
# row-major B as "row"): the 64-row swapped tile as wide as M, sw80 (65-80 rows) / sw96 (81-96), 1.1-2.1x faster than
# every other tile where M fits it; wider than M (sw80 at 96 rows) 1.3x slower than sw64; at 64 rows sw64 stays best
MEASURED_S28 = {
    ((65, 4096, 4096), "fp16", "col"): {"sw64": 22.2, "sw80": 11.6, "sw96": 16.1, "t64": 20.1, "t128": 18.5},
    ((65, 4096, 4096), "e4m3", "col"): {"sw64": 11.8, "sw80": 7.8, "sw96": 9.2, "t64": 11.5, "t128": 12.1},
    ((72, 4096, 4096), "fp16", "col"): {"sw64": 20.6, "sw80": 10.3, "sw96": 13.4, "t64": 18.3, "t128": 17.2},
    ((72, 4096, 4096), "e4m3", "col"): {"sw64": 11.2, "sw80": 7.1, "sw96": 8.5, "t64": 11.2, "t128": 11.7},
    ((80, 4096, 4096), "fp16", "col"): {"sw64": 19.8, "sw80": 10.4, "sw96": 11.9, "t64": 17.6, "t128": 16.8},
    ((80, 4096, 4096), "e4m3", "col"): {"sw64": 10.8, "sw80": 7.0, "sw96": 8.0, "t64": 11.0, "t128": 11.5},
    ((96, 4096, 4096), "fp16", "col"): {"sw64": 17.7, "sw80": 23.2, "sw96": 10.1, "t64": 15.9, "t128": 15.9},
    ((96, 4096, 4096), "e4m3", "col"): {"sw64": 9.6, "sw80": 11.7, "sw96": 7.3, "t64": 10.3, "t128": 11.2},
    ((64, 4096, 4096), "fp16", "col"): {"sw64": 9.5, "sw80": 10.7, "sw96": 13.1, "t64": 11.3, "t128": 15.6},
    ((64, 4096, 4096), "e4m3", "col"): {"sw64": 6.6, "sw80": 7.8, "sw96": 9.0, "t64": 7.9, "t128": 11.7},
    ((96, 4096, 11008), "fp16", "col"): {"sw64": 44.4, "sw80": 59.2, "sw96": 27.1, "t64": 30.4, "t128": 32.6},
    ((96, 4096, 11008), "e4m3", "col"): {"sw64": 22.8, "sw80": 30.4, "sw96": 14.6, "t64": 20.9, "t128": 20.5},
    ((80, 4096, 14336), "fp16", "col"): {"sw64": 62.8, "sw80": 33.3, "sw96": 34.7, "t64": 46.3, "t128": 39.8},
    ((80, 4096, 14336), "e4m3", "col"): {"sw64": 30.7, "sw80": 19.2, "sw96": 19.5, "t64": 27.4, "t128": 24.5},
    ((80, 8192, 4096), "fp16", "col"): {"sw64": 40.1, "sw80": 19.7, "sw96": 20.4, "t64": 23.5, "t128": 28.1},
    ((80, 8192, 4096), "e4m3", "col"): {"sw64": 20.5, "sw80": 8.1, "sw96": 9.9, "t64": 13.8, "t128": 15.9},
    ((96, 8192, 4096), "fp16", "col"): {"sw64": 36.0, "sw80": 49.4, "sw96": 20.5, "t64": 21.8, "t128": 26.4},
    ((96, 8192, 4096), "e4m3", "col"): {"sw64": 17.8, "sw80": 22.9, "sw96": 8.8, "t64": 12.7, "t128": 14.8},
    ((80, 1024, 14336), "fp16", "col"): {"sw64": 21.9, "sw80": 12.6, "sw96": 13.9, "t64": 17.3, "t128": 15.6},
    ((80, 1024, 14336), "e4m3", "col"): {"sw64": 14.0, "sw80": 9.9, "sw96": 9.9, "t64": 13.1, "t128": 12.3},
    ((65, 4096, 4096), "fp16", "row"): {"sw64": 21.7, "sw80": 11.6, "sw96": 16.2, "t64": 20.3, "t128": 18.9},
    ((72, 4096, 4096), "fp16", "row"): {"sw64": 20.1, "sw80": 10.6, "sw96": 13.6, "t64": 18.2, "t128": 17.5},
    ((80, 4096, 4096), "fp16", "row"): {"sw64": 19.5, "sw80": 10.6, "sw96": 12.1, "t64": 17.3, "t128": 17.5},
    ((96, 4096, 4096), "fp16", "row"): {"sw64": 18.0, "sw80": 22.8, "sw96": 10.4, "t64": 15.7, "t128": 16.6},
    ((64, 4096, 4096), "fp16", "row"): {"sw64": 9.8, "sw80": 11.8, "sw96": 16.2, "t64": 11.2, "t128": 18.9},
    ((96, 4096, 11008), "fp16", "row"): {"sw64": 44.9, "sw80": 58.2, "sw96": 27.2, "t64": 34.5, "t128": 32.9},
    ((80, 4096, 14336), "fp16", "row"): {"sw64": 61.4, "sw80": 33.6, "sw96": 35.1, "t64": 49.0, "t128": 39.7},
    ((80, 8192, 4096), "fp16", "row"): {"sw64": 37.4, "sw80": 19.7, "sw96": 20.5, "t64": 23.5, "t128": 27.7},
    ((96, 8192, 4096), "fp16", "row"): {"sw64": 34.5, "sw80": 46.6, "sw96": 20.5, "t64": 23.1, "t128": 26.6},
    ((80, 1024, 14336), "fp16", "row"): {"sw64": 23.7, "sw80": 12.2, "sw96": 13.5, "t64": 17.1, "t128": 15.3},
}

# `auto` on the sw80 / sw96 rule against the tiles at shapes the first run did not time (gemm_small_s28_auto_more*.json;
# `auto`'s own pick where it is none of the listed: sw32 / sw16 at 80 x 1024 x 1024-4096): N = 1024 with a short K,
# N = 8192 with a long K, the 4-CTA builds' long N (which stay over sw80 / sw96: 9216-12288), a thin second round
MEASURED_S28B = {
    ((80, 1024, 1024), "fp16", "col"): {"sw80": 7.3, "sw96": 7.6, "sw80c4": 9.0, "sw96c4": 8.7, "t64": 7.8, "t128": 7.8,
        "sw32": 4.5},
    ((80, 1024, 1024), "e4m3", "col"): {"sw80": 4.2, "sw96": 4.4, "sw80c4": 6.7, "sw96c4": 6.9, "t64": 5.0, "t128": 6.6,
        "sw16": 3.1},
    ((80, 1024, 4096), "fp16", "col"): {"sw80": 8.0, "sw96": 8.5, "sw80c4": 12.2, "sw96c4": 12.5, "t64": 9.7,
        "t128": 10.3},
    ((80, 1024, 4096), "e4m3", "col"): {"sw80": 7.4, "sw96": 7.8, "sw80c4": 8.5, "sw96c4": 8.6, "t64": 8.6, "t128": 8.5,
        "sw32": 5.5},
    ((72, 8192, 1024), "fp16", "col"): {"sw80": 5.7, "sw96": 6.6, "sw80c4": 15.1, "sw96c4": 16.2, "t64": 8.2,
        "t128": 10.7},
    ((72, 8192, 1024), "e4m3", "col"): {"sw80": 4.2, "sw96": 4.5, "sw80c4": 11.9, "sw96c4": 13.0, "t64": 5.4,
        "t128": 9.3},
    ((96, 8192, 14336), "fp16", "col"): {"sw80": 155.9, "sw96": 62.0, "sw80c4": 124.2, "sw96c4": 107.8, "t64": 66.4,
        "t128": 70.8},
    ((96, 8192, 14336), "e4m3", "col"): {"sw80": 76.9, "sw96": 33.3, "sw80c4": 63.9, "sw96c4": 59.2, "t64": 39.4,
        "t128": 40.3},
    ((88, 4096, 4096), "fp16", "col"): {"sw80": 23.5, "sw96": 10.4, "sw80c4": 33.2, "sw96c4": 24.6, "t64": 16.3,
        "t128": 15.6},
    ((88, 4096, 4096), "e4m3", "col"): {"sw80": 12.7, "sw96": 7.3, "sw80c4": 20.7, "sw96c4": 17.7, "t64": 10.7,
        "t128": 11.4},
    ((72, 9216, 4096), "fp16", "col"): {"sw80": 30.4, "sw96": 33.0, "sw80c4": 24.7, "sw96c4": 26.5, "t64": 36.0,
        "t128": 31.0},
    ((72, 9216, 4096), "e4m3", "col"): {"sw80": 13.9, "sw96": 16.2, "sw80c4": 11.7, "sw96c4": 12.1, "t64": 17.4,
        "t128": 18.3},
    ((80, 11008, 4096), "fp16", "col"): {"sw80": 31.6, "sw96": 33.6, "sw80c4": 26.8, "sw96c4": 28.2, "t64": 36.3,
        "t128": 32.9},
    ((80, 11008, 4096), "e4m3", "col"): {"sw80": 15.1, "sw96": 17.2, "sw80c4": 12.7, "sw96c4": 13.2, "t64": 20.5,
        "t128": 21.5},
    ((96, 12288, 4096), "fp16", "col"): {"sw80": 70.3, "sw96": 33.2, "sw80c4": 42.5, "sw96c4": 30.0, "t64": 37.6,
        "t128": 32.2},
    ((96, 12288, 4096), "e4m3", "col"): {"sw80": 35.7, "sw96": 18.0, "sw80c4": 23.7, "sw96c4": 17.1, "t64": 20.2,
        "t128": 19.8},
    ((80, 16384, 4096), "fp16", "col"): {"sw80": 36.8, "sw96": 38.1, "sw80c4": 48.8, "sw96c4": 49.3, "t64": 43.0,
        "t128": 42.6},
    ((80, 16384, 4096), "e4m3", "col"): {"sw80": 19.8, "sw96": 20.5, "sw80c4": 27.0, "sw96c4": 27.5, "t64": 26.5,
        "t128": 22.7},
    ((80, 1024, 1024), "fp16", "row"): {"sw80": 7.8, "sw96": 7.7, "sw80c4": 8.7, "sw96c4": 9.2, "t64": 7.4, "t128": 8.1,
        "sw32": 4.3},
    ((80, 1024, 4096), "fp16", "row"): {"sw80": 8.2, "sw96": 8.7, "sw80c4": 12.9, "sw96c4": 13.3, "t64": 9.9,
        "t128": 10.4},
    ((72, 8192, 1024), "fp16", "row"): {"sw80": 5.7, "sw96": 6.2, "sw80c4": 15.5, "sw96c4": 16.5, "t64": 7.8,
        "t128": 10.9},
    ((96, 8192, 14336), "fp16", "row"): {"sw80": 137.9, "sw96": 64.7, "sw80c4": 130.7, "sw96c4": 106.3, "t64": 68.1,
        "t128": 71.1},
    ((88, 4096, 4096), "fp16", "row"): {"sw80": 23.7, "sw96": 10.8, "sw80c4": 32.8, "sw96c4": 25.1, "t64": 16.8,
        "t128": 17.1},
    ((72, 9216, 4096), "fp16", "row"): {"sw80": 30.7, "sw96": 32.7, "sw80c4": 24.0, "sw96c4": 25.3, "t64": 37.8,
        "t128": 30.9},
    ((80, 11008, 4096), "fp16", "row"): {"sw80": 31.3, "sw96": 33.2, "sw80c4": 27.0, "sw96c4": 27.9, "t64": 38.2,
        "t128": 34.0},
    ((96, 12288, 4096), "fp16", "row"): {"sw80": 61.0, "sw96": 33.8, "sw80c4": 44.6, "sw96c4": 30.4, "t64": 37.7,
        "t128": 34.0},
    ((80, 16384, 4096), "fp16", "row"): {"sw80": 37.3, "sw96": 38.6, "sw80c4": 50.9, "sw96c4": 50.7, "t64": 44.6,
        "t128": 43.1},
}

# 65-96 rows x N = 16384 (gemm_small_s28_n16384*.json): two rounds of the wide swapped tiles, 2-30 % faster than t128
# (the earlier pick) where M fits them — after the model gave them 1.1x the HBM rate, which at 80 x 16384 had tied them
MEASURED_S28C = {
    ((96, 16384, 4096), "fp16", "col"): {"sw80": 81.3, "sw96": 37.8, "t128": 41.1, "t64": 41.2},
    ((96, 16384, 4096), "e4m3", "col"): {"sw80": 47.3, "sw96": 20.9, "t128": 22.0, "t64": 24.9},
    ((65, 16384, 4096), "fp16", "col"): {"sw80": 37.4, "sw96": 46.1, "t128": 48.4, "t64": 53.3},
    ((65, 16384, 4096), "e4m3", "col"): {"sw80": 20.0, "sw96": 23.8, "t128": 25.1, "t64": 29.0},
    ((72, 16384, 1024), "fp16", "col"): {"sw80": 8.6, "sw96": 10.7, "t128": 11.0, "t64": 12.0},
    ((72, 16384, 1024), "e4m3", "col"): {"sw80": 5.9, "sw96": 6.9, "t128": 7.1, "t64": 8.8},
    ((88, 16384, 14336), "fp16", "col"): {"sw80": 286.0, "sw96": 128.9, "t128": 133.1, "t64": 139.5},
    ((88, 16384, 14336), "e4m3", "col"): {"sw80": 154.6, "sw96": 66.9, "t128": 71.6, "t64": 79.3},
    ((80, 16384, 4096), "fp16", "col"): {"sw80": 37.1, "sw96": 38.4, "t128": 43.5, "t64": 45.0},
    ((80, 16384, 4096), "e4m3", "col"): {"sw80": 20.2, "sw96": 20.5, "t128": 22.8, "t64": 26.3},
    ((96, 16384, 4096), "fp16", "row"): {"sw80": 78.0, "sw96": 39.4, "t128": 42.6, "t64": 42.8},
    ((65, 16384, 4096), "fp16", "row"): {"sw80": 37.9, "sw96": 44.8, "t128": 47.9, "t64": 56.0},
    ((72, 16384, 1024), "fp16", "row"): {"sw80": 9.1, "sw96": 11.8, "t128": 12.6, "t64": 13.8},
    ((88, 16384, 14336), "fp16", "row"): {"sw80": 276.4, "sw96": 130.4, "t128": 139.5, "t64": 142.0},
    ((80, 16384, 4096), "fp16", "row"): {"sw80": 37.8, "sw96": 39.1, "t128": 43.7, "t64": 44.6},
}

# 97-128 rows with a short N (gemm_small_s28_w128*.json; `auto`'s own pick where it is none of the listed: sw64 for
# fp8 at 112-128 x 4096 x 4096): the 64-row swapped tiles of 112 / 128 columns against t64 split 2 (two row bands).
# sw112 for fp8 at 97-112 x 4096 x 4096 is its unsplit launch (what the model runs since the eleventh session), from
# the run that timed both (gemm_small_s28_sw112split.json: sw112#1; split 2 there 9.0 / 8.5 / 8.3 us as here)
MEASURED_S28D = {
    ((97, 4096, 4096), "fp16", "col"): {"sw96": 28.8, "sw112": 13.3, "sw128": 17.7, "t64": 16.0, "t128": 16.2},
    ((97, 4096, 4096), "e4m3", "col"): {"sw96": 14.7, "sw112": 7.3, "sw128": 10.6, "t64": 10.4, "t128": 11.5},
    ((104, 4096, 4096), "fp16", "col"): {"sw96": 27.2, "sw112": 11.8, "sw128": 15.7, "t64": 14.0, "t128": 15.5},
    ((104, 4096, 4096), "e4m3", "col"): {"sw96": 12.8, "sw112": 7.4, "sw128": 9.7, "t64": 9.9, "t128": 11.2},
    ((112, 4096, 4096), "fp16", "col"): {"sw96": 26.4, "sw112": 11.6, "sw128": 14.0, "t64": 12.2, "t128": 15.6},
    ((112, 4096, 4096), "e4m3", "col"): {"sw96": 14.0, "sw112": 7.6, "sw128": 9.6, "t64": 9.8, "t128": 11.1,
        "sw64": 8.0},
    ((120, 4096, 4096), "fp16", "col"): {"sw96": 25.2, "sw112": 31.0, "sw128": 12.6, "t64": 12.4, "t128": 15.5},
    ((120, 4096, 4096), "e4m3", "col"): {"sw96": 13.6, "sw112": 15.9, "sw128": 9.0, "t64": 9.3, "t128": 10.8,
        "sw64": 7.5},
    ((128, 4096, 4096), "fp16", "col"): {"sw96": 24.3, "sw112": 29.1, "sw128": 12.5, "t64": 12.4, "t128": 15.5},
    ((128, 4096, 4096), "e4m3", "col"): {"sw96": 13.0, "sw112": 15.4, "sw128": 8.9, "t64": 9.3, "t128": 11.0,
        "sw64": 7.4},
    ((112, 8192, 4096), "fp16", "col"): {"sw96": 55.9, "sw112": 21.3, "sw128": 22.9, "t64": 21.6, "t128": 26.8},
    ((112, 8192, 4096), "e4m3", "col"): {"sw96": 27.2, "sw112": 9.1, "sw128": 11.1, "t64": 11.4, "t128": 14.6},
    ((112, 4096, 14336), "fp16", "col"): {"sw96": 86.3, "sw112": 36.7, "sw128": 38.5, "t64": 38.5, "t128": 40.5},
    ((112, 4096, 14336), "e4m3", "col"): {"sw96": 45.3, "sw112": 21.8, "sw128": 22.6, "t64": 26.1, "t128": 25.0},
    ((128, 4096, 11008), "fp16", "col"): {"sw96": 64.0, "sw112": 80.8, "sw128": 30.6, "t64": 31.1, "t128": 33.6},
    ((128, 4096, 11008), "e4m3", "col"): {"sw96": 33.1, "sw112": 41.2, "sw128": 18.1, "t64": 21.0, "t128": 21.0},
    ((104, 16384, 4096), "fp16", "col"): {"sw96": 114.1, "sw112": 40.3, "sw128": 46.6, "t64": 40.1, "t128": 38.7},
    ((104, 16384, 4096), "e4m3", "col"): {"sw96": 54.4, "sw112": 21.3, "sw128": 24.2, "t64": 24.3, "t128": 21.9},
    ((97, 4096, 4096), "fp16", "row"): {"sw96": 27.3, "sw112": 13.8, "sw128": 18.0, "t64": 15.9, "t128": 17.0},
    ((104, 4096, 4096), "fp16", "row"): {"sw96": 26.4, "sw112": 12.6, "sw128": 15.8, "t64": 13.2, "t128": 16.2},
    ((112, 4096, 4096), "fp16", "row"): {"sw96": 25.2, "sw112": 12.3, "sw128": 14.0, "t64": 13.3, "t128": 16.3},
    ((120, 4096, 4096), "fp16", "row"): {"sw96": 24.1, "sw112": 29.2, "sw128": 13.1, "t64": 13.3, "t128": 16.2},
    ((128, 4096, 4096), "fp16", "row"): {"sw96": 24.1, "sw112": 29.7, "sw128": 12.9, "t64": 13.4, "t128": 16.7},
    ((112, 8192, 4096), "fp16", "row"): {"sw96": 52.7, "sw112": 21.2, "sw128": 22.7, "t64": 22.3, "t128": 27.1},
    ((112, 4096, 14336), "fp16", "row"): {"sw96": 81.4, "sw112": 36.8, "sw128": 39.3, "t64": 41.0, "t128": 40.7},
    ((128, 4096, 11008), "fp16", "row"): {"sw96": 59.6, "sw112": 74.9, "sw128": 30.8, "t64": 32.7, "t128": 33.9},
    ((104, 16384, 4096), "fp16", "row"): {"sw96": 107.9, "sw112": 40.9, "sw128": 45.3, "t64": 41.5, "t128": 41.2},
}

# 113-128 rows with a long K (gemm_small_s28_sw128*.json; `auto`'s sw64 at 124 x 4096 x 4096 fp8): sw128 1.07-1.17x
# faster than t64 for fp8 at K >= 8192 (SW128_FP8_MIN_K), for 16-bit from 10 % slower to 7 % faster
MEASURED_S28E = {
    ((128, 4096, 14336), "fp16", "col"): {"sw128": 38.5, "t64": 38.9, "t128": 41.8},
    ((128, 4096, 14336), "e4m3", "col"): {"sw128": 22.8, "t64": 26.1, "t128": 25.2},
    ((120, 4096, 11008), "fp16", "col"): {"sw128": 31.1, "t64": 31.5, "t128": 33.8},
    ((120, 4096, 11008), "e4m3", "col"): {"sw128": 18.3, "t64": 21.1, "t128": 21.1},
    ((128, 4096, 8192), "fp16", "col"): {"sw128": 24.8, "t64": 25.0, "t128": 27.5},
    ((128, 4096, 8192), "e4m3", "col"): {"sw128": 12.7, "t64": 14.8, "t128": 15.7},
    ((116, 8192, 11008), "fp16", "col"): {"sw128": 57.3, "t64": 51.7, "t128": 57.9},
    ((116, 8192, 11008), "e4m3", "col"): {"sw128": 29.6, "t64": 31.3, "t128": 33.0},
    ((128, 2048, 14336), "fp16", "col"): {"sw128": 23.8, "t64": 23.6, "t128": 26.8},
    ((128, 2048, 14336), "e4m3", "col"): {"sw128": 12.5, "t64": 14.2, "t128": 15.4},
    ((124, 4096, 4096), "fp16", "col"): {"sw128": 12.4, "t64": 12.1, "t128": 15.8},
    ((124, 4096, 4096), "e4m3", "col"): {"sw128": 9.1, "t64": 9.2, "t128": 10.7, "sw64": 7.6},
    ((128, 4096, 14336), "fp16", "row"): {"sw128": 39.6, "t64": 40.9, "t128": 41.7},
    ((120, 4096, 11008), "fp16", "row"): {"sw128": 31.0, "t64": 32.6, "t128": 33.7},
    ((128, 4096, 8192), "fp16", "row"): {"sw128": 25.3, "t64": 25.4, "t128": 28.0},
    ((116, 8192, 11008), "fp16", "row"): {"sw128": 55.3, "t64": 53.8, "t128": 59.0},
    ((128, 2048, 14336), "fp16", "row"): {"sw128": 23.9, "t64": 24.1, "t128": 27.0},
    ((124, 4096, 4096), "fp16", "row"): {"sw128": 12.9, "t64": 13.2, "t128": 16.5},
}

# 97-112 rows x N = 2048-4096 x K = 2048-6144, bf16 (standing for 16-bit) and fp8 over a column-major B
# (gemm_small_s29_sw112k.json, one run): sw112 as the model now launches it (split or not: SPLIT_BY_MODEL; both were
# timed) beside the variant `auto` ran before (sw64, two column tiles, where it is named)
MEASURED_S29 = {
    ((97, 2048, 2048), "e4m3", "col"): {"sw112": 4.8, "sw64": 5.7},
    ((97, 2048, 2048), "fp16", "col"): {"sw112": 7.8, "sw64": 7.5},
    ((97, 2048, 3072), "e4m3", "col"): {"sw112": 6.1, "sw64": 7.0},
    ((97, 2048, 3072), "fp16", "col"): {"sw112": 8.7, "sw64": 9.7},
    ((97, 2048, 4096), "e4m3", "col"): {"sw112": 7.7, "sw64": 7.8},
    ((97, 2048, 4096), "fp16", "col"): {"sw112": 9.5},
    ((97, 2048, 6144), "e4m3", "col"): {"sw112": 8.8, "sw64": 9.4},
    ((97, 2048, 6144), "fp16", "col"): {"sw112": 12.0},
    ((97, 4096, 2048), "e4m3", "col"): {"sw112": 4.8, "sw64": 5.9},
    ((97, 4096, 2048), "fp16", "col"): {"sw112": 7.4},
    ((97, 4096, 3072), "e4m3", "col"): {"sw112": 6.3, "sw64": 7.8},
    ((97, 4096, 3072), "fp16", "col"): {"sw112": 10.1},
    ((97, 4096, 4096), "e4m3", "col"): {"sw112": 7.5},
    ((97, 4096, 4096), "fp16", "col"): {"sw112": 12.5},
    ((97, 4096, 6144), "e4m3", "col"): {"sw112": 10.0},
    ((97, 4096, 6144), "fp16", "col"): {"sw112": 19.1},
    ((112, 2048, 2048), "e4m3", "col"): {"sw112": 4.9, "sw64": 5.5},
    ((112, 2048, 2048), "fp16", "col"): {"sw112": 7.3, "sw64": 7.0},
    ((112, 2048, 3072), "e4m3", "col"): {"sw112": 6.2, "sw64": 6.4},
    ((112, 2048, 3072), "fp16", "col"): {"sw112": 8.3, "sw64": 8.5},
    ((112, 2048, 4096), "e4m3", "col"): {"sw112": 7.5, "sw64": 7.2},
    ((112, 2048, 4096), "fp16", "col"): {"sw112": 9.1},
    ((112, 2048, 6144), "e4m3", "col"): {"sw112": 8.3, "sw64": 8.6},
    ((112, 2048, 6144), "fp16", "col"): {"sw112": 10.8},
    ((112, 4096, 2048), "e4m3", "col"): {"sw112": 5.0, "sw64": 5.4},
    ((112, 4096, 2048), "fp16", "col"): {"sw112": 7.6},
    ((112, 4096, 3072), "e4m3", "col"): {"sw112": 6.3, "sw64": 6.8},
    ((112, 4096, 3072), "fp16", "col"): {"sw112": 10.1},
    ((112, 4096, 4096), "e4m3", "col"): {"sw112": 7.6},
    ((112, 4096, 4096), "fp16", "col"): {"sw112": 11.8},
    ((112, 4096, 6144), "e4m3", "col"): {"sw112": 10.1},
    ((112, 4096, 6144), "fp16", "col"): {"sw112": 19.2},
}


# The lean template (rung 9's loops: two producer threads, a ring position, running descriptors; twelfth session of
# 2026-12-01), one run (gemm_small_s30_band.json, _s30_n2fit.json): at the earlier tables' points of 33-128 rows with
# N <= 4224 their three fastest variants re-timed beside the n2 tile fitting M (these times replace theirs), and n2
# fitting points (48-128 rows x 2048-4096 x 2048-8192) with the variant the previous rules ran there; bf16 stands for
# 16-bit over a column-major B, fp16 -> fp32 over a row-major one
MEASURED_S30 = {
    ((64, 4096, 4096), "bf16", "col"): {"sw32n2": 8.8, "sw64": 9.2, "t64": 10.9, "t64_sk": 11.5},
    ((64, 4096, 4096), "e4m3", "col"): {"sw32n2": 5.7, "sw64": 6.2, "sw80": 7.6, "t64": 7.8},
    ((64, 4096, 4096), "fp16", "col"): {"sw32n2": 8.8, "sw64": 9.2, "t64": 11.5, "sw80": 11.7},
    ((64, 4096, 4096), "fp16", "row"): {"sw32n2": 9.0, "sw64": 9.4, "t64": 11.4, "t64_sk": 12.2},
    ((65, 4096, 4096), "e4m3", "col"): {"sw40n2": 7.0, "sw80": 7.6, "sw96": 9.0, "t64": 11.2},
    ((65, 4096, 4096), "fp16", "col"): {"sw40n2": 10.1, "sw80": 11.2, "sw96": 16.0, "t128": 18.1},
    ((65, 4096, 4096), "fp16", "row"): {"sw40n2": 10.2, "sw80": 11.3, "sw96": 16.0, "t128": 18.5},
    ((72, 4096, 4096), "e4m3", "col"): {"sw40n2": 6.0, "sw80": 6.9, "sw96": 8.4, "t64": 10.8},
    ((72, 4096, 4096), "fp16", "col"): {"sw40n2": 9.2, "sw80": 9.8, "sw96": 13.6, "t128": 17.4},
    ((72, 4096, 4096), "fp16", "row"): {"sw40n2": 9.4, "sw80": 10.1, "sw96": 13.9, "t128": 17.8},
    ((80, 1024, 1024), "e4m3", "col"): {"sw16": 2.7, "sw40n2": 2.9, "sw80": 3.9, "sw96": 4.1},
    ((80, 1024, 1024), "fp16", "col"): {"sw40n2": 3.7, "sw32": 4.1, "sw80": 5.0, "sw96": 5.4},
    ((80, 1024, 1024), "fp16", "row"): {"sw40n2": 3.8, "sw32": 4.2, "sw96": 5.6, "t64": 7.3},
    ((80, 1024, 4096), "e4m3", "col"): {"sw40n2": 5.2, "sw32": 5.3, "sw80": 6.8, "sw96": 7.4},
    ((80, 1024, 4096), "fp16", "col"): {"sw80": 7.6, "sw40n2": 8.4, "sw96": 8.5, "t64": 10.5},
    ((80, 1024, 4096), "fp16", "row"): {"sw80": 7.9, "sw40n2": 8.3, "sw96": 8.7, "t64": 11.3},
    ((80, 1024, 14336), "e4m3", "col"): {"sw80": 8.9, "sw96": 9.8, "sw40n2": 12.9, "t128": 13.1},
    ((80, 1024, 14336), "fp16", "col"): {"sw80": 12.4, "sw96": 13.8, "t128": 16.5, "sw40n2": 23.4},
    ((80, 1024, 14336), "fp16", "row"): {"sw80": 12.4, "sw96": 14.1, "t128": 16.8, "sw40n2": 23.8},
    ((80, 4096, 4096), "e4m3", "col"): {"sw40n2": 6.1, "sw80": 6.8, "sw96": 8.1, "sw64": 10.5},
    ((80, 4096, 4096), "fp16", "col"): {"sw40n2": 9.3, "sw80": 9.7, "sw96": 12.0, "t128": 17.2},
    ((80, 4096, 4096), "fp16", "row"): {"sw40n2": 9.3, "sw80": 10.1, "sw96": 12.2, "t64": 19.0},
    ((80, 4096, 14336), "e4m3", "col"): {"sw40n2": 18.5, "sw80": 19.7, "sw96": 20.5, "t128": 24.4},
    ((80, 4096, 14336), "fp16", "col"): {"sw40n2": 33.2, "sw80": 34.0, "sw96": 35.6, "t128": 40.8},
    ((80, 4096, 14336), "fp16", "row"): {"sw40n2": 33.9, "sw80": 34.7, "sw96": 36.2, "t128": 42.3},
    ((88, 4096, 4096), "e4m3", "col"): {"sw48n2": 6.5, "sw96": 7.5, "t64": 10.7, "t128": 11.2},
    ((88, 4096, 4096), "fp16", "col"): {"sw48n2": 9.7, "sw96": 10.5, "t128": 16.2, "t64": 16.8},
    ((88, 4096, 4096), "fp16", "row"): {"sw48n2": 9.8, "sw96": 10.7, "t128": 16.5, "t64": 17.6},
    ((96, 4096, 4096), "e4m3", "col"): {"sw48n2": 6.1, "sw96": 6.9, "sw64": 9.5, "t64": 10.2},
    ((96, 4096, 4096), "fp16", "col"): {"sw48n2": 9.5, "sw96": 10.2, "t128": 15.8, "t64": 16.5},
    ((96, 4096, 4096), "fp16", "row"): {"sw48n2": 9.8, "sw96": 10.6, "t128": 16.3, "t64": 17.1},
    ((96, 4096, 11008), "e4m3", "col"): {"sw48n2": 14.6, "sw96": 14.8, "t128": 20.3, "t64": 21.2},
    ((96, 4096, 11008), "fp16", "col"): {"sw48n2": 27.7, "sw96": 27.8, "t64": 30.6, "t128": 32.9},
    ((96, 4096, 11008), "fp16", "row"): {"sw48n2": 28.1, "sw96": 28.2, "t64": 31.3, "t128": 33.5},
    ((97, 2048, 2048), "e4m3", "col"): {"sw56n2": 3.9, "sw112": 4.7, "sw64": 5.7},
    ((97, 2048, 2048), "fp16", "col"): {"sw56n2": 5.5, "sw64": 7.6, "sw112": 7.6},
    ((97, 2048, 3072), "e4m3", "col"): {"sw56n2": 4.8, "sw112": 5.9, "sw64": 6.9},
    ((97, 2048, 3072), "fp16", "col"): {"sw56n2": 7.0, "sw112": 8.5, "sw64": 9.7},
    ((97, 2048, 4096), "e4m3", "col"): {"sw56n2": 5.4, "sw112": 7.5, "sw64": 7.5},
    ((97, 2048, 4096), "fp16", "col"): {"sw56n2": 8.6, "sw112": 9.3},
    ((97, 2048, 6144), "e4m3", "col"): {"sw56n2": 7.0, "sw112": 8.5, "sw64": 9.7},
    ((97, 2048, 6144), "fp16", "col"): {"sw112": 11.3, "sw56n2": 11.8},
    ((97, 4096, 2048), "e4m3", "col"): {"sw112": 4.8, "sw56n2": 5.0, "sw64": 5.7},
    ((97, 4096, 2048), "fp16", "col"): {"sw56n2": 7.0, "sw112": 7.7},
    ((97, 4096, 3072), "e4m3", "col"): {"sw112": 5.9, "sw56n2": 6.0, "sw64": 7.9},
    ((97, 4096, 3072), "fp16", "col"): {"sw56n2": 9.0, "sw112": 11.5},
    ((97, 4096, 4096), "e4m3", "col"): {"sw112": 7.2, "sw56n2": 7.2, "t64": 10.3, "sw128": 10.4},
    ((97, 4096, 4096), "fp16", "col"): {"sw56n2": 12.3, "sw112": 12.5, "t128": 15.5, "t64": 16.0},
    ((97, 4096, 4096), "fp16", "row"): {"sw56n2": 12.1, "sw112": 12.8, "t128": 15.8, "t64": 16.4},
    ((97, 4096, 6144), "e4m3", "col"): {"sw56n2": 9.1, "sw112": 12.2},
    ((97, 4096, 6144), "fp16", "col"): {"sw56n2": 17.1, "sw112": 19.1},
    ((104, 4096, 4096), "e4m3", "col"): {"sw56n2": 6.5, "sw112": 7.2, "sw128": 10.1, "t64": 10.1},
    ((104, 4096, 4096), "fp16", "col"): {"sw56n2": 10.6, "sw112": 12.0, "t64": 15.0, "t128": 15.3},
    ((104, 4096, 4096), "fp16", "row"): {"sw56n2": 10.4, "sw112": 12.7, "t64": 15.5, "sw128": 16.3},
    ((112, 2048, 2048), "e4m3", "col"): {"sw56n2": 3.8, "sw112": 4.8, "sw64": 5.2},
    ((112, 2048, 2048), "fp16", "col"): {"sw56n2": 5.4, "sw112": 6.7, "sw64": 6.8},
    ((112, 2048, 3072), "e4m3", "col"): {"sw56n2": 4.8, "sw112": 5.7, "sw64": 6.1},
    ((112, 2048, 3072), "fp16", "col"): {"sw56n2": 7.1, "sw112": 7.9, "sw64": 8.3},
    ((112, 2048, 4096), "e4m3", "col"): {"sw56n2": 5.4, "sw64": 6.8, "sw112": 6.8},
    ((112, 2048, 4096), "fp16", "col"): {"sw56n2": 8.6, "sw112": 8.7},
    ((112, 2048, 6144), "e4m3", "col"): {"sw56n2": 7.1, "sw112": 8.0, "sw64": 8.3},
    ((112, 2048, 6144), "fp16", "col"): {"sw112": 10.2, "sw56n2": 11.7},
    ((112, 4096, 2048), "e4m3", "col"): {"sw56n2": 4.6, "sw112": 4.8, "sw64": 5.1},
    ((112, 4096, 2048), "fp16", "col"): {"sw56n2": 6.3, "sw112": 7.0},
    ((112, 4096, 3072), "e4m3", "col"): {"sw56n2": 5.5, "sw112": 5.9, "sw64": 6.7},
    ((112, 4096, 3072), "fp16", "col"): {"sw56n2": 7.9, "sw112": 9.1},
    ((112, 4096, 4096), "e4m3", "col"): {"sw56n2": 6.3, "sw112": 6.8, "sw64": 8.4, "sw128": 9.5},
    ((112, 4096, 4096), "fp16", "col"): {"sw56n2": 10.1, "sw112": 11.5, "t64": 12.4, "sw128": 14.3},
    ((112, 4096, 4096), "fp16", "row"): {"sw56n2": 10.3, "t64": 12.8, "sw112": 12.9, "sw128": 14.6},
    ((112, 4096, 6144), "e4m3", "col"): {"sw56n2": 7.8, "sw112": 9.2},
    ((112, 4096, 6144), "fp16", "col"): {"sw56n2": 17.0, "sw112": 18.9},
    ((112, 4096, 14336), "e4m3", "col"): {"sw56n2": 20.5, "sw112": 21.8, "sw128": 23.0, "t128": 24.7},
    ((112, 4096, 14336), "fp16", "col"): {"sw56n2": 36.4, "sw112": 37.9, "t64": 38.6, "sw128": 40.7},
    ((112, 4096, 14336), "fp16", "row"): {"sw56n2": 37.0, "sw112": 39.0, "t128": 41.3, "sw128": 41.6},
    ((120, 4096, 4096), "e4m3", "col"): {"sw64n2": 6.6, "sw64": 7.7, "sw128": 9.1, "t64": 9.4},
    ((120, 4096, 4096), "fp16", "col"): {"sw64n2": 10.7, "t64": 11.8, "sw128": 12.7, "t128": 14.5},
    ((120, 4096, 4096), "fp16", "row"): {"sw64n2": 10.9, "t64": 12.3, "sw128": 13.3, "t128": 15.6},
    ((120, 4096, 11008), "e4m3", "col"): {"sw64n2": 15.8, "sw128": 18.5, "t64": 20.7, "t128": 20.7},
    ((120, 4096, 11008), "fp16", "col"): {"sw64n2": 29.9, "t64": 31.1, "sw128": 31.4, "t128": 33.5},
    ((120, 4096, 11008), "fp16", "row"): {"sw64n2": 29.9, "t64": 32.0, "sw128": 32.5, "t128": 33.9},
    ((124, 4096, 4096), "e4m3", "col"): {"sw64n2": 6.7, "sw64": 7.7, "sw128": 9.0, "t64": 9.3},
    ((124, 4096, 4096), "fp16", "col"): {"sw64n2": 10.7, "t64": 11.7, "sw128": 12.8, "t128": 14.5},
    ((124, 4096, 4096), "fp16", "row"): {"sw64n2": 11.0, "t64": 12.2, "sw128": 13.5, "t128": 15.8},
    ((128, 2048, 14336), "e4m3", "col"): {"sw128": 12.7, "sw64n2": 14.1, "t64": 14.4, "t128": 15.2},
    ((128, 2048, 14336), "fp16", "col"): {"sw128": 23.8, "t64": 23.9, "t128": 26.7, "sw64n2": 27.2},
    ((128, 2048, 14336), "fp16", "row"): {"sw128": 24.3, "t64": 25.0, "t128": 27.2, "sw64n2": 27.5},
    ((128, 4096, 4096), "bf16", "col"): {"sw64n2": 10.3, "t64": 11.6, "sw64": 13.2, "t64_sk": 16.1},
    ((128, 4096, 4096), "e4m3", "col"): {"sw64n2": 6.3, "sw64": 7.0, "sw128": 8.5, "t64": 9.1},
    ((128, 4096, 4096), "fp16", "col"): {"sw64n2": 10.6, "t64": 11.6, "sw128": 12.5, "sw64": 13.4},
    ((128, 4096, 4096), "fp16", "row"): {"sw64n2": 10.8, "t64": 12.5, "sw64": 13.4, "sw128": 13.5},
    ((128, 4096, 8192), "e4m3", "col"): {"sw64n2": 10.7, "sw128": 12.7, "t64": 14.5, "t128": 15.7},
    ((128, 4096, 8192), "fp16", "col"): {"sw64n2": 22.8, "t64": 25.2, "sw128": 26.0, "t128": 27.7},
    ((128, 4096, 8192), "fp16", "row"): {"sw64n2": 23.5, "sw128": 26.2, "t64": 26.6, "t128": 27.9},
    ((128, 4096, 11008), "e4m3", "col"): {"sw64n2": 15.7, "sw128": 18.0, "t64": 20.7, "t128": 20.8},
    ((128, 4096, 11008), "fp16", "col"): {"sw64n2": 29.6, "t64": 31.1, "sw128": 31.3, "t128": 33.5},
    ((128, 4096, 11008), "fp16", "row"): {"sw64n2": 29.9, "t64": 31.8, "sw128": 32.5, "t128": 34.2},
    ((128, 4096, 14336), "e4m3", "col"): {"sw64n2": 21.3, "sw128": 22.9, "sw64": 24.4, "t128": 25.0},
    ((128, 4096, 14336), "fp16", "col"): {"sw64n2": 38.0, "t64": 39.0, "sw128": 39.6, "t128": 40.8},
    ((128, 4096, 14336), "fp16", "row"): {"sw64n2": 38.2, "sw128": 41.2, "t128": 41.7, "t64": 42.9},
    ((48, 4096, 2048), "fp16", "col"): {"sw32n2": 6.5, "sw64": 7.4},
    ((48, 4096, 2048), "e4m3", "col"): {"sw32": 4.6, "sw32n2": 4.6},
    ((48, 4096, 8192), "fp16", "col"): {"sw64": 21.0, "sw32n2": 21.3},
    ((48, 4096, 8192), "e4m3", "col"): {"sw32n2": 10.1, "sw64": 11.1},
    ((48, 2048, 4096), "fp16", "col"): {"sw32n2": 8.2, "sw32": 8.6},
    ((48, 2048, 4096), "e4m3", "col"): {"sw32n2": 5.2, "sw32": 5.9},
    ((48, 3072, 4096), "fp16", "col"): {"sw32n2": 9.4, "sw64": 10.3},
    ((48, 3072, 4096), "e4m3", "col"): {"sw32n2": 6.0, "sw64": 6.9},
    ((64, 4096, 2048), "fp16", "col"): {"sw32n2": 5.9, "sw64": 6.4},
    ((64, 4096, 2048), "e4m3", "col"): {"sw32": 4.2, "sw32n2": 4.3},
    ((64, 4096, 8192), "fp16", "col"): {"sw32n2": 20.2, "sw64": 21.0},
    ((64, 4096, 8192), "e4m3", "col"): {"sw32n2": 8.8, "sw64": 9.3},
    ((64, 2048, 4096), "fp16", "col"): {"sw32": 7.8, "sw32n2": 8.2},
    ((64, 2048, 4096), "e4m3", "col"): {"sw32n2": 5.2, "sw32": 5.6},
    ((64, 3072, 4096), "fp16", "col"): {"sw32n2": 8.5, "sw64": 8.8},
    ((64, 3072, 4096), "e4m3", "col"): {"sw32n2": 5.6, "sw64": 6.1},
    ((80, 4096, 2048), "fp16", "col"): {"sw40n2": 5.9, "sw80": 6.6},
    ((80, 4096, 2048), "e4m3", "col"): {"sw40n2": 4.4, "sw80": 5.4},
    ((80, 4096, 8192), "fp16", "col"): {"sw40n2": 21.1, "sw80": 21.5},
    ((80, 4096, 8192), "e4m3", "col"): {"sw40n2": 9.3, "sw80": 9.6},
    ((80, 2048, 4096), "fp16", "col"): {"sw80": 7.8, "sw40n2": 8.5},
    ((80, 2048, 4096), "e4m3", "col"): {"sw40n2": 5.3, "sw64": 7.8},
    ((80, 3072, 4096), "fp16", "col"): {"sw40n2": 8.7, "sw80": 9.1},
    ((80, 3072, 4096), "e4m3", "col"): {"sw40n2": 5.6, "sw80": 6.6},
    ((96, 4096, 2048), "fp16", "col"): {"sw48n2": 6.1, "sw96": 7.0},
    ((96, 4096, 2048), "e4m3", "col"): {"sw48n2": 4.5, "sw96": 5.6},
    ((96, 4096, 8192), "fp16", "col"): {"sw48n2": 21.3, "sw96": 22.6},
    ((96, 4096, 8192), "e4m3", "col"): {"sw48n2": 9.8, "sw96": 10.0},
    ((96, 2048, 4096), "fp16", "col"): {"sw96": 8.1, "sw48n2": 8.4},
    ((96, 2048, 4096), "e4m3", "col"): {"sw48n2": 5.3, "sw64": 7.5},
    ((96, 3072, 4096), "fp16", "col"): {"sw48n2": 8.9, "sw96": 9.7},
    ((96, 3072, 4096), "e4m3", "col"): {"sw48n2": 5.8, "sw96": 6.8},
    ((104, 4096, 2048), "fp16", "col"): {"sw56n2": 6.6, "sw112": 7.2},
    ((104, 4096, 2048), "e4m3", "col"): {"sw56n2": 4.7, "sw112": 4.9},
    ((104, 4096, 8192), "fp16", "col"): {"sw56n2": 22.0, "sw112": 24.1},
    ((104, 4096, 8192), "e4m3", "col"): {"sw56n2": 10.4, "sw112": 11.8},
    ((104, 2048, 4096), "fp16", "col"): {"sw56n2": 8.7, "sw112": 9.0},
    ((104, 2048, 4096), "e4m3", "col"): {"sw56n2": 5.6, "sw64": 7.3},
    ((104, 3072, 4096), "fp16", "col"): {"sw56n2": 9.5, "sw112": 11.1},
    ((104, 3072, 4096), "e4m3", "col"): {"sw56n2": 6.1, "sw112": 6.9},
    ((128, 4096, 2048), "fp16", "col"): {"sw64n2": 6.3, "sw64": 7.0},
    ((128, 4096, 2048), "e4m3", "col"): {"sw64n2": 4.6, "sw64": 4.7},
    ((128, 2048, 4096), "fp16", "col"): {"sw64n2": 8.7, "sw64": 9.0},
    ((128, 2048, 4096), "e4m3", "col"): {"sw64n2": 5.7, "sw64": 6.3},
    ((128, 3072, 4096), "fp16", "col"): {"sw64n2": 9.7, "t64": 10.8},
    ((128, 3072, 4096), "e4m3", "col"): {"sw64n2": 6.1, "t64": 8.3},
}


# 80-128 rows x N = 6144-14336 (two to four rounds of the n2 tile's clusters), the lean template, one run
# (gemm_small_s30_longn.json): `auto`'s pick beside the n2 tile fitting M, n96c4 / sw96c4 and t128 — the n2 tile
# slower than the pick at all 54 points (why n2_build stops at one round)
MEASURED_S30_LONG_N = {
    ((80, 6144, 4096), "fp16", "col"): {"sw80": 17.2, "sw40n2": 18.4, "sw96c4": 21.0, "t128": 23.8},
    ((80, 6144, 4096), "e4m3", "col"): {"sw80": 7.8, "sw40n2": 8.8, "sw96c4": 11.1, "t128": 14.1},
    ((80, 6144, 4096), "fp16", "row"): {"sw80": 17.5, "sw40n2": 18.2, "sw96c4": 21.1, "t128": 23.7},
    ((80, 8192, 4096), "fp16", "col"): {"sw80": 19.6, "sw40n2": 20.4, "t128": 27.5, "sw96c4": 34.1},
    ((80, 8192, 4096), "e4m3", "col"): {"sw80": 7.9, "sw40n2": 9.5, "t128": 15.4, "sw96c4": 19.1},
    ((80, 8192, 4096), "fp16", "row"): {"sw80": 19.8, "sw40n2": 21.5, "t128": 27.9, "sw96c4": 34.3},
    ((80, 11008, 4096), "fp16", "col"): {"sw80c4": 27.4, "sw40n2": 28.7, "sw96c4": 28.7, "t128": 32.8},
    ((80, 11008, 4096), "e4m3", "col"): {"sw80c4": 12.0, "sw96c4": 13.2, "sw40n2": 14.9, "t128": 20.8},
    ((80, 11008, 4096), "fp16", "row"): {"sw80c4": 27.2, "sw96c4": 28.1, "sw40n2": 29.4, "t128": 33.7},
    ((80, 14336, 4096), "fp16", "col"): {"sw80c4": 32.7, "sw96c4": 33.6, "sw40n2": 37.0, "t128": 39.9},
    ((80, 14336, 4096), "e4m3", "col"): {"sw80c4": 18.7, "sw96c4": 19.0, "sw40n2": 20.6, "t128": 21.8},
    ((80, 14336, 4096), "fp16", "row"): {"sw80c4": 33.4, "sw96c4": 33.5, "sw40n2": 38.2, "t128": 40.4},
    ((96, 6144, 4096), "fp16", "col"): {"sw96": 17.8, "sw48n2": 19.1, "sw96c4": 20.9, "t128": 22.3},
    ((96, 6144, 4096), "e4m3", "col"): {"sw96": 8.3, "sw48n2": 9.4, "sw96c4": 11.0, "t128": 14.2},
    ((96, 6144, 4096), "fp16", "row"): {"sw96": 17.9, "sw48n2": 19.1, "sw96c4": 21.4, "t128": 22.1},
    ((96, 8192, 4096), "fp16", "col"): {"sw96": 20.4, "sw48n2": 21.7, "t128": 26.5, "sw96c4": 34.4},
    ((96, 8192, 4096), "e4m3", "col"): {"sw96": 8.6, "sw48n2": 10.1, "t128": 14.9, "sw96c4": 19.4},
    ((96, 8192, 4096), "fp16", "row"): {"sw96": 20.8, "sw48n2": 22.4, "t128": 26.7, "sw96c4": 34.9},
    ((96, 11008, 4096), "fp16", "col"): {"sw96c4": 29.0, "sw48n2": 30.8, "t128": 30.8},
    ((96, 11008, 4096), "e4m3", "col"): {"sw96c4": 14.9, "sw48n2": 15.9, "t128": 18.9},
    ((96, 11008, 4096), "fp16", "row"): {"sw96c4": 28.9, "sw48n2": 31.1, "t128": 31.2},
    ((96, 14336, 4096), "fp16", "col"): {"sw96c4": 34.0, "t128": 39.1, "sw48n2": 39.2},
    ((96, 14336, 4096), "e4m3", "col"): {"sw96c4": 19.1, "t128": 20.4, "sw48n2": 21.8},
    ((96, 14336, 4096), "fp16", "row"): {"sw96c4": 34.0, "t128": 39.3, "sw48n2": 40.7},
    ((112, 6144, 4096), "fp16", "col"): {"sw112": 18.4, "sw56n2": 19.6, "n96c4": 21.8, "t128": 21.9},
    ((112, 6144, 4096), "e4m3", "col"): {"sw112": 8.5, "sw56n2": 9.4, "n96c4": 11.6, "t128": 13.0},
    ((112, 6144, 4096), "fp16", "row"): {"sw112": 18.4, "sw56n2": 20.1, "t128": 22.2},
    ((112, 8192, 4096), "fp16", "col"): {"sw112": 21.3, "sw56n2": 22.9, "n96c4": 24.6, "t128": 26.6},
    ((112, 8192, 4096), "e4m3", "col"): {"sw112": 9.2, "sw56n2": 10.8, "n96c4": 11.7, "t128": 14.4},
    ((112, 8192, 4096), "fp16", "row"): {"sw112": 21.7, "sw56n2": 23.7, "t128": 27.3},
    ((112, 11008, 4096), "fp16", "col"): {"n96c4": 28.9, "t128": 30.4, "sw56n2": 32.3},
    ((112, 11008, 4096), "e4m3", "col"): {"n96c4": 15.4, "sw56n2": 17.2, "t128": 18.2},
    ((112, 11008, 4096), "fp16", "row"): {"t128": 31.0, "sw56n2": 32.8},
    ((112, 14336, 4096), "fp16", "col"): {"t128": 35.9, "sw56n2": 41.3, "n96c4": 44.7},
    ((112, 14336, 4096), "e4m3", "col"): {"t128": 20.1, "sw56n2": 23.5, "n96c4": 24.9},
    ((112, 14336, 4096), "fp16", "row"): {"t128": 36.9, "sw56n2": 42.7},
    ((128, 6144, 4096), "fp16", "col"): {"t64": 18.1, "sw64n2": 20.4, "n96c4": 22.3, "t128": 22.5},
    ((128, 6144, 4096), "e4m3", "col"): {"t64": 8.5, "sw64n2": 9.7, "n96c4": 11.2, "t128": 12.0},
    ((128, 6144, 4096), "fp16", "row"): {"t64": 18.1, "sw64n2": 21.1, "t128": 22.5},
    ((128, 8192, 4096), "fp16", "col"): {"t64": 21.9, "sw64n2": 23.7, "n96c4": 24.8, "t128": 26.8},
    ((128, 8192, 4096), "e4m3", "col"): {"t64": 10.5, "sw64n2": 11.2, "n96c4": 11.5, "t128": 14.4},
    ((128, 8192, 4096), "fp16", "row"): {"t64": 22.9, "sw64n2": 24.7, "t128": 27.8},
    ((128, 11008, 4096), "fp16", "col"): {"n96c4": 29.1, "t128": 30.3, "sw64n2": 32.4},
    ((128, 11008, 4096), "e4m3", "col"): {"n96c4": 15.7, "sw64n2": 17.9, "t128": 18.4},
    ((128, 11008, 4096), "fp16", "row"): {"t128": 32.0, "sw64n2": 34.0},
    ((128, 14336, 4096), "fp16", "col"): {"t128": 36.4, "sw64n2": 42.7, "n96c4": 45.1},
    ((128, 14336, 4096), "e4m3", "col"): {"t128": 20.4, "sw64n2": 24.2, "n96c4": 25.2},
    ((128, 14336, 4096), "fp16", "row"): {"t128": 37.6, "sw64n2": 44.0},
    ((96, 11008, 2048), "fp16", "col"): {"sw96c4": 14.0, "sw48n2": 15.5, "t128": 15.8},
    ((96, 11008, 2048), "e4m3", "col"): {"sw96c4": 8.0, "sw48n2": 8.4, "t128": 10.0},
    ((96, 11008, 2048), "fp16", "row"): {"sw96c4": 14.7, "t128": 16.2, "sw48n2": 16.4},
    ((128, 11008, 2048), "fp16", "col"): {"n96c4": 14.7, "t128": 15.5, "sw64n2": 16.8},
    ((128, 11008, 2048), "e4m3", "col"): {"n96c4": 8.1, "t128": 8.6, "sw64n2": 8.7},
    ((128, 11008, 2048), "fp16", "row"): {"t128": 16.7, "sw64n2": 18.4},
}


# the thirteenth session of 2026-12-02: 80 measured points whose competitive variants (within 12 % of the point's
# best) had been timed on templates before rung 9's lean loops, re-timed on the current template in one run
# (bench/points/gemm_s31_refit{1,2}.json, gemm_small_s31_refit{1,2}.json): per tile the median of new / old is 0.89-1.03
# (t320 0.89, t160 0.94, the 8- and 16-column swapped tiles and the 4-CTA builds 0.95-0.96, every other tile within
# 3 %): the older tiles' constants stand, their tabled times are replaced here
MEASURED_S31 = {
    ((128, 11008, 4096), "fp16", "row"): {"t128": 31.3, "n128c4": 31.3, "n96c4": 31.5, "sw128c4": 32.5, "sw64n2": 33.9},
    ((128, 11008, 4096), "fp16", "col"): {"n96c4": 29.4, "n128c4": 30.2, "t128": 30.7, "sw64n2": 32.7},
    ((128, 8192, 4096), "e4m3", "col"): {"n80c4": 10.6, "t64": 10.8, "sw64n2": 11.2, "n96c4": 11.8},
    ((128, 11008, 2048), "e4m3", "col"): {"n96c4": 8.2, "n128c4": 8.6, "t128": 8.6, "sw64n2": 8.9},
    ((64, 14336, 4096), "fp16", "col"): {"sw64c4": 32.2, "t64": 32.6, "sw64": 33.8},
    ((64, 28672, 4096), "e4m3", "col"): {"sw64c4": 33.1, "sw64": 34.0, "t64": 35.2},
    ((80, 14336, 4096), "e4m3", "col"): {"sw80c4": 18.6, "sw96c4": 19.1, "sw112c4": 19.9, "sw128c4": 20.4,
        "sw40n2": 20.6},
    ((80, 8192, 4096), "fp16", "col"): {"sw80": 20.1, "sw96": 20.6, "sw40n2": 21.7},
    ((64, 28672, 4096), "fp16", "col"): {"sw64c4": 60.8, "sw64": 64.9, "t64": 66.6},
    ((80, 11008, 4096), "fp16", "row"): {"sw80c4": 27.4, "sw96c4": 28.3, "n128c4": 29.4, "sw40n2": 29.7},
    ((64, 14336, 4096), "e4m3", "col"): {"sw64": 18.3, "sw64c4": 18.3, "t64": 18.5},
    ((80, 11008, 4096), "fp16", "col"): {"sw80c4": 27.6, "n96c4": 28.6, "sw96c4": 28.8, "sw40n2": 28.8, "n128c4": 28.9},
    ((80, 8192, 4096), "fp16", "row"): {"sw80": 20.1, "sw96": 20.8, "sw40n2": 21.5},
    ((64, 14336, 4096), "fp16", "row"): {"sw64c4": 32.5, "t64": 33.4, "t64_sk": 33.5, "sw64": 34.4},
    ((112, 8192, 4096), "fp16", "row"): {"sw112": 21.9, "t64": 22.5, "sw128": 23.2, "sw56n2": 23.8},
    ((104, 16384, 4096), "fp16", "col"): {"t128": 39.8, "t64": 40.9, "sw112": 41.1},
    ((112, 11008, 4096), "e4m3", "col"): {"n96c4": 15.2, "sw112c4": 15.5, "sw128c4": 16.3, "sw56n2": 17.3},
    ((112, 11008, 4096), "fp16", "col"): {"n96c4": 29.1, "t128": 30.3, "sw112c4": 31.9, "sw56n2": 32.2},
    ((112, 11008, 4096), "fp16", "row"): {"t128": 30.8, "n128c4": 31.1, "sw112c4": 31.5, "sw128c4": 32.0,
        "sw56n2": 32.9},
    ((96, 8192, 4096), "fp16", "col"): {"sw96": 20.5, "sw48n2": 22.6, "t64": 22.7},
    ((96, 11008, 2048), "e4m3", "col"): {"sw96c4": 8.1, "n96c4": 8.3, "sw48n2": 8.4},
    ((116, 8192, 11008), "fp16", "row"): {"t64": 54.7, "sw128": 57.3, "t128": 59.1},
    ((96, 11008, 4096), "e4m3", "col"): {"sw96c4": 13.7, "sw112c4": 14.8, "n96c4": 15.1, "sw128c4": 15.5,
        "sw48n2": 16.2},
    ((116, 8192, 11008), "e4m3", "col"): {"sw128": 30.2, "t64": 32.1, "t128": 32.5},
    ((96, 11008, 2048), "fp16", "col"): {"n96c4": 14.1, "sw96c4": 14.3, "sw112c4": 14.9, "sw48n2": 15.9},
    ((104, 16384, 4096), "fp16", "row"): {"sw112": 42.0, "t128": 42.3, "t64": 42.7, "sw128": 46.7},
    ((96, 11008, 4096), "fp16", "col"): {"n96c4": 28.8, "sw96c4": 29.3, "n128c4": 29.4, "sw48n2": 30.5, "t128": 31.1,
        "sw112c4": 31.7, "sw128c4": 32.2},
    ((112, 4096, 14336), "fp16", "row"): {"sw56n2": 37.4, "sw112": 39.1, "t64": 41.3, "t128": 41.9},
    ((96, 8192, 4096), "fp16", "row"): {"sw96": 21.0, "sw48n2": 22.6, "t64": 23.6},
    ((112, 4096, 14336), "fp16", "col"): {"sw56n2": 37.3, "sw112": 37.9, "t64": 38.7, "t128": 40.6, "sw128": 41.0},
    ((112, 8192, 4096), "fp16", "col"): {"t64": 21.7, "sw112": 21.9, "sw56n2": 23.1, "sw128": 23.7},
    ((1024, 1024, 1024), "fp16", "row"): {"t64": 5.8, "t64_sk": 5.8},
    ((256, 256, 65536), "fp16", "row"): {"t64": 34.9, "t64_sk": 36.6},
    ((1024, 1024, 16384), "e4m3", "col"): {"t64": 35.0, "t64_sk": 35.1, "hoist": 38.1},
    ((512, 512, 16384), "fp16", "row"): {"t64": 25.4, "t64_sk": 26.2, "hoist": 27.9},
    ((512, 512, 8192), "e4m3", "col"): {"t64": 9.8, "t64_sk": 10.9},
    ((112, 9216, 4096), "fp16", "col"): {"n80c4": 25.9, "n96c4": 26.4},
    ((128, 9216, 2048), "fp16", "col"): {"n80c4": 10.9, "n96c4": 12.3},
    ((8, 14336, 4096), "e4m3", "col"): {"sw8c4": 16.6, "sw16c4": 16.7, "sw32c4": 16.9, "sw8": 17.0, "sw16": 17.0,
        "sw32": 17.6, "t64": 18.6},
    ((8, 11008, 4096), "fp16", "col"): {"sw8c4": 27.0},
    ((112, 9216, 4096), "e4m3", "col"): {"n80c4": 11.2, "n96c4": 13.0},
    ((120, 9216, 4096), "e4m3", "col"): {"n80c4": 10.7},
    ((8, 14336, 4096), "fp16", "col"): {"sw8c4": 30.3, "sw16c4": 30.3, "sw32c4": 30.4, "sw16": 32.0, "sw8": 32.1,
        "sw32": 33.2, "t64": 34.8},
    ((128, 9216, 4096), "fp16", "col"): {"n80c4": 26.3, "n96c4": 26.8, "n128c4": 27.5, "t128": 28.0},
    ((8, 10240, 4096), "e4m3", "col"): {"sw8c4": 9.2},
    ((8, 10240, 4096), "fp16", "col"): {"sw8c4": 24.1},
    ((8, 14336, 4096), "fp16", "row"): {"sw8c4": 29.8, "sw16c4": 29.9, "sw32c4": 30.0, "sw16": 32.2, "sw8": 32.3,
        "sw32": 33.3},
    ((1, 14336, 4096), "e4m3", "col"): {"sw8c4": 16.3, "sw16c4": 16.4, "sw32c4": 16.5, "sw8": 16.8, "sw16": 16.8,
        "sw32": 18.5, "t64": 18.6},
    ((1, 14336, 4096), "fp16", "col"): {"sw8c4": 30.3, "sw16c4": 30.4, "sw32c4": 30.5, "sw8": 31.7, "sw16": 31.9},
    ((1024, 1536, 1536), "fp16", "row"): {"t64x192": 10.5},
    ((384, 4096, 4096), "fp16", "col"): {"t128": 25.2, "t64x192": 26.0},
    ((768, 2048, 2048), "fp16", "col"): {"t64x192": 12.8},
    ((768, 1536, 1536), "fp16", "row"): {"t64x192": 9.6},
    ((768, 1536, 1536), "e4m3", "col"): {"t64x192": 5.6},
    ((384, 4096, 4096), "e4m3", "col"): {"t64x192": 13.0},
    ((64, 9216, 4096), "e4m3", "col"): {"sw64c4": 10.0},
    ((1, 4096, 4096), "e4m3", "col"): {"sw8": 5.4, "sw16": 5.9},
    ((72, 8192, 1024), "e4m3", "col"): {"sw80": 3.8, "sw96": 4.3},
    ((80, 16384, 4096), "e4m3", "col"): {"sw80": 20.1, "sw96": 21.2},
    ((72, 16384, 1024), "fp16", "col"): {"sw80": 8.3},
    ((80, 14336, 4096), "fp16", "col"): {"sw80c4": 32.9, "sw96c4": 33.5, "sw112c4": 35.3, "sw128c4": 35.9},
    ((65, 16384, 4096), "fp16", "row"): {"sw80": 38.3},
    ((72, 12288, 4096), "e4m3", "col"): {"sw80c4": 15.9, "sw96c4": 17.5},
    ((72, 12288, 4096), "fp16", "col"): {"sw80c4": 29.7, "sw96c4": 30.8, "sw128c4": 33.3},
    ((128, 14336, 4096), "e4m3", "col"): {"t128": 20.6, "n128c4": 20.6, "sw128c4": 21.6, "t144": 21.9, "t64": 22.4},
    ((128, 14336, 4096), "fp16", "col"): {"n128c4": 36.1, "t128": 36.5, "sw128c4": 37.3, "t144": 38.3, "t64": 38.5},
    ((128, 14336, 4096), "fp16", "row"): {"sw128c4": 37.1, "t128": 37.4, "n128c4": 38.0, "t64": 39.9, "t160": 40.9,
        "t144": 41.0, "t192": 41.8},
    ((32, 11008, 4096), "fp16", "col"): {"sw32c4": 25.7, "t64": 26.9, "sw32": 27.6},
    ((512, 512, 512), "fp16", "row"): {"sw32": 3.2},
    ((16, 14336, 4096), "fp16", "row"): {"sw16c4": 30.2, "sw32c4": 30.7, "sw16": 32.5, "sw32": 32.7, "t64": 35.3},
    ((2560, 2560, 2560), "e4m3", "col"): {"t144": 32.5, "tuned": 32.5, "hoist": 32.7, "t128": 34.0, "t192": 35.3,
        "streamk": 36.0},
    ((3072, 2048, 2048), "e4m3", "col"): {"t192": 23.2, "t128": 24.3, "tuned": 26.2, "hoist": 26.8},
    ((4096, 2048, 2048), "e4m3", "col"): {"tuned": 30.1, "hoist": 30.3, "t128": 32.4, "t192": 32.8},
    ((3072, 2048, 2048), "fp16", "row"): {"t192": 47.3, "t128": 48.8, "tuned": 53.2},
    ((2560, 2560, 2560), "fp16", "row"): {"streamk": 66.0, "hoist": 66.1, "tuned": 66.5, "t144": 70.2, "t128": 70.3,
        "t192": 74.2},
    ((8192, 8192, 8192), "e4m3", "col"): {"streamk": 870.2, "hoist": 887.7, "tuned": 900.1, "t320": 903.2,
        "t192": 925.8, "t128": 933.6, "t160": 944.4},
    ((512, 14336, 4096), "e4m3", "col"): {"tuned": 57.6, "hoist": 58.2, "t160": 58.9, "streamk": 59.6, "t128": 59.7,
        "t192": 61.1, "t144": 63.3},
    ((1024, 14336, 4096), "fp16", "col"): {"t320": 185.8, "streamk": 191.8, "hoist": 199.0, "t160": 201.4},
    ((2560, 4096, 4096), "fp16", "col"): {"t320": 131.0, "t160": 139.7, "streamk": 140.0, "hoist": 144.9,
        "t144": 150.8},
    ((3072, 1536, 1536), "fp16", "col"): {"t320": 24.7, "t144": 25.3, "t160": 26.6, "t192": 27.8},
}

# kernel device microseconds (torch.profiler), fifteenth session of 2026-12-02, column-major B, K = 4096: the n2 tiles
# past one round against `auto`'s picks of the rules before that session (48-128 rows x N = 5120-16384,
# gemm_small_s33_n2_m*.json: at 48-64 x 16384 `auto` ran t144), then 40-64 x 16384-20480 with t64, sw64, sw32n2,
# sw64c4 and `auto`'s t144 / t160 (gemm_small_s33_wide_m*.json), which moved the 128-row tiles above 64 rows and
# took sw64 where t64's last round is thin; points measured before with more variants in one run keep their tables
MEASURED_S33_N2 = {
    ((48, 5120, 4096), "bf16", "col"): {"sw64": 12.8, "sw32n2": 16.2},
    ((48, 5120, 4096), "e4m3", "col"): {"sw64": 8.0, "sw32n2": 10.0},
    ((48, 5120, 4096), "fp16", "col"): {"sw64": 13.0, "sw32n2": 16.4},
    ((48, 6144, 4096), "bf16", "col"): {"sw64": 17.1, "sw32n2": 18.7},
    ((48, 6144, 4096), "e4m3", "col"): {"sw64": 8.6, "sw32n2": 10.1},
    ((48, 6144, 4096), "fp16", "col"): {"sw64": 16.3, "sw32n2": 19.4},
    ((48, 8192, 4096), "bf16", "col"): {"sw64": 19.4, "sw32n2": 21.6},
    ((48, 8192, 4096), "e4m3", "col"): {"sw64": 9.5, "sw32n2": 10.6},
    ((48, 8192, 4096), "fp16", "col"): {"sw64": 20.1, "sw32n2": 22.3},
    ((48, 16384, 4096), "bf16", "col"): {"sw32n2": 39.6, "t144": 51.9},
    ((48, 16384, 4096), "e4m3", "col"): {"sw32n2": 21.4, "t144": 27.1},
    ((48, 16384, 4096), "fp16", "col"): {"sw32n2": 40.8, "t144": 52.0},
    ((64, 5120, 4096), "bf16", "col"): {"sw64": 11.5, "sw32n2": 15.8},
    ((64, 5120, 4096), "e4m3", "col"): {"sw64": 6.7, "sw32n2": 9.5},
    ((64, 5120, 4096), "fp16", "col"): {"sw64": 10.9, "sw32n2": 16.2},
    ((64, 6144, 4096), "bf16", "col"): {"sw64": 15.3, "sw32n2": 18.3},
    ((64, 6144, 4096), "e4m3", "col"): {"sw64": 7.1, "sw32n2": 9.6},
    ((64, 6144, 4096), "fp16", "col"): {"sw64": 16.3, "sw32n2": 19.1},
    ((64, 8192, 4096), "bf16", "col"): {"sw64": 19.4, "sw32n2": 21.5},
    ((64, 8192, 4096), "e4m3", "col"): {"sw64": 7.5, "sw32n2": 9.8},
    ((64, 8192, 4096), "fp16", "col"): {"sw64": 20.4, "sw32n2": 21.9},
    ((64, 16384, 4096), "bf16", "col"): {"sw32n2": 43.2, "t144": 47.7},
    ((64, 16384, 4096), "e4m3", "col"): {"sw32n2": 22.5, "t144": 25.3},
    ((64, 16384, 4096), "fp16", "col"): {"sw32n2": 42.7, "t144": 48.2},
    ((96, 5120, 4096), "bf16", "col"): {"sw96": 12.6, "sw48n2": 17.2},
    ((96, 5120, 4096), "e4m3", "col"): {"sw96": 7.3, "sw48n2": 10.2},
    ((96, 5120, 4096), "fp16", "col"): {"sw96": 12.9, "sw48n2": 17.0},
    ((96, 6144, 4096), "bf16", "col"): {"sw96": 16.5, "sw48n2": 20.2},
    ((96, 8192, 4096), "bf16", "col"): {"sw96": 21.1, "sw48n2": 23.4},
    ((96, 16384, 4096), "bf16", "col"): {"sw96": 41.2, "sw48n2": 43.6},
    ((128, 5120, 4096), "bf16", "col"): {"t64": 13.7, "sw64n2": 17.9},
    ((128, 5120, 4096), "e4m3", "col"): {"t64": 7.9, "sw64n2": 10.5},
    ((128, 5120, 4096), "fp16", "col"): {"t64": 15.5, "sw64n2": 18.9},
    ((128, 6144, 4096), "bf16", "col"): {"t64": 16.7, "sw64n2": 21.3},
    ((128, 8192, 4096), "bf16", "col"): {"t64": 21.1, "sw64n2": 24.9},
    ((128, 16384, 4096), "bf16", "col"): {"t144": 41.7, "sw64n2": 50.2},
    ((128, 16384, 4096), "e4m3", "col"): {"t128": 22.9, "sw64n2": 27.6},
    ((128, 16384, 4096), "fp16", "col"): {"t144": 46.2, "sw64n2": 51.8},
}
MEASURED_S33_WIDE = {
    ((40, 16384, 4096), "bf16", "col"): {"t64": 35.2, "sw64": 40.1, "sw32n2": 45.0, "sw64c4": 47.0, "t144": 55.2},
    ((40, 16384, 4096), "e4m3", "col"): {"t64": 19.3, "sw64": 20.0, "sw32n2": 22.3, "sw64c4": 24.9, "t144": 30.5},
    ((40, 16384, 4096), "fp16", "col"): {"t64": 36.5, "sw64": 40.6, "sw32n2": 44.4, "sw64c4": 47.4, "t144": 54.5},
    ((40, 20480, 4096), "bf16", "col"): {"sw64c4": 50.8, "sw64": 52.8, "sw32n2": 55.6, "t64": 57.8, "t160": 60.4},
    ((40, 20480, 4096), "e4m3", "col"): {"sw64c4": 26.6, "sw64": 27.8, "t64": 28.6, "sw32n2": 28.7, "t160": 31.8},
    ((40, 20480, 4096), "fp16", "col"): {"sw64c4": 51.9, "sw64": 54.0, "t64": 55.3, "sw32n2": 56.5, "t160": 61.1},
    ((48, 16384, 4096), "bf16", "col"): {"t64": 35.7, "sw64": 37.7, "sw32n2": 40.3, "sw64c4": 46.9, "t144": 51.5},
    ((48, 16384, 4096), "e4m3", "col"): {"t64": 19.4, "sw64": 19.7, "sw32n2": 21.6, "sw64c4": 25.3, "t144": 26.9},
    ((48, 16384, 4096), "fp16", "col"): {"t64": 37.1, "sw64": 44.5, "sw32n2": 45.3, "sw64c4": 47.5, "t144": 49.8},
    ((48, 20480, 4096), "bf16", "col"): {"sw64c4": 50.1, "sw64": 50.2, "sw32n2": 50.6, "t64": 53.1, "t160": 55.6},
    ((48, 20480, 4096), "e4m3", "col"): {"sw64": 26.8, "sw64c4": 26.8, "t64": 28.8, "sw32n2": 30.0, "t160": 32.2},
    ((48, 20480, 4096), "fp16", "col"): {"sw64": 51.3, "sw32n2": 52.5, "sw64c4": 52.6, "t64": 54.0, "t160": 56.2},
    ((64, 16384, 4096), "bf16", "col"): {"t64": 36.2, "sw64": 37.5, "sw32n2": 41.2, "sw64c4": 47.0, "t144": 48.6},
    ((64, 16384, 4096), "e4m3", "col"): {"sw64": 20.0, "t64": 21.2, "sw32n2": 22.9, "t144": 24.8, "sw64c4": 25.1},
    ((64, 16384, 4096), "fp16", "col"): {"t64": 37.3, "sw64": 42.1, "sw32n2": 44.9, "sw64c4": 47.0, "t144": 48.5},
    ((64, 20480, 4096), "bf16", "col"): {"sw64": 49.5, "sw32n2": 51.4, "sw64c4": 51.7, "t64": 53.4, "t160": 53.8},
    ((64, 20480, 4096), "e4m3", "col"): {"sw64": 27.1, "sw64c4": 28.0, "t64": 29.0, "t160": 30.9, "sw32n2": 32.7},
    ((64, 20480, 4096), "fp16", "col"): {"sw64": 51.6, "sw32n2": 53.0, "sw64c4": 53.5, "t64": 54.3, "t160": 54.4},
}


# the same session, row-major 16-bit B (gemm_small_s33_rowb.json: `auto` there ran t64 by then), after which sw64 over
# a thin last round of t64 holds for either B layout
MEASURED_S33_ROWB = {
    ((40, 16384, 4096), "bf16", "row"): {"t64": 34.6, "sw64": 38.0, "t160": 59.0, "t144": 62.1},
    ((40, 16384, 4096), "fp16", "row"): {"t64": 34.8, "sw64": 37.5, "t160": 56.3, "t144": 60.7},
    ((64, 16384, 4096), "bf16", "row"): {"t64": 34.8, "sw64": 36.1, "t160": 52.7, "t144": 56.6},
    ((64, 16384, 4096), "fp16", "row"): {"t64": 36.6, "sw64": 37.3, "t160": 51.2, "t144": 55.0},
    ((40, 20480, 4096), "bf16", "row"): {"sw64": 51.2, "t64": 54.9, "t160": 66.6, "t144": 88.4},
    ((40, 20480, 4096), "fp16", "row"): {"sw64": 51.7, "t64": 54.2, "t160": 66.2, "t144": 90.6},
    ((48, 20480, 4096), "bf16", "row"): {"sw64": 47.4, "t64": 54.8, "t160": 63.5, "t144": 85.6},
    ((48, 20480, 4096), "fp16", "row"): {"sw64": 48.4, "t64": 52.9, "t160": 63.8, "t144": 89.9},
    ((64, 20480, 4096), "bf16", "row"): {"sw64": 47.3, "t64": 51.7, "t160": 59.1, "t144": 82.3},
    ((64, 20480, 4096), "fp16", "row"): {"sw64": 49.0, "t64": 53.6, "t160": 58.6, "t144": 83.0},
}


def _merged(*tables: dict) -> dict:
    """One dict of measured points; a point in several tables (2048^3: the mid-size run and the long-K run) keeps
    every variant, the later table's figure where both timed the same one."""
    out: dict = {}
    for t in tables:
        for key, times in t.items():
            out[key] = {**out.get(key, {}), **times}
    return out


# t144s (t144 as the swapped product: no third slab over a row-major 16-bit B) beside t144, t160 and `auto`'s pick
# of the time (nineteenth session of 2026-12-02, bench/results/gemm_small_s37_t144s.json: fp16 rows fp16->fp32, bf16
# rows bf16->bf16; `auto` then ran t160 / t128 / t320 / rung 9's hoist_es, listed under those names)
MEASURED_S37 = {
    ((1536, 1536, 1536), "fp16", "row"): {"t160": 14.9, "t144": 16.3, "t144s": 15.0},
    ((1536, 1536, 1536), "bf16", "row"): {"t160": 14.4, "t144": 14.6, "t144s": 13.9},
    ((1408, 1408, 1408), "fp16", "row"): {"t128": 11.6, "t144": 13.3, "t160": 13.2, "t144s": 12.7},
    ((1408, 1408, 1408), "bf16", "row"): {"t128": 10.6, "t144": 12.6, "t160": 12.6, "t144s": 11.9},
    ((3072, 1536, 1536), "fp16", "row"): {"t320": 27.6, "t144": 31.2, "t160": 29.5, "t144s": 31.5},
    ((3072, 1536, 1536), "bf16", "row"): {"t320": 24.4, "t144": 28.5, "t160": 28.0, "t144s": 29.2},
    ((1536, 1536, 6144), "fp16", "row"): {"t160": 54.5, "t144": 53.4, "t144s": 51.5},
    ((1536, 1536, 6144), "bf16", "row"): {"t160": 52.4, "t144": 51.5, "t144s": 49.1},
    ((2560, 2560, 2560), "fp16", "row"): {"hoist": 66.8, "t144": 69.6, "t160": 66.1, "t144s": 70.6},
    ((2560, 2560, 2560), "bf16", "row"): {"hoist": 59.1, "t144": 66.4, "t160": 61.7, "t144s": 61.2},
    ((1280, 4096, 4096), "fp16", "row"): {"t320": 69.9, "t144": 97.7, "t160": 76.6, "t144s": 92.5},
    ((1280, 4096, 4096), "bf16", "row"): {"t320": 65.2, "t144": 91.2, "t160": 73.3, "t144s": 85.5},
}

# a second call of that session with `auto` already taking t144s (gemm_small_s37_t144s_b.json): the two points the
# rule added (1536x1536x3072, 2304x1024x4096) and two re-timed
MEASURED_S37B = {
    ((1536, 1536, 3072), "fp16", "row"): {"t144": 27.2, "t160": 27.1, "t144s": 26.2},
    ((1536, 1536, 3072), "bf16", "row"): {"t144": 25.8, "t160": 25.5, "t144s": 23.9},
    ((2304, 1024, 4096), "fp16", "row"): {"t144": 60.0, "t160": 38.8, "t144s": 37.8},
    ((2304, 1024, 4096), "bf16", "row"): {"t144": 54.5, "t160": 42.2, "t144s": 34.8},
    ((1536, 1536, 1536), "fp16", "row"): {"t144": 16.5, "t160": 15.1, "t144s": 14.9},
    ((1536, 1536, 1536), "bf16", "row"): {"t144": 14.6, "t160": 14.1, "t144s": 14.1},
    ((1536, 1536, 6144), "fp16", "row"): {"t144": 55.0, "t160": 52.8, "t144s": 51.1},
    ((1536, 1536, 6144), "bf16", "row"): {"t144": 50.3, "t160": 50.4, "t144s": 46.2},
}

# the tables in order of measurement (a later table's time of a variant replaces an earlier one's)
MEASURED_TABLES = (
    "MEASURED_MID_TAIL", "MEASURED_SMALL_M", "MEASURED_LONG_K", "MEASURED_T144", "MEASURED_T128", "MEASURED_CM1",
    "MEASURED_CM1_COLB", "MEASURED_T160", "MEASURED_T160B", "MEASURED_T160C", "MEASURED_SKHALF", "MEASURED_T320",
    "MEASURED_T320B", "MEASURED_T64W", "MEASURED_T128M", "MEASURED_C4", "MEASURED_PDL_C4", "MEASURED_T64_C4",
    "MEASURED_SW64C4", "MEASURED_SW128C4", "MEASURED_S27", "MEASURED_S27B", "MEASURED_S27C", "MEASURED_S27D",
    "MEASURED_S28", "MEASURED_S28B", "MEASURED_S28C", "MEASURED_S28D", "MEASURED_S28E", "MEASURED_S29",
    "MEASURED_S30", "MEASURED_S30_LONG_N", "MEASURED_S31", "MEASURED_S33_N2", "MEASURED_S33_WIDE",
    "MEASURED_S33_ROWB", "MEASURED_S37", "MEASURED_S37B",
)
MEASURED = _merged(*(globals()[name] for name in MEASURED_TABLES))
# points whose fastest variant is one `auto` does not weigh there, and why: the test compares `auto` with the best
# of the others and asserts the named one is fastest (so the entry goes when a rule takes it)
NOT_WEIGHED = {
    # (sw128 for 16-bit at 120-128 x 4096 x 11008, faster than t64 but not weighed, left this list when the n2 tile
    # came: sw64n2 faster still there, MEASURED_S30)
    # the n2 tile at N = 1024 (16 clusters): 10 % faster than sw32 at 80 x 1024 x 1024 16-bit, slower at 80 x 1024 x
    # 4096-14336 and 7 % slower than sw16 for fp8 at 80 x 1024 x 1024 (MEASURED_S30); `auto` weighs it from 32 clusters
    ((80, 1024, 1024), "fp16", "col"): "sw40n2",
    ((80, 1024, 1024), "fp16", "row"): "sw40n2",
}
# where `auto` runs a variant more than 4 % slower than the best measured, and why (the worst 9.5 %, a noisy timing)
SLOW_AUTO = [
    ((1024, 1024, 16384), "e4m3", "col"),  # rung 9 + split-K 38.1 us, t64 35.0 (MEASURED_S31; before 40.4 against
    # t64_sk's 37.3): predicted the other way
    ((2048, 1024, 8192), "fp16", "col"),  # rung 9 67.3 us, t128 62.9: one cost per k-tile misses t128's 2nd round
    ((16, 12288, 2048), "fp16", "col"),  # sw16 14.7 us, sw16c4 without PDL 13.9: at 24 clusters the other three
    # points (and M = 32) run level or faster on the 64-row tile, so C4_LOW_FILL stops below it
    ((97, 4096, 2048), "e4m3", "col"),  # sw56n2 by rule 5.0 us, sw112 4.8: at 97 rows the n2 tile's second CTA
    # holds 41 of its 56 rows (TMA zero fill; 104-112 rows run faster), and K = 2048 is short
    ((64, 28672, 4096), "fp16", "col"),  # t64 66.6 us, sw64c4 60.8 (MEASURED_S31) — yet `auto`'s own row in the
    # same run ran t64 in 60.8 (HBM-bound: 235 MB of weights; the earlier table had 61.6 against 61.0)
    ((64, 2048, 4096), "fp16", "col"),  # sw32n2 8.2 us as predicted, sw32 7.8 where its constant (fitted on the
    # template before rung 9's lean loops, MEASURED_S30) predicts 8.6
    ((64, 16384, 4096), "e4m3", "col"),  # t64 21.2 us, sw64 20.0 (graph-timed 19.6 against 19.5): the model ties
    # them (MEASURED_S33_WIDE)
    ((40, 20480, 4096), "e4m3", "col"),  # sw64 27.8 us, sw64c4 26.6: its 80 clusters fill none of the 4-CTA rules
    ((40, 20480, 4096), "fp16", "col"),  # sw64 54.0 us, sw64c4 51.9 (the same; 48-64 rows: sw64 within 4 %)
    # (65-96 rows x 4096 x 4096, where t64 ran 5-6 % behind t128 / sw64, left this list when sw80 / sw96 came:
    # MEASURED_S28)
]


# where the model's time for `auto`'s (fastest) pick is more than 35 % off the measured kernel, and why
MODEL_MISS = {
    # t64 in one round of 96 tiles: 8.5 us, 0.20 us per fp8 k-tile on the lean template against its constant 0.30
    # (fitted on 16-bit launches of the template before; MEASURED_S30_LONG_N)
    ((128, 6144, 4096), "e4m3", "col"),
    # sw64c4 in one round of 18 clusters: 10.0 us on the lean template (10.6 before) against the model's 13.5 (its
    # 0.36 us per k-tile fitted where the clusters fill a round; MEASURED_S31)
    ((64, 9216, 4096), "e4m3", "col"),
    # sw64 in one round of 80 tiles (61 % of the SMs): 10.9 us against the model's 14.8 (bf16 11.5 in the same run;
    # MEASURED_S33_N2)
    ((64, 5120, 4096), "fp16", "col"),
    # sw64 in one round of 128 tiles: 7.5 us for fp8 against the model's 11.2 (its fp8 per-k-tile cost fitted before
    # rung 9's lean loops reached the swapped tiles; MEASURED_S33_N2)
    ((64, 8192, 4096), "e4m3", "col"),
    # t64 in one round of 80 tiles: 13.7 / 15.5 / 7.9 us against the model's 21.2 / 21.2 / 11.6 (as at 128 x 6144 above;
    # MEASURED_S33_N2)
    ((128, 5120, 4096), "bf16", "col"),
    ((128, 5120, 4096), "fp16", "col"),
    ((128, 5120, 4096), "e4m3", "col"),
}


def test_auto_picks_within_4_percent_of_the_measured_best() -> None:
    """On the measured points `auto` runs a variant at most 4 % slower than the fastest measured there — on all but the
    nine of 582 in SLOW_AUTO, those at most 10 % (against the best variant it weighs where NOT_WEIGHED names a
    faster one it does not) — and the model's time for it is within 35 % of the measured kernel (the 64x128 tile's
    one-round launch at 640x1536x4096 runs 24-31 % below its per-k-tile cost; one fp8 launch of it on the lean
    template 36 %, and sw64c4 in a round of 18 clusters 35 %: MODEL_MISS). The candidates are
    rung 9 (without the cluster where its tiles fill one round and M >= 1024), its stream-K build, the 64x128 tile,
    and t320, t192, t160, t144 (over a row-major 16-bit B its swapped form t144s, in one round), t128 and t64x192
    where they need no split (the 128-row ones above 64 rows, t64x192
    above SMALL_M,
    t320 and t160 in at most two rounds; 8192^3 fp16's stream-K, 0.8 %, 3.2 % and 3.4 % faster in three runs, is not
    taken); for small M the swapped tiles (sw8 / sw16 / sw32 / sw64, the one fitting M first; at 65-112 rows sw80 /
    sw96 / sw112 where M fits them) weigh in too, and the fitting one's 4-CTA-cluster build where its clusters fill most
    of a round (N = 13312-14336 at M <= 32) or at most 3/4 of one (N = 9216-11008, launched without PDL); for fp8 also
    sw64c4 (33-64 rows) and, in the part-empty band only, sw128c4 (97-128 rows); for 65-96 rows sw80c4 / sw96c4 in any
    one round or a nearly full last one, for 97-128 rows of a K-major B n80c4 / n96c4 (clusters along N) in one round at
    least 3/4 full; at 33-128 rows the n2 tiles (sw32n2 ... sw64n2) in one round of 32-66 clusters; at 33-64 rows
    sw64 over t64 where t64's last round is under half full.
    """
    from tcforge.gemm.api import refine_auto
    from tcforge.gemm.variants import VARIANTS, estimate_us

    slow = []
    for (shape, kind, layout), times in MEASURED.items():
        m, n, k = shape
        dt = "torch.float8_e4m3fn" if kind == "e4m3" else "torch.float16"
        b = col_major(k, n, dt) if layout == "col" else FakeTensor((k, n), dt)
        picked = refine_auto(plan_matmul(FakeTensor((m, k), dt), b), 132).variant.name
        # rung 9's spread-epilogue build (unsplit): the same tile and bits, measured within 1.5 % of rung 9
        # (gemm_small_s35_es.json, gemm_energy_s35_es*.json), so the tables' rung 9 times stand for it
        picked = "hoist" if picked == "hoist_es" else picked
        assert picked in times, (shape, kind, layout, picked)
        skip = NOT_WEIGHED.get((shape, kind, layout))
        if skip:
            assert min(times, key=times.get) == skip, (shape, kind, layout, times)
            times = {v: t for v, t in times.items() if v != skip}
        best = min(times.values())
        assert times[picked] <= 1.10 * best, (shape, kind, layout, picked, times)
        if times[picked] > 1.04 * best:
            slow.append((shape, kind, layout))
        sk = picked == "streamk"
        predicted = estimate_us(VARIANTS["hoist" if sk else picked], m, n, k, kind, 132, streamk=sk,
                                b_kmajor=layout == "col")
        if (shape, kind, layout) not in MODEL_MISS:
            assert abs(predicted / times[picked] - 1) < 0.35, (shape, kind, picked, predicted, times[picked])
    assert len(MEASURED) == 582 and sorted(slow) == sorted(SLOW_AUTO), slow
