"""Build a representative subset of the GEMM's cubins (about 50 of the ~1,510) for a SASS-identity check after a kernel
refactor: every variant family, input/output type, operand layout, cluster shape, split/stream-K mode, the swapped
product, fp8 promotion, the deferred and spread epilogues, and the diagnostic builds (timeline, stream-K trace, diag).

    python3 -m tools.gemm_sass_subset --cache .cache/sass_old --rev HEAD   # the committed kernel source
    python3 -m tools.gemm_sass_subset --cache .cache/sass_new              # the working tree's
    python3 -m tools.gemm_sass_compare .cache/sass_old .cache/sass_new

`--per-variant` builds instead every variant's fp16 -> fp32 build (row-major a and B) and its split-K builds: a second,
wider sample. `--rev` renders as that git revision did (its codegen and its single-file `gemm_sm90.cu`; the header
library from the working tree), so the baseline needs no checkout. `--list` prints the tags only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

from tcforge.gemm import codegen
from tcforge.gemm.build import Build, build_all
from tcforge.gemm.variants import VARIANTS, pair_config, split_config

ROOT = Path(__file__).resolve().parents[1]

# (variant or variant:mode, in, out, B K-major, a K-major); modes: split (the in-kernel split-K build), pair (the
# DSMEM pair build), planes (the cp.async SPLITK build), tl (timeline), trace (stream-K trace), diagN
PICKS = [
    ("baseline", "fp16", "fp32", False, True),
    ("baseline", "e4m3", "bf16", True, True),
    ("baseline", "bf16", "bf16", True, False),
    ("baseline:planes", "fp16", "fp16", False, True),
    ("tma_ws", "fp16", "fp16", True, True),
    ("bn256", "bf16", "fp32", False, True),
    ("cluster2", "fp16", "fp32", False, True),
    ("tma_store", "fp16", "fp16", False, True),
    ("tma_store", "e4m3", "fp32", True, True),
    ("bk64", "bf16", "bf16", True, True),
    ("hoist", "fp16", "fp16", True, True),
    ("hoist", "bf16", "fp32", False, False),
    ("hoist:split", "fp16", "fp32", False, True),
    ("hoist:split", "e4m3", "bf16", True, True),
    ("pingpong", "fp16", "fp32", False, True),
    ("pingpong_cm2", "e4m3", "fp16", True, True),
    ("tuned_pp", "bf16", "bf16", False, True),
    ("tuned_pp:split", "fp16", "fp16", True, True),
    ("tuned_cm2", "e4m3", "bf16", True, True),
    ("tuned", "fp16", "fp16", False, False),
    ("tuned", "fp16", "fp32", True, True),
    ("hoist_ed", "fp16", "fp16", False, True),
    ("tuned_ed", "bf16", "bf16", True, True),
    ("tuned_ed", "e4m3", "fp16", True, True),
    ("hoist_es", "fp16", "fp32", False, True),
    ("hoist_es", "e4m3", "bf16", True, True),
    ("bm64", "fp16", "fp32", True, True),
    ("epi4", "bf16", "fp16", False, True),
    ("epi8_bk32", "fp16", "fp16", False, True),
    ("cluster4", "e4m3", "fp32", True, True),
    ("promote", "e4m3", "bf16", True, True),
    ("promote_cm1", "e4m3", "fp32", True, True),
    ("promote:split", "e4m3", "fp16", True, True),
    ("streamk", "fp16", "fp32", False, True),
    ("streamk", "e4m3", "bf16", True, True),
    ("streamk_cm1", "bf16", "bf16", True, False),
    ("t64_sk", "fp16", "fp16", False, True),
    ("t64", "e4m3", "fp32", True, True),
    ("t144", "fp16", "fp32", False, True),
    ("t144s", "bf16", "fp16", False, True),
    ("t320", "fp16", "fp16", True, True),
    ("t192", "e4m3", "bf16", True, True),
    ("sw8", "fp16", "fp32", False, True),
    ("sw8:pair", "fp16", "fp16", True, True),
    ("sw16", "e4m3", "fp16", True, True),
    ("sw64", "bf16", "bf16", False, True),
    ("sw64:split", "fp16", "fp32", True, True),
    ("sw128c4", "fp16", "fp16", True, True),
    ("sw8c4", "e4m3", "fp32", True, True),
    ("n80c4", "fp16", "fp16", True, True),
    ("n128c4", "bf16", "fp32", False, True),
    ("sw32n2", "e4m3", "bf16", True, True),
    ("tuned:tl", "fp16", "fp16", True, True),
    ("streamk:trace", "fp16", "fp32", False, True),
    ("hoist:diag7", "e4m3", "bf16", True, True),
    ("hoist:diag2", "fp16", "fp32", False, True),
]


def config_of(spec: str):
    name, _, mode = spec.partition(":")
    c = VARIANTS[name].config
    if mode == "split":
        return split_config(c)
    if mode == "pair":
        return pair_config(c)
    if mode == "planes":
        return split_config(c)
    if mode == "tl":
        return replace(c, timeline=True)
    if mode == "trace":
        return replace(c, streamk_trace=True)
    if mode.startswith("diag"):
        return replace(c, diag=int(mode[4:]))
    return c


def subset() -> list[Build]:
    """The subset's builds (distinct)."""
    out: list[Build] = []
    for spec, i, o, bk, ak in PICKS:
        b = Build(config_of(spec), i, o, bk, ak)
        if b not in out:
            out.append(b)
    return out


def per_variant() -> list[Build]:
    """Every variant's (and its split configs') fp16 -> fp32 build with row-major a and B."""
    from tcforge.gemm.build import all_builds

    return [b for b in all_builds(a_col=False) if (b.in_kind, b.out_kind, b.b_kmajor) == ("fp16", "fp32", False)]


def use_revision(rev: str) -> None:
    """Render as `rev` did: its codegen (run from its own source) with its gemm_sm90.cu as the template."""
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True,
                              check=True).stdout

    text = show("src/tcforge/gemm/kernels/gemm_sm90.cu")
    old = types.ModuleType("codegen_at_rev")
    exec(compile(show("src/tcforge/gemm/codegen.py"), f"{rev}:codegen.py", "exec"), old.__dict__)
    old.template = lambda: text   # its single-file kernel (a later one's part headers are not looked up)
    codegen.render = old.render   # type: ignore[assignment]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", help="kernel cache directory to build into")
    ap.add_argument("--rev", default=None, help="a git revision whose kernel source to build (default: working tree)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--per-variant", action="store_true", help="every variant's fp16 -> fp32 build instead")
    args = ap.parse_args(argv)
    builds = per_variant() if args.per_variant else subset()
    if args.list:
        for b in builds:
            print(b.tag())
        print(len(builds), "builds")
        return 0
    if not args.cache:
        ap.error("--cache is required")
    os.environ["TCFORGE_CACHE_DIR"] = args.cache
    if args.rev:
        use_revision(args.rev)
    bad = 0
    for b, m in build_all(builds, workers=args.jobs):
        s = m.stats["tcf_gemm"]
        bad += s.spills or m.wgmma_serialized
        print(f"{b.tag():<64} regs {s.registers:>3} spill {s.spill_stores}/{s.spill_loads} stack {s.stack_frame}"
              f"{' SERIALIZED' if m.wgmma_serialized else ''}", flush=True)
    print(f"{len(builds)} builds, {bad} with spills or serialised wgmma")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
