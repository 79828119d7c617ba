"""PyTorch operators: `torch.ops.tcforge.matmul`, `matmul_out` (C written into a given tensor), `enc5_native_batch`
and `enc5_native_batch_out` (its outputs written in place) — torch.library custom ops.

Each has a fake (meta) implementation that runs the same checks as the eager call on shapes, dtypes, strides and
devices, so `torch.compile` traces a model that calls them with no graph break, shape errors surface at trace time
(TcforgeError), and the compiled graph (CUDA graphs included: mode="reduce-overhead") calls the eager path.
`tcforge.gemm.matmul` and `tcforge.layers.enc5.gpu.native_batch` route here by themselves under torch.compile or
given fake tensors; eager calls skip the dispatcher (its ~10 us) and launch directly.

`tcforge::matmul` has a backward for 16-bit operands (dA = dC Bᵀ, dB = Aᵀ dC, each a tcforge GEMM in the operand's
dtype; a float32 dC is rounded to that dtype first); eager calls on tensors that require grad go through the operator.
`matmul`'s LaunchOptions travel as the operator's pdl, l2_promotion and cluster_policy arguments (the backward's two
GEMMs launch the same way); `matmul_out` has no autograd (as torch.mm with out=). Not supported through the
operators: a backward of fp8 `matmul` or of enc5 (TcforgeError), poisoned outputs, one of `native_batch`'s
outputs in place without the other, and its debug buffers, explicit streams and nvcc options.
A fake implementation cannot see a base address, so an operand that will be copied for alignment traces the same.
Importing this module imports torch and registers the operators (once per process).
"""

from typing import Any, Optional

import torch

from tcforge.errors import TcforgeError

NO_BACKWARD = ("{op} has no backward (autograd is not built): call it on tensors that do not require grad, or under "
               "torch.no_grad() / torch.inference_mode()")


# (the operators' annotations stay evaluated, in typing.Optional form: torch.library reads them to build the schema)


class _Layout:
    """What the shared input checks read of a tensor (shape, dtype, device, strides), without its base address,
    which a fake tensor lacks (taken as aligned)."""

    __slots__ = ("shape", "dtype", "device", "_t")

    def __init__(self, t: torch.Tensor) -> None:
        self.shape, self.dtype, self.device, self._t = t.shape, t.dtype, t.device, t

    def stride(self) -> tuple[int, ...]:
        return self._t.stride()

    def data_ptr(self) -> int:
        return 0


def _layout(t: Optional[torch.Tensor]) -> Optional[_Layout]:  # noqa: UP045
    return None if t is None else _Layout(t)


def _no_backward(op: str):
    def backward(ctx: Any, *grads: Any) -> Any:
        raise TcforgeError(NO_BACKWARD.format(op=op))

    return backward


# --- matmul ----------------------------------------------------------------------------------------------------------

@torch.library.custom_op("tcforge::matmul", mutates_args=())
def _matmul(a: torch.Tensor, b: torch.Tensor, out_dtype: Optional[torch.dtype] = None,  # noqa: UP045
            scale_a: Optional[torch.Tensor] = None, scale_b: Optional[torch.Tensor] = None,  # noqa: UP045
            variant: str = "auto", pdl: Optional[bool] = None, l2_promotion: Optional[int] = None,  # noqa: UP045
            cluster_policy: int = 0) -> torch.Tensor:
    from tcforge.gemm import eager

    return eager.matmul(a, b, out_dtype, scale_a, scale_b, variant, _options(pdl, l2_promotion, cluster_policy))


def _options(pdl: Optional[bool], l2_promotion: Optional[int], cluster_policy: int) -> Any:  # noqa: UP045
    """The operator's launch arguments as LaunchOptions (None: every default, pdl None meaning the default)."""
    if pdl is None and l2_promotion is None and not cluster_policy:
        return None
    from tcforge.gemm.plan import LaunchOptions

    chosen = {} if pdl is None else {"pdl": pdl}
    return LaunchOptions(l2_promotion=l2_promotion, cluster_policy=cluster_policy, **chosen)


