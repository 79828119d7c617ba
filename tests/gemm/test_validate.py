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
        (FakeTensor((4, 8), strides=(1, 4)), FakeTensor((8, 4)), {}, TcforgeError, "a.contiguous"),
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
    the 64x128 tile, its stream-K build where that tile would itself split (measured: 1024^3 0.35x ->
    0.85x, 256x4096x4096 0.67x -> 0.87x of cuBLAS); an explicit variant is never changed."""
    from tcforge.gemm.api import refine_auto

    def plan(m: int, n: int, k: int, variant: str = "auto") -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)), variant=variant)

    assert refine_auto(plan(4096, 4096, 4096), 132).variant.name == "hoist"  # no split: rung 9
    assert refine_auto(plan(3072, 3072, 3072), 132).variant.name == "streamk"  # 144 units: last round 12/66 full
    assert refine_auto(plan(1280, 4096, 4096), 132).variant.name == "streamk"  # 80 units: 14/66
    assert refine_auto(plan(8192, 8192, 8192), 132).variant.name == "hoist"  # 1024 units: 34/66, over half
    assert refine_auto(plan(5120, 5120, 5120), 132).variant.name == "hoist"  # 400 units: 6 rounds + 4 units
    assert refine_auto(plan(2560, 2560, 2560), 132).variant.name == "hoist"  # 100 units: 34/66
    assert refine_auto(plan(256, 14336, 4096), 132).variant.name == "hoist"  # 56 units: no split either
    assert refine_auto(plan(2048, 2048, 2048), 132).variant.name == "hoist"
    assert refine_auto(plan(256, 4096, 4096), 132).variant.name == "t64"  # 128 tiles: no split
    assert refine_auto(plan(1024, 1024, 1024), 132).variant.name == "t64"
    assert refine_auto(plan(512, 512, 512), 132).variant.name == "t64_sk"  # 32 tiles, 64 pieces of 4 k-tiles
    assert refine_auto(plan(64, 4096, 4096), 132).variant.name == "t64_sk"  # 32 tiles, 128 pieces of 16
    assert refine_auto(plan(64, 14336, 4096), 132).variant.name == "t64"  # 112 tiles
    assert refine_auto(plan(16, 64, 65536), 132).variant.name == "t64"  # 1 tile: split-K's 16 ways beat 4 pieces
    assert refine_auto(plan(512, 512, 256), 132).variant.name == "t64"  # 4 k-tiles: rung 9 would not split, 4 units
    assert refine_auto(plan(16, 4096, 4096), 132).variant.name == "t64"  # 16 rows: split-K's planes are smaller
    assert refine_auto(plan(63, 4096, 4096), 132).variant.name == "t64"
    assert refine_auto(plan(256, 4096, 4096, "hoist"), 132).variant.name == "hoist"  # explicit
    assert refine_auto(plan(256, 4096, 4096, "hoist"), 132).variant.name == "hoist"


def test_auto_cost_model_ranks_the_tiles_as_measured() -> None:
    """`estimate_us` against the H200 (bench/results/gemm_small_edges.json, gemm_small_auto_v1.json): the predicted
    times lie within ~20 % of the measured kernels, and the faster tile is the one measured faster."""
    from tcforge.gemm.api import refine_auto
    from tcforge.gemm.variants import VARIANTS, estimate_us

    big, small = VARIANTS["hoist"], VARIANTS["t64"]
    # (shape, dtype, measured rung 9 us incl. split-K reduction, measured t64 us)
    measured = [
        ((1024, 1024, 65536), "fp16", 230.6, 303.1),  # long K: rung 9 with split-K wins (0.92x vs 0.73x of cuBLAS)
        ((2048, 1024, 8192), "fp16", 72.2, 78.0),
        ((2048, 1024, 8192), "e4m3", 45.9, 38.4),  # half the k-tiles: the small tile wins
        ((1024, 1024, 1024), "fp16", 22.3, 6.8),
        ((2048, 2048, 2048), "fp16", 33.0, 38.9),
        ((256, 14336, 4096), "fp16", 58.8, 79.4),
        ((512, 512, 16384), "fp16", 30.7, 25.0),
    ]
    for (m, n, k), kind, t_big, t_small in measured:
        e_big, e_small = estimate_us(big, m, n, k, kind, 132), estimate_us(small, m, n, k, kind, 132)
        assert (e_big <= e_small) == (t_big <= t_small), (m, n, k, kind)
        assert abs(e_big / t_big - 1) < 0.35 and abs(e_small / t_small - 1) < 0.35, (m, n, k, kind, e_big, e_small)

    def plan(m: int, n: int, k: int) -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)))

    assert refine_auto(plan(1024, 1024, 65536), 132).variant.name == "hoist"
    assert refine_auto(plan(2048, 1024, 8192), 132).variant.name == "hoist"
    # 1280x4096x4096: rung 9 data-parallel would lose to t64 (2 rounds, the second 14/66 full), stream-K wins
    assert estimate_us(big, 1280, 4096, 4096, "fp16", 132) > estimate_us(small, 1280, 4096, 4096, "fp16", 132)
    assert refine_auto(plan(1280, 4096, 4096), 132).variant.name == "streamk"

