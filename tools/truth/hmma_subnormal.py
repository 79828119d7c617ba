"""Decide the f16 HMMA rules no FP8 truth reaches: `mma.sync.m16n8k16.f16.f16.f16.f16` on f16 tiles with subnormal
operands and accumulators, run on the GPU and compared with the two candidate models.

The candidates differ only where the largest alignment exponent belongs to an f16 subnormal, or where a nonzero
sum rounds to zero: the floor rule (alignment at floor(log2|x|), the sign of an underflowing sum kept; the retired
first model of `numerics/hmma.py`, now the candidate row "zero_sign=underflow exp=floor" of `mma_variants`) and the
shipped row of `numerics/tensorcore.py` (exponents clamped at -14, as MMA-Sim's Hopper parameters; zero results +0).
The H100 sided with the shipped row on all 68 outputs where they differ (tests/data/numerics/hopper_hmma_subnormal.npz
holds those tiles). The tiles are bench/numerics_peers.py's random f16 families (finite; subnormal; subnormal x large).

    python3 -m tools.truth.hmma_subnormal run [--tiles-per-family 4096] [--out FILE.npz]   # on an sm_80+ GPU
    python3 -m tools.truth.hmma_subnormal check FILE.npz [--keep DISPUTED.npz]             # anywhere
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from bench.numerics_peers import f16_random

from tcforge.numerics import tensorcore as TC
from tcforge.numerics.hmma import mma_m16n8k16_f16_f16

PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry hmma_f16(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.u32 %r3, %r1, 32, %r2;
    mul.wide.u32 %rd5, %r3, 16;
    add.u64 %rd6, %rd1, %rd5;
    ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd6];
    mul.wide.u32 %rd7, %r3, 8;
    add.u64 %rd8, %rd2, %rd7;
    ld.global.v2.u32 {%r8, %r9}, [%rd8];
    add.u64 %rd9, %rd3, %rd7;
    ld.global.v2.u32 {%r10, %r11}, [%rd9];
    mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r12, %r13}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, {%r10, %r11};
    add.u64 %rd10, %rd4, %rd7;
    st.global.v2.u32 [%rd10], {%r12, %r13};
    ret;
}
"""
_LANE = np.arange(32)
_G, _Q = _LANE >> 2, _LANE & 3


def _pair(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Two uint16 arrays as the uint32 words of an f16x2 register (lo in the low half)."""
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


def fragments(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-lane fragment words of (T,16,16) A, (T,16,8) B, (T,16,8) C: (T,32,4), (T,32,2), (T,32,2) uint32."""
    g, q = _G, _Q
    fa = np.stack([_pair(a[:, g + dr, 2 * q + dc], a[:, g + dr, 2 * q + dc + 1])
                   for dr, dc in ((0, 0), (8, 0), (0, 8), (8, 8))], axis=-1)
    fb = np.stack([_pair(b[:, 2 * q + dk, g], b[:, 2 * q + dk + 1, g]) for dk in (0, 8)], axis=-1)
    fc = np.stack([_pair(c[:, g + dr, 2 * q], c[:, g + dr, 2 * q + 1]) for dr in (0, 8)], axis=-1)
    return fa, fb, fc


def unfragment(fd: np.ndarray) -> np.ndarray:
    """(T,32,2) uint32 D fragments as (T,16,8) uint16 bits."""
    d = np.zeros((fd.shape[0], 16, 8), np.uint16)
    for i, dr in enumerate((0, 8)):
        d[:, _G + dr, 2 * _Q] = (fd[:, :, i] & 0xFFFF).astype(np.uint16)
        d[:, _G + dr, 2 * _Q + 1] = (fd[:, :, i] >> 16).astype(np.uint16)
    return d


def tiles(per_family: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """bench/numerics_peers.py's random f16 tiles, all families concatenated."""
    vs = f16_random(per_family)
    parts = list(vs.chunks())
    return tuple(np.concatenate([getattr(p, f) for p in parts]) for f in ("a", "b", "c"))


def run(per_family: int, out: Path) -> int:
    """On the GPU: every tile through one mma.sync, saved with the inputs."""
    from tools.emulate_gpu import run as gpu_run

    a, b, c = tiles(per_family)
    fa, fb, fc = fragments(a, b, c)
    res = gpu_run(PTX, "hmma_f16", (a.shape[0], 1, 1), (32, 1, 1),
                  {"pa": fa, "pb": fb, "pc": fc, "pd": np.zeros_like(fc)})
    d = unfragment(res["pd"])
    import torch

    meta = {"gpu": torch.cuda.get_device_name(), "tiles_per_family": per_family,
            "made_by": "python3 -m tools.truth.hmma_subnormal run"}
    np.savez_compressed(out, a=a, b=b, c=c, d=d, meta=np.array(json.dumps(meta)))
    print(f"{out}: {a.shape[0]} tiles on {meta['gpu']}")
    return check(out)


def check(path: Path, keep: Path | None = None) -> int:
    """The saved GPU outputs against both candidate models: mismatching outputs of each; `keep`: write the tiles on
    which the models differ (inputs and the GPU's D) to a small .npz."""
    z = np.load(path)
    a, b, c, d = z["a"], z["b"], z["c"], z["d"]
    floor_row = TC.with_step(TC.get_form("mma.m16n8k16.f16.f16.f16"), exp_rule="floor", zero_sign="underflow")
    floor_rule = TC.run_form(floor_row, a, b, c)
    clamp_rule = mma_m16n8k16_f16_f16(a, b, c)
    differ = floor_rule != clamp_rule
    print(f"{path}: {json.loads(str(z['meta']))['gpu']}, {d.size:,} outputs; the two models differ on "
          f"{int(differ.sum())}")
    for name, model in (("floor rule (floor exponent, signed underflow)", floor_rule),
                        ("shipped (clamp at -14, +0 results)", clamp_rule)):
        bad = model != d
        print(f"  {name}: {int(bad.sum())} mismatching outputs; on the disputed ones {int((bad & differ).sum())} "
              f"of {int(differ.sum())}")
    if keep is not None:
        t = np.flatnonzero(differ.any(axis=(1, 2)))
        np.savez_compressed(keep, a=a[t], b=b[t], c=c[t], d=d[t], tile=t, meta=z["meta"])
        print(f"{keep}: the {t.size} tiles on which the models differ")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: run (GPU) or check (CPU)."""
    ap = argparse.ArgumentParser(prog="python3 -m tools.truth.hmma_subnormal", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="on the GPU")
    r.add_argument("--tiles-per-family", type=int, default=4096)
    r.add_argument("--out", type=Path, default=Path("hmma_subnormal.npz"))
    k = sub.add_parser("check", help="a saved run against both models")
    k.add_argument("file", type=Path)
    k.add_argument("--keep", type=Path, help="write the disputed tiles (inputs and the GPU's D) here")
    args = ap.parse_args(argv)
    return run(args.tiles_per_family, args.out) if args.cmd == "run" else check(args.file, args.keep)


if __name__ == "__main__":
    sys.exit(main())
