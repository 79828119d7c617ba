"""Benchmarks a contributor re-runs (run from the repository root, e.g. `python3 -m bench.gemm_energy` or, for those
that import a sibling, `python3 -m bench.gemm_bound`); importable as `bench.NAME` by the tests."""
