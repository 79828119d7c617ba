"""MMA-Sim (`pip install mmasim`) and tcforge.numerics on the same hardware vectors: agreement and speed per form.

For each instruction form and vector set: outputs each emulator gets wrong against the hardware, outputs on which the
two disagree, and outputs per second of CPU time (torch and numpy on one thread). MMA-Sim has no FP8 `mma.sync` on
Hopper, so its peer there is its own Hopper HMMA model composed as ptxas lowers the instruction (two m16n8k16 steps
over k % 4 in {0, 1} then {2, 3}, then an IEEE add of C); its Hopper wgmma e4m3 model (the only Hopper FP8 form it
has) runs on the same H200 vectors as a reference point. The f16 HMMA (`mma.sync.m16n8k16.f16.f16.f16.f16`) runs on
the H100's outputs for the random f16 tiles on which the retired floor rule and the shipped row differ
(tests/data/numerics/hopper_hmma_subnormal.npz) and on all the random f16 tiles. The packed tensor-core truth
(`--wgmma`, by default tests/data/numerics/hopper_tc_truth.npz) adds one row per form it holds, when present. Writes
DIR/numerics_peers.json (DIR: bench/results).

    OMP_NUM_THREADS=1 taskset -c 0 python3 -m bench.numerics_peers [--out DIR] [--digest-tiles N] [--wgmma FILE]
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np

from tcforge.cliutil import ArgumentParser, Counter, output_dir
from tcforge.errors import TcforgeError
from tcforge.numerics import mma_m16n8k16_f16_f16, mma_m16n8k32_e4m3_f16
from tcforge.numerics import truth as T

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "numerics"
CHUNK = 1024  # tiles per emulator call
HOPPER_K = (np.flatnonzero(np.arange(32) % 4 < 2), np.flatnonzero(np.arange(32) % 4 >= 2))  # the two HMMA steps
F_ADA = "mma m16n8k32 e4m3 f16, Ada"
F_HOPPER = "mma m16n8k32 e4m3 f16, Hopper"
F_HMMA = "mma m16n8k16 f16 f16, Hopper"
P_ADA = "Ada MMA e4m3"
P_LOWERED = "Hopper HMMA f16 x2 + f16 add"
P_WGMMA = "Hopper WGMMA e4m3 (other instruction)"
P_HMMA = "Hopper HMMA f16"
PEER_CALLS = {  # each peer label: the MMA-Sim operation behind it
    P_ADA: 'MMA("Ada Lovelace", "m16n8k32.f16.e4m3.e4m3.f16")',
    P_LOWERED: 'MMA("Hopper", "m16n8k16.f16.f16.f16.f16") over k % 4 in {0, 1} onto +0, then {2, 3}; + C (IEEE f16)',
    P_WGMMA: 'WGMMA("Hopper", "m64n8k32.f16.e4m3.e4m3")',
    P_HMMA: 'MMA("Hopper", "m16n8k16.f16.f16.f16.f16")',
}
Fn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
TORCH_TYPES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "f16": "float16", "bf16": "bfloat16",
               "f32": "float32"}
BITS = {"e4m3": np.uint8, "e5m2": np.uint8, "f16": np.uint16, "bf16": np.uint16, "f32": np.uint32}


@dataclass
class Chunk:
    """Operand tiles (a [row, k], b [k, col], c) and a test of outputs against the hardware (None: no truth)."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    hw: Callable[[np.ndarray], np.ndarray] | None
    hw_bits: np.ndarray | None = None  # per-output hardware bits, where stored (for the examples)


@dataclass
class VectorSet:
    """A named set of vectors: how many tiles, what one hardware unit is, and its chunks (made on demand)."""

    name: str
    unit: str
    n_hw: int
    tiles: int
    chunks: Callable[[], Iterator[Chunk]]


@dataclass
class Tally:
    """Per-emulator counts over a row: CPU seconds, outputs, hardware mismatches, disagreements with tcforge."""

    cpu_s: float = 0.0
    outputs: int = 0
    vs_hw: int | None = None
    vs_tcforge: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    examples: list[dict] = field(default_factory=list)


# ---------------------------------------------------------------- MMA-Sim adapters (bits in, bits out)
def _mmasim() -> tuple[object, object]:
    """Import torch and MMA-Sim quietly on one thread; ImportError where either is missing."""
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)  # "no CUDA runtime" on CPU machines
    import torch
    from mmasim import nv_ptx

    torch.set_num_threads(1)
    return torch, nv_ptx


