"""Run-time compilation of CUDA C++ to a cubin with nvcc, cached on disk by a hash of source, options, the nvcc version
and the shipped header library (`tcforge/include`, on the include path as `#include "tcforge/....cuh"`).

The ptxas resource report (`-Xptxas -v`) is kept beside each cubin so callers (and CI) can refuse spills.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tcforge.errors import DeviceUnavailableError, TcforgeError
from tcforge.runtime.tools import disassemble, find_tool

_ARCH_RE = re.compile(r"^sm_(\d+)(a?)$")
INCLUDE_DIR = Path(__file__).resolve().parents[1] / "include"   # the header library: tcforge/*.cuh


class CompileError(TcforgeError):
    """nvcc rejected a source; the message carries its diagnostics."""


@dataclass(frozen=True)
class PtxasStats:
    """ptxas's resource report for one function: registers, stack frame and spill bytes, shared memory."""

    function: str
    registers: int = 0
    barriers: int = 0
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0

    @property
    def spills(self) -> bool:
        """True when the function spills or keeps a stack frame (local memory traffic)."""
        return bool(self.stack_frame or self.spill_stores or self.spill_loads)


@dataclass(frozen=True)
class CompiledModule:
    """A compiled cubin on disk with the ptxas report of each of its functions."""

    cubin_path: Path
    key: str
    arch: str
    log: str
    stats: dict[str, PtxasStats] = field(default_factory=dict)

    def cubin(self) -> bytes:
        """The cubin image, as `cuModuleLoadData` takes it."""
        return self.cubin_path.read_bytes()

    def sass(self) -> str:
        """cuobjdump's SASS of the cubin, kept beside it on first use where the cache is writable (see
        `tools.disassemble` for the errors)."""
        path = self.cubin_path.with_suffix(".sass")
        if path.exists():
            return path.read_text()
        text = disassemble(self.cubin_path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text)
            os.replace(tmp, path)
        except OSError:  # a read-only cache (one carried to another machine): the listing is not kept
            tmp.unlink(missing_ok=True)
        return text

    @property
    def wgmma_serialized(self) -> bool:
        """ptxas serialised the wgmma pipeline (every wgmma waits for the one before: remark C7515, or C7511 when it
        lacks registers for the pipeline, or any other reason it gives) — a 5-10 % GEMM slowdown that no spill count
        shows."""
        return "C7515" in self.log or "C7511" in self.log or "wgmma.mma_async instructions are serialized" in self.log


def cache_dir() -> Path:
    """Where cubins live: $TCFORGE_CACHE_DIR, else ~/.cache/tcforge/kernels."""
    env = os.environ.get("TCFORGE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "tcforge" / "kernels"


def _nvcc() -> str:
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise DeviceUnavailableError("nvcc was not found: install the CUDA toolkit or set TCFORGE_NVCC to its path")
    return nvcc


@lru_cache(maxsize=1)
def nvcc_version() -> str:
    """nvcc's `--version` text (part of every cache key, so a toolkit change recompiles)."""
    out = subprocess.run([_nvcc(), "--version"], capture_output=True, text=True, check=True).stdout
    return out.strip()


def gencode_for(arch: str) -> list[str]:
    """nvcc flags for one real architecture, e.g. 'sm_90a' -> -gencode=arch=compute_90a,code=sm_90a."""
    m = _ARCH_RE.match(arch)
    if not m:
        raise TcforgeError(f"arch must look like 'sm_90a' or 'sm_100a', got {arch!r}")
    num, suffix = m.groups()
    return [f"-gencode=arch=compute_{num}{suffix},code=sm_{num}{suffix}"]


_FUNC_RE = re.compile(r"Compiling entry function '([^']+)'|Function properties for (\S+)")
_REG_RE = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")
_STACK_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM_RE = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str) -> dict[str, PtxasStats]:
    """Read `ptxas -v` output into per-function stats (registers, stack frame, spills, static shared memory)."""
    stats: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in log.splitlines():
        fm = _FUNC_RE.search(line)
        if fm:
            current = fm.group(1) or fm.group(2)
            stats.setdefault(current, {})
        if current is None:
            continue
        sm = _STACK_RE.search(line)
        if sm:
            stats[current]["stack_frame"] = int(sm.group(1))
            stats[current]["spill_stores"] = int(sm.group(2))
            stats[current]["spill_loads"] = int(sm.group(3))
        rm = _REG_RE.search(line)
        if rm:
            stats[current]["registers"] = int(rm.group(1))
            stats[current]["barriers"] = int(rm.group(2) or 0)
            mm = _SMEM_RE.search(line)
            if mm:
                stats[current]["shared_bytes"] = int(mm.group(1))
    return {name: PtxasStats(function=name, **vals) for name, vals in stats.items()}


