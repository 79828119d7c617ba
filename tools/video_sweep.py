"""The 1,184 scalar video forms of tools/corpus/video.py on the GPU against the emulator:

    python3 -m tools.video_sweep --out FILE.json [--n 4096]    # on the device: nvcc, CuPy; about a minute

Each kernel (32 forms) is built for sm_90a, run on n {a, b, c} triples (edge bytes in half of them, shift amounts
around 32, a = b in every fifth) and run by the emulator on nvcc's PTX of the same source; FILE.json gets the GPU's
name, the number of forms and inputs, and every form whose words differ (count, the first triple, both words)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tools.corpus.video import scalar_forms, source


def triples(n: int, seed: int = 23) -> np.ndarray:
    """n {a, b, c} triples: random words, half built from edge bytes, every fifth with b = a, shifts near 32."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**32, (n, 3), dtype=np.uint64).astype(np.uint32)
    edge = rng.choice(np.array([0x00, 0x01, 0x7F, 0x80, 0x81, 0xFE, 0xFF, 0x40, 0x1F, 0x20, 0x21], np.uint32),
                      (n // 2, 3, 4))
    x[: n // 2] = (edge << np.array([0, 8, 16, 24], np.uint32)).sum(axis=2, dtype=np.uint32)
    x[::5, 1] = x[::5, 0]
    x[::7, 1] = np.arange(len(x[::7])) % 40
    return x


def sweep(out: Path, n: int) -> int:
    """Run every form on the GPU and in the emulator; write `out`; 0 when no word differs."""
    import cupy as cp

    from tcforge.ptx.emulate import emulate

    forms = scalar_forms()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "v.cu"
        src.write_text(source(forms))
        for kind in ("ptx", "cubin"):
            subprocess.run(["nvcc", f"-{kind}", "-O3", "-arch=sm_90a", str(src), "-o", str(Path(tmp) / f"v.{kind}")],
                           check=True, capture_output=True)
        ptx = (Path(tmp) / "v.ptx").read_text()
        module = cp.RawModule(path=str(Path(tmp) / "v.cubin"))
        x = triples(n)
        bad = []
        for k in range(0, len(forms), 32):
            name, width = f"k{k // 32}", len(forms[k:k + 32])
            y = cp.zeros((n, 32), cp.uint32)
            module.get_function(name)((n // 128,), (128,), (cp.asarray(x), y, np.int32(n)))
            gpu = y.get()
            args = {f"{name}_param_0": x, f"{name}_param_1": np.zeros((n, 32), np.uint32), f"{name}_param_2": n}
            emu = np.asarray(emulate(ptx, name, (n // 128, 1, 1), (128, 1, 1), args)[f"{name}_param_1"]).reshape(n, 32)
            for j in range(width):
                diff = np.flatnonzero(gpu[:, j] != emu[:, j])
                if diff.size:
                    i = int(diff[0])
                    bad.append({"form": forms[k + j], "differ": int(diff.size), "abc": [hex(v) for v in x[i]],
                                "gpu": hex(gpu[i, j]), "emulator": hex(emu[i, j])})
    gpu_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out.write_text(json.dumps({"gpu": gpu_name, "forms": len(forms), "inputs": n, "differing_forms": bad}, indent=1))
    print(f"{out}: {gpu_name}, {len(forms)} forms x {n} triples: {len(bad)} forms differ")
    for b in bad[:10]:
        print("  ", b)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.video_sweep", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n", type=int, default=4096, help="input triples (a multiple of 128)")
    args = ap.parse_args(argv)
    if args.n <= 0 or args.n % 128:
        print("video_sweep: error: --n must be a positive multiple of 128", file=sys.stderr)
        return 2
    return sweep(args.out, args.n)


if __name__ == "__main__":
    sys.exit(main())
