"""Compare the machine code of two kernel caches build by build: after a template change, which cubins kept their SASS.

`compare OLD NEW`: a template edit changes every build's source hash, so every cubin is rebuilt; this reads both
caches' cubins with `cuobjdump -sass`, pairs them by build tag (the file name before its hash) and reports the tags
whose SASS differs, each with what still agrees: the instruction count, the opcode multiset, and the order of the
memory, barrier and MMA instructions (registers and immediates left out) — a difference confined to scheduling and
register choice.

    TCFORGE_CACHE_DIR=.cache/new tcforge gemm build      # the new template's cubins (all ~1,510)
    python3 -m tools.gemm_sass_compare compare .cache/old .cache/new [--cuobjdump PATH] [--workers 4]

`build`: the quick form of the same check builds a representative subset of the cubins (about 50): every variant
family, input/output type, operand layout, cluster shape, split/stream-K mode, the swapped product, fp8 promotion,
the deferred and spread epilogues, and the diagnostic builds (timeline, stream-K trace, diag).

    python3 -m tools.gemm_sass_compare build --cache .cache/sass_old --rev HEAD   # the committed kernel source
    python3 -m tools.gemm_sass_compare build --cache .cache/sass_new              # the working tree's
    python3 -m tools.gemm_sass_compare compare .cache/sass_old .cache/sass_new

`build --per-variant` builds instead every variant's fp16 -> fp32 build (row-major a and B) and its split-K builds: a
second, wider sample. `--rev` renders as that git revision did (its codegen and its single-file `gemm_sm90.cu`; the
header library from the working tree), so the baseline needs no checkout. `--list` prints the tags only.
"""

from __future__ import annotations

import argparse
import collections
import glob
import hashlib
import os
import re
import subprocess
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from tcforge.gemm import codegen
from tcforge.gemm.build import Build, build_all
from tcforge.gemm.variants import VARIANTS, pair_config, split_config
from tcforge.runtime.tools import disassemble, find_tool

ROOT = Path(__file__).resolve().parents[1]


def by_tag(cache: str) -> dict[str, list[str]]:
    """Cubins of a cache directory grouped by build tag (`<tag>-<hash>.cubin`)."""
    out: dict[str, list[str]] = {}
    for path in glob.glob(os.path.join(cache, "*.cubin")):
        out.setdefault(os.path.basename(path).rsplit("-", 1)[0], []).append(path)
    return out


def sass_digest(cuobjdump: str, path: str) -> str:
    """md5 of a cubin's SASS listing without the lines that name the file."""
    text = disassemble(path, cuobjdump)
    kept = [line for line in text.splitlines() if "Fatbin" not in line and "code for" not in line]
    return hashlib.md5("\n".join(kept).encode()).hexdigest()


_INSTR = re.compile(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;")
_ORDERED = re.compile(r"GMMA|UTMA|SYNCS|BAR|WARPGROUP|STS|LDG|STG|ATOM|RED|MEMBAR|FENCE|EXIT")


def instructions(cuobjdump: str, path: str) -> list[str]:
    """A cubin's SASS instructions, in order."""
    text = disassemble(path, cuobjdump)
    return [m.group(1) for line in text.splitlines() if (m := _INSTR.match(line))]


def what_agrees(cuobjdump: str, old: str, new: str) -> str:
    """How two differing listings still agree: instruction count, opcode multiset, and the order of the memory /
    barrier / MMA instructions with registers, predicates and immediates left out."""
    a, b = instructions(cuobjdump, old), instructions(cuobjdump, new)

    def opcode(i: str) -> str:
        return i.split()[1] if i.startswith("@") else i.split()[0]

    def shape(i: str) -> str:
        return re.sub(r"\bU?R\d+\b|\bU?P\d\b|0x[0-9a-f]+", "_", i).replace(".reuse", "")

    same_ops = collections.Counter(map(opcode, a)) == collections.Counter(map(opcode, b))
    same_order = [shape(i) for i in a if _ORDERED.search(i)] == [shape(i) for i in b if _ORDERED.search(i)]
    return (f"{len(a)} vs {len(b)} instructions, opcodes {'same' if same_ops else 'DIFFER'}, memory/barrier/MMA "
            f"order {'same' if same_order else 'DIFFERS'}")


def compare(args: argparse.Namespace) -> int:
    """Pair the two caches' cubins by tag and report the tags whose SASS differs."""
    for cache in (args.old, args.new):
        if not os.path.isdir(cache):
            print(f"error: {cache} is not a directory", file=sys.stderr)
            return 2
    old, new = by_tag(args.old), by_tag(args.new)
    common = sorted(set(old) & set(new))

    def same(tag: str) -> bool:
        a = {sass_digest(args.cuobjdump, p) for p in old[tag]}
        return bool(a & {sass_digest(args.cuobjdump, p) for p in new[tag]})

    with ThreadPoolExecutor(args.workers) as ex:
        results = list(ex.map(same, common))
    print(f"{len(common)} common tags, {sum(results)} identical SASS; {len(set(new) - set(old))} new tags")
    for tag, ok in zip(common, results, strict=True):
        if not ok:
            newest = max(new[tag], key=os.path.getmtime)
            print("DIFF", tag, "-", what_agrees(args.cuobjdump, old[tag][0], newest))
    return 0


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


def build(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Build the subset (or every variant's fp16 -> fp32 build) into --cache; exit status 1 on a spill."""
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


def main(argv: list[str]) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    cp = sub.add_parser("compare", help="pair two caches' cubins by tag and compare their SASS")
    cp.add_argument("old", help="the baseline's kernel cache")
    cp.add_argument("new", help="the kernel cache to compare with it")
    cp.add_argument("--cuobjdump", default=find_tool("cuobjdump") or "cuobjdump")
    cp.add_argument("--workers", type=int, default=4)
    bp = sub.add_parser("build", help="build the representative subset into a cache")
    bp.add_argument("--cache", help="kernel cache directory to build into")
    bp.add_argument("--rev", default=None, help="a git revision whose kernel source to build (default: working tree)")
    bp.add_argument("--jobs", type=int, default=2)
    bp.add_argument("--list", action="store_true")
    bp.add_argument("--per-variant", action="store_true", help="every variant's fp16 -> fp32 build instead")
    args = ap.parse_args(argv)
    return compare(args) if args.mode == "compare" else build(bp, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
