"""matmul's input validation runs before torch/CUDA: each bad input is a TcforgeError saying what to change; and
on the launch model's measured points (data/measured_points.json) `auto` runs a variant within 4 % of the fastest."""

from __future__ import annotations

import pytest
from gemm_testlib import BF16, F8, F16, F32, FakeDevice, FakeTensor, col_major

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.gemm import matmul, measured, plan_matmul
from tcforge.gemm.auto import pick_variant


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


# every measured point's kernel times by variant (data/measured_points.json, its sets merged in the order measured)
MEASURED = measured.points()
# points whose fastest variant is one `auto` does not weigh there, and why: the test compares `auto` with the best
# of the others and asserts the named one is fastest (so the entry goes when a rule takes it)
NOT_WEIGHED = {
    # the n2 tile at N = 1024 (16 clusters): 10 % faster than sw32 at 80 x 1024 x 1024 16-bit, slower at 80 x 1024 x
    # 4096-14336 and 7 % slower than sw16 for fp8 at 80 x 1024 x 1024 (set n2_band); `auto` weighs it from 32 clusters
    ((80, 1024, 1024), "fp16", "col"): "sw40n2",
    ((80, 1024, 1024), "fp16", "row"): "sw40n2",
}
# where `auto` runs a variant more than 4 % slower than the best measured, and why (the worst 9.5 %, a noisy timing)
SLOW_AUTO = [
    ((1024, 1024, 16384), "e4m3", "col"),  # rung 9 + split-K 38.1 us, t64 35.0 (lean_template_refit): predicted the
    # other way
    ((2048, 1024, 8192), "fp16", "col"),  # rung 9 67.3 us, t128 62.9: one cost per k-tile misses t128's 2nd round
    ((16, 12288, 2048), "fp16", "col"),  # sw16 14.7 us, sw16c4 without PDL 13.9: at 24 clusters the other three
    # points (and M = 32) run level or faster on the 64-row tile, so C4_LOW_FILL stops below it
    ((97, 4096, 2048), "e4m3", "col"),  # sw56n2 by rule 5.0 us, sw112 4.8: at 97 rows the n2 tile's second CTA
    # holds 41 of its 56 rows (TMA zero fill; 104-112 rows run faster), and K = 2048 is short
    ((64, 28672, 4096), "fp16", "col"),  # t64 66.6 us, sw64c4 60.8 (lean_template_refit) — yet `auto`'s own row in
    # the same run ran t64 in 60.8 (HBM-bound: 235 MB of weights)
    ((64, 2048, 4096), "fp16", "col"),  # sw32n2 8.2 us as predicted, sw32 7.8 where its constant (fitted on an
    # earlier template) predicts 8.6
    ((64, 16384, 4096), "e4m3", "col"),  # t64 21.2 us, sw64 20.0 (graph-timed 19.6 against 19.5): the model ties
    # them (rows40_64_wide_n)
    ((40, 20480, 4096), "e4m3", "col"),  # sw64 27.8 us, sw64c4 26.6: its 80 clusters fill none of the 4-CTA rules
    ((40, 20480, 4096), "fp16", "col"),  # sw64 54.0 us, sw64c4 51.9 (the same; 48-64 rows: sw64 within 4 %)
]


