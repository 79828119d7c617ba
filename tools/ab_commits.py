"""Same bits, same speed: time two source trees of tcforge side by side on one GPU, through the public API only.

Each tree runs in its own worker process (PYTHONPATH=TREE/src, its own kernel cache); the parent alternates the two
for --rounds rounds and reports, per case, each tree's median time, the ratio new / old, cuBLAS's time and whether
both trees' outputs on the same seeded inputs are bit-identical (a SHA-256 of the output bytes).

    git worktree add /tmp/old HEAD~3 && python3 -m tools.ab_commits --old /tmp/old --new . --out ab.json

Cases: `tcforge.gemm.matmul` at 4096^3 and 8192^3 for fp16->fp32, bf16->bf16, e4m3->bf16, and at mid and small-M
shapes where `auto` runs other kernel families (timed as CUDA-graph replays, peer torch.mm / torch._scaled_mm the same
way), and `enc5.native_batch` at 720p and 4K in hopper mode.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

GEMM_SIZES = (4096, 8192)
GEMM_COMBOS = (("fp16", "fp32"), ("bf16", "bf16"), ("e4m3", "bf16"))
# shapes where `auto` runs other families: the 128x144 tile, stream-K, the swapped small-M tiles, split-K
GEMM_SHAPES = ((1536, 1536, 1536), (2304, 1024, 4096), (128, 11008, 4096), (64, 4096, 4096), (16, 4096, 14336),
               (3072, 3072, 3072))
ENC5_EXTENTS = ((40, 23), (120, 68))


def _graph_us(fn: Any, per_graph: int = 10, reps: int = 30) -> float:
    """Median microseconds per call: `per_graph` calls captured in one CUDA graph, replays timed with CUDA events. (Its
    own copy of tcforge.gemm.bench.graph_us: the worker imports the old tree's tcforge, which may not have it.)"""
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        for _ in range(per_graph):
            fn()
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / per_graph)
    return float(statistics.median(times))


def _host_us(fn: Any, calls: int = 200) -> float:
    """Host microseconds per eager call (no synchronisation inside the loop)."""
    import time

    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) * 1e6 / calls


def _digest(t: Any) -> str:
    import torch

    torch.cuda.synchronize()
    return hashlib.sha256(t.contiguous().view(torch.uint8).cpu().numpy().tobytes()).hexdigest()[:16]


def _gemm_case(m: int, n: int, k: int, in_kind: str, out_kind: str, warm: bool = False) -> dict[str, Any]:
    import torch

    from tcforge.gemm import matmul

    dt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k + len(in_kind))
    if in_kind == "e4m3":
        a = (torch.randn(m, k, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn).t()
        sa = torch.tensor(0.5, device="cuda")
        sb = torch.tensor(0.25, device="cuda")

        def ours() -> Any:
            return matmul(a, b, out_dtype=dt[out_kind], scale_a=sa, scale_b=sb)

        def peer() -> Any:
            return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=dt[out_kind])
    else:
        a = torch.randn(m, k, device="cuda", generator=g).to(dt[in_kind])
        b = torch.randn(n, k, device="cuda", generator=g).to(dt[in_kind]).t()

        def ours() -> Any:
            return matmul(a, b, out_dtype=dt[out_kind])

        if out_kind == "fp32":
            def peer() -> Any:
                return torch.mm(a, b, out_dtype=torch.float32)
        else:
            def peer() -> Any:
                return torch.mm(a, b)
    out = ours()
    if warm:  # compile and launch once, time nothing
        return {"case": f"gemm {m}x{n}x{k} {in_kind}->{out_kind}", "warm": True}
    return {"case": f"gemm {m}x{n}x{k} {in_kind}->{out_kind}", "digest": _digest(out), "us": _graph_us(ours),
            "peer_us": _graph_us(peer), "host_us": _host_us(ours)}


def _enc5_case(ex: int, ey: int, warm: bool = False) -> dict[str, Any]:
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    g = torch.Generator(device="cuda").manual_seed(ex * 1000 + ey)
    inp = torch.randint(0, 256, (1, 5 * ey * ex * 32), dtype=torch.uint8, device="cuda", generator=g)
    inp[(inp & 0x7F) == 0x7F] = 0
    tex = torch.rand((1, ey, ex, 4), device="cuda", generator=g).half().view(torch.int16)
    oa, os_ = torch.full_like(inp, 0x7F), torch.full_like(tex, -1)

    def call() -> None:
        native_batch(dw, inp, tex, ex, ey, numerics="hopper", arena=oa, surface=os_)

    call()
    if warm:
        return {"case": f"enc5 {ex}x{ey} hopper", "warm": True}
    digest = _digest(oa) + _digest(os_)
    return {"case": f"enc5 {ex}x{ey} hopper", "digest": digest, "us": _graph_us(call, per_graph=20),
            "host_us": _host_us(call)}


def _name(kind: str, spec: tuple) -> str:
    if kind == "gemm":
        (m, n, k), (in_kind, out_kind) = spec
        return f"gemm {m}x{n}x{k} {in_kind}->{out_kind}"
    return f"enc5 {spec[0]}x{spec[1]} hopper"


