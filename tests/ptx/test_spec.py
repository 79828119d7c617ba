"""`tcforge spec`, from the reader up. The PTX reader: module structure, parameters, declarations, operands and the
statement numbering convention; fuzzing: thousands of mutated PTX inputs (truncations, byte flips, inserted garbage
and braces, binary) must give a PTXSyntaxError (or, for input that still parses, a complete analysis) and never
another exception or a hang. `tcforge spec` end to end (formats, --list, --entry, exit status 2 with FILE:LINE:COL)
and the analysis's rules: symbolic addresses (derived parameter pointers, lane terms, launch bounds; the address idioms
of bit instructions and multiply-adds: emulate/test_spec_addresses.py), and `call`s followed into `.func` bodies that
reach tensor-core instructions (the phase table holds them, with the call chain; parameters passed through call slots
keep their symbolic values; no 'no tensor-core' warning)."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcforge.cli import main as tcforge_main
from tcforge.errors import TcforgeError
from tcforge.ptx import PTXSyntaxError, read_module
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.inline import inline_calls, reaches_mma
from tcforge.ptx.module import read_module_file
from tcforge.ptx.operands import Addr, Imm, Not, Pair, Reg, Sym, Vec
from tcforge.ptx.report import HEADER, PhaseRow, format_phase_table, render_json, render_markdown, render_text

SAMPLE = """//
// hand-written sample
//
.version 8.4
.target sm_89
.address_size 64

.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.texref tex0;
.extern .func (.param .b32 func_retval0) helper(.param .b32 helper_param_0);

