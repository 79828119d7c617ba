"""What a PyTorch user sees: tcforge's `matmul` and enc5 `native_batch` called eagerly, against torch.mm /
torch._scaled_mm measured the same way in the same run.

    python3 -m bench.eager [--shapes 16x4096x4096,...] [--combos bf16:bf16,fp16:fp32,e4m3:bf16] [--b-row] [--rounds 21]
        [--no-enc5] [--compile-check] [--breakdown] [--host-phases SECONDS] [--out bench/results/eager.json]
    python3 -m bench.eager --table bench/baselines/runtime.json:eager_h100

Per row, for tcforge and its torch peer: host µs per call (calls enqueued back to back, no synchronisation), eager
wall µs per call (the same calls, until the GPU is done) — the fewest of 21 alternating runs spread over 8 s, since
the host's speed flips between two levels every 0.5-8 s, with the median host µs and a torch.empty probe's beside
them — CUDA-graph replay µs per call, and
`triton.testing.do_bench`'s median (it flushes L2 between calls); the ratios are torch / tcforge (> 1: tcforge
faster). Graph and do_bench times come from interleaved rounds (tcforge, torch; then torch, tcforge; ...) and their
ratios are medians of per-round ratios, so drift of clocks and temperature under the power cap falls on both sides.
Also the tensor-map cost the eager path avoids (a fresh cuTensorMapEncodeTiled against
cuTensorMapReplaceAddress). `--compile-check` compiles a two-layer model through `tcforge.gemm.matmul` and a frame
through enc5 with torch.compile: graph breaks (torch._dynamo.explain), outputs equal to eager, CUDA-graph mode too.
`--breakdown` times each step of a remembered call alone, next to the floor of any launch from Python (`breakdown`).
`--host-phases SECONDS` only samples the host's speed over time (`host_phases`). `--table FILE[:KEY]` prints the
markdown table docs/runtime.md shows for a written result (KEY: an entry of a file of several, as bench/baselines/
runtime.json), and needs no GPU.
Needs an sm_90 GPU; b is column-major (as nn.Linear's weight.t() and torch._scaled_mm take it) unless --b-row.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from tcforge.gemm.bench import eager_calls, eager_runs, eager_us, graph_us, run_figures

SHAPES = [(16, 4096, 4096), (128, 4096, 4096), (1000, 1000, 1000), (4096, 4096, 4096), (8192, 8192, 8192)]
COMBOS = [("bf16", "bf16"), ("fp16", "fp32")]
EAGER_RUNS, SPREAD_S = 21, 8.0  # eager runs per side, spread over seconds: the host's speed flips every 0.5-8 s
ENC5_720P = (40, 23)  # the 720p frame's token extents, as bench/enc5_native.py counts them


def do_bench_us(fn: Any) -> float:
    """triton.testing.do_bench's median in µs (NaN where triton is missing)."""
    try:
        from triton.testing import do_bench
    except ImportError:
        return float("nan")
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median")) * 1e3


def host_figures(runs: list[tuple[float, float]]) -> dict[str, float]:
    """One callable's eager runs as figures: the fewest host and wall µs per call (the host at its fast speed) and
    the median host µs (its speed as it comes)."""
    host, wall, median = run_figures(runs)
    return {"host_us": host, "host_median_us": median, "wall_us": wall}


