"""tcforge.runtime."""
