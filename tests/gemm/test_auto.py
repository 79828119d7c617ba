"""`auto`'s picks by shape (tcforge.gemm.auto): the tiles the launch model and its rules choose, without a GPU."""

from __future__ import annotations

from gemm_testlib import BF16, F8, F16, F32, FakeTensor, col_major

from tcforge.gemm import plan_matmul
from tcforge.gemm.auto import pick_variant


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
    def plan(m: int, n: int, k: int, variant: str = "auto") -> object:
        return plan_matmul(FakeTensor((m, k)), FakeTensor((k, n)), variant=variant)

    assert pick_variant(plan(4096, 4096, 4096), 132).name == "hoist_es"  # no split: rung 9
    assert pick_variant(plan(3072, 3072, 3072), 132).name == "t192"  # 384 tiles of 128x192: 2.9 rounds
    # 1280x4096x4096: 80 units, 14/66 in the second round; stream-K shares them, 260 tiles of 128x160 fill two
    # rounds, 130 of 128x320 one (t320 73.9 us, t160 76.1, stream-K 81.2)
    assert pick_variant(plan(1280, 4096, 4096), 132).name == "t320"
    # 160 units: 28/66 in the third round, stream-K; 260 tiles of 128x320 in two rounds are faster (147.3 / 147.8 us)
    assert pick_variant(plan(2560, 4096, 4096), 132).name == "t320"
    assert pick_variant(plan(3840, 4096, 4096), 132).name != "t320"  # 390 tiles: three rounds
    # two rounds, the second 46/66 full: stream-K for 16-bit with >= SK_LONG_KTILES k-tiles only
    assert pick_variant(plan(1792, 4096, 14336), 132).name == "streamk"  # 224 k-tiles
    assert pick_variant(plan(1792, 4096, 8192), 132).name == "streamk"  # 128
    assert pick_variant(plan(1792, 4096, 4096), 132).name == "hoist_es"  # 64
    assert pick_variant(plan(2048, 6144, 8192), 132).name == "hoist_es"  # 192 units: three rounds
    assert pick_variant(plan(8192, 8192, 8192), 132).name == "hoist_es"  # 1024 units: 34/66, over half
    assert pick_variant(plan(5120, 5120, 5120), 132).name == "streamk"  # 400 units: 6 rounds + 4 units
    assert pick_variant(plan(2560, 2560, 2560), 132).name == "hoist_es"  # 100 units: 34/66
    assert pick_variant(plan(256, 14336, 4096), 132).name == "hoist_es"  # 56 units: no split either
    # one round of rung 9's cluster tiles with M >= CM1_MIN_M: rung 9 without the cluster
    assert pick_variant(plan(2048, 2048, 2048), 132).name == "tuned"  # 64 units of 66
    assert pick_variant(plan(4096, 1024, 1024), 132).name == "tuned"
    assert pick_variant(plan(2048, 4096, 2048), 132).name == "hoist_es"  # 128 units: two rounds
    assert pick_variant(plan(2048, 1024, 8192), 132).name == "hoist"  # 32 units: half a round, split
    # 132 swapped 128x144 tiles: one round, no third slab of the row-major B (t160: 120 tiles, t192: 96)
    assert pick_variant(plan(1536, 1536, 1536), 132).name == "t144s"
    assert pick_variant(plan(6144, 6144, 6144), 132).name == "hoist_es"  # 576 units: 48/66, over half
    assert pick_variant(plan(16384, 16384, 16384), 132).name == "hoist_es"  # 62 rounds + 4: 1.4 % to gain
    assert pick_variant(plan(256, 4096, 4096), 132).name == "t64"  # 128 tiles: no split
    assert pick_variant(plan(1024, 1024, 1024), 132).name == "t64"
    assert pick_variant(plan(512, 512, 512), 132).name == "sw32"  # swapped: 128 tiles of 64x32, one round
    assert pick_variant(plan(64, 4096, 4096), 132).name == "sw32n2"  # 64 clusters of two 64x32 tiles
    assert pick_variant(plan(64, 14336, 4096), 132).name == "t64"  # 112 tiles
    # at most 64 rows no 128-row tile (t144's 114 tiles at 48 x 16384 ran 0.66-0.72x of cuBLAS, t64 0.97-1.04x), and
    # sw64 over t64 where t64's last round is thin (160 tiles at N = 20480), over either B layout
    assert pick_variant(plan(48, 16384, 4096), 132).name == "t64"
    assert pick_variant(plan(48, 20480, 4096), 132).name == "sw64"  # row-major B too (rows40_64_wide_n_rowb)
    f16 = "torch.float16"
    for m, n, pick in ((48, 20480, "sw64"), (64, 24576, "sw64"), (64, 16384, "t64"), (64, 28672, "t64"),
                       (32, 20480, "sw32"), (128, 16384, "t144")):  # above 64 rows the 128-row tiles as before
        assert pick_variant(plan_matmul(FakeTensor((m, 4096), f16), col_major(4096, n, f16)), 132).name == pick
    assert pick_variant(plan(16, 64, 65536), 132).name == "sw16"  # 1 tile of 64x16, split 16 ways
    assert pick_variant(plan(512, 512, 256), 132).name == "sw32"  # 4 k-tiles: 128 swapped tiles, no split
    assert pick_variant(plan(16, 4096, 4096), 132).name == "sw16"  # 16 rows: the wgmma's N, not 64 rows
    assert pick_variant(plan(1, 4096, 4096), 132).name == "sw8"  # 7 rows of TMA zero fill, not 15
    # a long N: the fitting swapped width's 128-row tile in 4-CTA clusters where they fill >= 85 % of their last
    # round of the 30 resident clusters or one round of at most 75 % (launched without PDL), else the 64-row
    # swapped tile
    assert pick_variant(plan(8, 14336, 4096), 132).name == "sw8c4"  # 28 clusters of 30
    assert pick_variant(plan(16, 14336, 4096), 132).name == "sw16c4"
    assert pick_variant(plan(32, 28672, 4096), 132).name == "sw32c4"  # 56: the second round 26 of 30
    assert pick_variant(plan(16, 12288, 4096), 132).name == "sw16"  # 24 of 30: level to 10 % slower
    assert pick_variant(plan(16, 16384, 4096), 132).name == "sw16"  # 32: a second round of 2
    assert pick_variant(plan(16, 11008, 4096), 132).name == "sw16c4"  # 22 of 30, one round
    assert pick_variant(plan(16, 9216, 4096), 132).name == "sw16c4"  # 18 of 30
    assert pick_variant(plan(32, 9216, 4096), 132).name == "sw32c4"  # over t64 (the model ties them)
    assert pick_variant(plan(8, 11008, 4096), 132).name == "sw8c4"
    assert pick_variant(plan(16, 8192, 4096), 132).name == "sw16"  # 16 clusters would split K
    # the 64-column width's 4-CTA build: fp8 only (its 16-bit launches measured level with t64 or slower)
    fp8 = "torch.float8_e4m3fn"
    for m, n, pick in ((64, 11008, "sw64c4"), (48, 9216, "sw64c4"), (64, 14336, "sw64c4"), (1024, 14336, "streamk")):
        p8 = plan_matmul(FakeTensor((m, 4096), fp8), col_major(4096, n, fp8))
        assert pick_variant(p8, 132).name == pick, m  # 1024 rows: no swapped tile's 4-CTA build
    assert pick_variant(plan(64, 11008, 4096), 132).name == "t64"
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
        assert pick_variant(plan_matmul(FakeTensor((m, 4096), dtype), b), 132).name == pick, (m, n, dtype)
    # 65-112 rows with N up to 8192 (16384 at 65-96): the 64-row swapped tile as wide as M (sw80 to 80 rows, sw96 to
    # 96, sw112 to 112), split over K where its tiles leave SMs idle; not at 64 rows (sw64), not where M is wider than
    # it (sw80 at 96 rows streams B twice), sw128 at 113-128 rows for fp8 with K >= 8192 and N of 2048-8192 only
    # (else t64 / sw64), and not over the 4-CTA builds' long N; the n2 tile as
    # wide as half of M where its clusters make one round of 48-66 (N = 3072-4224; n2_band: 65x4096x4096 fp16
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
        assert pick_variant(plan_matmul(FakeTensor((m, k), dtype), b), 132).name == pick, (m, n, k, dtype)
    assert pick_variant(plan(16, 14336, 4096, "sw16"), 132).name == "sw16"  # explicit
    assert pick_variant(plan(63, 4096, 4096), 132).name == "sw32n2"
    assert pick_variant(plan(512, 512, 16384), 132).name == "t64"  # 32 tiles split 4 ways, reduced in-kernel
    assert pick_variant(plan(64, 14336, 4096), 132).name == "t64"  # 112 tiles: one round, no split
    assert pick_variant(plan(256, 4096, 4096, "hoist"), 132).name == "hoist"  # explicit
    assert pick_variant(plan(256, 4096, 4096, "hoist"), 132).name == "hoist"
    # rung 9 unsplit stores C under the next tile's k-tiles (hoist_es), fp32 C too; split launches run rung 9
    f32 = plan_matmul(FakeTensor((4096, 4096)), FakeTensor((4096, 4096)), out_dtype=F32)
    assert pick_variant(f32, 132).name == "hoist_es"