def measure(ours: Any, peer: Any, calls: int, probe: Any, runs: int, spread_s: float
            ) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Host and eager-wall µs per call of both callables and of `probe` (a torch.empty of the output: the host's
    speed then), their runs alternating and spread over `spread_s` seconds (`tcforge.gemm.bench.eager_runs`; warmed
    first: the first call of a shape compiles, plans and caches)."""
    for _ in range(3):
        ours(), peer()
    return tuple(host_figures(r) for r in eager_runs([ours, peer, probe], calls, runs, spread_s))  # type: ignore


class Clocks:
    """The mean SM clock (MHz) and power (W) over a stretch of work: NVML read every `every_s` on a thread (an empty
    dict where NVML is missing). The two sides of a large row run at the power cap, so their clocks say what a
    difference between graph-replay and do_bench ratios comes from."""

    def __init__(self, every_s: float = 0.01) -> None:
        import threading

        from tcforge.errors import DeviceUnavailableError
        from tcforge.runtime.nvml import Nvml

        self.every_s, self._stop, self._thread = every_s, threading.Event(), None
        self.samples: list[tuple[int, int]] = []
        try:
            self._nv: Any = Nvml(0)
        except DeviceUnavailableError:
            self._nv = None

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            s = self._nv.sample()
            self.samples.append((s.sm_mhz, s.power_mw))

    def __enter__(self) -> Clocks:
        import threading

        self.samples, self._stop = [], threading.Event()
        if self._nv is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def figures(self) -> dict[str, float]:
        """The stretch's mean SM MHz and W."""
        if not self.samples:
            return {}
        return {"mhz": round(statistics.fmean(c for c, _ in self.samples)),
                "watts": round(statistics.fmean(p for _, p in self.samples) / 1000, 1)}


def device_times(ours: Any, peer: Any, rounds: int, clocks: Clocks | None = None
                 ) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
    """Graph-replay and do_bench µs of both callables, taken in `rounds` interleaved rounds (the order flips each
    round, so clock and temperature drift fall on both sides): per-side medians and the median of per-round ratios.
    With `clocks`, each side's median SM clock and power per timing mode too (`graph_mhz`, `do_bench_watts`, ...)."""
    sides: list[dict[str, list[float]]] = [{"graph_us": [], "do_bench_us": []}, {"graph_us": [], "do_bench_us": []}]
    for r in range(rounds):
        for i in ((0, 1) if r % 2 == 0 else (1, 0)):
            fn = (ours, peer)[i]
            for mode, timer in (("graph", graph_us), ("do_bench", do_bench_us)):
                if clocks is None:
                    sides[i][f"{mode}_us"].append(timer(fn))
                    continue
                with clocks:
                    sides[i][f"{mode}_us"].append(timer(fn))
                for k, v in clocks.figures().items():
                    sides[i].setdefault(f"{mode}_{k}", []).append(v)
    med = [{k: round(statistics.median(v), 2) for k, v in s.items()} for s in sides]
    ratios: dict[str, Any] = {}
    for k in ("graph_us", "do_bench_us"):
        if all(v == v for v in sides[0][k] + sides[1][k]):
            per_round = [round(p / o, 3) for o, p in zip(sides[0][k], sides[1][k], strict=True)]
            ratios[f"ratio_{k[:-3]}"] = round(statistics.median(per_round), 3)
            ratios[f"ratio_{k[:-3]}_rounds"] = per_round  # the spread a reader weighs a difference of ratios by
    if "ratio_graph_rounds" in ratios and "ratio_do_bench_rounds" in ratios:  # paired by round: slow drift cancels
        quot = sorted(d / g for d, g in zip(ratios["ratio_do_bench_rounds"], ratios["ratio_graph_rounds"], strict=True))
        ratios["do_bench_over_graph"] = round(statistics.median(quot), 4)
        ratios["do_bench_over_graph_quartiles"] = [round(q, 4) for q in statistics.quantiles(quot, n=4)[::2]] \
            if len(quot) > 1 else [round(quot[0], 4)] * 2
    return med[0], med[1], ratios


def _ratios(ours: dict[str, float], peer: dict[str, float]) -> dict[str, float]:
    return {f"ratio_{k[:-3]}": round(peer[k] / ours[k], 3) for k in ours if ours[k] == ours[k] and ours[k] > 0}


