"""The eager path of `matmul`: a prepared launch per everything its plan depends on, so that a repeated call costs a
key, a dictionary lookup, a fresh C, a few pointer patches and the driver's enqueue.

The key holds each operand's shape, strides, dtype, base alignment (data_ptr % 16: unaligned operands are copied) and
device, the output dtype, the scales' shapes, dtypes and devices, the variant and the launch options (None: the
defaults as the environment said at the key's first call; `clear()` after changing TCFORGE_PDL). A call whose key
was seen does no validation, planning, source hashing, compiling or file access: the entry's `api.Prepared` runs
on the call's tensors (`Prepared.run`: pointers patched, each tensor map pointed at the one remembered for its base
or re-based with cuTensorMapReplaceAddress) and enqueues on the current stream. Entries keep no tensor alive (each
call's C is returned). With `out=`, the key holds out's shape, strides, dtype, alignment and device too, and C is
written there: no allocation, and C's tensor map is the one remembered for that base.
"""

from __future__ import annotations

import threading
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.gemm.plan import LaunchOptions
from tcforge.runtime.streams import current_device, current_stream

MAX_ENTRIES = 1024  # distinct problems remembered; the cache is emptied when it grows past this

_entries: dict[tuple, Entry] = {}


class Entry:
    """One problem's prepared launch and the lock that keeps its patch-then-enqueue whole across threads; with `out=`,
    the bytes each operand and C span (fixed by the key's shapes and strides), for the per-call overlap check."""

    __slots__ = ("prepared", "device", "lock", "spans")

    def __init__(self, prepared: Any, spans: tuple[int, int, int] | None = None) -> None:
        self.prepared, self.device, self.lock = prepared, prepared.device_index, threading.Lock()
        self.spans = spans

    def __call__(self, a: Any, b: Any, scale_a: Any, scale_b: Any, out: Any = None) -> Any:
        if out is not None:
            check_apart(a, b, out, self.spans)  # type: ignore[arg-type]
        stream = current_stream(self.device)
        with self.lock:
            if current_device() == self.device:
                return self.prepared.run(a, b, scale_a, scale_b, stream, out)
            import torch

            with torch.cuda.device(self.device):  # the kernel belongs to its device's context
                return self.prepared.run(a, b, scale_a, scale_b, stream, out)


def span(t: Any) -> int:
    """The bytes from a tensor's first element to the end of its last (0 for an empty one)."""
    if any(d == 0 for d in t.shape):
        return 0
    return (sum((d - 1) * abs(st) for d, st in zip(t.shape, t.stride(), strict=True)) + 1) * t.element_size()


def check_apart(a: Any, b: Any, out: Any, spans: tuple[int, int, int]) -> None:
    """TcforgeError where `out` shares memory with an operand (the kernel would read what it writes)."""
    po, so = out.data_ptr(), spans[2]
    for name, t, st in (("a", a, spans[0]), ("b", b, spans[1])):
        p = t.data_ptr()
        if p < po + so and po < p + st:
            raise TcforgeError(f"out overlaps {name}: pass an output that shares no memory with the operands")


def _scale(s: Any) -> tuple:
    return s.shape, s.dtype, s.get_device()


def key(a: Any, b: Any, out_dtype: Any, scale_a: Any, scale_b: Any, variant: Any,
        options: LaunchOptions | None, out: Any = None) -> tuple:
    """Everything a matmul's plan and launch depend on, read from tensor-like operands (AttributeError else)."""
    return (a.shape, a.stride(), a.dtype, a.data_ptr() & 15, a.get_device(),
            b.shape, b.stride(), b.dtype, b.data_ptr() & 15, b.get_device(),
            out_dtype, None if scale_a is None else _scale(scale_a), None if scale_b is None else _scale(scale_b),
            variant, options,
            None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr() & 15, out.get_device()))


def matmul(a: Any, b: Any, out_dtype: Any, scale_a: Any, scale_b: Any, variant: Any,
           options: LaunchOptions | None, out: Any = None) -> Any:
    """`api.matmul` on tensors: the remembered launch of this problem, or validate, plan, build, launch and remember.
    With `out`, C is written there (and returned)."""
    try:
        k: tuple | None = key(a, b, out_dtype, scale_a, scale_b, variant, options, out)
        entry = _entries.get(k)
    except (AttributeError, TypeError):  # not tensors, or an unhashable argument: validation says what is wrong
        k = entry = None
    if entry is not None:
        return entry(a, b, scale_a, scale_b, out)
    from tcforge.gemm.api import prepare_plan
    from tcforge.gemm.validate import plan_matmul

    problem = plan_matmul(a, b, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b, variant=variant,
                          out=out)  # validate
    spans = None
    if out is not None:
        spans = (span(a), span(b), span(out))
        check_apart(a, b, out, spans)
    prepared = prepare_plan(problem, a, b, scale_a, scale_b, options=options)  # plan, build, kernel arguments
    if out is None:
        prepared()  # launch
        result = prepared.result()
        prepared.release()
    else:
        result = prepared.run(a, b, scale_a, scale_b, current_stream(problem.device_index), out)
    if k is not None:
        if len(_entries) >= MAX_ENTRIES:
            _entries.clear()
        _entries[k] = Entry(prepared, spans)
    return result


def clear() -> None:
    """Forget every remembered launch (tests; after changing what the environment's defaults say)."""
    _entries.clear()
