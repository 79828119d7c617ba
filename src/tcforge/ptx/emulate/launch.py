"""A launch: the grid's CTAs in batches (all threads of a batch vectorised together; CTAs do not interact except
through global memory, which the batches see in order), the symbol layout of shared and local variables, and the
parameter block."""

from __future__ import annotations

import time

import numpy as np

from tcforge.ptx.emulate import control
from tcforge.ptx.emulate.machine import Machine
from tcforge.ptx.emulate.memory import GLOBAL_BASE
from tcforge.ptx.emulate.program import build_program, reachable

MAX_BATCH_LANES = 4096  # lanes per batch: bounds the register file (one array per register written)


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def layout_symbols(module, entry, mem, dynamic_shared: int):
    """(per-function symbol map builder, shared bytes per CTA, local bytes per thread). Shared variables of the
    module and of every reachable function share one per-CTA window; local variables one per-thread window."""
    fns = reachable(module, entry)
    shared: dict[str, int] = {}
    local: dict[str, dict[str, int]] = {}
    sh = 0
    externs = []
    for d in module.decls + [d for f in fns for d in f.decls]:
        if d.space == "shared":
            if d.extern or d.size is None:
                externs.append(d)
                continue
            sh = _align(sh, d.align or 16)
            shared[d.name] = sh
            sh += d.size
    if externs:
        sh = _align(sh, 16)
        for d in externs:
            shared[d.name] = sh
        sh += dynamic_shared
    lo = 0
    for f in fns:
        local[f.name] = {}
        for d in f.decls:
            if d.space == "local":
                lo = _align(lo, d.align or 16)
                local[f.name][d.name] = lo
                lo += d.size or 0
    glob = {d.name: mem.address(d.name) for d in module.decls if d.space in ("global", "const") and d.name in mem.names}
    kparams = {p.name: p.offset for p in entry.params}

    def symbols(fn) -> dict[str, int]:
        out = dict(glob)
        out.update(shared)
        out.update(local.get(fn.name, {}))
        if fn is entry:
            out.update(kparams)
        return out
    return symbols, sh, lo


def launch(module, entry, grid, block, mem, model: str, *, dynamic_shared: int = 0,
           batch_lanes: int = MAX_BATCH_LANES) -> dict:
    """Run every CTA of the grid; returns statistics (warp instructions, seconds, CTAs, batches)."""
    bx, by, bz = block
    threads = bx * by * bz
    if threads <= 0 or threads > 1024:
        raise ValueError(f"block {block}: 1..1024 threads per CTA")
    lpc = _align(threads, 32)
    ctas = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    per_batch = max(1, batch_lanes // lpc)
    symbols, shared_bytes, local_bytes = layout_symbols(module, entry, mem, dynamic_shared)
    kparams = {p.name: p.offset for p in entry.params}
    t0, c0 = time.perf_counter(), time.process_time()
    warp_instr = 0
    batches = 0
    build_s = 0.0
    for i in range(0, len(ctas), per_batch):
        chunk = ctas[i:i + per_batch]
        n = len(chunk) * lpc
        mem.new_batch(len(chunk), lpc, shared_bytes, local_bytes)
        ctx = Machine(file=module.file, n=n, lanes_per_cta=lpc, block=tuple(block), grid=tuple(grid), ctaids=chunk,
                      mem=mem, model=model, kernel_params=kparams)
        tb = time.perf_counter()
        program = build_program(module, entry, ctx, symbols)
        build_s += time.perf_counter() - tb
        with np.errstate(all="ignore"):
            stats = control.run(program, ctx)
        warp_instr += stats.warp_instructions
        batches += 1
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"warp_instructions": warp_instr, "seconds": seconds, "cpu_seconds": cpu, "build_seconds": build_s,
            "ctas": len(ctas),
            "batches": batches, "warp_instructions_per_second": warp_instr / seconds if seconds else 0.0,
            "warp_instructions_per_cpu_second": warp_instr / cpu if cpu else 0.0,
            "global_base": GLOBAL_BASE}
