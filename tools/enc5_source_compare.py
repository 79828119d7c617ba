"""Two versions of the enc5 kernel sources, the working tree's forms against a baseline's.

`sass` (no GPU needed): compile every form of both and compare their SASS (`cuobjdump -sass`) and their cubin bytes
form by form; exit status 1 if any SASS differs.

`time` (sm_90 GPU): a same-process A/B at 720p and 4K in interleaved rounds (CUDA-graph per-launch medians,
bench/enc5_native.time_kernel), with a check that both give the same output bytes on the same frame. Code-generation
changes move the latency-bound split form by tenths of a µs, more than separate runs can resolve. `--compile-only`
fills the cubin cache (no GPU needed).

The baseline is the `kernels/` folder of another checkout (its headers are found beside the form files; compare the
shipped forms: `--forms hopper,ada,hopper_split,hopper_split_occ3`) or, from before the forms were files, that
revision's single `enc5.cu` (`git show REV:src/tcforge/layers/enc5/gpu/enc5.cu > /tmp/enc5_base.cu`; forms selected by
-DENC5_VARIANT, every shipped and tool form).

Usage (from the repository root):
    python3 -m tools.enc5_source_compare sass --baseline /tmp/enc5_base.cu [--forms all] [--keep DIR]
    python3 -m tools.enc5_source_compare time --baseline /tmp/enc5_base.cu [--forms hopper,hopper_split,...]
        [--rounds 6] [--json bench/results/enc5_source_ab.json] [--compile-only]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

# the pre-refactor enc5.cu selected a form with -DENC5_VARIANT (its kernel names are the forms' entries)
SINGLE_FILE_VARIANT = {"hopper": 0, "hopper_debug": 1, "ada": 2, "hopper_timing": 3, "tile_check": 4,
                       "hopper_split": 5, "hopper_split_timing": 6, "hopper_split_occ3": 7,
                       "hopper_split_occ3_timing": 8}


def baseline_form(base: Path, name: str):
    """(Form, nvcc options) of form `name` in a baseline: a folder of form files or one pre-refactor enc5.cu."""
    from tcforge.layers.enc5.gpu import kernel

    if base.is_dir():
        return replace(kernel.Form.from_source(base / f"{name}.cu"), name=name), ()
    return replace(kernel.form(name), path=base), (f"-DENC5_VARIANT={SINGLE_FILE_VARIANT[name]}",)


def sass(cubin: Path) -> str:
    """cuobjdump -sass of a cubin."""
    from tcforge.runtime.tools import disassemble

    return disassemble(cubin)


def compile_in(cache: Path, f, options: tuple[str, ...]):
    """Compile a form into a private cache directory."""
    from tcforge.layers.enc5.gpu import kernel

    os.environ["TCFORGE_CACHE_DIR"] = str(cache)
    return kernel.compile_form(f, options)


def compare_sass(args: argparse.Namespace) -> int:
    """Compare each form's SASS; exit status 1 if any differs."""
    from tcforge.layers.enc5.gpu import kernel

    names = [*kernel.FORMS, *kernel.tool_forms()] if args.forms == "all" else args.forms.split(",")
    differ = 0
    with tempfile.TemporaryDirectory(prefix="enc5-sass-") as tmp:
        for name in names:
            old = compile_in(Path(tmp) / "baseline", *baseline_form(Path(args.baseline), name))
            new = compile_in(Path(tmp) / "new", kernel.form(name), ())
            s_old, s_new = sass(old.cubin_path), sass(new.cubin_path)
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                (Path(args.keep) / f"baseline_{name}.sass").write_text(s_old)
                (Path(args.keep) / f"new_{name}.sass").write_text(s_new)
            st = new.stats.get(kernel.form(name).entry)
            same = s_old == s_new
            differ += not same
            count = len(re.findall(r"/\*[0-9a-f]{4,}\*/", s_new))
            print(f"{name:26s} sass {'identical' if same else 'DIFFERS'}  cubin bytes "
                  f"{'identical' if old.cubin() == new.cubin() else 'differ'}  instructions {count}  registers "
                  f"{st.registers if st else '?'}  spill stores {st.spill_stores if st else '?'}", flush=True)
    return 1 if differ else 0


