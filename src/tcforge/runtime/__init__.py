"""tcforge.runtime: compile CUDA C++ at run time (nvcc, disk cache), load it and launch it through the driver API
(cuda-python's `cuda.bindings.driver`; NVML through nvidia-ml-py).

General on purpose: any .cu with any options, any kernel by name, grid/block/cluster/shared memory and typed arguments;
TMA descriptors are encoded with `cuTensorMapEncodeTiled` and passed by value as `__grid_constant__` parameters.
"""

from tcforge.runtime.compile import CompiledModule, PtxasStats, cache_dir, compile_cuda, nvcc_version, parse_ptxas_log

__all__ = ["CompiledModule", "PtxasStats", "cache_dir", "compile_cuda", "nvcc_version", "parse_ptxas_log"]
