"""Compare the machine code of two kernel caches build by build: after a template change, which cubins kept their SASS.

A template edit changes every build's source hash, so every cubin is rebuilt; this reads both caches' cubins with
`cuobjdump -sass`, pairs them by build tag (the file name before its hash) and reports the tags whose SASS differs,
each with what still agrees: the instruction count, the opcode multiset, and the order of the memory, barrier and
MMA instructions (registers and immediates left out) — a difference confined to scheduling and register choice.

    TCFORGE_CACHE_DIR=.cache/new tcforge gemm build      # the new template's cubins
    python3 -m tools.gemm_sass_compare .cache/old .cache/new [--cuobjdump PATH] [--workers 4]

(tools/gemm_sass_subset.py builds a representative ~56 of the ~1,510 builds into a cache, from the working tree or a
git revision: the quick form of the same check.)
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
from concurrent.futures import ThreadPoolExecutor

from tcforge.runtime.tools import find_tool, sass_env


def by_tag(cache: str) -> dict[str, list[str]]:
    """Cubins of a cache directory grouped by build tag (`<tag>-<hash>.cubin`)."""
    out: dict[str, list[str]] = {}
    for path in glob.glob(os.path.join(cache, "*.cubin")):
        out.setdefault(os.path.basename(path).rsplit("-", 1)[0], []).append(path)
    return out


def sass_digest(cuobjdump: str, path: str) -> str:
    """md5 of a cubin's SASS listing without the lines that name the file."""
    text = subprocess.run([cuobjdump, "-sass", path], capture_output=True, text=True, check=True, env=sass_env()).stdout
    kept = [line for line in text.splitlines() if "Fatbin" not in line and "code for" not in line]
    return hashlib.md5("\n".join(kept).encode()).hexdigest()


_INSTR = re.compile(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;")
_ORDERED = re.compile(r"GMMA|UTMA|SYNCS|BAR|WARPGROUP|STS|LDG|STG|ATOM|RED|MEMBAR|FENCE|EXIT")


def instructions(cuobjdump: str, path: str) -> list[str]:
    """A cubin's SASS instructions, in order."""
    text = subprocess.run([cuobjdump, "-sass", path], capture_output=True, text=True, check=True, env=sass_env()).stdout
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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--cuobjdump", default=find_tool("cuobjdump") or "cuobjdump")
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
