"""`spec` follows `call`s into `.func` bodies that reach tensor-core instructions: the phase table holds them, with
the call chain, parameters passed through call slots keep their symbolic values, and no 'no tensor-core' warning."""

from __future__ import annotations

import json

from tcforge.cli import main as tcforge_main
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.inline import inline_calls, reaches_mma
from tcforge.ptx.module import read_module_file


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
