"""Which entries of a PTX module the driver's JIT refuses: each `.entry` is loaded alone (the module's header and
declarations, every `.func`, the entry) with cuModuleLoadData, on the GPU.

    python3 -m tools.jit_entries build/emulate_corpus_ptx.npz samples_sm90a    # a module of the corpus build
    python3 -m tools.jit_entries FILE.ptx
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from tcforge.ptx.module import read_module


def split(ptx: str) -> dict[str, str]:
    """One loadable PTX text per entry: the lines outside every function, all `.func`s, and the entry."""
    module = read_module(ptx, "<ptx>")
    lines = ptx.splitlines()
    inside = set()
    for f in module.functions:
        inside.update(range(f.line - 1, f.end_line))
    head = [ln for i, ln in enumerate(lines) if i not in inside]
    funcs = [ln for f in module.functions if f.kind != "entry" for ln in lines[f.line - 1:f.end_line]]
    return {f.name: "\n".join(head + funcs + lines[f.line - 1:f.end_line]) + "\n"
            for f in module.functions if f.kind == "entry"}


def main(argv: list[str]) -> int:
    from tcforge.runtime import driver

    ptx = bytes(np.load(argv[0])[f"ptx/{argv[1]}"]).decode() if len(argv) == 2 else Path(argv[0]).read_text()
    driver.ensure_context()
    try:
        driver.Module(ptx.encode() + b"\0")
        print("the whole module loads")
        return 0
    except driver.CudaError as exc:
        print(f"the whole module: {exc}")
    bad = 0
    for name, text in split(ptx).items():
        try:
            driver.Module(text.encode() + b"\0")
        except driver.CudaError as exc:
            bad += 1
            print(f"{name}: {str(exc)[:200]}")
    print(f"{bad} entries refused alone")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