.visible .entry k(
\t.param .align 8 .b8 k_param_0[144],
\t.param .u32 k_param_1
)
.maxntid 32, 1, 8
{
\t.reg .pred \t%p<3>;
\t.reg .b16 \t%rs<4>;
\t.reg .f32 \t%f<8>;
\t.reg .b32 \t%r<20>;
\t.reg .b64 \t%rd<10>;
\t.shared .align 4 .b8 smem[1024];

\tmov.b64 \t%rd6, k_param_0;
\tadd.s64 \t%rd1, %rd6, 80;
\tld.param.u64 \t%rd2, [%rd1+-72];
\t.loc\t1 12 3
\t// begin inline asm
\t{
\t.reg .f16 low, high;
\tmov.b32 {low, high}, %r1;
\t}
\t// end inline asm
\t{  cvt.f32.f16 %f1, %rs1;}
/* a block
   comment */
$L__BB0_1:
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t\t{%r2, %r3},
\t\t{%r4, %r5, %r6, %r7},
\t\t{%r8, %r9}, {%r10, %r10};
\t@!%p1 bra \t$L__BB0_1;
\tshfl.sync.bfly.b32 \t%r11|%p2, %r2, 1, 31, -1;
\ttex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tex0, {%r1, %r2}];
\tld.global.v2.u16 {%rs2, %rs3}, [table+4];
\tret;
}
"""


def _module():
    return read_module(SAMPLE, "sample.ptx")


def test_header_and_declarations() -> None:
    m = _module()
    assert (m.version, m.target, m.address_size) == ("8.4", ("sm_89",), 64)
    assert [(d.space, d.name, d.size) for d in m.decls] == [("global", "table", 8), ("texref", "tex0", None)]
    assert [f.name for f in m.functions] == ["helper", "k"] and [f.name for f in m.entries] == ["k"]
    k = m.function()
    assert [(p.name, p.type, p.offset, p.size, p.align) for p in k.params] == [
        ("k_param_0", "b8", 0, 144, 8), ("k_param_1", "u32", 144, 4, 4)]
    assert k.param_block_size == 148
    assert k.directives == {"maxntid": (32, 1, 8)}
    assert k.reg_types["%r<>"] == "b32" and k.reg_types["low"] == "f16"
    assert [(d.space, d.name, d.size, d.align) for d in k.decls] == [("shared", "smem", 1024, 4)]


def test_pointer_parameter_align_is_the_pointees() -> None:
    """`.ptr .global .align 1` (Triton's pointer parameters) names the pointee's alignment: a .u64 after an odd
    number of .u32 parameters still sits 8-byte aligned, as the driver lays the block out."""
    text = """.version 8.8
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 .ptr .global .align 1 k_a, .param .u32 k_n, .param .u64 .ptr .global .align 16 k_s,
                  .param .align 8 .b8 k_b[12], .param .u32 k_m)
{
ret;
}
"""
    k = read_module(text, "p.ptx").function("k")
    assert [(p.name, p.offset, p.align) for p in k.params] == [("k_a", 0, 8), ("k_n", 8, 4), ("k_s", 16, 8),
                                                               ("k_b", 24, 8), ("k_m", 36, 4)]


@pytest.mark.parametrize("decl", [".global .align \u00b2 .b8 t[4];", ".shared .b8 s[\u00b2];",
                                  ".global .b32 \u0663x;"])
def test_non_ascii_digits_are_syntax_errors_not_crashes(decl: str) -> None:
    """str.isdigit() holds for '²', which int() refuses: the reader reads only decimal digits as numbers, so such a
    declaration is a one-line syntax error or is read without its number, never a ValueError from int()."""
    text = f".version 8.4\n.target sm_90a\n.address_size 64\n{decl}\n"
    try:
        read_module(text, "u.ptx")
    except PTXSyntaxError as exc:
        assert str(exc).startswith("u.ptx:4:")


def test_statement_numbering_follows_the_analysis_convention() -> None:
    k = _module().function("k")
    got = [(s.index, s.line, s.end_line, s.opcode) for s in k.statements]
    # directives, .loc, comments and scope braces are not statements; a label is; a 4-line mma is one statement
    assert got == [
        (1, 25, 25, "mov.b64"), (2, 26, 26, "add.s64"), (3, 27, 27, "ld.param.u64"), (4, 32, 32, "mov.b32"),
        (5, 35, 35, "cvt.f32.f16"), (6, 38, 38, ":"),
        (7, 39, 42, "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"),
        (8, 43, 43, "bra"), (9, 44, 44, "shfl.sync.bfly.b32"), (10, 45, 45, "tex.2d.v4.f32.s32"),
        (11, 46, 46, "ld.global.v2.u16"), (12, 47, 47, "ret"),
    ]
    assert k.statements[5].label == "$L__BB0_1"
    assert (k.body_line, k.end_line) == (17, 48)


def test_operands() -> None:
    st = _module().function("k").statements
    assert st[0].operands == (Reg("%rd6"), Sym("k_param_0"))
    assert st[2].operands == (Reg("%rd2"), Addr(Reg("%rd1"), -72))
    assert st[3].operands == (Vec((Reg("low"), Reg("high"))), Reg("%r1"))  # block-local names are registers
    assert st[6].operands[0] == Vec((Reg("%r2"), Reg("%r3"))) and st[6].operands[3] == Vec((Reg("%r10"),) * 2)
    assert st[7].guard == ("%p1", True) and st[7].operands == (Sym("$L__BB0_1"),)
    assert st[8].operands[0] == Pair(Reg("%r11"), Reg("%p2")) and st[8].operands[4] == Imm(-1, "-1")
    assert st[9].operands[1] == Addr(Sym("tex0"), 0, Vec((Reg("%r1"), Reg("%r2"))))
    assert st[10].operands[1] == Addr(Sym("table"), 4)


def test_literals_and_negated_predicates() -> None:
    text = (".version 8.0\n.target sm_80\n.address_size 64\n.entry e()\n{\n.reg .pred %p<2>;\n.reg .f32 %f<3>;\n"
            ".reg .b32 %r<3>;\nmov.f32 %f1, 0f3F800000;\nmov.b32 %r1, 0x7FE0;\nmov.b32 %r2, 017;\n"
            "selp.b32 %r1, %r1, %r2, !%p1;\nret;\n}\n")
    st = read_module(text).function().statements
    assert st[0].operands[1] == Imm(1.0, "0f3F800000")
    assert st[1].operands[1].value == 0x7FE0 and st[2].operands[1].value == 15
    assert st[3].operands[3] == Not(Reg("%p1"))


BAD = [
    ("", 1, 1, "empty PTX module"),
    ("   \n\n", 1, 1, "empty PTX module"),
    ("hello world\n", 1, 1, "expected '.version'"),
    (".version 8.4\n.target sm_89\nfoo bar;\n", 3, 1, "unknown token 'foo'"),
    (".version 8.4\n}\n", 2, 1, "unbalanced '}'"),
    (".version 8.4\n.entry k()\n{\n\tmov.u32 %r1, 1;\n", 5, 1, "body of 'k' opened at 3:1 is not closed"),
    (".version 8.4\n.entry k()\n{\n\tfrobnicate.u32 %r1, 1;\n}\n", 4, 2, "unknown instruction 'frobnicate.u32'"),
    (".version 8.4\n.entry k()\n{\n\tmov.u32 %r1, 1x;\n}\n", 4, 2, "malformed number '1x'"),
    (".version 8.4\n.entry k()\n{\n\tmov.u32 %r1, {%r2;\n}\n", 4, 2, "unbalanced"),
    (".version 8.4\n.entry k()\n{\n\tmov.u32 %r1, 2\n}\n", 5, 1, "missing ';' before '}'"),
    (".version 8.4\n.entry k()\n{\n\tret;\n}\n/* open", 6, 1, "unterminated /* comment"),
    (".version 8.4\n.entry k()\n{\n\tmov.u32 %r1, `;\n}\n", 4, 2, "unknown token '`'"),
    (".version 8.4\n.entry k()\n{\n\tmov.u32 %r1, \"x;\n}\n", 4, 15, "unterminated string"),
    (".version 8.4\x00\n", 1, 13, "NUL byte"),
    (b".version 8.4\n\xff\xfe\n", 2, 1, "not UTF-8"),
]


@pytest.mark.parametrize(("text", "line", "col", "needle"), BAD)
def test_malformed_input_points_at_file_line_col(text, line, col, needle) -> None:
    with pytest.raises(PTXSyntaxError) as info:
        read_module(text, "bad.ptx")
    err = info.value
    assert isinstance(err, TcforgeError)
    assert (err.file, err.line, err.col) == ("bad.ptx", line, col), str(err)
    assert str(err).startswith(f"bad.ptx:{line}:{col}: ") and needle in str(err)


def test_entry_not_found_names_the_entries() -> None:
    with pytest.raises(PTXSyntaxError, match=r"sample.ptx:1:1: entry 'nope' not found; entries: k"):
        _module().function("nope")


def test_branch_tables_and_call_prototypes_are_not_statements() -> None:
    from tcforge.ptx.dataflow import DataFlow

    text = (".version 8.0\n.target sm_80\n.address_size 64\n.entry e()\n{\n.reg .b32 %r<4>;\n"
            "$Ltbl: .branchtargets $L1, $L2;\nbrx.idx %r1, $Ltbl;\n$L1:\nret;\n$L2:\n{\n.param .b32 p0;\n"
            "prototype_0 : .callprototype ()_ (.param .b32 _);\ncall (), %r2, (p0), prototype_0;\n}\nret;\n}\n")
    fn = read_module(text).function()
    assert [(s.index, s.opcode) for s in fn.statements] == [(1, "brx.idx"), (2, ":"), (3, "ret"), (4, ":"),
                                                            (5, "call"), (6, "ret")]
    assert fn.branch_tables == {"$Ltbl": ["$L1", "$L2"]}
    flow = DataFlow(fn)
    assert flow.succs[0] == [1, 2] and flow.loops == []


def test_progress_reports_the_line_reached_after_each_function() -> None:
    """`read_module(progress=...)` is called once per function body with a rising line number (the `spec` bar)."""
    from tcforge.ptx.module import read_module

    body = "{\n  ret;\n}\n"
    text = ".version 8.0\n.target sm_90a\n.address_size 64\n" + "".join(
        f".visible .entry k{i}()\n{body}" for i in range(3))
    seen: list[int] = []
    m = read_module(text, "p.ptx", progress=seen.append)
    assert len(m.functions) == 3 and len(seen) == 3
    assert seen == [7, 11, 15]  # each body's closing brace


def test_spec_shows_lines_read_for_a_large_module(monkeypatch, capsys, tmp_path) -> None:
    """On a terminal, a module past the size limit advances a lines-read bar to its last function's line."""
    from tcforge.ptx import cli

    updates: list[int] = []

    class Bar:
        def __init__(self, total: int, desc: str, unit: str, quiet: bool = False) -> None:
            assert unit == "line" and desc.startswith("reading")

        def update(self, n: int = 1) -> None:
            updates.append(n)

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(cli, "BIG_INPUT", 0)
    monkeypatch.setattr(cli, "show_progress", lambda quiet=False: True)
    monkeypatch.setattr(cli, "Counter", Bar)
    path = tmp_path / "big.ptx"
    path.write_text(".version 8.0\n.target sm_90a\n.address_size 64\n" + "".join(
        f".visible .entry k{i}()\n{{\n  ret;\n}}\n" for i in range(4)))
    assert cli.main([str(path), "--list"]) == 0
    assert len(updates) == 4 and sum(updates) == 3 + 4 * 4