def gemm_row(m: int, n: int, k: int, in_kind: str, out_kind: str, b_col: bool, rounds: int) -> dict[str, Any]:
    import torch

    from tcforge.gemm import matmul
    from tcforge.gemm.api import torch_dtype
    from tcforge.gemm.check import cublas, make_inputs

    a, b, sa, sb = make_inputs(m, n, k, in_kind, b_col or in_kind == "e4m3", seed=m + n + k)
    od = torch_dtype(out_kind)
    calls = eager_calls(2.0 * m * n * k)

    def ours():
        return matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb)

    def peer():
        return cublas(a, b, sa, sb, out_kind)

    mine, theirs = ours(), peer()
    torch.cuda.synchronize()
    row: dict[str, Any] = {"m": m, "n": n, "k": k, "in": in_kind, "out": out_kind,
                           "peer": "torch._scaled_mm" if sa is not None else "torch.mm",
                           "max_abs_diff_vs_peer": float((mine.float() - theirs.float()).abs().max())}
    row["tcforge"], row["torch"], row["probe"] = measure(
        ours, peer, calls, lambda: torch.empty(mine.shape, dtype=od, device="cuda"), EAGER_RUNS, SPREAD_S)
    row.update(_ratios(row["tcforge"], row["torch"]))
    # the large rows run at the power cap: their clocks and power per side and timing mode come too
    dev_ours, dev_peer, ratios = device_times(ours, peer, rounds, Clocks() if m * n * k >= 4096**3 else None)
    row["tcforge"].update(dev_ours)
    row["torch"].update(dev_peer)
    row.update(ratios)
    return row


def enc5_row(frames: int = 1) -> dict[str, Any]:
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    ex, ey = ENC5_720P
    w = device_weights(WeightImage.synthetic(0))
    inp = torch.randint(0, 256, (frames, 5 * ey * ex * 32), dtype=torch.uint8, device="cuda")
    inp[(inp & 0x7F) == 0x7F] = 0
    tex = torch.rand((frames, ey, ex, 4), device="cuda").half().view(torch.int16)
    def call():
        return native_batch(w, inp, tex, ex, ey)

    out = call()

    def probe():
        return torch.empty(out[0].shape, dtype=out[0].dtype, device="cuda")

    res, probe_res = (host_figures(r) for r in eager_runs([call, probe], 200, EAGER_RUNS, SPREAD_S))
    res.update(graph_us=round(graph_us(call), 2), do_bench_us=round(do_bench_us(call), 2))
    return {"layer": "enc5.native_batch", "ex": ex, "ey": ey, "frames": frames, "tcforge": res, "probe": probe_res}


def per_call_us(fn: Any) -> float:
    """Host µs per call of 200 back-to-back calls, fewest of five runs (`eager_us`'s host figure)."""
    return eager_us([fn], 200)[0][0]


NOOP = r'extern "C" __global__ void tcf_noop(float* p) { if (p != nullptr && threadIdx.x == 1024) *p = 0.f; }'


