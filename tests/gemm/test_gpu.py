"""GPU: every variant on fresh random data against float64 and cuBLAS in the same run (outputs poisoned with NaN)."""

from __future__ import annotations

import pytest

from tcforge.gemm.build import b_layouts
from tcforge.gemm.variants import LADDER, SUPPORTED, SWEEP

COMBOS = [(i, o, bk) for i, outs in SUPPORTED.items() for o in outs for bk in b_layouts(i)]
EDGE = [1, 7, 127, 128, 129, 1000, 4097]
pytestmark = pytest.mark.gpu


def _check(variant: str, combo: tuple, m: int, n: int, k: int, seed: int, splits: int | None = None) -> None:
    from tcforge.gemm.check import check_one

    r = check_one(variant, *combo, m, n, k, seed=seed, splits=splits)
    assert r.ok, r.as_dict()
    assert not r.nan
    if r.cublas_rel_err == r.cublas_rel_err:  # cuBLAS ran: we are within 4x of its error (or the dtype bound)
        assert r.rel_err <= max(4 * r.cublas_rel_err, r.tol)


@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: f"{c[0]}-{c[1]}-{'K' if c[2] else 'N'}")
@pytest.mark.parametrize("variant", [v.name for v in LADDER + SWEEP])
def test_variant_partial_tiles(variant: str, combo: tuple) -> None:
    _check(variant, combo, 129, 257, 136, seed=1)
    _check(variant, combo, 1000, 1000, 1000, seed=2)


@pytest.mark.parametrize("variant", [v.name for v in LADDER])
@pytest.mark.parametrize("combo", [("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "bf16", True)])
def test_variant_4096_cube(variant: str, combo: tuple) -> None:
    _check(variant, combo, 4096, 4096, 4096, seed=3)


@pytest.mark.parametrize("dim", ["m", "n", "k"])
@pytest.mark.parametrize("size", EDGE)
def test_edge_sizes_each_dimension(dim: str, size: int) -> None:
    shape = {"m": 256, "n": 256, "k": 256}
    shape[dim] = size
    for combo in (("fp16", "fp32", False), ("e4m3", "bf16", True)):
        _check("auto", combo, shape["m"], shape["n"], shape["k"], seed=size)


@pytest.mark.parametrize("k", [16, 65536])
def test_short_and_long_k(k: int) -> None:
    for combo in (("fp16", "fp32", False), ("bf16", "bf16", True), ("e4m3", "fp32", True)):
        _check("auto", combo, 384, 512, k, seed=k)


@pytest.mark.parametrize("splits", [2, 3, 7])
def test_forced_split_k(splits: int) -> None:
    for combo in (("fp16", "fp32", False), ("e4m3", "bf16", True)):
        _check("splitk", combo, 300, 500, 4096, seed=splits, splits=splits)


@pytest.mark.parametrize("out_kind", ["bf16", "fp32"])
@pytest.mark.parametrize(("variant", "fast_accum"), [("hoist", True), ("promote", False), ("promote_cm1", False)])
def test_fp8_bits_equal_cublas_mode(variant: str, fast_accum: bool, out_kind: str) -> None:
    """fp8 without split-K: rung 9 gives cuBLAS's use_fast_accum=True bits, `promote` its default (promoted) bits
    (measured bit-identical on 4096^3 ... 8192^3, bench/results/gemm_fp8_accum*.json)."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.check import cublas, make_inputs
    from tcforge.gemm.validate import plan_matmul

    od = {"bf16": torch.bfloat16, "fp32": torch.float32}[out_kind]
    a, b, sa, sb = make_inputs(1024, 768, 4096, "e4m3", True, seed=11)
    api.POISON_OUTPUT = True
    ours = api.run_plan(plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant), a, b, sa, sb,
                        splits=1)
    peer = cublas(a, b, sa, sb, out_kind, fast_accum=fast_accum)
    other = cublas(a, b, sa, sb, out_kind, fast_accum=not fast_accum)
    assert not torch.equal(peer, other)  # the two cuBLAS modes differ on this data, so the test can fail
    assert torch.equal(ours, peer), int((ours != peer).sum())
