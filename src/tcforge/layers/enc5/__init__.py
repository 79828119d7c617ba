"""tcforge.layers.enc5."""