SMALL = """.version 8.4
.target sm_89
.address_size 64
.visible .entry k(
\t.param .align 8 .b8 k_param_0[144]
)
.maxntid 32, 1, 4
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<10>;
\t.shared .align 4 .b8 smem[1024];
\tmov.b64 %rd6, k_param_0;
\tadd.s64 %rd1, %rd6, 80;
\tld.param.u64 %rd2, [%rd1+-40];
\tcvta.to.global.u64 %rd3, %rd2;
\tmov.u32 %r1, %laneid;
\tshl.b32 %r2, %r1, 2;
\tcvt.u64.u32 %rd4, %r2;
\tand.b64 %rd5, %rd4, 12;
\tadd.s64 %rd7, %rd3, %rd5;
\tld.global.u32 %r3, [%rd7+64];
\tmul.wide.u32 %rd8, %r1, 16;
\tadd.s64 %rd9, %rd3, %rd8;
\tld.weak.global.ca.v4.u32 {%r4, %r5, %r6, %r7}, [%rd9+512];
\tld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [smem+16];
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t\t{%r12, %r13},
\t\t{%r8, %r9, %r10, %r11},
\t\t{%r4, %r5}, {%r3, %r3};
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r14, %r15}, {%r8, %r9, %r10, %r11}, {%r6, %r7}, {%r12, %r13};
\t{
\t.reg .b16 lo, hi;
\tcvt.rn.satfinite.e4m3x2.f16x2 lo, %r14;
\t}
\tsetp.gt.u32 %p1, %r1, 15;
\t@%p1 bra $L__BB0_2;
\tst.global.u32 [%rd9], %r15;
$L__BB0_2:
\tret;
}
"""

