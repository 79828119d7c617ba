"""`tcforge spec` end to end (formats, --list, --entry, exit status 2 with FILE:LINE:COL) and the symbolic address
rules the analysis relies on (derived parameter pointers, lane terms, launch bounds)."""

from __future__ import annotations

import json

from tcforge.cli import main as tcforge_main
from tcforge.ptx import read_module
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.table import HEADER, PhaseRow, format_phase_table

SNIPPET = """.version 8.4
.target sm_89
.address_size 64
.visible .entry two(
\t.param .align 8 .b8 two_param_0[144]
)
.reqntid 32, 1, 2
{
\t.reg .b32 %r<20>;
\t.reg .b64 %rd<20>;
\tmov.b64 %rd6, two_param_0;
\tadd.s64 %rd1, %rd6, 80;
\tld.param.u64 %rd2, [%rd1+-72];
\tld.param.v2.u16 {%rs1, %rs2}, [%rd1];
\tld.param.u64 %rd3, [two_param_0+40];
\tmov.u32 %r1, %laneid;
\tshr.u32 %r2, %r1, 2;
\tand.b32 %r3, %r2, 7;
\tmov.u32 %r4, %tid.z;
\tmad.lo.s32 %r5, %r4, 1000, %r3;
\tmul.wide.u32 %rd4, %r5, 4;
\tadd.s64 %rd5, %rd3, %rd4;
\tld.global.u32 %r6, [%rd5+8];
\tret;
}
.visible .entry other()
{
\tret;
}
"""


def test_derived_parameter_pointer_and_masked_lane_terms() -> None:
    m = read_module(SNIPPET, "snippet.ptx")
    an = Analysis(m, m.function("two"))
    # [%rd1+-72] with %rd1 = param+80 is a read of param+8; [%rd1] of param+80
    assert [(r["offset"], r["type"]) for r in an.param_reads()] == [(8, "u64"), (40, "u64"), (80, "v2.u16")]
    (acc,) = [a for a in an.accesses if a.space == "global"]
    assert acc.base_name == "param+40"
    assert acc.offset.terms_text() == {"%tid.z": 4000, "(%laneid>>2)&7": 4} and acc.offset.c == 8
    # .reqntid 32,1,2 is exact: tid.z <= 1; (laneid>>2)&7 <= 7 -> last byte 8 + 4000 + 28 + 4
    assert an.image_extent() == {"param+40": 4040}


