"""The write-up's GEMM ladder on Hopper as nine small kernels, one file per rung (README.md in this folder).

Each rung computes C = A @ B^T for fp16 A (M x K, row-major) and B given as N x K (row-major, i.e. K-major), with
fp32 accumulation and fp32 C (or bf16 C). Shapes must be multiples of the rung's tile: M of BM x cluster CTAs, N of
BN, K of BK (`Rung.multiple`); others raise TcforgeError. The tiles and cluster sizes are read from each rung's
source; the threads, shared memory and box sizes from the compiled kernel (its `ladder_info` array).

`launch(name, a, b, out)` runs rung `name` once on the current torch stream; `prepare(...)` builds the tensor maps
and buffers once and returns the launch as a callable (for timing). `tcforge bench gemm --ladder` times them.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tcforge.errors import DeviceUnavailableError, TcforgeError
from tcforge.runtime.compile import CompiledModule, compile_cuda

HERE = Path(__file__).resolve().parent
KERNEL = "ladder_gemm"
REDUCE = "ladder_splitk_reduce"
OUT_KINDS = ("fp32", "bf16")
MIN_SPLIT_KTILES = 4  # split-K keeps at least this many k-tiles per split

# name, file, how the kernel is called: "pointers" (cp.async), "tma" (TMA loads, direct stores), "tma_store" (its C
# leaves by TMA too), "persistent" (+ a grid of one round of clusters), "splitk" (+ the split count and a reduction)
_FILES = (
    ("baseline", "rung1_cp_async.cu", "pointers"),
    ("tma_ws", "rung2_tma_warpspec.cu", "tma"),
    ("bn256", "rung3_bn256_setmaxnreg.cu", "tma"),
    ("cluster2", "rung4_cluster_multicast.cu", "tma"),
    ("tma_store", "rung5_tma_store.cu", "tma_store"),
    ("bk64", "rung6_bk64.cu", "tma_store"),
    ("persistent", "rung7_persistent.cu", "persistent"),
    ("splitk", "rung8_splitk.cu", "splitk"),
    ("hoist", "rung9_hoist_desc.cu", "splitk"),
)
_HEAD_RE = re.compile(r"^// Rung (\d+) — (.+)$", re.M)


def _constant(text: str, name: str) -> int:
    m = re.search(rf"^constexpr int {name} = (\d+);", text, re.M)
    if m is None:
        raise TcforgeError(f"ladder source without `constexpr int {name} = <n>;`")
    return int(m.group(1))


@dataclass(frozen=True)
class Rung:
    """One rung: its number, name, source file, tile (BM x BN x BK), CTAs per cluster, what it adds (the first line
    of its file) and how it is launched."""

    number: int
    name: str
    file: str
    bm: int
    bn: int
    bk: int
    cluster: int
    adds: str
    kind: str

    @property
    def tile(self) -> tuple[int, int, int]:
        return (self.bm, self.bn, self.bk)

    @property
    def multiple(self) -> tuple[int, int, int]:
        """What M, N and K must be multiples of."""
        return (self.bm * self.cluster, self.bn, self.bk)

    def source(self) -> str:
        """The kernel source with common.cuh pasted in (so the compile cache's key covers it)."""
        text = (HERE / self.file).read_text()
        return text.replace('#include "common.cuh"', (HERE / "common.cuh").read_text(), 1)


def _rung(name: str, file: str, kind: str) -> Rung:
    text = (HERE / file).read_text()
    head = _HEAD_RE.search(text)
    if head is None:
        raise TcforgeError(f"{file} does not open with '// Rung <n> — <what it adds>'")
    return Rung(int(head.group(1)), name, file, _constant(text, "BM"), _constant(text, "BN"), _constant(text, "BK"),
                _constant(text, "CLUSTER"), head.group(2).strip(), kind)


RUNGS: dict[str, Rung] = {name: _rung(name, file, kind) for name, file, kind in _FILES}


def rung(name: str | int) -> Rung:
    """A rung by name or number (1-9)."""
    for r in RUNGS.values():
        if name in (r.name, r.number, f"r{r.number}"):
            return r
    raise TcforgeError(f"no ladder rung {name!r}: one of {', '.join(RUNGS)} (or 1-9)")


def compile_rung(name: str | int, out_kind: str = "fp32") -> CompiledModule:
    """Compile one rung for fp32 or bf16 C (cached on disk); the record carries ptxas's report."""
    if out_kind not in OUT_KINDS:
        raise TcforgeError(f"out_kind must be one of {OUT_KINDS}, got {out_kind!r}")
    r = rung(name)
    return compile_cuda(r.source(), arch="sm_90a", options=[f"-DOUT_BF16={int(out_kind == 'bf16')}"],
                        name=f"ladder_r{r.number}_{r.name}_{out_kind}")


def check_shape(name: str | int, m: int, n: int, k: int) -> None:
    """Raise TcforgeError unless (M, N, K) are positive multiples of the rung's tile (and fit 32-bit indices)."""
    r = rung(name)
    for dim, v, mult in zip("MNK", (m, n, k), r.multiple, strict=True):
        if v <= 0 or v % mult or v >= 2**31:
            raise TcforgeError(f"ladder rung {r.number} ({r.name}) takes {dim} as a positive multiple of {mult} "
                               f"(tile {r.bm}x{r.bn}x{r.bk}, {r.cluster} CTA(s) per cluster along M): got "
                               f"M, N, K = {m}, {n}, {k}")


def choose_splits(name: str | int, m: int, n: int, k: int, sms: int) -> int:
    """Rungs 8-9: split K where the cluster tiles fill at most half of the clusters that fit and every split keeps
    at least MIN_SPLIT_KTILES k-tiles; 1 otherwise (and for rungs 1-7). No split is left empty."""
    r = rung(name)
    if r.kind != "splitk":
        return 1
    tiles = (m // (r.bm * r.cluster)) * (n // r.bn)
    clusters, num_kt = max(1, sms // r.cluster), k // r.bk
    if tiles > clusters // 2 or num_kt < 2 * MIN_SPLIT_KTILES:
        return 1
    want = max(1, min(clusters // tiles, num_kt // MIN_SPLIT_KTILES))
    per = -(-num_kt // want)
    return -(-num_kt // per)


@dataclass(frozen=True)
class _Loaded:
    fn: Any
    reduce: Any
    threads: int
    smem: int
    b_box_rows: int


@cache
def _load(name: str, out_kind: str, device: int) -> _Loaded:
    """Compile, load and read back what the kernel reports (threads, shared memory, B's box rows)."""
    import numpy as np

    from tcforge.runtime import driver, loader

    r = rung(name)
    mod = loader.load(compile_rung(name, out_kind), device)
    ptr, size = driver.call("cuModuleGetGlobal", mod.cu, b"ladder_info", what=f"cuModuleGetGlobal(ladder_info, {name})")
    info = np.zeros(int(size) // 4, dtype=np.int32)
    driver.memcpy_dtoh(info, int(ptr))
    bm, bn, bk, cluster, threads, smem, b_box = (int(x) for x in info[:7])
    if (bm, bn, bk, cluster) != (r.bm, r.bn, r.bk, r.cluster):
        raise TcforgeError(f"{r.file}: the kernel reports tile {bm}x{bn}x{bk}/{cluster}, its source says "
                           f"{r.bm}x{r.bn}x{r.bk}/{r.cluster}")
    fn = mod.function(KERNEL)
    fn.set_max_dynamic_shared(smem)
    return _Loaded(fn, mod.function(REDUCE) if r.kind == "splitk" else None, threads, smem, b_box)


def _check_operands(r: Rung, a: Any, b: Any, out: Any) -> tuple[int, int, int, str]:
    import torch

    if not all(isinstance(t, torch.Tensor) for t in (a, b, out)):
        raise TcforgeError("a, b and out must be torch tensors")
    if a.dtype != torch.float16 or b.dtype != torch.float16:
        raise TcforgeError(f"the ladder takes fp16 a and b, got {a.dtype} and {b.dtype}")
    if out.dtype not in (torch.float32, torch.bfloat16):
        raise TcforgeError(f"out must be float32 or bfloat16, got {out.dtype}")
    if a.dim() != 2 or b.dim() != 2 or out.dim() != 2 or a.shape[1] != b.shape[1]:
        raise TcforgeError(f"a (M, K), b (N, K) and out (M, N) expected, got {tuple(a.shape)}, {tuple(b.shape)}, "
                           f"{tuple(out.shape)}")
    m, k = (int(x) for x in a.shape)
    n = int(b.shape[0])
    if tuple(out.shape) != (m, n):
        raise TcforgeError(f"out must be ({m}, {n}), got {tuple(out.shape)}")
    if not (a.is_cuda and b.is_cuda and out.is_cuda) or len({a.device, b.device, out.device}) != 1:
        raise TcforgeError("a, b and out must be on one CUDA device")
    for what, t in (("a", a), ("b", b), ("out", out)):
        if not t.is_contiguous() or t.data_ptr() % 16:
            raise TcforgeError(f"{what} must be contiguous (row-major) and 16-byte aligned")
    if torch.cuda.get_device_capability(a.device) != (9, 0):
        raise DeviceUnavailableError(f"the ladder's kernels are built for sm_90a, {a.device} is not one")
    check_shape(r.name, m, n, k)
    return m, n, k, "fp32" if out.dtype == torch.float32 else "bf16"


def _check_splits(r: Rung, k: int, splits: int) -> None:
    """Refuse a split count the rung cannot run: a split of a non-split-K rung, or one that leaves a split empty."""
    num_kt = k // r.bk
    if r.kind != "splitk" and splits != 1:
        raise TcforgeError(f"rung {r.number} ({r.name}) does not split K")
    if not 1 <= splits <= num_kt or (splits - 1) * -(-num_kt // splits) >= num_kt:
        raise TcforgeError(f"{splits} splits of {num_kt} k-tiles would leave a split empty")


@dataclass(frozen=True)
class LaunchPlan:
    """A rung's launch apart from the device: tensor-map shapes as (dims, byte strides, box, swizzle), grids."""

    operand_maps: tuple  # A's and B's maps (none for the pointer rung)
    c_map: tuple | None  # C's map where the rung stores C by TMA
    grid: tuple[int, int, int]
    reduce_grid: tuple[int, int, int] | None  # the split-K reduction's grid (256 threads a CTA)


def launch_plan(r: Rung, m: int, n: int, k: int, splits: int, sms: int, b_box_rows: int, c_bytes: int) -> LaunchPlan:
    """The launch `prepare` makes and `emulate` mirrors: A and B as K-major boxes of BK columns (the swizzle span:
    64 or 128 bytes) by BM rows / B's box rows; C (splits planes of M rows of c_bytes-byte elements) in boxes of one
    warp's 16 rows by 128 bytes (common.cuh, store_acc_tma); persistent and split-K rungs as one round of clusters
    over the work units."""
    operand_maps = () if r.kind == "pointers" else \
        tuple(((k, rows), (k * 2,), (r.bk, box), r.bk * 2) for rows, box in ((m, r.bm), (n, b_box_rows)))
    c_map = None if r.kind in ("pointers", "tma") else \
        ((n, splits * m), (n * c_bytes,), (128 // c_bytes, 16), 128)
    if r.kind in ("persistent", "splitk"):
        units = (m // (r.bm * r.cluster)) * (n // r.bn) * splits
        grid = (min(units, sms // r.cluster) * r.cluster, 1, 1)
    else:
        grid = (m // r.bm, n // r.bn, 1)
    reduce_grid = (max(1, min(-(-m * n // 256), sms * 8)), 1, 1) if splits > 1 else None
    return LaunchPlan(operand_maps, c_map, grid, reduce_grid)


def prepare(name: str | int, a: Any, b: Any, out: Any, *, splits: int | None = None) -> Callable[[], None]:
    """Everything for `out = a @ b.T` by rung `name` built once; calling the result enqueues the kernel(s) on the
    current torch stream. `splits` forces rungs 8-9's split count (default `choose_splits`)."""
    import torch

    from tcforge.runtime import driver
    from tcforge.runtime import tensormap as tm

    r = rung(name)
    m, n, k, out_kind = _check_operands(r, a, b, out)
    dev = a.device.index if a.device.index is not None else torch.cuda.current_device()
    sms = driver.multiprocessor_count(dev)
    if splits is None:
        splits = choose_splits(r.name, m, n, k, sms)
    _check_splits(r, k, splits)
    # a split launch writes fp32 partial planes with the fp32 build, then the reduction of C's type sums them
    kern = _load(r.name, "fp32" if splits > 1 else out_kind, dev)
    fin = _load(r.name, out_kind, dev) if splits > 1 else None
    target = out if splits == 1 else torch.empty((splits * m, n), dtype=torch.float32, device=a.device)
    eb = target.element_size()
    plan = launch_plan(r, m, n, k, splits, sms, kern.b_box_rows, eb)
    maps = [tm.encode_tiled(tm.DTYPE_FLOAT16, 2, t.data_ptr(), dims, strides, box, swizzle=sw)
            for t, (dims, strides, box, sw) in zip((a, b), plan.operand_maps, strict=False)]
    if r.kind == "pointers":
        args: list[Any] = [ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()),
                           ctypes.c_void_p(out.data_ptr())]
    elif plan.c_map is None:
        args = [*maps, ctypes.c_void_p(out.data_ptr())]
    else:  # C by TMA stores
        dims, strides, box, sw = plan.c_map
        dt = tm.DTYPE_FLOAT32 if eb == 4 else tm.DTYPE_BFLOAT16
        args = [*maps, tm.encode_tiled(dt, eb, target.data_ptr(), dims, strides, box, swizzle=sw)]
    args += [ctypes.c_int(m), ctypes.c_int(n), ctypes.c_int(k)]
    if r.kind == "splitk":
        args.append(ctypes.c_int(splits))
    main = driver.Launch(kern.fn, plan.grid, (kern.threads, 1, 1), args, shared_bytes=kern.smem)
    reduce = None
    if fin is not None:
        rargs = [ctypes.c_void_p(target.data_ptr()), ctypes.c_void_p(out.data_ptr()), ctypes.c_longlong(m * n),
                 ctypes.c_int(splits)]
        reduce = driver.Launch(fin.reduce, plan.reduce_grid, (256, 1, 1), rargs)
    keep = (a, b, out, target, maps)

    def run() -> None:
        stream = torch.cuda.current_stream(a.device).cuda_stream
        main(stream)
        if reduce is not None:
            reduce(stream)

    run.keep = keep  # type: ignore[attr-defined]  # the buffers and maps the launch points at
    run.splits = splits  # type: ignore[attr-defined]
    return run


def launch(name: str | int, a: Any, b: Any, out: Any, *, splits: int | None = None) -> None:
    """out = a @ b.T by rung `name` (fp16 a (M, K) and b (N, K), fp32 or bf16 out (M, N)) on the current stream."""
    prepare(name, a, b, out, splits=splits)()


def emulate(name: str | int, a: Any, b: Any, *, out_kind: str = "fp32", splits: int = 1, sms: int = 132,
            stats: dict | None = None) -> Any:
    """`a @ b.T` by rung `name`'s own PTX on the CPU (`tcforge.ptx.emulate`): numpy fp16 a (M, K) and b (N, K),
    the launch `prepare` makes (grid, cluster, tensor maps, split-K and its reduction) for a GPU of `sms` SMs;
    returns C as float32, or bf16 bits (uint16) for out_kind 'bf16'."""
    import numpy as np

    from tcforge.ptx.emulate import emulate as run_ptx
    from tcforge.ptx.emulate.api import module_global
    from tcforge.ptx.emulate.tensor_map import TensorMap
    from tcforge.ptx.module import read_module
    from tcforge.runtime.compile import compile_ptx

    r = rung(name)
    if out_kind not in OUT_KINDS:
        raise TcforgeError(f"out_kind must be one of {OUT_KINDS}, got {out_kind!r}")
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype != np.float16 or b.dtype != np.float16 or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise TcforgeError(f"fp16 a (M, K) and b (N, K) expected, got {a.dtype} {a.shape} and {b.dtype} {b.shape}")
    (m, k), n = a.shape, b.shape[0]
    check_shape(r.name, m, n, k)
    _check_splits(r, k, splits)

    def build(kind: str) -> tuple[str, Any, list[int]]:
        text = compile_ptx(r.source(), options=[f"-DOUT_BF16={int(kind == 'bf16')}"],
                           name=f"ladder_r{r.number}_{r.name}_{kind}")
        mod = read_module(text, f"{r.file}.ptx")
        info = np.frombuffer(module_global(text, next(d for d in mod.decls if d.name == "ladder_info")), np.int32)
        return text, mod, [int(x) for x in info[:7]]

    text, mod, (_, _, _, _, threads, smem, b_box) = build("fp32" if splits > 1 else out_kind)
    eb = 4 if (splits > 1 or out_kind == "fp32") else 2
    target = np.zeros((splits * m, n), np.float32 if eb == 4 else np.uint16)
    params = [p.name for p in mod.function(KERNEL).params]
    plan = launch_plan(r, m, n, k, splits, sms, b_box, eb)
    values: list[Any] = [TensorMap(buf, "f16", *spec) for buf, spec in zip("AB", plan.operand_maps, strict=False)]
    if r.kind == "pointers":
        values = ["A", "B", "C"]
    else:
        values.append("C" if plan.c_map is None else TensorMap("C", "f32" if eb == 4 else "bf16", *plan.c_map))
    values += [m, n, k] + ([splits] if r.kind == "splitk" else [])
    args: dict[str, Any] = {"A": a, "B": b, "C": target, **dict(zip(params, values, strict=True))}
    out = run_ptx(text, KERNEL, plan.grid, (threads, 1, 1), args, file=f"{r.file}.ptx", dynamic_shared=smem,
                  stats=stats)["C"]
    if plan.reduce_grid is not None:
        text, _, _ = build(out_kind)
        final = np.zeros((m, n), np.float32 if out_kind == "fp32" else np.uint16)
        reduce_args = dict(zip((f"{REDUCE}_param_{i}" for i in range(4)), ("P", "F", m * n, splits), strict=True))
        out = run_ptx(text, REDUCE, plan.reduce_grid, (256, 1, 1), {"P": out, "F": final, **reduce_args},
                      file=f"{r.file}.ptx")["F"]
    return out