def _traced_plan(a, b, out_dtype, scale_a, scale_b, variant, pdl, l2_promotion, cluster_policy, out=None) -> Any:
    """The matmul operators' trace-time checks (the eager call's, options included): the plan."""
    from tcforge.gemm.validate import plan_matmul

    _options(pdl, l2_promotion, cluster_policy)
    return plan_matmul(_Layout(a), _Layout(b), out_dtype=out_dtype, scale_a=_layout(scale_a),
                       scale_b=_layout(scale_b), variant=variant, out=_layout(out))


@_matmul.register_fake
def _matmul_fake(a, b, out_dtype=None, scale_a=None, scale_b=None, variant="auto", pdl=None, l2_promotion=None,
                 cluster_policy=0):
    from tcforge.gemm.api import torch_dtype

    plan = _traced_plan(a, b, out_dtype, scale_a, scale_b, variant, pdl, l2_promotion, cluster_policy)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch_dtype(plan.out_kind))


@torch.library.custom_op("tcforge::matmul_out", mutates_args=("out",))
def _matmul_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                out_dtype: Optional[torch.dtype] = None,  # noqa: UP045
                scale_a: Optional[torch.Tensor] = None, scale_b: Optional[torch.Tensor] = None,  # noqa: UP045
                variant: str = "auto", pdl: Optional[bool] = None, l2_promotion: Optional[int] = None,  # noqa: UP045
                cluster_policy: int = 0) -> None:
    from tcforge.gemm import eager

    eager.matmul(a, b, out_dtype, scale_a, scale_b, variant, _options(pdl, l2_promotion, cluster_policy), out)


@_matmul_out.register_fake
def _matmul_out_fake(a, b, out, out_dtype=None, scale_a=None, scale_b=None, variant="auto", pdl=None,
                     l2_promotion=None, cluster_policy=0):
    _traced_plan(a, b, out_dtype, scale_a, scale_b, variant, pdl, l2_promotion, cluster_policy, out)


def _matmul_setup(ctx: Any, inputs: tuple, output: torch.Tensor) -> None:
    a, b, _out_dtype, scale_a, scale_b, _variant, *launch = inputs
    ctx.fp8 = scale_a is not None or scale_b is not None
    ctx.launch = dict(zip(("pdl", "l2_promotion", "cluster_policy"), launch, strict=True))
    ctx.save_for_backward(a, b)


def _matmul_backward(ctx: Any, grad: torch.Tensor) -> tuple:
    """dA = dC Bᵀ and dB = Aᵀ dC, each one tcforge GEMM in the input's dtype (dC rounded to it first where C is
    float32; fp32 accumulation as in the forward), launched as the forward was. fp8 operands have no backward."""
    if ctx.fp8:
        raise TcforgeError(NO_BACKWARD.format(op="tcforge::matmul on fp8 operands"))
    a, b = ctx.saved_tensors
    launch = ctx.launch
    ga = gb = None
    if ctx.needs_input_grad[0]:
        ga = torch.ops.tcforge.matmul.default(grad.to(a.dtype).contiguous(), b.t(), a.dtype, None, None, "auto",
                                              **launch)
    if ctx.needs_input_grad[1]:
        gb = torch.ops.tcforge.matmul.default(a.t(), grad.to(b.dtype).contiguous(), b.dtype, None, None, "auto",
                                              **launch)
    return ga, gb, None, None, None, None, None, None, None


_matmul.register_autograd(_matmul_backward, setup_context=_matmul_setup)


