"""Symbolic values of registers: a constant plus integer multiples of atoms (special registers, parameter pointers,
shared arrays, shifted/masked forms of one special register such as `(%laneid<<2)&12`, or opaque run-time values).

Used for every memory operand: `[%rd94]` becomes `param+40 + 27648·%tid.z + 16·%laneid + 5440`. Bit instructions
that are additions in disguise stay linear: `or`/`xor` over disjoint bits, `bfi` into zero bits, `prmt` that moves
whole values (nvcc writes `x + 2560` as `or x, 2560` when the bits cannot overlap).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tcforge.ptx.dataflow import DataFlow, is_special
from tcforge.ptx.ir import Function
from tcforge.ptx.opcodes import TYPE_BYTES, root
from tcforge.ptx.operands import Addr, Imm, Reg, Sym, Vec

# atom kinds
SPECIAL, PARAM_BLOCK, PARAM_VALUE, SHARED, GLOBAL, DERIVED, OPAQUE = (
    "special", "param-block", "param-value", "shared", "global", "derived", "opaque")
BASE_KINDS = (PARAM_VALUE, SHARED, GLOBAL, PARAM_BLOCK)
_ENUM_LIMIT = 1 << 16


@dataclass(frozen=True, eq=False)
class Atom:
    """A symbol in a linear expression; equal by name. `lo..hi` is its value range (None: unbounded)."""

    name: str
    kind: str
    lo: int | None = None
    hi: int | None = None
    base: Atom | None = field(default=None, repr=False)
    fn: Callable[[int], int] | None = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Atom) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class Lin:
    """`c + sum(coef * atom)`; immutable by convention."""

    __slots__ = ("c", "t")

    def __init__(self, c: int = 0, t: dict[Atom, int] | None = None) -> None:
        self.c = c
        self.t = t if t is not None else {}

    def __add__(self, o: Lin) -> Lin:
        t = dict(self.t)
        for a, k in o.t.items():
            v = t.get(a, 0) + k
            if v:
                t[a] = v
            else:
                t.pop(a, None)
        return Lin(self.c + o.c, t)

    def scale(self, k: int) -> Lin:
        """The expression times an integer."""
        if k == 0:
            return Lin(0)
        return Lin(self.c * k, {a: v * k for a, v in self.t.items()})

    def __sub__(self, o: Lin) -> Lin:
        return self + o.scale(-1)

    @property
    def is_const(self) -> bool:
        """True when no atom remains."""
        return not self.t

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Lin) and o.c == self.c and o.t == self.t

    def __hash__(self) -> int:
        return hash((self.c, frozenset((a.name, k) for a, k in self.t.items())))

    def base(self) -> Atom | None:
        """The pointer-like atom (parameter pointer, shared/global array, parameter block) with coefficient 1."""
        for a, k in self.t.items():
            if k == 1 and a.kind in BASE_KINDS:
                return a
        return None

    def without(self, atom: Atom | None) -> Lin:
        """The expression with one atom removed (used to strip the base pointer)."""
        if atom is None:
            return self
        t = dict(self.t)
        t.pop(atom, None)
        return Lin(self.c, t)

    def single_base_special(self) -> Atom | None:
        """The one special register all atoms derive from, if there is exactly one and its range is enumerable."""
        sp = None
        for a in self.t:
            s = a if a.kind == SPECIAL else a.base if a.kind == DERIVED else None
            if s is None or (sp is not None and s != sp):
                return None
            sp = s
        if sp is None or sp.lo is None or sp.hi is None or sp.hi - sp.lo >= _ENUM_LIMIT:
            return None
        return sp

    def at(self, v: int) -> int:
        """Value when the single base special equals v."""
        total = self.c
        for a, k in self.t.items():
            total += k * (a.fn(v) if a.kind == DERIVED else v)
        return total

    def bounds(self) -> tuple[int, int] | None:
        """Min and max over every value of every atom (None if an atom is unbounded)."""
        sp = self.single_base_special()
        if sp is not None and any(a.kind == DERIVED for a in self.t):
            vals = [self.at(v) for v in range(sp.lo, sp.hi + 1)]
            return min(vals), max(vals)
        lo = hi = self.c
        for a, k in self.t.items():
            if a.lo is None or a.hi is None:
                return None
            lo += min(k * a.lo, k * a.hi)
            hi += max(k * a.lo, k * a.hi)
        return lo, hi

    def bits(self) -> int | None:
        """Mask of the bits the value can have set (None: unknown or possibly negative)."""
        if self.is_const:
            return self.c if self.c >= 0 else None
        sp = self.single_base_special()
        if sp is not None and sp.hi - sp.lo < 4096:
            m = 0
            for v in range(sp.lo, sp.hi + 1):
                x = self.at(v)
                if x < 0:
                    return None
                m |= x
            return m
        b = self.bounds()
        if b is None or b[0] < 0:
            return None
        return (1 << b[1].bit_length()) - 1

    def at_zero(self) -> int:
        """Value in thread zero: every special register at its lowest value, derived atoms through their table."""
        total = self.c
        for a, k in self.t.items():
            if a.kind == DERIVED and a.base is not None and a.base.lo is not None:
                total += k * a.fn(a.base.lo)
        return total

    def terms_text(self) -> dict[str, int]:
        """Per-thread terms as {name: coefficient}, bases first, then specials, derived, opaque."""
        return {a.name: k for a, k in sorted(self.t.items(), key=lambda x: _term_order(x[0]))}

    def __repr__(self) -> str:
        return format_lin(self)


def _term_order(a: Atom) -> tuple[int, str]:
    order = {PARAM_BLOCK: 0, PARAM_VALUE: 0, SHARED: 0, GLOBAL: 0, SPECIAL: 1, DERIVED: 2, OPAQUE: 3}
    return order.get(a.kind, 4), a.name


def format_lin(v: Lin, skip_base: bool = False) -> str:
    """`param+40 + 27648*%tid.z + 16*%laneid + 5440` style text."""
    parts = []
    base = v.base() if skip_base else None
    for a, k in sorted(v.t.items(), key=lambda x: _term_order(x[0])):
        if a is base:
            continue
        parts.append(a.name if k == 1 else f"-{a.name}" if k == -1 else f"{k}*{a.name}")
    if v.c or not parts:
        parts.append(str(v.c))
    return " + ".join(parts).replace("+ -", "- ")


def _spell(v: Lin) -> str:
    if v.c == 0 and len(v.t) == 1:
        (a, k), = v.t.items()
        if k == 1:
            return f"({a.name})" if a.kind == DERIVED else a.name
        if k > 0 and k & (k - 1) == 0:
            inner = f"({a.name})" if a.kind == DERIVED else a.name
            return f"({inner}<<{k.bit_length() - 1})"
    return f"({format_lin(v)})"


HW_BLOCK = (1024, 1024, 64)


def block_bounds(fn: Function, block: tuple[int, ...] | None = None) -> tuple[tuple[int, int, int], bool]:
    """Largest block dimensions a launch can have: the given `block`, else `.reqntid` (exact), else per-dimension
    hardware limits capped by the `.maxntid` thread count (it bounds the product, not each dimension).
    The flag says whether the dimensions are exact."""
    if block:
        b = tuple(block) + (1,) * (3 - len(block))
        return (b[0], b[1], b[2]), True
    req = fn.directives.get("reqntid")
    if req:
        b = tuple(req) + (1,) * (3 - len(req))
        return (b[0], b[1], b[2]), True
    mx = fn.directives.get("maxntid")
    total = 1024
    if mx:
        total = 1
        for v in mx:
            total *= v
    return (min(HW_BLOCK[0], total), min(HW_BLOCK[1], total), min(HW_BLOCK[2], total)), False


def special_ranges(fn: Function, block: tuple[int, ...] | None = None) -> dict[str, tuple[int, int]]:
    """Value ranges of the special registers a thread of the launch can see (see `block_bounds`)."""
    nt, exact = block_bounds(fn, block)
    r = {"%laneid": (0, 31)}
    for i, ax in enumerate("xyz"):
        r[f"%tid.{ax}"] = (0, nt[i] - 1)
        r[f"%ntid.{ax}"] = (nt[i], nt[i]) if exact else (1, nt[i])
    total = nt[0] * nt[1] * nt[2] if exact else min(1024, nt[0] * nt[1] * nt[2])
    r["%warpid"] = (0, max(0, (total + 31) // 32 - 1))
    return r


class Evaluator:
    """Evaluates registers to Lin values along reaching definitions (memoised per definition)."""

    def __init__(self, fn: Function, flow: DataFlow, block: tuple[int, ...] | None = None) -> None:
        self.fn, self.flow = fn, flow
        self.stmts = fn.statements
        self.ranges = special_ranges(fn, block)
        self.atoms: dict[str, Atom] = {}
        self.params = {p.name: p for p in fn.params}
        self.shared = {d.name for d in fn.decls if d.space == "shared"}
        self._memo: dict[tuple[int, str], Lin] = {}
        self._busy: set[tuple[int, str]] = set()
        self.param_block = self._atom("param", PARAM_BLOCK)

    def _atom(self, name: str, kind: str, lo: int | None = None, hi: int | None = None) -> Atom:
        a = self.atoms.get(name)
        if a is None:
            a = self.atoms[name] = Atom(name, kind, lo, hi)
        return a

    def special(self, name: str) -> Lin:
        """The value of a special register, with its launch range."""
        lo, hi = self.ranges.get(name, (None, None))
        return Lin(0, {self._atom(name, SPECIAL, lo, hi): 1})

    def opaque(self, name: str) -> Lin:
        """A run-time value with no known structure."""
        return Lin(0, {self._atom(name, OPAQUE): 1})

    def symbol(self, name: str, offset: int, module_shared: set[str] | None = None) -> Lin:
        """Address of a symbol: parameter (block offset), shared or global variable."""
        p = self.params.get(name)
        if p is not None:
            return Lin(p.offset + offset, {self.param_block: 1})
        if name in self.shared or (module_shared and name in module_shared):
            return Lin(offset, {self._atom(name, SHARED): 1})
        return Lin(offset, {self._atom(name, GLOBAL): 1})

    def operand(self, op, pos: int) -> Lin:
        """Value of an operand read at statement position `pos`."""
        if isinstance(op, Reg):
            return self.value(op.name, pos)
        if isinstance(op, Imm):
            return Lin(op.value) if isinstance(op.value, int) else self.opaque(op.text)
        if isinstance(op, Sym):
            return self.symbol(op.name, op.offset, self.module_shared)
        return self.opaque(f"?s{pos + 1}")

    module_shared: set[str] = set()

    def address(self, addr: Addr, pos: int) -> Lin:
        """Byte address of `[base+offset]` at position pos."""
        base = Lin(0) if addr.base is None else self.operand(addr.base, pos)
        return base + Lin(addr.offset)

    def value(self, reg: str, pos: int) -> Lin:
        """Value of `reg` read at position `pos` (agreeing reaching definitions keep it, else opaque)."""
        if is_special(reg):
            return self.special(reg)
        defs = self.flow.reaching(reg, pos)
        if len(defs) == 1:
            d = defs[0]
            if d < 0:
                return self.opaque(f"{reg}@entry")
            return self.of_def(d, reg)
        vals = [self.of_def(d, reg) if d >= 0 else None for d in defs]
        if vals[0] is not None and all(v == vals[0] for v in vals):
            return vals[0]
        return self.opaque(f"{reg}@s{pos + 1}")

    def of_def(self, d: int, reg: str) -> Lin:
        """Value written to `reg` by the statement at position `d` (memoised)."""
        key = (d, reg)
        got = self._memo.get(key)
        if got is not None:
            return got
        if key in self._busy or len(self._busy) > 400:
            return self.opaque(f"{reg}@s{d + 1}")
        self._busy.add(key)
        try:
            v = self._eval(d, reg)
        finally:
            self._busy.discard(key)
        self._memo[key] = v
        return v

    def _eval(self, d: int, reg: str) -> Lin:
        st = self.stmts[d]
        op = st.opcode
        ops = st.operands
        opq = self.opaque(f"{reg}@s{d + 1}")
        if st.guard is not None or not ops:
            return opq
        r = root(op)
        if isinstance(ops[0], Vec):
            if r == "ld" and ".param" in op and len(ops) == 2 and isinstance(ops[1], Addr):
                names = [x.name if isinstance(x, Reg) else None for x in ops[0].items]
                if reg in names:
                    size = TYPE_BYTES.get(op.rsplit(".", 1)[-1], 4)
                    return self._param_value(self.address(ops[1], d) + Lin(size * names.index(reg)), opq)
            return opq
        src = ops[1:]
        if r in ("mov", "cvta") or (r == "cvt" and _int_cvt(op)):
            if len(src) == 1 and not isinstance(src[0], (Vec, Addr)):
                return self.operand(src[0], d)
            return opq
        if r == "ld" and ".param" in op and len(src) == 1 and isinstance(src[0], Addr):
            return self._param_value(self.address(src[0], d), opq)
        if r in ("add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "neg", "not", "rem", "div", "min",
                 "max", "bfe", "mul24", "mad24", "bfi", "prmt"):
            if ".f" in op or op.endswith((".f32", ".f64", ".f16", ".f16x2", ".bf16", ".bf16x2")):
                return opq
            vals = [self.operand(s, d) for s in src]
            return self._arith(r, op, vals, opq)
        return opq

    def _param_value(self, addr: Lin, opq: Lin) -> Lin:
        if addr.base() is self.param_block and len(addr.t) == 1:
            return Lin(0, {self._atom(f"param+{addr.c}", PARAM_VALUE): 1})
        return opq

    def _arith(self, r: str, op: str, v: list[Lin], opq: Lin) -> Lin:
        try:
            if r == "add" and len(v) == 2:
                return v[0] + v[1]
            if r == "sub" and len(v) == 2:
                return v[0] - v[1]
            if r == "neg" and len(v) == 1:
                return v[0].scale(-1)
            if r in ("mul", "mul24") and len(v) == 2 and ".hi" not in op:
                if v[1].is_const:
                    return v[0].scale(v[1].c)
                if v[0].is_const:
                    return v[1].scale(v[0].c)
                return opq
            if r in ("mad", "mad24") and len(v) == 3 and ".hi" not in op:
                if v[1].is_const:
                    return v[0].scale(v[1].c) + v[2]
                if v[0].is_const:
                    return v[1].scale(v[0].c) + v[2]
                return opq
            if r == "shl" and len(v) == 2 and v[1].is_const and 0 <= v[1].c < 64:
                return v[0].scale(1 << v[1].c)
            exact = _bit_exact(r, op, v)
            if exact is not None:
                return exact
        except (OverflowError, ValueError):
            return opq
        if all(x.is_const for x in v):
            c = _fold(r, op, [x.c for x in v])
            return Lin(c) if c is not None else opq
        # a shifted/masked form of one special register: name it and keep its value table
        if len(v) == 2 and v[1].is_const and r in ("shr", "and", "or", "xor", "rem", "div", "min", "max"):
            sp = v[0].single_base_special()
            if sp is not None:
                c = v[1].c
                inner = v[0]
                sym = {"shr": ">>", "and": "&", "or": "|", "xor": "^", "rem": "%", "div": "/"}.get(r)
                name = f"{_spell(inner)}{sym}{c}" if sym else f"{r}({format_lin(inner)},{c})"
                table = {}
                for x in range(sp.lo, sp.hi + 1):
                    res = _fold(r, op, [inner.at(x), c])
                    if res is None:
                        return opq
                    table[x] = res
                a = self.atoms.get(name)
                if a is None:
                    vals = table.values()
                    a = self.atoms[name] = Atom(name, DERIVED, min(vals), max(vals), sp, table.__getitem__)
                return Lin(0, {a: 1})
        # two forms of the same special register combined (a swizzle `(x>>3 & 7) ^ (x & 7)`): one table again
        if len(v) == 2 and r in ("and", "or", "xor", "min", "max") and not (v[0].is_const or v[1].is_const):
            sp = v[0].single_base_special()
            if sp is not None and v[1].single_base_special() == sp:
                sym = {"and": "&", "or": "|", "xor": "^"}.get(r)
                name = f"{_spell(v[0])}{sym}{_spell(v[1])}" if sym else f"{r}({format_lin(v[0])},{format_lin(v[1])})"
                a = self.atoms.get(name)
                if a is None:
                    table = {}
                    for x in range(sp.lo, sp.hi + 1):
                        res = _fold(r, op, [v[0].at(x), v[1].at(x)])
                        if res is None:
                            return opq
                        table[x] = res
                    vals = table.values()
                    a = self.atoms[name] = Atom(name, DERIVED, min(vals), max(vals), sp, table.__getitem__)
                return Lin(0, {a: 1})
        return opq


def _int_cvt(op: str) -> bool:
    parts = op.split(".")
    types = [p for p in parts[1:] if p in TYPE_BYTES]
    return len(types) == 2 and all(t[0] in "usb" for t in types) and not any(p.startswith("sat") for p in parts)


def _fold(r: str, op: str, c: list[int]) -> int | None:
    try:
        if r == "shr":
            return c[0] >> c[1]
        if r == "and":
            return c[0] & c[1]
        if r == "or":
            return c[0] | c[1]
        if r == "xor":
            return c[0] ^ c[1]
        if r == "not":
            return ~c[0]
        if r == "rem":
            return int(__import__("math").fmod(c[0], c[1]))
        if r == "div":
            q = abs(c[0]) // abs(c[1])
            return q if (c[0] >= 0) == (c[1] >= 0) else -q
        if r == "min":
            return min(c)
        if r == "max":
            return max(c)
        if r in ("add",):
            return sum(c)
        if r == "sub":
            return c[0] - c[1]
        if r in ("mul", "mul24"):
            return c[0] * c[1]
        if r in ("mad", "mad24"):
            return c[0] * c[1] + c[2]
        if r == "shl":
            return c[0] << c[1]
        if r == "neg":
            return -c[0]
    except (ZeroDivisionError, ValueError, IndexError, OverflowError):
        return None
    return None


# bit instructions that are additions in disguise ----------------------------------------------------------------------


def _bit_exact(r: str, op: str, v: list[Lin]) -> Lin | None:
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
