"""Compile-and-load in one step: a per-process cache of loaded modules keyed by cubin and context, and of resolved
kernels keyed by what was asked for (a repeated `get_function` does no hashing, file access or driver call)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from tcforge.runtime import driver
from tcforge.runtime.compile import CompiledModule, compile_cuda

_modules: dict[tuple[str, int], driver.Module] = {}
_functions: dict[tuple, tuple[driver.Function, CompiledModule]] = {}
_lock = threading.Lock()


def load(compiled: CompiledModule, device: int = 0) -> driver.Module:
    """Load a compiled cubin into the device's primary context (once per process)."""
    ctx = driver.ensure_context(device)
    key = (compiled.key, ctx)
    with _lock:
        mod = _modules.get(key)
        if mod is None:
            mod = driver.Module(compiled.cubin())
            _modules[key] = mod
    return mod


def get_function(
    source: str, name: str, *, arch: str = "sm_90a", options: Sequence[str] = (), tag: str = "kernel", device: int = 0
) -> tuple[driver.Function, CompiledModule]:
    """Compile (cached) `source`, load it and return the kernel `name` with its compile record; resolved once per
    thread (the first call on a thread also makes the device's primary context current there)."""
    key = (source, name, arch, tuple(options), tag, device, threading.get_ident())
    hit = _functions.get(key)
    if hit is None:
        compiled = compile_cuda(source, arch=arch, options=options, name=tag)
        hit = _functions[key] = (load(compiled, device).function(name), compiled)
    return hit
