"""tcforge.ptx.emulate: run a kernel's PTX on the CPU, every thread of a launch vectorised with numpy, with the exact
arithmetic of a chosen GPU (tcforge.numerics). See docs/emulate.md."""

from tcforge.ptx.emulate.api import NUMERICS, emulate, parsed_module
from tcforge.ptx.emulate.machine import EmulationError, OutOfScopeError
from tcforge.ptx.emulate.ops_tex import Surface, Texture
from tcforge.ptx.emulate.tensor_map import TensorMap

__all__ = ["NUMERICS", "EmulationError", "OutOfScopeError", "Surface", "TensorMap", "Texture", "emulate",
           "parsed_module"]
