"""Tensor-core truth: every form of tcforge.numerics.tensorcore measured on the GPU, and checked against the models.

Measure (generate.py `--only wgmma,hmma_f32`, `section`): per form, an exactly representable probe first (checks the
operand layouts; for wgmma it picks which descriptor byte-offset assignment the hardware reads), then per input
family the inputs are generated on the device by k_gen_tc (wgmma_kernels.cu, the twin of truth.tc_tile_inputs), the
instruction runs over every tile, and the outputs are kept compactly: SHA-256 per block of tiles, the full D of the
first tiles, a SHA-256 of the device-generated inputs of the first tiles (the twin proof, also compared here with
numpy). The model's mismatches on the kept tiles are printed at once, so the device log already says whether a form
needs the checker.

Check (`python3 -m tools.truth.tc_truth check [--truth FILE] [--forms wgmma,m16n8k16] [--blocks N|all] [--jobs N]
[--candidates]`, default truth: tests/data/numerics/hopper_tc_truth.npz): per form and family it reports the RNG twin
(SHA-256 of the regenerated inputs vs the device's), mismatching outputs of the shipped model on the full tiles, and
mismatching SHA-256 blocks (the first N blocks per family; `all`: every tile). Where the shipped model misses (or
with --candidates) it scores every candidate of tcforge.numerics.mma_variants on the full tiles and lists the ones
with zero mismatches, else the closest. Exit status 1 if the shipped model misses anywhere it was checked.

Float64 (`python3 -m tools.truth.tc_truth float64 [--tiles N]`, about 2.5 minutes for all 9 x 32768 tiles on one
core): the committed H200 mma truth (tests/data/numerics/h200_mma_truth.npz, its tile digests) against an independent
float64 statement of the Hopper e4m3 -> f16 mma. Each `HMMA.16816.F16` step (16 products plus the accumulator): a
product's exponent is ea + eb (floor(log2|.|) of the two f16 operands), the accumulator's is floor(log2|acc|); every
addend is truncated toward zero to a multiple of 2^(M - 25), M the largest of those exponents; the exact sum is
rounded to nearest-even f16. Steps: k % 4 in {0, 1} onto +0, then k % 4 in {2, 3} onto that result; then HADD2 adds
C (f16, nearest-even). NaN results are 0x7fff. Exit status 1 on any mismatching tile.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import ml_dtypes
import numpy as np

from tcforge.numerics import tensorcore as TC
from tcforge.numerics import truth as T
from tcforge.numerics.mma_variants import candidates, score

HERE = Path(__file__).resolve().parent
CU = HERE / "wgmma_kernels.cu"
INCLUDE = HERE.parents[1] / "src" / "tcforge" / "include"
NVCC_FLAGS = ["-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-I", str(INCLUDE)]
CUBIN_NAME = "wgmma_kernels.cubin"
DEFAULT_TRUTH = HERE.parents[1] / "tests" / "data" / "numerics" / "hopper_tc_truth.npz"
H200_TRUTH_DIR = HERE.parents[1] / "tests" / "data" / "numerics"  # h200_mma_truth.npz, for `float64`

TILES_PER_FAMILY = 12288  # x 9 families = 110,592 tiles per form
DRY_RUN_TILES = 256
BLOCK_TILES = 256  # tiles per SHA-256 digest
FULL_TILES = {"wgmma": 8, "mma": 32}  # tiles per (form, family) whose full D is kept
TWIN_TILES = 64  # tiles per (form, family) whose device inputs are compared with numpy and fingerprinted
# wgmma operand layouts tried in order: (descriptor leading byte offset, stride byte offset, shared-memory mode).
# Mode 1: the 32-byte swizzle with the descriptor of the GEMM's 32-byte k tiles (mainloop.cuh: LBO 16, SBO 8 rows);
# mode 0: no swizzle, K-adjacent core matrices 128 bytes apart and 8-row groups 256 (then the two fields swapped)
LAYOUTS = ((16, 256, 1), (128, 256, 0), (256, 128, 0))
SECTIONS = {"wgmma": "wgmma", "hmma_f32": "mma"}  # generate.py section -> Form.op
PROBE_TILES = 16
UNWRITTEN = 0xFF  # D is filled with this byte first: all-ones codes are non-canonical NaNs the hardware never writes


def form_key(name: str) -> str:
    """npz key prefix of a form (dots are not welcome in archive member names)."""
    return name.replace(".", "_")


def kernel_name(form: TC.Form) -> str:
    """The extern "C" kernel of a form in wgmma_kernels.cu."""
    return f"k_{form.op}_{form.c}_{form.a}_{form.b}"


def build_cubin(out: Path) -> str:
    """Compile wgmma_kernels.cu for sm_90a into `out`; returns the build line and ptxas version."""
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["nvcc", *NVCC_FLAGS, str(CU), "-o", str(out)], check=True)
    ver = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    return "built on the device: nvcc " + " ".join(NVCC_FLAGS) + "; " + " ".join(ver)


def get_cubin(carry: Path, work: Path) -> tuple[Path, str]:
    """The carried cubin (built elsewhere, `build_tc.txt` beside it) or one built now with the device's nvcc."""
    carried = carry / CUBIN_NAME
    if carried.is_file():
        info = carry / "build_tc.txt"
        return carried, info.read_text() if info.is_file() else "carried cubin"
    cubin = work / CUBIN_NAME
    return cubin, build_cubin(cubin)


