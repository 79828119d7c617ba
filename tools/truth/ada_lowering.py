#!/usr/bin/env python3
"""Ada on Hopper: the GPU proof that Ada's FP8 mma is two chained wgmma f16 steps plus the IEEE -0 rule.

`PYTHONPATH=src:. python3 -m tools.truth.ada_lowering run --out DIR [--tiles N] [--keep K] [--dry-run]` builds
ada_lowering.cu for sm_90a with nvcc (ptxas -v must report no spills) and, per input family of the mma truth
(`truth.MMA_KINDS`) and of the tensor-core truth (`truth.TC_FAMILIES` of mma.m16n8k32.f16.e4m3.e4m3), runs N Ada
tiles (default 10,485,760) through the lowering on the GPU: inputs generated on the device by the truth generators'
CUDA twins, two `wgmma.mma_async.m64n8k32.f16.e4m3.e4m3` steps over the zero-padded k halves (C chained), the -0
rule; every output compared with the GPU's exact-integer Ada model (`ada_element`, enc5_mma.cuh). The 1000 published
Ada vectors go through the same kernel. It prints per family tiles, mismatches and the special values met, and writes
DIR/ada_lowering_tiles.npz (the first K tiles' outputs per family, for `check`), DIR/ada_lowering_proof.npz (small:
the counters and the first 64 tiles per family; commit it as tests/data/numerics/ada_lowering_proof.npz) and
DIR/ada_lowering_meta.json. `--dry-run` runs the same flow on the CPU with numpy standing in for the GPU (plumbing
only, not hardware truth).

`python3 -m tools.truth.ada_lowering check DIR` (CPU): the device-generated inputs against the numpy twins
(SHA-256), and the saved hardware outputs against numpy's Ada model (`mma_m16n8k32_e4m3_f16(.., "ada")`), against
the numpy composition of two wgmma steps (`tensorcore.py`'s wgmma f16 row) and against the GPU Ada model's outputs;
the published vectors against their measured Ada results. Exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tcforge.numerics import mma_m16n8k32_e4m3_f16
from tcforge.numerics import tensorcore as TC
from tcforge.numerics import truth as T

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CU = HERE / "ada_lowering.cu"
INCLUDES = [REPO / "src" / "tcforge" / "include", REPO / "src" / "tcforge" / "layers" / "enc5" / "gpu" / "kernels"]
NVCC_FLAGS = ["-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v"]
KERNEL = "k_ada_lowering"
PUBLISHED = REPO / "tests" / "data" / "numerics" / "shared" / "ada_published_0-999.npz"
PROOF_NAME = "ada_lowering_proof"  # tests/data/numerics/ada_lowering_proof.npz once committed

ADA_SEED = 0x0ADA10E5  # seed of the proof's first 2^22 (mma) / 2^20 (tc) tiles per family; then seed + 1, ...
TILES_PER_FAMILY = 10 * 2**20
KEEP = 1024  # tiles per family whose hardware outputs go to ada_lowering_tiles.npz
PROOF_KEEP = 64  # of those, in the committable proof file
TWIN_INPUTS = 16  # tiles per family whose device-generated inputs are saved as they are
DRY_RUN_TILES = 2048
CHUNK = 1 << 21  # tiles per launch
BLOCKS_PER_SM = 5  # __launch_bounds__(128, 5)
MAX_RECORDS = 64  # ADA_MAXREC
TC_FORM = "mma.m16n8k32.f16.e4m3.e4m3"  # whose tensor-core families (and RNG streams) the tc set uses
# family sets: name -> (kernel set id, families, log2 of the tiles one seed's counter space holds)
SETS = {"mma": (0, T.MMA_KINDS, 22), "tc": (1, T.TC_FAMILIES, 20)}
GIVEN = 2
# kernel counters (enum CNT_* in ada_lowering.cu; "_shared": the shared-B form, the rest of the padded form)
COUNTERS = ("tiles", "bad_outputs", "bad_tiles", "raw_bad", "fixups", "bad_outputs_shared", "bad_tiles_shared",
            "raw_bad_shared", "nan", "inf", "negzero", "poszero", "subnormal", "records", "checksum")
FORMS = ("padded", "shared_b")  # the two lowerings the kernel runs on every tile
CNT = {name: i for i, name in enumerate(COUNTERS)}

# the wgmma f16 row of the parameter table on 16-row tiles (the arithmetic is per output; m only shapes the tile)
WGMMA_STEP = dataclasses.replace(TC.get_form("wgmma.m64n8k32.f16.e4m3.e4m3"), m=16)


# ---------------------------------------------------------------- the lowering in numpy (third implementation)
def step_operands(a: np.ndarray, b: np.ndarray, half: int, form: str) -> tuple[np.ndarray, np.ndarray]:
    """A (n,16,32) and B (n,32,8) of the wgmma step of Ada half `half`. "padded": the half in k 0..15 of A and B,
    zeros in k 16..31; "shared_b": B whole, A keeps its own k of that half and zeros elsewhere."""
    ks = slice(16 * half, 16 * half + 16)
    pa = np.zeros(a.shape, dtype=np.uint8)
    if form == "shared_b":
        pa[..., ks] = a[..., ks]
        return pa, b
    if form != "padded":
        raise ValueError(f"form: expected one of {FORMS}, got {form!r}")
    pb = np.zeros(b.shape, dtype=np.uint8)
    pa[..., :16] = a[..., ks]
    pb[..., :16, :] = b[..., ks, :]
    return pa, pb


def products_all_negzero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n,16,8) bool: every one of the 32 products a[i,k] b[k,j] is a negative zero (a zero factor, opposite signs)."""
    a3, b3 = a[:, :, None, :], b.transpose(0, 2, 1)[:, None, :, :]
    zero = ((a3 & 0x7F) == 0) | ((b3 & 0x7F) == 0)
    return (zero & (((a3 ^ b3) & 0x80) != 0)).all(axis=-1)