def _to_torch(torch, x: np.ndarray, dtype) -> object:
    """Bit patterns (uint8/16/32) as a torch tensor of `dtype` (same width)."""
    signed = {1: np.int8, 2: np.int16, 4: np.int32}[x.itemsize]
    return torch.from_numpy(np.ascontiguousarray(x).view(signed)).view(dtype)


def _to_bits(torch, t, dtype: type) -> np.ndarray:
    """A torch result as unsigned bit patterns."""
    signed = {1: torch.int8, 2: torch.int16, 4: torch.int32}[t.element_size()]
    return t.contiguous().view(signed).numpy().view(dtype)


def _vectors(ta, tb) -> tuple[object, object]:
    """(T, M, K) and (T, K, N) operands as the (T, M, N, K) row and column vectors of every output."""
    m, n = ta.shape[1], tb.shape[2]
    return ta[:, :, None, :].expand(-1, -1, n, -1), tb.transpose(1, 2)[:, None, :, :].expand(-1, m, -1, -1)


def native_peer(torch, op, a_type, b_type, d_type, out: type) -> Fn:
    """An MMA-Sim operation applied to every output of bit-pattern tiles through its dot-product entry (`dpa`)."""

    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        va, vb = _vectors(_to_torch(torch, a, a_type), _to_torch(torch, b, b_type))
        return _to_bits(torch, op.dpa(va, vb, _to_torch(torch, c, d_type)), out)

    return run


def ieee_add(x: np.ndarray, y: np.ndarray, ft: type) -> np.ndarray:
    """HADD2 / FADD as IEEE add.rn of two bit arrays of float type ft (f16 via an exact float64 sum); NaN canonical."""
    with np.errstate(invalid="ignore", over="ignore"):
        xf, yf = x.view(ft), y.view(ft)
        s = xf.astype(np.float64) + yf.astype(np.float64) if ft is np.float16 else xf + yf
        d = s.astype(ft).view(x.dtype)
    return np.where(np.isnan(s), x.dtype.type(np.iinfo(x.dtype).max >> 1), d)


def lowered_hopper_peer(torch, nv_ptx, a_t: str = "e4m3", b_t: str = "e4m3", d_t: str = "f16") -> Fn:
    """FP8 mma.sync on Hopper from MMA-Sim's Hopper HMMA: operands -> f16 (exact), two steps onto +0, IEEE add of C."""
    hmma = nv_ptx.MMA("Hopper", f"m16n8k16.{d_t}.f16.f16.{d_t}")
    lo, hi = (torch.from_numpy(k) for k in HOPPER_K)
    ta, tb, td = (getattr(torch, TORCH_TYPES[t]) for t in (a_t, b_t, d_t))
    bits, ft = BITS[d_t], (np.float16 if d_t == "f16" else np.float32)

    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        va, vb = _vectors(_to_torch(torch, a, ta), _to_torch(torch, b, tb))
        fa, fb = va.to(torch.float16), vb.to(torch.float16)
        acc = hmma.dpa(fa[..., lo], fb[..., lo], torch.zeros(c.shape, dtype=td))
        acc = hmma.dpa(fa[..., hi], fb[..., hi], acc)
        return ieee_add(_to_bits(torch, acc, bits), c, ft)

    return run


# ---------------------------------------------------------------- vector sets
def _split(n: int, make: Callable[[int, int], Chunk], step: int = CHUNK) -> Callable[[], Iterator[Chunk]]:
    return lambda: (make(s, min(s + step, n)) for s in range(0, n, step))


def published(name: str) -> VectorSet:
    """Published single dot products as whole tiles (row 0 of A, column 0 of B, C[0, 0]); the hardware gave d[0, 0]."""
    z = np.load(DATA / "shared" / f"{name}.npz")
    n = z["a"].shape[0]
    a, b, c = np.zeros((n, 16, 32), np.uint8), np.zeros((n, 32, 8), np.uint8), np.zeros((n, 16, 8), np.uint16)
    a[:, 0, :] = z["a"].astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    b[:, :, 0] = z["b"].astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    c[:, 0, 0] = z["c_f16"]
    want = z["d_f16"]
    return VectorSet(name, "outputs", n, n, _split(n, lambda s, e: Chunk(
        a[s:e], b[s:e], c[s:e], lambda d, w=want[s:e]: d[:, 0, 0] != w)))


