"""Bit instructions that are additions in disguise, kept linear: `or`/`xor` over disjoint bits, `bfi` into zero bits,
`prmt` that moves whole values (nvcc writes `x + 2560` as `or x, 2560` when the bits cannot overlap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tcforge.ptx.symbolic import Lin


def exact(r: str, op: str, v: list[Lin]) -> Lin | None:
    """The linear value of a bit instruction when it equals a sum of its operands' values, else None."""
    if any(x.is_const for x in v) and all(x.is_const for x in v):
        return None  # constants fold elsewhere
    if r in ("or", "xor") and len(v) == 2:
        a, b = v[0].bits(), v[1].bits()
        if a is not None and b is not None and not a & b:
            return v[0] + v[1]
        return None
    if r == "bfi" and len(v) == 4:
        return _bfi(v)
    if r == "prmt" and len(v) == 3 and op.count(".") == 1:
        return _prmt(v)
    return None


def _bfi(v: list[Lin]) -> Lin | None:
    from tcforge.ptx.symbolic import Lin

    a, b, pos, ln = v
    if not (pos.is_const and ln.is_const) or not 0 <= pos.c < 64 or not 0 < ln.c <= 64:
        return None
    field = ((1 << ln.c) - 1) << pos.c
    abits = a.bits()
    if abits is None or abits >> ln.c:
        return None
    if b.is_const:
        b = Lin(b.c & ~field)
    bbits = b.bits()
    if bbits is None or bbits & field:
        return None
    return b + a.scale(1 << pos.c)


def _prmt(v: list[Lin]) -> Lin | None:
    from tcforge.ptx.symbolic import Lin

    a, b, sel = v
    if not sel.is_const:
        return None
    out = Lin(0)
    picks: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
    for i in range(4):
        s = (sel.c >> (4 * i)) & 0xF
        src, j = (a, b)[(s >> 2) & 1], s & 3
        if src.is_const:
            byte = (src.c >> (8 * j)) & 0xFF
            if s & 8:
                byte = 0xFF if byte & 0x80 else 0
            out = out + Lin(byte << (8 * i))
            continue
        if s & 8:
            return None
        picks[(s >> 2) & 1].append((i, j))
    for k, src in enumerate((a, b)):
        if src.is_const or not picks[k]:
            continue
        bits = src.bits()
        if bits is None:
            return None
        n = max(1, (bits.bit_length() + 7) // 8)
        used = sorted(p for p in picks[k] if p[1] < n)
        if not used:
            continue
        i0 = used[0][0]
        if used != [(i0 + j, j) for j in range(n)]:
            return None
        out = out + src.scale(1 << (8 * i0))
    return out
