"""GPU: launches beyond one variant's tiles — operand layouts and padding, split-K (fused, planes, pair), stream-K,
PDL chains, `auto`'s launches by fill, the timeline build and the bench's pre-timing check (outputs poisoned)."""

from __future__ import annotations

import itertools

import pytest
from tests.gemm.test_gpu import COMBOS, POISON, check, pair_id

from tcforge.gemm.build import a_mn_ok
from tcforge.gemm.config import pair_config
from tcforge.gemm.variants import LADDER, SWEEP

pytestmark = pytest.mark.gpu
# the swapped tiles with a pair split-K build (not those already in a cluster: sw8c4 / sw16c4 / sw32c4 / sw64c4)
PAIRED = [v.name for v in LADDER + SWEEP if v.config.swap_ab and pair_config(v.config) is not None]


NOT_SWAPPED = [v.name for v in LADDER + SWEEP if a_mn_ok(v.config, "fp16")]  # also not the clusters along N
A_COL_COMBOS = [("fp16", "fp32", False), ("bf16", "bf16", True), ("fp16", "fp16", True), ("bf16", "fp32", False)]


@pytest.mark.parametrize("combo", A_COL_COMBOS, ids=pair_id)
@pytest.mark.parametrize("variant", NOT_SWAPPED + ["auto"])
def test_column_major_a_bits_equal_row_major(variant: str, combo: tuple) -> None:
    """A column-major a (a transposed view) is read by wgmma as an MN-major A operand: the tensor core sums the same
    products in the same order, so C is bit-identical to the row-major a's — on partial tiles, with M not a multiple
    of 8 (the padded copy), with K split (forced 3 ways) — and within the bound of float64 and cuBLAS."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    check(variant, combo, 129, 257, 136, seed=51)
    od = api.torch_dtype(combo[1])
    for (m, n, k), splits in (((129, 257, 136), None), ((1000, 1000, 1000), None), ((37, 300, 4096), 3)):
        a, b, _, _ = make_inputs(m, n, k, combo[0], combo[2], seed=m + k)
        a_col = a.t().contiguous().t()
        assert a_col.stride(0) == 1 and torch.equal(a_col, a)
        plans = [plan_matmul(x, b, out_dtype=od, variant=variant) for x in (a, a_col)]
        assert plans[0].a_kmajor and not plans[1].a_kmajor and plans[1].copy_a == (m % 8 != 0)
        if not plans[0].variant.splitk_auto:  # forced split-K only where the variant has a split build
            splits = None
        row = api.run_plan(plans[0], a, b, splits=splits, options=POISON)
        col = api.run_plan(plans[1], a_col, b, splits=splits, options=POISON)
        torch.cuda.synchronize()
        assert not torch.isnan(col).any()
        assert torch.equal(col, row), (m, n, k, int((col != row).sum()))


@pytest.mark.parametrize("variant", ["baseline", "t64", "hoist"])
def test_broadcast_and_strided_views_take_the_padded_copy(variant: str) -> None:
    """Views whose leading stride is shorter than a row (expand: stride 0) or not 16-byte aligned (a column slice)
    are copied into a padded buffer first: the result equals the same product of the materialised tensors, bit for
    bit, for either a layout."""
    import torch

    from tcforge.gemm import matmul
    from tcforge.gemm.validate import plan_matmul

    g = torch.Generator(device="cuda").manual_seed(61)
    row = torch.randn((1, 520), generator=g, device="cuda").half()
    col = torch.randn((300, 1), generator=g, device="cuda").half()
    wide = torch.randn((520, 600), generator=g, device="cuda").half()
    b = torch.randn((520, 264), generator=g, device="cuda").half()
    bcol = torch.randn((520, 1), generator=g, device="cuda").half()
    cases = [
        (row.expand(300, 520), b),  # a: every row the same (strides (0, 1))
        (col.expand(300, 520), b),  # a: column-major with stride 0 between columns
        (wide[:, 5:305].t(), b),  # a: column-major, column stride 600, base 10 bytes in: not aligned
        (torch.randn((300, 520), generator=g, device="cuda").half(), bcol.expand(520, 264)),  # b: columns stride 0
    ]
    for a, bb in cases:
        plan = plan_matmul(a, bb, out_dtype=torch.float32, variant=variant)
        assert plan.copy_a or plan.copy_b
        ours = matmul(a, bb, out_dtype=torch.float32, variant=variant)
        dense = matmul(a.contiguous(), bb.contiguous(), out_dtype=torch.float32, variant=variant)
        torch.cuda.synchronize()
        assert not torch.isnan(ours).any()
        assert torch.equal(ours, dense), (a.stride(), bb.stride())


@pytest.mark.parametrize("variant", ["auto", "hoist", "t64", "sw16"])
def test_padded_leading_dimension_is_read_in_place(variant: str) -> None:
    """A b whose leading stride is longer than its rows but 16-byte aligned (check.make_inputs' b_pad, the strided
    probe of bench/gemm_small.py --b-pad) is read in place — no copy — and gives the compact tensor's bits; the
    padding holds NaN / huge patterns, so a read past a row would show."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    for in_kind, out_kind, kmajor in (("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True)):
        for m, n, k in ((16, 520, 272), (300, 1000, 144)):
            if variant == "sw16" and m > 16:
                continue
            a, b, sa, sb = make_inputs(m, n, k, in_kind, kmajor, seed=m + n, b_pad=32)
            lead = b.stride(1) if kmajor else b.stride(0)
            assert lead == (k if kmajor else n) + 32
            dense = b.contiguous() if not kmajor else b.t().contiguous().t()
            od = api.torch_dtype(out_kind)
            plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant)
            assert not plan.copy_b
            ours = api.run_plan(plan, a, b, sa, sb, options=POISON)
            ref = api.run_plan(plan_matmul(a, dense, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant),
                               a, dense, sa, sb, options=POISON)
            torch.cuda.synchronize()
            assert not torch.isnan(ours).any()
            assert torch.equal(ours, ref), (in_kind, m, n, k, int((ours != ref).sum()))


