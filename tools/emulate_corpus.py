"""A corpus of kernels written by other tools for other purposes, run on the GPU and in the emulator (issue 40):
Triton-generated `mma.sync` matmuls (f16 / bf16 / e4m3, sm_80 / sm_89, several tiles), a flash-attention forward,
softmax, layer norm and reductions; nvcc-built CUDA-sample-style kernels (tools/emulate_corpus_samples.cu: shuffles,
shared-memory reductions and tiling, atomics, scans, divergent loops, sorting, special-value float math); inline-PTX
`mma.sync` fed NaN, infinities, subnormals and exact cancellations. The modules and entries (launches, input
generators, outputs) are listed in tools/corpus/ (modules.py, entries.py and the families' input generators).

    python3 -m tools.emulate_corpus build [--out PTX.npz]       # PTX of every module (Triton + nvcc; no GPU)
    python3 -m tools.emulate_corpus smoke [--ptx PTX.npz]       # every entry in the emulator, fresh inputs
    python3 -m tools.emulate_corpus generate --out FILE [--ptx PTX.npz]   # on the GPU: fresh inputs, GPU outputs
    python3 -m tools.emulate_corpus check FILE [--only NAME ...] [--show N]   # emulator (hopper) vs the GPU's bits
    python3 -m tools.emulate_corpus merge OUT FILE ...          # one corpus of several runs' entries (later wins)

One compressed .npz holds the corpus: `meta` (JSON: GPU, seed, tool versions, entry names), `ptx/MODULE` (PTX text as
uint8), `ENTRY/meta` (JSON: module, kernel, grid, block, dynamic shared bytes, parameters, outputs, seed),
`ENTRY/in/BUFFER` (inputs) and `ENTRY/gpu/BUFFER` (the GPU's outputs). Every entry is checked bit for bit; a `needs`
key in an entry's stored meta is a note from when the data was made (the emulator then lacked that model), not read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from fnmatch import fnmatch
from pathlib import Path

import numpy as np

from tcforge.ptx.emulate import Surface, TensorMap, Texture, parsed_module
from tcforge.ptx.emulate.api import object_arg
from tools.corpus.entries import ENTRIES, Entry
from tools.corpus.modules import MODULES, Nvcc, Triton

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tools" / "emulate_corpus_samples.cu"
CORPUS = ROOT / "tests" / "data" / "emulate" / "corpus.npz"
BUILD = ROOT / "build" / "emulate_corpus_ptx.npz"

# ---- building: each module's PTX (the modules are tools/corpus/modules.py, the entries tools/corpus/entries.py) ------

def _triton_kernels() -> dict:
    """The Triton kernels (defined here so that importing this module needs no Triton)."""
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak: tl.constexpr, sbk, sbn: tl.constexpr, scm,
               scn: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
               ACC: tl.constexpr):
        # grouped tile order: GROUP rows of tiles share their B columns
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        per_group = GROUP * tiles_n
        first_m = (pid // per_group) * GROUP
        rows = min(tiles_m - first_m, GROUP)
        pid_m = first_m + (pid % per_group) % rows
        pid_n = (pid % per_group) // rows
        rm = (pid_m * BM + tl.arange(0, BM)) % M
        rn = (pid_n * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=ACC)
        for k in range(0, tl.cdiv(K, BK)):
            x = tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0)
            y = tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(x, y, acc, out_dtype=ACC)
            a += BK * sak
            b += BK * sbk
        cm = pid_m * BM + tl.arange(0, BM)
        cn = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.float16),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    @triton.jit
    def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, L, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                 ACC: tl.constexpr, CAUSAL: tl.constexpr, EXACT: tl.constexpr):
        # online softmax over key blocks (flash-attention forward), one (query block, head) per program
        pid = tl.program_id(0)
        base = tl.program_id(1) * L * D
        rm = pid * BM + tl.arange(0, BM)
        rd = tl.arange(0, D)
        q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :])
        m_i = tl.full((BM,), -float("inf"), tl.float32)
        l_i = tl.zeros((BM,), tl.float32)
        acc = tl.zeros((BM, D), ACC)
        hi = (pid + 1) * BM if CAUSAL else L
        for start in range(0, hi, BN):
            rn = start + tl.arange(0, BN)
            kt = tl.load(k_ptr + base + rn[None, :] * D + rd[:, None])
            s = tl.dot(q, kt, out_dtype=ACC).to(tl.float32) * scale
            if CAUSAL:
                s = tl.where(rm[:, None] >= rn[None, :], s, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :])
            acc = (acc.to(tl.float32) * alpha[:, None]).to(ACC)
            acc = tl.dot(p.to(tl.float16), v, acc, out_dtype=ACC)
            m_i = m_new
        if EXACT:  # noqa: SIM108 (a constexpr branch of the Triton kernel)
            o = tl.math.div_rn(acc.to(tl.float32), l_i[:, None])
        else:
            o = acc / l_i[:, None]
        tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], o.to(tl.float16))

    @triton.jit
    def softmax(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr, EXACT: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        if EXACT:  # noqa: SIM108 (a constexpr branch of the Triton kernel)
            e = tl.math.exp2(x * 1.4426950408889634)
            y = tl.math.div_rn(e, tl.sum(e, axis=0))
        else:
            e = tl.exp(x)
            y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * stride + cols, y, mask=cols < n)

    @triton.jit
    def layernorm(x_ptr, y_ptr, w_ptr, b_ptr, stats_ptr, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n
        x = tl.load(x_ptr + row * n + cols, mask=m, other=0.0).to(tl.float32)
        mean = tl.math.div_rn(tl.sum(x, axis=0), n.to(tl.float32))
        d = tl.where(m, x - mean, 0.0)
        var = tl.math.div_rn(tl.sum(d * d, axis=0), n.to(tl.float32))
        rstd = tl.math.rsqrt(var + eps)
        y = d * rstd * tl.load(w_ptr + cols, mask=m, other=0.0) + tl.load(b_ptr + cols, mask=m, other=0.0)
        tl.store(y_ptr + row * n + cols, y.to(tl.float16), mask=m)
        tl.store(stats_ptr + 2 * row, mean)
        tl.store(stats_ptr + 2 * row + 1, rstd)

    @triton.jit
    def _xor(a, b):
        return a ^ b

    @triton.jit
    def reduce_rows(x_ptr, xi_ptr, out_ptr, outi_ptr, cum_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n
        x = tl.load(x_ptr + row * n + cols, mask=m, other=0.0)
        xi = tl.load(xi_ptr + row * n + cols, mask=m, other=0)
        tl.store(out_ptr + 3 * row, tl.sum(x, axis=0))
        tl.store(out_ptr + 3 * row + 1, tl.max(tl.where(m, x, -float("inf")), axis=0))
        tl.store(out_ptr + 3 * row + 2, tl.min(tl.where(m, x, float("inf")), axis=0))
        tl.store(outi_ptr + 2 * row, tl.argmax(tl.where(m, x, -float("inf")), axis=0))
        tl.store(outi_ptr + 2 * row + 1, tl.reduce(xi, 0, _xor))
        tl.store(cum_ptr + row * n + cols, tl.cumsum(xi, axis=0), mask=m)

    @triton.jit
    def desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        # tensor descriptors made on the device (tensormap.replace into global scratch), TMA loads and store
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([k * BK, pid_n * BN]), acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))

    @triton.jit
    def ws_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        # C = A B^T on device-made descriptors, the K loop warp-specialized (a producer warpgroup loads, mbarriers)
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in tl.range(0, tl.cdiv(K, BK), warp_specialize=True, num_stages=3):
            acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([pid_n * BN, k * BK]).T, acc)
        om = pid_m * BM + tl.arange(0, BM)
        on = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + om[:, None] * N + on[None, :], acc, mask=(om[:, None] < M) & (on[None, :] < N))

    return {"matmul": matmul, "attn_fwd": attn_fwd, "softmax": softmax, "layernorm": layernorm,
            "reduce_rows": reduce_rows, "desc_matmul": desc_matmul, "ws_matmul": ws_matmul, **_gluon_kernels()}


def _gluon_kernels() -> dict:
    """The Gluon kernels (Triton's explicit-layout dialect): a convolution's im2col tiles through TMA im2col, and an
    implicit-GEMM convolution on them; none where this Triton has no Gluon (its modules then fail to build alone)."""
    try:
        from triton.experimental import gluon
        from triton.experimental.gluon import language as gl
        from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait
    except ImportError:
        return {}

    @gluon.jit
    def im2col_tiles(in_desc, out_ptr, P: gl.constexpr, Q: gl.constexpr, STRIDE: gl.constexpr, PAD: gl.constexpr,
                     S: gl.constexpr, BM: gl.constexpr, BC: gl.constexpr):
        # program (tile, tap): the tile's first output pixel's filter corner as the coordinates (n, h, w, c), the
        # filter tap (r, s) as the im2col offsets; the box through its NVMMA layout into registers, then stored
        pid_m = gl.program_id(0)
        tap = gl.program_id(1)
        m0 = pid_m * BM
        o = m0 % (P * Q)
        h0 = (o // Q) * STRIDE - PAD
        w0 = (o % Q) * STRIDE - PAD
        smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
        bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(bar, count=1)
        mbarrier.expect(bar, in_desc.block_type.nbytes)
        tma.async_load_im2col(in_desc, [m0 // (P * Q), h0, w0, 0], [(tap // S).to(gl.int16), (tap % S).to(gl.int16)],
                              bar, smem)
        mbarrier.wait(bar, 0)
        mbarrier.invalidate(bar)
        layout: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (BC // 8), BC // 8], [4, 1], [1, 0])
        vals = smem.load(layout)
        rows = gl.arange(0, BM, layout=gl.SliceLayout(1, layout))
        cols = gl.arange(0, BC, layout=gl.SliceLayout(0, layout))
        base = (tap * gl.num_programs(0) + pid_m) * BM * BC
        gl.store(out_ptr + base + rows[:, None] * BC + cols[None, :], vals)

    @gluon.jit
    def conv_fprop(x_desc, w_desc, out_ptr, M, COUT: gl.constexpr, C: gl.constexpr, P: gl.constexpr, Q: gl.constexpr,
                   STRIDE: gl.constexpr, PAD: gl.constexpr, R: gl.constexpr, S: gl.constexpr, BM: gl.constexpr,
                   BN: gl.constexpr, BC: gl.constexpr):
        # an implicit-GEMM convolution: per (filter tap, channel block) the im2col tile of A and the weights' rows
        # tap * C + c0.. of B (K x COUT) by TMA on one mbarrier, then wgmma into an f32 accumulator; rows past M
        # masked at the store
        pid_m = gl.program_id(0)
        pid_n = gl.program_id(1)
        m0 = pid_m * BM
        o = m0 % (P * Q)
        h0 = (o // Q) * STRIDE - PAD
        w0 = (o % Q) * STRIDE - PAD
        a_smem = gl.allocate_shared_memory(x_desc.dtype, x_desc.block_shape, x_desc.layout)
        b_smem = gl.allocate_shared_memory(w_desc.dtype, w_desc.block_shape, w_desc.layout)
        bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(bar, count=1)
        acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                             instr_shape=[16, BN, 16])
        acc = gl.zeros((BM, BN), gl.float32, acc_layout)
        phase = 0
        for tap in range(R * S):
            for c0 in range(0, C, BC):
                mbarrier.expect(bar, x_desc.block_type.nbytes + w_desc.block_type.nbytes)
                tma.async_load_im2col(x_desc, [m0 // (P * Q), h0, w0, c0],
                                      [(tap // S).to(gl.int16), (tap % S).to(gl.int16)], bar, a_smem)
                tma.async_load(w_desc, [tap * C + c0, pid_n * BN], bar, b_smem)
                mbarrier.wait(bar, phase)
                phase ^= 1
                acc = warpgroup_mma(a_smem, b_smem, acc)
                acc = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.invalidate(bar)
        rows = m0 + gl.arange(0, BM, layout=gl.SliceLayout(1, acc_layout))
        cols = pid_n * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, acc_layout))
        gl.store(out_ptr + rows[:, None] * COUT + cols[None, :], acc, mask=rows[:, None] < M)

    return {"im2col_tiles": im2col_tiles, "conv_fprop": conv_fprop}


def _build_triton(spec: Triton, kernels: dict) -> dict:
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    fn = kernels.get(spec.fn)
    if fn is None:
        raise RuntimeError(f"this Triton ({triton.__version__}) has no kernel {spec.fn!r} (Gluon's need Triton 3.8)")
    cx = {k: (getattr(tl, {"fp16": "float16", "fp32": "float32"}[v]) if k == "ACC" else v)
          for k, v in spec.constexprs.items()}
    sig = {**spec.types, **{k: "constexpr" for k in cx}}
    sig = {n: _im2col_type(sig[n]) for n in fn.arg_names}
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in spec.div16}
    if "gluon" in type(fn).__module__:
        from triton.experimental.gluon._runtime import GluonASTSource

        src = GluonASTSource(fn=fn, signature=sig, constexprs=cx, attrs=attrs)
    else:
        src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=cx, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", spec.arch, 32),
                       options={"num_warps": spec.warps, "num_stages": spec.stages})
    warps = int(getattr(k.metadata, "num_warps", spec.warps))  # warp specialization adds the producer's warps
    return {"ptx": k.asm["ptx"], "kernel": k.metadata.name, "shared": int(k.metadata.shared), "warps": warps,
            "tool": f"triton {triton.__version__}", "target": f"sm_{spec.arch}"}


def _im2col_type(t: str) -> str:
    """A signature type; `im2col:fp16[32,32]` / `desc:fp16[32,64]` become Gluon's host tensor descriptors (im2col:
    the block is pixels, channels; desc: tiled) in the default NVMMA shared layout of the block."""
    kind, _, rest = t.partition(":")
    if kind not in ("im2col", "desc"):
        return t
    from triton.experimental.gluon import language as gl

    dtype, block = rest.rstrip("]").split("[")
    shape = [int(b) for b in block.split(",")]
    layout = gl.NVMMASharedLayout.get_default_for(shape, {"fp16": gl.float16, "fp32": gl.float32}[dtype])
    return f"tensordesc{'_im2col' if kind == 'im2col' else ''}<{dtype}[{block}],{layout!r}>"


def _build_nvcc(spec: Nvcc) -> dict:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc not found on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        out, src = Path(tmp) / "samples.ptx", SAMPLES
        flags = ["-I", str(Path(__file__).resolve().parents[1] / "src" / "tcforge" / "include")]  # tcforge/*.cuh
        if spec.rung is not None:  # a teaching-ladder rung as the package compiles it (common.cuh pasted in)
            from tcforge.gemm.ladder import rung

            src = Path(tmp) / "rung.cu"
            src.write_text(rung(spec.rung).source())
            flags.append("-DOUT_BF16=0")
        subprocess.run([nvcc, "-ptx", "-O3", f"-arch=sm_{spec.arch}", *flags, str(src), "-o", str(out)], check=True,
                       timeout=300, capture_output=True)
        ptx = out.read_text()
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-2:]
    return {"ptx": ptx, "kernel": None, "shared": 0, "warps": None, "tool": " ".join(version),
            "target": f"sm_{spec.arch}"}


def build(out: Path) -> dict:
    """Make every module's PTX (Triton + nvcc, no GPU needed) into one .npz; returns {module: record}."""
    kernels = None
    built: dict = {}
    for name, spec in _progress(MODULES.items(), "build"):
        try:
            if isinstance(spec, Triton):
                kernels = kernels or _triton_kernels()
                built[name] = _build_triton(spec, kernels)
            else:
                built[name] = _build_nvcc(spec)
        except Exception as exc:  # one module's failure must not lose the others
            print(f"{name}: build failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    _ptxas_check(built)
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for name, rec in built.items():
        arrays[f"ptx/{name}"] = np.frombuffer(rec["ptx"].encode(), np.uint8)
        arrays[f"module/{name}"] = np.array(json.dumps({k: v for k, v in rec.items() if k != "ptx"}))
    np.savez_compressed(out, **arrays)
    print(f"{out}: {len(built)} of {len(MODULES)} modules")
    return built


def _ptxas_check(built: dict) -> None:
    """Assemble each PTX with ptxas where it is installed (for sm_90, or the module's sm_90a), as the driver's JIT
    will on Hopper."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name, rec in built.items():
            src = Path(tmp) / f"{name}.ptx"
            src.write_text(rec["ptx"])
            target = re.search(r"^\.target\s+(sm_\w+)", rec["ptx"], re.M)
            arch = target.group(1) if target and target.group(1).endswith("a") else "sm_90"
            r = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", os.devnull], capture_output=True, text=True)
            if r.returncode:
                print(f"{name}: ptxas -arch={arch} failed: {r.stderr.strip()[:500]}", file=sys.stderr)


def load_modules(path: Path) -> dict:
    """{module: record with 'ptx'} from a build or corpus .npz."""
    with np.load(path) as z:
        out = {}
        for key in z.files:
            if key.startswith("ptx/"):
                name = key[4:]
                rec = json.loads(str(z[f"module/{name}"])) if f"module/{name}" in z.files else {}
                out[name] = {**rec, "ptx": z[key].tobytes().decode()}
        return out


def _progress(items, desc: str):
    """A tqdm progress bar over `items` (the items themselves where tqdm is not installed)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=desc, unit="kernel" if desc != "build" else "module", disable=None)


