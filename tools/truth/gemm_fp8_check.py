"""tcforge's fp8 GEMM (fast and promoted accumulation) against the numpy model tensorcore.gemm_fp8, bit for bit.

`PYTHONPATH=src:. python3 -m tools.truth.gemm_fp8_check run --out DIR` (GPU, about a minute with a cold kernel cache)
runs every case in both modes without split-K (`fast`: `auto`'s variant, and rung 9's `hoist`; `promote`: the
`promote` and `promote_cm1` variants), records torch._scaled_mm's output beside them, saves inputs and outputs to
DIR/gemm_fp8_outputs.npz and compares them with the model. `check FILE` repeats the comparison on the CPU;
`run --fake` makes the file on the CPU with the model's own outputs in place of the GPU's (the plumbing's test).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import traceback
from pathlib import Path

import ml_dtypes
import numpy as np

from tcforge.numerics.tensorcore import gemm_fp8

FILE = "gemm_fp8_outputs.npz"
MODES = ("fast", "promote")
# name: (M, N, K, out kind, input kind, scale_a, scale_b); a scale of 0 draws one from [0.5, 1.5)
CASES = {
    "normal_bf16": (128, 128, 256, "bf16", "normal", 0.0, 0.0),
    "longk_fp32": (144, 32, 1024, "fp32", "normal", 0.0, 0.0),
    "smallm_fp16": (64, 128, 512, "fp16", "edge", 0.0, 0.0),
    "ragged_bf16": (129, 152, 336, "bf16", "special", 0.0, 0.0),
    "special_fp32": (128, 64, 512, "fp32", "special", 0.0, 0.0),
    "huge_fp32": (64, 64, 256, "fp32", "special", 2.0**55, 2.0**55),
    "tiny_fp32": (64, 64, 256, "fp32", "small", 2.0**-57, 2.0**-57),
    "tiny_bf16": (64, 64, 256, "bf16", "small", 2.0**-60, 2.0**-62),
    "nan_bf16": (64, 64, 256, "bf16", "nan", 0.0, 0.0),
}
KEEP_DIFFS = 256  # differing outputs kept per other tile / cuBLAS run (the file stays under 1 MB)
BITS = {"fp32": np.uint32, "bf16": np.uint16, "fp16": np.uint16}


def to_e4m3(x: np.ndarray) -> np.ndarray:
    """e4m3fn codes of float values (clipped to +-448, nearest even)."""
    return np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


def make_case(name: str, seed: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Codes a (M, K), b (K, N) and the scales of one case, from a seeded generator."""
    m, n, k, _, kind, sa, sb = CASES[name]
    rng = np.random.default_rng([seed, *name.encode()])
    mag = 2.0**-5 if kind == "small" else 2.0  # small: mostly subnormal codes, f32 outputs near the subnormal range
    a = to_e4m3(rng.standard_normal((m, k)) * mag)
    b = to_e4m3(rng.standard_normal((k, n)) * mag)
    if kind == "special":  # random +-448, subnormals, +0 and -0 among the normal codes
        for x in (a, b):
            r = rng.random(x.shape)
            sign = rng.integers(0, 2, x.shape, dtype=np.uint8) << 7
            x[r < 0.04] = 0x7E | sign[r < 0.04]  # +-448
            sub = (r >= 0.04) & (r < 0.10)
            x[sub] = rng.integers(1, 8, x.shape, dtype=np.uint8)[sub] | sign[sub]  # subnormals
            x[(r >= 0.10) & (r < 0.16)] = 0x00
            x[(r >= 0.16) & (r < 0.19)] = 0x80  # -0
    if kind in ("special", "edge", "small"):
        a[1, :] = 0x7E  # a row and a column of 448s: f16 overflow, f32 overflow at large scales
        b[:, 1] = 0x7E
        a[2, ::2] = 0xFE
        h = k // 2  # exact cancellations: rows i % 4 == 0 negate their first half, columns j % 4 == 0 repeat it
        a[::4, h:2 * h] = a[::4, :h] ^ 0x80
        b[h:2 * h, ::4] = b[:h, ::4]
    if kind == "nan":
        a[rng.integers(0, m, 3), rng.integers(0, k, 3)] = 0x7F
        b[rng.integers(0, k, 3), rng.integers(0, n, 3)] = 0xFF
    sa = sa or float(np.float32(rng.random() + 0.5))
    sb = sb or float(np.float32(rng.random() + 0.5))
    return a, b, sa, sb