def sass_summary(cubin: Path) -> dict[str, list[str]]:
    """Tensor-core SASS of each kernel (cuobjdump, where present): GMMA / HMMA / F2FP / HADD2 / FADD lines."""
    try:
        text = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, timeout=120).stdout
    except Exception as exc:  # noqa: BLE001 - informational only
        return {"unavailable": [str(exc)]}
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        if "Function :" in line:
            cur = line.split("Function :")[1].strip()
            out[cur] = []
        elif cur and any(op in line for op in ("GMMA", "HMMA", "F2FP", "HADD2", "FADD")):
            out[cur].append(line.split(";")[0].split("*/")[-1].strip())
    return out


# ---------------------------------------------------------------- backends
class CupyTC:
    """Runs k_gen_tc and the per-form kernels through CuPy."""

    def __init__(self, cubin: Path) -> None:
        import cupy as cp

        self.cp = cp
        self.mod = cp.RawModule(path=str(cubin))
        self.fn: dict[str, object] = {}

    def _f(self, name: str):
        if name not in self.fn:
            self.fn[name] = self.mod.get_function(name)
        return self.fn[name]

    def gen(self, form: TC.Form, fam: int, seed: int, stream: int, start: int, n: int) -> tuple:
        """Device-generated inputs of tiles start..start+n-1 (uint8 byte buffers)."""
        cp = self.cp
        fa, fb, fc = (TC.FORMATS[x] for x in (form.a, form.b, form.c))
        a = cp.zeros(n * form.m * form.k * fa.nbytes, dtype=cp.uint8)
        b = cp.zeros(n * form.k * form.n * fb.nbytes, dtype=cp.uint8)
        c = cp.zeros(n * form.m * form.n * fc.nbytes, dtype=cp.uint8)
        per = form.m * form.k + form.k * form.n + form.m * form.n
        total = n * per
        args = (np.int32(TC.FORMAT_IDS[form.a]), np.int32(TC.FORMAT_IDS[form.b]), np.int32(TC.FORMAT_IDS[form.c]),
                np.int32(fam), np.uint32(form.m), np.uint32(form.n), np.uint32(form.k), np.uint32(seed),
                np.uint32(stream), np.uint32(start), np.uint32(n), a, b, c)
        self._f("k_gen_tc")(((total + 255) // 256,), (256,), args)
        cp.cuda.runtime.deviceSynchronize()
        return a, b, c

    def put(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple:
        """Host tiles to device byte buffers."""
        cp = self.cp
        return tuple(cp.asarray(np.ascontiguousarray(x).view(np.uint8).reshape(-1)) for x in (a, b, c))

    def run(self, form: TC.Form, bufs: tuple, n: int, layout: tuple[int, int, int]) -> np.ndarray:
        """D (n, m, n_) of the form's instruction over n tiles (layout: one of LAYOUTS, wgmma only)."""
        cp = self.cp
        fc = TC.FORMATS[form.c]
        d = cp.full(n * form.m * form.n * fc.nbytes, UNWRITTEN, dtype=cp.uint8)
        if form.op == "wgmma":
            grid = min(n, 132 * 16)
            self._f(kernel_name(form))((grid,), (128,), (*bufs, d, np.uint32(n), *(np.uint32(v) for v in layout)))
        else:
            self._f(kernel_name(form))(((n + 3) // 4,), (128,), (*bufs, d, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        return cp.asnumpy(d).view(fc.dtype).reshape(n, form.m, form.n)

    def host(self, form: TC.Form, bufs: tuple, n: int) -> tuple[np.ndarray, ...]:
        """The first n tiles of device input buffers as typed host arrays."""
        shapes = ((form.m, form.k, form.a), (form.k, form.n, form.b), (form.m, form.n, form.c))
        out = []
        for buf, (r, s, f) in zip(bufs, shapes, strict=True):
            fmt = TC.FORMATS[f]
            out.append(self.cp.asnumpy(buf[: n * r * s * fmt.nbytes]).view(fmt.dtype).reshape(n, r, s))
        return tuple(out)


class DryRunTC:
    """CPU stand-in with CupyTC's interface: numpy inputs and the model's own outputs (NOT hardware truth)."""

    def __init__(self, override: dict[str, TC.Form] | None = None) -> None:
        self.override = override or {}  # form name -> the Form whose outputs stand in (tests of the checker)

    def gen(self, form: TC.Form, fam: int, seed: int, stream: int, start: int, n: int) -> tuple:
        """The numpy twin's inputs."""
        return T.tc_tile_inputs(form.name, fam, seed, start, n)

    def put(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple:
        """Host tiles as they are."""
        return a, b, c

    def run(self, form: TC.Form, bufs: tuple, n: int, layout: tuple[int, int, int]) -> np.ndarray:
        """The model (so the packed dry-run data passes the tests: plumbing only)."""
        return TC.run_form(self.override.get(form.name, form), *bufs)

    def host(self, form: TC.Form, bufs: tuple, n: int) -> tuple[np.ndarray, ...]:
        """The first n tiles."""
        return tuple(x[:n] for x in bufs)


# ---------------------------------------------------------------- probe: exact results check the layouts
def probe_inputs(form: TC.Form, n: int = PROBE_TILES) -> tuple[np.ndarray, ...]:
    """Tiles whose every model gives the exact A·B + C: operands in {0, +-1/2, +-1, +-3/2, +-2}, C in k/4."""
    rng = np.random.default_rng(0x70BE)
    choices = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0])
    av = rng.choice(choices, (n, form.m, form.k))
    bv = rng.choice(choices, (n, form.k, form.n))
    cv = rng.integers(1, 65, (n, form.m, form.n)) * rng.choice([-0.25, 0.25], (n, form.m, form.n))
    fa, fb, fc = (TC.FORMATS[x] for x in (form.a, form.b, form.c))
    return TC.encode_values(av, fa), TC.encode_values(bv, fb), TC.encode_values(cv, fc)


def probe_bad(form: TC.Form, a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> int:
    """Outputs differing from the exact A·B + C (by value)."""
    fa, fb, fc = (TC.FORMATS[x] for x in (form.a, form.b, form.c))
    want = np.einsum("tik,tkj->tij", TC.values_of(a, fa), TC.values_of(b, fb)) + TC.values_of(c, fc)
    got = TC.values_of(d, fc)
    return int((got != want).sum())


# ---------------------------------------------------------------- the section
def section(backend, res: dict, name: str, tiles: int, seed: int = T.TRUTH_SEED) -> str:
    """Measure every form of one section ("wgmma" or "hmma_f32") into res[f"tc_{name}"]; returns summary lines."""
    op = SECTIONS[name]
    forms = [f for f in TC.HOPPER_FORMS.values() if f.op == op]
    if tiles % BLOCK_TILES:
        raise ValueError(f"tiles per family must be a multiple of {BLOCK_TILES}, got {tiles}")
    out: dict[str, np.ndarray] = {
        "forms": np.array([f.name for f in forms]),
        "seed": np.uint32(seed),
        "tiles_per_family": np.uint32(tiles),
        "block_tiles": np.uint32(BLOCK_TILES),
        "twin_tiles": np.uint32(TWIN_TILES),
    }
    lines = []
    for form in forms:
        key = form_key(form.name)
        index = TC.FORM_NAMES.index(form.name)
        pa, pb, pc = probe_inputs(form)
        bads = []
        layouts = LAYOUTS if form.op == "wgmma" else LAYOUTS[:1]
        for i, layout in enumerate(layouts):
            pd = backend.run(form, backend.put(pa, pb, pc), PROBE_TILES, layout)
            bads.append(probe_bad(form, pa, pb, pc, pd))
            if bads[-1] == 0:
                break
            out[f"{key}__probe_d{i}"] = pd  # kept for diagnosis (the packer drops failed forms)
        out[f"{key}__probe_bad"] = np.array(bads, dtype=np.int64)
        if bads[-1] != 0:
            out[f"{key}__layout"] = np.int32(-1)
            lines.append(f"{form.name}: PROBE FAILED (exact-result mismatches per layout tried: {bads}); no truth")
            continue
        layout = layouts[len(bads) - 1]
        out[f"{key}__layout"] = np.int32(len(bads) - 1)
        full = FULL_TILES[op]
        model_bad, twin_bad, unwritten = [], [], 0
        for fam in sorted(T.TC_FAMILIES):
            stream = T.tc_stream(index, fam)
            bufs = backend.gen(form, fam, seed, stream, 0, tiles)
            d = backend.run(form, bufs, tiles, layout)
            ga, gb, gc = backend.host(form, bufs, TWIN_TILES)
            a, b, c = T.tc_tile_inputs(form.name, fam, seed, 0, TWIN_TILES)
            tb = int(((ga != a).any(axis=(1, 2)) | (gb != b).any(axis=(1, 2)) | (gc != c).any(axis=(1, 2))).sum())
            twin_bad.append(tb)
            out[f"{key}__f{fam}__twin_sha"] = T.inputs_sha256(ga, gb, gc)
            out[f"{key}__f{fam}__sha"] = T.block_sha256(d, BLOCK_TILES)
            out[f"{key}__f{fam}__d"] = d[:full].copy()
            unwritten += int((d == TC.FORMATS[form.c].dtype(np.iinfo(d.dtype).max)).sum())
            fa, fb, fc = T.tc_tile_inputs(form.name, fam, seed, 0, full)
            model_bad.append(int((TC.run_form(form, fa, fb, fc) != d[:full]).sum()))
        out[f"{key}__twin_bad"] = np.array(twin_bad, dtype=np.int64)
        out[f"{key}__all_ones_outputs"] = np.int64(unwritten)
        verdict = "model fits" if not any(model_bad) else "MODEL MISSES"
        where = f"layout (LBO, SBO, swizzle mode) {layout}, " if form.op == "wgmma" else ""
        lines.append(
            f"{form.name}: {where}twin-mismatch tiles {sum(twin_bad)}, all-ones outputs {unwritten}; "
            f"model mismatches on the first {full} tiles per family {model_bad} -> {verdict}"
        )
    res[f"tc_{name}"] = out
    return "\n  ".join(lines)


def fingerprint(path: Path) -> str:
    """SHA-256 of a file (the cubin's identity in the metadata)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- check: the packed truth against the models
def load(path: Path) -> dict[str, np.ndarray]:
    """The packed truth as a dict of arrays."""
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def full_tiles(truth: dict, name: str, fam: int) -> tuple[np.ndarray, ...]:
    """(a, b, c, d) of the kept full tiles of one form and family."""
    d = truth[f"{form_key(name)}__f{fam}__d"]
    a, b, c = T.tc_tile_inputs(name, fam, int(truth["seed"]), 0, d.shape[0])
    return a, b, c, d


def block_ok(args: tuple) -> tuple[str, int, int, bool]:
    """Recompute one SHA-256 block of the shipped model (for the process pool)."""
    name, fam, blk, seed, block, want = args
    a, b, c = T.tc_tile_inputs(name, fam, seed, blk * block, block)
    got = T.block_sha256(TC.run_form(TC.get_form(name), a, b, c), block)[0]
    return name, fam, blk, bool(np.array_equal(got, want))


def check_form(truth: dict, name: str, blocks: int | None, jobs: int, want_candidates: bool) -> bool:
    """Report one form; True when the shipped model matched everything checked."""
    form = TC.get_form(name)
    key = form_key(name)
    seed, twin_n, block = int(truth["seed"]), int(truth["twin_tiles"]), int(truth["block_tiles"])
    fams = sorted(T.TC_FAMILIES)
    twin = []
    for fam in fams:
        a, b, c = T.tc_tile_inputs(name, fam, seed, 0, twin_n)
        twin.append(np.array_equal(T.inputs_sha256(a, b, c), truth[f"{key}__f{fam}__twin_sha"]))
    tiles = [full_tiles(truth, name, fam) for fam in fams]
    full_bad = score(form, tiles)
    jobs_list = []
    for fam in fams:
        shas = truth[f"{key}__f{fam}__sha"]
        n = shas.shape[0] if blocks is None else min(blocks, shas.shape[0])
        jobs_list += [(name, fam, blk, seed, block, shas[blk]) for blk in range(n)]
    if jobs > 1 and len(jobs_list) > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(block_ok, jobs_list, chunksize=4))
    else:
        results = [block_ok(j) for j in jobs_list]
    blk_bad = [sum(1 for _, f, _, ok in results if f == fam and not ok) for fam in fams]
    blk_n = [sum(1 for _, f, _, _ in results if f == fam) for fam in fams]
    ok = all(twin) and not any(full_bad) and not any(blk_bad)
    print(f"{name}: {form.ptx}  [{form.sass}]")
    print(f"  twin ok per family: {['ok' if t else 'BAD' for t in twin]}")
    print(f"  full tiles ({tiles[0][3].shape[0]} per family), mismatching outputs: {full_bad}")
    print(f"  SHA-256 blocks of {block} tiles, mismatching / checked: "
          + ", ".join(f"{b}/{n}" for b, n in zip(blk_bad, blk_n, strict=True)))
    print(f"  shipped: {form.step.label()} groups={len(form.groups)} c_entry={form.c_entry} "
          f"operands_as={form.operands_as} -> {'FITS' if ok else 'MISSES'}")
    if not ok or want_candidates:
        scored = []
        for label, cand in candidates(form):
            s = score(cand, tiles)
            scored.append((sum(s), label, s))
        fits = [label for total, label, _ in scored if total == 0]
        print(f"  candidates with 0 mismatches on the full tiles ({len(fits)} of {len(scored)}): {fits}")
        if not fits:
            for total, label, s in sorted(scored)[:6]:
                print(f"    closest: {label}: {total} {s}")
    return ok


# ---------------------------------------------------------------- float64: the H200 mma truth, independently
E4M3_VALUES = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
_NZ = (E4M3_VALUES != 0) & np.isfinite(E4M3_VALUES)
E4M3_EXPONENTS = np.where(_NZ, np.floor(np.log2(np.where(_NZ, np.abs(E4M3_VALUES), 1.0))), -1000.0)
HMMA_FRAC_BITS = 25


def _hmma(prod: np.ndarray, prod_exp: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """One HMMA.16816.F16 step of the float64 statement (the module docstring's "Float64")."""
    nz = (acc != 0) & np.isfinite(acc)
    acc_exp = np.where(nz, np.floor(np.log2(np.where(nz, np.abs(acc), 1.0))), -1000.0)
    top = np.maximum(np.where(prod != 0, prod_exp, -1000.0).max(axis=-1), acc_exp)
    q = np.ldexp(1.0, (top - HMMA_FRAC_BITS).astype(np.int64))
    s = (np.trunc(prod / q[..., None]) * q[..., None]).sum(axis=-1) + np.trunc(acc / q) * q
    return s.astype(np.float16).astype(np.float64)


def hopper_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The float64 statement on (n,16,32) / (n,32,8) / (n,16,8) bit patterns; returns (n,16,8) uint16."""
    bt = np.transpose(b, (0, 2, 1))
    prod = E4M3_VALUES[a][:, :, None, :] * E4M3_VALUES[bt][:, None, :, :]
    prod_exp = E4M3_EXPONENTS[a][:, :, None, :] + E4M3_EXPONENTS[bt][:, None, :, :]
    k = np.arange(32)
    acc = np.zeros(prod.shape[:3])
    for half in ((0, 1), (2, 3)):
        sel = np.isin(k % 4, half)
        acc = _hmma(prod[..., sel], prod_exp[..., sel], acc)
    d = (acc + c.view(np.float16).astype(np.float64)).astype(np.float16)
    return np.where(np.isnan(d), np.uint16(0x7FFF), d.view(np.uint16))


def float64_check(tiles: int | None) -> int:
    """The H200 mma truth's tile digests (the first `tiles` per family, None: all) against `hopper_mma`."""
    truth = T.load_truth("h200_mma_truth", H200_TRUTH_DIR)
    t0, total = time.time(), 0
    with np.errstate(all="ignore"):
        for kind in sorted(T.MMA_KINDS):
            digests = truth[f"k{kind}_digest"][:tiles]
            bad = []
            for start in range(0, digests.size, 4096):
                n = min(4096, digests.size - start)
                got = T.tile_digests(hopper_mma(*T.mma_tile_inputs(kind, T.TRUTH_SEED, start, n)))
                bad.extend((np.flatnonzero(got != digests[start : start + n]) + start).tolist())
            total += len(bad)
            print(f"kind {kind}: {len(bad)} of {digests.size} tiles differ {bad[:5]}  [{time.time() - t0:.0f} s]")
    print(f"total mismatching tiles: {total}")
    return 1 if total else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m tools.truth.tc_truth", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("check", help="check the models against the packed truth (CPU)")
    q.add_argument("--truth", type=Path, default=DEFAULT_TRUTH)
    q.add_argument("--forms", default="", help="comma-separated substrings of form names (default: all)")
    q.add_argument("--blocks", default="1", help="SHA-256 blocks per family to recompute, or 'all'")
    q.add_argument("--jobs", type=int, default=1)
    q.add_argument("--candidates", action="store_true", help="score the candidates even where the model fits")
    f = sub.add_parser("float64", help="the H200 mma truth against the independent float64 statement (CPU)")
    f.add_argument("--tiles", type=int, default=None, help="tiles per family (default: all committed)")
    args = p.parse_args(argv)
    if args.cmd == "float64":
        return float64_check(args.tiles)
    if not args.truth.is_file():
        print(f"tc_truth check: no truth file {args.truth} (run the generator on a Hopper GPU and pack it first)")
        return 2
    truth = load(args.truth)
    subs = [s for s in args.forms.split(",") if s]
    names = [str(n) for n in truth["forms"] if not subs or any(s in str(n) for s in subs)]
    blocks = None if args.blocks == "all" else int(args.blocks)
    t0 = time.time()
    bad = [n for n in names if not check_form(truth, n, blocks, args.jobs, args.candidates)]
    print(f"{len(names) - len(bad)} of {len(names)} forms fit; missing: {bad}  [{time.time() - t0:.0f} s]")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
