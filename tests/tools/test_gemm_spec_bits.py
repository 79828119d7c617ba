"""tools/gemm_spec_bits.py without a GPU: its shape and type-pair lists, and the refusals before anything launches."""

from __future__ import annotations

import pytest

from tools import gemm_spec_bits as sb


def test_default_lists_parse() -> None:
    shapes = sb.parse_shapes(sb.SHAPES)
    assert shapes[0] == (4096, 4096, 1024) and shapes[-1] == (300, 500, 16) and len(shapes) == 5
    combos = sb.parse_combos(sb.COMBOS)
    assert combos[0] == ("fp16", "fp32", False) and ("e4m3", "bf16", True) in combos and len(combos) == 6


@pytest.mark.parametrize("bad", ["4096x4096", "0x5x5", "ax2x3", "4x4x4x4"])
def test_malformed_shape_named(bad: str) -> None:
    with pytest.raises(ValueError, match=bad):
        sb.parse_shapes(f"8x8x8,{bad}")


@pytest.mark.parametrize("bad", ["fp16:fp32", "fp64:fp32:row", "fp16:int8:col", "fp16:fp32:diag", "e4m3:bf16:row"])
def test_malformed_type_pair_named(bad: str) -> None:
    with pytest.raises(ValueError, match=bad):
        sb.parse_combos(bad)


@pytest.mark.parametrize(("variants", "says"), [
    ("hoist", "two specs at least"),
    ("hoist_es,hoist@diag=2", "computes no C"),
    ("hoist_es,nosuch", "no variant 'nosuch'"),
    ("hoist_es,hoist@epi_bufs=x", "neither an integer"),
])
def test_refused_before_any_launch(variants: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        sb.main(["--variants", variants])
    assert e.value.code == 2 and says in capsys.readouterr().err