def lowering(a: np.ndarray, b: np.ndarray, c: np.ndarray, zero_sign: bool = True, form: str = "padded") -> np.ndarray:
    """Ada's mma as two chained wgmma f16 steps (one per k half, see step_operands), then (zero_sign) the -0 rule."""
    d1 = TC.tc_mma(WGMMA_STEP, *step_operands(a, b, 0, form), c)
    d = TC.tc_mma(WGMMA_STEP, *step_operands(a, b, 1, form), d1)
    if not zero_sign:
        return d
    cand = (c == 0x8000) & (d == 0)
    if cand.any():
        t = np.flatnonzero(cand.any(axis=(1, 2)))
        fix = np.zeros(d.shape, dtype=bool)
        fix[t] = cand[t] & products_all_negzero(a[t], b[t])
        d = np.where(fix, np.uint16(0x8000), d)
    return d


def ada(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """numpy's Ada model."""
    return mma_m16n8k32_e4m3_f16(a, b, c, "ada")


# ---------------------------------------------------------------- inputs
def family_key(set_name: str, fam: int) -> str:
    """Archive key prefix of one family ("mma3", "tc5")."""
    return f"{set_name}{fam}"


def stream_of(set_name: str, fam: int) -> int:
    """RNG stream of a family: the kind (mma set) or the tensor-core stream of TC_FORM (tc set)."""
    return fam if set_name == "mma" else T.tc_stream(TC.FORM_NAMES.index(TC_FORM), fam)


def tile_inputs(set_name: str, fam: int, seed0: int, start: int, count: int) -> tuple[np.ndarray, ...]:
    """Inputs (a, b, c) of proof tiles start..start+count-1 of a family: tile i is tile i % 2^s of seed0 + i // 2^s."""
    per = 1 << SETS[set_name][2]
    parts, pos, end = [], start, start + count
    while pos < end:
        j, t = divmod(pos, per)
        n = min(end - pos, per - t)
        seed = (seed0 + j) & 0xFFFFFFFF
        if set_name == "mma":
            parts.append(T.mma_tile_inputs(fam, seed, t, n))
        else:
            parts.append(T.tc_tile_inputs(TC_FORM, fam, seed, t, n))
        pos += n
    if not parts:
        return np.zeros((0, 16, 32), np.uint8), np.zeros((0, 32, 8), np.uint8), np.zeros((0, 16, 8), np.uint16)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def published_tiles(path: Path = PUBLISHED) -> tuple[np.ndarray, ...]:
    """The published Ada dot products as tiles (row 0 of A, column 0 of B, C[0, 0]) and their measured d[0, 0]."""
    with np.load(path) as z:
        av, bv, c00, d00 = z["a"], z["b"], z["c_f16"], z["d_f16"]
    n = av.shape[0]
    e4m3 = TC.FORMATS["e4m3"]
    a = np.zeros((n, 16, 32), np.uint8)
    b = np.zeros((n, 32, 8), np.uint8)
    c = np.zeros((n, 16, 8), np.uint16)
    a[:, 0, :] = TC.encode_values(av.astype(np.float64), e4m3)
    b[:, :, 0] = TC.encode_values(bv.astype(np.float64), e4m3)
    c[:, 0, 0] = c00
    return a, b, c, np.asarray(d00, dtype=np.uint16)


def checksum(d: np.ndarray, start: int = 0) -> int:
    """The kernel's order-free output checksum: sum of mix32(mix32(T*128 + row*8 + col) ^ d) over outputs, mod 2^64."""
    idx = (np.arange(start, start + d.shape[0], dtype=np.uint64)[:, None] * 128 + np.arange(128, dtype=np.uint64))
    h = T.mix32(T.mix32(idx.astype(np.uint32)) ^ d.reshape(-1, 128).astype(np.uint32))
    return int(h.astype(np.uint64).sum(dtype=np.uint64))


# ---------------------------------------------------------------- backends
class FamilyResult:
    """What one family's run returns: counters, mismatch records, the kept tiles' inputs and outputs, seconds."""

    def __init__(self, counts: np.ndarray, recs: np.ndarray, kept: tuple[np.ndarray, ...], seconds: float) -> None:
        self.counts, self.recs, self.seconds = counts, recs, seconds
        self.a, self.b, self.c, self.d, self.d_shared, self.ada = kept


class CupyAda:
    """Runs k_ada_lowering through CuPy."""

    def __init__(self, cubin: Path) -> None:
        import cupy as cp

        self.cp = cp
        self.fn = cp.RawModule(path=str(cubin)).get_function(KERNEL)
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.sms = int(props["multiProcessorCount"])
        name = props["name"]
        self.device = name.decode() if isinstance(name, bytes) else str(name)

    def run(self, set_id: int, fam: int, seed0: int, stream: int, log2: int, ntiles: int, keep: int,
            given: tuple[np.ndarray, ...] | None = None) -> FamilyResult:
        """ntiles Ada tiles of one family (or the given tiles) through the kernel; the first `keep` tiles kept."""
        cp = self.cp
        if ntiles % 4:
            raise ValueError(f"tiles must be a multiple of 4, got {ntiles}")
        keep = min(keep, ntiles)
        dummy = cp.zeros(16, dtype=cp.uint8)
        ga, gb, gc = (cp.asarray(np.ascontiguousarray(x)) for x in given) if given is not None else (dummy,) * 3
        ka, kb = cp.zeros(max(keep, 1) * 512, cp.uint8), cp.zeros(max(keep, 1) * 256, cp.uint8)
        kc, kd, kds, kada = (cp.full(max(keep, 1) * 128, 0xFFFF, cp.uint16) for _ in range(4))
        counts = cp.zeros(len(COUNTERS), cp.uint64)
        recs = cp.zeros(MAX_RECORDS * 8, cp.uint32)
        t0 = time.perf_counter()
        for tile0 in range(0, ntiles, CHUNK):
            n = min(CHUNK, ntiles - tile0)
            grid = max(1, min(self.sms * BLOCKS_PER_SM, n // 4))
            self.fn((grid,), (128,), (np.int32(set_id), np.int32(fam), np.uint32(seed0), np.uint32(stream),
                                      np.uint32(log2), np.uint32(tile0), np.uint32(n), ga, gb, gc, np.uint32(keep),
                                      ka, kb, kc, kd, kds, kada, counts, recs))
        cp.cuda.runtime.deviceSynchronize()
        seconds = time.perf_counter() - t0
        kept = (cp.asnumpy(ka)[: keep * 512].reshape(keep, 16, 32), cp.asnumpy(kb)[: keep * 256].reshape(keep, 32, 8),
                *(cp.asnumpy(x)[: keep * 128].reshape(keep, 16, 8) for x in (kc, kd, kds, kada)))
        return FamilyResult(cp.asnumpy(counts), cp.asnumpy(recs).reshape(MAX_RECORDS, 8), kept, seconds)


class DryRunAda:
    """CPU stand-in with CupyAda's interface: numpy inputs, the numpy lowering as 'hardware' and numpy's Ada model."""

    device = "dry run (numpy on the CPU; NOT hardware truth)"
    sms = 0

    def run(self, set_id: int, fam: int, seed0: int, stream: int, log2: int, ntiles: int, keep: int,
            given: tuple[np.ndarray, ...] | None = None) -> FamilyResult:
        """The kernel's counters computed in numpy."""
        set_name = next((s for s, v in SETS.items() if v[0] == set_id), None)
        keep = min(keep, ntiles)
        counts = np.zeros(len(COUNTERS), np.uint64)
        recs = np.zeros((MAX_RECORDS, 8), np.uint32)
        kept: list[tuple[np.ndarray, ...]] = []
        t0 = time.perf_counter()
        for start in range(0, ntiles, 1024):
            n = min(1024, ntiles - start)
            if given is not None:
                a, b, c = (x[start : start + n] for x in given)
            else:
                a, b, c = tile_inputs(set_name, fam, seed0, start, n)
            raw, raw_s = (lowering(a, b, c, zero_sign=False, form=f) for f in FORMS)
            low, low_s = (lowering(a, b, c, form=f) for f in FORMS)
            ref = ada(a, b, c)
            bad, bad_s = low != ref, low_s != ref
            for name, v in (("tiles", n), ("bad_outputs", bad.sum()), ("bad_tiles", bad.any(axis=(1, 2)).sum()),
                            ("raw_bad", (raw != ref).sum()), ("fixups", (raw != low).sum()),
                            ("bad_outputs_shared", bad_s.sum()), ("bad_tiles_shared", bad_s.any(axis=(1, 2)).sum()),
                            ("raw_bad_shared", (raw_s != ref).sum()),
                            ("nan", (low == 0x7FFF).sum()), ("inf", ((low & 0x7FFF) == 0x7C00).sum()),
                            ("negzero", (low == 0x8000).sum()), ("poszero", (low == 0).sum()),
                            ("subnormal", (((low & 0x7C00) == 0) & ((low & 0x3FF) != 0)).sum()),
                            ("records", (bad | bad_s).sum())):
                counts[CNT[name]] += np.uint64(int(v))
            counts[CNT["checksum"]] = np.uint64((int(counts[CNT["checksum"]]) + checksum(low, start)) % 2**64)
            if start < keep:
                m = min(n, keep - start)
                kept.append((a[:m], b[:m], c[:m], low[:m], low_s[:m], ref[:m]))
        merged = tuple(np.concatenate([k[i] for k in kept]) for i in range(6))
        return FamilyResult(counts, recs, merged, time.perf_counter() - t0)


# ---------------------------------------------------------------- build
def build(out: Path) -> tuple[Path, dict]:
    """Compile ada_lowering.cu for sm_90a into out/; returns the cubin and the build facts (ptxas -v of the kernel)."""
    out.mkdir(parents=True, exist_ok=True)
    cubin = out / "ada_lowering.cubin"
    cmd = ["nvcc", *NVCC_FLAGS, *(f"-I{p}" for p in INCLUDES), str(CU), "-o", str(cubin)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"nvcc failed:\n{proc.stderr}")
    return cubin, {"command": " ".join(cmd), "ptxas": kernel_ptxas(proc.stderr), "nvcc": nvcc_version()}


def kernel_ptxas(log: str) -> dict:
    """k_ada_lowering's ptxas -v facts: registers, stack, spill bytes, shared memory."""
    lines = log.splitlines()
    at = next((i for i, s in enumerate(lines) if f"Function properties for {KERNEL}" in s), None)
    if at is None:
        return {"raw": "not found"}
    text = " ".join(lines[at : at + 3])
    patterns = {"stack": r"(\d+) bytes stack frame", "spill_stores": r"(\d+) bytes spill stores",
                "spill_loads": r"(\d+) bytes spill loads", "registers": r"Used (\d+) registers",
                "smem": r"(\d+) bytes smem"}
    found = {k: re.search(p, text) for k, p in patterns.items()}
    out: dict = {k: int(m.group(1)) if m else -1 for k, m in found.items()}
    out["raw"] = text
    return out


def nvcc_version() -> str:
    """The last line of nvcc --version."""
    try:
        return subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    except (OSError, IndexError):
        return "unavailable"


def gmma_sass(cubin: Path) -> list[str]:
    """The kernel's tensor-core SASS lines (cuobjdump, where present)."""
    try:
        from tools.truth.tc_truth import sass_summary
    except ImportError:  # loaded as a file: the sibling module
        sys.path.insert(0, str(HERE))
        from tc_truth import sass_summary
    return sass_summary(cubin).get(KERNEL, [])


# ---------------------------------------------------------------- run
def describe(counts: np.ndarray) -> str:
    """One family's counters in words."""
    c = {k: int(counts[i]) for k, i in CNT.items()}
    return (f"{c['tiles']:,} tiles, mismatching outputs (tiles) vs the GPU Ada model: padded {c['bad_outputs']} "
            f"({c['bad_tiles']}), shared B {c['bad_outputs_shared']} ({c['bad_tiles_shared']}); without the -0 rule "
            f"{c['raw_bad']} / {c['raw_bad_shared']}, -0 rule applied {c['fixups']}; outputs NaN {c['nan']:,}, "
            f"inf {c['inf']:,}, -0 {c['negzero']:,}, +0 {c['poszero']:,}, subnormal {c['subnormal']:,}")


def device_bad(counts: np.ndarray) -> int:
    """Mismatches the device counted in either form."""
    return int(counts[CNT["bad_outputs"]]) + int(counts[CNT["bad_outputs_shared"]])


def run(out: Path, tiles: int, keep: int, dry_run: bool, sets: list[str], build_cubin: bool = True) -> int:
    """The proof run (see the module doc); returns the exit status (build_cubin False: a dry run without nvcc)."""
    if tiles % 4 or tiles < 4:
        raise SystemExit(f"--tiles must be a positive multiple of 4, got {tiles}")
    keep = min(keep, tiles)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    build_info: dict = {}
    cubin = None
    try:
        if not build_cubin and dry_run:
            raise RuntimeError("not asked for")
        cubin, build_info = build(out)
        print(f"build: {build_info['nvcc']}; {build_info['ptxas'].get('raw')}", flush=True)
    except (OSError, RuntimeError) as exc:
        if not dry_run:
            raise
        print(f"build skipped in the dry run ({exc})", flush=True)
    ptxas = build_info.get("ptxas", {})
    if max(ptxas.get("spill_stores", 0), ptxas.get("spill_loads", 0)) > 0:
        print(f"WARNING: ptxas reports spills: {ptxas.get('raw')}", flush=True)
    backend = DryRunAda() if dry_run else CupyAda(cubin)
    if cubin is not None and not dry_run:
        build_info["sass"] = gmma_sass(cubin)
        print(f"tensor-core SASS of {KERNEL}: {sorted(set(x.split()[0] for x in build_info['sass']))}", flush=True)
    print(f"device: {backend.device}; {tiles:,} tiles per family, seed {ADA_SEED:#x}", flush=True)
    arrays: dict[str, np.ndarray] = {}
    lines, names, all_counts, proof_d, proof_ds = [], [], [], [], []
    failed = False
    for set_name in sets:
        set_id, fams, log2 = SETS[set_name]
        for fam in sorted(fams):
            key = family_key(set_name, fam)
            r = backend.run(set_id, fam, ADA_SEED, stream_of(set_name, fam), log2, tiles, keep)
            a, b, c = tile_inputs(set_name, fam, ADA_SEED, 0, keep)
            differs = (r.a != a).any(axis=(1, 2)) | (r.b != b).any(axis=(1, 2)) | (r.c != c).any(axis=(1, 2))
            twin_bad = int(differs.sum())
            ref = ada(a, b, c)
            model_bad = int((ref != r.d).sum()) + int((ref != r.d_shared).sum())
            failed |= device_bad(r.counts) + twin_bad + model_bad > 0 or int(r.counts[CNT["tiles"]]) != tiles
            line = (f"{key} ({fams[fam]}): {describe(r.counts)}; on the first {keep}: twin-mismatch tiles "
                    f"{twin_bad}, mismatches with numpy's Ada model {model_bad}; {r.seconds:.1f} s")
            lines.append(line)
            print(line, flush=True)
            nrec = min(int(r.counts[CNT["records"]]), MAX_RECORDS)
            for rec in r.recs[:nrec][:4]:
                t = int(rec[0])
                print(f"   tile {t} (seed {(ADA_SEED + (t >> log2)) & 0xFFFFFFFF:#x}, tile {t & ((1 << log2) - 1)}) "
                      f"row {rec[1]} col {rec[2]}: c {rec[3]:#06x} Ada {rec[5]:#06x}, padded {rec[4]:#06x}, "
                      f"shared B {rec[6]:#06x} (before the -0 rule {rec[7] & 0xFFFF:#06x} / {rec[7] >> 16:#06x})",
                      flush=True)
            arrays.update({f"{key}__counts": r.counts, f"{key}__recs": r.recs[:nrec], f"{key}__d": r.d,
                           f"{key}__d_shared": r.d_shared, f"{key}__ada": r.ada,
                           f"{key}__inputs_sha": T.inputs_sha256(r.a, r.b, r.c), f"{key}__a": r.a[:TWIN_INPUTS],
                           f"{key}__b": r.b[:TWIN_INPUTS], f"{key}__c": r.c[:TWIN_INPUTS],
                           f"{key}__seconds": np.float64(r.seconds)})
            names.append(key)
            all_counts.append(r.counts)
            proof_d.append(r.d[:PROOF_KEEP])
            proof_ds.append(r.d_shared[:PROOF_KEEP])
    # the published vectors through the same kernel
    pa, pb, pc, pd = published_tiles()
    r = backend.run(GIVEN, 0, 0, 0, 0, pa.shape[0], pa.shape[0], given=(pa, pb, pc))
    pub_bad = int((r.d[:, 0, 0] != pd).sum()) + int((r.d_shared[:, 0, 0] != pd).sum())
    rest = np.concatenate([r.d, r.d_shared])
    rest[:, 0, 0] = 0
    pub_rest = int(np.count_nonzero(rest))
    pub_line = (f"published Ada vectors ({pa.shape[0]}): {pub_bad} mismatches with the measured Ada d (both forms), "
                f"{pub_rest} nonzero other outputs; vs the GPU Ada model: {describe(r.counts)}")
    failed |= pub_bad > 0 or pub_rest > 0 or device_bad(r.counts) > 0
    print(pub_line, flush=True)
    lines.append(pub_line)
    arrays.update({"pub__d": r.d, "pub__d_shared": r.d_shared, "pub__ada": r.ada, "pub__counts": r.counts})
    meta = {"device": backend.device, "dry_run": dry_run, "seed": ADA_SEED, "tiles_per_family": tiles, "keep": keep,
            "build": build_info, "lines": lines, "seconds_total": round(time.perf_counter() - t_start, 1),
            "tc_form": TC_FORM, "families": names, "counters": list(COUNTERS)}
    common = {"seed": np.uint32(ADA_SEED), "tiles_per_family": np.uint64(tiles), "dry_run": np.bool_(dry_run),
              "families": np.array(names), "counters": np.array(COUNTERS), "meta": np.array(json.dumps(meta))}
    np.savez_compressed(out / "ada_lowering_tiles.npz", **arrays, **common, keep=np.uint32(keep))
    np.savez_compressed(out / f"{PROOF_NAME}.npz", **common, counts=np.array(all_counts, dtype=np.uint64),
                        d=np.array(proof_d, dtype=np.uint16), d_shared=np.array(proof_ds, dtype=np.uint16),
                        published_d00=r.d[:, 0, 0].copy(), published_d00_shared=r.d_shared[:, 0, 0].copy(),
                        published_other_nonzero=np.int64(pub_rest), published_counts=r.counts)
    (out / "ada_lowering_meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    total = sum(int(x[CNT["tiles"]]) for x in all_counts)
    print(f"{'FAILED' if failed else 'proved'}: {total:,} Ada tiles in {len(names)} families, two lowerings each"
          f"{' (DRY RUN: not hardware truth)' if dry_run else ''}; {meta['seconds_total']} s; files in {out}",
          flush=True)
    return 1 if failed else 0


# ---------------------------------------------------------------- check
def split_key(key: str) -> tuple[str, int]:
    """("tc", 5) of the family key "tc5"."""
    m = re.fullmatch(r"([a-z]+)(\d+)", key)
    if m is None or m.group(1) not in SETS:
        raise ValueError(f"family key {key!r}: expected a set name ({', '.join(SETS)}) and a family number")
    return m.group(1), int(m.group(2))


def compare_kept(d: np.ndarray, d_shared: np.ndarray, set_name: str, fam: int, seed: int) -> dict[str, int]:
    """Mismatching outputs of the kept hardware tiles (both forms) against numpy's Ada model and the numpy
    composition of the same form."""
    a, b, c = tile_inputs(set_name, fam, seed, 0, d.shape[0])
    ref = ada(a, b, c)
    return {"padded-Ada": int((d != ref).sum()), "shared-Ada": int((d_shared != ref).sum()),
            "padded-wgmma": int((d != lowering(a, b, c, form="padded")).sum()),
            "shared-wgmma": int((d_shared != lowering(a, b, c, form="shared_b")).sum())}


def check_proof(path: Path) -> list[str]:
    """Problems of a proof file (ada_lowering_proof.npz), empty when it proves the lowering: device counters all
    zero, every family present with its tiles, the kept tiles equal to numpy's Ada model and the numpy composition,
    the published vectors reproduced."""
    with np.load(path) as zf:
        z = {k: zf[k] for k in zf.files}
    problems = []
    if bool(z["dry_run"]):
        problems.append("a dry run (numpy standing in for the GPU), not hardware truth")
    if [str(x) for x in z["counters"]] != list(COUNTERS):
        return problems + [f"counters {list(z['counters'])}, expected {list(COUNTERS)}"]
    names = [str(k) for k in z["families"]]
    want = [family_key(s, f) for s in SETS for f in sorted(SETS[s][1])]
    if sorted(names) != sorted(want):
        problems.append(f"families {names}, expected {want}")
    tiles, seed = int(z["tiles_per_family"]), int(z["seed"])
    for key, counts, d, ds in zip(names, z["counts"], z["d"], z["d_shared"], strict=True):
        c = {k: int(counts[i]) for k, i in CNT.items()}
        if c["tiles"] != tiles:
            problems.append(f"{key}: {c['tiles']} tiles run, {tiles} announced")
        if device_bad(counts) or c["records"]:
            problems.append(f"{key}: the device counted mismatches: {describe(counts)}")
        if not c["raw_bad"] == c["raw_bad_shared"] == c["fixups"]:
            problems.append(f"{key}: mismatches before the -0 rule {c['raw_bad']} / {c['raw_bad_shared']}, but "
                            f"{c['fixups']} -0 rule outputs")
        bad = {k: v for k, v in compare_kept(d, ds, *split_key(key), seed).items() if v}
        if bad:
            problems.append(f"{key}: kept outputs differ: {bad}")
    pa, pb, pc, pd = published_tiles()
    pub_bad = int((z["published_d00"] != pd).sum()) + int((z["published_d00_shared"] != pd).sum())
    if pub_bad or int(z["published_other_nonzero"]) or device_bad(z["published_counts"]):
        problems.append(f"published vectors: {pub_bad} mismatches with the measured Ada d, "
                        f"{int(z['published_other_nonzero'])} nonzero other outputs, "
                        f"{device_bad(z['published_counts'])} mismatches with the GPU Ada model")
    return problems


def check(path: Path) -> int:
    """Check a run's files on the CPU (see the module doc); returns the exit status."""
    if path.is_file() and path.name.startswith(PROOF_NAME):
        problems = check_proof(path)
        print("\n".join(problems) if problems else f"{path.name}: proves the lowering")
        return 1 if problems else 0
    f = path / "ada_lowering_tiles.npz" if path.is_dir() else path
    with np.load(f) as zf:
        z = {k: zf[k] for k in zf.files}
    seed = int(z["seed"])
    if bool(z["dry_run"]):
        print("NOTE: these files come from a dry run (numpy standing in for the GPU): not hardware truth")
    cols = ("twin", "padded-Ada", "shared-Ada", "padded-wgmma", "shared-wgmma", "gpuAda-Ada", "device")
    print(f"{'family':8} {'tiles':>6} " + " ".join(f"{x:>12}" for x in cols))
    bad = 0
    for key in [str(k) for k in z["families"]]:
        set_name, fam = split_key(key)
        d = z[f"{key}__d"]
        a, b, c = tile_inputs(set_name, fam, seed, 0, d.shape[0])
        row = {"twin": int(not np.array_equal(T.inputs_sha256(a, b, c), z[f"{key}__inputs_sha"]))}
        row.update(compare_kept(d, z[f"{key}__d_shared"], set_name, fam, seed))
        row["gpuAda-Ada"] = int((z[f"{key}__ada"] != ada(a, b, c)).sum())
        row["device"] = device_bad(z[f"{key}__counts"])
        bad += sum(row.values())
        print(f"{key:8} {d.shape[0]:6d} " + " ".join(f"{row[x]:12d}" for x in cols))
    pa, pb, pc, pd = published_tiles()
    ref = ada(pa, pb, pc)
    pub = {"hw vs numpy Ada": int((z["pub__d"] != ref).sum()) + int((z["pub__d_shared"] != ref).sum()),
           "hw vs measured Ada": int((z["pub__d"][:, 0, 0] != pd).sum() + (z["pub__d_shared"][:, 0, 0] != pd).sum()),
           "GPU Ada vs numpy Ada": int((z["pub__ada"] != ref).sum()),
           "numpy Ada vs measured Ada": int((ref[:, 0, 0] != pd).sum())}
    bad += sum(pub.values())
    print(f"published ({pa.shape[0]}): " + ", ".join(f"{k} {v}" for k, v in pub.items()))
    print("all match" if bad == 0 else f"MISMATCHES: {bad}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """Command line: run / check."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="the proof run (device; --dry-run on the CPU)")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--tiles", type=int, default=None, help=f"Ada tiles per family (default {TILES_PER_FAMILY:,}; "
                   f"dry run {DRY_RUN_TILES})")
    r.add_argument("--keep", type=int, default=KEEP, help="tiles per family whose outputs are saved")
    r.add_argument("--sets", default="mma,tc", help="family sets: mma (truth.MMA_KINDS), tc (truth.TC_FAMILIES)")
    r.add_argument("--dry-run", action="store_true", help="numpy stands in for the GPU (plumbing only)")
    c = sub.add_parser("check", help="check a run's files on the CPU")
    c.add_argument("dir", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "check":
        return check(args.dir)
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise SystemExit(f"--sets: unknown {unknown}; valid: {', '.join(SETS)}")
    tiles = args.tiles if args.tiles is not None else (DRY_RUN_TILES if args.dry_run else TILES_PER_FAMILY)
    return run(args.out, tiles, args.keep, args.dry_run, sets)


if __name__ == "__main__":
    sys.exit(main())