JUNK = st.sampled_from(["{", "}", ";", "[", "]", "(", ")", "%", "@", ".", ",", "|", "!", ":", "/*", "//", '"',
                        "\n", "\x00", "\xff", "mma.sync", ".entry", "{%r1,", "[%rd1+", "0f", "0x", "-", "_", "$L:"])


@st.composite
def mutated(draw, seed: str = SMALL) -> str | bytes:
    text = seed
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "duplicate", "junk"]))
        n = len(text)
        i = draw(st.integers(0, max(0, n - 1)))
        if kind == "truncate":
            text = text[:i]
        elif kind == "flip":
            text = text[:i] + chr(draw(st.integers(0, 255))) + text[i + 1:]
        elif kind == "insert":
            text = text[:i] + draw(st.text(max_size=12)) + text[i:]
        elif kind == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 40)):]
        elif kind == "duplicate":
            j = min(n, i + draw(st.integers(1, 80)))
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + draw(JUNK) + text[i:]
    if draw(st.booleans()) and draw(st.integers(0, 9)) == 0:
        return text.encode("utf-8", "surrogatepass")[: draw(st.integers(0, len(text)))] + draw(st.binary(max_size=20))
    return text


def _check(data) -> None:
    t0 = time.perf_counter()
    try:
        m = read_module(data, "fuzz.ptx")
        for fn in m.functions:
            if fn.has_body:
                an = Analysis(m, fn)
                render_text(an)
                render_json(an)
                render_markdown(an)
    except PTXSyntaxError as exc:
        assert str(exc).startswith(f"fuzz.ptx:{exc.line}:{exc.col}: ") and exc.line >= 1 and exc.col >= 1
    except TcforgeError:
        pass
    assert time.perf_counter() - t0 < 5.0  # no hang


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_small_module(data) -> None:
    _check(data)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_small_module_at_length(data) -> None:
    _check(data)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=400))
def test_binary_garbage(data) -> None:
    _check(data)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet=st.characters(min_codepoint=9, max_codepoint=126), max_size=300))
def test_random_ascii(data) -> None:
    _check(".version 8.4\n" + data)


def test_seed_is_valid_and_analysed() -> None:
    m = read_module(SMALL, "small.ptx")
    d = Analysis(m, m.function()).to_dict()
    (p,) = d["phases"]
    assert (p["M"], p["N"], p["K"], p["mma"], p["chains"]) == (16, 16, 32, 2, 2) or (p["chains"], p["mma"]) == (1, 2)
    assert p["bias"] == {"base": "param+40", "lo": 64, "hi": 68, "terms": {"(%laneid<<2)&12": 1}}
    assert p["weight"] == {"base": "param+40", "lo": 512, "hi": 528, "terms": {"%laneid": 16}}


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


def test_phase_inside_two_calls(ptx_data) -> None:
    m = read_module_file(ptx_data / "called_mma.ptx")
    an = Analysis(m, m.function("called_mma"))
    (pr,) = an.phases
    assert (pr.phase.M, pr.phase.N, pr.phase.K) == (16, 8, 16)
    assert pr.calls == ("tile_step@75", "mma_tile@46")
    assert pr.instruction.startswith("mma.sync.aligned.m16n8k16")
    # the pointer and %tid.x travel through two call slots: the weight is the entry's first pointer parameter
    assert (pr.weight.base, pr.weight.lo, pr.weight.hi, pr.weight.terms) == ("param+0", 10240, 10292, {"%tid.x&3": 4})


