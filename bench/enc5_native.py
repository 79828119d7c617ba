"""Benchmark of the native enc5 kernel on the GPU: µs per frame at 720p (40×23 tokens) and 4K (120×68), frames per
second for a batch of 64, the Ada-emulation mode, the float PyTorch model (eager) and the CPU reference, and the
layer's physical floor. Each kernel row is timed as CUDA-graph replays and, beside that, as a user's eager loop sees
it (`native_batch` with fresh outputs through the launch cache: wall and host µs per call).

`--durations`: the forms' own durations on the device clock (CUPTI kernel records through torch.profiler) beside the
CUDA-graph per-launch times, and the timing twin's CTA lifetimes: how much of a launch lies between two dependent
kernels and how much outside every CTA. `--launches N`: N plain launches of one form per dispatch order on one random
frame, nothing timed, for a profiler to attach to (ncu, nsys, compute-sanitizer): e.g. `ncu --kernel-name
enc5_hopper_split_occ3 --metrics gpu__time_duration.sum,sm__cycles_active.max python3 -m bench.enc5_native --launches
2 --extent 120x68 --orders swaps,plain`.

Usage (on a machine with an sm_90 GPU): python3 -m bench.enc5_native [--json bench/results/enc5_native.json]
[--cpu-reference] [--quick] [--torch] [--durations] [--launches N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

EXTENTS = ((40, 23), (120, 68))
DURATION_FORMS = ("hopper_split", "hopper_split_occ3", "hopper")
H200 = {"f16_mma_tflops": 660.0, "hbm_tb_s": 4.3}  # mma.sync f16 rate (lead, ~2/3 of the wgmma peak); measured copy


def layer_floor(ex: int, ey: int) -> dict:
    """FLOPs, compulsory bytes and the two times they imply for one frame (enc5 runs e4m3 mma as f16 HMMA on sm_90)."""
    windows = -(-ex // 8) * -(-ey // 8)
    mac = (96 * 160 * 32 * 2 * 8  # P1–P10: Q and V, 8 heads, 96 rows
           + 64 * 96 * 32 * 8 + 64 * 32 * 96 * 8  # P11, P12
           + 64 * 32 * 160 * 8  # P13–P20
           + 64 * 160 * 640 * 2  # P21–P60
           + 64 * 160 * 16)  # P61
    flops = 2 * mac * windows
    nbytes = 431_136 + 2 * 160 * ex * ey + 2 * 8 * ex * ey  # weights, input + arena, texture + surface
    return {"windows": windows, "gflop": round(flops / 1e9, 3), "mbytes": round(nbytes / 1e6, 3),
            "flop_floor_us": round(flops / (H200["f16_mma_tflops"] * 1e12) * 1e6, 2),
            "byte_floor_us": round(nbytes / (H200["hbm_tb_s"] * 1e12) * 1e6, 2),
            "dependent_mma_steps": 5 + 1 + 3 + 8 + 20 * 6 + 5}


def time_kernel(fn, warmup: int = 10, reps: int = 100, per_graph: int = 20) -> float:
    """Median µs per fn() call: `per_graph` calls captured in one CUDA graph, about 2 x reps / per_graph replays (at
    least 3) timed with CUDA events (Python launch overhead stays out); single calls where capture fails
    (`tcforge.gemm.bench.graph_us`)."""
    from tcforge.gemm.bench import graph_us

    return graph_us(fn, per_graph=per_graph, replays=max(3, reps // per_graph * 2), warmup=warmup, fallback=True)


def random_frames(frames: int, ex: int, ey: int):
    """Random e4m3 input arenas (no NaN codes) and RGBA16F texels in [0, 1) on the GPU."""
    import torch

    inp = torch.randint(0, 256, (frames, 5 * ey * ex * 32), dtype=torch.uint8, device="cuda")
    inp[(inp & 0x7F) == 0x7F] = 0
    tex = torch.rand((frames, ey, ex, 4), device="cuda").half().view(torch.int16)
    return inp, tex


def result_row(extent: str, impl: str, frames: int, us: float, digits: int = 2, fps_digits: int = 1,
               **extra) -> dict:
    """One benchmark row: µs per launch and per frame, frames per second."""
    return {"extent": extent, "impl": impl, "frames": frames, "us_per_launch": round(us, digits),
            "us_per_frame": round(us / frames, digits), "fps": round(frames * 1e6 / us, fps_digits), **extra}


# benchmark row names of the kernel forms (None: the form `native_batch` picks by the launch size)
IMPL = {None: "native-default", "hopper": "native-hopper", "hopper_split": "native-hopper-split",
        "hopper_split_occ3": "native-hopper-split-occ3", "ada": "native-ada"}


def kernel_rows(quick: bool = False, options: tuple[str, ...] = ()) -> list[dict]:
    """µs per launch / per frame and fps of the kernel for each extent, mode, kernel form and batch size."""
    import torch

    from tcforge.gemm.bench import eager_us
    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    rows = []
    forms = [("hopper", None, 1), ("hopper", "hopper", 1), ("hopper", "hopper", 64), ("hopper", "hopper_split", 1),
             ("hopper", "hopper_split", 64), ("hopper", "hopper_split_occ3", 1), ("ada", "ada", 1)]
    if os.environ.get("ENC5_SKIP_SPLIT"):  # the device round's smoke test saw the split kernel hang
        forms = [f for f in forms if not (f[1] or "").startswith("hopper_split")]
    for ex, ey in EXTENTS:
        for numerics, variant, frames in forms:
            inp, tex = random_frames(frames, ex, ey)
            oa, os_ = torch.zeros_like(inp), torch.zeros_like(tex)
            reps = 20 if quick else 100

            def call(i=inp, t=tex, a=oa, s=os_, n=numerics, x=ex, y=ey, v=variant) -> None:
                native_batch(dw, i, t, x, y, numerics=n, arena=a, surface=s, options=options, variant=v)

            us = time_kernel(call, warmup=3, reps=reps, per_graph=20)
            # what a user's loop sees: fresh outputs through the launch cache, host and wall µs per call
            (host, wall), = eager_us([lambda i=inp, t=tex, n=numerics, x=ex, y=ey, v=variant:
                                      native_batch(dw, i, t, x, y, numerics=n, variant=v, options=options)], 50)
            rows.append(result_row(f"{ex}x{ey}", IMPL[variant], frames, us, host_us=host, eager_us=wall))
            print("bench", rows[-1], flush=True)
    return rows


def torch_rows(compiled: bool = True) -> list[dict]:
    """The float32 PyTorch model of the same layer (`enc5.semantic.torch_model`), one 720p frame: eager, and
    `torch.compile`d (default mode; its compile time is reported, not timed in)."""
    import torch

    from tcforge.layers.enc5 import Assumptions, Inputs, WeightImage
    from tcforge.layers.enc5.semantic import _gather, torch_model

    w, inp = WeightImage.synthetic(11), Inputs.synthetic((40, 23), 12)
    model = torch_model(w, device="cuda")
    x, _, _ = _gather(inp, Assumptions(), np.arange(15))
    xt = torch.as_tensor(np.asarray(x, dtype=np.float32), device="cuda")
    rows = []
    with torch.no_grad():
        us = time_kernel(lambda: model(xt), warmup=3, reps=20, per_graph=1)
        rows.append(result_row("40x23", "torch-eager-fp32", 1, us))
        print("bench", rows[-1], flush=True)
        if compiled:
            try:
                t0 = time.perf_counter()
                cmodel = torch.compile(model)
                ref, got = model(xt), cmodel(xt)
                torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0
                pairs = zip(ref, got, strict=True) if isinstance(ref, tuple | list) else [(ref, got)]
                err = max(float((g.float() - r.float()).abs().max()) for r, g in pairs)
                us = time_kernel(lambda: cmodel(xt), warmup=3, reps=20, per_graph=1)
                rows.append(result_row("40x23", "torch-compile-fp32", 1, us, compile_s=round(compile_s, 1),
                                       max_abs_diff_vs_eager=err))
                print("bench", rows[-1], flush=True)
            except Exception as exc:  # the eager row stands on its own
                print(f"torch.compile failed: {exc!r}", flush=True)
    return rows


def torch_comparison() -> dict:
    """One run: the native kernel (both forms and the API's default) and the PyTorch model at 720p, with ratios."""
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    inp, tex = random_frames(1, 40, 23)
    oa, os_ = torch.zeros_like(inp), torch.zeros_like(tex)
    rows = []
    for variant in ("hopper", "hopper_split", None):
        us = time_kernel(lambda v=variant: native_batch(dw, inp, tex, 40, 23, arena=oa, surface=os_, variant=v),
                         warmup=3, reps=100)
        rows.append(result_row("40x23", IMPL[variant], 1, us))
        print("bench", rows[-1], flush=True)
    rows += torch_rows()
    by = {r["impl"]: r["us_per_frame"] for r in rows}
    ratios = {f"{k}/native-default@720p": round(by[k] / by["native-default"], 1)
              for k in ("torch-eager-fp32", "torch-compile-fp32") if k in by}
    return {"device": torch.cuda.get_device_name(), "when": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows,
            "ratios": ratios}


CPU_REF_CODE = ("import time; from tcforge.layers.enc5 import WeightImage, Inputs, reference; "
                "w, x = WeightImage.synthetic(11), Inputs.synthetic((40, 23), 12); "
                "reference(w, x, numerics='hopper', windows=[0]); t = time.perf_counter(); "
                "reference(w, x, numerics='hopper'); print(time.perf_counter() - t)")


def start_cpu_reference() -> subprocess.Popen:
    """Time one 720p frame of the CPU reference in a background process (runs while the GPU is measured)."""
    return subprocess.Popen([sys.executable, "-c", CPU_REF_CODE], stdout=subprocess.PIPE, text=True)


def finish_cpu_reference(proc: subprocess.Popen) -> dict:
    """The CPU reference's row, from its background process."""
    out, _ = proc.communicate(timeout=300)
    sec = float(out.strip().splitlines()[-1])
    return result_row("40x23", "cpu-reference-hopper", 1, sec * 1e6, digits=1, fps_digits=4)


def run(quick: bool = False, cpu_reference: bool = False, options: tuple[str, ...] = ()) -> dict:
    """All rows plus the floors and the ratios the issue asks for (`options`: nvcc flags of a candidate build)."""
    import torch

    proc = start_cpu_reference() if cpu_reference else None
    rows = kernel_rows(quick, options)
    try:
        rows.extend(torch_rows())
    except Exception as exc:  # the comparison must not hide the kernel's own figures
        print(f"torch model failed: {exc!r}", flush=True)
    if proc is not None:
        rows.append(finish_cpu_reference(proc))
    by = {(r["extent"], r["impl"], r["frames"]): r["us_per_frame"] for r in rows}
    native720 = by.get(("40x23", "native-default", 1))
    ratios = {}
    for impl in ("torch-eager-fp32", "torch-compile-fp32", "cpu-reference-hopper"):
        other = by.get(("40x23", impl, 1))
        if other and native720:
            ratios[f"{impl}/native-default@720p"] = round(other / native720, 1)
    return {"device": torch.cuda.get_device_name(), "when": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows,
            "ratios": ratios, "floor": {f"{ex}x{ey}": layer_floor(ex, ey) for ex, ey in EXTENTS}}


def table(result: dict) -> str:
    """A compact text table of the rows."""
    lines = [f"{'extent':8s} {'impl':22s} {'frames':>6s} {'us/launch':>10s} {'us/frame':>9s} {'fps':>10s} "
             f"{'eager us':>9s} {'host us':>8s}"]
    for r in result["rows"]:
        lines.append(f"{r['extent']:8s} {r['impl']:22s} {r['frames']:6d} {r['us_per_launch']:10.2f} "
                     f"{r['us_per_frame']:9.2f} {r['fps']:10.1f} {r.get('eager_us', float('nan')):9.2f} "
                     f"{r.get('host_us', float('nan')):8.2f}")
    lines.append(f"ratios: {result['ratios']}")
    lines.append(f"floors: {result['floor']}")
    return "\n".join(lines)


def cupti_durations(fn, launches: int = 30) -> list[float]:
    """Device-clock durations (µs) of the enc5 kernels `fn` launches, one record per launch."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            fn()
        torch.cuda.synchronize()
    return [e.time_range.end - e.time_range.start for e in prof.events() if "enc5" in e.name]


def cta_span_us(weights, inp, tex, ex: int, ey: int, variant: str, options: tuple[str, ...] = (),
                reorder: bool = True) -> float:
    """First CTA start to last CTA end of one launch of the form's timing twin (a tool form of tools/enc5_kernels/;
    globaltimer stamps)."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    nwin = -(-ex // 8) * -(-ey // 8)
    buf = torch.zeros((nwin * 8 * 16,), dtype=torch.int64, device="cuda")
    for _ in range(3):
        native_batch(weights, inp, tex, ex, ey, debug=buf, variant=variant, options=options, reorder=reorder)
    torch.cuda.synchronize()
    st = buf.cpu().numpy().reshape(nwin, 8, 16)
    return float(st[:, :, 13].max() - st[:, :, 12][st[:, :, 12] > 0].min()) / 1e3


