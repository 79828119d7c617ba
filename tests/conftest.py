"""Shared test set-up: the `gpu` marker skips where no CUDA GPU is present; paths to committed and shared truth."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
# ../shared beside the checkout (the project's shared facts and hardware samples); absent in some clones
SHARED = TESTS.parent.parent / "shared"


def _have_cuda_gpu() -> bool:
    try:
        import torch
    except Exception:
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _have_cuda_gpu():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside this checkout")
    return SHARED


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA
