"""Compile the sm100 kernel with the local nvcc/ptxas and report its resources (registers, spills, stack) and its SASS.

Nothing here needs a GPU: this is how CI verifies the Blackwell kernel, which has never run on hardware.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tcforge.errors import DeviceUnavailableError, TcforgeError, UnsupportedError
from tcforge.runtime.compile import INCLUDE_DIR, CompileError, PtxasStats, nvcc_version, parse_ptxas_log
from tcforge.runtime.tools import disassemble, find_tool

from . import descriptors, launch

SOURCE_PATH = Path(__file__).resolve().parent / "gemm_sm100.cu"
SUPPORTED_ARCHS = ("sm_100a", "sm_103a")  # tcgen05 + TMEM, arch-specific targets


@dataclass(frozen=True)
class CompileReport:
    """The result of compiling gemm_sm100.cu for one arch and stage count."""

    arch: str
    stages: int
    nvcc: str
    nvcc_version: str
    command: tuple[str, ...]
    kernels: dict[str, PtxasStats]
    dynamic_smem_bytes: int
    ptxas_log: str
    ptx: str
    cubin: bytes
    sass: str | None = None
    sass_tool: str | None = None
    notes: tuple[str, ...] = field(default=())

    def sass_opcode_counts(self) -> Counter[str]:
        """Opcode (with modifiers, e.g. UTCHMMA.2CTA) -> number of occurrences in the SASS of all kernels."""
        if self.sass is None:
            return Counter()
        pattern = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)", re.M)
        return Counter(pattern.findall(self.sass))

    def summary(self) -> str:
        """A few human-readable lines: per-kernel resources and the tcgen05/TMA SASS opcodes found."""
        lines = [f"gemm_sm100.cu for {self.arch}, {self.stages} stages, nvcc {self.nvcc_version}, "
                 f"dynamic smem {self.dynamic_smem_bytes} B"]
        for k in self.kernels.values():
            lines.append(f"  {k.function}: {k.registers} registers, {k.stack_frame} B stack, "
                         f"{k.spill_stores}/{k.spill_loads} B spill stores/loads, {k.barriers} barriers")
        counts = self.sass_opcode_counts()
        wanted = sorted(op for op in counts if op.startswith(("UTC", "UTMA", "LDTM")))
        if wanted:
            lines.append("  SASS: " + ", ".join(f"{op} x{counts[op]}" for op in wanted))
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def _release(version_text: str) -> str:
    """The release number in nvcc's --version text, e.g. '13.0'."""
    match = re.search(r"release (\d+\.\d+)", version_text)
    return match.group(1) if match else "unknown"


def cross_check_defines(stages: int) -> list[str]:
    """-D flags that make the CUDA source static_assert that its descriptors, smem size, block size and bytes per
    stage equal the Python side's (two independent derivations of the same numbers)."""
    return [
        f"-DTCF_STAGES={stages}",
        f"-DTCF_EXPECT_IDESC_F16={descriptors.kernel_instr_desc('float16'):#x}u",
        f"-DTCF_EXPECT_IDESC_BF16={descriptors.kernel_instr_desc('bfloat16'):#x}u",
        f"-DTCF_EXPECT_ADESC_AT_1024={descriptors.kernel_a_desc(1024):#x}ull",
        f"-DTCF_EXPECT_BDESC_AT_1024={descriptors.kernel_b_desc(1024):#x}ull",
        f"-DTCF_EXPECT_SMEM_BYTES={launch.smem_bytes(stages)}u",
        f"-DTCF_EXPECT_THREADS={launch.THREADS}",
        f"-DTCF_EXPECT_CTAS_PER_SM={launch.ctas_per_sm(stages)}",
        f"-DTCF_EXPECT_PAIR_TX={2 * launch.stage_bytes()}u",
    ]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CompileError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def compile_sm100(arch: str = "sm_100a", *, stages: int = launch.DEFAULT_STAGES, with_sass: bool = True,
                  extra_flags: tuple[str, ...] = ()) -> CompileReport:
    """Compile gemm_sm100.cu for `arch`; return ptxas resources, PTX and SASS (if cuobjdump exists)."""
    if arch not in SUPPORTED_ARCHS:
        raise UnsupportedError(f"arch must be one of {SUPPORTED_ARCHS} (tcgen05 needs an sm_10x 'a' target), "
                               f"got {arch!r}")
    smem = launch.smem_bytes(stages)  # validates stages
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise DeviceUnavailableError("nvcc was not found (PATH, $CUDA_HOME/bin): install the CUDA toolkit >= 12.8")
    compute = "compute_" + arch[len("sm_"):]
    flags = [f"-gencode=arch={compute},code={arch}", "-std=c++17", "-O3", "-I", str(INCLUDE_DIR),
             *cross_check_defines(stages), *extra_flags]
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tcforge_sm100_") as tmp:
        cubin_path, ptx_path = Path(tmp) / "gemm_sm100.cubin", Path(tmp) / "gemm_sm100.ptx"
        # one front-end pass: the cubin is made from the PTX (nvcc hands a .ptx input to its own ptxas)
        to_ptx = [nvcc, *flags, "-ptx", "-o", str(ptx_path), str(SOURCE_PATH)]
        to_cubin = [nvcc, f"-gencode=arch={compute},code={arch}", "-cubin", "-Xptxas", "-v", "-o", str(cubin_path),
                    str(ptx_path)]
        _run(to_ptx)
        proc = _run(to_cubin)
        command = [*to_ptx, "&&", *to_cubin]
        log = proc.stdout + proc.stderr
        cubin, ptx = cubin_path.read_bytes(), ptx_path.read_text()
        sass, sass_tool = None, None
        if with_sass:
            sass_tool = find_tool("cuobjdump")
            if sass_tool is None:
                notes.append("cuobjdump not found: no SASS inspected")
            else:
                try:
                    sass = disassemble(cubin_path, sass_tool)
                except TcforgeError as exc:
                    notes.append(str(exc))
    kernels = parse_ptxas_log(log)
    missing = [name for name in launch.KERNEL_NAMES if name not in kernels or not kernels[name].registers]
    if missing:
        raise CompileError(f"ptxas -v reported no resources for {missing}:\n{log}")
    return CompileReport(
        arch=arch,
        stages=stages,
        nvcc=nvcc,
        nvcc_version=_release(nvcc_version()),
        command=tuple(command),
        kernels=kernels,
        dynamic_smem_bytes=smem,
        ptxas_log=log,
        ptx=ptx,
        cubin=cubin,
        sass=sass,
        sass_tool=sass_tool,
        notes=tuple(notes),
    )