def numerics(name: str) -> str:
    """The numerics mode a form implements."""
    return "ada" if name == "ada" else "hopper"


def compare_time(args: argparse.Namespace) -> int:
    """Output bytes and interleaved launch times of each form in both versions; exit status 1 if any output differs."""
    from bench import enc5_native

    from tcforge.layers.enc5.gpu import kernel

    forms = [f for f in args.forms.split(",") if f]
    builds = {}  # (source, form) -> (Form, options)
    for name in forms:
        builds[("baseline", name)] = baseline_form(Path(args.baseline), name)
        builds[("working_tree", name)] = (kernel.FORMS[name], ())
    if args.compile_only:
        for (tag, name), (f, opts) in builds.items():
            kernel.compile_form(f, opts)
            print(f"compiled {tag} {name}", flush=True)
        return 0
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    dw = device_weights(WeightImage.synthetic(11))
    data = {}
    for ex, ey in enc5_native.EXTENTS:
        inp, tex = enc5_native.random_frames(1, ex, ey)
        data[(ex, ey)] = (inp, tex, torch.zeros_like(inp), torch.zeros_like(tex))
    same = {}
    for name in forms:
        for (ex, ey), (i, t, _, _) in data.items():
            outs = [native_batch(dw, i, t, ex, ey, numerics=numerics(name), variant=f, options=o) for f, o in
                    (builds[("baseline", name)], builds[("working_tree", name)])]
            same[f"{name} {ex}x{ey}"] = all(torch.equal(x, y) for x, y in zip(*outs, strict=True))
            print(f"same bytes {name} {ex}x{ey}: {same[f'{name} {ex}x{ey}']}", flush=True)
    times: dict = defaultdict(list)
    for _ in range(args.rounds):
        for (tag, name), (f, opts) in builds.items():
            num = numerics(name)
            for (ex, ey), (i, t, a, s_) in data.items():
                times[(tag, name, f"{ex}x{ey}")].append(enc5_native.time_kernel(
                    lambda i=i, t=t, a=a, s_=s_, ex=ex, ey=ey, f=f, o=opts, n=num:
                    native_batch(dw, i, t, ex, ey, numerics=n, arena=a, surface=s_, variant=f, options=o),
                    warmup=3, reps=100))
    rows = [{"source": k[0], "form": k[1], "extent": k[2], "median_us": round(float(np.median(v)), 2),
             "rounds_us": [round(x, 2) for x in v]} for k, v in times.items()]
    for r in rows:
        print(json.dumps(r), flush=True)
    print(f"{'form':18s} {'extent':8s} {'baseline':>9s} {'working':>9s} {'ratio':>6s}")
    for name in forms:
        for ex, ey in data:
            b, w = (float(np.median(times[(tag, name, f"{ex}x{ey}")])) for tag in ("baseline", "working_tree"))
            print(f"{name:18s} {ex}x{ey:<5d} {b:9.2f} {w:9.2f} {w / b:6.3f}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "baseline": args.baseline,
                                           "same_bytes": same, "rows": rows}, indent=1) + "\n")
    return 0 if all(same.values()) else 1


def main(argv: list[str]) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    sp = sub.add_parser("sass", help="compare the SASS of every form (no GPU)")
    sp.add_argument("--forms", default="all", help="comma list, or all (the shipped and the tool forms)")
    sp.add_argument("--keep", default="", help="a folder to keep the SASS listings in (baseline_*.sass, new_*.sass)")
    tp = sub.add_parser("time", help="same output bytes and interleaved launch times (sm_90 GPU)")
    tp.add_argument("--forms", default="hopper,hopper_split,hopper_split_occ3", help="comma list of forms")
    tp.add_argument("--rounds", type=int, default=6, help="interleaved rounds")
    tp.add_argument("--compile-only", action="store_true", help="only fill the cubin cache (no GPU needed)")
    tp.add_argument("--json", default="bench/results/enc5_source_ab.json", help="where the timings go")
    for p in (sp, tp):
        p.add_argument("--baseline", required=True, help="a folder of form files, or a pre-refactor enc5.cu")
    args = ap.parse_args(argv)
    return compare_sass(args) if args.mode == "sass" else compare_time(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