def test_auto_runs_sw112_split_as_the_model_predicts_within_its_margin() -> None:
    """97-112 rows x N = 2048-4096 (sw112_split_by_model): sw112 runs unsplit where the
    model predicts that faster (fp8 with up to 32 k-tiles: 104x4096x4096 7.4 us against 8.4-9.1 split; 16-bit K <=
    2048-3072), split with more (bf16 104x4096x4096 split 2, N = 2048 x 4096 split 4). `auto` took it there within
    SW112_NARROW_MARGIN of the best prediction; now it runs the n2 tile there
    (sw56n2, unsplit: n2_band, 104x4096x4096 bf16 12.0 -> 10.6 us, 97x2048x3072 fp8 5.9 -> 4.8), and sw112 where
    that is not weighed (N = 16384: t128; 97-112 x 8192 keeps sw112's rule)."""
    from tcforge.gemm.plan import launch_config

    for m, n, k, dtype, splits in ((97, 4096, 2048, F8, 1), (104, 4096, 4096, F8, 1), (112, 4096, 3072, F8, 1),
                                   (97, 2048, 3072, F8, 1), (104, 4096, 4096, BF16, 2), (97, 4096, 2048, BF16, 1),
                                   (112, 2048, 4096, BF16, 4), (104, 4096, 8192, F8, 2)):
        b = col_major(k, n, dtype)
        explicit = plan_matmul(FakeTensor((m, k), dtype), b, variant="sw112")
        assert launch_config(explicit.variant, explicit, 132)[1] == splits, (m, n, k, dtype)
        p = plan_matmul(FakeTensor((m, k), dtype), b)
        v = pick_variant(p, 132)
        assert (v.name, launch_config(v, p, 132)[1]) == ("sw56n2", 1), (m, n, k, dtype)
    assert pick_variant(plan_matmul(FakeTensor((104, 4096), F16), col_major(4096, 16384, F16)), 132).name == "t128"