@pytest.mark.parametrize("spec", ["t64", "t128", "sw16", "t64_sk"])
def test_cp_async_operands_give_the_tma_bits(spec: str) -> None:
    """`cpa` (each operand loaded with cp.async instead of TMA: bit 1 the kernel's A, bit 2 its B) fills the ring
    with the bytes TMA would: every output is the TMA build's, bit for bit — on rows that start only 16-byte
    aligned (K = 1000, 1000 B fp8 rows copied, 1008 in place), partial tiles, K split three ways, and B row-major
    (its TMA loads kept: bit 2 needs a K-major B)."""
    from dataclasses import replace

    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    for (in_kind, out_kind, kmajor), (m, n, k) in itertools.product(
            [("bf16", "bf16", True), ("fp16", "fp32", True), ("e4m3", "bf16", True), ("bf16", "bf16", False)],
            [(16 if spec.startswith("sw") else 1000, 1000, 1000), (13 if spec.startswith("sw") else 333, 517, 1008)]):
        a, b, sa, sb = make_inputs(m, n, k, in_kind, kmajor, seed=m + n + k)
        od = api.torch_dtype(out_kind)
        plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=spec)
        splits = 3 if plan.variant.splitk_auto and m > 64 else 1
        want = api.run_plan(plan, a, b, sa, sb, splits=splits, options=POISON)
        bits = (1, 2, 3) if kmajor or plan.variant.config.swap_ab else (1,)
        for cpa in bits:
            if plan.variant.config.swap_ab and not kmajor and cpa & 1:  # the swapped A is B^T: MN-major
                continue
            v = replace(plan.variant, name=f"{spec}@cpa={cpa}", config=replace(plan.variant.config, cpa=cpa))
            got = api.run_plan(replace(plan, variant=v), a, b, sa, sb, splits=splits, options=POISON)
            torch.cuda.synchronize()
            assert torch.equal(got, want), (spec, cpa, in_kind, m, n, k, int((got != want).sum()))