def run_gpu(a: np.ndarray, b: np.ndarray, sa: float, sb: float, out_kind: str, mode: str) -> tuple:
    """(our bits, the variant run, [(label, bits or None, note)] of the other tiles and cuBLAS) of one case and mode."""
    import torch

    from tcforge.gemm import api, matmul
    from tcforge.gemm.plan import LaunchOptions, plan_launch
    from tcforge.gemm.validate import plan_matmul

    poison = LaunchOptions(poison_output=True)
    ta = torch.from_numpy(a).cuda().view(torch.float8_e4m3fn)
    tb = torch.from_numpy(np.ascontiguousarray(b.T)).cuda().view(torch.float8_e4m3fn).t()  # column-major
    tsa = torch.tensor(sa, dtype=torch.float32, device="cuda")
    tsb = torch.tensor(sb, dtype=torch.float32, device="cuda")
    od = api.torch_dtype(out_kind)
    kw = {"out_dtype": od, "scale_a": tsa, "scale_b": tsb}

    def unsplit(variant: str) -> np.ndarray:
        out = api.run_plan(plan_matmul(ta, tb, variant=variant, **kw), ta, tb, tsa, tsb, splits=1, options=poison)
        torch.cuda.synchronize()
        return _bits(out, out_kind)

    others = ["promote_cm1"] if mode == "promote" else ["hoist"]  # another tile of the same arithmetic
    if mode == "promote":
        ours, ran = unsplit("promote"), "promote@splits=1"
    else:
        plan = plan_matmul(ta, tb, variant="auto", **kw)
        lp = plan_launch(plan, api.device_of(plan))
        if lp.splits == 1 and lp.sk_units == 0 and not lp.config.streamk:
            ours = _bits(matmul(ta, tb, options=poison, **kw), out_kind)
            ran = f"auto ({lp.variant.name})"
        else:  # auto would split K or share it: its tile (or t64 / rung 9 for a stream-K one) unsplit
            name = lp.variant.name if not lp.config.streamk else ("t64" if a.shape[0] <= 128 else "hoist")
            ours = unsplit(name)
            ran = f"{name}@splits=1 (auto: {lp.variant.name}, splits {lp.splits}, sk_units {lp.sk_units})"
    extras = []
    for v in others:
        try:
            extras.append((f"{v}@splits=1", unsplit(v), ""))
        except Exception as e:  # a tile that refuses the shape: noted, not fatal
            extras.append((f"{v}@splits=1", None, f"{type(e).__name__}: {str(e)[:200]}"))
    label = "cuBLAS " + ("use_fast_accum=True" if mode == "fast" else "default")
    try:
        ref = torch._scaled_mm(ta, tb, scale_a=tsa, scale_b=tsb, out_dtype=od, use_fast_accum=mode == "fast")
        torch.cuda.synchronize()
        extras.append((label, _bits(ref, out_kind), ""))
    except Exception as e:  # cuBLAS refuses some shapes (dimensions not multiples of 16)
        extras.append((label, None, f"{type(e).__name__}: {str(e)[:200]}"))
    return ours, ran, extras


def _bits(t: object, out_kind: str) -> np.ndarray:
    """A CUDA tensor's bits as numpy unsigned integers."""
    import torch

    it = torch.int32 if out_kind == "fp32" else torch.int16
    return t.contiguous().view(it).cpu().numpy().view(BITS[out_kind])


def _prewarm(names: list[str], seed: int) -> None:
    """Every case and mode once from parallel threads, so that their kernel builds compile side by side (nvcc runs
    outside the GIL); the measured run below then finds every kernel cached."""
    from concurrent.futures import ThreadPoolExecutor

    def one(job: tuple[str, str]) -> None:
        a, b, sa, sb = make_case(job[0], seed)
        with contextlib.suppress(Exception):  # a failure is reported by the measured run
            run_gpu(a, b, sa, sb, CASES[job[0]][3], job[1])

    jobs = [(n, m) for n in names for m in MODES]
    with ThreadPoolExecutor(max_workers=min(16, len(jobs))) as pool:
        list(pool.map(one, jobs))


def run(out_dir: Path, seed: int, names: list[str], fake: bool) -> Path:
    """Run the cases (GPU, or the model itself with `fake`) and save DIR/gemm_fp8_outputs.npz."""
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, object] = {"seed": seed, "fake": fake, "cases": {}}
    if not fake:
        import torch

        meta["device"] = torch.cuda.get_device_name()
        meta["torch"] = torch.__version__
    if not fake:
        _prewarm(names, seed)
    for name in names:
        a, b, sa, sb = make_case(name, seed)
        out_kind = CASES[name][3]
        arrays[f"{name}__a"], arrays[f"{name}__b"] = a, b
        arrays[f"{name}__scales"] = np.array([sa, sb], np.float32)
        info: dict[str, object] = {"shape": [a.shape[0], b.shape[1], a.shape[1]], "out": out_kind}
        for mode in MODES:
            t0 = time.time()
            if fake:
                ours = gemm_fp8(a, b, sa, sb, out_kind, mode)
                ran, extras = "model", [("model again", ours.copy(), ""), ("cuBLAS", None, "fake run")]
            else:
                try:
                    ours, ran, extras = run_gpu(a, b, sa, sb, out_kind, mode)
                except Exception as e:  # one failing launch must not cost the others' outputs
                    traceback.print_exc()
                    info[mode] = {"variant": f"error: {type(e).__name__}: {str(e)[:300]}", "extras": []}
                    continue
            arrays[f"{name}__{mode}"] = ours
            notes = []
            for x, (label, bits, note) in enumerate(extras):
                diff = None
                if bits is not None:  # stored as where it differs from ours
                    idx = np.flatnonzero(bits.ravel() != ours.ravel()).astype(np.int32)
                    diff, note = int(idx.size), f"differs from ours in {idx.size}"
                    if idx.size <= KEEP_DIFFS:
                        arrays[f"{name}__{mode}__x{x}_idx"] = idx
                        arrays[f"{name}__{mode}__x{x}_val"] = bits.ravel()[idx]
                    else:
                        note += " (too many to keep)"
                notes.append({"label": label, "note": note, "diff": diff})
                print(f"{name} {mode}: {ran}; {label}: {note}", flush=True)
            info[mode] = {"variant": ran, "extras": notes, "s": round(time.time() - t0, 2)}
        meta["cases"][name] = info
    arrays["meta"] = np.array(json.dumps(meta))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILE
    np.savez_compressed(path, **arrays)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return path


