"""A launch: the grid's CTAs in batches of whole clusters (all threads of a batch vectorised together; CTAs of one
cluster share their shared memory and cluster barriers, other CTAs interact only through global memory, which the
batches see in order), the symbol layout of shared and local variables, and the parameter block."""

from __future__ import annotations

import time

import numpy as np

from tcforge.ptx.emulate import control
from tcforge.ptx.emulate.machine import EmulationError, Machine
from tcforge.ptx.emulate.memory import GLOBAL_BASE, STACK_BYTES
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


def cluster_shape(entry, grid, cluster) -> tuple[tuple[int, int, int], bool]:
    """The launch's cluster shape and whether it is explicit: `cluster` when given, else the entry's
    `.reqnctapercluster`, else one CTA (an implicit cluster); the grid must be a whole number of clusters."""
    req = entry.directives.get("reqnctapercluster")
    explicit = cluster is not None or req is not None or "explicitcluster" in entry.directives
    shape = tuple(cluster) if cluster is not None else tuple(req or (1,))
    shape = shape + (1,) * (3 - len(shape))
    if req is not None and cluster is not None and tuple(req) + (1,) * (3 - len(req)) != shape:
        raise EmulationError(f"cluster {shape} differs from the kernel's .reqnctapercluster {tuple(req)}")
    size = shape[0] * shape[1] * shape[2]
    if any(c <= 0 for c in shape) or size > 16:
        raise EmulationError(f"cluster {shape}: 1 to 16 CTAs, each extent positive")
    if any(g % c for g, c in zip(grid, shape, strict=True)):
        raise EmulationError(f"grid {tuple(grid)} is not a whole number of clusters {shape}")
    return shape, explicit


def cluster_order(grid, shape) -> list[tuple[int, int, int]]:
    """The grid's CTAs cluster after cluster, each cluster's CTAs in rank order (x fastest)."""
    cx, cy, cz = shape
    return [(gx * cx + x, gy * cy + y, gz * cz + z)
            for gz in range(grid[2] // cz) for gy in range(grid[1] // cy) for gx in range(grid[0] // cx)
            for z in range(cz) for y in range(cy) for x in range(cx)]


def launch(module, entry, grid, block, mem, model: str, *, dynamic_shared: int = 0,
           batch_lanes: int = MAX_BATCH_LANES, cluster=None) -> dict:
    """Run every CTA of the grid; returns statistics (warp instructions, seconds, CTAs, batches)."""
    bx, by, bz = block
    threads = bx * by * bz
    if threads <= 0 or threads > 1024:
        raise ValueError(f"block {block}: 1..1024 threads per CTA")
    lpc = _align(threads, 32)
    shape, explicit = cluster_shape(entry, grid, cluster)
    csize = shape[0] * shape[1] * shape[2]
    ctas = cluster_order(grid, shape)
    per_batch = max(1, batch_lanes // lpc // csize) * csize
    symbols, shared_bytes, local_bytes = layout_symbols(module, entry, mem, dynamic_shared)
    stack_floor = _align(local_bytes, 16)
    if any(st.opcode.startswith("alloca") for f in reachable(module, entry) for st in f.statements):
        local_bytes = stack_floor + STACK_BYTES  # the stack above the local variables, its pointer at the top
    kparams = {p.name: p.offset for p in entry.params}
    t0, c0 = time.perf_counter(), time.process_time()
    warp_instr = 0
    batches = 0
    build_s = 0.0
    for i in range(0, len(ctas), per_batch):
        chunk = ctas[i:i + per_batch]
        n = len(chunk) * lpc
        mem.new_batch(len(chunk), lpc, shared_bytes, local_bytes, csize)
        ctx = Machine(file=module.file, n=n, lanes_per_cta=lpc, block=tuple(block), grid=tuple(grid), ctaids=chunk,
                      mem=mem, model=model, kernel_params=kparams, cluster=shape, explicit_cluster=explicit)
        ctx.stack_floor = min(stack_floor, mem.local_size)
        tb = time.perf_counter()
        program = build_program(module, entry, ctx, symbols)
        build_s += time.perf_counter() - tb
        with np.errstate(all="ignore"):
            stats = control.run(program, ctx)
        warp_instr += stats.warp_instructions
        batches += 1
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"warp_instructions": warp_instr, "seconds": seconds, "cpu_seconds": cpu, "build_seconds": build_s,
            "ctas": len(ctas), "cluster": shape,
            "batches": batches, "warp_instructions_per_second": warp_instr / seconds if seconds else 0.0,
            "warp_instructions_per_cpu_second": warp_instr / cpu if cpu else 0.0,
            "global_base": GLOBAL_BASE}
