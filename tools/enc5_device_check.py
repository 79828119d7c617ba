"""The one script the enc5 native kernel's device check runs: compare the kernel bit for bit with the CPU reference.

Locally (no GPU): `refs` precomputes CPU reference frames (poisoned initial buffers; tools/enc5_refs.py) into a folder
that travels with the device call (`carry`); `compact` shrinks that folder (the first `--keep` full frames of each
tag kept, the others turned into digests); `precompile` fills the cubin cache. On the device: builds every kernel
form, runs every stored case, counts mismatching bytes, checks untouched pixels, optionally probes the kernel through
its tool forms (tools/enc5_probes.py), then times the forms and prints a compact table last.

Usage (from the repository root): python3 -m tools.enc5_device_check [check|refs|compact|precompile|smoke|sweep|
validate|sanitize] [--refs .enc5refs] [--keep 10] [--out DIR] [--skip build,tiles,debug,candidates,profile,bench,
sanitize]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from tools.enc5_probes import check_debug, profile, tile_check
from tools.enc5_refs import (
    _load_ref,
    compact_refs,
    digest,
    log,
    make_case,
    make_refs,
    poisoned_gpu_buffers,
    reference_outputs,
    untouched_pixels,
)

ROOT = Path(__file__).resolve().parents[1]


def build(fh) -> dict:
    """Compile every shipped and tool form (disk cache), report ptxas statistics and times."""
    from tcforge.layers.enc5.gpu import kernel

    out = {}
    for name in (*kernel.FORMS, *kernel.tool_forms()):
        t0 = time.perf_counter()
        mod = kernel.compile_form(name)
        st = mod.stats.get(kernel.form(name).entry)
        out[name] = dict(seconds=round(time.perf_counter() - t0, 1), registers=st.registers if st else None,
                         stack=st.stack_frame if st else None, spill_stores=st.spill_stores if st else None,
                         spill_loads=st.spill_loads if st else None)
        log(f"build {name}: {out[name]}", fh)
    return out


# Builds compared by `candidates`: the shipped default first, then the other forms.
CANDIDATES = {
    # name: (the hopper frames' form, nvcc options); ada frames always run the ada form with the options
    "shipped": ("hopper", ()),  # one CTA per window
    "split": ("hopper_split", ()),  # one window per 2-CTA cluster
    "split_occ3": ("hopper_split_occ3", ()),  # the same at 3 CTAs per SM (for one 4K frame)
}


def split_enabled() -> bool:
    """False when the round's smoke test saw the split kernel hang (ENC5_SKIP_SPLIT set by tools/device_round.sh)."""
    return not os.environ.get("ENC5_SKIP_SPLIT")


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
    import torch
    from bench import enc5_native

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
    from bench import enc5_native

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
    """Locally (no GPU needed): compile every form and every candidate's option set into the disk cache
    (TCFORGE_CACHE_DIR), so the device call only loads cubins."""
    from tcforge.layers.enc5.gpu import kernel

    builds = {(name, ()) for name in (*kernel.FORMS, *kernel.tool_forms())} | {(v, o) for v, o in CANDIDATES.values()}
    builds |= set(parse_builds(os.environ.get("ENC5_SWEEP", "")))
    for _, o in CANDIDATES.values():
        builds |= {("ada", o), ("hopper_split_timing", o), ("hopper_split_occ3_timing", o)}
    from tcforge.errors import TcforgeError

    for name, opts in sorted(builds):
        t0 = time.perf_counter()
        try:
            kernel.compile_form(name, nvcc_options(opts))
        except TcforgeError as exc:  # an option set a form does not take
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
    ada = variant.startswith("ada")
    for tag in ("AdaA", "AdaB", "AdaC") if ada else ("A", "B", "C"):
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
                                 numerics="ada" if ada else "hopper", options=nvcc_options(options),
                                 reorder=reorder(options))
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
    from tcforge.layers.enc5.gpu import kernel
    from tcforge.runtime import driver

    driver.ensure_context(0)
    ex, ey, ox, oy = 12, 10, 3, 2
    if os.environ.get("ENC5_SAN_EXTENT"):
        ex, ey = (int(v) for v in os.environ["ENC5_SAN_EXTENT"].split("x"))
        ox = oy = 0
    variant = os.environ.get("ENC5_SAN_VARIANT", "hopper")
    order = kernel.dispatch_swaps(ex, ey, oy, 132, 3 if "occ3" in variant else 2) \
        if kernel.form(variant).cluster > 1 else ()
    w, inp = make_case(ex, ey, ox, oy, 5, 6)
    bufs = {}

    def upload(name: str, arr: np.ndarray) -> int:
        ptr = driver.mem_alloc(arr.nbytes)
        driver.memcpy_htod(ptr, arr)
        bufs[name] = (ptr, arr)
        return ptr

    prm = kernel.params(ex, ey, ox, oy, input_ptr=upload("in", inp.input), weights_ptr=upload("w", w.array.copy()),
                        arena_ptr=upload("arena", np.zeros(5 * ey * ex * 32, np.uint8)),
                        texture_ptr=upload("tex", np.ascontiguousarray(inp.texture)),
                        surface_ptr=upload("surf", np.zeros((ey, ex, 4), np.uint16)), order=order)
    kernel.launch(variant, prm,
                  options=tuple(filter(None, os.environ.get("ENC5_OPTIONS", "").split())))
    driver.synchronize()
    print("sanitize case ran")
    return 0


def sanitizers(fh, out_dir: Path, options: tuple[str, ...] = (), variant: str = "hopper") -> dict:
    """memcheck, racecheck, synccheck on the tiny case (`variant`, the build with `options`); each tool's verdict."""
    import subprocess

    res = {}
    for tool in ("memcheck", "racecheck", "synccheck"):
        cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", sys.executable, "-m",
               "tools.enc5_device_check", "sanitize"]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT,
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
                    choices=("check", "sanitize", "refs", "compact", "smoke", "precompile", "sweep", "validate"))
    ap.add_argument("--variant", default="hopper_split", help="smoke: the kernel form to run")
    ap.add_argument("--hopper", type=int, default=120, help="refs: frames per hopper case (40x23, 37x21+3,5)")
    ap.add_argument("--ada", type=int, default=40, help="refs: frames per ada case")
    ap.add_argument("--big", type=int, default=4, help="refs: 120x68 hopper frames")
    ap.add_argument("--jobs", type=int, default=2, help="refs: parallel processes")
    ap.add_argument("--refs", default=".enc5refs")
    ap.add_argument("--keep", type=int, default=10, help="compact: full frames kept per tag")
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
    if args.mode == "compact":
        return compact_refs(Path(args.refs), args.keep)
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
            builds = {"hopper_split": ("hopper_split", ()), "hopper_split_occ3": ("hopper_split_occ3", ()),
                      "hopper": ("hopper", ()), "ada": ("ada", ())}
            if not split_enabled():
                builds = {"hopper": ("hopper", ()), "ada": ("ada", ())}
            skipped = set(os.environ.get("ENC5_SKIP_VARIANTS", "").split(","))
            builds = {k: v for k, v in builds.items() if v[0] not in skipped}
            summary["sanitize"] = {k: sanitizers(fh, out, options=o, variant=v) for k, (v, o) in builds.items()}
        (out / "enc5_device_check.json").write_text(json.dumps(summary, indent=1))
        log(f"total {time.perf_counter() - t0:.0f}s", fh)
        log("\n== summary ==", fh)
        for k, v in summary.get("debug", {}).items():
            log(f"debug {k:5s} mismatches {v}", fh)
        if "bench" in summary:
            from bench import enc5_native

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
