"""Thin wrapper: `python3 -m bench.gemm [args]` is `tcforge bench gemm [args]`."""

import sys

from tcforge.gemm.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
