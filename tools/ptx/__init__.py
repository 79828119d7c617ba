"""PTX generators for the spec tool's tests: `python3 -m tools.ptx.gen_enc5_ptx OUT.ptx` (the enc5-shaped module),
`python3 -m tools.ptx.gen_triton_ptx DIR` (Triton matmuls)."""
