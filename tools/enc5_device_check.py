"""The one script the enc5 native kernel's device check runs: compare the kernel bit for bit with the CPU reference.

Locally (no GPU): `--make-refs` precomputes reference frames (poisoned initial buffers) under a folder that travels
with the device call. On the device: builds the kernel, runs every stored case, counts mismatching bytes, checks
untouched pixels, optionally compares debug stages, then times the kernel and prints a compact table last.
"""

from __future__ import annotations

import argparse
import json
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
    from tcforge.layers.enc5.native.layout import debug_layout

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


def reference_case(path: str, ex: int, ey: int, ox: int, oy: int, numerics: str, wseed: int, iseed: int,
                   stages: bool) -> None:
    """Run the CPU reference on one case with poisoned initial buffers and save it (npz)."""
    from tcforge.layers.enc5 import reference

    w, inp = make_case(ex, ey, ox, oy, wseed, iseed)
    arena0 = np.full(5 * ey * ex * 32, ARENA_POISON, np.uint8)
    surf0 = np.full((ey, ex, 4), SURFACE_POISON, np.uint16)
    r = reference(w, inp, numerics=numerics, arena=arena0, surface=surf0, stages=DEBUG_PHASES if stages else ())
    extra = {}
    if stages:
        extra["debug"] = np.stack([debug_block(r.stages, win) for win in r.windows])
    meta = dict(ex=ex, ey=ey, ox=ox, oy=oy, numerics=numerics, wseed=wseed, iseed=iseed)
    np.savez_compressed(path, arena=r.arena, surface=r.surface, meta=json.dumps(meta), **extra)


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
    from tcforge.layers.enc5.native import kernel

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


def check_refs(ref_dir: Path, fh, limit: int) -> dict:
    """Run the kernel on every stored reference case; count mismatching arena bytes and surface texels."""
    import torch

    from tcforge.layers.enc5.native import native

    groups: dict[str, dict] = {}
    files = sorted(ref_dir.glob("*.npz"))
    for f in files:
        tag = f.name.split("_")[0]
        if tag == "dbg":
            continue
        g = groups.setdefault(tag, dict(cases=0, arena_bad=0, surface_bad=0, bad_cases=0, untouched_arena=0,
                                        untouched_pixels=0, extent=None))
        if g["cases"] >= limit:
            continue
        try:
            z = np.load(f)
            meta = json.loads(str(z["meta"]))
            z["arena"], z["surface"]  # noqa: B018 - force the read (a half-written file raises here)
        except Exception as exc:
            log(f"skip {f.name}: {exc!r}", fh)
            continue
        w, inp = make_case(meta["ex"], meta["ey"], meta["ox"], meta["oy"], meta["wseed"], meta["iseed"])
        ex, ey = meta["ex"], meta["ey"]
        arena0 = np.full(5 * ey * ex * 32, ARENA_POISON, np.uint8)
        surf0 = np.full((ey, ex, 4), SURFACE_POISON, np.uint16)
        r = native(w, inp, meta["numerics"], arena=arena0, surface=surf0)
        torch.cuda.synchronize()
        a = r.arena.cpu().numpy()
        s = r.surface.cpu().numpy().view(np.uint16)
        ab = int(np.count_nonzero(a != z["arena"]))
        sb = int(np.count_nonzero(s != z["surface"]))
        g["cases"] += 1
        g["arena_bad"] += ab
        g["surface_bad"] += sb
        g["bad_cases"] += int(ab + sb > 0)
        g["untouched_arena"] += int(np.count_nonzero(z["arena"] == ARENA_POISON))
        g["untouched_pixels"] += int(np.count_nonzero(np.all(z["surface"] == SURFACE_POISON, axis=-1)))
        g["extent"] = f"{ex}x{ey}+{meta['ox']},{meta['oy']} {meta['numerics']}"
        if ab + sb:
            log(f"MISMATCH {f.name}: arena {ab} bytes, surface {sb} values", fh)
    for tag, g in groups.items():
        log(f"refs {tag}: {g}", fh)
    return groups


def check_debug(ref_dir: Path, fh) -> dict:
    """Compare the hopper debug dump (D of phases 9..61) with the reference stages of the dbg case."""
    import torch

    from tcforge.layers.enc5.native import debug_buffer, native_batch
    from tcforge.layers.enc5.native.layout import debug_layout

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


