"""Instruction semantics family by family: one generated PTX kernel per op family, GPU outputs against the emulator."""

# python3 -m tools.emulate_families build [--out DIR] [--seed N] [--ptxas]   write every family's PTX (CPU)
# python3 -m tools.emulate_families emulate [--seed N] [--only a,b]           run every family in the emulator (CPU)
# python3 -m tools.emulate_families generate --out FILE [--check]             on the GPU machine: one .npz of all
# python3 -m tools.emulate_families check FILE [--only a,b]                   emulator against the GPU's outputs
#
# Each thread t reads its operands from row t of the input buffer, applies every variant of the family and stores
# each result at its own byte offset of row t of the output buffer (predicates as one byte). The .npz holds, per
# family, the PTX, the launch, the layout of every operand and result (JSON), the initial contents of every buffer
# and the GPU's contents after the launch, so `check` needs nothing but the file. The kernel builder and operand
# generators are tools/emulate_families_ptx.py; the families, tools/emulate_families_alu.py (integer and float) and
# tools/emulate_families_cvt_warp.py (conversions, warp and atomic ops).

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

from tools import emulate_families_alu as alu
from tools import emulate_families_cvt_warp as cvt
from tools.emulate_families_ptx import Family

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is a dependency of tcforge
    def tqdm(it, **_):
        return it

FORMAT = 1
FAMILIES = {f.__name__[4:]: f for f in (
    alu.fam_int_arith, alu.fam_int_divrem, alu.fam_int_minmax, alu.fam_int_shift, alu.fam_int_bits, alu.fam_int_prmt,
    alu.fam_int_logic, alu.fam_setp_int, alu.fam_setp_float, alu.fam_f32_arith, alu.fam_f32_div, alu.fam_f32_misc,
    alu.fam_f32_approx, alu.fam_f64, alu.fam_f16, alu.fam_bf16, cvt.fam_cvt_int, cvt.fam_cvt_f2i, cvt.fam_cvt_i2f,
    cvt.fam_cvt_ff, cvt.fam_cvt_pack, cvt.fam_shfl, cvt.fam_vote, cvt.fam_atom_global, cvt.fam_atom_shared)}


# ---- running, packing, comparing -----------------------------------------------------------------------------------

def build_all(seed: int, only=None) -> dict[str, Family]:
    """Every family (or those named in `only`) built from one seed."""
    out = {}
    for name, fn in FAMILIES.items():
        if only and name not in only:
            continue
        rng = np.random.default_rng([seed, sum(name.encode())])
        with np.errstate(all="ignore"):
            out[name] = fn(rng)
    return out


def _args(fam_buffers: dict) -> dict:
    return {name: arr.copy() for name, arr in fam_buffers.items()}


def run_emulator(ptx: str, meta: dict, init: dict) -> tuple[dict, float]:
    """Every buffer after the launch in the emulator, and the seconds it took."""
    from tcforge.ptx.emulate import emulate

    t0 = time.perf_counter()
    res = emulate(ptx, meta["entry"], tuple(meta["grid"]), tuple(meta["block"]), _args(init), "hopper",
                  file=f"{meta['entry']}.ptx")
    out = {name: np.asarray(res.get(name, init[name])).reshape(init[name].shape) for name in init}
    return out, time.perf_counter() - t0


def run_gpu(ptx: str, meta: dict, init: dict) -> dict:
    """Every buffer after the launch on the GPU (tools.emulate_gpu.run)."""
    from tools.emulate_gpu import run

    res = run(ptx, meta["entry"], tuple(meta["grid"]), tuple(meta["block"]), _args(init))
    return {name: np.ascontiguousarray(np.asarray(res[name])).view(np.uint8).reshape(init[name].shape)
            for name in init}


def gpu_name() -> str:
    """The GPU's name (the driver, else nvidia-smi), or 'unknown'."""
    try:
        from tools.emulate_gpu import device_name

        return device_name()
    except Exception:  # noqa: BLE001 - only a label
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def save(path: Path, seed: int, fams: dict[str, Family], gpu_out: dict, errors: dict, gpu: str) -> None:
    """One compressed .npz: per family PTX, meta, initial buffers and GPU buffers; seed, GPU name, errors."""
    arrays: dict[str, np.ndarray] = {"format": np.array(FORMAT), "seed": np.array(str(seed)), "gpu": np.array(gpu),
                                     "families": np.array(json.dumps([n for n in fams if n in gpu_out])),
                                     "errors": np.array(json.dumps(errors))}
    for name, fam in fams.items():
        if name not in gpu_out:
            continue
        arrays[f"{name}/ptx"] = np.array(fam.ptx)
        arrays[f"{name}/meta"] = np.array(json.dumps(fam.meta))
        for buf, arr in fam.buffers.items():
            arrays[f"{name}/init/{buf}"] = arr
            arrays[f"{name}/gpu/{buf}"] = gpu_out[name][buf]
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)


