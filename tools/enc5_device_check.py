"""The one script the enc5 native kernel's device check runs: compare the kernel bit for bit with the CPU reference.

Locally (no GPU): `refs` precomputes CPU reference frames (poisoned initial buffers) into a folder that travels with
the device call (`carry`). On the device: builds the kernel, runs every stored case, counts mismatching bytes, checks
untouched pixels, optionally compares debug stages, then times the kernel and prints a compact table last.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
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
    """One window's reference stages in the kernel's debug layout (see native/enc5.cu, DBG_* offsets)."""
    from tcforge.layers.enc5.gpu.layout import debug_layout

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


# ------------------------------------------------------------------------------------------------------------------
# device side
# ------------------------------------------------------------------------------------------------------------------
def log(msg: str, fh=None) -> None:
    """Print and append to the log file."""
    print(msg, flush=True)
    if fh is not None:
        fh.write(msg + "\n")
        fh.flush()


def build(fh) -> dict:
    """Compile the three variants (disk cache), report ptxas statistics and times."""
    from tcforge.layers.enc5.gpu import kernel

    out = {}
    for name, (fname, _) in kernel.VARIANTS.items():
        t0 = time.perf_counter()
        mod = kernel.compile_variant(name)
        st = mod.stats.get(fname)
        out[name] = dict(seconds=round(time.perf_counter() - t0, 1), registers=st.registers if st else None,
                         stack=st.stack_frame if st else None, spill_stores=st.spill_stores if st else None,
                         spill_loads=st.spill_loads if st else None)
        log(f"build {name}: {out[name]}", fh)
    return out


def check_debug(ref_dir: Path, fh) -> dict:
    """Compare the hopper debug dump (D of phases 9..61) with the reference stages of the dbg case."""
    import torch

    from tcforge.layers.enc5.gpu import debug_buffer, native_batch
    from tcforge.layers.enc5.gpu.layout import debug_layout

    files = sorted(ref_dir.glob("dbg_*.npz"))
    if not files:
        return {}
    z = np.load(files[0])
    meta = json.loads(str(z["meta"]))
    w, inp = make_case(meta["ex"], meta["ey"], meta["ox"], meta["oy"], meta["wseed"], meta["iseed"])
    ex, ey = meta["ex"], meta["ey"]
    dbg = debug_buffer(ex, ey)
    tin = torch.from_numpy(inp.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(inp.texture.view(np.int16)).cuda().reshape(1, ey, ex, 4)
    native_batch(w, tin, tex, ex, ey, ox=meta["ox"], oy=meta["oy"], numerics="hopper", debug=dbg)
    torch.cuda.synchronize()
    got = dbg.cpu().numpy().view(np.uint16)[0]
    want = z["debug"]
    out = {}
    for name, (phase, kind, off, shape) in debug_layout()["parts"].items():
        n = shape[0] * shape[1] * (8 if kind == "head" else 1)
        g_, w_ = got[:, off : off + n], want[:, off : off + n]
        bad = np.argwhere(g_ != w_)
        out[name] = int(len(bad))
        msg = f"debug {name} (P{phase}): {len(bad)} / {g_.size} mismatches"
        if len(bad):
            win, idx = bad[0]
            msg += f"; first window {win} elem {idx}: got {g_[win, idx]:#06x} want {w_[win, idx]:#06x}"
        log(msg, fh)
    return out


STAMP_NAMES = ("start", "prologue", "barrier1", "P1-10", "P11-12", "barrier2", "P13-20", "E20", "MLP", "E60",
               "P61", "E61/exit")


def profile(fh, options: tuple[str, ...] = (), variant: str = "hopper_timing") -> dict:
    """clock64 stamps per warp at the phase boundaries (variant hopper_timing or hopper_split_timing, whose 8 stamp
    rows per window are CTA 0's warps 0..3 then CTA 1's): median cycles of each part."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    out = {}
    w, _ = make_case(8, 8, 0, 0, 11, 12)
    for ex, ey in ((40, 23), (120, 68)):
        _, inp = make_case(ex, ey, 0, 0, 11, 13)
        tin = torch.from_numpy(inp.input).cuda().reshape(1, -1)
        tex = torch.from_numpy(inp.texture.view(np.int16)).cuda().reshape(1, ey, ex, 4)
        nwin = -(-ex // 8) * -(-ey // 8)
        buf = torch.zeros((nwin * 8 * 16,), dtype=torch.int64, device="cuda")
        for _ in range(3):  # warm: the last run's stamps are kept
            native_batch(w, tin, tex, ex, ey, debug=buf, variant=variant, options=options)
        torch.cuda.synchronize()
        st = buf.cpu().numpy().reshape(nwin, 8, 16).astype(np.int64)
        rows = {}
        for grp, warps in (("w0-3", range(4)), ("w4-7", range(4, 8))):
            sel = st[:, list(warps), :]
            parts = {}
            for k in range(1, 12):
                d = sel[..., k] - sel[..., k - 1]
                ok = (sel[..., k] != 0) & (sel[..., k - 1] != 0)
                if ok.any():
                    parts[STAMP_NAMES[k]] = int(np.median(d[ok]))
            rows[grp] = parts
        cta_ns = (st[:, :, 13].max(axis=1) - st[:, :, 12].min(axis=1))
        start_spread = int(st[:, :, 12].min(axis=1).max() - st[:, :, 12].min())
        total_cycles = int(np.median(st[:, 0, 11] - st[:, 0, 0]))
        out[f"{ex}x{ey}"] = {"cycles": rows, "cta_ns_median": int(np.median(cta_ns)), "cta_ns_max": int(cta_ns.max()),
                             "cta_start_spread_ns": start_spread, "warp0_total_cycles": total_cycles,
                             "sm_load": sm_load(st, split=variant.startswith("hopper_split"))}
        log(f"profile {variant} {' '.join(options)} {ex}x{ey}: {out[f'{ex}x{ey}']}", fh)
    return out


def sm_load(st: np.ndarray, split: bool) -> dict:
    """Where the CTAs of one timed launch ran (stamp 14 = %smid): per number of CTAs on an SM, how many SMs and when
    their last CTA ended (µs after the launch's first CTA started); the CTAs of the most loaded SMs as (launch index
    (split: 2 x stamp 15, the cluster's place in launch order, + rank), window, start, end)."""
    groups = [range(4), range(4, 8)] if split else [range(8)]
    ctas = []
    for w in range(st.shape[0]):
        for r, rows in enumerate(groups):
            sel = st[w, list(rows)]
            if not (sel[:, 12] > 0).any():
                continue
            launch = 2 * int(sel[0, 15]) + r if split else w
            ctas.append((launch, int(sel[0, 14]), int(sel[:, 12][sel[:, 12] > 0].min()), int(sel[:, 13].max()), w))
    t0 = min(c[2] for c in ctas)
    per_sm: dict = {}
    for c in ctas:
        per_sm.setdefault(c[1], []).append(c)
    by_load: dict = {}
    for cs in per_sm.values():
        by_load.setdefault(len(cs), []).append(max(c[3] for c in cs) - t0)
    out = {f"{n}_ctas": {"sms": len(v), "end_us_max": round(max(v) / 1e3, 2), "end_us_median": round(
        float(np.median(v)) / 1e3, 2)} for n, v in sorted(by_load.items())}
    top = max(by_load)
    out["most_loaded"] = {str(sm): [(c[0], c[4], round((c[2] - t0) / 1e3, 1), round((c[3] - t0) / 1e3, 1))
                                    for c in sorted(cs)]
                          for sm, cs in sorted(per_sm.items()) if len(cs) == top}
    out["first_pass_sms"] = [c[1] for c in sorted(ctas)[:8]]
    return out


# Builds compared by `candidates`: the shipped default first, then the older forms (macros of enc5.cu set back).
CANDIDATES = {
    # name: (the hopper frames' variant, nvcc options); ada frames always run the ada variant with the options
    "shipped": ("hopper", ()),  # one CTA per window: ENC5_QV_F16A=1, ENC5_FC1_F16A=0, ENC5_J_UNROLL=2, ENC5_MLP_SMEM=1
    "split": ("hopper_split", ()),  # one window per 2-CTA cluster (enc5_split_body), MLP loop unrolled twice
    "split_pairs": ("hopper_split", ("-DENC5_SPLIT_PAIRS=1",)),  # the same, MLP chunks in pairs
    "split_occ3": ("hopper_split_occ3", ()),  # 3 CTAs per SM (for one 4K frame)
}
# Also measured, then dropped from the list (bit-exact, slower; docs/enc5-native.md): split with
# -DENC5_SPLIT_F16B=1 (25.1 vs 19.7 us at 720p), split with -DENC5_SPLIT_PAIRS=1 (19.9 vs 19.7).
# Measured on 2026-11-30 (each bit-exact on the 319 reference frames; docs/enc5-native.md has the table): old, j2,
# fc1, qv, qv_fc1, regs_fc1 (then "shipped"), ring (= ring_fc1), ring_m2 (+ fc1), ring_nofc1 (now "shipped"),
# ring_m2_nofc1 (now "ring_m2").


def e4m3_fragments(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """(tiles,16,32) A, (tiles,32,8) B codes and (tiles,16,8) C bits -> per-lane fragment words of m16n8k32."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    n = a.shape[0]
    fa = np.zeros((n, 32, 4), np.uint32)
    fb = np.zeros((n, 32, 2), np.uint32)
    fc = np.zeros((n, 32, 2), np.uint32)
    for r in range(4):
        row = g + 8 * (r & 1)
        for i in range(4):
            k = 4 * t + i + 16 * (r >> 1)
            fa[:, :, r] |= a[:, row, k].astype(np.uint32) << (8 * i)
    for j in range(2):
        for i in range(4):
            fb[:, :, j] |= b[:, 4 * t + i + 16 * j, g].astype(np.uint32) << (8 * i)
    for r in range(2):
        for h in range(2):
            fc[:, :, r] |= c[:, g + 8 * r, 2 * t + h].astype(np.uint32) << (16 * h)
    return fa, fb, fc


def fragments_to_d(fd: np.ndarray) -> np.ndarray:
    """Per-lane D words (tiles, 32, 2) -> (tiles, 16, 8) f16 bits."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    d = np.zeros((fd.shape[0], 16, 8), np.uint16)
    for r in range(2):
        for h in range(2):
            d[:, g + 8 * r, 2 * t + h] = (fd[:, :, r] >> (16 * h)) & 0xFFFF
    return d


def tile_check(fh, tiles: int = 4096) -> dict:
    """Single m16n8k32 tiles on the GPU: the native e4m3 mma and the hand-issued HMMA pair (unpack_a +
    mma_hopper_f16a) against each other and against tcforge.numerics' Hopper model; random codes, specials mixed in."""
    import ctypes

    import torch

    from tcforge.layers.enc5.gpu import kernel
    from tcforge.numerics.mma import mma_m16n8k32_e4m3_f16
    from tcforge.runtime import driver

    rng = np.random.default_rng(2026)
    a = rng.integers(0, 256, (tiles, 16, 32), dtype=np.uint8)
    b = rng.integers(0, 256, (tiles, 32, 8), dtype=np.uint8)
    c = rng.integers(0, 65536, (tiles, 16, 8), dtype=np.uint16)
    # half the tiles without NaN codes and with finite C (so the sums, not the NaN rule, are exercised)
    half = tiles // 2
    a[:half][(a[:half] & 0x7F) == 0x7F] = 0x7E
    b[:half][(b[:half] & 0x7F) == 0x7F] = 0x3F
    cc = c[:half]
    cc[(cc & 0x7C00) == 0x7C00] &= 0xBFFF
    fa, fb, fc = e4m3_fragments(a, b, c)
    dev = [torch.from_numpy(x.view(np.int32)).cuda() for x in (fa, fb, fc)]
    dn = torch.zeros((tiles, 32, 2), dtype=torch.int32, device="cuda")
    ds = torch.zeros_like(dn)
    fn = kernel.function("tile_check")
    args = [ctypes.c_uint64(x.data_ptr()) for x in (*dev, dn, ds)] + [ctypes.c_int(tiles)]
    driver.launch(fn, (-(-tiles // 8), 1, 1), (256, 1, 1), args, stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    got_n = fragments_to_d(dn.cpu().numpy().view(np.uint32))
    got_s = fragments_to_d(ds.cpu().numpy().view(np.uint32))
    want = mma_m16n8k32_e4m3_f16(a, b, c, model="hopper")
    out = {"tiles": tiles, "native_vs_split": int(np.count_nonzero(got_n != got_s)),
           "native_vs_model": int(np.count_nonzero(got_n != want)),
           "split_vs_model": int(np.count_nonzero(got_s != want)),
           "values": int(want.size)}
    log(f"tile check: {out}", fh)
    return out


def split_enabled() -> bool:
    """False when the round's smoke test saw the split kernel hang (ENC5_SKIP_SPLIT set by tools/device_round.sh)."""
    return not os.environ.get("ENC5_SKIP_SPLIT")


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


class RefSet:
    """Every stored reference frame, loaded once: inputs on the GPU, expected outputs on the GPU (or their digests)."""

    def __init__(self, ref_dir: Path, fh) -> None:
        from multiprocessing import Pool

        import torch

        self.fh = fh
        self.frames = []
        files = [f for f in sorted(ref_dir.glob("*.npz")) if f.name.split("_")[0] != "dbg" and ".part" not in f.name]
        with Pool(12) as pool:
            loaded = pool.map(_load_ref, files)
        for f, item in zip(files, loaded, strict=True):
            if isinstance(item, str):
                log(f"skip {f.name}: {item}", fh)
                continue
            meta, w, inp, tex, arena, surface = item
            ex, ey = meta["ex"], meta["ey"]
            full = arena is not None
            self.frames.append(dict(
                tag=f.name.split("_")[0], meta=meta, w=torch.from_numpy(w).cuda(),
                inp=torch.from_numpy(inp).cuda().reshape(1, -1),
                tex=torch.from_numpy(tex.view(np.int16)).cuda().reshape(1, ey, ex, 4),
                arena=torch.from_numpy(arena).cuda().reshape(1, -1) if full else None,
                surface=torch.from_numpy(surface.view(np.int16)).cuda().reshape(1, ey, ex, 4) if full else None,
                untouched_px=untouched_pixels(surface) if full
                else int(meta["untouched_px"])))
        log(f"loaded {len(self.frames)} reference frames "
            f"({sum(fr['arena'] is None for fr in self.frames)} as digests)", fh)

    def check(self, options: tuple[str, ...], hopper_variant: str | None = None, hopper_only: bool = False) -> dict:
        """Run one build on every frame (poisoned buffers); mismatch counts per group. A digest frame that differs
        is recounted byte by byte against the CPU reference (computed here)."""
        import torch

        from tcforge.layers.enc5.gpu import native_batch

        groups: dict[str, dict] = {}
        recounts = 0
        for fr in self.frames:
            m = fr["meta"]
            if hopper_only and m["numerics"] != "hopper":
                continue
            ex, ey = m["ex"], m["ey"]
            g = groups.setdefault(fr["tag"], dict(cases=0, arena_bad=0, surface_bad=0, bad_cases=0, arena_bytes=0,
                                                  surface_values=0, untouched_px=0, digests=0,
                                                  extent=f"{ex}x{ey}+{m['ox']},{m['oy']} {m['numerics']}"))
            a0, s0 = poisoned_gpu_buffers(ex, ey)
            variant = hopper_variant if m["numerics"] == "hopper" else None
            a, s_ = native_batch(fr["w"], fr["inp"], fr["tex"], ex, ey, ox=m["ox"], oy=m["oy"],
                                 numerics=m["numerics"], arena=a0, surface=s0, options=nvcc_options(options),
                                 variant=variant, reorder=reorder(options))
            if fr["arena"] is not None:
                ab = int((a != fr["arena"]).sum())
                sb = int((s_ != fr["surface"]).sum())
            else:
                g["digests"] += 1
                an, sn = a.cpu().numpy().reshape(-1), s_.cpu().numpy().view(np.uint16).reshape(ey, ex, 4)
                ab = sb = 0
                if digest(an) != m["arena_sha256"] or digest(sn) != m["surface_sha256"]:
                    ab = sb = -1  # unknown until recounted
                    if recounts < 2:
                        recounts += 1
                        r = reference_outputs(ex, ey, m["ox"], m["oy"], m["numerics"], m["wseed"], m["iseed"])
                        ab = int(np.count_nonzero(an != r.arena))
                        sb = int(np.count_nonzero(sn != r.surface))
                    log(f"MISMATCH {fr['tag']} {m['wseed']}: arena {ab}, surface {sb} (digest frame)", self.fh)
                    ab, sb = max(ab, 1), max(sb, 0)
            g["cases"] += 1
            g["arena_bad"] += ab
            g["surface_bad"] += sb
            g["bad_cases"] += int(ab + sb > 0)
            g["arena_bytes"] += a.numel()
            g["surface_values"] += s_.numel()
            g["untouched_px"] += fr["untouched_px"]
        torch.cuda.synchronize()
        return groups


NO_REORDER = "+noreorder"  # pseudo option of a build spec: launch in plain order (native_batch reorder=False)


def nvcc_options(opts: tuple[str, ...]) -> tuple[str, ...]:
    """A build spec's options without the pseudo options."""
    return tuple(o for o in opts if o != NO_REORDER)


def reorder(opts: tuple[str, ...]) -> bool:
    """native_batch's reorder flag for a build spec."""
    return NO_REORDER not in opts


def time_builds(builds: dict, shapes: list[tuple[int, int, int]], rounds: int, multi_reps: int = 20) -> dict:
    """µs per launch of each build {name: (variant, options)} on fresh random frames of each (ex, ey, frames) shape,
    builds interleaved within each round: {name: {"EXxEYxF": [one figure per round]}} (100 timed reps for single
    frames, `multi_reps` for batches)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import enc5_native
    import torch

    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(make_case(8, 8, 0, 0, 11, 12)[0])
    data = {}
    for ex, ey, f in shapes:
        inp, tex = enc5_native.random_frames(f, ex, ey)
        data[(ex, ey, f)] = (inp, tex, torch.zeros_like(inp), torch.zeros_like(tex))
    out: dict = {name: {f"{ex}x{ey}x{f}": [] for ex, ey, f in shapes} for name in builds}
    for _ in range(rounds):
        for name, (variant, opts) in builds.items():
            for ex, ey, f in shapes:
                inp, tex, oa, os_ = data[(ex, ey, f)]
                nvcc, reo = nvcc_options(opts), reorder(opts)
                out[name][f"{ex}x{ey}x{f}"].append(enc5_native.time_kernel(
                    lambda i=inp, t=tex, a=oa, s=os_, x=ex, y=ey, o=nvcc, v=variant, r=reo:
                    native_batch(dw, i, t, x, y, arena=a, surface=s, options=o, variant=v, reorder=r),
                    warmup=3, reps=100 if f == 1 else multi_reps))
    return out


def candidates(ref_dir: Path, fh) -> dict:
    """Every candidate build on every reference frame (both numerics) first; then the timings of the bit-exact ones
    (720p / 4K, 1 and 64 frames, two rounds); returns the rows and the fastest bit-exact candidate."""
    refs = RefSet(ref_dir, fh)
    res: dict = {}
    skipped = set(os.environ.get("ENC5_SKIP_VARIANTS", "").split(","))  # variants whose smoke test failed
    chosen = set(filter(None, os.environ.get("ENC5_CANDIDATES", "").split(",")))  # empty: all of them
    cands = {k: v for k, v in CANDIDATES.items()
             if (split_enabled() or not v[0].startswith("hopper_split")) and v[0] not in skipped
             and (not chosen or k in chosen)}
    for name, (variant, opts) in cands.items():
        t0 = time.perf_counter()
        groups = refs.check(opts, variant)
        bad = sum(g["arena_bad"] + g["surface_bad"] for g in groups.values())
        res[name] = {"variant": variant, "options": list(opts), "refs": groups,
                     "bit_exact": bad == 0 and len(groups) > 0}
        log(f"candidate {name} {opts}: bit_exact={bad == 0} ({time.perf_counter() - t0:.1f}s) " + "; ".join(
            f"{k}: {g['cases']} frames, arena {g['arena_bad']}/{g['arena_bytes']}, surface "
            f"{g['surface_bad']}/{g['surface_values']}" for k, g in groups.items()), fh)
    shapes = [(40, 23, 1), (120, 68, 1), (40, 23, 64), (120, 68, 64), (40, 23, 4), (40, 23, 9), (120, 68, 2)]
    timed = time_builds({n: b for n, b in cands.items() if res[n]["bit_exact"]}, shapes, rounds=2)
    for name, us in timed.items():
        res[name]["us"] = {k: [round(x, 2) for x in v] for k, v in us.items()}
    for name in cands:
        log(f"timing {name}: {res[name].get('us')}", fh)
    exact = [n for n in cands if res[n]["bit_exact"]]
    best = min(exact, key=lambda n: min(res[n]["us"]["40x23x1"]) + min(res[n]["us"]["120x68x1"])) if exact else None
    log(f"fastest bit-exact candidate: {best}", fh)
    return {"rows": res, "best": best}


def bench(fh, options: tuple[str, ...] = ()) -> dict:
    """The benchmark of bench/enc5_native.py (kernel rows, torch eager, CPU reference in the background)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import enc5_native

    result = enc5_native.run(quick=False, cpu_reference=True, options=options)
    log(enc5_native.table(result), fh)
    return result


def parse_builds(spec: str) -> list[tuple[str, tuple[str, ...]]]:
    """'variant:opt opt;variant:' -> [(variant, options)]."""
    out = []
    for item in filter(None, spec.split(";")):
        variant, _, opts = item.partition(":")
        out.append((variant.strip(), tuple(opts.split())))
    return out


def sweep(ref_dir: Path, spec: str, rounds: int = 3) -> int:
    """Experiment builds side by side: each must pass the smoke frames bit for bit, then all are timed in
    interleaved rounds (720p x1, 4K x1, 4K x2); prints one line per build with the median of each shape."""
    builds = parse_builds(spec)
    exact = [b for b in builds if smoke(ref_dir, *b) == 0]
    shapes = [(40, 23, 1), (120, 68, 1), (120, 68, 2)]
    times = time_builds({b: b for b in exact}, shapes, rounds, multi_reps=100)
    for b in builds:
        row = "  ".join(f"{k} {np.median(v):6.2f}" for k, v in times[b].items()) if b in times else "NOT BIT-EXACT"
        print(f"sweep {b[0]:18s} {' '.join(b[1]):60s} {row}", flush=True)
    return 0


def validate(ref_dir: Path, spec: str) -> int:
    """Every hopper reference frame through each build of `spec` (the sweep's format): mismatching bytes per group;
    exit status 1 if any build mismatches."""
    with open(os.devnull, "w") as fh:
        refs = RefSet(ref_dir, fh)
        bad_any = 0
        for variant, opts in parse_builds(spec):
            groups = refs.check(opts, variant, hopper_only=True)
            bad = sum(g["arena_bad"] + g["surface_bad"] for g in groups.values())
            frames = sum(g["cases"] for g in groups.values())
            bad_any += bad
            print(f"validate {variant:18s} {' '.join(opts):50s} frames {frames} mismatching bytes {bad} " + "; ".join(
                f"{k} {g['cases']}" for k, g in groups.items()), flush=True)
    return 1 if bad_any else 0


def precompile() -> int:
    """Locally (no GPU needed): compile every variant and every candidate's option set into the disk cache
    (TCFORGE_CACHE_DIR), so the device call only loads cubins."""
    from tcforge.layers.enc5.gpu import kernel

    builds = {(name, ()) for name in kernel.VARIANTS} | {(v, o) for v, o in CANDIDATES.values()}
    builds |= set(parse_builds(os.environ.get("ENC5_SWEEP", "")))
    for _, o in CANDIDATES.values():
        builds |= {("ada", o), ("hopper_split_timing", o), ("hopper_split_occ3_timing", o)}
    from tcforge.errors import TcforgeError

    for name, opts in sorted(builds):
        t0 = time.perf_counter()
        try:
            kernel.compile_variant(name, nvcc_options(opts))
        except TcforgeError as exc:  # an option set a variant does not take (its static_assert says why)
            print(f"skipped {name} {' '.join(opts)}: {str(exc).splitlines()[0][:160]}", flush=True)
            continue
        print(f"compiled {name} {' '.join(opts)} ({time.perf_counter() - t0:.0f}s)", flush=True)
    return 0


def smoke(ref_dir: Path, variant: str, options: tuple[str, ...] = ()) -> int:
    """One 720p and one full 4K reference frame through `variant` (run under `timeout` first: a hung kernel must not
    eat the device call); mismatches split by the arena word half (t: CTA 0, t|4: CTA 1) and the surface."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    bad_total = 0
    for tag in ("A", "B", "C"):
        files = sorted(ref_dir.glob(f"{tag}_*.npz"))
        files = [f for f in files if "arena" in np.load(f).files][:1]
        for f in files:
            z = np.load(f)
            meta = json.loads(str(z["meta"]))
            ex, ey = meta["ex"], meta["ey"]
            w, inp = make_case(ex, ey, meta["ox"], meta["oy"], meta["wseed"], meta["iseed"])
            a0, s0 = poisoned_gpu_buffers(ex, ey)
            t0 = time.perf_counter()
            a, s_ = native_batch(w, torch.from_numpy(inp.input).cuda().reshape(1, -1),
                                 torch.from_numpy(inp.texture.view(np.int16)).cuda().reshape(1, ey, ex, 4), ex, ey,
                                 ox=meta["ox"], oy=meta["oy"], arena=a0, surface=s0, variant=variant,
                                 options=nvcc_options(options), reorder=reorder(options))
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            a = a.cpu().numpy().reshape(5, ey, ex, 2, 16)
            want = z["arena"].reshape(5, ey, ex, 2, 16)
            s_ = s_.cpu().numpy().view(np.uint16).reshape(ey, ex, 4)
            bad = a != want
            sb = s_ != z["surface"]
            bad_total += int(bad.sum() + sb.sum())
            print(f"smoke {variant} {' '.join(options)} {f.name} {ex}x{ey}: arena bad {int(bad.sum())} "
                  f"(CTA0 half {int(bad[..., 0, :].sum())}"
                  f", CTA1 half {int(bad[..., 1, :].sum())}, per plane {bad.sum(axis=(1, 2, 3, 4)).tolist()}), "
                  f"surface bad {int(sb.sum())}, first launch {dt * 1e3:.1f} ms", flush=True)
            if bad.any():
                idx = np.argwhere(bad)[:4]
                print("  first bad arena (plane, y, x, half, byte):", idx.tolist(),
                      [(int(a[tuple(i)]), int(want[tuple(i)])) for i in idx], flush=True)
            if sb.any():
                idx = np.argwhere(sb)[:4]
                print("  first bad surface:", idx.tolist(), flush=True)
    return 0 if bad_total == 0 else 1


def sanitize_case() -> int:
    """A tiny launch through bare driver allocations (no torch), for compute-sanitizer; ENC5_SAN_EXTENT=120x68 runs
    one 4K frame instead (split forms: with the dispatch-order swaps for 132 SMs)."""
    import ctypes

    from tcforge.layers.enc5.gpu import kernel, schedule
    from tcforge.runtime import driver

    driver.ensure_context(0)
    cu = driver.lib()
    ex, ey, ox, oy = 12, 10, 3, 2
    if os.environ.get("ENC5_SAN_EXTENT"):
        ex, ey = (int(v) for v in os.environ["ENC5_SAN_EXTENT"].split("x"))
        ox = oy = 0
    variant = os.environ.get("ENC5_SAN_VARIANT", "hopper")
    order = schedule.dispatch_swaps(ex, ey, oy, 132, 3 if "occ3" in variant else 2) \
        if variant in kernel.SPLIT_VARIANTS else ()
    w, inp = make_case(ex, ey, ox, oy, 5, 6)
    bufs = {}

    def upload(name: str, arr: np.ndarray) -> int:
        ptr = ctypes.c_uint64()
        driver.check(cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(arr.nbytes)), "cuMemAlloc")
        driver.check(cu.cuMemcpyHtoD_v2(ptr, arr.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(arr.nbytes)),
                     "cuMemcpyHtoD")
        bufs[name] = (ptr.value, arr)
        return ptr.value

    prm = kernel.params(ex, ey, ox, oy, input_ptr=upload("in", inp.input), weights_ptr=upload("w", w.array.copy()),
                        arena_ptr=upload("arena", np.zeros(5 * ey * ex * 32, np.uint8)),
                        texture_ptr=upload("tex", np.ascontiguousarray(inp.texture)),
                        surface_ptr=upload("surf", np.zeros((ey, ex, 4), np.uint16)), order=order)
    kernel.launch(variant, prm,
                  options=tuple(filter(None, os.environ.get("ENC5_OPTIONS", "").split())))
    driver.check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    print("sanitize case ran")
    return 0


def sanitizers(fh, out_dir: Path, options: tuple[str, ...] = (), variant: str = "hopper") -> dict:
    """memcheck, racecheck, synccheck on the tiny case (`variant`, the build with `options`); each tool's verdict."""
    import subprocess

    res = {}
    for tool in ("memcheck", "racecheck", "synccheck"):
        cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", sys.executable, __file__, "sanitize"]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                               env={**os.environ, "ENC5_OPTIONS": " ".join(options), "ENC5_SAN_VARIANT": variant})
            text = p.stdout + p.stderr
            res[tool] = f"rc={p.returncode}"
            summary = [ln for ln in text.splitlines() if "ERROR SUMMARY" in ln or "RACECHECK SUMMARY" in ln]
            res[tool] += " " + " | ".join(summary)[:200]
        except subprocess.TimeoutExpired as exc:
            text = str(exc.stdout or "")
            res[tool] = "timeout"
        tag = variant + "".join(o.replace("-D", "_") for o in options)
        (out_dir / f"sanitizer_{tag}_{tool}.log").write_text(text[-20000:])
        log(f"sanitizer {tag} {tool}: {res[tool]} ({time.perf_counter() - t0:.0f}s)", fh)
    return res


def main(argv: list[str]) -> int:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", nargs="?", default="check",
                    choices=("check", "sanitize", "refs", "smoke", "precompile", "sweep", "validate"))
    ap.add_argument("--variant", default="hopper_split", help="smoke: the variant to run")
    ap.add_argument("--hopper", type=int, default=120, help="refs: frames per hopper case (40x23, 37x21+3,5)")
    ap.add_argument("--ada", type=int, default=40, help="refs: frames per ada case")
    ap.add_argument("--big", type=int, default=4, help="refs: 120x68 hopper frames")
    ap.add_argument("--jobs", type=int, default=2, help="refs: parallel processes")
    ap.add_argument("--refs", default=".enc5refs")
    ap.add_argument("--out", default=".")
    ap.add_argument("--skip", default="", help="comma list of: build,tiles,debug,candidates,profile,bench,sanitize")
    args = ap.parse_args(argv)
    if args.mode == "sanitize":
        return sanitize_case()
    if args.mode == "precompile":
        return precompile()
    if args.mode == "sweep":
        return sweep(Path(args.refs), os.environ.get("ENC5_SWEEP", ""))
    if args.mode == "validate":
        return validate(Path(args.refs), os.environ.get("ENC5_SWEEP", ""))
    if args.mode == "smoke":
        return smoke(Path(args.refs), args.variant)
    if args.mode == "refs":
        return make_refs(args.refs, args.hopper, args.ada, args.big, args.jobs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    summary: dict = {}
    with open(out / "enc5_device_check.log", "w") as fh:
        t0 = time.perf_counter()
        if "build" not in skip:
            summary["build"] = build(fh)
        if "tiles" not in skip:
            summary["tiles"] = tile_check(fh)
        if "debug" not in skip:
            summary["debug"] = check_debug(Path(args.refs), fh)
        if "candidates" not in skip:
            summary["candidates"] = candidates(Path(args.refs), fh)
        if "profile" not in skip:
            summary["profile"] = profile(fh)
            if split_enabled():
                summary["profile_split"] = profile(fh, variant="hopper_split_timing")
                summary["profile_split_occ3"] = profile(fh, variant="hopper_split_occ3_timing")
        if "bench" not in skip:
            summary["bench"] = bench(fh)
        if "sanitize" not in skip:
            builds = {"hopper_split": ("hopper_split", ()),
                      "hopper_split_pairs": ("hopper_split", ("-DENC5_SPLIT_PAIRS=1",)),
                      "hopper_split_occ3": ("hopper_split_occ3", ()), "hopper": ("hopper", ())}
            if not split_enabled():
                builds = {"hopper": ("hopper", ())}
            skipped = set(os.environ.get("ENC5_SKIP_VARIANTS", "").split(","))
            builds = {k: v for k, v in builds.items() if v[0] not in skipped}
            summary["sanitize"] = {k: sanitizers(fh, out, options=o, variant=v) for k, (v, o) in builds.items()}
        (out / "enc5_device_check.json").write_text(json.dumps(summary, indent=1))
        log(f"total {time.perf_counter() - t0:.0f}s", fh)
        log("\n== summary ==", fh)
        for k, v in summary.get("debug", {}).items():
            log(f"debug {k:5s} mismatches {v}", fh)
        if "bench" in summary:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
            import enc5_native

            log(enc5_native.table(summary["bench"]), fh)
        for k, v in summary.get("profile", {}).items():
            log(f"profile {k}: {v}", fh)
        for k, v in summary.get("profile_split", {}).items():
            log(f"profile split {k}: {v}", fh)
        if "tiles" in summary:
            log(f"tiles: {summary['tiles']}", fh)
        cand = summary.get("candidates", {}).get("rows", {})
        for name, row in cand.items():
            bad = sum(g["arena_bad"] + g["surface_bad"] for g in row["refs"].values())
            frames = sum(g["cases"] for g in row["refs"].values())
            log(f"candidate {name:8s} exact={row['bit_exact']} frames {frames} mismatches {bad} us {row.get('us')}", fh)
        for var, tools in summary.get("sanitize", {}).items():
            for k, v in tools.items():
                log(f"sanitizer {var} {k}: {v}", fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
