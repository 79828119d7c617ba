"""Hardware truth of the numerics models: generate on an H200, pack into tests/data/numerics, check independently."""
