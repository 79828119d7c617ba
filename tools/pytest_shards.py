"""Run a pytest selection as N concurrent shards, so a cold kernel cache compiles on every core of the device machine.

    python3 -m tools.pytest_shards --shards 8 --log-dir $OUT/shards -- -m gpu tests/gemm tests/runtime

Collects the selected test ids once, deals them round-robin to the shards (neighbouring parametrisations usually
share a kernel build, so dealing them apart spreads the compiles), runs one pytest process per shard and prints the
summed outcome as pytest's own closing line would read. Exit status: 0 only if every shard passed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OUTCOMES = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "error", "errors")


def collect(args: list[str]) -> list[str]:
    """The test ids pytest selects for these arguments."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True)
    ids = [line for line in proc.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if proc.returncode not in (0, 5):
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
        raise SystemExit(f"pytest_shards: error: collection failed (exit {proc.returncode})")
    return ids


def run_shard(index: int, ids: list[str], options: list[str], log_dir: Path) -> tuple[int, str]:
    """One pytest process over these ids; returns its exit status and closing line."""
    log = log_dir / f"shard{index}.txt"
    with open(log, "w") as out:
        rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options,
                              *ids], stdout=out, stderr=subprocess.STDOUT)
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    return rc, lines[-1] if lines else ""


def tally(closing_lines: list[str]) -> dict[str, int]:
    """Sum pytest closing lines ('3 failed, 10 passed in 2.0s') by outcome."""
    total: dict[str, int] = {}
    for line in closing_lines:
        for count, word in re.findall(r"(\d+) (\w+)", line):
            if word in OUTCOMES:
                key = "errors" if word == "error" else word
                total[key] = total.get(key, 0) + int(count)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", type=int, default=8, help="concurrent pytest processes")
    ap.add_argument("--log-dir", type=Path, default=Path("bench/results/shards"), help="one log per shard")
    ap.add_argument("--option", action="append", default=[], help="an option passed to every shard (e.g. -x)")
    ap.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: the selection (marks, paths, -k)")
    args = ap.parse_args(argv)
    selection = [a for a in args.pytest_args if a != "--"]
    if args.shards < 1:
        print("pytest_shards: error: --shards must be at least 1", file=sys.stderr)
        return 2
    ids = collect(selection)
    if not ids:
        print("no tests selected")
        return 5
    marks = [a for i, a in enumerate(selection) if a == "-m" or (i and selection[i - 1] == "-m")]
    args.log_dir.mkdir(parents=True, exist_ok=True)
    shards = [ids[i::args.shards] for i in range(args.shards)]
    with ThreadPoolExecutor(max_workers=args.shards) as pool:
        results = list(pool.map(lambda i: run_shard(i, shards[i], [*marks, *args.option], args.log_dir),
                                [i for i in range(args.shards) if shards[i]]))
    for i, (rc, line) in enumerate(results):
        print(f"shard {i}: exit {rc}: {line}")
    total = tally([line for _, line in results])
    print(", ".join(f"{n} {k}" for k, n in total.items()))
    return 0 if all(rc == 0 for rc, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
