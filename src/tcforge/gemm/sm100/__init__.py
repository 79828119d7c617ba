"""tcforge.gemm.sm100: the Blackwell (sm_100a) tcgen05 GEMM: 2-SM cta_group::2, TMA, warp specialisation, staged
epilogue.

It compiles (`compile_sm100`) and is described for a launch (`describe_launch`), but it has never run on hardware:
`matmul_sm100` raises UnsupportedError. See docs/gemm-blackwell.md.
"""

from __future__ import annotations

from tcforge.runtime.compile import CompileError
from tcforge.runtime.tools import find_tool

from .compile import SOURCE_PATH, SUPPORTED_ARCHS, CompileReport, compile_sm100
from .descriptors import decode_instr_desc, decode_smem_desc, instr_desc_f16, smem_desc
from .launch import (
    DEFAULT_STAGES,
    KERNEL_NAMES,
    NEVER_RUN,
    LaunchSpec,
    TensorMapSpec,
    describe_launch,
    matmul_sm100,
    smem_bytes,
)

SM100_SOURCE_PATH = SOURCE_PATH
SM100_SOURCE = SOURCE_PATH.read_text()

__all__ = [
    "DEFAULT_STAGES",
    "KERNEL_NAMES",
    "NEVER_RUN",
    "SM100_SOURCE",
    "SM100_SOURCE_PATH",
    "SUPPORTED_ARCHS",
    "CompileError",
    "CompileReport",
    "LaunchSpec",
    "TensorMapSpec",
    "compile_sm100",
    "decode_instr_desc",
    "decode_smem_desc",
    "describe_launch",
    "find_tool",
    "instr_desc_f16",
    "matmul_sm100",
    "smem_bytes",
    "smem_desc",
]