def durations() -> dict:
    """Each form's device-clock durations beside its CUDA-graph per-launch time, and the timing twin's CTA span."""
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    rows = []
    for ex, ey in EXTENTS:
        inp, tex = random_frames(1, ex, ey)
        oa, os_ = torch.zeros_like(inp), torch.zeros_like(tex)
        for form in DURATION_FORMS:
            def fn(f=form, i=inp, t=tex, x=ex, y=ey, a=oa, s=os_):
                return native_batch(dw, i, t, x, y, arena=a, surface=s, variant=f)
            d = cupti_durations(fn)
            row = {"extent": f"{ex}x{ey}", "form": form, "cupti_median_us": round(float(np.median(d)), 2),
                   "cupti_min_us": round(float(np.min(d)), 2), "launches": len(d),
                   "graph_per_launch_us": round(time_kernel(fn, warmup=3, reps=100), 2)}
            if form != "hopper":
                row["timing_twin_cta_span_us"] = round(cta_span_us(dw, inp, tex, ex, ey, form + "_timing"), 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"device": torch.cuda.get_device_name(), "rows": rows}


def plain_launches(extent: str, variant: str, orders: str, launches: int) -> int:
    """`launches` launches of one form per dispatch order (swaps|plain) on one random frame, nothing timed."""
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    ex, ey = (int(v) for v in extent.split("x"))
    dw = device_weights(WeightImage.synthetic(11))
    inp, tex = random_frames(1, ex, ey)
    for order in orders.split(","):
        for _ in range(launches):
            native_batch(dw, inp, tex, ex, ey, variant=variant, reorder=order == "swaps")
    torch.cuda.synchronize()
    return 0


