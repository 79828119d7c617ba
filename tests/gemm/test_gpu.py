"""GPU: every variant on fresh random data against float64 and cuBLAS in the same run (outputs poisoned with NaN),
and the tiles that must give the same bits as each other. The helpers here (`check`, `POISON`, the combos) serve
test_gpu_launch.py too."""

from __future__ import annotations

import pytest

from tcforge.gemm.auto import pick_variant
from tcforge.gemm.build import b_layouts
from tcforge.gemm.plan import LaunchOptions
from tcforge.gemm.variants import LADDER, SUPPORTED, SWEEP

COMBOS = [(i, o, bk) for i, outs in SUPPORTED.items() for o in outs for bk in b_layouts(i)]
# every launch's outputs are filled with NaN first, so a value the kernel never writes shows
POISON = LaunchOptions(poison_output=True)
PAIRS = [(v.name, c) for v in LADDER + SWEEP for c in COMBOS]
EDGE = [1, 7, 127, 128, 129, 1000, 4097]
pytestmark = pytest.mark.gpu


def check(
    variant: str,
    combo: tuple,
    m: int,
    n: int,
    k: int,
    seed: int,
    splits: int | None = None,
    streamk: tuple[int, int] | None = None,
    split_mode: str = "auto",
) -> None:
    from tcforge.gemm.check import check_one

    r = check_one(variant, *combo, m, n, k, seed=seed, splits=splits, streamk=streamk, split_mode=split_mode)
    assert r.ok, r.as_dict()
    assert not r.nan
    if r.cublas_rel_err == r.cublas_rel_err:  # cuBLAS ran: we are within 4x of its error (or the dtype bound)
        assert r.rel_err <= max(4 * r.cublas_rel_err, r.tol)


def pair_id(p: object) -> str:
    if isinstance(p, tuple):
        return f"{p[0]}-{p[1]}-{'K' if p[2] else 'N'}"
    return str(p)


def unsplit(variants: tuple[str, ...], shape: tuple, combo: tuple, seed: int) -> list:
    """The same fresh random product run by each variant without split-K (so each element's K order is the tile's
    own), synchronised: for the bit-identity tests across tiles."""
    from tcforge.gemm.check import make_inputs, unsplit_outputs

    a, b, sa, sb = make_inputs(*shape, combo[0], combo[2], seed)
    return unsplit_outputs(variants, a, b, sa, sb, combo[1], options=POISON)  # (variant specs too: experiment builds)


def assert_same_bits(variants: tuple[str, ...], shape: tuple, combo: tuple, seed: int) -> None:
    """The variants' unsplit outputs of one fresh product: no NaN (outputs are poisoned first), every one bit-identical
    to the first."""
    import torch

    outs = unsplit(variants, shape, combo, seed)
    assert not torch.isnan(outs[0]).any()
    assert all(torch.equal(outs[0], o) for o in outs[1:])


@pytest.mark.parametrize(("variant", "combo"), PAIRS, ids=pair_id)
def test_variant_partial_tiles(variant: str, combo: tuple) -> None:
    check(variant, combo, 129, 257, 136, seed=1)
    check(variant, combo, 1000, 1000, 1000, seed=2)


@pytest.mark.parametrize("variant", [v.name for v in LADDER])
@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True)])
def test_variant_4096_cube(variant: str, combo: tuple) -> None:
    check(variant, combo, 4096, 4096, 4096, seed=3)


@pytest.mark.parametrize("dim", ["m", "n", "k"])
@pytest.mark.parametrize("size", EDGE)
def test_edge_sizes_each_dimension(dim: str, size: int) -> None:
    shape = {"m": 256, "n": 256, "k": 256}
    shape[dim] = size
    for combo in (("fp16", "fp32", False), ("e4m3", "bf16", True)):
        check("auto", combo, shape["m"], shape["n"], shape["k"], seed=size)