@lru_cache(maxsize=1)
def include_digest() -> str:
    """sha256 over the header library's files (names and contents): a header edit rebuilds every kernel."""
    h = hashlib.sha256()
    for path in sorted(INCLUDE_DIR.rglob("*.cuh")):
        h.update(path.relative_to(INCLUDE_DIR).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def cache_key(source: str, options: Sequence[str], arch: str) -> str:
    """sha256 over source, options, arch, the nvcc version and the header library."""
    h = hashlib.sha256()
    for part in (source, "\0".join(options), arch, nvcc_version(), include_digest()):
        h.update(part.encode())
        h.update(b"\x1f")
    return h.hexdigest()[:32]


_NVCC_OPTIONS = ("-O3", "-std=c++17", "--use_fast_math")  # every build's, before the caller's options


def _build_slot(source: str, options: Sequence[str], arch: str, name: str,
                cache: Path | None) -> tuple[list[str], str, Path]:
    """(nvcc options, cache key, cache path without its suffix) of a build of `source`."""
    opts = [*_NVCC_OPTIONS, *options]
    key = cache_key(source, opts, arch)
    root = cache if cache is not None else cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    return opts, key, root / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:80]}-{key}"


def _publish(made: Path, dest: Path) -> None:
    """Copy a build product into the cache atomically, so that a concurrent build of the same key never reads a
    half-written file."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.copyfile(made, tmp)
    os.replace(tmp, dest)


def compile_ptx(source: str, *, arch: str = "sm_90a", options: Sequence[str] = (), name: str = "kernel",
                cache: Path | None = None) -> str:
    """The PTX nvcc makes of `source` with the options `compile_cuda` uses (for the emulator; disk-cached)."""
    opts, _, slot = _build_slot(source, options, arch, name, cache)
    out = slot.with_name(slot.name + ".ptx")
    if not out.exists():
        with tempfile.TemporaryDirectory(prefix="tcforge-nvcc-") as tmp:
            src = Path(tmp) / "kernel.cu"
            src.write_text(source)
            proc = subprocess.run([_nvcc(), "-ptx", f"-arch={arch}", *opts, "-I", str(INCLUDE_DIR), "-o",
                                   str(Path(tmp) / "k.ptx"), str(src)], capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompileError(f"nvcc -ptx failed for {name} ({arch}):\n{proc.stderr[-4000:]}")
            _publish(Path(tmp) / "k.ptx", out)
    return out.read_text()


def compile_cuda(
    source: str,
    *,
    arch: str = "sm_90a",
    options: Sequence[str] = (),
    name: str = "kernel",
    cache: Path | None = None,
) -> CompiledModule:
    """Compile `source` to a cubin for `arch` (reusing the disk cache); raises CompileError with nvcc's diagnostics."""
    opts, key, slot = _build_slot(source, options, arch, name, cache)
    cubin, logf = slot.with_name(slot.name + ".cubin"), slot.with_name(slot.name + ".log")
    if cubin.exists() and logf.exists():
        log = logf.read_text()
        return CompiledModule(cubin, key, arch, log, parse_ptxas_log(log))
    with tempfile.TemporaryDirectory(prefix="tcforge-nvcc-") as tmp:
        src = Path(tmp) / f"{slot.name}.cu"
        src.write_text(source)
        out, made_log = Path(tmp) / f"{slot.name}.cubin", Path(tmp) / f"{slot.name}.log"
        cmd = [_nvcc(), "-cubin", *gencode_for(arch), *opts, "-I", str(INCLUDE_DIR), "-Xptxas", "-v", "-o", str(out),
               str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"nvcc failed for {name} ({arch}):\n{proc.stderr[-4000:]}")
        log = proc.stdout + proc.stderr
        made_log.write_text(log)
        _publish(out, cubin)
        _publish(made_log, logf)
    return CompiledModule(cubin, key, arch, log, parse_ptxas_log(log))
