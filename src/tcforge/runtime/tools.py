"""Locate CUDA command-line tools (nvcc, ptxas, cuobjdump, nvdisasm) wherever a toolkit or NVIDIA's wheels put them."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

from tcforge.errors import DeviceUnavailableError, TcforgeError


def _wheel_bundled(tool: str) -> Path | None:
    """A tool shipped in NVIDIA's PyPI wheels (e.g. `nvidia-cuda-cuobjdump` puts it in nvidia/cu13/bin)."""
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(Path(root).glob(f"cu*/bin/{tool}"), reverse=True):
            if path.is_file():
                return path
    return None


def _triton_bundled(tool: str) -> Path | None:
    """The copy Triton's wheel carries in backends/nvidia/bin."""
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / tool
    return path if path.is_file() else None


def find_tool(tool: str) -> str | None:
    """Search $TCFORGE_<TOOL>, PATH, $CUDA_HOME/bin, beside nvcc, /usr/local/cuda/bin, NVIDIA's wheels, Triton's."""
    env = os.environ.get(f"TCFORGE_{tool.upper()}")
    if env:
        return env
    found = shutil.which(tool)
    if found:
        return found
    dirs = [Path(os.environ[v]) / "bin" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    nvcc = shutil.which("nvcc")
    if nvcc:
        dirs.append(Path(nvcc).resolve().parent)
    dirs.append(Path("/usr/local/cuda/bin"))
    for d in dirs:
        if (d / tool).is_file():
            return str(d / tool)
    bundled = _wheel_bundled(tool) or _triton_bundled(tool)
    return str(bundled) if bundled else None


def sass_env() -> dict[str, str]:
    """The environment for `cuobjdump -sass`: it runs nvdisasm, which wheels install beside it rather than on PATH."""
    env = dict(os.environ)
    disasm = find_tool("nvdisasm")
    if disasm and "NVDISASM_PATH" not in env:
        env["NVDISASM_PATH"] = str(Path(disasm).parent)
    return env


def disassemble(cubin: Path | str, tool: str | None = None) -> str:
    """`cuobjdump -sass` of a cubin, by `tool` or the cuobjdump `find_tool` finds (DeviceUnavailableError where there
    is none, TcforgeError where it fails)."""
    tool = tool or find_tool("cuobjdump")
    if tool is None:
        raise DeviceUnavailableError("cuobjdump was not found: install the CUDA toolkit or nvidia-cuda-cuobjdump")
    proc = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, env=sass_env())
    if proc.returncode != 0:
        raise TcforgeError(f"cuobjdump -sass {cubin} failed: {proc.stderr.strip()[:300]}")
    return proc.stdout