@pytest.mark.parametrize(("variant", "kmajor"), [("hoist", False), ("n96c4", True), ("t64", False)])
def test_timeline_build_gives_the_plain_bits_and_ordered_stamps(variant: str, kmajor: bool) -> None:
    """bench/gemm_timeline.py's diagnostic build computes the plain build's bits (the stamps change nothing else),
    writes an entry, set-up, first-stage, mainloop-done and stored stamp for every CTA and warpgroup, in that order
    (several tiles per CTA at 1000 x 2000 x 520: the stamps are the last tile's), and is refused a launch without
    its buffer."""
    from dataclasses import replace

    import torch

    from tcforge.errors import TcforgeError
    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul
    from tcforge.gemm.variants import VARIANTS

    v = VARIANTS[variant]
    tv = replace(v, name=variant + "_tl", config=replace(v.config, timeline=True))
    for m, n, k in ((300, 1000, 136), (1000, 2000, 520)):
        a, b, _, _ = make_inputs(m, n, k, "bf16", kmajor, seed=m + k)
        plan = plan_matmul(a, b, variant=variant)
        plain = api.run_plan(plan, a, b, splits=1, options=POISON)
        buf = torch.zeros(4096 * api.TIMELINE_SLOTS, dtype=torch.int64, device="cuda")
        prep = api.prepare_plan(replace(plan, variant=tv), a, b, splits=1, timeline=buf, options=POISON)
        prep()
        torch.cuda.synchronize()
        assert torch.equal(prep.result(), plain), (m, n, k)
        st = buf[: prep.grid[0] * api.TIMELINE_SLOTS].view(-1, api.TIMELINE_SLOTS).cpu().tolist()
        for row in st:
            loads = [x for x in (row[2], row[3]) if x > 0]  # one producer thread (t64) or two (rung 9, n96c4)
            assert row[0] > 0 and loads and row[0] <= row[1] <= min(loads)
            for wg in range(tv.config.nc):
                first, done, stored = row[4 + 4 * wg], row[5 + 4 * wg], row[6 + 4 * wg]
                assert row[1] <= first <= done <= stored, (m, n, k, wg, row)
        with pytest.raises(TcforgeError, match="timeline"):
            api.prepare_plan(replace(plan, variant=tv), a, b, splits=1, options=POISON)


@pytest.mark.parametrize(
    "shape", [(512, 512, 512), (64, 4096, 4096), (1024, 1024, 1024), (100, 300, 2000), (1536, 1536, 1536)]
)
def test_auto_small_launches(shape: tuple) -> None:
    """`auto` on launches whose rung-9 tiles leave half the SMs idle: the 64x128 tile, sharing units by stream-K
    where it would split K too (512^3 16-bit, 64x4096x4096, 100x300x2000 fp8), else whole tiles or split-K;
    1536^3 runs the 128x144 tile (the 128x192 one over a row-major 16-bit B)."""
    for combo in (("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True), ("fp16", "fp16", True)):
        check("auto", combo, *shape, seed=sum(shape))


@pytest.mark.parametrize("splits", [2, 3, 7])
def test_forced_split_k(splits: int) -> None:
    for combo in (("fp16", "fp32", False), ("e4m3", "bf16", True)):
        check("splitk", combo, 300, 500, 4096, seed=splits, splits=splits)


# variants whose split launches are compared between the two reductions of their split-K build
FUSED_VS_PLANES = ["splitk", "t64", "t192", "t144", "sw8", "sw16", "sw64", "tuned_pp", "promote"]


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True),
                                   ("fp16", "fp16", False)])
