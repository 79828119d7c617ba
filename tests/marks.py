"""Parametrisation helpers shared by the test modules."""

from __future__ import annotations

import pytest


def thinned(values: list, every: int) -> list:
    """VALUES with all but every EVERY-th one marked slow: the default run keeps a spread of the cases, --slow all."""
    return [pytest.param(v, marks=[] if i % every == 0 else [pytest.mark.slow]) for i, v in enumerate(values)]
