"""The current CUDA stream of a device as the raw handle a launch takes, in a fraction of a microsecond.

`torch.cuda.current_stream(d).cuda_stream` builds a Stream object per call (about 1.5 us); torch's own raw getter,
which Triton's launcher also uses, returns the handle directly. Falls back to the public call where torch lacks it.
"""

from __future__ import annotations

from collections.abc import Callable

_raw: Callable[[int], int] | None = None
_device: Callable[[], int] | None = None


def _resolve() -> Callable[[int], int]:
    global _raw
    import torch

    getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    _raw = getter if getter is not None else (lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _raw


def current_stream(device: int) -> int:
    """The handle of the current torch stream of CUDA device `device` (what graph capture records on)."""
    return (_raw or _resolve())(device)


def current_device() -> int:
    """torch's current CUDA device index (the context a launch goes to)."""
    global _device
    if _device is None:
        import torch

        _device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    return _device()