@pytest.mark.parametrize("variant", FUSED_VS_PLANES)
def test_split_k_inside_the_kernel_equals_planes(variant: str, combo: tuple) -> None:
    """The in-kernel split-K (the last split of a tile adds every split's partial, in split order from 0) returns
    exactly the planes path's bits (fp32 planes summed in the same order by tcf_splitk_reduce), for 2, 3 and 7
    splits on partial tiles; launched three times in a row (poisoned each time), so each launch must have reset the
    tile counters it used, and within the error bound of float64."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import TOLERANCE, make_inputs, reference, rel_err
    from tcforge.gemm.validate import plan_matmul

    od = api.torch_dtype(combo[1])
    m, n, k = (37, 1000, 4096) if variant.startswith("sw") else (300, 500, 4096)
    a, b, sa, sb = make_inputs(m, n, k, combo[0], combo[2], seed=41)
    ref = reference(a, b, sa, sb)
    for splits in (2, 3, 7):
        plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant)
        fused = api.prepare_plan(plan, a, b, sa, sb, splits=splits, split_mode="fused", options=POISON)
        assert fused.reduce is None and fused.splits == splits
        outs = []
        for _ in range(3):
            fused()
            outs.append(fused.result().clone())
        planes = api.run_plan(plan, a, b, sa, sb, splits=splits, split_mode="planes", options=POISON)
        torch.cuda.synchronize()
        assert not torch.isnan(outs[0]).any()
        for o in outs:
            assert torch.equal(o, planes), (splits, int((o != planes).sum()))
        assert rel_err(outs[0], ref) <= TOLERANCE[combo[1]]


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True),
                                   ("fp16", "fp16", True)])
@pytest.mark.parametrize("variant", PAIRED)
def test_pair_split_k_through_dsmem_equals_planes(variant: str, combo: tuple) -> None:
    """Two splits of a swapped tile as a 2-CTA cluster (split 1 stores its partial into split 0's shared memory with
    st.async): exactly the planes path's bits, launched three times in a row with poisoned outputs; on one round of
    tiles (37x1000x4096) and on a persistent grid where each pair runs two or three tiles and split 1 must wait for
    split 0 to free the receive slot (13x9000x2048: 282 or more units on 132 CTAs); `auto` takes it for two splits."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import TOLERANCE, make_inputs, reference, rel_err
    from tcforge.gemm.model import cluster_tiles
    from tcforge.gemm.validate import plan_matmul

    od = api.torch_dtype(combo[1])
    for m, n, k in ((37, 1000, 4096), (13, 9000, 2048)):
        a, b, sa, sb = make_inputs(m, n, k, combo[0], combo[2], seed=m + n)
        plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant)
        pair = api.prepare_plan(plan, a, b, sa, sb, splits=2, split_mode="pair", options=POISON)
        assert pair.reduce is None and pair.splits == 2 and pair.grid[0] % 2 == 0
        assert pair.grid[0] == min(132, 2 * cluster_tiles(plan.variant.config, m, n))
        auto = api.prepare_plan(plan, a, b, sa, sb, splits=2, options=POISON)
        assert auto.fn is pair.fn  # the pair build is what a two-way split of a swapped tile runs
        outs = []
        for _ in range(3):
            pair()
            outs.append(pair.result().clone())
        planes = api.run_plan(plan, a, b, sa, sb, splits=2, split_mode="planes", options=POISON)
        torch.cuda.synchronize()
        assert not torch.isnan(outs[0]).any()
        for o in outs:
            assert torch.equal(o, planes), (m, n, k, int((o != planes).sum()))
        tol = max(TOLERANCE[combo[1]], 3e-3 if combo[0] == "e4m3" else 0.0)
        assert rel_err(outs[0], reference(a, b, sa, sb)) <= tol


def test_pair_split_k_is_refused_where_it_does_not_apply() -> None:
    """split_mode="pair" needs a swapped tile split exactly two ways: a clear error otherwise."""
    from tcforge.errors import TcforgeError
    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    a, b, _, _ = make_inputs(37, 1000, 4096, "fp16", False, seed=3)
    for variant, splits in (("t64", 2), ("sw16", 3)):
        with pytest.raises(TcforgeError, match="split exactly 2 ways"):
            api.prepare_plan(plan_matmul(a, b, variant=variant), a, b, splits=splits, split_mode="pair", options=POISON)


