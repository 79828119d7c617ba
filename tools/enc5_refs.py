"""Reference frames of the enc5 device check: synthetic cases, their CPU reference outputs with poisoned initial
buffers (full, or as digests for 4K frames), stored as npz files that travel with the device call (`carry`).

Usage (no GPU needed): python3 -m tools.enc5_device_check refs [--refs .enc5refs] (this module's `make_refs`), then
python3 -m tools.enc5_device_check compact [--refs .enc5refs] [--keep 10] to shrink the folder (`compact_refs`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ARENA_POISON = 0xA5
SURFACE_POISON = 0xA5A5
DEBUG_PHASES = (9, 10, 11, 12, 20, 21, 22, 60, 61)


def make_case(ex: int, ey: int, ox: int, oy: int, wseed: int, iseed: int):
    """Synthetic weights and inputs of one case (deterministic from the seeds)."""
    from tcforge.layers.enc5 import Inputs, WeightImage

    return WeightImage.synthetic(wseed), Inputs.synthetic((ex, ey), iseed, ox=ox, oy=oy)


def debug_block(stages: dict, window: int) -> np.ndarray:
    """One window's reference stages in the kernel's debug layout (kernels/enc5_window.cuh, DBG_* offsets)."""
    from tcforge.layers.enc5.gpu.kernel import debug_layout

    lay = debug_layout()
    out = np.zeros(lay["total"], dtype=np.uint16)
    for name, (phase, per_warp, off, shape) in lay["parts"].items():
        del name
        if per_warp == "head":
            for z in range(8):
                d = stages[(phase, window, z)]["D"]
                n = d.size
                out[off + z * n : off + (z + 1) * n] = d.reshape(-1)
        else:
            rows = np.concatenate([stages[(phase, window, z)]["D"] for z in range(4)], axis=0)
            if rows.shape != shape:
                raise ValueError(f"stage {phase}: expected rows of shape {shape}, got {rows.shape}")
            out[off : off + rows.size] = rows.reshape(-1)
    return out


def untouched_pixels(surface: np.ndarray) -> int:
    """Surface pixels that still hold the poison in all four channels (the guarded stores skipped them)."""
    return int(np.count_nonzero(np.all(surface == SURFACE_POISON, axis=-1)))


def poisoned_buffers(ex: int, ey: int) -> tuple[np.ndarray, np.ndarray]:
    """The initial arena (uint8) and surface (uint16) of a checked run: every byte / value poisoned."""
    return np.full(5 * ey * ex * 32, ARENA_POISON, np.uint8), np.full((ey, ex, 4), SURFACE_POISON, np.uint16)


def poisoned_gpu_buffers(ex: int, ey: int):
    """The same as one-frame CUDA tensors in native_batch's layout (uint8 arena, int16 surface bits)."""
    import torch

    arena, surface = poisoned_buffers(ex, ey)
    return (torch.from_numpy(arena).cuda().reshape(1, -1),
            torch.from_numpy(surface.view(np.int16)).cuda().reshape(1, ey, ex, 4))


def digest_meta(arena: np.ndarray, surface: np.ndarray) -> dict:
    """What a digest-only reference frame stores instead of its outputs."""
    return dict(arena_sha256=digest(arena), surface_sha256=digest(surface), arena_bytes=int(arena.size),
                surface_values=int(surface.size), untouched_px=untouched_pixels(surface))


def digest(arr: np.ndarray) -> str:
    """sha256 of an array's bytes (C order): how 4K reference frames travel (1.3 MB each would not fit the carry)."""
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def reference_outputs(ex: int, ey: int, ox: int, oy: int, numerics: str, wseed: int, iseed: int,
                      stages: bool = False):
    """The CPU reference of one case with poisoned initial buffers (the reference's Result)."""
    from tcforge.layers.enc5 import reference

    w, inp = make_case(ex, ey, ox, oy, wseed, iseed)
    arena0, surf0 = poisoned_buffers(ex, ey)
    return reference(w, inp, numerics=numerics, arena=arena0, surface=surf0, stages=DEBUG_PHASES if stages else ())