def _write(line: str) -> None:
    """Print a line without breaking a progress bar."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(line)
    else:
        tqdm.write(line)


# ---- running ------------------------------------------------------------------------------------------------------

def launch_of(entry: Entry, module: dict) -> tuple[str, tuple, tuple, int]:
    """(kernel name, grid, block, dynamic shared bytes) of an entry given its built module."""
    kernel = entry.kernel or module["kernel"]
    block = entry.block or (32 * int(module["warps"]), 1, 1)
    shared = entry.shared if entry.shared is not None else int(module["shared"])
    return kernel, tuple(entry.grid), tuple(block), int(shared)


def make_args(ptx: str, kernel: str, values: list) -> tuple[dict, dict, dict]:
    """(emulator args, buffers, parameter record) from one value per parameter (a number, a buffer name, a
    TensorMap, Texture, Surface or (buffer name, array)), then any (buffer name, array) no parameter points at;
    parameters past the values get a scratch buffer."""
    # parameters past the given values are Triton's scratch pointers: a zeroed 256-byte buffer
    params = parsed_module(ptx).function(kernel).params
    extra = values[len(params):]  # buffers no parameter points at (a tensor map's)
    if not all(isinstance(v, tuple) for v in extra):
        raise ValueError(f"{kernel}: {len(values)} values for {len(params)} parameters")
    args: dict = {}
    buffers: dict = {name: np.ascontiguousarray(arr) for name, arr in extra}
    args.update(buffers)
    record: dict = {}
    for i, p in enumerate(params):
        v = values[i] if i < len(values) else ("scratch", np.zeros(256, np.uint8))
        if isinstance(v, (TensorMap, Texture, Surface)):
            args[p.name] = v
            record[p.name] = {"tensormap" if isinstance(v, TensorMap) else "image": v.text()}
        elif isinstance(v, tuple):
            name, arr = v
            buffers[name] = np.ascontiguousarray(arr)
            args[name] = buffers[name]
            args[p.name] = name
            record[p.name] = {"buffer": name}
        elif isinstance(v, np.ndarray):  # a by-value struct's bytes (a __grid_constant__ int4, say)
            args[p.name] = v
            record[p.name] = {"bytes": np.ascontiguousarray(v).tobytes().hex()}
        else:
            args[p.name] = v
            record[p.name] = v.item() if isinstance(v, np.generic) else v
    return args, buffers, record


def args_from_record(record: dict, buffers: dict) -> dict:
    """The emulator's args from a stored parameter record and buffers."""
    args = dict(buffers)
    for p, v in record.items():
        if isinstance(v, dict) and "bytes" in v:
            args[p] = np.frombuffer(bytes.fromhex(v["bytes"]), np.uint8)
            continue
        args[p] = (v.get("buffer") or object_arg(v.get("tensormap") or v["image"])) if isinstance(v, dict) else v
    return args


