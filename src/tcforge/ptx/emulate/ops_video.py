"""SIMD video instructions: vadd2/4, vsub2/4, vavrg2/4, vabsdiff2/4, vmin2/4, vmax2/4 and vset2/4, with the byte or
half-word selectors of a and b, saturation, the destination mask (SIMD merge with c) and the `.add` accumulate.

As the PTX ISA defines them: each element is picked from the eight bytes (four half-words) of b:a by the selector
(`.b3210` / `.h10` for a, `.b7654` / `.h32` for b by default; the selector's last digit is element 0), sign- or
zero-extended by its type and combined exactly; `.sat` clamps to the element's range of the destination type;
vavrg rounds half away from zero; vset gives 1 or 0. A merge writes each masked element's low bits over c's
element (the others keep c's); `.add` adds the masked elements' exact values to c (32 bits, wrapping). CUDA's
`__vabsdiffu4`, `__vsads4` and `__vsadu2` are written with these instructions.

The scalar forms vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vset and vmad as ptxas expands them for sm_90, which
has no video unit: the integer code ptxas 13.0 writes is what the GPU runs, and test_ops_video.py runs that code
(tests/ptx/emulate/sass_lanes.py) against this module on 1,184 forms. Where the expansion departs from the PTX ISA's
pseudocode, this module follows the expansion:
- operands: a byte, half-word or the word of a and b (`.b0`-`.b3`, `.h0`, `.h1`), extended by type, combined exactly;
  shifts take b's unsigned value clamped to 32 (`.clamp`) or mod 32 (`.wrap`); vset gives 1 or 0.
- `.sat` (`_saturate`): to 32 bits, the s32 range, but a u32 result only at its lower end; into a destination byte or
  half-word, a value outside 0..2^32 - 1 (negative ones too) becomes all ones, then the unsigned minimum with the
  part's largest value. Shifts clamp to the 32-bit range even into a part, vshl after wrapping to 34 bits.
- `.min` / `.max` with c (`_compare_key`); `.add` adds c; a destination part takes the result's low bits, but `.h1`
  takes its own high half unshifted.
- vmad: a whole-word operand multiplies as signed whatever its type, c is sign-extended, the 64-bit sum +-a*b +-c
  (+1 with `.po`) shifts right by 7 or 15 arithmetically where the ISA's final result is signed (logically
  otherwise), and `.sat` clamps its signed value to that final type's range."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.operands import Neg, Reg, Sel

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
    field = np.int64((1 << width) - 1)

    def run(m):
        a, b = np.asarray(ra()).astype(np.int64), np.asarray(rb()).astype(np.int64)
        c = np.asarray(rc()).astype(np.int64)
        both = (b << np.int64(32)) | a
        va = _elements(both, pa, width, ta == "s32")
        vb = _elements(both, pb, width, tb == "s32")
        t = [fn(x, y).astype(np.int64) for x, y in zip(va, vb, strict=True)]
        if sat:
            t = [_clamp(x, width, dtype == "s32") for x in t]
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


_PART = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}
_SCALAR = {**{k: _OPS[k] for k in ("vadd", "vsub", "vabsdiff", "vmin", "vmax")},
           "vshl": lambda a, b: a << b, "vshr": lambda a, b: a >> b}


def _part(x: np.ndarray, sel: str | None, signed: bool) -> np.ndarray:
    """The selected byte / half-word (or the word) of u32 values as Python ints, extended by type."""
    shift, width = _PART.get(sel, (0, 32))
    return _elements(x.astype(np.int64), (shift // width,), width, signed)[0].astype(object)


def _word(t: np.ndarray) -> np.ndarray:
    """Python ints -> their low 32 bits as uint32."""
    return np.array([int(x) & 0xFFFFFFFF for x in t], np.uint32)


def _clamp(v: np.ndarray, width: int, signed: bool) -> np.ndarray:
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    return np.minimum(np.maximum(v, lo), hi)


def _saturate(t: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """.sat as ptxas expands it for sm_90: to 32 bits, the s32 range, or for u32 only the lower end (the result is
    then taken mod 2^32); to a destination byte or half-word, a value outside 0..2^32 - 1 (negative ones included)
    as all ones, then the unsigned minimum with the part's largest value (127 / 255, 32767 / 65535)."""
    if width == 32:
        return _clamp(t, 32, True) if signed else np.maximum(t, 0)
    top = (1 << (width - 1)) - 1 if signed else (1 << width) - 1
    return np.array([top if x < 0 or x >> 32 else min(int(x), top) for x in t], object)


