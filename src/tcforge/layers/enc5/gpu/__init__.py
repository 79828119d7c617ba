"""The native enc5 kernel: one fused CUDA kernel for the whole layer (sm_90a), bit-identical to the CPU reference.

`native(weights, inputs, numerics="hopper"|"ada")` runs one frame on torch CUDA tensors; `native_batch` runs many
frames in one launch; `run` returns numpy outputs (the CLI's path); `available()` says whether this machine can.
"""

from tcforge.layers.enc5.gpu.api import available, debug_buffer, device_weights, native, native_batch, run
from tcforge.layers.enc5.gpu.kernel import VARIANTS, Enc5Params, compile_variant

__all__ = ["VARIANTS", "Enc5Params", "available", "compile_variant", "debug_buffer", "device_weights", "native",
           "native_batch", "run"]
