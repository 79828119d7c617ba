"""Variant specs with kernel-config overrides (tcforge.gemm.specs): what the benches' experiment builds are."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tcforge.errors import TcforgeError
from tcforge.gemm.specs import check_specs, computes_c, parse_spec, with_spec
from tcforge.gemm.variants import VARIANTS


@dataclass(frozen=True)
class _Plan:
    variant: object


def test_spec_carries_kernel_config_overrides() -> None:
    assert parse_spec("hoist") == ("hoist", {})
    assert parse_spec("hoist@diag=2") == ("hoist", {"diag": 2})
    assert parse_spec("hoist_es@epi_bufs=4+stages=3+relaxed=true+") == (
        "hoist_es", {"epi_bufs": 4, "stages": 3, "relaxed": True})
    assert computes_c("hoist_es@epi_bufs=4") and not computes_c("hoist@diag=2")


@pytest.mark.parametrize(("spec", "says"), [
    ("nosuch@diag=2", "no variant 'nosuch'"),
    ("hoist@diag", "overrides are field=value"),
    ("hoist@=2", "overrides are field=value"),
    ("hoist@bogus=1", "no field 'bogus'"),
    ("hoist@stages=four", "neither an integer nor true / false"),
])
def test_spec_refuses_what_it_cannot_read(spec: str, says: str) -> None:
    with pytest.raises(TcforgeError, match=says):
        parse_spec(spec)


def test_spec_replaces_the_plans_kernel_config_and_names_it() -> None:
    plan = _Plan(VARIANTS["hoist_es"])
    assert with_spec(plan, "hoist_es") is plan
    es4 = with_spec(plan, "hoist_es@epi_bufs=4+stages=3")
    assert es4.variant.name == "hoist_es@epi_bufs=4+stages=3"
    assert (es4.variant.config.epi_bufs, es4.variant.config.stages) == (4, 3)
    assert es4.variant.config.epi_spread and plan.variant.config.stages == 4
    with pytest.raises(TcforgeError, match="deferred epilogue"):  # the config's own check: no diagnostics with it
        with_spec(plan, "hoist_es@diag=2")


def test_check_specs_reads_every_spec_before_anything_launches() -> None:
    assert check_specs(["hoist_es", "hoist@diag=2"]) == ["hoist_es", "hoist@diag=2"]
    assert check_specs(iter(["hoist_es@epi_bufs=4"]), real=True) == ["hoist_es@epi_bufs=4"]
    with pytest.raises(TcforgeError, match="no field 'bogus'"):
        check_specs(["hoist", "hoist@bogus=1"])
    with pytest.raises(TcforgeError, match="hoist@diag=2: a diagnostic build computes no C"):
        check_specs(["hoist_es", "hoist@diag=2"], real=True)
