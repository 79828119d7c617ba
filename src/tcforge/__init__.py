"""tcforge: understand, emulate bit-exactly and rebuild fast the tensor-core kernels of real-time neural rendering."""

__version__ = "0.1.0"