def test_inlined_body_has_no_call_and_renamed_registers(ptx_data) -> None:
    m = read_module_file(ptx_data / "called_mma.ptx")
    entry = m.function("called_mma")
    flat = inline_calls(m, entry)
    ops = [s.opcode for s in flat.fn.statements if s.label is None]
    assert not any(o.startswith(("call", "ret.", "ld.param.b32")) for o in ops) and ops[-1] == "ret"
    assert len(flat.chains) == len(flat.fn.statements)
    assert any(s.label and s.label.startswith("$__ret") for s in flat.fn.statements)
    assert m.function("called_mma").statements == entry.statements  # the module is untouched


def test_calls_to_functions_without_mma_are_left_alone(ptx_data) -> None:
    m = read_module_file(ptx_data / "fused_chains_debug.ptx")
    entry = m.function("fused_chains")
    assert inline_calls(m, entry).fn is entry
    assert not reaches_mma(m, next(f for f in m.functions if f.name.endswith("shfl_xor_syncEjjii")))


def test_cli_no_warning_and_strict_passes_when_calls_reach_mma(ptx_data, capsys) -> None:
    assert tcforge_main(["spec", "--strict", str(ptx_data / "called_mma.ptx")]) == 0
    out, err = capsys.readouterr()
    assert "tensor-core" not in err and "in call tile_step@75 > mma_tile@46" in out
    assert tcforge_main(["spec", "--format", "json", str(ptx_data / "called_mma.ptx")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["phases"][0]["calls"] == ["tile_step@75", "mma_tile@46"]
    assert tcforge_main(["spec", "--format", "md", str(ptx_data / "called_mma.ptx")]) == 0
    assert "(in call `tile_step@75` > `mma_tile@46`)" in capsys.readouterr().out


def test_guarded_call_is_skipped_on_the_negated_guard(ptx_data) -> None:
    text = (ptx_data / "called_mma.ptx").read_text().replace(
        "\tcall.uni (retval0),\n\ttile_step,", "\tsetp.lt.u32 %p1, %r2, 16;\n\t@%p1 call.uni (retval0),\n\ttile_step,")
    text = text.replace(".reg .b32 \t%r<8>;\n\t.reg .b64 \t%rd<8>;\n\n\tld.param.u64 \t%rd1, [called_mma_param_0];",
                        ".reg .pred %p<2>;\n\t.reg .b32 \t%r<8>;\n\t.reg .b64 \t%rd<8>;\n\n"
                        "\tld.param.u64 \t%rd1, [called_mma_param_0];")
    from tcforge.ptx import read_module

    m = read_module(text, "guarded.ptx")
    flat = inline_calls(m, m.function("called_mma")).fn
    (skip,) = [s for s in flat.statements if s.guard is not None and s.opcode.startswith("bra")
               and s.operands[0].name == "$__ret__c1"]
    assert skip.guard == ("%p1", True)
    assert len(Analysis(m, m.function("called_mma")).phases) == 1


def test_registers_of_nested_blocks_that_reuse_a_name_get_their_own() -> None:
    """nvcc's inline-asm blocks declare registers in `{ }`: one that reuses a name of the function (%p1 of %p<3>) or
    of an earlier block (lo as .b16, then as .f32) gets NAME$N inside its block, in operands and guards only (the
    opcode's .lo stays); a new name stays as it is; after the block the outer register is meant again."""
    text = (".version 8.0\n.target sm_80\n.address_size 64\n.entry e()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<4>;\n"
            "setp.ne.u32 %p1, %r1, 0;\n"
            "{\n.reg .pred %p1;\n.reg .b16 lo, hi;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 mul.lo.u32 %r3, %r1, %r2;\n"
            "mov.b32 {lo, hi}, %r3;\n}\n"
            "{\n.reg .f32 lo;\nmov.b32 lo, %r1;\n}\n"
            "@%p1 bra $L;\n$L:\nret;\n}\n")
    f = read_module(text).function()
    sts = f.statements
    assert sts[0].operands[0] == Reg("%p1")
    inner = sts[1].operands[0].name
    assert inner.startswith("%p1$") and f.reg_types[inner] == "pred"
    assert sts[2].opcode == "mul.lo.u32" and sts[2].guard == (inner, False)
    assert sts[3].operands[0] == Vec((Reg("lo"), Reg("hi"))) and f.reg_types["lo"] == "b16"
    lo2 = sts[4].operands[0].name
    assert lo2.startswith("lo$") and f.reg_types[lo2] == "f32"
    assert sts[5].guard == ("%p1", False)
