"""Contributor tools: truth generation, device checks, SASS and ncu comparisons (run from the repository root, e.g.
`python3 -m tools.gemm_device_check` or `python3 -m tools.gemm_ncu_pair`); importable as `tools.NAME` by the tests."""
