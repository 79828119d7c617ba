"""Thin wrapper: `python3 -m bench.numerics_mma [args]` is `tcforge bench numerics [args]` (mma emulation speed)."""

import sys

from tcforge.numerics.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