def breakdown() -> dict[str, Any]:
    """The host cost of each step of a remembered call, each timed alone (µs per call, fewest of 5 runs of 200), next
    to the floor any launch from Python pays: torch.empty, a raw-stream lookup, and cuLaunchKernelEx of an empty
    kernel through cuda-python. Rows: matmul 16x4096x4096 bf16 (b column-major; also into a given C, out=, beside
    torch.mm's out=) and enc5 native_batch at 720p (also into given outputs)."""
    import ctypes
    import gc

    import torch

    from tcforge.gemm import eager as gemm_eager
    from tcforge.gemm import matmul
    from tcforge.gemm.check import make_inputs
    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch
    from tcforge.layers.enc5.gpu import eager as enc5_eager
    from tcforge.runtime import driver, loader
    from tcforge.runtime.streams import current_device, current_stream

    out: dict[str, Any] = {}
    fn, _ = loader.get_function(NOOP, "tcf_noop", tag="noop")
    noop = driver.Launch(fn, (1, 1, 1), (32, 1, 1), [ctypes.c_void_p(0)])
    s = current_stream(0)
    out["floor"] = {"torch.empty": per_call_us(lambda: torch.empty((16, 4096), dtype=torch.bfloat16, device="cuda")),
                    "raw stream": per_call_us(lambda: current_stream(0)),
                    "current device": per_call_us(current_device),
                    "empty launch (cuda-python)": per_call_us(lambda: noop(s))}
    a, b, _, _ = make_inputs(16, 4096, 4096, "bf16", True, seed=1)
    matmul(a, b)
    k = gemm_eager.key(a, b, None, None, None, "auto", None)
    entry = gemm_eager._entries[k]
    p = entry.prepared

    c_shape, c_dtype = p._c_shape, p._c_dtype
    kept: list[Any] = [None]
    c_out = torch.empty(c_shape, dtype=c_dtype, device=a.device)

    def general() -> Any:  # what every remembered call did before `run`'s short path (timeline and copy plans still)
        p.bind(a, b, None, None, stream=s)
        p.launch(s)
        c = p.result()
        p.release()
        return c

    out["matmul 16x4096x4096 bf16"] = {
        "key": per_call_us(lambda: gemm_eager.key(a, b, None, None, None, "auto", None)),
        "lookup": per_call_us(lambda: gemm_eager._entries.get(k)),
        "torch.empty C": per_call_us(lambda: torch.empty(c_shape, dtype=c_dtype, device=a.device)),
        "run (torch.empty C, pointer patches, enqueue)": per_call_us(lambda: p.run(a, b, None, None, s)),
        "run, the caller keeping the last C (two blocks in turn: remembered maps)":
            per_call_us(lambda: kept.__setitem__(0, p.run(a, b, None, None, s))),
        "the general path (bind, launch, result, release), the caller keeping the last C":
            per_call_us(lambda: kept.__setitem__(0, general())),
        "enqueue alone": per_call_us(lambda: p._launch(s)),
        "whole call": per_call_us(lambda: matmul(a, b)),
        "torch.mm": per_call_us(lambda: torch.mm(a, b)),
        "whole call with out= (no allocation)": per_call_us(lambda: matmul(a, b, out=c_out)),
        "torch.mm with out=": per_call_us(lambda: torch.mm(a, b, out=c_out))}
    ex, ey = ENC5_720P
    w = device_weights(WeightImage.synthetic(0))
    inp = torch.randint(0, 256, (1, 5 * ey * ex * 32), dtype=torch.uint8, device="cuda")
    tex = torch.rand((1, ey, ex, 4), device="cuda").half().view(torch.int16)
    native_batch(w, inp, tex, ex, ey)
    ek = enc5_eager.key(torch, w, inp, tex, ex, ey, 0, 0, "hopper", None, (), True)
    e = enc5_eager._entries[ek]

    def outputs() -> None:
        torch.empty(e.arena_shape, dtype=torch.uint8, device=e.torch_device)
        torch.empty(e.surface_shape, dtype=torch.int16, device=e.torch_device)

    scratch = torch.empty(e.surface_bytes, dtype=torch.uint8, device="cuda")
    arena = torch.empty(e.arena_shape, dtype=torch.uint8, device="cuda")
    surface = torch.empty(e.surface_shape, dtype=torch.int16, device="cuda")
    whole = per_call_us(lambda: native_batch(w, inp, tex, ex, ey))
    gc.disable()
    try:
        whole_nogc = per_call_us(lambda: native_batch(w, inp, tex, ex, ey))
    finally:
        gc.enable()
    out["enc5 native_batch 720p"] = {
        "key": per_call_us(lambda: enc5_eager.key(torch, w, inp, tex, ex, ey, 0, 0, "hopper", None, (), True)),
        "lookup": per_call_us(lambda: enc5_eager.lookup(ek)),
        "two torch.empty outputs": per_call_us(outputs),
        "memset (one output; only where the windows leave tokens out)":
            per_call_us(lambda: driver.memset_d8_async(scratch.data_ptr(), 0, scratch.numel(), s)),
        "launch": per_call_us(lambda: e.prepared(s)),
        "whole call": whole, "whole call, gc disabled": whole_nogc, "zeroes outputs": e.zero_arena,
        "whole call into given outputs (no allocation)":
            per_call_us(lambda: native_batch(w, inp, tex, ex, ey, arena=arena, surface=surface))}
    out["gc"] = {"tracked objects": len(gc.get_objects()), "thresholds": gc.get_threshold()}
    return out