def test_auto_takes_the_144_column_tile_where_it_fills_a_round_over_k_major_b() -> None:
    """t144 fills one round where no 64-multiple width does (1536^3: 132 tiles against t192's 96); over a K-major B
    (fp8, column-major 16-bit b) it loads exactly its 144 rows and measured 7-13 % faster than t192 there; over an
    MN-major B it loads three whole slabs like t192 and measured the same per k-tile, so over a row-major 16-bit B
    (row-major a) `auto` weighs its swapped form t144s instead (B^T as the MN-major A operand in whole slabs: t144's
    bytes over a K-major B, costed so; 1536^3 0.93 / 0.94x against t160's 0.87 / 0.84x, t144_swapped);
    it is not weighed where it would split K."""
    from tcforge.gemm.model import estimate_us
    from tcforge.gemm.variants import VARIANTS

    f8, f16 = "torch.float8_e4m3fn", "torch.float16"

    def pick(m: int, n: int, k: int, dt: str, col: bool) -> str:
        b = col_major(k, n, dt) if col else FakeTensor((k, n), dt)
        return pick_variant(plan_matmul(FakeTensor((m, k), dt), b), 132).name

    assert pick(1536, 1536, 1536, f8, True) == "t144"
    assert pick(1536, 1536, 1536, f16, True) == "t144"
    assert pick(1536, 1536, 1536, f16, False) == "t144s"  # 132 swapped tiles in one round, no third slab
    assert pick(1536, 1536, 6144, f8, True) == "t144"
    assert pick(2560, 2560, 2560, f16, True) == "t144"  # 3 rounds of 144 columns against rung 9's 2 of 256
    # t144 would split K in two; 72 tiles of 128x128 need not, 96 of 64x192 fill more SMs (t64x192_mid:
    # 6.0 against t128's 7.2 us, fp16 10.0 against 11.7)
    assert pick(768, 1536, 1536, f8, True) == "t64x192" and pick(768, 1536, 1536, f16, False) == "t64x192"
    assert pick(512, 2048, 2048, f16, False) == "t64"  # 128 tiles of 64x128: one round (t64x192 12.0 us, t64 9.6)
    # 128 rows: 112 tiles of 128x128 in one round against t64's 224 in two (35.7 against 40.5 us, t160 40.7:
    # t64_t128_rows128_1024); at 4096 columns t64's 64 tiles fill one round (13.0 against t128's 14.6)
    # (the n2 tile at 4096 columns: 10.8 against t64's 12.5, n2_band)
    assert pick(128, 14336, 4096, f16, False) == "t128" and pick(128, 4096, 4096, f16, False) == "sw64n2"
    assert pick(4096, 4096, 4096, f16, True) == "hoist_es" and pick(3072, 3072, 3072, f16, True) == "t192"
    t144, t192 = VARIANTS["t144"], VARIANTS["t192"]
    assert estimate_us(t144, 1536, 1536, 1536, "fp16", 132, b_kmajor=False) == estimate_us(
        t192, 1536, 1536, 1536, "fp16", 132)  # one round each, the same k-tiles, costed alike
    assert estimate_us(t144, 1536, 1536, 1536, "fp16", 132) < 0.85 * estimate_us(t192, 1536, 1536, 1536, "fp16", 132)


