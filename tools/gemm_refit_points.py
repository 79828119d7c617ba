"""Pick measured points to re-time on a new kernel template: every point of tests/gemm/test_validate.py's tables with
a competitive variant (within --within of the point's best) timed only on earlier templates (not in the tables named
by --current), taken greedily — the points whose variants are rarest first — until each such variant (other than
the large tiles, which --big names) has --per-variant points; each point lists `auto` and its competitive variants.
Writes a bench/gemm_points.py list (16-bit over column-major B timed as bf16:bf16, over row-major B as fp16:fp32).

    python3 tools/gemm_refit_points.py OUT.json --current MEASURED_S30,MEASURED_S30_LONG_N --without MEASURED_S31

(the thirteenth session's list, bench/points/gemm_s31_refit1.json + refit2.json: its first 40 points and the rest,
chosen from the tables as they stood before MEASURED_S31 held the re-timed points; with the later tables,
MEASURED_S33_N2, MEASURED_S33_WIDE, MEASURED_S33_ROWB, MEASURED_S37 and MEASURED_S37B, also left out, the list is
the same)
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def combo(kind: str, layout: str) -> str:
    """The dtype pair a table's (kind, layout) is timed with."""
    return "e4m3:bf16" if kind == "e4m3" else ("bf16:bf16" if layout == "col" else "fp16:fp32")


def pick(measured: dict, current: dict, *, within: float, per_variant: int, big: set[str], seed: int) -> list[dict]:
    """The point list (see the module docstring)."""
    cand: dict = {}
    for key, times in measured.items():
        best = min(times.values())
        comp = [v for v, t in times.items() if t <= within * best]
        old = [v for v in comp if v not in current.get(key, {})]
        if old and not set(old) <= big:
            cand[key] = comp
    cover = collections.Counter(v for c in cand.values() for v in c)
    keys = list(cand)
    random.Random(seed).shuffle(keys)
    chosen, got = [], collections.Counter()
    for key in sorted(keys, key=lambda k: min(cover[v] for v in cand[k])):
        if any(got[v] < per_variant for v in cand[key] if v not in big):
            chosen.append(key)
            got.update(cand[key])
    return [{"shape": list(shape), "kind": kind, "layout": layout, "combo": combo(kind, layout),
             "variants": ["auto", *cand[(shape, kind, layout)]]} for shape, kind, layout in chosen]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--current", default="MEASURED_S30,MEASURED_S30_LONG_N",
                    help="the tables timed on the current template")
    ap.add_argument("--within", type=float, default=1.12)
    ap.add_argument("--per-variant", type=int, default=6)
    ap.add_argument("--big", default="hoist,streamk,tuned,t320")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--without", default="", help="tables to leave out of the measured points (later re-timings)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "tests" / "gemm"))
    import test_validate as tv

    names, without = args.current.split(","), [n for n in args.without.split(",") if n]
    unknown = [n for n in names + without if n not in tv.MEASURED_TABLES]
    if unknown:
        print(f"gemm_refit_points: no measured-points table named {', '.join(unknown)} in tests/gemm/test_validate.py",
              file=sys.stderr)
        return 1
    measured = tv._merged(*(getattr(tv, n) for n in tv.MEASURED_TABLES if n not in without))
    current = tv._merged(*(getattr(tv, n) for n in names))
    points = pick(measured, current, within=args.within, per_variant=args.per_variant,
                  big=set(args.big.split(",")), seed=args.seed)
    Path(args.out).write_text(json.dumps(points))
    print(f"{len(points)} points, {sum(len(p['variants']) for p in points)} launches -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