def host_phases(seconds: float, every_s: float = 0.5) -> dict[str, Any]:
    """The host's speed over time: torch.empty's host µs (200 calls, fewest of 5) sampled every `every_s` seconds for
    `seconds`, with the CPUs the process may run on (run it under `taskset -c N` to see a pinned process)."""
    import os

    import torch

    def probe() -> None:
        torch.empty((16, 4096), dtype=torch.bfloat16, device="cuda")

    series: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        series.append(per_call_us(probe))
        time.sleep(every_s)
    return {"cpus": sorted(os.sched_getaffinity(0)), "every_s": every_s, "min_us": min(series),
            "median_us": round(statistics.median(series), 2), "max_us": max(series), "series_us": series}


def tensormap_costs(reps: int = 2000) -> dict[str, float]:
    """µs of a fresh 2-D map encode against a base replacement (what a moved pointer costs the eager path)."""
    import torch

    from tcforge.runtime import tensormap as tm

    x = torch.empty((4096, 4096), dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    args = (tm.DTYPE_BFLOAT16, 2, x.data_ptr(), [4096, 4096], [8192], [64, 128])
    t0 = time.perf_counter()
    for _ in range(reps):
        m = tm.encode_tiled(*args)
    t1 = time.perf_counter()
    ptrs = (x.data_ptr(), y.data_ptr())
    for i in range(reps):
        m.replace_address(ptrs[i & 1])
    t2 = time.perf_counter()
    m.replace_address(y.data_ptr())
    same = m.raw() == tm.encode_tiled(tm.DTYPE_BFLOAT16, 2, y.data_ptr(), [4096, 4096], [8192], [64, 128]).raw()
    return {"encode_us": round((t1 - t0) / reps * 1e6, 2), "replace_us": round((t2 - t1) / reps * 1e6, 2),
            "replace_equals_encode": same}


def compile_check(m: int = 16, k: int = 4096, hidden: int = 4096) -> dict[str, Any]:
    """torch.compile of two linear layers through tcforge.gemm.matmul and of a frame through enc5: graph breaks,
    outputs bit-equal to eager (default mode and mode="reduce-overhead", i.e. CUDA graphs), and eager CUDA-graph
    capture of matmul. M = 16 by default: the first layer is a 2-way split-K pair, whose flag workspace is made
    inside the CUDA-graph trees' warm-up."""
    import torch
    import torch._dynamo

    from tcforge.gemm import matmul
    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    class TwoLayers(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            g = torch.Generator(device="cuda").manual_seed(1)
            self.register_buffer("w1", (torch.randn(hidden, k, generator=g, device="cuda") / k**0.5).bfloat16().t())
            self.register_buffer("w2", (torch.randn(k, hidden, generator=g, device="cuda") / hidden**0.5)
                                 .bfloat16().t())

        def forward(self, x):
            return matmul(torch.relu(matmul(x, self.w1)), self.w2, out_dtype=torch.float32)

    class Frame(torch.nn.Module):
        def forward(self, w, inp, tex):
            arena, surface = native_batch(w, inp, tex, *ENC5_720P)
            return arena, surface

    out: dict[str, Any] = {}
    x = torch.randn(m, k, device="cuda").bfloat16()
    ex, ey = ENC5_720P
    w = device_weights(WeightImage.synthetic(0))
    inp = torch.randint(0, 256, (1, 5 * ey * ex * 32), dtype=torch.uint8, device="cuda")
    inp[(inp & 0x7F) == 0x7F] = 0
    tex = torch.rand((1, ey, ex, 4), device="cuda").half().view(torch.int16)
    for name, model, args in (("two_linear", TwoLayers(), (x,)), ("enc5_frame", Frame(), (w, inp, tex))):
        torch._dynamo.reset()
        eager = model(*args)
        explain = torch._dynamo.explain(model)(*args)
        res = {"graph_breaks": explain.graph_break_count, "graphs": explain.graph_count,
               "break_reasons": [str(r.reason)[:200] for r in explain.break_reasons]}
        for mode in ("default", "reduce-overhead"):
            torch._dynamo.reset()
            try:
                compiled = torch.compile(model, mode=mode, fullgraph=True)
                got = [compiled(*args) for _ in range(3)][-1]  # (reduce-overhead records its graph on a later call)
                pairs = zip(eager if isinstance(eager, tuple) else (eager,),
                            got if isinstance(got, tuple) else (got,), strict=True)
                res[f"equal_{mode}"] = all(torch.equal(e, g) for e, g in pairs)
            except Exception as exc:  # reported, not raised: the other checks still run
                res[f"equal_{mode}"] = False
                res[f"error_{mode}"] = f"{type(exc).__name__}: {exc}"[:400]
        out[name] = res
    a, b = x, TwoLayers().w1
    ref = matmul(a, b)
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        matmul(a, b)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(graph, stream=s):
        c = matmul(a, b)
    graph.replay()
    torch.cuda.synchronize()
    out["eager_graph_capture_equal"] = torch.equal(c, ref)
    return out


def _shape(text: str) -> tuple[int, int, int]:
    m, n, k = (int(v) for v in text.lower().split("x"))
    return m, n, k


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SHAPES), help="MxNxK,...")
    ap.add_argument("--combos", default=",".join(f"{i}:{o}" for i, o in COMBOS), help="in:out,... (e4m3:bf16 too)")
    ap.add_argument("--rounds", type=int, default=21, help="interleaved rounds of graph and do_bench timing")
    ap.add_argument("--b-row", action="store_true", help="b row-major (default: column-major)")
    ap.add_argument("--no-enc5", action="store_true", help="leave out enc5 native_batch")
    ap.add_argument("--compile-check", action="store_true", help="also run the torch.compile check")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time each step of a remembered call alone, at the start and after the rows")
    ap.add_argument("--host-phases", type=float, default=0.0, metavar="SECONDS",
                    help="only sample torch.empty's host µs every 0.5 s for SECONDS (the host's speed over time)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/eager.json"))
    ap.add_argument("--table", metavar="FILE[:KEY]", help="only print the markdown table of a written result")
    args = ap.parse_args(argv)
    if args.table:
        return _table(args.table)
    if args.host_phases < 0 or args.rounds < 1:
        ap.error(f"--host-phases must be >= 0 and --rounds >= 1, got {args.host_phases} and {args.rounds}")
    import torch

    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    if args.host_phases > 0:
        h = result["host_phases"] = host_phases(args.host_phases)
        print(f"host phases on cpus {h['cpus']}: torch.empty min {h['min_us']} median {h['median_us']} max "
              f"{h['max_us']} us; series {h['series_us']}", flush=True)
        return _write(result, args.out)
    result["rows"] = []
    if args.breakdown:  # in a fresh process and again after the rows: a host's speed changes within one process
        result["breakdown_first"] = breakdown()
        print(f"breakdown, first: {json.dumps(result['breakdown_first'])}", flush=True)
    for shape in args.shapes.split(","):
        for combo in args.combos.split(","):
            in_kind, out_kind = combo.split(":")
            row = gemm_row(*_shape(shape), in_kind, out_kind, not args.b_row, args.rounds)
            result["rows"].append(row)
            t, p = row["tcforge"], row["torch"]
            q = row["probe"]
            print(f"matmul {shape} {combo}: host {t['host_us']} | {p['host_us']} us (median {t['host_median_us']} | "
                  f"{p['host_median_us']}; torch.empty {q['host_us']} | {q['host_median_us']}), wall {t['wall_us']} | "
                  f"{p['wall_us']} us, graph {t['graph_us']} | {p['graph_us']} us, do_bench {t['do_bench_us']} | "
                  f"{p['do_bench_us']} us; torch/tcforge wall {row.get('ratio_wall')} graph {row.get('ratio_graph')} "
                  f"do_bench {row.get('ratio_do_bench')} (paired by round, do_bench / graph: "
                  f"{row.get('do_bench_over_graph')}, quartiles {row.get('do_bench_over_graph_quartiles')})",
                  flush=True)
            if "graph_mhz" in t:
                print(f"  SM MHz / W, tcforge | torch: graph {t['graph_mhz']}/{t['graph_watts']} | "
                      f"{p['graph_mhz']}/{p['graph_watts']}, do_bench {t['do_bench_mhz']}/{t['do_bench_watts']} | "
                      f"{p['do_bench_mhz']}/{p['do_bench_watts']}", flush=True)
    if not args.no_enc5:
        row = enc5_row()
        result["rows"].append(row)
        print(f"enc5.native_batch 720p x1: {row['tcforge']}", flush=True)
    if args.breakdown:
        result["breakdown_after_rows"] = breakdown()
        print(f"breakdown, after the rows: {json.dumps(result['breakdown_after_rows'])}", flush=True)
    result["tensormap"] = tensormap_costs()
    print(f"tensor map: {result['tensormap']}", flush=True)
    if args.compile_check:
        result["compile_check"] = compile_check()
        print(f"compile check: {json.dumps(result['compile_check'])}", flush=True)
    return _write(result, args.out)