def tiles_sample() -> VectorSet:
    """The 600 shared H200 tiles (families 0-5), every output measured."""
    z = np.load(DATA / "shared" / "h200_mma_tiles_sample.npz")
    n = z["a"].shape[0]
    return VectorSet("h200_mma_tiles_sample", "outputs", n * 128, n, _split(n, lambda s, e: Chunk(
        z["a"][s:e], z["b"][s:e], z["c"][s:e], lambda d, w=z["d"][s:e]: d != w, z["d"][s:e])))


def truth_tiles(per_family: int) -> VectorSet:
    """The project's H200 truth: the fully stored tiles of each of the 9 families, every output."""
    z = T.load_truth("h200_mma_truth", DATA)
    kinds = sorted(T.MMA_KINDS)
    n = min(per_family, z["k0_d"].shape[0])

    def chunks() -> Iterator[Chunk]:
        for k in kinds:
            for s in range(0, n, CHUNK):
                want = z[f"k{k}_d"][s : min(s + CHUNK, n)]
                a, b, c = T.mma_tile_inputs(k, T.TRUTH_SEED, s, want.shape[0])
                yield Chunk(a, b, c, lambda d, w=want: d != w, want)

    return VectorSet("h200_mma_truth (full tiles)", "outputs", len(kinds) * n * 128, len(kinds) * n, chunks)


def truth_digests(per_family: int) -> VectorSet:
    """The project's H200 truth by tile digest: the first `per_family` tiles of each family (32768 stored)."""
    z = T.load_truth("h200_mma_truth", DATA)
    kinds = sorted(T.MMA_KINDS)
    n = min(per_family, z["k0_digest"].size)

    def chunks() -> Iterator[Chunk]:
        for k in kinds:
            for s in range(0, n, CHUNK):
                want = z[f"k{k}_digest"][s : min(s + CHUNK, n)]
                a, b, c = T.mma_tile_inputs(k, T.TRUTH_SEED, s, want.size)
                yield Chunk(a, b, c, lambda d, w=want: T.tile_digests(d) != w)

    return VectorSet("h200_mma_truth (tile digests)", "tiles", len(kinds) * n, len(kinds) * n, chunks)


def f16_random(per_family: int, seed: int = 41) -> VectorSet:
    """Random f16 HMMA tiles: finite f16; subnormal operands; subnormal x large products (hardware: next function)."""
    spans = [((0, 30), (0, 30), (0, 30)), ((0, 2), (0, 2), (0, 2)), ((0, 2), (20, 30), (0, 8))]
    rng = np.random.default_rng(seed)

    def f16(shape: tuple[int, ...], lo: int, hi: int) -> np.ndarray:
        ef = rng.integers(lo, hi + 1, shape)
        return ((rng.integers(0, 2, shape) << 15) | (ef << 10) | rng.integers(0, 1024, shape)).astype(np.uint16)

    n = per_family
    fam = [(f16((n, 16, 16), *sa), f16((n, 16, 8), *sb), f16((n, 16, 8), *sc)) for sa, sb, sc in spans]
    a, b, c = (np.concatenate([f[i] for f in fam]) for i in range(3))
    return VectorSet("random f16 tiles (no hardware truth stored)", "outputs", 0, 3 * n,
                     _split(3 * n, lambda s, e: Chunk(a[s:e], b[s:e], c[s:e], None)))


def hmma_subnormal() -> VectorSet:
    """The H100's D for the f16_random(4096) tiles on which the two f16 HMMA rules differ, every output measured."""
    z = np.load(DATA / "hopper_hmma_subnormal.npz")
    a, b, c, d = (z[f] for f in ("a", "b", "c", "d"))
    n = a.shape[0]
    return VectorSet(f"hopper_hmma_subnormal: the {n} tiles where the rules differ", "outputs", n * 128, n,
                     _split(n, lambda s, e: Chunk(a[s:e], b[s:e], c[s:e], lambda x, w=d[s:e]: x != w, d[s:e])))


