"""enc5, the last Swin encoder layer of the denoiser: descriptor, weight image, inputs and the bit-exact CPU
reference."""

from tcforge.layers.enc5 import (
    gpu,  # the native fused kernel: enc5.native / enc5.native_batch (torch CUDA tensors)
    semantic,  # the float model: enc5.semantic.semantic / torch_model
)
from tcforge.layers.enc5.assumptions import CATALOGUE, Assumptions
from tcforge.layers.enc5.descriptor import PARAMS, PHASES, launch_geometry, phase, phase_table
from tcforge.layers.enc5.gpu.api import native, native_batch
from tcforge.layers.enc5.inputs import Inputs
from tcforge.layers.enc5.layout import IMAGE_BYTES, weight_map
from tcforge.layers.enc5.reference import Result, reference
from tcforge.layers.enc5.weights import WeightImage

__all__ = [
    "CATALOGUE",
    "IMAGE_BYTES",
    "PARAMS",
    "PHASES",
    "Assumptions",
    "Inputs",
    "Result",
    "WeightImage",
    "gpu",
    "launch_geometry",
    "native",
    "native_batch",
    "phase",
    "phase_table",
    "reference",
    "semantic",
    "weight_map",
]
