"""tcforge.gemm."""
