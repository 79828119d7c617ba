"""`native(weights, inputs, numerics=...)`: the fused enc5 kernel on torch CUDA tensors, plus a batched entry point.

Outputs are bit-identical to `enc5.reference` (same arena bytes, same surface f16 bits) under the default
assumptions, which are the ones the kernel implements; other choices raise TcforgeError.
"""

from __future__ import annotations

import hashlib
import sys
import weakref
from functools import lru_cache

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.assumptions import Assumptions
from tcforge.layers.enc5.descriptor import check_extents, launch_geometry
from tcforge.layers.enc5.gpu import eager, kernel
from tcforge.layers.enc5.gpu.kernel import debug_layout
from tcforge.layers.enc5.inputs import PLANES, Inputs
from tcforge.layers.enc5.layout import IMAGE_BYTES
from tcforge.layers.enc5.reference import MODELS, Result, frame_covered
from tcforge.layers.enc5.weights import WeightImage

_weights_cache: dict[tuple[str, int], object] = {}
_weights_by_object: dict[int, tuple[weakref.ref, int, object]] = {}  # id -> (the image, device, its upload)


def available() -> bool:
    """True when torch sees an sm_90 GPU (the kernel is built for sm_90a) and nvcc can build it."""
    try:
        import torch

        from tcforge.runtime.compile import _nvcc

        _nvcc()
        return bool(torch.cuda.is_available()) and torch.cuda.get_device_capability() == (9, 0)
    except Exception:
        return False


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise TcforgeError("the native enc5 kernel needs PyTorch with CUDA") from exc
    if not torch.cuda.is_available():
        raise TcforgeError("the native enc5 kernel needs a CUDA GPU (torch.cuda.is_available() is False)")
    return torch


def _check_numerics(numerics: str) -> str:
    if numerics not in MODELS:
        raise TcforgeError(f"numerics must be one of {', '.join(MODELS)}, got {numerics!r}")
    return kernel.NUMERICS_FORM[numerics]


def _check_assumptions(assumptions: Assumptions | None) -> None:
    if assumptions is None:
        return
    if not isinstance(assumptions, Assumptions):
        raise TcforgeError(f"assumptions: expected an Assumptions, got {type(assumptions).__name__}")
    other = {k: v for k, v in assumptions.non_default().items() if k != "image_size"}
    if other:
        raise TcforgeError(f"the native enc5 kernel implements the default assumptions only; got {other} "
                           "(use the CPU reference for other choices)")


def device_weights(weights: object):
    """The weight image as a uint8 CUDA tensor (WeightImage uploads are cached by content)."""
    torch = _torch()
    if isinstance(weights, WeightImage):  # immutable (its bytes are a read-only copy): remembered per object
        device = torch.cuda.current_device()
        seen = _weights_by_object.get(id(weights))
        if seen is not None and seen[0]() is weights and seen[1] == device:
            return seen[2]
        raw = weights.array
        key = (hashlib.sha1(raw.tobytes()).hexdigest(), device)
        t = _weights_cache.get(key)
        if t is None:
            if len(_weights_cache) > 8:
                _weights_cache.clear()
            t = torch.from_numpy(np.array(raw)).cuda()
            _weights_cache[key] = t
        if len(_weights_by_object) > 64:
            _weights_by_object.clear()
        _weights_by_object[id(weights)] = (weakref.ref(weights), device, t)
        return t
    if isinstance(weights, torch.Tensor):
        if weights.dtype != torch.uint8 or weights.numel() != IMAGE_BYTES or not weights.is_cuda:
            raise TcforgeError(f"weights: expected a CUDA uint8 tensor of {IMAGE_BYTES} bytes, got "
                               f"{weights.dtype} {tuple(weights.shape)} on {weights.device}")
        return weights.contiguous()
    raise TcforgeError(f"weights: expected a WeightImage or a CUDA uint8 tensor, got {type(weights).__name__}")


def _as_device(x: object, name: str, dtype, shape: tuple[int, ...]):
    """A contiguous CUDA tensor of `dtype` and `shape` from a numpy array or a tensor (bits kept)."""
    torch = _torch()
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(np.ascontiguousarray(x).view(_np_of(dtype))).cuda()
    if not isinstance(x, torch.Tensor):
        raise TcforgeError(f"{name}: expected a numpy array or a CUDA tensor, got {type(x).__name__}")
    if x.element_size() != torch.empty(0, dtype=dtype).element_size() or x.numel() != int(np.prod(shape)):
        raise TcforgeError(f"{name}: expected {int(np.prod(shape))} elements of {dtype} (shape {shape}), "
                           f"got {x.dtype} {tuple(x.shape)}")
    if not x.is_cuda:
        x = x.cuda()
    return x.contiguous().view(dtype).reshape(shape)


def _np_of(dtype) -> type:
    import torch

    return {torch.uint8: np.uint8, torch.int16: np.int16}[dtype]


# Kernel form by the launch's window count, relative to the GPU's SM count (H200: 132). Measured on the H200
# (docs/enc5.md, same runs): up to one window per SM the 2-CTA-cluster form is fastest (latency-bound: 720p
# x1 19.6-20.1 us vs 25.0 one-CTA); up to ~2 windows per SM the 3-CTAs-per-SM build of it (4K x1 = 135 windows, one
# wave: 39.1-39.6 us vs 46.3-47.1 split, 47.7-48.3 one-CTA; 4K x2 = 270 windows: 68.3-69.7 vs 71.2-72.2 one-CTA);
# above, the one-CTA form (throughput-bound: batches of 64 frames 3-4 % faster than the 3-CTA form).
SPLIT_MAX_WINDOWS_PER_SM = 1.0
OCC3_MAX_WINDOWS_PER_SM = 2.05
H200_SMS = 132


@lru_cache(maxsize=8)
def _sm_count_of(index: int) -> int:
    return _torch().cuda.get_device_properties(index).multi_processor_count


def _sm_count(device) -> int:
    """SMs of a CUDA device (cached: the launch path asks every call)."""
    return _sm_count_of(device.index if device.index is not None else _torch().cuda.current_device())


def choose_hopper_variant(windows: int, sms: int = H200_SMS) -> str:
    """The fastest hopper kernel form for a launch of `windows` windows (all frames together) on `sms` SMs."""
    if windows <= SPLIT_MAX_WINDOWS_PER_SM * sms:
        return "hopper_split"
    if windows <= OCC3_MAX_WINDOWS_PER_SM * sms:
        return "hopper_split_occ3"
    return "hopper"


def _check_no_aliasing(outputs: dict, inputs: dict) -> None:
    """`kernel.check_apart` of tensors by name."""
    def spans(named: dict) -> tuple[tuple[str, int, int], ...]:
        return tuple((n, t.data_ptr(), t.numel() * t.element_size()) for n, t in named.items())

    kernel.check_apart(spans(outputs), spans(inputs))