@pytest.mark.parametrize("k", [16, 65536])
def test_short_and_long_k(k: int) -> None:
    for combo in (("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "fp32", True)):
        check("auto", combo, 384, 512, k, seed=k)


SWAPPED = [v.name for v in LADDER + SWEEP if v.config.swap_ab]


@pytest.mark.parametrize("shape", [(1, 4096, 4096), (16, 4096, 4096), (37, 1000, 520), (64, 257, 8192)])
@pytest.mark.parametrize("variant", SWAPPED)
def test_swapped_product_small_m(variant: str, shape: tuple) -> None:
    """C^T = B^T A^T written transposed into C: M below, at and across the tile's BN, split-K where N is short."""
    for combo in (("fp16", "fp32", True), ("bf16", "bf16", False), ("e4m3", "bf16", True), ("fp16", "fp16", False)):
        check(variant, combo, *shape, seed=sum(shape))


@pytest.mark.parametrize("combo", [("fp16", "fp32", True), ("bf16", "bf16", False), ("e4m3", "bf16", True)])
def test_swapped_product_bits_equal_unswapped(combo: tuple) -> None:
    """Each element of the swapped product sums the same products in the same K order as the 64x128 tile's: the
    outputs are bit-identical (no split-K on either side)."""
    import torch

    outs = unsplit(("sw64", "t64"), (48, 1000, 1024), combo, 11)
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize("combo", [("fp16", "fp32", True), ("bf16", "bf16", False), ("e4m3", "bf16", True),
                                   ("fp16", "fp16", False)])
def test_wide_swapped_tiles_bits_equal_narrow_and_unswapped(combo: tuple) -> None:
    """The 80- to 128-column swapped tiles (one column tile of 90 rows; C^T staged in 32-bit stores above 64
    columns) give the bits of sw64 (two column tiles there) and of the 64x128 tile, unsplit."""
    assert_same_bits(("t64", "sw64", "sw80", "sw96", "sw112", "sw128"), (90, 1000, 1024), combo, 12)


WIDE_SWAPPED = [v.name for v in LADDER + SWEEP if v.config.swap_ab and v.config.cm == 1 and v.config.bn > 64]


@pytest.mark.parametrize("split_mode", ["auto", "fused", "planes"])
@pytest.mark.parametrize("variant", WIDE_SWAPPED)
def test_wide_swapped_tiles_at_65_to_96_rows(variant: str, split_mode: str) -> None:
    """The 64-row swapped tiles wider than 64 columns at 65-96 rows x 4096 x 4096, where they split 2 over K (`auto`:
    the partial through DSMEM where there is a pair build, else L2 slots; `fused`: through L2 slots; `planes`: fp32
    planes and the reduction kernel), and at a down-projection's K (11008, split 2 as well), against float64 and
    cuBLAS."""
    for shape in ((72, 4096, 4096), (96, 4096, 4096), (80, 4096, 11008)):
        for combo in (("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True), ("fp16", "fp16", True)):
            check(variant, combo, *shape, seed=sum(shape), split_mode=split_mode)


CLUSTER_N = [v.name for v in LADDER + SWEEP if v.config.cluster_n]


@pytest.mark.parametrize("shape", [(96, 11008, 4096), (80, 9216, 1024), (65, 100, 4096), (129, 20000, 256),
                                   (104, 4096, 4096)])
@pytest.mark.parametrize("variant", CLUSTER_N)
def test_cluster_along_n_skinny_shapes(variant: str, shape: tuple) -> None:
    """Clusters along N, each CTA loading its share of the row band of A and multicasting it (n80c4 ... n128c4: 4
    CTAs; sw32n2 ... sw64n2: the swapped tile's 64 weight rows between 2, over a row-major 16-bit B half of each
    slab's k-rows): the skinny shapes they are for, a cluster whose last tiles lie past N (100 columns; swapped: past
    M), two row bands with more clusters than are resident (several per CTA), against float64 and cuBLAS."""
    for combo in (("fp16", "fp32", True), ("bf16", "bf16", False), ("e4m3", "bf16", True), ("fp16", "fp16", False)):
        check(variant, combo, *shape, seed=sum(shape))


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True),
                                   ("e4m3", "fp32", True)], ids=pair_id)
@pytest.mark.parametrize("shape", [(96, 11008, 1024), (300, 1000, 520), (129, 4097, 136)])
def test_cluster_along_n_bits_equal_unclustered(combo: tuple, shape: tuple) -> None:
    """A tile whose A rows arrive by multicast from the cluster's CTAs sums the same products in the same K order as
    the 128x128 tile without a cluster: unsplit, the outputs of t128 and every cluster-along-N build (n80c4, n96c4,
    n128c4; the swapped sw32n2 ... sw64n2, whose weight rows or k-rows arrive from two CTAs) are bit-identical (80 /
    96 columns: the last 16 / 32 of 16-bit C stored from registers; N = 4097: tiles past N inside the last cluster;
    swapped: column tiles past M)."""
    assert_same_bits(("t128", *CLUSTER_N), shape, combo, sum(shape))


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("fp16", "fp16", True), ("bf16", "bf16", False),
                                   ("bf16", "fp32", True), ("e4m3", "bf16", True), ("e4m3", "fp32", True)],
                         ids=pair_id)
