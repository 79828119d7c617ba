"""`tcforge enc5 ...`: run the layer (native kernel when present, else the CPU reference; its images through a tiny
dependency-free PNG writer), print its phases, assumptions, map; and `tcforge bench enc5`: seconds per frame of the
enc5 CPU reference as JSON (native kernel: bench/enc5_native.py)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import struct
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from tcforge.cliutil import (
    ArgumentParser,
    Counter,
    check_tool_environment,
    input_file,
    output_dir,
    output_file,
    require_subcommand,
)
from tcforge.errors import TcforgeError
from tcforge.layers.enc5.assumptions import CATALOGUE, Assumptions, format_catalogue
from tcforge.layers.enc5.descriptor import PARAMS, PHASES, UNREAD_PARAM_OFFSETS, launch_geometry, phase_table
from tcforge.layers.enc5.inputs import Inputs, arena_to_features
from tcforge.layers.enc5.layout import IMAGE_BYTES, weight_map
from tcforge.layers.enc5.weights import WeightImage


def parse_extent(text: str) -> tuple[int, int]:
    """'40x23' -> (40, 23)."""
    try:
        ex, ey = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise TcforgeError(f"--extent expects EXxEY (e.g. 40x23), got {text!r}") from None
    if ex < 1 or ey < 1:
        raise TcforgeError(f"--extent {text}: both extents must be positive token counts (e.g. 40x23)")
    return ex, ey


def parse_pair(text: str, name: str) -> tuple[int, int]:
    """'3,4' -> (3, 4)."""
    try:
        a, b = (int(v) for v in text.split(","))
    except ValueError:
        raise TcforgeError(f"{name} expects A,B (two integers), got {text!r}") from None
    return a, b


def parse_phases(text: str | None) -> tuple[int, ...]:
    """'11,13-15' -> (11, 13, 14, 15); None -> ()."""
    if not text:
        return ()
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise TcforgeError(f"--stages expects phase numbers like 11,13-15, got {text!r}") from None
        if last < first:
            raise TcforgeError(f"--stages: the range {part!r} runs backwards (write {last}-{first})")
        out += list(range(first, last + 1))
    return tuple(out)


def _seed(text: str) -> int:
    """A --seed value: a non-negative integer (numpy's generators take no negative seed)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {v}")
    return v


def load_weights(spec: str, seed: int, asm: Assumptions) -> WeightImage:
    """'synthetic' -> WeightImage.synthetic(seed); anything else is a file path."""
    if spec == "synthetic":
        return WeightImage.synthetic(seed)
    return WeightImage.from_file(input_file(spec, "--weights"), image_size=asm.image_size)


def load_inputs(args: argparse.Namespace) -> Inputs:
    """Synthetic inputs of --extent, or --input (raw arena bytes) + --texture (.npy uint16 (ey, ex, 4)) files."""
    ex, ey = parse_extent(args.extent)
    ox, oy = parse_pair(args.origin, "--origin")
    if args.input is None:
        if args.texture is not None:
            raise TcforgeError("--texture needs --input as well")
        return Inputs.synthetic((ex, ey), args.seed, ox=ox, oy=oy)
    p = input_file(args.input, "--input")
    data = np.frombuffer(p.read_bytes(), dtype=np.uint8)
    if args.texture is None:
        tex = np.zeros((ey, ex, 4), np.uint16)
    else:
        try:
            tex = np.load(input_file(args.texture, "--texture"), allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise TcforgeError(f"--texture: cannot read {args.texture!r} as .npy ({exc})") from None
    return Inputs(ex, ey, data, tex, ox, oy)


def native_available() -> bool:
    """True when this machine can run the native kernel (torch with an sm_90 GPU, and nvcc)."""
    from tcforge.layers.enc5 import gpu

    return bool(gpu.available())


# CPU reference seconds per window on one core of the 2-core CI machine (40x23: 15 windows in one batch)
SECONDS_PER_WINDOW = {"ada": 0.17, "hopper": 0.12}
ANNOUNCE_SECONDS = 30  # estimates past this are printed before starting
CONFIRM_SECONDS = 600  # past this the run needs --yes


def estimate_seconds(windows: int, numerics: str) -> float:
    """The CPU reference's expected time for `windows` windows."""
    return windows * SECONDS_PER_WINDOW.get(numerics, 0.17)


def _check_scale(windows: int, args: argparse.Namespace) -> None:
    est = estimate_seconds(windows, args.numerics)
    if est > CONFIRM_SECONDS and not args.yes:
        raise TcforgeError(f"--extent {args.extent}: {windows} windows on the CPU reference would take about "
                           f"{_duration(est)}; pass --yes to run it anyway, or choose a smaller --extent / --window")
    if est > ANNOUNCE_SECONDS and not args.quiet:
        print(f"enc5: {windows} windows on the CPU reference: about {_duration(est)}", file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min" if seconds >= 90 else \
        f"{seconds:.0f} s"


def _cmd_run(args: argparse.Namespace) -> int:
    # every cheap check first (values, paths, environment, scale), then the output folder, then the work
    asm = Assumptions.parse(args.assume)
    ex, ey = parse_extent(args.extent)
    ox, oy = parse_pair(args.origin, "--origin")
    for option, path in (("--weights", None if args.weights == "synthetic" else args.weights),
                         ("--input", args.input), ("--texture", args.texture)):
        if path is not None:
            input_file(path, option)
    backend = args.backend
    if backend != "cpu":
        check_tool_environment()
    if backend == "auto":
        backend = "native" if native_available() else "cpu"
    elif backend == "native" and not native_available():
        raise TcforgeError("--backend native: no native enc5 kernel or no suitable GPU here (use --backend cpu)")
    if backend == "cpu":
        windows = 1 if args.window is not None else launch_geometry(ex, ey, ox, oy, asm.grid).windows
        _check_scale(windows, args)
    out = output_dir(args.out, "--out")
    weights = load_weights(args.weights, args.seed, asm)
    inputs = load_inputs(args)
    t0 = time.perf_counter()
    if backend == "native":
        from tcforge.layers.enc5 import gpu
        from tcforge.layers.enc5.gpu.api import choose_hopper_variant
        from tcforge.layers.enc5.gpu.kernel import Geometry

        result = gpu.run(weights, inputs, numerics=args.numerics, assumptions=asm)
        import torch

        sms = torch.cuda.get_device_properties(0).multi_processor_count
        kernel_form = (choose_hopper_variant(Geometry(inputs.ex, inputs.ey).windows, sms)
                       if args.numerics == "hopper" else "ada")
    else:
        from tcforge.layers.enc5.reference import reference

        with Counter(windows, "enc5 reference", "window", quiet=args.quiet) as bar:
            result = reference(weights, inputs, numerics=args.numerics, assumptions=asm,
                               stages=parse_phases(args.stages), windows=None if args.window is None else [args.window],
                               progress=bar.update)
    seconds = time.perf_counter() - t0
    summary = _write_outputs(out, result, inputs, asm)
    if result.stages:
        arrays = {f"p{p}_w{w}_z{z}_{name}": m for (p, w, z), st in result.stages.items() for name, m in st.items()}
        np.savez_compressed(out / "stages.npz", **arrays)
        summary["files"].append("stages.npz")
    summary.update({"backend": backend, "numerics": args.numerics, "seconds": round(seconds, 3),
                    "weights": args.weights, "assumptions": asm.non_default()})
    if backend == "native":
        summary["kernel"] = kernel_form  # hopper: one CTA per window or a 2-CTA cluster per window (same bits)
    if args.compare:
        from tcforge.layers.enc5.semantic import compare, semantic

        d = compare(result, semantic(weights, inputs, assumptions=asm), inputs.ex, inputs.ey)
        summary["vs_float_model"] = d.__dict__
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _print_summary(summary, result)
    return 0


def _write_outputs(out: Path, result, inputs: Inputs, asm: Assumptions) -> dict:
    (out / "arena.bin").write_bytes(result.arena.tobytes())
    np.save(out / "surface.npy", result.surface)
    rgb = result.surface.view(np.float16).astype(np.float32)[..., :3]
    write_png(out / "surface.png", upscale(to_uint8(rgb, 0.0, 1.0), 8))
    feats = arena_to_features(result.arena, inputs.ex, inputs.ey, asm.arena_record_order)
    from tcforge.numerics.codecs import E4M3_VALUES

    vals = E4M3_VALUES[feats].astype(np.float32)
    chans = [0, 1, 2]
    write_png(out / "arena_ch0-2.png", upscale(to_uint8(vals[..., chans], -3.0, 3.0), 8))
    return {
        "extent": [inputs.ex, inputs.ey], "origin": [inputs.ox, inputs.oy], "grid": list(result.geometry.grid),
        "windows": len(result.windows),
        "files": ["arena.bin", "surface.npy", "surface.png", "arena_ch0-2.png", "summary.json"],
        "arena_bytes": int(result.arena.size),
        "surface_rgb_mean": [round(float(v), 5) for v in np.nanmean(rgb.reshape(-1, 3), axis=0)],
        "arena_rms": round(float(np.sqrt(np.mean(vals**2))), 5),
        "stages": {k: {a: round(b, 5) for a, b in v.as_dict().items()} for k, v in result.stats.items()},
    }


def _print_summary(s: dict, result) -> None:
    print(f"enc5: extent {s['extent'][0]}x{s['extent'][1]} tokens, grid {s['grid'][0]}x{s['grid'][1]} "
          f"({s['windows']} windows), backend {s['backend']}{' (' + s['kernel'] + ')' if 'kernel' in s else ''}, "
          f"numerics {s['numerics']}, {s['seconds']:.2f} s")
    print(f"  arena {s['arena_bytes']} bytes (rms {s['arena_rms']}), surface RGB mean {s['surface_rgb_mean']}")
    print("  stage statistics (rms / max|x| / zero fraction / saturated fraction):")
    for name, st in s["stages"].items():
        print(f"    {name:<14} {st['rms']:>9.4f} {st['max_abs']:>9.4f} {st['zero_frac']:>7.4f} {st['sat_frac']:>7.4f}")
    if "vs_float_model" in s:
        d = s["vs_float_model"]
        print(f"  vs float model: surface PSNR {d['surface_psnr_db']:.2f} dB, arena max|Δ| {d['arena_max_abs']:.4f}, "
              f"arena rms Δ {d['arena_rms']:.4f} (signal rms {d['arena_ref_rms']:.4f})")
    if s["assumptions"]:
        print(f"  non-default assumptions: {s['assumptions']}")
    print(f"  wrote {', '.join(s['files'])}")


def _cmd_phases(args: argparse.Namespace) -> int:
    if args.json:
        import dataclasses

        doc = [dataclasses.asdict(p) | {"chains": p.chains, "k_steps": p.k_steps} for p in PHASES]
        print(json.dumps(doc, indent=1))
        return 0
    print(phase_table())
    if args.detail:
        for p in PHASES:
            def fmt(o) -> str:
                where = "" if o.base is None else f" @{o.base}" + (f" + {o.tidz}" if o.tidz else "")
                return f"{o.kind}{where}: {o.detail}"

            chain = f", C chained from P{p.chain_from}" if p.chain_from else ""
            print(f"\nP{p.index}: {p.m}x{p.n}x{p.k} per warp, {p.k_steps} k-step(s), warps 0..{p.warps - 1}{chain}")
            print(f"  A  {fmt(p.a)}\n  B  {fmt(p.b)}\n  C  {fmt(p.c)}")
            print(f"  E{p.index} s{p.epilogue.first}-s{p.epilogue.last}: {'; '.join(p.epilogue.ops)}")
    return 0


def _cmd_assumptions(args: argparse.Namespace) -> int:
    print(format_catalogue(Assumptions.parse(args.assume)))
    print(f"\n{len(CATALOGUE)} assumptions; select others with --assume name=value (tcforge enc5 run --assume ...)")
    return 0


def _cmd_layout(args: argparse.Namespace) -> int:
    ex, ey = parse_extent(args.extent)
    geo = launch_geometry(ex, ey)
    print(f"launch at {ex}x{ey} tokens: grid {geo.grid}, block {geo.block}, {geo.smem_bytes} B shared, "
          f"{geo.param_bytes} B parameters")
    print("parameter block:")
    for f in PARAMS:
        print(f"  +{f.offset:<4} {f.type:<7} {f.name:<9} {f.use}")
    print(f"  never read: {', '.join('+' + str(o) for o in UNREAD_PARAM_OFFSETS)}")
    print(f"weight image ({IMAGE_BYTES} bytes):")
    for r in weight_map():
        print(f"  [{r.start:>6}, {r.end:>6}) {r.name:<18} {r.kind:<15} {str(r.shape):<10} {r.read_by}")
    return 0


def _cmd_weights(args: argparse.Namespace) -> int:
    path = output_file(args.out, "--out", stdout=False)
    img = WeightImage.synthetic(args.seed)
    path.write_bytes(bytes(img))
    print(f"wrote synthetic weight image (seed {args.seed}, {IMAGE_BYTES} bytes) to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of `tcforge enc5` (run, phases, assumptions, layout, weights)."""
    ap = ArgumentParser(prog="tcforge enc5", description="The enc5 Swin encoder layer.")
    sub = ap.add_subparsers(dest="cmd", metavar="{run,phases,assumptions,layout,weights}")
    run = sub.add_parser("run", help="run the layer; write arena.bin, surface.npy, PNGs and summary.json")
    run.add_argument("--weights", default="synthetic", help="'synthetic' or a 431,136-byte weight-image file")
    run.add_argument("--seed", type=_seed, default=0, help="seed of the synthetic weights / inputs")
    run.add_argument("--extent", default="40x23", help="token extents EXxEY (default 40x23 = 1280x720 input)")
    run.add_argument("--origin", default="0,0", help="block-origin offsets OX,OY (param+80)")
    run.add_argument("--input", default=None, help="raw input arena file (5·ey·ex·32 bytes); default synthetic")
    run.add_argument("--texture", default=None, help=".npy uint16 (ey, ex, 4) RGBA16F texture for E61")
    run.add_argument("--numerics", choices=("ada", "hopper"), default="ada", help="mma model (default ada, sm_89)")
    run.add_argument("--backend", choices=("auto", "cpu", "native"), default="auto",
                     help="auto: the native kernel when present with a GPU, else the CPU reference")
    run.add_argument("--assume", action="append", default=[], metavar="NAME=VALUE", help="override an assumption")
    run.add_argument("--stages", default=None, help="phases whose A/B/C/D to save in stages.npz, e.g. 1,11-13")
    run.add_argument("--window", type=int, default=None, help="compute only this window (ctaid.x + gridDim.x·ctaid.y)")
    run.add_argument("--compare", action="store_true", help="also report the distance to the float32 model")
    run.add_argument("--out", default="out/enc5", help="output directory, created if missing (default out/enc5)")
    run.add_argument("--yes", action="store_true", help=f"run even when the CPU reference would take over "
                     f"{CONFIRM_SECONDS // 60} minutes")
    run.add_argument("--quiet", action="store_true", help="no progress bar or time estimate on stderr")
    run.set_defaults(fn=_cmd_run)
    ph = sub.add_parser("phases", help="print the 61-phase table (analysis §2.1 with the §2.2 corrections)")
    ph.add_argument("--detail", action="store_true", help="also list each phase's A/B/C sources and epilogue ops")
    ph.add_argument("--json", action="store_true", help="print the whole descriptor as JSON instead")
    ph.set_defaults(fn=_cmd_phases)
    asm = sub.add_parser("assumptions", help="print every open point: evidence, choice, alternatives")
    asm.add_argument("--assume", action="append", default=[], metavar="NAME=VALUE",
                     help="show the catalogue with this assumption overridden")
    asm.set_defaults(fn=_cmd_assumptions)
    lay = sub.add_parser("layout", help="print the parameter block, launch geometry and weight-image map")
    lay.add_argument("--extent", default="40x23", help="token extents EXxEY of the launch (default 40x23)")
    lay.set_defaults(fn=_cmd_layout)
    wts = sub.add_parser("weights", help="write a synthetic weight image file")
    wts.add_argument("--seed", type=_seed, default=0, help="seed of the synthetic image (default 0)")
    wts.add_argument("--out", required=True, help="file to write (431,136 bytes)")
    wts.set_defaults(fn=_cmd_weights)
    return ap


def main(argv: list[str]) -> int:
    """Entry point of `tcforge enc5`."""
    ap = build_parser()
    args = ap.parse_args(argv)
    require_subcommand(ap, args.cmd)
    return int(args.fn(args))


# `tcforge bench enc5` -------------------------------------------------------------------------------------------------


def measure(extent: tuple[int, int], numerics: str, repeat: int) -> dict:
    """Best and all wall times of `reference` on synthetic data of `extent` (after one untimed warm-up window)."""
    from tcforge.layers.enc5.reference import reference

    weights, inputs = WeightImage.synthetic(0), Inputs.synthetic(extent, 0)
    reference(weights, inputs, numerics=numerics, windows=[0])  # warm-up: numerics tables, imports
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = reference(weights, inputs, numerics=numerics)
        times.append(time.perf_counter() - t0)
    return {"backend": "cpu-reference", "numerics": numerics, "extent": list(extent), "windows": len(res.windows),
            "seconds_best": round(min(times), 3), "seconds_all": [round(t, 3) for t in times],
            "seconds_per_window": round(min(times) / len(res.windows), 4)}


def bench(argv: list[str]) -> int:
    """`tcforge bench enc5`: seconds per frame of the CPU reference as JSON (native kernel: bench/enc5_native.py)."""
    ap = ArgumentParser(prog="tcforge bench enc5", description=bench.__doc__)
    ap.add_argument("--extent", default="40x23", help="token extents (default 40x23 = a 1280x720 frame)")
    ap.add_argument("--numerics", choices=("ada", "hopper", "both"), default="both",
                    help="which mma model(s) to time (default both)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per model; the best counts (default 1)")
    ap.add_argument("--json", default="bench/results/enc5.json", help="where to write the results")
    args = ap.parse_args(argv)
    path = output_file(args.json, "--json", make_parent=True, stdout=False)  # checked before the seconds of measuring
    extent = parse_extent(args.extent)
    models = ("ada", "hopper") if args.numerics == "both" else (args.numerics,)
    rows = [measure(extent, m, max(1, args.repeat)) for m in models]
    for r in rows:
        print(f"enc5 {r['backend']} numerics={r['numerics']} extent {extent[0]}x{extent[1]} ({r['windows']} windows): "
              f"{r['seconds_best']:.2f} s per frame ({r['seconds_per_window']:.3f} s per window)")
    out = {"benchmark": "enc5", "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                            "processor": platform.processor() or platform.machine()},
           "native_available": native_available(), "results": rows}
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


# PNG output (8-bit grey, RGB and RGBA; zlib only) ---------------------------------------------------------------------

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPE = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type (grey, RGB, RGBA)


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 image shaped (H, W), (H, W, 1), (H, W, 3) or (H, W, 4)."""
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise TcforgeError(f"image: expected uint8 pixels, got {img.dtype}")
    if img.ndim == 2:
        img = img[..., None]
    if img.ndim != 3 or img.shape[2] not in _COLOUR_TYPE or img.shape[0] < 1 or img.shape[1] < 1:
        raise TcforgeError(f"image: expected shape (H, W) or (H, W, 1|3|4) with H, W >= 1, got {np.shape(image)}")
    h, w, c = img.shape
    header = struct.pack(">IIBBBBB", w, h, 8, _COLOUR_TYPE[c], 0, 0, 0)
    rows = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * c)], axis=1)  # filter type 0 per row
    idat = _chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
    return _SIGNATURE + _chunk(b"IHDR", header) + idat + _chunk(b"IEND", b"")


def write_png(path: str | Path, image: np.ndarray) -> Path:
    """Write `image` (see `encode_png`) to `path`; returns the path."""
    p = Path(path)
    p.write_bytes(encode_png(image))
    return p


def to_uint8(x: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Map finite floats linearly from [lo, hi] (default: the data's range) to 0..255; NaN/inf become 0."""
    v = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(v)
    lo = float(np.min(v[finite])) if lo is None and finite.any() else (0.0 if lo is None else lo)
    hi = float(np.max(v[finite])) if hi is None and finite.any() else (1.0 if hi is None else hi)
    scale = 255.0 / (hi - lo) if hi > lo else 0.0
    out = np.clip(np.round((np.where(finite, v, lo) - lo) * scale), 0, 255)
    return out.astype(np.uint8)


def upscale(image: np.ndarray, factor: int) -> np.ndarray:
    """Nearest-neighbour enlargement by an integer factor (token grids are small)."""
    if factor < 1:
        raise TcforgeError(f"factor must be >= 1, got {factor}")
    return np.repeat(np.repeat(np.asarray(image), factor, axis=0), factor, axis=1)