def _compare_key(name: str, t: np.ndarray, sat: bool, dsigned: bool, csigned: bool) -> np.ndarray:
    """The value `.min` / `.max` compares with c (64-bit, in c's signedness): a min / max by its exact value, an
    unsaturated shift by its 64-bit value, a sum or difference (and a saturated shift) by its low 32 bits as signed,
    anything else by its low 32 bits in the destination's signedness where saturated, unsigned where not."""
    if name in ("vmin", "vmax") or (name in ("vshl", "vshr") and not sat):
        ext = t % (1 << 64)
        return ext - (1 << 64) * (ext >> 63) if csigned or name in ("vmin", "vmax") else ext
    return _part(_word(t), None, name in ("vadd", "vsub", "vshl", "vshr") or (sat and dsigned))


def _scalar_operands(ctx, st, n: int):
    """d (with its selector), then the sources as (register, selector, negated)."""
    ops = st.operands
    if len(ops) != n:
        ctx.unsupported(st, f"{st.opcode} with {len(ops)} operands")
    d, dsel = _split(ops[0])
    if not isinstance(d, Reg):
        ctx.unsupported(st, f"{st.opcode} with a non-register destination")
    srcs = []
    for o in ops[1:]:
        neg = isinstance(o, Neg)
        reg, sel = _split(o.reg if neg else o)
        if sel is not None and sel not in _PART:
            ctx.unsupported(st, f"{st.opcode} with the selector .{sel} (scalar forms: .b0-.b3, .h0, .h1)")
        srcs.append((reg, sel, neg))
    if dsel is not None and dsel not in _PART:
        ctx.unsupported(st, f"{st.opcode} with the destination selector .{dsel}")
    return d, dsel, srcs


