"""Shared fixtures of the PTX tests: paths of the committed corpus and the generated enc5-shaped module."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PTX_DATA = ROOT / "tests" / "data" / "ptx"
ENC5_ENTRY = "cuda_dldn_engine_swin_enc5_kernel"


def load_tool(name: str):
    """tools/ptx/NAME.py as the module `tools.ptx.NAME` (the repository root is on the tests' path)."""
    return importlib.import_module(f"tools.ptx.{name}")


@pytest.fixture(scope="session")
def ptx_tool():
    """`ptx_tool(name)` imports tools/ptx/NAME.py."""
    return load_tool


@pytest.fixture(scope="session")
def ptx_data() -> Path:
    return PTX_DATA


@pytest.fixture(scope="session")
def enc5_ptx(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("enc5") / "enc5.ptx"
    path.write_text(load_tool("gen_enc5_ptx").generate())
    return path


@pytest.fixture(scope="session")
def enc5_analysis(enc5_ptx):
    from tcforge.ptx.analysis import analyse
    from tcforge.ptx.module import read_module_file

    return analyse(read_module_file(enc5_ptx), ENC5_ENTRY, block=(32, 1, 8))