def native_batch(weights: object, inputs, texture, ex: int, ey: int, *, ox: int = 0, oy: int = 0,
                 numerics: str = "hopper", arena=None, surface=None, debug=None, stream=None,
                 variant: str | kernel.Form | None = None, options: tuple[str, ...] = (), reorder: bool = True):
    """Run enc5 on F frames at once (one launch, grid z = F) on CUDA tensors.

    inputs: uint8 (F, 5·ey·ex·32) input arenas; texture: 16-bit (F, ey, ex, 4) RGBA16F texels (float16 or int16
    bits). Returns (arena uint8 (F, 5·ey·ex·32), surface int16 bits (F, ey, ex, 4)); `arena`/`surface` given: written in
    place (their untouched bytes stay), else fresh tensors (zeroed first where the windows leave tokens out, as the
    reference assumes; `frame_covered`). `debug` is a CUDA buffer for the
    dump of a tool form of a source checkout (`variant` "hopper_debug", the default with a debug buffer, or a timing
    form: "hopper_timing", "hopper_split_timing", "hopper_split_occ3_timing"); `options` are extra nvcc flags.
    `variant` names the kernel form (`kernel.FORMS`) for numerics="hopper": "hopper" (one CTA per window),
    "hopper_split" (a 2-CTA cluster per window) or "hopper_split_occ3" (the same with three CTAs per SM); default:
    `choose_hopper_variant` by the launch's window count and the GPU's SM count. All forms give the same bits.
    `reorder` (split forms, one frame): dispatch the windows whose warps idle (rows outside the frame) onto the SMs
    that hold the most CTAs (`kernel.dispatch_swaps`); False keeps launch order (the same bits either way; only the
    3-CTA build reads the order).

    A repeated call on contiguous CUDA tensors of the same shapes, with fresh outputs or given ones (uint8 arena,
    int16 surface of the exact shapes) and no `debug`, reuses the launch prepared for them (`eager`). Under
    `torch.compile`, or given fake tensors, the call is the PyTorch operator `torch.ops.tcforge.enc5_native_batch`
    (`enc5_native_batch_out` given both outputs; `tcforge.ops`; weights as a tensor). No autograd.
    """
    mod, k = sys.modules.get("torch"), None
    if mod is not None and isinstance(inputs, mod.Tensor):
        if mod.compiler.is_compiling() or type(inputs) is not mod.Tensor:
            from tcforge import ops

            if (arena is None) != (surface is None) or debug is not None or stream is not None or options:
                raise TcforgeError("the enc5 operators (torch.compile, fake tensors) run on the current stream with "
                                   "fresh outputs or both given: pass both arena and surface or neither, and no "
                                   "debug, stream or options")
            return ops.enc5_native_batch(weights, inputs, texture, ex, ey, ox=ox, oy=oy, numerics=numerics,
                                         variant=variant, arena=arena, surface=surface)
        if debug is None:
            k = eager.key(mod, weights, inputs, texture, ex, ey, ox, oy, numerics, variant, options, reorder, arena,
                          surface)
            entry = eager.lookup(k)
            if entry is not None:
                w = weights.data_ptr() if isinstance(weights, mod.Tensor) else device_weights(weights).data_ptr()
                return entry(mod, w, inputs, texture, stream, arena, surface)
    torch = _torch()
    requested, variant = variant, _check_numerics(numerics)
    check_extents(ex, ey)
    for name, v in (("ox", ox), ("oy", oy)):
        if not isinstance(v, int) or not 0 <= v <= 0xFFFF:
            raise TcforgeError(f"{name} must be an integer in [0, 65535], got {v!r}")
    if not isinstance(inputs, torch.Tensor) or inputs.dim() != 2:
        raise TcforgeError("inputs: expected a uint8 CUDA tensor of shape (frames, 5·ey·ex·32)")
    frames = inputs.shape[0]
    n_arena = PLANES * ey * ex * 32
    inp = _as_device(inputs, "inputs", torch.uint8, (frames, n_arena))
    tex = _as_device(texture, "texture", torch.int16, (frames, ey, ex, 4))
    w = device_weights(weights)
    fresh = torch.empty if frame_covered(ex, ey, ox, oy) else torch.zeros  # zeros where windows leave tokens out
    out_a = fresh((frames, n_arena), dtype=torch.uint8, device=inp.device) if arena is None else \
        _as_device(arena, "arena", torch.uint8, (frames, n_arena))
    out_s = fresh((frames, ey, ex, 4), dtype=torch.int16, device=inp.device) if surface is None else \
        _as_device(surface, "surface", torch.int16, (frames, ey, ex, 4))
    if debug is not None:
        if numerics != "hopper":
            raise TcforgeError("debug dumps exist for numerics='hopper' only")
        variant = requested or "hopper_debug"
        if kernel.form(variant).name in kernel.FORMS:
            raise TcforgeError("a debug buffer needs a tool form of a source checkout (tools/enc5_kernels/: "
                               f"{', '.join(kernel.tool_forms())}), got {kernel.form(variant).name!r}")
    elif requested is not None:
        allowed = {"hopper": ("hopper", "hopper_split", "hopper_split_occ3"), "ada": ("ada",)}[numerics]
        if (requested.name if isinstance(requested, kernel.Form) else requested) not in allowed:
            raise TcforgeError(f"variant for numerics={numerics!r} must be one of {', '.join(allowed)}, "
                               f"got {requested!r}")
        variant = requested
    elif numerics == "hopper":
        variant = choose_hopper_variant(kernel.Geometry(ex, ey, frames).windows * frames, _sm_count(inp.device))
    order: tuple = ()
    form = kernel.form(variant)
    if reorder and frames == 1 and form.name.startswith("hopper_split_occ3"):  # the build that skips idle warps
        order = kernel.dispatch_swaps(ex, ey, oy, _sm_count(inp.device), 3)
    _check_no_aliasing({"arena": out_a, "surface": out_s}, {"inputs": inp, "texture": tex, "weights": w})
    prm = kernel.params(ex, ey, ox, oy, input_ptr=inp.data_ptr(), weights_ptr=w.data_ptr(),
                        arena_ptr=out_a.data_ptr(), texture_ptr=tex.data_ptr(), surface_ptr=out_s.data_ptr(),
                        debug_ptr=0 if debug is None else debug.data_ptr(), order=order)
    s = torch.cuda.current_stream() if stream is None else stream
    kernel.launch(form, prm, frames, stream=s.cuda_stream, device=inp.device.index or 0, options=tuple(options))
    eager.remember(k, form, prm, frames, inp.device.index or 0, tuple(options), out_a, out_s,
                   given=(arena is not None, surface is not None), in_bytes=(inp.numel(), 2 * tex.numel(), w.numel()))
    return out_a, out_s


