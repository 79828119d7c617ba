"""The denoiser's eleven Swin layers as the public analyses state them (launch, parameter block, shared memory,
phases and mma count, weight image), and a comparison of a `tcforge spec` report against them.

Sources: the public analysis of the RR denoiser's PTX (enc5's in ../shared/sources, the others summarised in
../shared/reference/rr-stack.md §2-§3). Every layer's only tensor-core instruction is `MMA`; one warp per 8×8 token
patch, blockDim = (32, 1, warps). `tcforge spec FILE --layer auto` reads the layer from the entry's name
(`cuda_dldn_engine_swin_<layer>_kernel`) and prints each fact next to what it found."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcforge.errors import TcforgeError

MMA = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"
COMMON_PARAMS = (0, 40, 48, 80)  # (ex, ey), weight image, plane arena, block origin
_ENTRY = re.compile(r"cuda_dldn_engine_swin_((?:enc|dec)\d)_kernel")


@dataclass(frozen=True)
class SwinLayer:
    """One layer's public facts (None: not stated)."""

    name: str
    grid: tuple[int, int, int] | None
    warps: int
    param_bytes: int
    shared_bytes: int
    phases: int
    mma: int
    weight_bytes: int  # the weight image the analysis measured (a lower bound where it says so)
    width: int  # channels C
    params_read: tuple[int, ...]  # parameter-block offsets the kernel reads, beyond COMMON_PARAMS

    @property
    def entry(self) -> str:
        return f"cuda_dldn_engine_swin_{self.name}_kernel"


_DEC = (8, 24, 88, 96, 104, 112, 136)
LAYERS = {layer.name: layer for layer in (
    SwinLayer("enc0", (161, 93, 1), 1, 1032, 4000, 22, 536, 54560, 32, (56, 112, 120, 128, 304)),
    SwinLayer("enc1", (81, 47, 1), 1, 144, 0, 32, 1072, 96480, 64, (8, 56, 88, 112, 120, 128)),
    SwinLayer("enc2", (41, 24, 1), 4, 144, 9600, 38, 630, 212256, 96, (8, 56, 88, 112, 120, 128)),
    SwinLayer("enc3", (21, 13, 1), 4, 144, 12800, 48, 936, 315732, 128, (8, 56, 88, 112, 120, 128)),
    SwinLayer("enc4", (11, 7, 1), 4, 144, 16384, 62, 1386, 533844, 160, (8, 56, 88, 112, 120, 128)),
    SwinLayer("enc5", (5, 3, 1), 8, 144, 16384, 61, 1306, 431124, 160, (8, 88, 112)),
    SwinLayer("dec0", (161, 93, 1), 1, 152, 3200, 19, 544, 47376, 32, (*_DEC, 144)),
    SwinLayer("dec1", (81, 47, 1), 2, 144, 6400, 26, 632, 96788, 64, _DEC),
    SwinLayer("dec2", (41, 24, 1), 4, 144, 9600, 38, 726, 212756, 96, _DEC),
    SwinLayer("dec3", None, 4, 144, 12800, 48, 1112, 316436, 128, _DEC),
    SwinLayer("dec4", None, 8, 144, 16384, 62, 1606, 534804, 160, _DEC),
)}


def layer_of(entry: str) -> SwinLayer | None:
    """The layer an entry's name names, or None."""
    m = _ENTRY.fullmatch(entry)
    return LAYERS.get(m.group(1)) if m else None


def lookup(name: str) -> SwinLayer:
    """A layer by name (enc0..enc5, dec0..dec4); a one-line error otherwise."""
    if name not in LAYERS:
        raise TcforgeError(f"unknown layer {name!r}: one of {', '.join(LAYERS)} (or auto)")
    return LAYERS[name]


@dataclass(frozen=True)
class Fact:
    """One public fact next to what the report found."""

    what: str
    public: str
    found: str
    agrees: bool


def compare(layer: SwinLayer, doc: dict) -> list[Fact]:
    """The layer's facts against a `tcforge spec` JSON document (`Analysis.to_dict()`)."""
    phases = doc["phases"]
    forms = sorted({p["instruction"] for p in phases})
    mma = sum(p["mma"] for p in phases)
    abi = doc["cut_abi"]
    shared = sum(s["bytes"] for s in abi["shared"])
    maxntid = abi["launch_bounds"].get("maxntid") or abi["launch_bounds"].get("reqntid")
    warps = None if not maxntid else maxntid[2] if len(maxntid) > 2 else 1
    want_params = sorted({*COMMON_PARAMS, *layer.params_read})
    got_params = sorted(doc["param_offsets"])

    def fact(what: str, public: object, found: object, agrees: bool | None = None) -> Fact:
        return Fact(what, str(public), str(found), public == found if agrees is None else agrees)

    return [
        fact("entry", layer.entry, doc["entry"]),
        fact("tensor-core instruction", MMA, " ".join(forms) or "none", forms == [MMA]),
        fact("phases", layer.phases, len(phases)),
        fact("mma", layer.mma, mma),
        fact("parameter block bytes", layer.param_bytes, abi["param_block_bytes"]),
        fact("parameter offsets read", " ".join(map(str, want_params)), " ".join(map(str, got_params))),
        fact("shared bytes", layer.shared_bytes, shared),
        fact("warps per CTA (blockDim.z)", layer.warps, "not declared" if warps is None else warps,
             warps is None or warps == layer.warps),
    ]


def render(layer: SwinLayer, facts: list[Fact]) -> str:
    """The comparison as a text block."""
    w = max(len(f.what) for f in facts)
    lines = [f"public facts of {layer.name} (rr-stack: grid {layer.grid or 'not stated'}, weight image "
             f"{layer.weight_bytes} B, C = {layer.width}): {sum(f.agrees for f in facts)} of {len(facts)} agree"]
    for f in facts:
        lines.append(f"  {'ok  ' if f.agrees else 'DIFF'} {f.what:<{w}}  public {f.public}" +
                     ("" if f.agrees and f.public == f.found else f"; here {f.found}"))
    return "\n".join(lines) + "\n"
