"""`python -m tcforge` is the `tcforge` command."""

import sys

from tcforge.cli import main

sys.exit(main())
