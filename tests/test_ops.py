"""The PyTorch operators on the CPU (torch without a GPU): fake tensors on a CUDA device give the outputs' shapes and
dtypes, bad inputs raise at trace time, dynamo traces a model that calls `tcforge.gemm.matmul` and enc5
`native_batch` into one graph of the operators, and no backward exists. Skipped where torch is not installed."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
fake_tensor = pytest.importorskip("torch._subclasses.fake_tensor")

from tcforge import ops  # noqa: E402  (after torch is known to be there)
from tcforge.errors import TcforgeError  # noqa: E402
from tcforge.gemm import matmul  # noqa: E402
from tcforge.layers.enc5.gpu import native_batch  # noqa: E402
from tcforge.layers.enc5.layout import IMAGE_BYTES  # noqa: E402

BF16, F16, F32, E4M3 = torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn


@pytest.fixture
def mode():
    with fake_tensor.FakeTensorMode(allow_non_fake_inputs=True) as m:
        yield m


def cuda(*shape, dtype=BF16):
    return torch.empty(*shape, dtype=dtype, device="cuda")


@pytest.mark.parametrize(("dtype", "out", "want"), [(BF16, None, BF16), (F16, F32, F32), (BF16, F32, F32),
                                                    (F16, None, F16)])
def test_fake_matmul_gives_the_output_shape_and_dtype(mode, dtype, out, want) -> None:
    c = ops.matmul(cuda(16, 256, dtype=dtype), cuda(256, 96, dtype=dtype), out_dtype=out)
    assert c.shape == (16, 96) and c.dtype == want and c.device.type == "cuda"
    assert matmul(cuda(16, 256, dtype=dtype), cuda(256, 96, dtype=dtype), out_dtype=out, variant=3).shape == (16, 96)


def test_fake_fp8_matmul_takes_scales(mode) -> None:
    a, b = cuda(64, 128, dtype=E4M3), cuda(96, 128, dtype=E4M3).t()
    s = torch.ones((), dtype=F32, device="cuda")
    assert ops.matmul(a, b, out_dtype=BF16, scale_a=s, scale_b=s).dtype == BF16


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((cuda, (16, 256), (128, 96)), {}, "shapes do not chain"),
    ((cuda, (16, 256), (256, 96)), {"out_dtype": torch.int8}, "out_dtype int8"),
    ((cuda, (16, 256), (256, 96)), {"variant": "nope"}, "unknown variant"),
])
def test_fake_matmul_raises_what_the_eager_call_raises(mode, args, kwargs, match) -> None:
    make, sa, sb = args
    with pytest.raises(TcforgeError, match=match):
        ops.matmul(make(*sa), make(*sb), **kwargs)


def test_launch_options_are_eager_only(mode) -> None:
    from tcforge.gemm import LaunchOptions

    with pytest.raises(TcforgeError, match="eager-only"):
        matmul(cuda(16, 32), cuda(32, 8), options=LaunchOptions(pdl=False))


def test_fake_matmul_refuses_a_cpu_operand_and_a_strided_one(mode) -> None:
    with pytest.raises(TcforgeError, match="move it to the GPU"):
        ops.matmul(torch.empty(16, 32, dtype=BF16), cuda(32, 8))
    with pytest.raises(TcforgeError, match="row-major or column-major"):
        ops.matmul(cuda(16, 64)[:, ::2], cuda(32, 8))


def test_fake_enc5_native_batch_gives_the_outputs(mode) -> None:
    ex, ey, frames = 40, 23, 3
    w = cuda(IMAGE_BYTES, dtype=torch.uint8)
    inp, tex = cuda(frames, 5 * ey * ex * 32, dtype=torch.uint8), cuda(frames, ey, ex, 4, dtype=F16)
    arena, surface = native_batch(w, inp, tex, ex, ey, ox=3, oy=1)
    assert arena.shape == inp.shape and arena.dtype == torch.uint8
    assert surface.shape == (frames, ey, ex, 4) and surface.dtype == torch.int16
    with pytest.raises(TcforgeError, match="inputs: expected uint8"):
        ops.enc5_native_batch(w, inp, tex, ex + 8, ey)
    with pytest.raises(TcforgeError, match="numerics"):
        ops.enc5_native_batch(w, inp, tex, ex, ey, numerics="fp8")
    with pytest.raises(TcforgeError, match="fresh outputs"):
        native_batch(w, inp, tex, ex, ey, arena=arena)


class TwoLayers(torch.nn.Module):
    def forward(self, x, w1, w2):
        h = torch.relu(matmul(x, w1))
        return matmul(h, w2, out_dtype=torch.float32)


def test_dynamo_traces_two_layers_into_one_graph_of_the_operator(mode) -> None:
    """strict export goes through dynamo and fails on any graph break."""
    ep = torch.export.export(TwoLayers(), (cuda(16, 256), cuda(256, 512), cuda(512, 128)), strict=True)
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == [torch.ops.tcforge.matmul.default, torch.ops.aten.relu.default,
                       torch.ops.tcforge.matmul.default]


def test_dynamo_reports_a_shape_error_at_trace_time(mode) -> None:
    with pytest.raises(Exception, match="shapes do not chain"):
        torch.export.export(TwoLayers(), (cuda(16, 256), cuda(256, 512), cuda(256, 128)), strict=True)


def test_dynamo_traces_a_frame_through_enc5(mode) -> None:
    class Frame(torch.nn.Module):
        def forward(self, w, inp, tex):
            arena, surface = native_batch(w, inp, tex, 40, 23)
            return arena.sum(), surface

    args = (cuda(IMAGE_BYTES, dtype=torch.uint8), cuda(1, 5 * 23 * 40 * 32, dtype=torch.uint8),
            cuda(1, 23, 40, 4, dtype=torch.int16))
    ep = torch.export.export(Frame(), args, strict=True)
    assert torch.ops.tcforge.enc5_native_batch.default in [n.target for n in ep.graph.nodes]


def test_autograd_is_not_built() -> None:
    a = torch.randn(16, 32, dtype=BF16, requires_grad=True)
    with pytest.raises(TcforgeError, match="no backward"):
        matmul(a, torch.randn(32, 8, dtype=BF16))
    assert torch._C._dispatch_has_kernel_for_dispatch_key("tcforge::matmul", "Autograd")
    with pytest.raises(TcforgeError, match="tcforge::matmul has no backward"):
        ops._no_backward("tcforge::matmul")(None, torch.ones(1))  # what the operator's backward is