def _half_up(x: float, places: int) -> str:
    """x as the JSON writes it, rounded half up as the docs round by hand (not half-even on its binary value)."""
    return str(Decimal(str(x)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def table(result: dict[str, Any]) -> str:
    """The markdown table of a result's rows: host µs (fewest and median) and the torch / tcforge ratios."""
    h = _half_up
    lines = ["| call | host µs tcforge · torch (median) | eager wall ratio | graph ratio | do_bench ratio |",
             "|---|---:|---:|---:|---:|"]
    for row in result["rows"]:
        t = row["tcforge"]
        if "layer" in row:  # enc5: no peer; its own graph and do_bench µs
            frame = "720p" if (row["ex"], row["ey"]) == ENC5_720P else f"{row['ex']}x{row['ey']} tokens"
            lines.append(f"| enc5 `native_batch` {frame} | {h(t['host_us'], 1)} ({h(t['host_median_us'], 1)}) | – | "
                         f"{h(t['graph_us'], 1)} µs graph | {h(t['do_bench_us'], 1)} µs |")
            continue
        m, n, k, p = row["m"], row["n"], row["k"], row["torch"]
        shape = f"{m}³" if m == n == k else f"{m}×{n}×{k}"
        kinds = row["in"] if row["in"] == row["out"] else f"{row['in']}→{row['out']}"
        lines.append(f"| `matmul` {shape} {kinds} | {h(t['host_us'], 1)} · {h(p['host_us'], 1)} "
                     f"({h(t['host_median_us'], 1)} · {h(p['host_median_us'], 1)}) | {h(row['ratio_wall'], 2)} | "
                     f"{h(row['ratio_graph'], 2)} | {h(row['ratio_do_bench'], 2)} |")
    return "\n".join(lines)


def _table(spec: str) -> int:
    path, _, key = spec.partition(":")
    try:
        result = json.loads(Path(path).read_text())
        print(table(result[key] if key else result))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"bench.eager: error: --table {spec}: not a written result ({type(e).__name__}: {e})")
        return 2
    return 0


def _write(result: dict[str, Any], out: Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
