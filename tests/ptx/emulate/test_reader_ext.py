"""Reader extensions the emulator needs: constant expressions in operands (the hand-written wgmma descriptor idiom)
and `.func` bodies reached by `call`."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import HEADER, run_body

from tcforge.ptx.module import read_module
from tcforge.ptx.operands import Imm, Pair, Reg, parse_operand


@pytest.mark.parametrize("text,value", [("((128 >> 4) << 16)", 524288), ("1 << 5 | 3", 35), ("-(1 << 3)", -8),
                                        ("~0", -1), ("(-7 / 2)", -3), ("(7 % -3)", 1), ("(0x10 + 0b11) * 2U", 38)])
def test_constant_expressions(text: str, value: int) -> None:
    assert parse_operand(text) == Imm(value, text)


def test_pairs_and_lists_are_not_expressions() -> None:
    assert parse_operand("%r1|%p2") == Pair(Reg("%r1"), Reg("%p2"))
    assert type(parse_operand("(param0)")).__name__ == "Paren"


def test_descriptor_idiom_reads_and_runs() -> None:
    text = HEADER + """.visible .entry e()
{
	.reg .b64 %rd<4>;
	mov.u64 %rd1, 0;
	or.b64 %rd1, %rd1, ((128 >> 4) << 16);
	ret;
}
"""
    st = read_module(text).function("e").statements[1]
    assert st.operands[2] == Imm(524288, "((128 >> 4) << 16)")
    got = run_body("mov.u64 %rd10, 5;\nor.b64 %rd10, %rd10, ((128 >> 4) << 16);\nst.global.u64 [%rd6], %rd10;",
                   np.zeros(32, np.uint32), 2)
    assert (got.view(np.uint64)[:, 0] == 524288 | 5).all()
