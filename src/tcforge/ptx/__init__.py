"""tcforge.ptx."""
