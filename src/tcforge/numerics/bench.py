"""`tcforge bench numerics`: mma emulation throughput (output elements per second) per model on one CPU core.

Run it pinned to one core with single-threaded BLAS for the figure the issue asks for:
`OMP_NUM_THREADS=1 taskset -c 0 tcforge bench numerics`. Writes JSON to bench/results/numerics_mma.json. The time
is the best of --repeat runs, as this process's CPU time (the verdict) and as wall clock. `--forms` adds the
tensor-core table's forms run through its one engine (`tensorcore.tc_mma`, what `tcforge emulate` runs).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from tcforge.cliutil import ArgumentParser, output_file
from tcforge.errors import TcforgeError
from tcforge.numerics import tensorcore
from tcforge.numerics.mma import MODELS, mma_m16n8k32_e4m3_f16

REQUIRED_PER_SECOND = 2_000_000


def _repo_root() -> Path:
    here = Path(__file__).resolve().parents[3]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def random_tiles(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n tiles of finite e4m3 codes (every exponent, both signs) and finite f16 C: the general case."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (n, 16, 32), dtype=np.uint8)
    b = rng.integers(0, 256, (n, 32, 8), dtype=np.uint8)
    a[(a & 0x7F) == 0x7F] ^= 1  # NaN codes -> 448 / -448
    b[(b & 0x7F) == 0x7F] ^= 1
    c = (rng.integers(0, 0x7C00, (n, 16, 8)) | (rng.integers(0, 2, (n, 16, 8)) << 15)).astype(np.uint16)
    return a, b, c


def measure(model: str, tiles: int, repeat: int, seed: int = 0) -> dict[str, float]:
    """Best-of-`repeat` wall and CPU seconds for one call on `tiles` tiles, and the throughputs they give."""
    a, b, c = random_tiles(tiles, seed)
    mma_m16n8k32_e4m3_f16(a[:8], b[:8], c[:8], model)  # warm the lazily built tables
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        mma_m16n8k32_e4m3_f16(a, b, c, model)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    outputs = tiles * 128
    return {
        "tiles": tiles,
        "outputs": outputs,
        "best_wall_s": min(wall),
        "best_cpu_s": min(cpu),
        "outputs_per_s_wall": outputs / min(wall),
        "outputs_per_s_cpu": outputs / min(cpu),
    }


def random_form_tiles(form: tensorcore.Form, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n tiles of a tensor-core form's operands: random codes of each format, the non-finite draws made zero."""
    rng = np.random.default_rng(seed)

    def codes(fmt: tensorcore.Format, shape: tuple[int, ...]) -> np.ndarray:
        bits = rng.integers(0, 1 << (8 * np.dtype(fmt.dtype).itemsize), shape, dtype=np.uint64).astype(fmt.dtype)
        return np.where(np.isfinite(tensorcore.values_of(bits, fmt)), bits, fmt.dtype(0))

    f = tensorcore.FORMATS
    return (codes(f[form.a], (n, form.m, form.k)), codes(f[form.b], (n, form.k, form.n)),
            codes(f[form.c], (n, form.m, form.n)))


def measure_form(name: str, tiles: int, repeat: int, seed: int = 0) -> dict[str, float]:
    """Best-of-`repeat` CPU and wall seconds of `tc_mma` on `tiles` tiles of one form, and the throughputs."""
    form = tensorcore.get_form(name)
    a, b, c = random_form_tiles(form, tiles, seed)
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        tensorcore.tc_mma(form, a, b, c)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    outputs = tiles * form.m * form.n
    return {"tiles": tiles, "outputs": outputs, "best_wall_s": min(wall), "best_cpu_s": min(cpu),
            "outputs_per_s_wall": outputs / min(wall), "outputs_per_s_cpu": outputs / min(cpu)}


def main(argv: list[str]) -> int:
    """Measure each model, print one line per model, write the JSON; exit 1 if a model is below 2 M outputs/s.

    The verdict uses CPU time (this process's own core time), which stays meaningful when other jobs share the core;
    wall-clock figures are reported beside it."""
    p = ArgumentParser(prog="tcforge bench numerics", description=__doc__.splitlines()[0])
    p.add_argument("--tiles", type=int, default=8192, help="16x8 output tiles per timed call (default 8192)")
    p.add_argument("--repeat", type=int, default=5, help="timed calls per model; the best counts (default 5)")
    p.add_argument("--models", default=",".join(MODELS), help=f"comma-separated subset of {', '.join(MODELS)}")
    p.add_argument("--forms", default="", help="also the tensor-core table's forms: comma-separated names, or all")
    p.add_argument("--form-tiles", type=int, default=1024, help="tiles per timed call of a form (default 1024)")
    p.add_argument("--json", type=Path, default=None, help="output path (default bench/results/numerics_mma.json)")
    args = p.parse_args(argv)
    out = output_file(args.json or _repo_root() / "bench" / "results" / "numerics_mma.json", "--json",
                      make_parent=True, stdout=False)  # checked before the minutes of measuring
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        raise TcforgeError(f"--models: unknown model(s) {unknown}; valid models: {', '.join(MODELS)}")
    if args.tiles < 1 or args.repeat < 1 or args.form_tiles < 1:
        raise TcforgeError("--tiles, --form-tiles and --repeat must be positive integers")
    forms = list(tensorcore.FORM_NAMES) if args.forms == "all" else [f for f in args.forms.split(",") if f]
    for f in forms:
        tensorcore.get_form(f)  # a bad name: one line naming the valid ones
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 0
    results = {m: measure(m, args.tiles, args.repeat) for m in models}
    form_results = {f: measure_form(f, args.form_tiles, args.repeat) for f in forms}
    report = {
        "what": "mma_m16n8k32_e4m3_f16 emulation throughput per model and tc_mma's per tensor-core form, output "
                "elements per second (best of repeats)",
        "command": "OMP_NUM_THREADS=1 taskset -c 0 tcforge bench numerics " + " ".join(argv),
        "cores_allowed": cores,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "processor": platform.processor(),
        "required_outputs_per_s": REQUIRED_PER_SECOND,
        "models": results,
        "forms": form_results,
    }
    out.write_text(json.dumps(report, indent=1) + "\n")
    ok = True
    for m, r in results.items():
        rate = r["outputs_per_s_cpu"]
        ok &= rate >= REQUIRED_PER_SECOND
        print(f"{m:<7} {rate / 1e6:6.2f} M outputs/s by CPU time ({r['outputs_per_s_wall'] / 1e6:.2f} M/s wall), "
              f"{r['tiles']} tiles, cores allowed {cores}, OMP_NUM_THREADS={report['omp_num_threads']}")
    for f, r in form_results.items():
        print(f"{f:<30} {r['outputs_per_s_cpu'] / 1e6:6.2f} M outputs/s by CPU time "
              f"({r['outputs_per_s_wall'] / 1e6:.2f} M/s wall), {r['tiles']} tiles")
    print(f"wrote {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