def differing_bits(a: np.ndarray, b: np.ndarray) -> int:
    """Number of differing bits between two arrays' bytes (shape and dtype must agree)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(f"shape/dtype mismatch: {a.shape} {a.dtype} vs {b.shape} {b.dtype}")
    x = np.bitwise_xor(np.ascontiguousarray(a).view(np.uint8).reshape(-1),
                       np.ascontiguousarray(b).view(np.uint8).reshape(-1))
    return int(np.unpackbits(x).sum())


def emulate_entry(ptx: str, kernel: str, grid, block, shared: int, args: dict, outputs, buffers: dict):
    """Run in the emulator (hopper); returns ({output: array}, stats)."""
    from tcforge.ptx.emulate import emulate

    stats: dict = {}
    res = emulate(ptx, kernel, grid, block, args, "hopper", file=kernel, dynamic_shared=shared, stats=stats)
    return {o: res.get(o, buffers[o]) for o in outputs}, stats


def _modules_or_build(ptx: Path | None) -> dict:
    if ptx is not None:
        return load_modules(ptx)
    if BUILD.exists():
        return load_modules(BUILD)
    return build(BUILD)


def _matches(name: str, patterns) -> bool:
    """Whether an entry name matches any of the names or fnmatch patterns."""
    return any(fnmatch(name, n) for n in patterns or ())


def _select(only, skip=()) -> list[Entry]:
    """The entries named by `only` (names or fnmatch patterns; all when empty) less those `skip` matches."""
    bad = [n for n in only or () if not any(_matches(e.name, [n]) for e in ENTRIES)]
    if bad:
        raise SystemExit(f"no entries match: {', '.join(bad)}; known: {', '.join(sorted(e.name for e in ENTRIES))}")
    return [e for e in ENTRIES if (not only or _matches(e.name, only)) and not _matches(e.name, skip)]


def smoke(ptx: Path | None, only, seed: int | None) -> int:
    """Every entry in the emulator with fresh inputs; no GPU outputs involved."""
    modules = _modules_or_build(ptx)
    seed = _seed() if seed is None else seed
    rows, failed = [], 0
    for i, entry in enumerate(_progress(_select(only), "smoke")):
        try:
            mod = modules[entry.module]
            kernel, grid, block, shared = launch_of(entry, mod)
            args, buffers, _ = make_args(mod["ptx"], kernel, entry.inputs(np.random.default_rng([seed, i])))
            _, stats = emulate_entry(mod["ptx"], kernel, grid, block, shared, args, entry.outputs, buffers)
            rows.append((entry, stats["warp_instructions"], stats["seconds"], ""))
        except Exception as exc:
            failed += 1
            rows.append((entry, 0, 0.0, f"{type(exc).__name__}: {exc}"))
    print(f"seed {seed}")
    for entry, n, s, err in rows:
        print(f"{entry.name:40s} {entry.source:6s} {n:>10,d} instr {s:7.2f} s{'  ERROR ' + err if err else ''}")
    return 1 if failed else 0


def _seed() -> int:
    return int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)


def generate(out: Path, ptx: Path | None, only, seed: int | None, skip=()) -> int:
    """On the GPU: fresh inputs per entry, the GPU's outputs, all packed into one compressed .npz."""
    from tools import emulate_gpu

    gpu_name = emulate_gpu.device_name()
    if "H100" not in gpu_name and "H200" not in gpu_name:
        print(f"warning: {gpu_name} is not a Hopper GPU; the emulator's numerics are Hopper's", file=sys.stderr)
    modules = _modules_or_build(ptx)
    seed = _seed() if seed is None else seed
    arrays: dict = {}
    names, failed, used = [], 0, set()
    for i, entry in enumerate(_progress(_select(only, skip), "gpu")):
        try:
            mod = modules[entry.module]
            kernel, grid, block, shared = launch_of(entry, mod)
            args, buffers, record = make_args(mod["ptx"], kernel, entry.inputs(np.random.default_rng([seed, i])))
            gpu = emulate_gpu.run(mod["ptx"], kernel, grid, block, args, dynamic_shared=shared)
            again = emulate_gpu.run(mod["ptx"], kernel, grid, block, args, dynamic_shared=shared)
            repeat = all(differing_bits(gpu[o], again[o]) == 0 for o in entry.outputs)
            if not repeat:
                print(f"{entry.name}: two GPU launches with the same inputs differ", file=sys.stderr)
            meta = {"module": entry.module, "kernel": kernel, "grid": grid, "block": block, "shared": shared,
                    "params": record, "outputs": list(entry.outputs), "seed": [seed, i], "source": entry.source,
                    "slow": entry.slow, "gpu_repeatable": repeat}
            arrays[f"{entry.name}/meta"] = np.array(json.dumps(meta))
            for k, v in buffers.items():
                arrays[f"{entry.name}/in/{k}"] = v
            for o in entry.outputs:
                arrays[f"{entry.name}/gpu/{o}"] = gpu[o]
            names.append(entry.name)
            used.add(entry.module)
        except Exception as exc:
            failed += 1
            print(f"{entry.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    for name in sorted(used):
        arrays[f"ptx/{name}"] = np.frombuffer(modules[name]["ptx"].encode(), np.uint8)
        arrays[f"module/{name}"] = np.array(json.dumps({k: v for k, v in modules[name].items() if k != "ptx"}))
    arrays["meta"] = np.array(json.dumps({"gpu": gpu_name, "seed": seed, "entries": names,
                                          "made_by": "python3 -m tools.emulate_corpus generate"}))
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(f"{out}: {len(names)} entries, {failed} failed, {out.stat().st_size / 1e6:.2f} MB, seed {seed}")
    return 1 if failed else 0


def corpus_entries(path: Path) -> tuple[dict, list[dict]]:
    """(corpus meta, one dict per entry: name, meta, ptx, buffers, gpu outputs) from a corpus .npz."""
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        arrays: dict[tuple[str, str], dict[str, np.ndarray]] = {}  # (entry, "in" / "gpu") -> its buffers
        for key in z.files:
            parts = key.split("/", 2)
            if len(parts) == 3 and parts[1] in ("in", "gpu"):
                arrays.setdefault((parts[0], parts[1]), {})[parts[2]] = z[key]
        modules: dict[str, str] = {}
        out = []
        for name in meta["entries"]:
            em = json.loads(str(z[f"{name}/meta"]))
            if em["module"] not in modules:
                modules[em["module"]] = z[f"ptx/{em['module']}"].tobytes().decode()
            out.append({"name": name, "meta": em, "ptx": modules[em["module"]],
                        "buffers": arrays.get((name, "in"), {}), "gpu": arrays.get((name, "gpu"), {})})
        return meta, out


def check_entry(item: dict, show: int = 0) -> tuple[int, dict]:
    """(differing output bits, emulator stats) of one corpus entry under numerics 'hopper'; `show` > 0 prints that
    many differing output rows per buffer (index, the GPU's words, the emulator's words)."""
    m = item["meta"]
    args = args_from_record(m["params"], {k: v.copy() for k, v in item["buffers"].items()})
    res, stats = emulate_entry(item["ptx"], m["kernel"], m["grid"], m["block"], m["shared"], args, m["outputs"],
                               item["buffers"])
    if show:
        for o in m["outputs"]:
            _show(o, np.asarray(item["gpu"][o]), np.asarray(res[o]), show)
    return sum(differing_bits(res[o], item["gpu"][o]) for o in m["outputs"]), stats


def _show(name: str, gpu: np.ndarray, emu: np.ndarray, count: int) -> None:
    """The first `count` rows (last axis) of an output where the GPU and the emulator differ, as hex words."""
    def words(a: np.ndarray) -> np.ndarray:
        a = np.ascontiguousarray(a)
        return a.reshape(-1, a.shape[-1] if a.ndim > 1 else 1).view(f"u{a.dtype.itemsize}")

    g, e = words(gpu), words(emu)
    rows = np.flatnonzero((g != e).any(axis=1))
    _write(f"  {name}: {len(rows)} of {len(g)} rows differ")
    for r in rows[:count]:
        hexes = [" ".join(f"{int(x):x}" for x in v[r]) for v in (g, e)]
        _write(f"    row {r}: gpu {hexes[0]}  emulator {hexes[1]}")


def check(path: Path, only, show: int = 0) -> int:
    """Every corpus entry in the emulator (hopper) against the GPU's outputs; prints bits, instructions, seconds
    (and, with `show`, differing rows)."""
    meta, items = corpus_entries(path)
    if only:
        items = [it for it in items if _matches(it["name"], only)]
    print(f"{path}: {len(items)} entries, GPU {meta['gpu']}, seed {meta['seed']}")
    bad = 0
    for it in _progress(items, "check"):
        t0 = time.perf_counter()
        try:
            bits, stats = check_entry(it, show)
            line = f"{bits:>8d} bits {stats['warp_instructions']:>11,d} instr {stats['seconds']:7.2f} s"
            bad += bits != 0
        except Exception as exc:
            line = f"   error {'':>18s} {time.perf_counter() - t0:7.2f} s  {type(exc).__name__}: {exc}"
            bad += 1
        _write(f"{it['name']:40s} {it['meta']['source']:6s} {line}")
    return 1 if bad else 0


def merge(out: Path, files: list[Path], skip: tuple[str, ...] = ()) -> int:
    """One corpus .npz of the entries of several (a later file's entry replaces an earlier one of its name), less
    those named by `skip` (names or fnmatch patterns); the meta names each run's GPU, seed and entries."""
    arrays: dict = {}
    names: list[str] = []
    runs = []
    for f in files:
        with np.load(f) as z:
            meta = json.loads(str(z["meta"]))
            taken = [n for n in meta["entries"] if not any(fnmatch(n, p) for p in skip)]
            for key in z.files:
                if key.split("/")[0] in ("ptx", "module", *taken):
                    arrays[key] = z[key]
        names = [n for n in names if n not in taken] + taken
        runs.append({"file": f.name, "gpu": meta["gpu"], "seed": meta["seed"], "entries": len(taken)})
    used = {json.loads(str(arrays[f"{n}/meta"]))["module"] for n in names}  # the modules the kept entries run
    arrays = {k: v for k, v in arrays.items() if k.split("/")[0] not in ("ptx", "module") or k.split("/", 1)[1] in used}
    gpus = sorted({g for r in runs for g in r["gpu"].split(" + ")})
    arrays["meta"] = np.array(json.dumps({"gpu": " + ".join(gpus), "seed": runs[0]["seed"], "entries": names,
                                          "runs": runs, "made_by": "python3 -m tools.emulate_corpus merge"}))
    np.savez_compressed(out, **arrays)
    print(f"{out}: {len(names)} entries from {len(files)} files ({', '.join(gpus)})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: build, smoke, generate, check."""
    ap = argparse.ArgumentParser(prog="python3 -m tools.emulate_corpus", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="make every module's PTX (Triton + nvcc; no GPU)")
    b.add_argument("--out", type=Path, default=BUILD)
    s = sub.add_parser("smoke", help="every entry in the emulator with fresh inputs")
    g = sub.add_parser("generate", help="on the GPU: fresh inputs, the GPU's outputs, one .npz")
    g.add_argument("--out", type=Path, required=True)
    for p in (s, g):
        p.add_argument("--ptx", type=Path, help=f"modules from this build .npz (default {BUILD}, built if absent)")
        p.add_argument("--seed", type=int)
        p.add_argument("--only", nargs="*", help="entry names or fnmatch patterns")
    g.add_argument("--skip", nargs="*", help="leave out the entries these names or patterns match")
    c = sub.add_parser("check", help="the emulator (hopper) against the GPU's outputs")
    c.add_argument("file", type=Path, nargs="?", default=CORPUS)
    c.add_argument("--only", nargs="*", help="entry names or fnmatch patterns")
    c.add_argument("--show", type=int, default=0, help="print this many differing output rows per buffer")
    m = sub.add_parser("merge", help="one corpus of several runs' entries (a later file's entry wins)")
    m.add_argument("out", type=Path)
    m.add_argument("files", type=Path, nargs="+")
    m.add_argument("--skip", nargs="*", default=[], help="entry names or fnmatch patterns to leave out")
    a = ap.parse_args(argv)
    if a.cmd == "merge":
        return merge(a.out, a.files, tuple(a.skip))
    if a.cmd == "build":
        built = build(a.out)
        return 0 if len(built) == len(MODULES) else 1
    if a.cmd == "smoke":
        return smoke(a.ptx, a.only, a.seed)
    if a.cmd == "generate":
        return generate(a.out, a.ptx, a.only, a.seed, a.skip)
    return check(a.file, a.only, a.show)


if __name__ == "__main__":
    sys.exit(main())