@pytest.mark.parametrize("out_kind", ["bf16", "fp32"])
@pytest.mark.parametrize(("variant", "fast_accum"), [("hoist", True), ("promote", False), ("promote_cm1", False)])
def test_fp8_bits_equal_cublas_mode(variant: str, fast_accum: bool, out_kind: str) -> None:
    """fp8 without split-K: rung 9 gives cuBLAS's use_fast_accum=True bits, `promote` its default (promoted) bits
    (measured bit-identical on 4096^3 ... 8192^3: bench/baselines/gemm.json, key fp8_accum_h200)."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import cublas, make_inputs
    from tcforge.gemm.validate import plan_matmul

    od = api.torch_dtype(out_kind)
    a, b, sa, sb = make_inputs(1024, 768, 4096, "e4m3", True, seed=11)
    ours = api.run_plan(plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant), a, b, sa, sb,
                        splits=1, options=POISON)
    peer = cublas(a, b, sa, sb, out_kind, fast_accum=fast_accum)
    other = cublas(a, b, sa, sb, out_kind, fast_accum=not fast_accum)
    assert not torch.equal(peer, other)  # the two cuBLAS modes differ on this data, so the test can fail
    assert torch.equal(ours, peer), int((ours != peer).sum())


@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: f"{c[0]}-{c[1]}-{'K' if c[2] else 'N'}")
@pytest.mark.parametrize("variant", [v.name for v in LADDER + SWEEP if v.config.streamk])
def test_streamk_forced_small_grids(variant: str, combo: tuple) -> None:
    """Both stream-K roles on small shapes: 1000^3 on 3 clusters sharing 4 units (owners add two partials), 129x257
    on 5 clusters sharing every unit (ranges inside one tile; for fp8's 2 k-tiles, empty ranges)."""
    check(variant, combo, 1000, 1000, 1000, seed=21, streamk=(3, 4))
    check(variant, combo, 129, 257, 136, seed=22, streamk=(5, 2))
    check(variant, combo, 1000, 1000, 1000, seed=23, streamk=(3, 0))  # stream-K build, nothing shared


@pytest.mark.parametrize(("variant", "base", "cm", "shared_units"), [("streamk", "hoist", 2, 58),
                                                                     ("streamk_cm1", "tuned", 1, 116)])
@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True)])
def test_streamk_4096_equals_dp_outside_shared_units(
    variant: str, base: str, cm: int, shared_units: int, combo: tuple
) -> None:
    """At 4096^3 stream-K shares the units past the last full round (58 of 256 cluster tiles; without the cluster
    116 of 512 tiles): every tile run whole is bit-identical to the same build without stream-K, the shared ones
    (another fp32 summation order) are within the bound; the launch really shared units on a full grid."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs, reference, rel_err
    from tcforge.gemm.streamk import unit_tile
    from tcforge.gemm.validate import plan_matmul

    od = api.torch_dtype(combo[1])
    a, b, sa, sb = make_inputs(4096, 4096, 4096, combo[0], combo[2], seed=31)
    prep = api.prepare_plan(plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant), a, b, sa, sb,
                            options=POISON)
    assert prep.sk_units == shared_units and prep.grid[0] == 132
    prep()
    ours = prep.result()
    dp = api.run_plan(plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=base), a, b, sa, sb,
                      options=POISON)
    torch.cuda.synchronize()
    rows = 128 * cm
    units = (4096 // rows) * 16
    shared = torch.zeros((4096, 4096), dtype=torch.bool, device="cuda")
    for u in range(units - shared_units, units):
        mc, nt = unit_tile(u, 4096 // rows, 16, 8)
        shared[mc * rows : (mc + 1) * rows, nt * 256 : (nt + 1) * 256] = True
    assert torch.equal(ours[~shared], dp[~shared])
    tol = {"fp32": 2e-4, "bf16": 1e-2}[combo[1]]
    ref = reference(a, b, sa, sb)
    assert rel_err(ours[shared], ref[shared]) <= tol
    assert not torch.isnan(ours).any()


PDL_CHAINS = [(v.name, 16 if v.config.swap_ab else 512) for v in LADDER + SWEEP] + [
    ("auto", 1), ("auto", 64), ("auto", 128), ("auto", 2048)]


@pytest.mark.parametrize(("variant", "m"), PDL_CHAINS)
def test_pdl_chain_reads_each_previous_output(variant: str, m: int) -> None:
    """Programmatic dependent launch: each GEMM of a chain may start while the one before it (whose output is its
    a) still runs, and must wait (griddepcontrol.wait) before touching global memory. The chain launched back to
    back with PDL gives exactly the bits of the same chain without PDL and with a synchronize after each step, and
    no NaN (the outputs' memory held NaN before); fp16 through every variant, fp8 (a torch cast between the GEMMs)
    where the variant takes fp8."""
    import torch

    from tcforge.gemm.check import gemm_chain

    for fp8 in (False, True):
        with_pdl = gemm_chain(variant, m, 1024, 4, fp8, pdl=True, sync=False)
        plain = gemm_chain(variant, m, 1024, 4, fp8, pdl=False, sync=True)
        for i, (x, y) in enumerate(zip(with_pdl, plain, strict=True)):
            assert not torch.isnan(x.float()).any(), (fp8, i)
            assert torch.equal(x, y), (fp8, i, int((x != y).sum()))


def _auto_fp16_launch(m: int, n: int, k: int, col_b: bool) -> tuple[str, object]:
    """`auto`'s variant and prepared launch for a fresh fp16 product (b column- or row-major); the launch's output,
    after a NaN poison, is checked against float64 here."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import TOLERANCE, poisoned_result, rel_err
    from tcforge.gemm.validate import plan_matmul

    a = torch.randn(m, k, device="cuda").half()
    w = torch.randn(n, k, device="cuda").half()
    b = w.t() if col_b else w.t().contiguous()
    prepared = api.prepare_plan(plan_matmul(a, b), a, b, options=POISON)
    assert rel_err(poisoned_result(prepared), a.double() @ b.double()) <= TOLERANCE["fp16"], (m, n, k)
    return prepared.plan.variant.name, prepared


def test_auto_launches_4_cta_swapped_rounds_with_pdl_by_their_fill() -> None:
    """`auto` at 16 x 11008 x 4096 runs sw16c4 (22 of the resident clusters) without PDL, at 16 x 14336 x 4096 (28)
    with it (model.pdl_pays; the driver's residency count decides), and both outputs match float64."""
    for n, pdl in ((11008, False), (14336, True)):
        name, prepared = _auto_fp16_launch(16, n, 4096, True)
        assert name == "sw16c4", (n, name)
        assert prepared.pdl is pdl, n


def test_auto_launches_one_cta_swapped_rounds_with_pdl_by_their_fill() -> None:
    """`auto` at 64 x 5120 x 4096 runs sw64 on 80 of the SMs without PDL (with it graph-timed 0.8-5 us per GEMM
    slower), at 64 x 8192 x 4096 on 128 with it; both outputs match float64."""
    for n, pdl in ((5120, False), (8192, True)):
        name, prepared = _auto_fp16_launch(64, n, 4096, True)
        assert name == "sw64", (n, name)
        assert prepared.splits == 1 and prepared.pdl is pdl, n


def test_auto_runs_the_width_m_needs_at_65_to_128_rows() -> None:
    """`auto` at 80 and 96 rows x 11008 runs the swapped 4-CTA build of that width (sw80c4 / sw96c4, without PDL:
    22 clusters), at 112 rows the 128x96 tile in clusters along N (n96c4) over a K-major B and t128 over a row-major
    one; none of them with PDL (model.pdl_pays); every output matches float64 after a NaN poison."""
    for m, col_b, want in ((80, True, "sw80c4"), (96, False, "sw96c4"), (112, True, "n96c4"), (112, False, "t128")):
        name, prepared = _auto_fp16_launch(m, 11008, 2048, col_b)
        assert name == want, (m, col_b, name)
        assert not prepared.pdl, m  # swapped: a part-empty round of 4-CTA clusters; 16-bit: 32 k-tiles per CTA


def test_auto_runs_the_wide_swapped_tile_at_65_to_112_rows_outside_the_n2_band() -> None:
    """`auto` at 72 / 96 / 104 rows x 8192 and 72 / 104 x 1024 runs the 64-row swapped tile as wide as M (sw80 / sw96 /
    sw112; at N = 1024 split 8 ways, through L2 slots for sw112), with PDL as every unclustered swapped launch; every
    output matches float64 after a NaN poison, over either B layout. (At N = 2048-4224 the n2 tile runs: below.)"""
    for m, n, k, col_b, want, splits in ((72, 8192, 4096, True, "sw80", 1), (96, 8192, 4096, False, "sw96", 1),
                                         (104, 8192, 2048, True, "sw112", 1), (72, 1024, 4096, True, "sw80", 8),
                                         (104, 1024, 4096, True, "sw112", 8)):
        name, prepared = _auto_fp16_launch(m, n, k, col_b)
        assert name == want, (m, n, k, name)
        assert prepared.pdl and prepared.splits == splits, (m, prepared.splits)


def test_auto_runs_the_n2_tile_at_33_to_128_rows_with_n_of_2048_to_4224() -> None:
    """`auto` at 40-128 rows x N = 2048-4096 runs the 64-row swapped tile as wide as half of M in 2-CTA clusters
    along M (sw32n2 ... sw64n2: one round of 32-64 clusters, unsplit, with PDL), over either B layout; outputs match
    float64 after a NaN poison."""
    for m, n, k, col_b, want in ((40, 4096, 2048, True, "sw32n2"), (64, 4096, 4096, True, "sw32n2"),
                                 (97, 4096, 2048, True, "sw56n2"), (112, 4096, 1024, False, "sw56n2"),
                                 (100, 2048, 4096, True, "sw56n2"), (128, 3072, 4096, False, "sw64n2")):
        name, prepared = _auto_fp16_launch(m, n, k, col_b)
        assert name == want and prepared.splits == 1 and prepared.pdl, (m, n, k, name, prepared.splits)


@pytest.mark.parametrize(("variant", "combo"), [("auto", ("fp16", "fp32")), ("hoist", ("bf16", "bf16")),
                                                ("auto", ("e4m3", "bf16")), ("promote", ("e4m3", "fp32"))])
def test_bench_checks_each_launch_against_cublas_before_timing(variant: str, combo: tuple) -> None:
    """`tcforge bench gemm` rows carry the pre-timing check (fp8: against cuBLAS's mode of accumulation — rung 9 is
    bit-identical to use_fast_accum=True, `promote` to the default); a launch whose output is wrong is refused."""
    from tcforge.gemm import api
    from tcforge.gemm.bench import _bench_pair, _check_against_cublas
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    r = _bench_pair(variant, combo, 2048, 2048, 2048, graph=False)  # one round: no split, rung 9's K order
    assert "error" not in r and r["tflops"] > 0, r.get("error")
    assert r["eager_us"] >= r["host_us"] > 0 and r["cublas_eager_us"] >= r["cublas_host_us"] > 0  # the user's loop
    assert r["ratio_eager"] == r["cublas_eager_us"] / r["eager_us"]
    assert r["check_peer"] == ("cublas" if variant == "promote" or combo[0] != "e4m3" else "cublas_fast")
    if combo[0] == "e4m3":
        assert r["check_rel_err_vs_cublas"] == 0.0  # the same bits as that cuBLAS mode
    else:
        assert 0.0 <= r["check_rel_err_vs_cublas"] < (1e-5 if combo[1] == "fp32" else 5e-3)
    in_kind, out_kind = combo
    a, b, sa, sb = make_inputs(256, 256, 512, in_kind, in_kind == "e4m3", seed=4)
    prepared = api.prepare_plan(plan_matmul(a, b, out_dtype=api.torch_dtype(out_kind), scale_a=sa, scale_b=sb,
                                            variant=variant), a, b, sa, sb, options=POISON)
    wrong = make_inputs(256, 256, 512, in_kind, in_kind == "e4m3", seed=5)  # the product of other inputs
    with pytest.raises(ValueError, match="differs from cuBLAS"):
        _check_against_cublas(prepared, variant, *wrong, in_kind, out_kind)