def reference_case(path: str, ex: int, ey: int, ox: int, oy: int, numerics: str, wseed: int, iseed: int,
                   stages: bool, digest_only: bool = False) -> None:
    """Run the CPU reference on one case and save it (npz): the outputs, or only their digests and the count of
    pixels left untouched (`digest_only`; a mismatch is then recounted byte by byte on the device's CPU)."""
    r = reference_outputs(ex, ey, ox, oy, numerics, wseed, iseed, stages)
    extra = {}
    if stages:
        extra["debug"] = np.stack([debug_block(r.stages, win) for win in r.windows])
    meta = dict(ex=ex, ey=ey, ox=ox, oy=oy, numerics=numerics, wseed=wseed, iseed=iseed)
    if digest_only:
        meta.update(digest_meta(r.arena, r.surface))
        np.savez_compressed(path, meta=json.dumps(meta))
        return
    np.savez_compressed(path, arena=r.arena, surface=r.surface, meta=json.dumps(meta), **extra)


def reference_jobs(n_hopper: int, n_ada: int, n_big: int) -> list[tuple]:
    """The reference cases of a validation run: (tag, ex, ey, ox, oy, numerics, wseed, iseed, stages); fresh seeds.
    4K frames (C hopper, AdaC ada) are stored as digests beyond the first four (full) C frames."""
    jobs: list[tuple] = [("dbg", 40, 23, 0, 0, "hopper", 7, 8, True)]
    for i in range(n_hopper):
        jobs.append(("A", 40, 23, 0, 0, "hopper", 100 + i, 200 + i, False))
        jobs.append(("B", 37, 21, 3, 5, "hopper", 300 + i, 400 + i, False))
    for i in range(n_ada):
        jobs.append(("AdaA", 40, 23, 0, 0, "ada", 500 + i, 600 + i, False))
        jobs.append(("AdaB", 37, 21, 3, 5, "ada", 700 + i, 800 + i, False))
    for i in range(n_big):
        jobs.append(("C", 120, 68, 0, 0, "hopper", 900 + i, 1900 + i, False))
        jobs.append(("AdaC", 120, 68, 0, 0, "ada", 2900 + i, 3900 + i, False))
    return jobs


def _run_job(args: tuple) -> str:
    out_dir, (tag, ex, ey, ox, oy, num, ws, iseed, stages) = args
    path = Path(out_dir) / f"{tag}_{ws}_{iseed}.npz"
    if not path.exists():
        big = ex * ey > 40 * 23
        small_c = tag == "C" and ws < 904
        reference_case(str(path) + ".part.npz", ex, ey, ox, oy, num, ws, iseed, stages,
                       digest_only=big and not small_c)
        Path(str(path) + ".part.npz").rename(path)
    return path.name


def make_refs(out_dir: str, n_hopper: int, n_ada: int, n_big: int, jobs: int) -> int:
    """Compute the reference frames in parallel processes (skips existing files)."""
    from multiprocessing import Pool

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    todo = [(out_dir, j) for j in reference_jobs(n_hopper, n_ada, n_big)]
    with Pool(jobs) as pool:
        for name in pool.imap_unordered(_run_job, todo):
            print(name, flush=True)
    return 0


def compact_refs(refs: Path, keep: int = 10) -> int:
    """Keep the first `keep` full frames of each tag and turn the others into digest-only frames (for the carry)."""
    seen: dict[str, int] = {}
    changed = 0
    for f in sorted(Path(refs).glob("*.npz")):
        tag = f.name.split("_")[0]
        if tag == "dbg" or ".part" in f.name:
            continue
        z = np.load(f)
        if "arena" not in z.files:
            continue
        seen[tag] = seen.get(tag, 0) + 1
        if seen[tag] <= keep:
            continue
        meta = json.loads(str(z["meta"]))
        arena, surface = z["arena"], z["surface"]
        meta.update(digest_meta(arena, surface))
        tmp = f.with_name(f.name + ".part.npz")
        np.savez_compressed(tmp, meta=json.dumps(meta))
        tmp.rename(f)
        changed += 1
    print(f"compacted {changed} frames; full frames kept per tag: {seen}")
    return 0


def log(msg: str, fh=None) -> None:
    """Print and append to the log file."""
    print(msg, flush=True)
    if fh is not None:
        fh.write(msg + "\n")
        fh.flush()


def _load_ref(path: Path):
    """One stored reference frame and its regenerated inputs (numpy), or the reason it cannot be read. Digest-only
    frames (4K) come back with arena/surface None."""
    try:
        z = np.load(path)
        meta = json.loads(str(z["meta"]))
        arena = z["arena"] if "arena" in z.files else None
        surface = z["surface"] if "surface" in z.files else None
    except Exception as exc:
        return repr(exc)
    w, inp = make_case(meta["ex"], meta["ey"], meta["ox"], meta["oy"], meta["wseed"], meta["iseed"])
    return meta, np.array(w.array), inp.input, np.ascontiguousarray(inp.texture), arena, surface

