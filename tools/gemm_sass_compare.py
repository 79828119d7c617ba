"""Compare the machine code of two kernel caches build by build: after a template change, which cubins kept their SASS.

A template edit changes every build's source hash, so every cubin is rebuilt; this reads both caches' cubins with
`cuobjdump -sass`, pairs them by build tag (the file name before its hash) and reports the tags whose SASS differs.

    TCFORGE_CACHE_DIR=.cache/new tcforge gemm build      # the new template's cubins
    python3 tools/gemm_sass_compare.py .cache/old .cache/new [--cuobjdump PATH] [--workers 4]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def by_tag(cache: str) -> dict[str, list[str]]:
    """Cubins of a cache directory grouped by build tag (`<tag>-<hash>.cubin`)."""
    out: dict[str, list[str]] = {}
    for path in glob.glob(os.path.join(cache, "*.cubin")):
        out.setdefault(os.path.basename(path).rsplit("-", 1)[0], []).append(path)
    return out


def sass_digest(cuobjdump: str, path: str) -> str:
    """md5 of a cubin's SASS listing without the lines that name the file."""
    text = subprocess.run([cuobjdump, "-sass", path], capture_output=True, text=True, check=True).stdout
    kept = [line for line in text.splitlines() if "Fatbin" not in line and "code for" not in line]
    return hashlib.md5("\n".join(kept).encode()).hexdigest()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
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
            print("DIFF", tag)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
