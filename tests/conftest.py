"""Shared test set-up: the `gpu` marker skips where no CUDA GPU is present, the `slow` marker skips unless asked for;
paths to committed and shared truth.

The default run (`python3 -m pytest -q`; the README's `-n auto --dist loadgroup` spreads it over the CPUs with
pytest-xdist, every GPU test in one worker) leaves out the tests marked `slow` (exhaustive checks that repeat what a
representative test already proves, e.g. compiling every one of the GEMM's builds to look for spills). Run them with
`python3 -m pytest -q --slow` (everything) or `python3 -m pytest -q -m slow` (only them); the device round runs them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
# ../shared beside the checkout (the project's shared facts and hardware samples); absent in some clones
SHARED = TESTS.parent.parent / "shared"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (left out by default)")


def _have_cuda_gpu() -> bool:
    try:
        import torch
    except Exception:
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def _slow_asked(config: pytest.Config) -> bool:
    """--slow, or a -m expression that names `slow` other than as `not slow`."""
    markexpr = config.getoption("markexpr") or ""
    return bool(config.getoption("--slow") or re.search(r"(?<!not )\bslow\b", markexpr))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the xdist_group markers added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _slow_asked(config):
        skip_slow = pytest.mark.skip(reason="slow: run with --slow (or -m slow)")
        for item in items:
            if item.get_closest_marker("slow") is not None:
                item.add_marker(skip_slow)
    gpu = [item for item in items if item.get_closest_marker("gpu") is not None]
    # one GPU, one worker: under `-n auto --dist loadgroup` (the README's command) the GPU tests run in turn
    for item in gpu:
        item.add_marker(pytest.mark.xdist_group("gpu"))
    # torch is imported (seconds) only where a collected test needs a GPU
    if gpu and not _have_cuda_gpu():
        skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
        for item in gpu:
            item.add_marker(skip_gpu)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside this checkout")
    return SHARED


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def ptx_data() -> Path:
    return DATA / "ptx"
