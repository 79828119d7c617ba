"""Variant specs for experiments: `NAME@field=value+field=value` is the registered variant NAME with its kernel
config overridden (`hoist@diag=2`: rung 9 without its stores; `hoist_es@epi_bufs=4+stages=3`), so a bench can time
a one-build change beside the shipped variants without registering it. Never reachable through `matmul`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, replace
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.gemm.config import KernelConfig
from tcforge.gemm.variants import VARIANTS


def parse_spec(spec: str) -> tuple[str, dict[str, int | bool]]:
    """The registered variant's name and the KernelConfig overrides of a spec (integers, or true / false for
    flags); a TcforgeError names what cannot be read."""
    name, _, rest = spec.partition("@")
    if name not in VARIANTS:
        raise TcforgeError(f"variant spec {spec!r}: no variant {name!r}")
    known = {f.name for f in fields(KernelConfig)}
    overrides: dict[str, int | bool] = {}
    for item in filter(None, rest.split("+")):
        field, eq, value = item.partition("=")
        if not eq or not field or not value:
            raise TcforgeError(f"variant spec {spec!r}: overrides are field=value, joined by '+'")
        if field not in known:
            raise TcforgeError(f"variant spec {spec!r}: KernelConfig has no field {field!r}")
        low = value.lower()
        if low in ("true", "false"):
            overrides[field] = low == "true"
        elif value.lstrip("-").isdigit():
            overrides[field] = int(value)
        else:
            raise TcforgeError(f"variant spec {spec!r}: {field}={value} is neither an integer nor true / false")
    return name, overrides


def computes_c(spec: str) -> bool:
    """Whether a spec's build computes C (the diagnostic builds do not: nothing to check them against)."""
    return not parse_spec(spec)[1].get("diag")


def check_specs(specs: Iterable[str], real: bool = False) -> list[str]:
    """The specs, each checked before anything is launched: readable, and with `real` computing C (a bench that
    checks its kernels against cuBLAS has nothing to check a diagnostic build against); a TcforgeError names the
    first that is not, for the tool to report as a usage error."""
    out = list(specs)
    for spec in out:
        parse_spec(spec)
        if real and not computes_c(spec):
            raise TcforgeError(f"{spec}: a diagnostic build computes no C (time it with bench/gemm_bound.py --diags)")
    return out


def with_spec(plan: Any, spec: str) -> Any:
    """A plan made for the spec's variant, with the spec's overrides applied (the variant then named `spec`); the
    config's own check refuses what the kernel cannot build."""
    _, overrides = parse_spec(spec)
    if not overrides:
        return plan
    v = plan.variant
    config = replace(v.config, **overrides)
    config.check()
    return replace(plan, variant=replace(v, name=spec, config=config))


def plan_spec(a: Any, b: Any, spec: str, **kwargs: Any) -> Any:
    """`plan_matmul` for a spec: the plan of its registered variant (kwargs: out_dtype, scales), overridden."""
    from tcforge.gemm.validate import plan_matmul

    return with_spec(plan_matmul(a, b, variant=parse_spec(spec)[0], **kwargs), spec)