def zero_sign_tiles(n: int, seed: int = 41) -> VectorSet:
    """e4m3 tiles whose rows are all +0, all -0 or random (b positive), C = +-0: the sign of an all-zero sum."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 0x7F, (n, 16, 32)).astype(np.uint8) | (rng.integers(0, 2, (n, 16, 32)) << 7).astype(np.uint8)
    a = np.where(rng.integers(0, 3, (n, 16, 1)) == 0, np.uint8(0x80), a)
    a = np.where(rng.integers(0, 3, (n, 16, 1)) == 0, np.uint8(0x00), a)
    b = rng.integers(0, 0x7F, (n, 32, 8)).astype(np.uint8)
    c = rng.choice(np.array([0, 0x8000], np.uint16), (n, 16, 8))
    return VectorSet("signed-zero tiles (no hardware truth)", "outputs", 0, n,
                     _split(n, lambda s, e: Chunk(a[s:e], b[s:e], c[s:e], None)))


# ---------------------------------------------------------------- HOOK: the tensor-core (wgmma) truth
# The file tools/truth/pack.py writes (tests/data/numerics/hopper_tc_truth.npz): "forms", "seed" and, per form and
# family, the full D of the first tiles under `truth.tc_key(form, family, "d")`; the inputs are regenerated by
# `truth.tc_tile_inputs`. tcforge's side is `tensorcore.tc_mma`. Adapt here if that layout changes.
def mmasim_peer(form: str, torch, nv_ptx) -> tuple[str, Fn]:
    """MMA-Sim's operation for a tcforge form name (wgmma.mMnNkK.d.a.b or mma.mMnNkK.d.a.b) and its label."""
    op, shape, d_t, a_t, b_t = form.split(".")
    ta, tb, td = (getattr(torch, TORCH_TYPES[t]) for t in (a_t, b_t, d_t))
    if op == "wgmma":
        name = f"{shape}.{d_t}.{a_t}.{b_t}"
        return f"Hopper WGMMA {name}", native_peer(torch, nv_ptx.WGMMA("Hopper", name), ta, tb, td, BITS[d_t])
    if shape == "m16n8k32":  # FP8 mma.sync: MMA-Sim has no Hopper form; its HMMA composed as ptxas lowers it
        return f"Hopper HMMA {d_t} x2 + {d_t} add", lowered_hopper_peer(torch, nv_ptx, a_t, b_t, d_t)
    name = f"{shape}.{d_t}.{a_t}.{b_t}.{d_t}"
    return f"Hopper MMA {name}", native_peer(torch, nv_ptx.MMA("Hopper", name), ta, tb, td, BITS[d_t])