def load(path: Path) -> dict:
    """The families of a .npz: {name: {"ptx", "meta", "init": {buf: arr}, "gpu": {buf: arr}}} plus "_" (header)."""
    out: dict = {}
    with np.load(path, allow_pickle=False) as z:
        names = json.loads(str(z["families"]))
        out["_"] = {"seed": str(z["seed"]), "gpu": str(z["gpu"]), "errors": json.loads(str(z["errors"]))}
        for name in names:
            meta = json.loads(str(z[f"{name}/meta"]))
            out[name] = {"ptx": str(z[f"{name}/ptx"]), "meta": meta,
                         "init": {b: z[f"{name}/init/{b}"] for b in meta["buffers"]},
                         "gpu": {b: z[f"{name}/gpu/{b}"] for b in meta["buffers"]}}
    return out


def _value(row: np.ndarray, off: int, w: int) -> int:
    nb = 1 if w <= 8 else w // 8
    return int.from_bytes(bytes(row[off:off + nb]), "little")


def compare(meta: dict, init: dict, want: dict, got: dict, examples: int = 4) -> tuple[int, list[str]]:
    """(differing results, report lines): per output slot the threads whose bits differ, then other buffers."""
    lines: list[str] = []
    total = 0
    ins = {s["name"]: s for s in meta["inputs"]}
    out_w, out_g, inp = want["p_out"], got["p_out"], init["p_in"]
    for s in meta["outputs"]:
        nb = 1 if s["width"] <= 8 else s["width"] // 8
        a, b = out_w[:, s["offset"]:s["offset"] + nb], out_g[:, s["offset"]:s["offset"] + nb]
        bad = np.flatnonzero((a != b).any(axis=1))
        if not len(bad):
            continue
        total += len(bad)
        lines.append(f"  {s['name']}: {len(bad)} of {len(a)} threads differ")
        for t in bad[:examples]:
            ops = ", ".join(f"{o}={_value(inp[t], ins[o]['offset'], ins[o]['width']):#x}" for o in s["ops"] if o in ins)
            lines.append(f"    thread {t}: {ops} -> gpu {_value(out_w[t], s['offset'], s['width']):#x} "
                         f"emulator {_value(out_g[t], s['offset'], s['width']):#x}")
    for buf in meta["buffers"]:
        if buf == "p_out":
            continue
        diff = np.argwhere(want[buf] != got[buf])
        if len(diff):
            total += len(diff)
            r, c = diff[0]
            what = f" ({meta['acc'][c // 8]})" if buf == "p_acc" and "acc" in meta else ""
            lines.append(f"  buffer {buf}: {len(diff)} bytes differ (first at row {r} byte {c}{what}: gpu "
                         f"{want[buf][r, c]:#04x} emulator {got[buf][r, c]:#04x})")
    return total, lines


def variants(meta: dict) -> int:
    """Results a family checks (output slots and the contended words)."""
    return len(meta["outputs"]) + len(meta.get("acc", []))


# ---- commands ------------------------------------------------------------------------------------------------------

def cmd_build(args) -> int:
    """Write every family's PTX (and optionally check it with ptxas)."""
    fams = build_all(args.seed, args.only)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name, fam in tqdm(fams.items(), desc="build", unit="family"):
        (out / f"{name}.ptx").write_text(fam.ptx)
        msg = ""
        if args.ptxas:
            r = subprocess.run(["ptxas", f"-arch={fam.ptx.split('.target ')[1].split()[0]}", str(out / f"{name}.ptx"),
                                "-o", str(out / f"{name}.cubin")], capture_output=True, text=True)
            if r.returncode:
                bad += 1
                msg = " ptxas: " + r.stderr.strip().replace("\n", " | ")[:2000]
        size = sum(a.nbytes for a in fam.buffers.values())
        print(f"{name}: {len(fam.meta['outputs'])} results, {fam.meta['grid'][0] * fam.meta['block'][0]} threads, "
              f"{size / 1e6:.2f} MB of buffers{msg}")
    return 1 if bad else 0


