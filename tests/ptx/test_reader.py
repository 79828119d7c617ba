"""The PTX reader: module structure, parameters, declarations, operands and the statement numbering convention."""

from __future__ import annotations

import pytest

from tcforge.errors import TcforgeError
from tcforge.ptx import PTXSyntaxError, read_module
from tcforge.ptx.operands import Addr, Imm, Not, Pair, Reg, Sym, Vec

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