def debug_buffer(ex: int, ey: int, frames: int = 1):
    """A zeroed int16 CUDA buffer for the hopper debug dump: (frames, windows, block) f16 bits."""
    torch = _torch()
    geo = kernel.Geometry(ex, ey, frames)
    return torch.zeros((frames, geo.windows, debug_layout()["total"]), dtype=torch.int16, device="cuda")


def native(weights: object, inputs: Inputs, numerics: str = "hopper", *, assumptions: Assumptions | None = None,
           arena=None, surface=None) -> Result:
    """enc5 on the GPU: a `Result` whose `.arena` (uint8, flat) and `.surface` (int16 f16 bits, (ey, ex, 4)) are CUDA
    tensors, bit-identical to `reference(weights, inputs, numerics=numerics)`. No stages or statistics."""
    _check_numerics(numerics)
    _check_assumptions(assumptions)
    if not isinstance(inputs, Inputs):
        raise TcforgeError(f"inputs: expected an Inputs, got {type(inputs).__name__}")
    torch = _torch()
    ex, ey = inputs.ex, inputs.ey
    inp = torch.from_numpy(inputs.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(np.ascontiguousarray(inputs.texture).view(np.int16)).cuda().reshape(1, ey, ex, 4)
    a0 = None if arena is None else _as_device(arena, "arena", torch.uint8, (1, PLANES * ey * ex * 32))
    s0 = None if surface is None else _as_device(surface, "surface", torch.int16, (1, ey, ex, 4))
    out_a, out_s = native_batch(weights, inp, tex, ex, ey, ox=inputs.ox, oy=inputs.oy, numerics=numerics,
                                arena=a0, surface=s0)
    geo = launch_geometry(ex, ey, inputs.ox, inputs.oy)
    return Result(out_a.reshape(-1), out_s.reshape(ey, ex, 4), {}, {}, geo, tuple(range(geo.windows)), numerics,
                  assumptions or Assumptions(), (inputs.ox, inputs.oy))


def run(weights: WeightImage, inputs: Inputs, numerics: str = "hopper",
        assumptions: Assumptions | None = None) -> Result:
    """`native` with the outputs copied back as numpy arrays (uint8 arena, uint16 surface): what the CLI writes."""
    r = native(weights, inputs, numerics, assumptions=assumptions)
    r.arena = r.arena.cpu().numpy()
    r.surface = r.surface.cpu().numpy().view(np.uint16)
    return r
