"""The eager path of `native_batch`: a prepared launch per everything the launch depends on, so that a repeated call
costs a key, a dictionary lookup, two empty outputs, five pointer patches and the driver's enqueue. Where the windows
leave tokens of the frame out (an origin that shifts them: `reference.frame_covered`), the outputs are first zeroed by
the driver's memset, as the reference assumes; a covered frame writes every byte, so its outputs are not zeroed.

The key holds the weights' kind (a WeightImage, or a tensor's dtype, shape, device and contiguity), the inputs' and
texture's shapes, dtypes, devices and contiguity, the extents and origin, the numerics, the requested form, the nvcc
options, `reorder` and the given outputs' (`arena`, `surface`) shapes, dtypes and devices. Calls on contiguous CUDA
tensors take it, with fresh outputs or given ones of the exact dtypes and shapes (uint8 arena, int16 surface: written
in place, never zeroed; checked against the inputs for overlap on every call), with no `debug` buffer; the first call
of a key runs the full path and remembers it.
"""

from __future__ import annotations

import threading
from typing import Any

from tcforge.layers.enc5.gpu import kernel
from tcforge.layers.enc5.reference import frame_covered
from tcforge.runtime import driver
from tcforge.runtime.streams import current_device, current_stream

MAX_ENTRIES = 256
_entries: dict[tuple, Entry] = {}


def _meta(t: Any) -> tuple:
    return (t.shape, t.dtype, t.get_device(), t.is_contiguous())


def key(torch: Any, weights: Any, inputs: Any, texture: Any, ex: int, ey: int, ox: int, oy: int, numerics: str,
        variant: Any, options: Any, reorder: bool, arena: Any = None, surface: Any = None) -> tuple | None:
    """The cache key of a call, or None where the eager path does not apply (non-tensors, CPU or non-contiguous
    tensors, given outputs not of the exact dtype and shape)."""
    if type(inputs) is not torch.Tensor or type(texture) is not torch.Tensor:
        return None
    outs = []
    for t, dtype, shape in ((arena, torch.uint8, (inputs.shape[0], inputs.shape[-1])),
                            (surface, torch.int16, (inputs.shape[0], ey, ex, 4))):
        if t is None:
            outs.append(None)
        elif type(t) is not torch.Tensor or t.dtype != dtype or tuple(t.shape) != shape:
            return None
        else:
            outs.append(_meta(t))
    w = _meta(weights) if isinstance(weights, torch.Tensor) else type(weights)
    k = (w, _meta(inputs), _meta(texture), ex, ey, ox, oy, numerics, variant, tuple(options), reorder, *outs)
    metas = [m for m in (w, k[1], k[2], *outs) if isinstance(m, tuple)]
    return k if all(m[2] >= 0 and m[3] for m in metas) else None


class Entry:
    """A remembered launch: its prepared kernel and parameter block, the outputs' shapes, the device, which outputs are
    made fresh and zeroed, and the bytes each buffer spans (for the overlap check of given outputs)."""

    __slots__ = ("prepared", "arena_shape", "surface_shape", "arena_bytes", "surface_bytes", "device", "torch_device",
                 "zero_arena", "zero_surface", "in_bytes", "lock")

    def __init__(self, prepared: kernel.Prepared, arena: Any, surface: Any, zero: bool, given: tuple[bool, bool],
                 in_bytes: tuple[int, int, int]) -> None:
        self.prepared = prepared
        self.arena_shape, self.surface_shape = tuple(arena.shape), tuple(surface.shape)
        self.arena_bytes, self.surface_bytes = arena.numel(), 2 * surface.numel()
        self.torch_device, self.device = arena.device, arena.get_device()
        # the launch leaves bytes unwritten: fresh outputs are zeroed first (given ones keep what they held)
        self.zero_arena, self.zero_surface = zero and not given[0], zero and not given[1]
        self.in_bytes = in_bytes  # inputs, texture, weights
        self.lock = threading.Lock()

    def __call__(self, torch: Any, weights_ptr: int, inputs: Any, texture: Any, stream: Any, arena: Any = None,
                 surface: Any = None) -> tuple[Any, Any]:
        out_a = torch.empty(self.arena_shape, dtype=torch.uint8, device=self.torch_device) if arena is None else arena
        out_s = torch.empty(self.surface_shape, dtype=torch.int16, device=self.torch_device) if surface is None \
            else surface
        if arena is not None or surface is not None:  # (the full path's check, on the sizes fixed by the key)
            ni, nt, nw = self.in_bytes
            kernel.check_apart((("arena", out_a.data_ptr(), self.arena_bytes),
                                ("surface", out_s.data_ptr(), self.surface_bytes)),
                               (("inputs", inputs.data_ptr(), ni), ("texture", texture.data_ptr(), nt),
                                ("weights", weights_ptr, nw)))
        s = current_stream(self.device) if stream is None else stream.cuda_stream
        with self.lock:
            prm = self.prepared.params
            prm.input, prm.weights, prm.texture = inputs.data_ptr(), weights_ptr, texture.data_ptr()
            prm.arena, prm.surface = out_a.data_ptr(), out_s.data_ptr()
            if current_device() == self.device:
                self._run(s, prm)
            else:  # the kernel belongs to its device's context
                with torch.cuda.device(self.device):
                    self._run(s, prm)
        return out_a, out_s

    def _run(self, stream: int, prm: kernel.Enc5Params) -> None:
        """Zero the fresh outputs where the launch leaves bytes unwritten (the reference assumes fresh zeros), then
        launch, in the stream's order."""
        if self.zero_arena:
            driver.memset_d8_async(prm.arena, 0, self.arena_bytes, stream)
        if self.zero_surface:
            driver.memset_d8_async(prm.surface, 0, self.surface_bytes, stream)
        self.prepared(stream)


def lookup(k: tuple | None) -> Entry | None:
    """The remembered launch of a key."""
    try:
        return None if k is None else _entries.get(k)
    except TypeError:  # an unhashable argument: the full path says what is wrong with it
        return None


def remember(k: tuple | None, form: kernel.Form, prm: kernel.Enc5Params, frames: int, device: int,
             options: tuple[str, ...], arena: Any, surface: Any, given: tuple[bool, bool] = (False, False),
             in_bytes: tuple[int, int, int] = (0, 0, 0)) -> None:
    """Keep the launch the full path just made, for the next call of this key (None: not eager-eligible); its fresh
    outputs (`given`: which were the caller's) are zeroed first where the launch leaves bytes unwritten
    (`frame_covered` of the parameter block); `in_bytes`: the inputs', texture's and weights' sizes."""
    try:
        if k is None or hash(k) is None:
            return
    except TypeError:
        return
    if len(_entries) >= MAX_ENTRIES:
        _entries.clear()
    zero = not frame_covered(int(prm.ex), int(prm.ey), int(prm.ox), int(prm.oy))
    _entries[k] = Entry(kernel.Prepared(form, prm, frames, device, options), arena, surface, zero, given, in_bytes)


def clear() -> None:
    """Forget every remembered launch (tests)."""
    _entries.clear()
