"""`matmul_sm100`: the Python entry point of the Blackwell kernel; it refuses, as the kernel never ran on hardware."""

from __future__ import annotations

from typing import Any

from tcforge.errors import UnsupportedError

NEVER_RUN = (
    "the tcgen05 kernel (src/tcforge/gemm/sm100/gemm_sm100.cu) is only verified to compile for sm_100a with ptxas "
    "(no spills, tcgen05/TMA instructions in the SASS); it has never run on a Blackwell GPU, so its results are "
    "unvalidated and tcforge ships no launch driver for it"
)


def _device_description(a: Any) -> str:
    """What the caller's tensor lives on, without importing torch unless the caller already uses it."""
    device = getattr(a, "device", None)
    if device is None or getattr(device, "type", None) != "cuda":
        return f"the input is on {device if device is not None else type(a).__name__}, not a CUDA device"
    try:
        import torch

        major, minor = torch.cuda.get_device_capability(device)
        name = torch.cuda.get_device_name(device)
    except Exception as exc:  # no driver, no torch: say so rather than guess
        return f"the CUDA device could not be queried ({exc.__class__.__name__})"
    return f"{name} is sm_{major}{minor}"


def matmul_sm100(a: Any, b: Any, *, out_dtype: Any = None) -> Any:
    """C = a @ b on a Blackwell GPU with the 2-SM tcgen05 kernel; always raises UnsupportedError (see the message)."""
    where = _device_description(a)
    if "is sm_10" in where:
        raise UnsupportedError(f"matmul_sm100: a Blackwell GPU is present ({where}), but {NEVER_RUN}; "
                               "use tcforge.gemm.matmul or torch.mm")
    raise UnsupportedError(f"matmul_sm100 needs a Blackwell sm_100a GPU (compute capability 10.0) and none is present "
                           f"({where}); besides, {NEVER_RUN}. Use tcforge.gemm.matmul (Hopper) or torch.mm")
