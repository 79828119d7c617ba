"""Seconds per 720p frame (40×23 tokens, 15 windows) of the enc5 CPU reference; same as `tcforge bench enc5`.

Usage: python3 bench/enc5_reference.py [--extent 40x23] [--numerics ada|hopper|both] [--repeat N] [--json PATH]
"""

from __future__ import annotations

import sys

from tcforge.layers.enc5.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