def cmd_emulate(args) -> int:
    """Run every family in the emulator (no GPU data): every instruction executes, and how long it takes."""
    fams = build_all(args.seed, args.only)
    bad = 0
    for name, fam in tqdm(fams.items(), desc="emulate", unit="family"):
        try:
            _, sec = run_emulator(fam.ptx, fam.meta, fam.buffers)
            print(f"{name}: {len(fam.meta['outputs'])} results, {sec:.2f} s")
        except Exception as exc:  # noqa: BLE001 - one family's failure must not lose the others
            bad += 1
            print(f"{name}: FAILED {type(exc).__name__}: {exc}")
            if args.verbose:
                traceback.print_exc()
    return 1 if bad else 0


def cmd_generate(args) -> int:
    """On the GPU machine: run every family on the GPU and pack everything into one .npz."""
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    fams = build_all(seed, args.only)
    gpu_out, errors = {}, {}
    for name, fam in tqdm(fams.items(), desc="gpu", unit="family"):
        try:
            gpu_out[name] = run_gpu(fam.ptx, fam.meta, fam.buffers)
        except Exception as exc:  # noqa: BLE001 - one family's failure must not lose the others
            errors[name] = f"{type(exc).__name__}: {exc}"
            print(f"{name}: FAILED {errors[name]}", file=sys.stderr)
    gpu = gpu_name()
    save(Path(args.out), seed, fams, gpu_out, errors, gpu)
    print(f"{args.out}: {len(gpu_out)} families from {gpu}, seed {seed}, {Path(args.out).stat().st_size / 1e6:.2f} MB;"
          f" {len(errors)} failed")
    rc = 1 if errors else 0
    if args.check:
        rc |= cmd_check(argparse.Namespace(file=args.out, only=args.only, lines=args.lines))
    return rc


def cmd_check(args) -> int:
    """Run every family of a GPU .npz in the emulator and report the differing results."""
    data = load(Path(args.file))
    head = data.pop("_")
    print(f"{args.file}: {len(data)} families from {head['gpu']}, seed {head['seed']}")
    for name, err in head["errors"].items():
        print(f"{name}: no GPU data ({err})")
    bad = 0
    for name, fam in tqdm(data.items(), desc="check", unit="family"):
        if args.only and name not in args.only:
            continue
        try:
            got, sec = run_emulator(fam["ptx"], fam["meta"], fam["init"])
            n, lines = compare(fam["meta"], fam["init"], fam["gpu"], got)
            print(f"{name}: {n} differing of {variants(fam['meta'])} results x "
                  f"{fam['init']['p_out'].shape[0]} threads, {sec:.2f} s")
            for ln in lines[:args.lines]:
                print(ln)
            bad += n > 0
        except Exception as exc:  # noqa: BLE001 - one family's failure must not lose the others
            bad += 1
            print(f"{name}: FAILED {type(exc).__name__}: {exc}")
    return 1 if bad else 0


def main(argv=None) -> int:
    """Command line."""
    ap = argparse.ArgumentParser(prog="python3 -m tools.emulate_families", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    only = {"type": lambda s: set(s.split(",")), "default": None, "help": "families to run (comma-separated)"}
    b = sub.add_parser("build", help="write every family's PTX")
    b.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "emulate_families"))
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--ptxas", action="store_true", help="assemble each family with ptxas")
    b.add_argument("--only", **only)
    e = sub.add_parser("emulate", help="run every family in the emulator (no GPU data)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--only", **only)
    e.add_argument("-v", "--verbose", action="store_true")
    g = sub.add_parser("generate", help="on the GPU machine: GPU outputs of every family into one .npz")
    g.add_argument("--out", required=True)
    g.add_argument("--seed", type=int, default=None, help="default: a fresh random seed")
    g.add_argument("--only", **only)
    g.add_argument("--check", action="store_true", help="then check the file against the emulator")
    g.add_argument("--lines", type=int, default=40, help="report lines per family (--check)")
    c = sub.add_parser("check", help="every family of a GPU .npz against the emulator")
    c.add_argument("file")
    c.add_argument("--only", **only)
    c.add_argument("--lines", type=int, default=40, help="report lines per family")
    args = ap.parse_args(argv)
    return {"build": cmd_build, "emulate": cmd_emulate, "generate": cmd_generate, "check": cmd_check}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