def test_cli_text_json_md_and_list(tmp_path, capsys) -> None:
    path = tmp_path / "two.ptx"
    path.write_text(SNIPPET)
    assert tcforge_main(["spec", str(path), "--list"]) == 0
    out = capsys.readouterr().out
    assert "entry two" in out and "entry other" in out
    assert tcforge_main(["spec", str(path), "--entry", "two", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["entry"] == "two" and doc["phases"] == [] and doc["param_offsets"] == [8, 40, 80]
    assert doc["image_extent"] == {"param+40": 4040}
    assert tcforge_main(["spec", str(path), "--entry", "two"]) == 0
    # no weight/bias operands in this entry: the table leaves out the enc5-style columns
    assert HEADER.replace("           weight bytes                 bias bytes", "") in capsys.readouterr().out
    assert tcforge_main(["spec", str(path), "--entry", "two", "--format", "md", "-o", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_text().startswith("# two")


def test_cli_bad_entry_exits_2(tmp_path, capsys) -> None:
    path = tmp_path / "two.ptx"
    path.write_text(SNIPPET)
    assert tcforge_main(["spec", str(path), "--entry", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tcforge spec: error: ") and "no function matches 'nope'; functions: two, other" in err


def test_cli_reports_every_entry_by_default_and_filters_by_glob(tmp_path, capsys) -> None:
    """Like a binary-utilities tool: all entries, one report each; --entry GLOB; several inputs and stdin."""
    path = tmp_path / "two.ptx"
    path.write_text(SNIPPET)
    assert tcforge_main(["spec", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.count(f"{path}: entry ") == 2 and "entry two" in out and "entry other" in out
    # neither has a tensor-core instruction: a warning each; --strict turns it into exit 1; --quiet silences it
    assert err.count("tcforge spec: warning: ") == 2 and "has no tensor-core instruction" in err
    assert tcforge_main(["spec", str(path), "--strict", "--quiet"]) == 1
    assert capsys.readouterr().err == ""
    assert tcforge_main(["spec", str(path), "--entry", "t*", "--format", "json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["entry"] == "two"
    assert tcforge_main(["spec", str(path), str(path), "--format", "json", "--quiet"]) == 0
    assert [d["entry"] for d in json.loads(capsys.readouterr().out)] == ["two", "other", "two", "other"]


def test_cli_reads_stdin(tmp_path, monkeypatch, capsys) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SNIPPET.encode())))
    assert tcforge_main(["spec", "-", "--entry", "two", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["file"] == "<stdin>" and doc["entry"] == "two"


def test_text_report_names_instruction_types_and_hides_absent_operand_columns(ptx_data, capsys) -> None:
    assert tcforge_main(["spec", str(ptx_data / "wgmma_chain.ptx")]) == 0
    out = capsys.readouterr().out
    assert "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16  types f32 f16 f16" in out
    assert "weight bytes" not in out and "operands (lo..hi" not in out
    assert tcforge_main(["spec", str(ptx_data / "fused_chains.ptx")]) == 0
    out = capsys.readouterr().out
    assert "weight bytes" in out and "types f16 e4m3 e4m3 f16" in out and "types f32 bf16 bf16 f32" in out


def test_debug_build_says_its_calls_reach_no_mma_either(ptx_data, capsys) -> None:
    """-G keeps helpers as .funcs: a function whose calls reach no MMA says the calls were followed."""
    assert tcforge_main(["spec", str(ptx_data / "fused_chains_debug.ptx"), "--entry", "*shfl_xor*Ejjii"]) == 0
    err = capsys.readouterr().err
    assert "has no tensor-core instruction" in err and "calls are followed and reach none" in err


def test_cli_malformed_file_exits_2_with_location(tmp_path, capsys) -> None:
    path = tmp_path / "bad.ptx"
    path.write_text(SNIPPET.replace("ret;\n}\n.visible", "ret;\n.visible", 1)[:-40])
    assert tcforge_main(["spec", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tcforge spec: error: {path}:") and len(err.splitlines()) == 1
    missing = tmp_path / "missing.ptx"
    assert tcforge_main(["spec", str(missing)]) == 2
    assert f"{missing}:1:1: cannot read file" in capsys.readouterr().err


def test_phase_table_format_is_reusable() -> None:
    assert format_phase_table([]) == HEADER
    row = PhaseRow(1, 7554, 7577, 96, 32, 32, 24, 24, "full", "320..848+27648*%tid.z", "-", 7)
    lines = format_phase_table([row]).splitlines()
    assert lines[1].split() == ["1", "s7554-s7577", "96", "32", "32", "24", "24", "full", "320..848+27648*%tid.z",
                                "-", "7"]
    # right-aligned columns end where their (widened) header ends
    w = "320..848+27648*%tid.z"
    assert lines[0].index("weight bytes") + len("weight bytes") == lines[1].index(w) + len(w)
    assert lines[0].index("epi") + 3 == len(lines[1])


WGMMA_RESTART = """.version 8.4
.target sm_90a
.address_size 64
.visible .entry w()
.reqntid 128
{
\t.reg .f32 %f<5>;
\t.reg .b64 %rd<8>;
\tmov.b64 %rd1, 100;
\tmov.b64 %rd2, 200;
\tmov.b64 %rd3, 300;
\tmov.b64 %rd4, 400;
\t{
\t.reg .pred p;
\tsetp.ne.b32 p, 0, 0;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd3, p, 1, 1, 0, 0;
\tsetp.ne.b32 p, 1, 0;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd4, p, 1, 1, 0, 0;
\tsetp.ne.b32 p, 0, 0;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd3, p, 1, 1, 0, 0;
\tsetp.ne.b32 p, 1, 0;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd4, p, 1, 1, 0, 0;
\t}
\tret;
}
"""


def test_wgmma_scale_d_false_restarts_the_in_place_chain() -> None:
    m = read_module(WGMMA_RESTART, "w.ptx")
    (p,) = Analysis(m, m.function()).to_dict()["phases"]
    # D is written in place four times, but scale-d = false at the first and third: two chains of 2 (K = 32)
    assert (p["chains"], p["chain_length"], p["M"], p["N"], p["K"], p["grid"]) == (2, 2, 64, 8, 32, "band")
