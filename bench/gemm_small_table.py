"""Print `bench/gemm_small.py` results as one line per (shape, dtype pair, B layout): each variant's time and ratio to
cuBLAS in the same run (fp8: against the promoted default, [fast-accum] beside it), the fastest marked with *, and
any failed check named. For reading a device call's JSON at a glance.

    python3 bench/gemm_small_table.py bench/results/gemm_small_TAG.json [more.json ...]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def rows_by_case(rows: list[dict]) -> dict[tuple, list[dict]]:
    """The rows grouped by (M, N, K, input, output, B layout), in the order they were run."""
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        key = (r["m"], r["n"], r["k"], r["in"], r["out"], "colB" if r.get("b_kmajor") else "rowB")
        out.setdefault(key, []).append(r)
    return out


def case_line(key: tuple, rows: list[dict]) -> str:
    """One case: `MxNxK in->out layout | variant us xratio ...`, the fastest variant that passed its check starred."""
    m, n, k, i, o, lay = key
    ok = [r for r in rows if r.get("ok") and not math.isnan(r.get("ms", math.nan))]
    best = min(ok, key=lambda r: r["ms"])["variant"] if ok else None
    cells = []
    for r in rows:
        if not r.get("ok"):
            cells.append(f"{r['variant']} FAILED {r.get('error') or 'check'}"[:80])
            continue
        fast = f" [{r['ratio_cublas_fast']:.2f}]" if i == "e4m3" and "ratio_cublas_fast" in r else ""
        star = "*" if r["variant"] == best else ""
        cells.append(f"{star}{r['variant']} {r['ms'] * 1e3:.1f}us x{r.get('ratio_cublas', math.nan):.2f}{fast}")
    cublas = rows[0].get("cublas_ms", math.nan) * 1e3
    return f"{m}x{n}x{k} {i}->{o} {lay} (cuBLAS {cublas:.1f}us) | " + " | ".join(cells)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv:
        try:
            data = json.loads(Path(path).read_text())
            rows = data["rows"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"{path}: not a gemm_small result ({type(exc).__name__}: {exc})", file=sys.stderr)
            return 1
        print(f"== {path} ({len(rows)} rows, {data.get('timing', '?')})")
        for key, case in rows_by_case(rows).items():
            print(case_line(key, case))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
