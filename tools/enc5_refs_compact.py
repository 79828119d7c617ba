"""Shrink a reference folder for the device carry: keep the first `--keep` full frames of each tag (byte-level
diagnosis), turn the others into digest-only frames (sha256 of arena and surface, untouched-pixel count), which the
device check compares by hashing the kernel's outputs (a differing digest frame is recounted on the device's CPU).

Usage (from the repository root): python3 -m tools.enc5_refs_compact [--refs .enc5refs] [--keep 10]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from tools.enc5_refs import digest_meta


def main(argv: list[str]) -> int:
    """Compact every full frame beyond the first `--keep` of its tag."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--refs", default=".enc5refs")
    ap.add_argument("--keep", type=int, default=10)
    args = ap.parse_args(argv)
    seen: dict[str, int] = {}
    changed = 0
    for f in sorted(Path(args.refs).glob("*.npz")):
        tag = f.name.split("_")[0]
        if tag == "dbg" or ".part" in f.name:
            continue
        z = np.load(f)
        if "arena" not in z.files:
            continue
        seen[tag] = seen.get(tag, 0) + 1
        if seen[tag] <= args.keep:
            continue
        meta = json.loads(str(z["meta"]))
        arena, surface = z["arena"], z["surface"]
        meta.update(digest_meta(arena, surface))
        tmp = f.with_name(f.name + ".part.npz")
        np.savez_compressed(tmp, meta=json.dumps(meta))
        tmp.rename(f)
        changed += 1
    print(f"compacted {changed} frames; full frames kept per tag: {seen}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