def _cases() -> list[tuple[str, tuple]]:
    """Every case, or those whose name matches AB_CASES (a regular expression)."""
    import re

    cases: list[tuple[str, tuple]] = [("gemm", ((s, s, s), c)) for s in GEMM_SIZES for c in GEMM_COMBOS]
    cases += [("gemm", (shape, c)) for shape in GEMM_SHAPES for c in (("fp16", "fp32"), ("bf16", "bf16"))]
    cases += [("enc5", extent) for extent in ENC5_EXTENTS]
    pattern = os.environ.get("AB_CASES")
    return [c for c in cases if not pattern or re.search(pattern, _name(*c))]


def worker(only: int | None = None, warm: bool = False) -> None:
    """Run every case (or case `only`) once in this process and print one JSON line per case."""
    for i, (kind, spec) in enumerate(_cases()):
        if only is not None and i != only:
            continue
        name = _name(kind, spec)
        if kind == "gemm":
            (m, n, k), (in_kind, out_kind) = spec
        try:
            row = _gemm_case(m, n, k, in_kind, out_kind, warm) if kind == "gemm" else _enc5_case(*spec, warm=warm)
        except Exception as exc:  # a failing case is reported, not fatal to the others
            row = {"case": name, "error": f"{type(exc).__name__}: {exc}"[:300]}
        print("AB " + json.dumps(row), flush=True)


def _env(tree: Path, cache: Path) -> dict[str, str]:
    # the tree's src first; other entries (carried wheels) stay, other trees' src folders go
    keep = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and not p.rstrip("/").endswith("src")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree / "src"), *keep]), TCFORGE_CACHE_DIR=str(cache))


def _warm(trees: list[tuple[Path, Path]], jobs: int) -> None:
    """Compile every case's kernels for every tree at once: one process per (tree, case), `jobs` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    def one(item: tuple[Path, Path, int]) -> None:
        tree, cache, i = item
        subprocess.run([sys.executable, __file__, "--worker", "--warm", "--case", str(i)], env=_env(tree, cache),
                       capture_output=True, text=True, cwd=str(tree))

    items = [(tree, cache, i) for tree, cache in trees for i in range(len(_cases()))]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, items))


def _run_tree(tree: Path, cache: Path) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, __file__, "--worker"], env=_env(tree, cache), capture_output=True,
                          text=True, cwd=str(tree))
    rows = [json.loads(line[3:]) for line in proc.stdout.splitlines() if line.startswith("AB ")]
    if proc.returncode != 0 or not rows:
        sys.stderr.write(proc.stderr[-3000:])
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="the old source tree (a worktree of the old commit)")
    ap.add_argument("--new", type=Path, default=Path("."), help="the new source tree")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of old and new")
    ap.add_argument("--out", type=Path, default=Path("bench/results/ab_commits.json"), help="JSON output")
    ap.add_argument("--cases", default=None, help="a regular expression: only the cases whose name matches")
    ap.add_argument("--jobs", type=int, default=12, help="concurrent processes compiling the kernels first")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--case", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cases:
        os.environ["AB_CASES"] = args.cases  # the workers read it
    if args.worker:
        worker(args.case, args.warm)
        return 0
    if args.old is None or not (args.old / "src" / "tcforge").is_dir():
        print("ab_commits: error: --old must name a tcforge source tree (with src/tcforge)", file=sys.stderr)
        return 2
    trees = {side: (tree.resolve(), tree.resolve() / ".cache" / f"ab_{side}")
             for side, tree in (("old", args.old), ("new", args.new))}
    _warm(list(trees.values()), args.jobs)
    runs: dict[str, list[list[dict[str, Any]]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
            runs[side].append(_run_tree(*trees[side]))
    table = []
    cases = [row["case"] for row in (runs["new"][0] or runs["old"][0])]
    for case in cases:
        per = {side: [row for rs in runs[side] for row in rs if row["case"] == case] for side in runs}
        entry: dict[str, Any] = {"case": case}
        for side, rows in per.items():
            good = [row for row in rows if "error" not in row]
            if not good:
                entry[f"{side}_error"] = rows[0]["error"] if rows else "no result"
                continue
            entry[f"{side}_us"] = statistics.median(row["us"] for row in good)
            entry[f"{side}_host_us"] = statistics.median(row["host_us"] for row in good)
            if "peer_us" in good[0]:
                entry[f"{side}_peer_us"] = statistics.median(row["peer_us"] for row in good)
            entry[f"{side}_digests"] = sorted({row["digest"] for row in good})
        if "old_us" in entry and "new_us" in entry:
            entry["new_over_old_time"] = entry["new_us"] / entry["old_us"]
            entry["same_bits"] = entry["old_digests"] == entry["new_digests"] and len(entry["new_digests"]) == 1
        table.append(entry)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rounds": args.rounds, "table": table}, indent=1))
    print(f"{'case':34s} {'old us':>9s} {'new us':>9s} {'new/old':>8s} {'cuBLAS old':>10s} {'cuBLAS new':>10s}"
          f" {'host old':>9s} {'host new':>9s}  bits")
    for e in table:
        if "new_over_old_time" not in e:
            print(f"{e['case']:34s} error: {e.get('old_error', '')} | {e.get('new_error', '')}"[:200])
            continue
        print(f"{e['case']:34s} {e['old_us']:9.2f} {e['new_us']:9.2f} {e['new_over_old_time']:8.3f} "
              f"{e.get('old_peer_us', float('nan')):10.2f} {e.get('new_peer_us', float('nan')):10.2f} "
              f"{e['old_host_us']:9.1f} {e['new_host_us']:9.1f}  {'same' if e['same_bits'] else 'DIFFER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
