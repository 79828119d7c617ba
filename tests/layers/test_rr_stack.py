"""The eleven Swin layers' public facts: the enc5 row against the enc5 layer's own descriptor (written from the enc5
analysis apart from the fact sheet), and `tcforge spec --layer` on the enc5-shaped generated module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tools.ptx import gen_enc5_ptx

from tcforge.cli import main as tcforge_main
from tcforge.layers import rr_stack
from tcforge.layers.enc5 import descriptor


@pytest.fixture(scope="module")
def enc5_ptx(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rr") / "enc5.ptx"
    path.write_text(gen_enc5_ptx.generate())
    return path


def test_enc5_row_is_the_enc5_descriptor() -> None:
    enc5 = rr_stack.LAYERS["enc5"]
    assert enc5.phases == len(descriptor.PHASES)
    assert enc5.mma == sum(p.mma for p in descriptor.PHASES)
    assert (enc5.param_bytes, enc5.shared_bytes) == (descriptor.PARAM_BYTES, descriptor.SMEM_BYTES)
    assert (32, 1, enc5.warps) == descriptor.BLOCK
    read = {f.offset for f in descriptor.PARAMS} - set(descriptor.UNREAD_PARAM_OFFSETS)
    assert read == {*rr_stack.COMMON_PARAMS, *enc5.params_read}


def test_layer_table_is_consistent() -> None:
    assert list(rr_stack.LAYERS) == [f"enc{i}" for i in range(6)] + [f"dec{i}" for i in range(5)]
    for layer in rr_stack.LAYERS.values():
        assert rr_stack.layer_of(layer.entry) is layer
        assert layer.mma >= layer.phases and layer.width % 32 == 0 and layer.warps in (1, 2, 4, 8)
    assert rr_stack.layer_of("cuda_dldn_engine_swin_enc4_stub") is None


def test_spec_layer_auto_agrees_on_every_enc5_fact(enc5_ptx: Path, capsys) -> None:
    assert tcforge_main(["spec", str(enc5_ptx), "--quiet", "--layer", "auto"]) == 0
    out = capsys.readouterr().out
    assert "public facts of enc5 (rr-stack: grid (5, 3, 1), weight image 431124 B, C = 160): 8 of 8 agree" in out
    assert "public facts of enc4" not in out  # the module's stub entry names no layer
    assert tcforge_main(["spec", str(enc5_ptx), "--quiet", "--layer", "auto", "--format", "json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    facts = {d["entry"]: d.get("public_facts") for d in docs}
    assert facts["cuda_dldn_engine_swin_enc4_stub"] is None
    got = {f["what"]: f for f in facts["cuda_dldn_engine_swin_enc5_kernel"]["facts"]}
    assert got["mma"] == {"what": "mma", "public": "1306", "found": "1306", "agrees": True}
    assert got["parameter offsets read"]["found"] == "0 8 40 48 80 88 112"


def test_spec_layer_names_what_differs(enc5_ptx: Path, capsys) -> None:
    assert tcforge_main(["spec", str(enc5_ptx), "--quiet", "--layer", "enc3", "--entry", "*enc5*", "--format",
                         "md"]) == 0
    out = capsys.readouterr().out
    assert "## Public facts" in out and "2 of 8 agree" in out
    assert "DIFF phases                      public 48; here 61" in out
    assert "DIFF shared bytes                public 12800; here 16384" in out


def test_spec_unknown_layer_is_one_line(enc5_ptx: Path, capsys) -> None:
    assert tcforge_main(["spec", str(enc5_ptx), "--layer", "enc9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown layer 'enc9': one of enc0" in err