def test_auto_cost_model_ranks_the_tiles_as_measured() -> None:
    """`estimate_us` against the H200: the predicted times lie within 35 % of the measured kernels, and the faster
    tile is the one measured faster."""
    from tcforge.gemm.model import estimate_us
    from tcforge.gemm.variants import VARIANTS

    big, small = VARIANTS["hoist"], VARIANTS["t64"]
    # (shape, dtype, measured rung 9 us incl. split-K reduction, measured t64 us) (smallm_swapped_t64, long_k_split)
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

    assert pick_variant(plan(1024, 1024, 65536), 132).name == "hoist"
    assert pick_variant(plan(2048, 1024, 8192), 132).name == "hoist"
    # 1280x4096x4096: rung 9 data-parallel would lose to t64 (2 rounds, the second 14/66 full); stream-K beats both,
    # t160 (two full rounds) beats stream-K
    assert estimate_us(big, 1280, 4096, 4096, "fp16", 132) > estimate_us(small, 1280, 4096, 4096, "fp16", 132)
    sk = estimate_us(big, 1280, 4096, 4096, "fp16", 132, streamk=True)
    assert estimate_us(VARIANTS["t160"], 1280, 4096, 4096, "fp16", 132) < sk < estimate_us(small, 1280, 4096, 4096,
                                                                                              "fp16", 132)
    # and t320 (one round of 130 tiles) beats t160 (73.9 against 76.1 us)
    assert estimate_us(VARIANTS["t320"], 1280, 4096, 4096, "fp16", 132) < estimate_us(VARIANTS["t160"], 1280, 4096,
                                                                                      4096, "fp16", 132)
    assert pick_variant(plan(1280, 4096, 4096), 132).name == "t320"