def time_kernel(fn, warmup: int = 10, reps: int = 100, per_graph: int = 20) -> float:
    """Median microseconds per fn() call: `per_graph` calls captured in one CUDA graph, replays timed by CUDA events
    (so Python launch overhead stays out); falls back to timing single calls if capture fails."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    try:
        graph = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.cuda.graph(graph, stream=s):
            for _ in range(per_graph):
                fn()
        torch.cuda.synchronize()
        graph.replay()
        torch.cuda.synchronize()
        calls, run = per_graph, graph.replay
    except Exception as exc:
        print(f"graph capture failed ({exc!r}); timing single launches")
        calls, run = 1, fn
    times = []
    for _ in range(max(3, reps // calls * 2)):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / calls)
    return float(np.median(times))


def bench(fh) -> list[tuple]:
    """Kernel time per frame and batched fps; the float PyTorch model (eager) for comparison."""
    import torch

    from tcforge.layers.enc5.native import device_weights, native_batch
    from tcforge.layers.enc5.semantic import _gather, torch_model

    rows = []
    w, _ = make_case(8, 8, 0, 0, 11, 12)
    dw = device_weights(w)
    for ex, ey in ((40, 23), (120, 68)):
        for numerics, frames in (("hopper", 1), ("hopper", 64), ("ada", 1)):
            inp = torch.randint(0, 256, (frames, 5 * ey * ex * 32), dtype=torch.uint8, device="cuda")
            inp[(inp & 0x7F) == 0x7F] = 0  # no NaN codes
            tex = (torch.rand((frames, ey, ex, 4), device="cuda")).half().view(torch.int16)
            oa = torch.zeros_like(inp)
            os_ = torch.zeros_like(tex)
            reps = 20 if numerics == "ada" else 100
            us = time_kernel(lambda i=inp, t=tex, a=oa, s=os_, n=numerics, x=ex, y=ey: native_batch(
                dw, i, t, x, y, numerics=n, arena=a, surface=s), warmup=3, reps=reps)
            rows.append((f"{ex}x{ey}", numerics, frames, round(us, 2), round(us / frames, 2),
                         round(frames * 1e6 / us, 1)))
            log(f"bench {rows[-1]}", fh)
    # the float model in PyTorch eager, 720p frame
    try:
        _, inp = make_case(40, 23, 0, 0, 11, 12)
        model = torch_model(w, device="cuda")
        from tcforge.layers.enc5.assumptions import Assumptions

        x, _, _ = _gather(inp, Assumptions(), np.arange(15))
        xt = torch.as_tensor(np.asarray(x, dtype=np.float32), device="cuda")
        with torch.no_grad():
            us = time_kernel(lambda: model(xt), warmup=3, reps=20)
        rows.append(("40x23", "torch-eager-fp32", 1, round(us, 2), round(us, 2), round(1e6 / us, 1)))
        log(f"bench {rows[-1]}", fh)
    except Exception as exc:  # the comparison must not hide the kernel's figures
        log(f"bench torch eager failed: {exc!r}", fh)
    return rows


def sanitize_case() -> int:
    """A tiny launch through bare driver allocations (no torch), for compute-sanitizer."""
    import ctypes

    from tcforge.layers.enc5.native import kernel
    from tcforge.runtime import driver

    driver.ensure_context(0)
    cu = driver.lib()
    ex, ey, ox, oy = 12, 10, 3, 2
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
                        surface_ptr=upload("surf", np.zeros((ey, ex, 4), np.uint16)))
    kernel.launch("hopper", prm)
    driver.check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    print("sanitize case ran")
    return 0


def sanitizers(fh, out_dir: Path) -> dict:
    """memcheck, racecheck, synccheck on the tiny case; each tool's verdict."""
    import subprocess

    res = {}
    for tool in ("memcheck", "racecheck", "synccheck"):
        cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", sys.executable, __file__, "sanitize"]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
            text = p.stdout + p.stderr
            res[tool] = f"rc={p.returncode}"
            summary = [ln for ln in text.splitlines() if "ERROR SUMMARY" in ln or "RACECHECK SUMMARY" in ln]
            res[tool] += " " + " | ".join(summary)[:200]
        except subprocess.TimeoutExpired as exc:
            text = str(exc.stdout or "")
            res[tool] = "timeout"
        (out_dir / f"sanitizer_{tool}.log").write_text(text[-20000:])
        log(f"sanitizer {tool}: {res[tool]} ({time.perf_counter() - t0:.0f}s)", fh)
    return res


def main(argv: list[str]) -> int:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("check", "sanitize"), nargs="?", default="check")
    ap.add_argument("--refs", default=".enc5refs")
    ap.add_argument("--out", default=".")
    ap.add_argument("--limit", type=int, default=1000, help="cases per group")
    ap.add_argument("--skip", default="", help="comma list of: build,debug,refs,bench,sanitize")
    args = ap.parse_args(argv)
    if args.mode == "sanitize":
        return sanitize_case()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    summary: dict = {}
    with open(out / "enc5_device_check.log", "w") as fh:
        t0 = time.perf_counter()
        if "build" not in skip:
            summary["build"] = build(fh)
        if "debug" not in skip:
            summary["debug"] = check_debug(Path(args.refs), fh)
        if "refs" not in skip:
            summary["refs"] = check_refs(Path(args.refs), fh, args.limit)
        if "bench" not in skip:
            summary["bench"] = bench(fh)
        if "sanitize" not in skip:
            summary["sanitize"] = sanitizers(fh, out)
        (out / "enc5_device_check.json").write_text(json.dumps(summary, indent=1))
        log(f"total {time.perf_counter() - t0:.0f}s", fh)
        log("\n== summary ==", fh)
        for k, v in summary.get("debug", {}).items():
            log(f"debug {k:5s} mismatches {v}", fh)
        for tag, g in summary.get("refs", {}).items():
            log(f"refs {tag:5s} {g['extent']:28s} cases {g['cases']:4d} bad_cases {g['bad_cases']} arena_bad_bytes "
                f"{g['arena_bad']} surface_bad {g['surface_bad']} untouched_bytes {g['untouched_arena']} "
                f"untouched_px {g['untouched_pixels']}", fh)
        log("extent  numerics  frames  us/launch  us/frame  fps", fh)
        for r in summary.get("bench", []):
            log("  ".join(str(x) for x in r), fh)
        for k, v in summary.get("sanitize", {}).items():
            log(f"sanitizer {k}: {v}", fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