def b_scalar_video(ctx, st, parts):
    """vadd / vsub / vabsdiff / vmin / vmax / vshl / vshr / vset (see the module's docstring)."""
    name = parts[0]
    types = [p for p in parts[1:] if p in ("u32", "s32")]
    setting = name == "vset"
    op2 = next((p for p in parts[1:] if p in ("add", "min", "max")), None)
    cmp = next((p for p in parts[1:] if p in _CMP), None)
    if len(types) != (2 if setting else 3) or (setting and cmp is None):
        ctx.unsupported(st, f"{st.opcode} ({name}.dtype.atype.btype, vset.atype.btype.cmp)")
    mode = next((p for p in parts[1:] if p in ("clamp", "wrap")), None)
    if name in ("vshl", "vshr") and mode is None:
        ctx.unsupported(st, f"{st.opcode} (a shift needs .clamp or .wrap)")
    dsigned = not setting and types[0] == "s32"
    asigned, bsigned = (t == "s32" for t in types[-2:])
    if name in ("vshl", "vshr"):
        bsigned = False
    sat = "sat" in parts and not setting
    d, dsel, srcs = _scalar_operands(ctx, st, 4 if (op2 or st.operands and isinstance(st.operands[0], Sel)) else 3)
    if dsel is not None and op2 is not None:
        ctx.unsupported(st, f"{st.opcode} (a destination selector and a secondary operation)")
    if any(neg for _, _, neg in srcs):
        ctx.unsupported(st, f"{st.opcode} (negated operands belong to vmad)")
    (ra, asel, _), (rb, bsel, _) = srcs[:2]
    fa, fb = ctx.src_full(ra, "u32"), ctx.src_full(rb, "u32")
    fc = ctx.src_full(srcs[2][0], "u32") if len(srcs) > 2 else None
    fn = _CMP[cmp] if setting else _SCALAR[name]
    w = ctx.dst(d, "u32")
    width = _PART.get(dsel, (0, 32))[1]
    csigned = asigned if setting else dsigned  # vset's c has a's signedness
    shift_op = name in ("vshl", "vshr")

    def run(m):
        ta, tb = _part(np.asarray(fa()), asel, asigned), _part(np.asarray(fb()), bsel, bsigned)
        if shift_op:
            tb = np.minimum(tb, 32) if mode == "clamp" else tb & 31
        t = fn(ta, tb).astype(object) if setting else fn(ta, tb)
        if sat and shift_op:
            if name == "vshl":
                t = np.array([(int(x) + (1 << 33)) % (1 << 34) - (1 << 33) for x in t], object)
            t = _clamp(t, 32, dsigned)
        elif sat:
            t = _saturate(t, width, dsigned)
        if fc is not None:
            c = _part(np.asarray(fc()), None, csigned)
            if op2 == "add":
                t = t + c
            elif op2 in ("min", "max"):
                ext = _compare_key(name, t, sat, dsigned, csigned)
                key = ext if csigned else ext % (1 << 64)
                keep = key < c if op2 == "min" else key > c
                t = np.where(keep, ext, c)
            elif dsel == "h1":
                t = (t & 0xFFFF0000) | (c & 0xFFFF)
            elif dsel is not None:
                shift, _ = _PART[dsel]
                field = ((1 << width) - 1) << shift
                t = ((t << shift) & field) | (c & (0xFFFFFFFF ^ field))
        w(_word(t), m)
    return run


def b_vmad(ctx, st, parts):
    """vmad (see the module's docstring)."""
    types = [p for p in parts[1:] if p in ("u32", "s32")]
    if len(types) != 3:
        ctx.unsupported(st, f"{st.opcode} (vmad.dtype.atype.btype)")
    po, sat = "po" in parts, "sat" in parts
    shift = 7 if "shr7" in parts else 15 if "shr15" in parts else 0
    d, dsel, srcs = _scalar_operands(ctx, st, 4)
    if dsel is not None or srcs[2][1] is not None:
        ctx.unsupported(st, f"{st.opcode} with a selector on d or c")
    (ra, asel, an), (rb, bsel, bn), (rc, _, cn) = srcs
    negp = an != bn
    if po and (an or bn or cn):
        ctx.unsupported(st, f"{st.opcode} (.po with a negated operand)")
    if negp and cn:
        ctx.unsupported(st, f"{st.opcode} (the product and c both negated)")
    asigned, bsigned = types[1] == "s32", types[2] == "s32"
    signed = asigned or bsigned or negp or cn  # the ISA's signed final result
    fa, fb, fc = (ctx.src_full(r, "u32") for r in (ra, rb, rc))
    w = ctx.dst(d, "u32")
    wrap = 1 << 64

    def run(m):
        p = _part(np.asarray(fa()), asel, asigned or asel is None) * _part(np.asarray(fb()), bsel,
                                                                         bsigned or bsel is None)
        c = _part(np.asarray(fc()), None, True)
        t = ((-p if negp else p) + (-c if cn else c) + (1 if po else 0)) % wrap
        if signed:
            t = t - wrap * (t >> 63)
        t = (t >> shift) % wrap
        if sat:
            t = _clamp(t - wrap * (t >> 63), 32, signed)
        w(_word(t), m)
    return run


BUILDERS = {f"{op}{n}": b_video for op in (*_OPS, "vset") for n in (2, 4)} | {
    op: b_scalar_video for op in (*_SCALAR, "vset")} | {"vmad": b_vmad}
