"""The native enc5 kernel: one fused CUDA kernel for the whole layer (sm_90a), bit-identical to the CPU reference.

`native(weights, inputs, numerics="hopper"|"ada")` runs one frame on torch CUDA tensors; `native_batch` runs many
frames in one launch; `run` returns numpy outputs (the CLI's path); `available()` says whether this machine can. The
kernel forms (one source file each under `kernels/`) are chosen by name: `FORMS`.
"""

from tcforge.layers.enc5.gpu.api import available, debug_buffer, device_weights, native, native_batch, run
from tcforge.layers.enc5.gpu.kernel import FORMS, Enc5Params, Form, compile_form

__all__ = ["FORMS", "Enc5Params", "Form", "available", "compile_form", "debug_buffer", "device_weights", "native",
           "native_batch", "run"]