def main(argv: list[str]) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", default=None, help="where the JSON goes (default bench/results/enc5_native.json, with "
                    "--durations bench/results/enc5_kernel_durations.json)")
    ap.add_argument("--cpu-reference", action="store_true", help="also time one CPU reference frame (background)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--torch", action="store_true", help="only the 720p comparison with the PyTorch model (eager and "
                    "torch.compile) in one run; JSON to --json")
    ap.add_argument("--durations", action="store_true", help="only the device-clock durations and CTA spans")
    ap.add_argument("--launches", type=int, default=0, help="only this many plain launches per order, for a profiler")
    ap.add_argument("--extent", default="120x68", help="--launches: EXxEY tokens")
    ap.add_argument("--variant", default="hopper_split_occ3", help="--launches: the kernel form (kernel.FORMS)")
    ap.add_argument("--orders", default="swaps,plain", help="--launches: comma list of swaps|plain, the dispatch order")
    args = ap.parse_args(argv)
    if args.launches:
        return plain_launches(args.extent, args.variant, args.orders, args.launches)
    if args.durations:
        args.json = args.json or "bench/results/enc5_kernel_durations.json"
        result = durations()
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
        return 0
    args.json = args.json or "bench/results/enc5_native.json"
    if args.torch:
        result = torch_comparison()
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result["ratios"]))
        return 0
    result = run(args.quick, args.cpu_reference)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