# where the model's time for `auto`'s (fastest) pick is more than 35 % off the measured kernel, and why
MODEL_MISS = {
    # t64 in one round of 96 tiles: 8.5 us, 0.20 us per fp8 k-tile on the lean template against its constant 0.30
    # (fitted on 16-bit launches of an earlier template; n2_long_n)
    ((128, 6144, 4096), "e4m3", "col"),
    # sw64c4 in one round of 18 clusters: 10.0 us against the model's 13.5 (its 0.36 us per k-tile fitted where the
    # clusters fill a round; lean_template_refit)
    ((64, 9216, 4096), "e4m3", "col"),
    # sw64 in one round of 80 tiles (61 % of the SMs): 10.9 us against the model's 14.8 (n2_past_one_round)
    ((64, 5120, 4096), "fp16", "col"),
    # sw64 in one round of 128 tiles: 7.5 us for fp8 against the model's 11.2 (its fp8 per-k-tile cost fitted on an
    # earlier template; n2_past_one_round)
    ((64, 8192, 4096), "e4m3", "col"),
    # t64 in one round of 80 tiles: 13.7 / 15.5 / 7.9 us against the model's 21.2 / 21.2 / 11.6 (as at 128 x 6144
    # above; n2_past_one_round)
    ((128, 5120, 4096), "bf16", "col"),
    ((128, 5120, 4096), "fp16", "col"),
    ((128, 5120, 4096), "e4m3", "col"),
}


def test_measured_points_are_named_sets() -> None:
    """The data file's sets have unique names and every point names a known set, a positive shape, a dtype, a B
    layout and variants `auto` or the ladder knows, with positive times."""
    from tcforge.gemm.variants import VARIANTS

    names = measured.set_names()
    assert len(names) == len(set(names)) == 38
    for p in measured._data()["points"]:
        assert p["set"] in names and len(p["shape"]) == 3 and min(p["shape"]) >= 1, p
        assert p["dtype"] in ("fp16", "bf16", "e4m3") and p["layout"] in ("col", "row"), p
        assert p["microseconds"] and all(v in VARIANTS and t > 0 for v, t in p["microseconds"].items()), p
    with pytest.raises(KeyError, match="no measured set named nonesuch"):
        measured.points(["nonesuch"])


def test_auto_picks_within_4_percent_of_the_measured_best() -> None:
    """On the measured points `auto` runs a variant at most 4 % slower than the fastest measured there — on all but the
    nine of 582 in SLOW_AUTO, those at most 10 % (against the best variant it weighs where NOT_WEIGHED names a
    faster one it does not) — and the model's time for it is within 35 % of the measured kernel (but at MODEL_MISS).
    The candidates are rung 9 (without the cluster where its tiles fill one round and M >= 1024), its stream-K build,
    the 64x128 tile, and t320, t192, t160, t144 (over a row-major 16-bit B its swapped form t144s, in one round), t128
    and t64x192 where they need no split (the 128-row ones above 64 rows, t64x192 above SMALL_M, t320 and t160 in at
    most two rounds); for small M the swapped tiles (sw8 / sw16 / sw32 / sw64, the one fitting M first; at 65-112 rows
    sw80 / sw96 / sw112 where M fits them) weigh in too, and the fitting one's 4-CTA-cluster build where its clusters
    fill most of a round (N = 13312-14336 at M <= 32) or at most 3/4 of one (N = 9216-11008, launched without PDL);
    for fp8 also sw64c4 (33-64 rows) and, in the part-empty band only, sw128c4 (97-128 rows); for 65-96 rows sw80c4 /
    sw96c4 in any one round or a nearly full last one, for 97-128 rows of a K-major B n80c4 / n96c4 (clusters along N)
    in one round at least 3/4 full; at 33-128 rows the n2 tiles (sw32n2 ... sw64n2) in one round of 32-66 clusters;
    at 33-64 rows sw64 over t64 where t64's last round is under half full.
    """
    from tcforge.gemm.model import estimate_us
    from tcforge.gemm.variants import VARIANTS

    slow = []
    for (shape, kind, layout), times in MEASURED.items():
        m, n, k = shape
        dt = F8 if kind == "e4m3" else F16  # (bf16 and fp16 launches are alike to the model)
        b = col_major(k, n, dt) if layout == "col" else FakeTensor((k, n), dt)
        picked = pick_variant(plan_matmul(FakeTensor((m, k), dt), b), 132).name
        # rung 9's spread-epilogue build (unsplit): the same tile and bits, measured within 1.5 % of rung 9, so the
        # points' rung 9 times stand for it
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
