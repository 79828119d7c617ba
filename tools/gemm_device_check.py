"""One device call for the GEMM engine: warm the kernel cache, check every variant (each in a subprocess with a timeout,
so a hang or a fault cannot hide the others), then benchmark the passing ones against cuBLAS. Writes under --out.

    python3 -m tools.gemm_device_check --out $OUT [--phases warm,check,bench] [--bench-args "..."]

`--spec-bits A,B,...` instead checks the bit-identity of variant specs: each shape and type pair run unsplit by every
spec on the same fresh random inputs (outputs poisoned first), every output compared bit for bit with the first spec's
and checked for NaN. An experiment's build (`hoist_es@epi_early=true`) against the shipped ones it must equal
(`hoist_es`, `hoist`): without split-K every element sums the same products in the same K order whatever the
epilogue, so the outputs must be the same bits. Exit status 1 on the first difference, naming it; 2 for bad arguments,
refused before anything launches.

    python3 -m tools.gemm_device_check --spec-bits hoist_es@epi_early=true,hoist_es,hoist
        [--shapes 4096x4096x1024,1000x1000x520,...] [--combos fp16:fp32:row,bf16:bf16:col,...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK_SHAPES = [
    (128, 256, 64),
    (7, 7, 7),
    (129, 257, 136),
    (1, 4097, 128),
    (4097, 1, 64),
    (1000, 1000, 1000),
    (256, 384, 65536),
    (2048, 2048, 2048),
]
SMALL_SHAPES = [(129, 257, 136), (7, 7, 7)]
# sanitizer shots of chained GEMMs launched back to back with programmatic dependent launch
PDL_CHAIN_VARIANTS = ["baseline", "hoist", "pingpong", "t64", "t144", "streamk", "sw8", "sw16", "promote"]
BIG = (4096, 4096, 4096)
# forced stream-K grids: (shape, (clusters, shared units)) — owners adding two partials; ranges inside one tile
STREAMK_FORCED = [((1000, 1000, 1000), (3, 4)), ((129, 257, 136), (5, 2)), ((2048, 512, 8192), (7, 5))]
# shapes where a stream-K variant shares every unit instead of splitting K (choose_streamk_small)
STREAMK_SMALL = [(256, 4096, 4096), (1024, 1024, 1024), (200, 3000, 5000)]
# the swapped product's own case: small M (one tile or a part of one along M), split-K when N leaves SMs idle
SWAP_SHAPES = [(16, 4096, 4096), (33, 1000, 2000), (64, 300, 8192), (100, 4096, 1024)]
# clusters along N: the skinny shapes they are for, a cluster whose last tiles lie past N, several clusters per CTA
# over two row bands, M not a multiple of a CTA's A slice
CN_SHAPES = [(96, 11008, 4096), (80, 9216, 1024), (65, 100, 4096), (129, 20000, 256), (300, 1000, 512)]
# a column-major a (the kernel's MN-major A operand): partial tiles, M not a multiple of 8 (the padded copy), split K
A_COL_SHAPES = [(129, 257, 136), (1000, 1000, 1000), (37, 4096, 4096), (256, 384, 65536)]
A_COL_COMBOS = [("fp16", "fp32", False), ("bf16", "bf16", True), ("fp16", "fp16", True), ("bf16", "fp32", False)]


def _streamk_variants() -> list[str]:
    """The variants built with stream-K (they also get the forced-grid and share-everything checks)."""
    from tcforge.gemm.variants import LADDER, SWEEP

    return [v.name for v in LADDER + SWEEP if v.config.streamk]


STREAMK_VARIANTS = _streamk_variants()


def combos() -> list[tuple[str, str, bool]]:
    """Every (input, output, B K-major) build the engine supports."""
    from tcforge.gemm.build import b_layouts
    from tcforge.gemm.variants import SUPPORTED

    return [(i, o, bk) for i, outs in SUPPORTED.items() for o in outs for bk in b_layouts(i)]


def run_one_variant(name: str, small: bool) -> None:
    """Child: every dtype pair / B layout / shape for one variant, one JSON line each on stdout."""
    from tcforge.gemm.build import a_mn_ok
    from tcforge.gemm.check import check_one
    from tcforge.gemm.variants import VARIANTS, pair_config

    shapes = SMALL_SHAPES if small else CHECK_SHAPES
    seed = 1
    for in_kind, out_kind, bk in combos():
        todo = list(shapes)
        if not small and (in_kind, out_kind) in (("fp16", "fp32"), ("e4m3", "bf16"), ("bf16", "bf16")):
            todo.append(BIG)
        if name in VARIANTS and VARIANTS[name].config.swap_ab:
            todo += SWAP_SHAPES
        if name in VARIANTS and VARIANTS[name].config.cluster_n:
            todo += CN_SHAPES
        for m, n, k in todo:
            seed += 1
            r = check_one(name, in_kind, out_kind, bk, m, n, k, seed=seed)
            print(json.dumps(r.as_dict()), flush=True)
    if name not in VARIANTS or a_mn_ok(VARIANTS[name].config, "fp16"):  # column-major a (16-bit)
        for (in_kind, out_kind, bk), (m, n, k) in itertools.product(A_COL_COMBOS, A_COL_SHAPES[:2] if small else
                                                                     A_COL_SHAPES):
            seed += 1
            d = check_one(name, in_kind, out_kind, bk, m, n, k, seed=seed, a_kmajor=False).as_dict()
            d["variant"] = f"{name}(a col)"
            print(json.dumps(d), flush=True)
    if not small and name in ("splitk", "hoist", "r8", "r9", "promote", "t64", "t192", "t144", "sw8", "sw16", "sw32",
                              "sw64", "sw80", "sw96", "sw112", "sw128"):
        for in_kind, out_kind, bk in (("fp16", "fp32", False), ("e4m3", "bf16", True), ("bf16", "bf16", True)):
            for (m, n, k), mode in itertools.product(((300, 500, 4096), (1, 8, 65536)), ("fused", "planes")):
                seed += 1
                r = check_one(name, in_kind, out_kind, bk, m, n, k, seed=seed, splits=3, split_mode=mode)
                d = r.as_dict()
                d["variant"] = f"{name}(splits=3, {mode})"
                print(json.dumps(d), flush=True)
    # two splits through DSMEM (pair): the swapped tiles outside a cluster (pair_config)
    if not small and name in VARIANTS and pair_config(VARIANTS[name].config) is not None:
        for (in_kind, out_kind, bk), (m, n, k) in itertools.product(
                (("fp16", "fp32", False), ("e4m3", "bf16", True), ("bf16", "bf16", True)),
                ((16, 4096, 4096), (13, 9000, 2048), (64, 300, 8192))):
            seed += 1
            d = check_one(name, in_kind, out_kind, bk, m, n, k, seed=seed, splits=2, split_mode="pair").as_dict()
            d["variant"] = f"{name}(splits=2, pair)"
            print(json.dumps(d), flush=True)
    if name in STREAMK_VARIANTS:
        # both stream-K roles on small grids (the shapes above share nothing but 4096^3's last 58 units)
        for in_kind, out_kind, bk in combos():
            for (m, n, k), forced in STREAMK_FORCED:
                seed += 1
                r = check_one(name, in_kind, out_kind, bk, m, n, k, seed=seed, streamk=forced)
                d = r.as_dict()
                d["variant"] = f"{name}(streamk={forced})"
                print(json.dumps(d), flush=True)
            for m, n, k in STREAMK_SMALL:
                seed += 1
                print(json.dumps(check_one(name, in_kind, out_kind, bk, m, n, k, seed=seed).as_dict()), flush=True)


def phase_warm(workers: int) -> None:
    """Compile (or find in the cache) every build; report spills."""
    from tcforge.gemm.build import all_builds, build_all

    t = time.time()
    done = build_all(list(all_builds()), workers=workers)
    spills = [b.tag() for b, m in done if m.stats["tcf_gemm"].spills]
    print(f"warm: {len(done)} cubins in {time.time() - t:.1f}s; spilling: {spills or 'none'}", flush=True)


def phase_check(names: list[str], out: Path, small: bool, timeout: float, parallel: int) -> dict[str, list[dict]]:
    """Check variants in parallel subprocesses; write gemm_check.json."""

    def child(name: str) -> tuple[str, list[dict], str]:
        """One variant in a subprocess with a timeout (a hang or a fault cannot hide the others)."""
        cmd = [sys.executable, __file__, "--one-variant", name] + (["--small"] if small else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
            tail = "" if p.returncode == 0 else f"exit {p.returncode}: {p.stderr[-800:]}"
        except subprocess.TimeoutExpired as exc:
            out_text = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            rows = [json.loads(line) for line in out_text.splitlines() if line.startswith("{")]
            tail = f"TIMEOUT after {timeout}s (a hang: last finished {rows[-1] if rows else None})"
        return name, rows, tail

    results: dict[str, list[dict]] = {}
    with ThreadPoolExecutor(parallel) as pool:
        for name, rows, tail in pool.map(child, names):
            results[name] = rows
            bad = [r for r in rows if not r["ok"]]
            print(f"check {name:<11} {len(rows) - len(bad)}/{len(rows)} ok {tail}", flush=True)
            for r in bad[:6]:
                print(
                    f"   FAIL {r['in_kind']}->{r['out_kind']} {'K' if r['b_kmajor'] else 'N'}-major "
                    f"{r['m']}x{r['n']}x{r['k']} err={r['rel_err']:.3g} nan={r['nan']} {r['error'][:200]}",
                    flush=True,
                )
            if tail:
                results[name].append({"ok": False, "error": tail})
    (out / "gemm_check.json").write_text(json.dumps(results, indent=0))
    return results


# the spread epilogue's test shapes: whole and partial tiles, one k-tile, fewer k-tiles than held sub-tiles
SHAPES = "4096x4096x1024,1000x1000x520,8192x1024x136,2000x3000x64,300x500x16"
COMBOS = "fp16:fp32:row,bf16:fp32:col,e4m3:fp32:col,bf16:bf16:row,fp16:fp16:col,e4m3:bf16:col"


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """`MxNxK,...` as (M, N, K) tuples of positive integers."""
    shapes = []
    for item in filter(None, text.split(",")):
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"shape {item!r}: expected MxNxK with positive integers")
        shapes.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return shapes


def parse_combos(text: str) -> list[tuple[str, str, bool]]:
    """`in:out:row|col,...` as (in kind, out kind, B column-major); fp8 B is always column-major."""
    from tcforge.gemm.variants import IN_KINDS, OUT_KINDS

    combos = []
    for item in filter(None, text.split(",")):
        parts = item.split(":")
        if len(parts) != 3 or parts[0] not in IN_KINDS or parts[1] not in OUT_KINDS or parts[2] not in ("row", "col"):
            raise ValueError(f"type pair {item!r}: expected in:out:row|col with in one of {sorted(IN_KINDS)} and out "
                             f"one of {sorted(OUT_KINDS)}")
        if parts[0] == "e4m3" and parts[2] == "row":
            raise ValueError(f"type pair {item!r}: fp8 B is column-major (K-major), as torch._scaled_mm takes it")
        combos.append((parts[0], parts[1], parts[2] == "col"))
    return combos


def spec_bits(specs: list[str], shapes: list[tuple[int, int, int]], combos: list[tuple[str, str, bool]]) -> int:
    """Run every shape and type pair unsplit by each spec; exit status 1 on the first output that differs."""
    import torch

    from tcforge.gemm.check import make_inputs, unsplit_outputs
    from tcforge.gemm.plan import LaunchOptions

    poison = LaunchOptions(poison_output=True)  # every launch fills its output with NaN first: a lost store shows
    n = 0
    for in_kind, out_kind, b_col in combos:
        for shape in shapes:
            a, b, sa, sb = make_inputs(*shape, in_kind, b_col, seed=sum(shape) + 5)
            outs = unsplit_outputs(specs, a, b, sa, sb, out_kind, options=poison)
            case = f"{in_kind}:{out_kind} B {'col' if b_col else 'row'} {'x'.join(map(str, shape))}"
            if torch.isnan(outs[0]).any():
                print(f"{case}: {specs[0]} left NaN (poison) in its output", file=sys.stderr)
                return 1
            for spec, out in zip(specs[1:], outs[1:], strict=True):
                if not torch.equal(outs[0], out):
                    diff = (outs[0].float() != out.float()).sum().item()
                    print(f"{case}: {spec} differs from {specs[0]} in {diff} elements", file=sys.stderr)
                    return 1
            n += 1
    print(f"{n} cases: {', '.join(specs[1:])} bit-identical to {specs[0]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Phases: warm, check, bench, sanitize; or the spec bit-identity check (see --help)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/gemm_out"))
    ap.add_argument("--phases", default="warm,check,bench")
    ap.add_argument("--variants", default="all")
    ap.add_argument("--one-variant", default=None)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--sanitize-shot", action="store_true", help="every variant once at 129x257x136 (sanitizers)")
    ap.add_argument("--one-shot", default=None, help="run VARIANT 3 times at 4096^3 fp16->fp32 (for ncu)")
    ap.add_argument("--timeout", type=float, default=150)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--bench-args", default="--sweep quick")
    ap.add_argument("--bench-timeout", type=float, default=300)
    ap.add_argument("--sanitize-timeout", type=float, default=120)
    ap.add_argument("--extra-bench-args", default="")
    ap.add_argument("--bench-also", default="", help="comma list of already-checked variants to time beside them")
    ap.add_argument("--bench-repeat", type=int, default=1, help="time the list this many times (noise estimate)")
    ap.add_argument("--sweep-with", default="", help="sweep these variants, keeping only checked ones (+ bench-also)")
    ap.add_argument("--spec-bits", default=None, help="two or more variant specs, the first the reference: only the "
                    "bit-identity check")
    ap.add_argument("--shapes", default=SHAPES, help="--spec-bits: MxNxK,...")
    ap.add_argument("--combos", default=COMBOS, help="--spec-bits: in:out:row|col,...")
    args = ap.parse_args(argv)
    if args.spec_bits is not None:
        from tcforge.errors import TcforgeError
        from tcforge.gemm.variants import check_specs

        try:
            shapes, combos = parse_shapes(args.shapes), parse_combos(args.combos)
            specs = check_specs([v for v in args.spec_bits.split(",") if v], real=True)
        except (ValueError, TcforgeError) as e:
            ap.error(str(e))
        if len(specs) < 2:
            ap.error("--spec-bits: two specs at least (the first is the reference)")
        return spec_bits(specs, shapes, combos)
    if args.sanitize_shot:
        from tcforge.gemm.build import a_mn_ok
        from tcforge.gemm.check import check_one
        from tcforge.gemm.variants import LADDER, SWEEP, VARIANTS

        only = set(filter(None, os.environ.get("GEMM_SAN_VARIANTS", "").split(",")))  # empty: every variant
        for v in LADDER + SWEEP:
            if only and v.name not in only:
                continue
            for combo in (("fp16", "fp32", False), ("e4m3", "bf16", True), ("bf16", "bf16", True)):
                r = check_one(v.name, *combo, 129, 257, 136, seed=5, with_cublas=False)
                print(f"sanitize-shot {v.name} {combo[0]}->{combo[1]} ok={r.ok} {r.rel_err:.2e} {r.error}", flush=True)
                if a_mn_ok(v.config, combo[0]):  # column-major a: the MN-major A operand
                    r = check_one(v.name, *combo, 129, 257, 136, seed=5, with_cublas=False, a_kmajor=False)
                    print(f"sanitize-shot {v.name}(a col) {combo[0]}->{combo[1]} ok={r.ok} {r.error}", flush=True)
                if v.config.swap_ab:  # small M: a C tile narrower than the wgmma's N
                    r = check_one(v.name, *combo, 13, 300, 520, seed=5, with_cublas=False)
                    print(f"sanitize-shot {v.name}(13 rows) {combo[0]}->{combo[1]} ok={r.ok} {r.error}", flush=True)
                if v.config.cluster_n or (v.config.swap_ab and v.config.cm > 2):
                    # more clusters than are resident: several per CTA (rows: one band of A; swapped, the M the
                    # cluster covers: 13 in a 4-CTA one along M, both column tiles of one along N)
                    rows = (100 if v.config.cluster_n else 13) if v.config.swap_ab else 129
                    r = check_one(v.name, *combo, rows, 20000, 136, seed=5, with_cublas=False)
                    print(f"sanitize-shot {v.name}(2 units per cluster) {combo[0]}->{combo[1]} ok={r.ok} {r.error}",
                          flush=True)
                if v.config.epi_defer:  # several tiles per CTA: a tile's C stored under the next tile's wgmmas
                    r = check_one(v.name, *combo, 2304, 2048, 128, seed=5, with_cublas=False)
                    print(f"sanitize-shot {v.name}(2 tiles per CTA) {combo[0]}->{combo[1]} ok={r.ok} {r.error}",
                          flush=True)
        for name, combo in (("splitk", ("fp16", "fp32", False)), ("promote", ("e4m3", "bf16", True)),
                           ("promote_cm1", ("e4m3", "bf16", True)), ("t128", ("bf16", "bf16", True)),
                           ("t64", ("fp16", "fp32", False)), ("sw16", ("fp16", "fp32", False)),
                           ("sw32", ("bf16", "bf16", True)), ("sw64", ("e4m3", "bf16", True)),
                           ("sw8", ("e4m3", "bf16", True)), ("sw16c4", ("fp16", "fp32", False)),
                           ("sw64c4", ("e4m3", "bf16", True)), ("sw128c4", ("bf16", "bf16", True)),
                           ("sw80c4", ("fp16", "fp32", False)), ("sw96c4", ("e4m3", "bf16", True)),
                           ("sw112c4", ("bf16", "bf16", True)), ("sw80", ("bf16", "bf16", True)),
                           ("sw96", ("fp16", "fp16", False)), ("sw112", ("e4m3", "bf16", True)),
                           ("sw128", ("fp16", "fp32", False)),
                           ("tuned_pp", ("fp16", "fp32", False)), ("t192", ("bf16", "bf16", False)),
                           ("t144", ("fp16", "fp32", False)), ("t144s", ("bf16", "bf16", False)),
                           ("t320", ("bf16", "bf16", True)),
                           ("t64x192", ("fp16", "fp32", False))):
            if not only or name in only:  # split-K reduced inside the kernel, and through fp32 planes
                for mode in ("fused", "planes"):
                    r = check_one(name, *combo, 129, 257, 1024, seed=6, splits=3, with_cublas=False, split_mode=mode)
                    print(f"sanitize-shot {name}(splits=3, {mode}) ok={r.ok} {r.error}", flush=True)
                    if combo[0] != "e4m3" and not VARIANTS[name].config.swap_ab:  # (swapped: a row-major a only)
                        r = check_one(name, *combo, 129, 257, 1024, seed=6, splits=3, with_cublas=False,
                                      split_mode=mode, a_kmajor=False)
                        print(f"sanitize-shot {name}(a col, splits=3, {mode}) ok={r.ok} {r.error}", flush=True)
        for name, combo in (("sw8", ("fp16", "fp32", False)), ("sw16", ("e4m3", "bf16", True)),
                            ("sw32", ("bf16", "bf16", True)), ("sw64", ("fp16", "fp32", True)),
                            ("sw80", ("e4m3", "bf16", True)), ("sw96", ("bf16", "bf16", False))):
            if not only or name in only:  # two splits through DSMEM: one round, and pairs running several tiles
                for m, n, k in ((37, 1000, 1024), (13, 9000, 512)):
                    r = check_one(name, *combo, m, n, k, seed=9, splits=2, with_cublas=False, split_mode="pair")
                    print(f"sanitize-shot {name}(splits=2, pair, {m}x{n}x{k}) ok={r.ok} {r.error}", flush=True)
        import torch

        from tcforge.gemm.check import gemm_chain

        for name in PDL_CHAIN_VARIANTS:
            if only and name not in only:
                continue
            for fp8 in (False, True):  # back-to-back PDL launches, each reading the previous output
                m = 16 if name.startswith("sw") else 129
                got = gemm_chain(name, m, 256, 3, fp8, pdl=True, sync=False)
                want = gemm_chain(name, m, 256, 3, fp8, pdl=False, sync=True)
                ok = all(torch.equal(x, y) for x, y in zip(got, want, strict=True))
                print(f"sanitize-shot {name}(pdl chain, {'fp8' if fp8 else 'fp16'}) ok={ok} ", flush=True)
        for name in STREAMK_VARIANTS:
            if only and name not in only:
                continue
            for combo in (("fp16", "fp32", False), ("e4m3", "bf16", True), ("bf16", "bf16", True)):
                for (m, n, k), forced in STREAMK_FORCED[:2]:
                    r = check_one(name, *combo, m, n, k, seed=7, streamk=forced, with_cublas=False)
                    print(f"sanitize-shot {name}(streamk={forced}) {combo[0]}->{combo[1]} ok={r.ok} {r.error}",
                          flush=True)
                r = check_one(name, *combo, 256, 1024, 1024, seed=8, with_cublas=False)  # all units shared
                print(f"sanitize-shot {name}(small) {combo[0]}->{combo[1]} ok={r.ok} {r.error}", flush=True)
        return 0
    if args.one_shot:
        import torch

        from tcforge.gemm import matmul
        from tcforge.gemm.check import make_inputs

        a, b, _, _ = make_inputs(4096, 4096, 4096, "fp16", False, 0)
        for _ in range(3):
            matmul(a, b, out_dtype=torch.float32, variant=args.one_shot)
        torch.cuda.synchronize()
        return 0
    if args.one_variant:
        run_one_variant(args.one_variant, args.small)
        return 0
    from tcforge.gemm.variants import LADDER, SWEEP

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [v.name for v in LADDER + SWEEP] if args.variants == "all" else args.variants.split(",")
    phases = args.phases.split(",")
    passing = names
    if "warm" in phases:
        phase_warm(workers=os.cpu_count() or 4)
    if "check" in phases:
        res = phase_check(names, out, args.small, args.timeout, args.parallel)
        passing = [n for n in names if res.get(n) and all(r["ok"] for r in res[n])]
        print(f"passing every check: {passing}", flush=True)
    if "bench" in phases and passing:
        # the ladder's rungs always run (a failing one shows as an error row); extra variants only when they pass
        ladder_names = [v.name for v in LADDER]
        passing = [n for n in names if n in passing or n in ladder_names]
        also = [n for n in args.bench_also.split(",") if n and n not in passing]
        timed = (also + passing) * max(1, args.bench_repeat)
        cmd = [sys.executable, "-m", "tcforge", "bench", "gemm", "--out", str(out), "--variants", ",".join(timed)]
        cmd += args.bench_args.split()
        sweep = [n for n in args.sweep_with.split(",") if n and (n in passing or n in also)]
        if sweep:
            cmd += ["--sweep-variants", ",".join(sweep)]
        try:
            subprocess.run(cmd, timeout=args.bench_timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"bench TIMEOUT after {args.bench_timeout}s", flush=True)
        if args.extra_bench_args:
            # the other dtype pairs: the ladder's rungs and the tuned variants only, no sweep
            few = [n for n in passing if n in ladder_names or n.startswith("tuned")]
            cmd = [sys.executable, "-m", "tcforge", "bench", "gemm", "--out", str(out), "--variants", ",".join(few)]
            cmd += args.extra_bench_args.split()
            try:
                subprocess.run(cmd, timeout=args.bench_timeout, check=False)
            except subprocess.TimeoutExpired:
                print(f"extra bench TIMEOUT after {args.bench_timeout}s", flush=True)
    if "sanitize" in phases:
        env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")

        def sanitize(tool: str) -> str:
            # cuda-bindings looks up every driver symbol at start; the ones this driver lacks are API errors, not
            # memory errors, so memcheck counts memory errors only
            api = ["--report-api-errors", "no"] if tool == "memcheck" else []
            cmd = ["compute-sanitizer", "--tool", tool, *api, "--error-exitcode", "9", sys.executable, "-m",
                   "tools.gemm_device_check", "--sanitize-shot"]
            limit = args.sanitize_timeout
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
                text = p.stdout + p.stderr
                (out / f"sanitize_{tool}.txt").write_text(f"==== compute-sanitizer --tool {tool}\n{text}\n")
                shots = [ln for ln in text.splitlines() if ln.startswith("sanitize-shot")]
                summary = [ln for ln in text.splitlines() if "ERROR SUMMARY" in ln or "RACECHECK SUMMARY" in ln]
                bad = [ln for ln in shots if "ok=False" in ln]
                return f"{tool}: exit {p.returncode}, {len(shots)} shots, {len(bad)} not ok; {summary}"
            except subprocess.TimeoutExpired as exc:
                part = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
                shots = [ln for ln in part.splitlines() if ln.startswith("sanitize-shot")]
                (out / f"sanitize_{tool}.txt").write_text(
                    f"==== compute-sanitizer --tool {tool} (TIMEOUT after {limit}s)\n{part}\n")
                return (f"{tool}: TIMEOUT after {limit}s with {len(shots)} shots done, "
                        f"{sum('ok=False' in ln for ln in shots)} not ok")

        print("$ compute-sanitizer --tool memcheck|racecheck|synccheck --error-exitcode 9 python3 -m "
              "tools.gemm_device_check --sanitize-shot (the three tools at once)", flush=True)
        with ThreadPoolExecutor(3) as pool:
            for line in pool.map(sanitize, ("memcheck", "racecheck", "synccheck")):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
