"""tcforge.numerics."""