def _show(bits: np.ndarray, out_kind: str) -> str:
    """One output's bits and value."""
    dt = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16, "fp16": np.float16}[out_kind]
    return f"0x{int(bits):0{bits.dtype.itemsize * 2}x} ({float(np.asarray(bits).view(dt)):.9g})"


def _nan(bits: np.ndarray, out_kind: str) -> np.ndarray:
    """Whether each output is a NaN."""
    if out_kind == "fp32":
        return (bits & 0x7FFFFFFF) > 0x7F800000
    top = 0x7F80 if out_kind == "bf16" else 0x7C00
    return ((bits & 0x7FFF) > top) & ((bits & top) == top)


def compare(got: np.ndarray, want: np.ndarray, out_kind: str, label: str, show: int = 5) -> int:
    """Print the mismatches of `got` against the model's `want` (NaN payloads apart); return their count."""
    nan_g, nan_w = _nan(got, out_kind), _nan(want, out_kind)
    bad = (got != want) & ~(nan_g & nan_w)
    payload = int(((got != want) & nan_g & nan_w).sum())
    count = int(bad.sum())
    extra = f", {payload} NaN payloads differ" if payload else ""
    print(f"  {label}: {count} of {got.size} differ from the model{extra}; {int(nan_g.sum())} NaN")
    for i, j in np.argwhere(bad)[:show]:
        print(f"    ({i}, {j}): got {_show(got[i, j], out_kind)}, model {_show(want[i, j], out_kind)}")
    return count


def check(path: Path) -> int:
    """Compare a saved run with the model; 0 when every output of ours matches bit for bit (NaN payloads apart)."""
    z = np.load(path)
    meta = json.loads(str(z["meta"]))
    print(f"{path}: seed {meta['seed']}{' (fake)' if meta['fake'] else ''} {meta.get('device', '')}")
    total = 0
    for name, info in meta["cases"].items():
        a, b = z[f"{name}__a"], z[f"{name}__b"]
        sa, sb = (float(s) for s in z[f"{name}__scales"])
        out_kind = info["out"]
        m, n, k = info["shape"]
        print(f"{name}: {m}x{n}x{k} -> {out_kind}, scales {sa:g} {sb:g}")
        models = {}
        for mode in MODES:
            t0 = time.time()
            models[mode] = want = gemm_fp8(a, b, sa, sb, out_kind, mode)
            print(f"  {mode}: {info[mode]['variant']} (model {time.time() - t0:.1f} s)")
            if f"{name}__{mode}" not in z:
                total += 1  # the launch failed: nothing to compare
                continue
            ours = z[f"{name}__{mode}"]
            total += compare(ours, want, out_kind, "ours")
            for x, e in enumerate(info[mode]["extras"]):
                print(f"  {e['label']}: {e['note']}")
                if f"{name}__{mode}__x{x}_idx" in z:
                    got = ours.copy().ravel()
                    got[z[f"{name}__{mode}__x{x}_idx"]] = z[f"{name}__{mode}__x{x}_val"]
                    bad = compare(got.reshape(ours.shape), want, out_kind, e["label"])
                    total += 0 if e["label"].startswith("cuBLAS") else bad
                elif e.get("diff") and not e["label"].startswith("cuBLAS"):
                    total += e["diff"]  # another tcforge tile that differs from ours in more outputs than were kept
        print(f"  the two modes' models differ in {int((models['fast'] != models['promote']).sum())} outputs")
    print(f"== {'PASS' if total == 0 else 'FAIL'}: {total} mismatches of tcforge's outputs against the model")
    return 0 if total == 0 else 1


def main(argv: list[str] | None = None) -> int:
    """Command line: run (GPU, or --fake on the CPU) or check."""
    p = argparse.ArgumentParser(prog="python3 -m tools.truth.gemm_fp8_check", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the cases, save the file, compare")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--seed", type=int, default=41)
    r.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    r.add_argument("--fake", action="store_true", help="the model's outputs in place of the GPU's (CPU)")
    c = sub.add_parser("check", help="compare a saved file with the model (CPU)")
    c.add_argument("file", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "check":
        return check(args.file)
    names = [s for s in args.cases.split(",") if s]
    unknown = [s for s in names if s not in CASES]
    if unknown:
        p.error(f"unknown cases {unknown}; choose from {', '.join(CASES)}")
    return check(run(args.out, args.seed, names, args.fake))


if __name__ == "__main__":
    sys.exit(main())
