"""The launch model's measured points (data/measured_points.json): kernel times by shape, dtype, layout, variant."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

PATH = Path(__file__).resolve().parent / "data" / "measured_points.json"

# a point: ((M, N, K), dtype, layout), layout "col" (B column-major) or "row"
Key = tuple[tuple[int, int, int], str, str]


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return json.loads(PATH.read_text())


def set_names() -> list[str]:
    """Every set's name, in the order measured."""
    return [s["name"] for s in _data()["sets"]]


def points(sets: Iterable[str] | None = None, without: Iterable[str] = ()) -> dict[Key, dict[str, float]]:
    """Each point's microseconds by variant over the named sets (all when None, less `without`), merged in the order
    measured: a later set's time of a variant at a point replaces an earlier one's. KeyError names an unknown set."""
    names = set_names()
    keep = set(names if sets is None else sets) - set(without)
    unknown = sorted((keep | set(without)) - set(names))
    if unknown:
        raise KeyError(f"no measured set named {', '.join(unknown)}")
    out: dict[Key, dict[str, float]] = {}
    for p in _data()["points"]:
        if p["set"] in keep:
            key = (tuple(p["shape"]), p["dtype"], p["layout"])
            out[key] = {**out.get(key, {}), **p["microseconds"]}  # type: ignore[index]
    return out
