"""SIMD video instructions: vadd2/4, vsub2/4, vavrg2/4, vabsdiff2/4, vmin2/4, vmax2/4 and vset2/4, with the byte or
half-word selectors of a and b, saturation, the destination mask (SIMD merge with c) and the `.add` accumulate.

As the PTX ISA defines them: each element is picked from the eight bytes (four half-words) of b:a by the selector
(`.b3210` / `.h10` for a, `.b7654` / `.h32` for b by default; the selector's last digit is element 0), sign- or
zero-extended by its type and combined exactly; `.sat` clamps to the element's range of the destination type;
vavrg rounds half away from zero; vset gives 1 or 0. A merge writes each masked element's low bits over c's
element (the others keep c's); `.add` adds the masked elements' exact values to c (32 bits, wrapping). CUDA's
`__vabsdiffu4`, `__vsads4` and `__vsadu2` are written with these instructions. The scalar video instructions (vadd,
vshl, vmad, ...) are not emulated."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.operands import Reg, Sel

_OPS = {
    "vadd": lambda a, b: a + b,
    "vsub": lambda a, b: a - b,
    "vavrg": lambda a, b: np.where(a + b >= 0, (a + b + 1) >> 1, (a + b) >> 1),
    "vabsdiff": lambda a, b: np.abs(a - b),
    "vmin": np.minimum,
    "vmax": np.maximum,
}
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def _elements(word: np.ndarray, picks: tuple[int, ...], width: int, signed: bool) -> list[np.ndarray]:
    """Elements `picks` (element 0 first) of the 64-bit value b:a, `width` bits each, extended by type."""
    out = []
    for k in picks:
        v = (word >> np.int64(width * k)) & np.int64((1 << width) - 1)
        out.append(np.where(v >> np.int64(width - 1) == 1, v - np.int64(1 << width), v) if signed else v)
    return out


def _selector(ctx, st, sel: str | None, default: str, n: int) -> tuple[int, ...]:
    """Element indices of a selector (`b3210` -> (0, 1, 2, 3)); `n` elements of 8 (n = 4) or 16 bits (n = 2)."""
    text = sel or default
    kind, digits = text[0], text[1:]
    if kind != ("b" if n == 4 else "h") or len(digits) != n or any(int(c) >= 2 * n for c in digits):
        ctx.unsupported(st, f"{st.opcode} with the selector .{text} (a {'byte' if n == 4 else 'half-word'} selector "
                            f"of {n} elements from 0-{2 * n - 1})")
    return tuple(int(c) for c in reversed(digits))


def _mask(ctx, st, sel: str | None, n: int) -> tuple[bool, ...]:
    """Which elements the destination mask keeps (`b31` -> elements 1 and 3)."""
    if sel is None:
        return (True,) * n
    kind, digits = sel[0], sel[1:]
    if kind != ("b" if n == 4 else "h") or any(int(c) >= n for c in digits) or len(set(digits)) != len(digits):
        ctx.unsupported(st, f"{st.opcode} with the destination mask .{sel}")
    return tuple(str(i) in digits for i in range(n))


def _split(op) -> tuple[object, str | None]:
    return (op.reg, op.sel) if isinstance(op, Sel) else (op, None)


def b_video(ctx, st, parts):
    """vop2 / vop4 and vset2 / vset4 (merge or `.add`)."""
    name = parts[0]
    n = 4 if name.endswith("4") else 2
    width = 32 // n
    base = name[:-1]
    setting = base == "vset"
    types = [p for p in parts[1:] if p in ("u32", "s32")]
    if len(types) != (2 if setting else 3) or (setting and not any(p in _CMP for p in parts)):
        ctx.unsupported(st, f"{st.opcode} (SIMD video forms: {name}.dtype.atype.btype or vset{n}.atype.btype.cmp)")
    dtype = "u32" if setting else types[0]
    ta, tb = types[-2:]
    sat, add = "sat" in parts, "add" in parts
    if sat and add:
        ctx.unsupported(st, f"{st.opcode} (.sat together with .add)")
    fn = _CMP[next(p for p in parts if p in _CMP)] if setting else _OPS[base]
    ops = st.operands
    if len(ops) != 4:
        ctx.unsupported(st, f"{st.opcode} with {len(ops)} operands (d, a, b, c)")
    (dreg, dmask), (areg, asel), (breg, bsel), (creg, csel) = (_split(o) for o in ops)
    if csel is not None or not isinstance(dreg, Reg):
        ctx.unsupported(st, f"{st.opcode} with a selector on c or a non-register destination")
    pa = _selector(ctx, st, asel, "b3210" if n == 4 else "h10", n)
    pb = _selector(ctx, st, bsel, "b7654" if n == 4 else "h32", n)
    keep = _mask(ctx, st, dmask, n)
    ra, rb, rc = (ctx.src_full(x, "u32") for x in (areg, breg, creg))
    w = ctx.dst(dreg, "u32")
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if dtype == "s32" else (0, (1 << width) - 1)
    field = np.int64((1 << width) - 1)

    def run(m):
        a, b = np.asarray(ra()).astype(np.int64), np.asarray(rb()).astype(np.int64)
        c = np.asarray(rc()).astype(np.int64)
        both = (b << np.int64(32)) | a
        va = _elements(both, pa, width, ta == "s32")
        vb = _elements(both, pb, width, tb == "s32")
        t = [fn(x, y).astype(np.int64) for x, y in zip(va, vb, strict=True)]
        if sat:
            t = [np.clip(x, lo, hi) for x in t]
        if add:
            d = c + sum(x for x, k in zip(t, keep, strict=True) if k)
        else:
            d = c
            for i, (x, k) in enumerate(zip(t, keep, strict=True)):
                if k:
                    shift = np.int64(width * i)
                    d = (d & ~(field << shift)) | ((x & field) << shift)
        w((d & np.int64(0xFFFFFFFF)).astype(np.uint32), m)
    return run


BUILDERS = {f"{op}{n}": b_video for op in (*_OPS, "vset") for n in (2, 4)}
