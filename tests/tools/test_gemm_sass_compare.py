"""tools/gemm_sass_compare.py without cubins: builds paired by tag across two caches, a digest that ignores the lines
naming the file, and a missing cache refused with a message (a stand-in cuobjdump prints a fixed listing)."""

from __future__ import annotations

import stat
from pathlib import Path

from tools import gemm_sass_compare as sc


def _fake_cuobjdump(tmp: Path) -> str:
    """A script that prints a listing whose code lines are the cubin's own bytes (so same bytes, same SASS)."""
    tool = tmp / "cuobjdump"
    tool.write_text('#!/bin/sh\necho "Fatbin elf code: $2"\necho "code for sm_90a"\ncat "$2"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return str(tool)


def test_pairs_builds_by_tag_and_reports_the_ones_whose_sass_differs(tmp_path: Path, capsys) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "gemm_a-111.cubin").write_text("IMAD R1\n")
    (new / "gemm_a-222.cubin").write_text("IMAD R1\n")  # other hash, same code
    (old / "gemm_b-111.cubin").write_text("IMAD R1\n")
    (new / "gemm_b-333.cubin").write_text("IADD3 R1\n")  # changed
    (new / "gemm_c-444.cubin").write_text("HGMMA\n")  # new build
    assert sc.by_tag(str(new)) == {"gemm_a": [str(new / "gemm_a-222.cubin")], "gemm_b": [str(new / "gemm_b-333.cubin")],
                                   "gemm_c": [str(new / "gemm_c-444.cubin")]}
    assert sc.main([str(old), str(new), "--cuobjdump", _fake_cuobjdump(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 common tags, 1 identical SASS; 1 new tags" and len(out) == 2
    assert out[1].startswith("DIFF gemm_b - ")   # then what still agrees (instruction count, opcodes, order)


def test_a_missing_cache_is_refused_with_its_name(tmp_path: Path, capsys) -> None:
    assert sc.main([str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert "nope is not a directory" in capsys.readouterr().err
