"""Cross-check: the spec tool's reading of the generated enc5-shaped PTX (tools/ptx/gen_enc5_ptx.py, another
implementation) agrees with the descriptor on every phase's range, shape, chains, epilogue and operand offsets."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tcforge.layers.enc5.descriptor import PHASES

ROOT = Path(__file__).resolve().parents[3]
GENERATOR = ROOT / "tools" / "ptx" / "gen_enc5_ptx.py"


@pytest.fixture(scope="module")
def tool_phases(tmp_path_factory) -> list[dict]:
    analysis = pytest.importorskip("tcforge.ptx.analysis")
    module = pytest.importorskip("tcforge.ptx.module")
    if not GENERATOR.is_file():
        pytest.skip("tools/ptx/gen_enc5_ptx.py is not in this checkout")
    spec = importlib.util.spec_from_file_location("gen_enc5_ptx_for_enc5_tests", GENERATOR)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    path = tmp_path_factory.mktemp("enc5ptx") / "enc5.ptx"
    path.write_text(gen.generate())
    m = module.read_module_file(path)
    an = analysis.Analysis(m, m.function("cuda_dldn_engine_swin_enc5_kernel"), "stream", (32, 1, 8))
    return an.to_dict()["phases"]


def test_descriptor_matches_the_spec_tool(tool_phases) -> None:
    assert len(tool_phases) == len(PHASES) == 61
    for got, p in zip(tool_phases, PHASES, strict=True):
        assert (got["index"], got["first"], got["last"]) == (p.index, p.first, p.last)
        assert (got["M"], got["N"], got["K"], got["mma"], got["chains"]) == (p.m, p.n, p.k, p.mma, p.chains), p.index
        assert got["epilogue"] == p.epilogue.count, p.index
        w = got["weight"]
        assert (None if w is None else w["lo"]) == (None if p.weight_bytes is None else p.weight_bytes[0]), p.index
        b = got["bias"]
        assert (None if b is None else b["lo"]) == (None if p.bias_bytes is None else p.bias_bytes[0]), p.index
        if p.index <= 10:
            assert w["terms"].get("%tid.z") == 27648  # the per-warp weight slot