def matmul(a: torch.Tensor, b: torch.Tensor, *, out_dtype: Optional[torch.dtype] = None,  # noqa: UP045
           scale_a: Optional[torch.Tensor] = None, scale_b: Optional[torch.Tensor] = None,  # noqa: UP045
           variant: Any = "auto", options: Any = None,
           out: Optional[torch.Tensor] = None) -> torch.Tensor:  # noqa: UP045
    """`tcforge.gemm.matmul` as the operator `torch.ops.tcforge.matmul` (a fresh contiguous (M, N) C; autograd for
    16-bit operands: `_matmul_backward`), or with `out` as `torch.ops.tcforge.matmul_out` (C written into `out`,
    which is returned; no autograd). `options` (LaunchOptions) travel as the operators' pdl, l2_promotion and
    cluster_policy arguments; poisoned outputs are for the eager call's tests only."""
    if isinstance(variant, int) and not isinstance(variant, bool):
        variant = f"r{variant}"  # a rung by number, as resolve_variant names it
    launch: tuple = ()
    if options is not None:
        if options.poison_output:
            raise TcforgeError("LaunchOptions(poison_output=True) is for eager calls without autograd (tests); the "
                               "tcforge operators take pdl, l2_promotion and cluster_policy")
        launch = (options.pdl, options.l2_promotion, options.cluster_policy)
    if out is None:
        return torch.ops.tcforge.matmul.default(a, b, out_dtype, scale_a, scale_b, variant, *launch)
    if not isinstance(out, torch.Tensor):
        raise TcforgeError(f"out must be a torch tensor on a CUDA device, got {type(out).__name__}")
    torch.ops.tcforge.matmul_out.default(a, b, out, out_dtype, scale_a, scale_b, variant, *launch)
    return out


# --- enc5 ------------------------------------------------------------------------------------------------------------

@torch.library.custom_op("tcforge::enc5_native_batch", mutates_args=())
def _enc5_native_batch(weights: torch.Tensor, inputs: torch.Tensor, texture: torch.Tensor, ex: int, ey: int,
                       ox: int = 0, oy: int = 0, numerics: str = "hopper",
                       variant: Optional[str] = None) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: UP045
    from tcforge.layers.enc5.gpu.api import native_batch

    return native_batch(weights, inputs, texture, ex, ey, ox=ox, oy=oy, numerics=numerics, variant=variant)


def _enc5_check(weights, inputs, texture, ex, ey, ox, oy, numerics) -> tuple[tuple, tuple]:
    """The enc5 operators' trace-time checks; the outputs' shapes (arena, surface). The extents and origin are
    specialised (int() of a symbolic one guards on its value): a frame's geometry is a constant of its kernel."""
    ex, ey, ox, oy = (int(v) for v in (ex, ey, ox, oy))
    from tcforge.layers.enc5.descriptor import check_extents
    from tcforge.layers.enc5.inputs import PLANES
    from tcforge.layers.enc5.layout import IMAGE_BYTES
    from tcforge.layers.enc5.reference import MODELS

    if numerics not in MODELS:
        raise TcforgeError(f"numerics must be one of {', '.join(MODELS)}, got {numerics!r}")
    check_extents(ex, ey)
    for name, v in (("ox", ox), ("oy", oy)):
        if not 0 <= v <= 0xFFFF:
            raise TcforgeError(f"{name} must be an integer in [0, 65535], got {v!r}")
    for name, t in (("weights", weights), ("inputs", inputs), ("texture", texture)):
        if t.device.type != "cuda":
            raise TcforgeError(f"{name} is on {t.device}; the enc5 kernel takes CUDA tensors")
    if weights.dtype != torch.uint8 or weights.numel() != IMAGE_BYTES:
        raise TcforgeError(f"weights: expected a CUDA uint8 tensor of {IMAGE_BYTES} bytes, got {weights.dtype} "
                           f"{tuple(weights.shape)} (tcforge.layers.enc5.gpu.device_weights uploads a WeightImage)")
    n_arena = PLANES * ey * ex * 32
    if inputs.dim() != 2 or inputs.shape[1] != n_arena or inputs.element_size() != 1:
        raise TcforgeError(f"inputs: expected uint8 (frames, {n_arena}) for {ex}x{ey}, got {inputs.dtype} "
                           f"{tuple(inputs.shape)}")
    frames = inputs.shape[0]
    if texture.element_size() != 2 or texture.numel() != frames * ey * ex * 4:
        raise TcforgeError(f"texture: expected 16-bit ({frames}, {ey}, {ex}, 4), got {texture.dtype} "
                           f"{tuple(texture.shape)}")
    return (frames, n_arena), (frames, ey, ex, 4)


@_enc5_native_batch.register_fake
def _enc5_native_batch_fake(weights, inputs, texture, ex, ey, ox=0, oy=0, numerics="hopper", variant=None):
    arena, surface = _enc5_check(weights, inputs, texture, ex, ey, ox, oy, numerics)
    return inputs.new_empty(arena, dtype=torch.uint8), inputs.new_empty(surface, dtype=torch.int16)


_enc5_native_batch.register_autograd(_no_backward("tcforge::enc5_native_batch"))


@torch.library.custom_op("tcforge::enc5_native_batch_out", mutates_args=("arena", "surface"))
def _enc5_native_batch_out(weights: torch.Tensor, inputs: torch.Tensor, texture: torch.Tensor, arena: torch.Tensor,
                           surface: torch.Tensor, ex: int, ey: int, ox: int = 0, oy: int = 0,
                           numerics: str = "hopper", variant: Optional[str] = None) -> None:  # noqa: UP045
    from tcforge.layers.enc5.gpu.api import native_batch

    native_batch(weights, inputs, texture, ex, ey, ox=ox, oy=oy, numerics=numerics, variant=variant, arena=arena,
                 surface=surface)


@_enc5_native_batch_out.register_fake
def _enc5_native_batch_out_fake(weights, inputs, texture, arena, surface, ex, ey, ox=0, oy=0, numerics="hopper",
                                variant=None):
    shapes = _enc5_check(weights, inputs, texture, ex, ey, ox, oy, numerics)
    for name, t, dtype, shape in (("arena", arena, torch.uint8, shapes[0]), ("surface", surface, torch.int16,
                                                                              shapes[1])):
        if t.dtype != dtype or tuple(t.shape) != shape or not t.is_contiguous() or t.device.type != "cuda":
            raise TcforgeError(f"{name}: expected a contiguous CUDA {dtype} tensor of shape {shape}, got "
                               f"{t.dtype} {tuple(t.shape)} on {t.device}")


def enc5_native_batch(weights: Any, inputs: torch.Tensor, texture: torch.Tensor, ex: int, ey: int, *, ox: int = 0,
                      oy: int = 0, numerics: str = "hopper", variant: Any = None, arena: Any = None,
                      surface: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
    """`native_batch` as the operator `torch.ops.tcforge.enc5_native_batch` (fresh outputs: arena uint8
    (F, 5·ey·ex·32), surface int16 bits (F, ey, ex, 4)) or, given both `arena` and `surface` (contiguous, of those
    dtypes and shapes), `torch.ops.tcforge.enc5_native_batch_out`, which writes them in place and returns them.
    `weights`: the image as a CUDA uint8 tensor (a WeightImage is uploaded here, outside any trace); `variant`: a
    kernel form's name or None (by window count)."""
    if not isinstance(weights, torch.Tensor):
        from tcforge.layers.enc5.gpu.api import device_weights

        weights = device_weights(weights)
    name = getattr(variant, "name", variant)
    if arena is None and surface is None:
        return torch.ops.tcforge.enc5_native_batch.default(weights, inputs, texture, ex, ey, ox, oy, numerics, name)
    if not isinstance(arena, torch.Tensor) or not isinstance(surface, torch.Tensor):
        raise TcforgeError("the enc5 operators take both arena and surface as tensors (written in place), or neither "
                           "(fresh outputs)")
    torch.ops.tcforge.enc5_native_batch_out.default(weights, inputs, texture, arena, surface, ex, ey, ox, oy,
                                                    numerics, name)
    return arena, surface