@pytest.mark.parametrize("shape", [(1536, 1536, 1536), (1000, 1000, 520), (257, 4097, 136)])
def test_partial_slab_tile_bits_equal_wider_tiles(combo: tuple, shape: tuple) -> None:
    """t144's and t160's tiles (2.25 and 2.5 slabs of B; 16 or 32 columns of 16-bit C stored from registers) and
    t320's (an n256 and an n64 wgmma per m64 block; B in two boxes when K-major) sum each element's products in the
    same K order as the 128x192 and 128x256 tiles: without split-K the five outputs are bit-identical, partial tiles
    and the columns past N included (N = 4097: the last t320 tile's one valid column past 256 is the n64's); so does
    t144s, the 128x144 tile as the swapped product (C^T staged as 144-row buffers)."""
    assert_same_bits(("t144", "t160", "t320", "t192", "hoist", "t144s"), shape, combo, sum(shape))


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "fp32", True), ("e4m3", "bf16", True)],
                         ids=pair_id)
@pytest.mark.parametrize("shape", [(768, 1536, 1536), (1000, 1000, 520)])
def test_wide_64_row_tile_bits_equal_t64(combo: tuple, shape: tuple) -> None:
    """t64x192 (64x192 tiles, three slabs of a row-major B per stage) sums each element's products in the same K
    order as t64 and rung 9: without split-K the outputs are bit-identical, partial tiles included."""
    assert_same_bits(("t64x192", "t64", "hoist"), shape, combo, sum(shape) + 1)


@pytest.mark.parametrize("combo", [("fp16", "fp16", False), ("bf16", "bf16", True), ("e4m3", "bf16", True),
                                   ("e4m3", "fp16", True), ("bf16", "fp32", False)], ids=pair_id)
@pytest.mark.parametrize("shape", [(4096, 4096, 1024), (1000, 1000, 520), (8192, 1024, 136)])
def test_deferred_epilogue_bits_equal_rung9(combo: tuple, shape: tuple) -> None:
    """hoist_ed / tuned_ed store each tile's C (packed to 16 bits) under the next tile's first wgmmas: the same
    products in the same K order as rung 9, so the outputs are rung 9's bit for bit — several tiles per CTA (the
    deferred store of one tile interleaved with the next), partial tiles, and fp32 C (there the plain build)."""
    assert_same_bits(("hoist_ed", "tuned_ed", "hoist"), shape, combo, sum(shape) + 2)


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "fp32", True), ("e4m3", "fp32", True),
                                   ("bf16", "bf16", False), ("fp16", "fp16", True), ("e4m3", "bf16", True)],
                         ids=pair_id)
@pytest.mark.parametrize("shape", [(4096, 4096, 1024), (1000, 1000, 520), (8192, 1024, 136), (2000, 3000, 64)])
def test_spread_epilogue_bits_equal_rung9(combo: tuple, shape: tuple) -> None:
    """hoist_es stages the held part of each tile's C one sub-tile per k-tile of the next tile (fp32 C: its first half
    at the tile's end, its second half held as fp32): rung 9's products in its K order, so the outputs are rung 9's
    bit for bit — several tiles per CTA, partial tiles, and units of fewer k-tiles than held sub-tiles (K = 136 and
    64: the rest staged before the next tile's C is held)."""
    assert_same_bits(("hoist_es", "hoist"), shape, combo, sum(shape) + 3)


@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True)],
                         ids=pair_id)
@pytest.mark.parametrize("shape", [(2048, 2048, 2048), (4096, 1024, 1000)])
def test_auto_one_round_runs_rung9_without_the_cluster(combo: tuple, shape: tuple) -> None:
    """Where rung 9's cluster tiles fill one round (and M >= 1024) `auto` runs `tuned`: the same tile and K order
    without the cluster, so its output is rung 9's bit for bit."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import make_inputs
    from tcforge.gemm.validate import plan_matmul

    a, b, sa, sb = make_inputs(*shape, combo[0], combo[2], sum(shape))
    plan = plan_matmul(a, b, out_dtype=api.torch_dtype(combo[1]), scale_a=sa, scale_b=sb, variant="auto")
    assert pick_variant(plan, api.multiprocessor_count(plan.device_index)).name == "tuned"
    # `auto`, no split here
    ours = api.matmul(a, b, out_dtype=api.torch_dtype(combo[1]), scale_a=sa, scale_b=sb, options=POISON)
    outs = unsplit(("tuned", "hoist"), shape, combo, sum(shape))
    assert not torch.isnan(ours).any()
    assert torch.equal(ours, outs[0]) and torch.equal(outs[0], outs[1])
