"""The eager launch path and the PyTorch operators on the GPU: a remembered launch gives the bits a fresh one gives
(operands, outputs and tensor-map bases moved), a re-based tensor map is the map a fresh encode makes, CUDA-graph
capture of eager calls works, and torch.compile traces a two-layer model and an enc5 frame with no graph break and
outputs equal to eager (bench/eager.py's `--compile-check`)."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.gpu

SHAPES = [(16, 4096, 4096, "bf16", "bf16"), (128, 4096, 4096, "bf16", "bf16"), (1000, 1000, 1000, "fp16", "fp32"),
          (64, 5120, 4096, "fp16", "fp16"), (333, 517, 1000, "bf16", "fp32"), (256, 256, 512, "e4m3", "bf16"),
          (4096, 4096, 4096, "fp16", "fp32")]


@pytest.mark.parametrize(("m", "n", "k", "in_kind", "out_kind"), SHAPES)
def test_a_remembered_launch_gives_the_bits_of_a_fresh_one(m, n, k, in_kind, out_kind) -> None:
    import torch

    from tcforge.gemm import eager, matmul
    from tcforge.gemm.api import torch_dtype
    from tcforge.gemm.check import make_inputs

    od = torch_dtype(out_kind)
    runs = []
    for seed in (1, 2, 3):  # fresh tensors each time: every pointer moves
        a, b, sa, sb = make_inputs(m, n, k, in_kind, True, seed)
        eager.clear()
        fresh = matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb)
        runs.append((a, b, sa, sb, fresh))
    for a, b, sa, sb, fresh in runs:  # the entry of the last problem, re-bound to each earlier one
        again = matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb)
        torch.cuda.synchronize()
        assert torch.equal(again, fresh) and again.data_ptr() != fresh.data_ptr()
    assert len(eager._entries) == 1


def test_a_rebased_tensor_map_is_a_fresh_encode() -> None:
    import torch

    from tcforge.runtime import tensormap as tm

    x, y = (torch.empty((1024, 4096), dtype=torch.bfloat16, device="cuda") for _ in range(2))
    for box, swizzle, promo in (([64, 128], 128, 3), ([64, 16], 128, 2), ([32, 64], 64, 3)):
        m = tm.encode_tiled(tm.DTYPE_BFLOAT16, 2, x.data_ptr(), [4096, 1024], [8192], box, swizzle=swizzle,
                            l2_promotion=promo)
        m.replace_address(y.data_ptr() + 4096)
        want = tm.encode_tiled(tm.DTYPE_BFLOAT16, 2, y.data_ptr() + 4096, [4096, 1024], [8192], box,
                               swizzle=swizzle, l2_promotion=promo)
        assert m.raw() == want.raw()


def test_host_time_per_call(capsys) -> None:
    """Printed (the issue's targets: 20 us for matmul, 25 us for enc5 native_batch), held to a loose bound."""
    import torch

    from tcforge.gemm import matmul
    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    a = torch.randn(128, 4096, device="cuda").bfloat16()
    b = torch.randn(4096, 4096, device="cuda").bfloat16().t()
    w = device_weights(WeightImage.synthetic(0))
    inp = torch.zeros((1, 5 * 23 * 40 * 32), dtype=torch.uint8, device="cuda")
    tex = torch.zeros((1, 23, 40, 4), dtype=torch.int16, device="cuda")
    figures = {}
    for name, fn in (("matmul 128x4096x4096", lambda: matmul(a, b)),
                     ("enc5 native_batch 720p", lambda: native_batch(w, inp, tex, 40, 23))):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(100):
            fn()
        figures[name] = (time.perf_counter() - t0) / 100 * 1e6
        torch.cuda.synchronize()
    with capsys.disabled():
        print("\nhost us per call: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    assert all(v < 100 for v in figures.values()), figures


def test_a_remembered_enc5_launch_gives_the_bits_of_a_fresh_one() -> None:
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, eager, native_batch

    w = device_weights(WeightImage.synthetic(0))
    for ex, ey, frames in ((40, 23, 1), (120, 68, 1), (40, 23, 4)):
        outs = []
        for seed in (1, 2):
            g = torch.Generator(device="cuda").manual_seed(seed)
            inp = torch.randint(0, 256, (frames, 5 * ey * ex * 32), generator=g, dtype=torch.uint8, device="cuda")
            inp[(inp & 0x7F) == 0x7F] = 0
            tex = torch.rand((frames, ey, ex, 4), generator=g, device="cuda").half()
            eager.clear()
            outs.append((inp, tex, native_batch(w, inp, tex, ex, ey)))
        for inp, tex, (arena, surface) in outs:
            again = native_batch(w, inp, tex, ex, ey)
            assert torch.equal(again[0], arena) and torch.equal(again[1], surface)


def test_torch_compile_has_no_graph_break_and_matches_eager() -> None:
    from bench.eager import compile_check

    result = compile_check()
    for name in ("two_linear", "enc5_frame"):
        r = result[name]
        assert r["graph_breaks"] == 0 and r["graphs"] == 1, r
        assert r["equal_default"] and r["equal_reduce-overhead"], r
    assert result["eager_graph_capture_equal"]