def tc_truth_rows(path: Path, cap: int, torch, nv_ptx) -> list[tuple[str, VectorSet, Fn | None, dict[str, Fn]]]:
    """HOOK: one row per form of a packed tensor-core truth file: up to `cap` full D tiles of every family."""
    try:
        from tcforge.numerics import tensorcore as TC

        z = T.load_truth(path.stem, path.parent)
        forms, seed, key, inputs = [str(f) for f in z["forms"]], int(z["seed"]), T.tc_key, T.tc_tile_inputs
    except (ImportError, AttributeError, KeyError) as exc:
        raise TcforgeError(f"--wgmma {path}: not a tensor-core truth this tree can read ({exc!r})") from None
    rows = []
    for form in forms:
        fams = [f for f in sorted(T.TC_FAMILIES) if key(form, f, "d") in z]
        spec = TC.get_form(form)
        step = max(1, CHUNK * 128 // (spec.m * spec.n))

        def chunks(form: str = form, fams: list[int] = fams, step: int = step) -> Iterator[Chunk]:
            for f in fams:
                want_all = z[key(form, f, "d")][:cap]
                for s in range(0, want_all.shape[0], step):
                    want = want_all[s : s + step]
                    a, b, c = inputs(form, f, seed, s, want.shape[0])
                    yield Chunk(a, b, c, lambda d, w=want: d != w, want)

        n = sum(min(cap, z[key(form, f, "d")].shape[0]) for f in fams)
        vs = VectorSet(f"{path.name}, full tiles ({len(fams)} families)", "outputs", n * spec.m * spec.n, n, chunks)
        label, peer = mmasim_peer(form, torch, nv_ptx)
        rows.append((f"{form}, Hopper", vs, lambda a, b, c, form=form: TC.tc_mma(form, a, b, c), {label: peer}))
    return rows


# ---------------------------------------------------------------- measuring
def _timed(fn: Fn, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, float]:
    t0 = time.process_time()
    d = fn(a, b, c)
    return d, time.process_time() - t0


def classify(x: int, y: int, bits: int = 16) -> str:
    """How two output bit patterns differ: signed zero, NaN or inf against a number, sign, or distance in ulps."""
    sign = 1 << (bits - 1)
    inf = 0x7C00 if bits == 16 else 0x7F800000
    mx, my = x & (sign - 1), y & (sign - 1)
    if {x, y} == {0, sign}:
        return "signed zero"
    if (mx > inf) or (my > inf):
        return "NaN vs number"
    if (mx == inf) != (my == inf):
        return "inf vs finite"
    if (x ^ y) & sign:
        return "opposite signs"
    ulps = abs(mx - my)
    return "1 ulp" if ulps == 1 else "2-15 ulp" if ulps < 16 else ">= 16 ulp"


def measure_row(vs: VectorSet, ours: Fn | None, peers: dict[str, Fn], bar: Counter) -> dict:
    """Run tcforge and each MMA-Sim peer over a vector set; counts, CPU-time rates and a few disagreements."""
    tc, ms = Tally(), {label: Tally() for label in peers}
    first = 0
    for ch in vs.chunks():
        d_tc = None
        if ours is not None:
            d_tc, dt = _timed(ours, ch.a, ch.b, ch.c)
            tc.cpu_s, tc.outputs = tc.cpu_s + dt, tc.outputs + d_tc.size
            if ch.hw is not None:
                tc.vs_hw = (tc.vs_hw or 0) + int(np.count_nonzero(ch.hw(d_tc)))
        for label, fn in peers.items():
            p = ms[label]
            d, dt = _timed(fn, ch.a, ch.b, ch.c)
            p.cpu_s, p.outputs = p.cpu_s + dt, p.outputs + d.size
            if ch.hw is not None:
                p.vs_hw = (p.vs_hw or 0) + int(np.count_nonzero(ch.hw(d)))
            if d_tc is None:
                continue
            where = np.argwhere(d != d_tc)
            p.vs_tcforge += len(where)
            for t, *ij in where:
                kind = classify(int(d_tc[(t, *ij)]), int(d[(t, *ij)]), 8 * d.itemsize)
                p.kinds[kind] = p.kinds.get(kind, 0) + 1
                if sum(e["kind"] == kind for e in p.examples) < 2:  # two of each kind
                    hw = None if ch.hw_bits is None else int(ch.hw_bits[(t, *ij)])
                    p.examples.append({"tile": first + int(t), "out": [int(v) for v in ij], "kind": kind,
                                       "c": int(ch.c[(t, *ij)]), "tcforge": int(d_tc[(t, *ij)]),
                                       "mmasim": int(d[(t, *ij)]), "hardware": hw,
                                       "a_row": ch.a[t, ij[0]].tolist(), "b_col": ch.b[t, :, ij[1]].tolist()})
        first += ch.a.shape[0]
        bar.update(ch.a.shape[0])

    def rate(x: Tally) -> float | None:
        return x.outputs / x.cpu_s if x.cpu_s > 0 else None

    return {"set": vs.name, "unit": vs.unit, "n_hw": vs.n_hw, "tiles": vs.tiles,
            "tcforge": None if ours is None else {"vs_hw": tc.vs_hw, "outputs": tc.outputs, "cpu_s": tc.cpu_s,
                                                  "outputs_per_s": rate(tc)},
            "mmasim": {label: {"vs_hw": p.vs_hw, "vs_tcforge": None if ours is None else p.vs_tcforge,
                               "outputs": p.outputs, "cpu_s": p.cpu_s, "outputs_per_s": rate(p), "kinds": p.kinds,
                               "examples": p.examples} for label, p in ms.items()}}


def table(rows: list[dict]) -> str:
    """The peer table in markdown: one line per form, vector set and MMA-Sim peer."""
    def fmt(v: object) -> str:
        return "-" if v is None else f"{v:,}"

    def speed(v: float | None) -> str:
        return "-" if v is None else f"{v / 1e6:.2f} M"

    lines = ["| form | vectors | n | tcforge ≠ hw | MMA-Sim peer | MMA-Sim ≠ hw | tcforge ≠ MMA-Sim | "
             "tcforge out/s | MMA-Sim out/s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tc = r["tcforge"] or {}
        for label, p in r["mmasim"].items():
            n = f"{r['n_hw']:,} {r['unit']}" if r["n_hw"] else f"{r['tiles'] * 128:,} outputs"
            lines.append(f"| {r['form']} | {r['set']} | {n} | {fmt(tc.get('vs_hw'))} | {label} | {fmt(p['vs_hw'])} | "
                         f"{fmt(p['vs_tcforge'])} | {speed(tc.get('outputs_per_s'))} | {speed(p['outputs_per_s'])} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Measure every form and vector set, print the table, write DIR/numerics_peers.json; exit 2 without MMA-Sim."""
    p = ArgumentParser(prog="python3 -m bench.numerics_peers", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "bench" / "results"), help="output folder (default bench/results)")
    p.add_argument("--digest-tiles", type=int, default=32768, help="tiles per truth family checked by digest "
                   "(default 32768: all; 0 skips)")
    p.add_argument("--full-tiles", type=int, default=512, help="fully stored truth tiles per family (default 512)")
    p.add_argument("--f16-tiles", type=int, default=4096, help="random f16 HMMA tiles per family (default 4096)")
    p.add_argument("--wgmma", type=Path, default=DATA / "hopper_tc_truth.npz",
                   help="the packed tensor-core (wgmma) truth (default tests/data/numerics/hopper_tc_truth.npz; "
                   "skipped when absent)")
    p.add_argument("--tc-tiles", type=int, default=128, help="full tensor-core truth tiles per form and family "
                   "(default 128)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    out = output_dir(args.out, "--out")
    if min(args.digest_tiles, args.full_tiles, args.f16_tiles, args.tc_tiles) < 0:
        raise TcforgeError("--digest-tiles, --full-tiles, --f16-tiles and --tc-tiles must be >= 0")
    try:
        torch, nv_ptx = _mmasim()
    except ImportError as exc:
        print(f"numerics_peers: MMA-Sim is not installed ({exc}); `pip install mmasim` or `pip install -e .[peers]`",
              file=sys.stderr)
        return 2
    fp8, f16 = torch.float8_e4m3fn, torch.float16
    ada = native_peer(torch, nv_ptx.MMA("Ada Lovelace", "m16n8k32.f16.e4m3.e4m3.f16"), fp8, fp8, f16, np.uint16)
    wgmma = native_peer(torch, nv_ptx.WGMMA("Hopper", "m64n8k32.f16.e4m3.e4m3"), fp8, fp8, f16, np.uint16)
    lowered = lowered_hopper_peer(torch, nv_ptx)
    hmma = native_peer(torch, nv_ptx.MMA("Hopper", "m16n8k16.f16.f16.f16.f16"), f16, f16, f16, np.uint16)
    tc_ada = lambda a, b, c: mma_m16n8k32_e4m3_f16(a, b, c, "ada")  # noqa: E731
    tc_hopper = lambda a, b, c: mma_m16n8k32_e4m3_f16(a, b, c, "hopper")  # noqa: E731
    hopper_peers = {P_LOWERED: lowered, P_WGMMA: wgmma}
    plan = [(F_ADA, published("ada_published_0-999"), tc_ada, {P_ADA: ada}),
            (F_ADA, zero_sign_tiles(256), tc_ada, {P_ADA: ada}),
            (F_HOPPER, published("h200_published_0-999"), tc_hopper, hopper_peers),
            (F_HOPPER, tiles_sample(), tc_hopper, hopper_peers)]
    if args.full_tiles:
        plan.append((F_HOPPER, truth_tiles(args.full_tiles), tc_hopper, hopper_peers))
    if args.digest_tiles:
        plan.append((F_HOPPER, truth_digests(args.digest_tiles), tc_hopper, {P_LOWERED: lowered}))
    plan.append((F_HMMA, hmma_subnormal(), mma_m16n8k16_f16_f16, {P_HMMA: hmma}))
    if args.f16_tiles:
        plan.append((F_HMMA, f16_random(args.f16_tiles), mma_m16n8k16_f16_f16, {P_HMMA: hmma}))
    if not args.wgmma.is_file():
        print(f"--wgmma {args.wgmma}: no such file; the tensor-core truth rows are skipped", file=sys.stderr)
    elif args.tc_tiles:
        plan += tc_truth_rows(args.wgmma, args.tc_tiles, torch, nv_ptx)
    rows = []
    with Counter(sum(vs.tiles for _, vs, _, _ in plan), "peers", "tile", args.quiet) as bar:
        for form, vs, ours, peers in plan:
            rows.append({"form": form, **measure_row(vs, ours, peers, bar)})
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 0
    pin = ["taskset -c 0"] if cores == 1 else []  # the command as run (one allowed core: the documented pinning)
    command = [f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')}", *pin, "python3 -m bench.numerics_peers"]
    report = {"what": "tcforge.numerics and MMA-Sim against hardware vectors; rates are outputs per CPU second",
              "command": " ".join([*command, *argv]),
              "cores_allowed": cores, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
              "python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
              "mmasim": importlib.metadata.version("mmasim"), "machine": platform.machine(), "peers": PEER_CALLS,
              "rows": rows}
    path = out / "numerics_peers.json"
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(table(rows))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except TcforgeError as exc:
        print(f"numerics_peers: {exc}", file=sys.stderr)
        sys.exit(2)
