"""The eager path of `matmul`: a prepared launch per everything its plan depends on, so that a repeated call costs a
key, a dictionary lookup, a fresh C, a few pointer patches and the driver's enqueue.

The key holds each operand's shape, strides, dtype, base alignment (data_ptr % 16: unaligned operands are copied) and
device, the output dtype, the scales' shapes, dtypes and devices, the variant and the launch options (None: the
defaults as the environment said at the key's first call; `clear()` after changing TCFORGE_PDL). A call whose key
was seen does no validation, planning, source hashing, compiling or file access: the entry's `api.Prepared` runs
on the call's tensors (`Prepared.run`: pointers patched, each tensor map pointed at the one remembered for its base
or re-based with cuTensorMapReplaceAddress) and enqueues on the current stream. Entries keep no tensor alive (each
call's C is returned).
"""

from __future__ import annotations

import threading
from typing import Any

from tcforge.gemm.plan import LaunchOptions
from tcforge.runtime.streams import current_device, current_stream

MAX_ENTRIES = 1024  # distinct problems remembered; the cache is emptied when it grows past this

_entries: dict[tuple, Entry] = {}


class Entry:
    """One problem's prepared launch and the lock that keeps its patch-then-enqueue whole across threads."""

    __slots__ = ("prepared", "device", "lock")

    def __init__(self, prepared: Any) -> None:
        self.prepared, self.device, self.lock = prepared, prepared.device_index, threading.Lock()

    def __call__(self, a: Any, b: Any, scale_a: Any, scale_b: Any) -> Any:
        stream = current_stream(self.device)
        with self.lock:
            if current_device() == self.device:
                return self.prepared.run(a, b, scale_a, scale_b, stream)
            import torch

            with torch.cuda.device(self.device):  # the kernel belongs to its device's context
                return self.prepared.run(a, b, scale_a, scale_b, stream)


def _scale(s: Any) -> tuple:
    return s.shape, s.dtype, s.get_device()


def key(a: Any, b: Any, out_dtype: Any, scale_a: Any, scale_b: Any, variant: Any,
        options: LaunchOptions | None) -> tuple:
    """Everything a matmul's plan and launch depend on, read from tensor-like operands (AttributeError else)."""
    return (a.shape, a.stride(), a.dtype, a.data_ptr() & 15, a.get_device(),
            b.shape, b.stride(), b.dtype, b.data_ptr() & 15, b.get_device(),
            out_dtype, None if scale_a is None else _scale(scale_a), None if scale_b is None else _scale(scale_b),
            variant, options)


def matmul(a: Any, b: Any, out_dtype: Any, scale_a: Any, scale_b: Any, variant: Any,
           options: LaunchOptions | None) -> Any:
    """`api.matmul` on tensors: the remembered launch of this problem, or validate, plan, build, launch and remember."""
    try:
        k: tuple | None = key(a, b, out_dtype, scale_a, scale_b, variant, options)
        entry = _entries.get(k)
    except (AttributeError, TypeError):  # not tensors, or an unhashable argument: validation says what is wrong
        k = entry = None
    if entry is not None:
        return entry(a, b, scale_a, scale_b)
    from tcforge.gemm.api import prepare_plan
    from tcforge.gemm.validate import plan_matmul

    problem = plan_matmul(a, b, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b, variant=variant)  # validate
    prepared = prepare_plan(problem, a, b, scale_a, scale_b, options=options)  # plan, build, kernel arguments
    prepared()  # launch
    out = prepared.result()
    prepared.release()
    if k is not None:
        if len(_entries) >= MAX_ENTRIES:
            _entries.clear()
        _entries[k] = Entry(prepared)
    return out


def clear() -> None:
    """Forget every remembered launch (tests; after changing what the environment's defaults say)."""
    _entries.clear()
