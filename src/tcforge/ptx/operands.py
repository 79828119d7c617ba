"""Operands of a PTX instruction (registers, immediates, symbols, vectors, addresses) and their parser."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reg:
    """A register or special register (`%r12`, `%tid.x`), or a block-local name declared with `.reg` (`low`)."""

    name: str


@dataclass(frozen=True, slots=True)
class Imm:
    """An integer or floating-point literal; `value` is an int for integers, a float for f32/f64 literals."""

    value: int | float
    text: str


@dataclass(frozen=True, slots=True)
class Sym:
    """A symbol (label, parameter, variable, function) with an optional byte offset (`name+40`)."""

    name: str
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Vec:
    """A brace vector `{%r1, %r2}` (elements may be `_` sinks)."""

    items: tuple


@dataclass(frozen=True, slots=True)
class Paren:
    """A parenthesised list `(a, b)` as in `call (ret), f, (args)`."""

    items: tuple


@dataclass(frozen=True, slots=True)
class Addr:
    """A memory operand `[base+offset]` or `[handle, coords]` (`index` holds the part after the comma)."""

    base: Reg | Sym | None
    offset: int
    index: object = None


@dataclass(frozen=True, slots=True)
class Pair:
    """A `d|p` destination pair (shfl, setp)."""

    first: object
    second: object


@dataclass(frozen=True, slots=True)
class Not:
    """A negated predicate operand `!%p1`."""

    reg: Reg


@dataclass(frozen=True, slots=True)
class Sel:
    """A video instruction's register with a byte or half-word selector (`%r1.b3210`, `%r2.h10`, `%r3.b0`)."""

    reg: Reg
    sel: str


@dataclass(frozen=True, slots=True)
class Neg:
    """A negated register of `vmad` (`-%r1`, `-%r2.h0`)."""

    reg: Reg | Sel


@dataclass(frozen=True, slots=True)
class Sink:
    """The `_` sink operand."""


SINK = Sink()

_REG = re.compile(r"%[A-Za-z_$][\w$]*(?:\.[xyzw])?")
_SEL = re.compile(r"(%[A-Za-z_$][\w$]*)\.(b[0-7]{1,4}|h[0-3]{1,2})")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_SYM_OFF = re.compile(r"([A-Za-z_$][\w$]*)\s*([+-])\s*([+-]?(?:0[xX][0-9a-fA-F]+|\d+))")
_INT = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[Uu]?")
_HEXF = re.compile(r"[+-]?0[fF][0-9a-fA-F]{8}")
_HEXD = re.compile(r"[+-]?0[dD][0-9a-fA-F]{16}")
_DECF = re.compile(r"[+-]?\d+\.\d*(?:[eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+")
_ADDR_BASE = re.compile(
    r"\s*(%[A-Za-z_$][\w$]*(?:\.[xyzw])?|[A-Za-z_$][\w$]*)?\s*(?:([+-])\s*([+-]?(?:0[xX][0-9a-fA-F]+|\d+)))?\s*"
)


class OperandError(Exception):
    """Internal: a malformed operand; the reader turns it into a located PTXSyntaxError."""


_EXPR_CHARS = re.compile(r"[\s0-9a-fA-FxXbBuU()+\-*/%<>&|^~!]+")
_EXPR_LIT = re.compile(r"0[xX][0-9a-fA-F]+[Uu]?|0[bB][01]+[Uu]?|\d+[Uu]?")


def const_expr(text: str) -> int | None:
    """Value of a PTX constant expression over integer literals (`((128 >> 4) << 16)`, `1 << 5 | 3`), with C
    semantics on 64-bit integers (division truncates toward zero); None if `text` is not one."""
    import ast

    s = text.strip()
    if not s or not _EXPR_CHARS.fullmatch(s) or not any(c in s for c in "()<>+-*/%&|^~!") \
            or not any(c.isdecimal() for c in s):
        return None
    py = _EXPR_LIT.sub(lambda m: str(parse_int(m.group(0))), s).replace("!", " not ").replace("&&", " and ")
    try:
        tree = ast.parse(py, mode="eval")
    except SyntaxError:
        return None
    mask = (1 << 64) - 1

    def wrap(v: int) -> int:
        v &= mask
        return v - (1 << 64) if v >> 63 else v

    def ev(node) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return wrap(node.value)
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            ops = {ast.USub: lambda x: -x, ast.UAdd: lambda x: x, ast.Invert: lambda x: ~x,
                   ast.Not: lambda x: int(not x)}
            if type(node.op) in ops:
                return wrap(ops[type(node.op)](v))
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
                if b == 0:
                    raise OperandError(f"division by zero in constant expression {text.strip()!r}")
                q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                return wrap(q if not isinstance(node.op, ast.Mod) else a - q * b)
            if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= b < 64:
                raise OperandError(f"shift by {b} in constant expression {text.strip()!r}")
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.LShift: lambda: a << b, ast.RShift: lambda: a >> b, ast.BitAnd: lambda: a & b,
                   ast.BitOr: lambda: a | b, ast.BitXor: lambda: a ^ b}
            if type(node.op) in ops:
                return wrap(ops[type(node.op)]())
        raise _NotExpr

    try:
        return ev(tree)
    except _NotExpr:
        return None


class _NotExpr(Exception):
    """Internal: the text parses, but not as an integer constant expression."""


def parse_int(text: str) -> int:
    """Value of a PTX integer literal (decimal, 0x hex, 0b binary, leading-0 octal, optional U suffix)."""
    t = text.rstrip("Uu")
    neg = t.startswith("-")
    t = t.lstrip("+-")
    if t[:2] in ("0x", "0X"):
        v = int(t[2:], 16)
    elif t[:2] in ("0b", "0B"):
        v = int(t[2:], 2)
    elif len(t) > 1 and t[0] == "0":
        if any(c in "89" for c in t):
            raise OperandError(f"bad octal literal {text!r}")
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


def _hex_float(text: str, width: int) -> float:
    import struct

    neg = text.startswith("-")
    bits = int(text.lstrip("+-")[2:], 16)
    if width == 32:
        v = struct.unpack("<f", struct.pack("<I", bits))[0]
    else:
        v = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return -v if neg else v


def split_top(text: str) -> list[str]:
    """Split at commas outside (), {} and []; raises OperandError on unbalanced brackets."""
    if "{" not in text and "[" not in text and "(" not in text:
        if "}" in text or "]" in text or ")" in text:
            raise OperandError("unbalanced closing bracket")
        return text.split(",")
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth < 0:
                raise OperandError("unbalanced closing bracket")
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise OperandError("unbalanced bracket")
    out.append(text[start:])
    return out


_CACHE: dict[str, object] = {}
_CACHEABLE = re.compile(r"\s*(?:%[\w$]+(?:\.[xyzw])?|[-+]?\d[\w.]*)\s*")


def parse_operand(text: str, regs: frozenset[str] | set[str] = frozenset()):
    """Parse one operand; `regs` names block-local registers declared without a `%`."""
    hit = _CACHE.get(text)
    if hit is not None:
        return hit
    op = _parse_operand(text, regs)
    if len(_CACHE) < 200_000 and _CACHEABLE.fullmatch(text):
        _CACHE[text] = op  # a %register or a literal does not depend on the block-local names
    return op


def _parse_operand(text: str, regs: frozenset[str] | set[str] = frozenset()):
    """Parse one operand (uncached)."""
    s = text.strip()
    if not s:
        raise OperandError("empty operand")
    c = s[0]
    if c == "%":
        if _REG.fullmatch(s):
            return Reg(s)
        m = _SEL.fullmatch(s)
        if m:
            return Sel(Reg(m.group(1)), m.group(2))
        if "|" in s:
            a, b = s.split("|", 1)
            return Pair(parse_operand(a, regs), parse_operand(b, regs))
        raise OperandError(f"malformed register {s!r}")
    if c == "{":
        if s[-1] != "}":
            raise OperandError(f"unterminated vector {s!r}")
        inner = s[1:-1].strip()
        if not inner:
            raise OperandError("empty vector")
        return Vec(tuple(parse_operand(p, regs) for p in split_top(inner)))
    if c == "[":
        if s[-1] != "]":
            raise OperandError(f"unterminated address {s!r}")
        parts = split_top(s[1:-1])
        if len(parts) > 2:
            raise OperandError(f"malformed address {s!r}")
        m = _ADDR_BASE.fullmatch(parts[0])
        if m is None or (m.group(1) is None and m.group(3) is None):
            raise OperandError(f"malformed address {s!r}")
        name, sign, num = m.groups()
        base = None
        if name is not None:
            base = Reg(name) if name.startswith("%") or name in regs else Sym(name)
        off = 0
        if num is not None:
            off = parse_int(num) * (-1 if sign == "-" else 1)
        index = parse_operand(parts[1], regs) if len(parts) == 2 else None
        return Addr(base, off, index)
    if c == "(":
        if s[-1] != ")":
            v = const_expr(s)
            if v is not None:
                return Imm(v, s)
            raise OperandError(f"unterminated list {s!r}")
        if len(split_top(s[1:-1])) == 1:
            v = const_expr(s)
            if v is not None:
                return Imm(v, s)
        inner = s[1:-1].strip()
        return Paren(tuple(parse_operand(p, regs) for p in split_top(inner)) if inner else ())
    if c == "!":
        inner = parse_operand(s[1:], regs)
        if not isinstance(inner, Reg):
            raise OperandError(f"'!' must negate a predicate register, got {s!r}")
        return Not(inner)
    if s == "_":
        return SINK
    if "|" in s:
        v = const_expr(s)
        if v is not None:
            return Imm(v, s)
        a, b = s.split("|", 1)
        return Pair(parse_operand(a, regs), parse_operand(b, regs))
    if c == "-" and s[1:2] == "%":
        inner = parse_operand(s[1:], regs)
        if not isinstance(inner, (Reg, Sel)):
            raise OperandError(f"'-' must negate a register, got {s!r}")
        return Neg(inner)
    if c.isdecimal() or c in "+-":
        if _HEXF.fullmatch(s):
            return Imm(_hex_float(s, 32), s)
        if _HEXD.fullmatch(s):
            return Imm(_hex_float(s, 64), s)
        if _INT.fullmatch(s):
            return Imm(parse_int(s), s)
        if _DECF.fullmatch(s):
            return Imm(float(s), s)
        v = const_expr(s)
        if v is not None:
            return Imm(v, s)
        raise OperandError(f"malformed number {s!r}")
    if _IDENT.fullmatch(s):
        return Reg(s) if s in regs else Sym(s)
    m = _SYM_OFF.fullmatch(s)
    if m:
        off = parse_int(m.group(3)) * (-1 if m.group(2) == "-" else 1)
        return Sym(m.group(1), off)
    v = const_expr(s) if c in "~!" else None
    if v is not None:
        return Imm(v, s)
    raise OperandError(f"unknown token {s!r}")


def iter_regs(op) -> list[Reg]:
    """Every register mentioned inside an operand (vector elements, address base and index, pairs)."""
    if isinstance(op, Reg):
        return [op]
    if isinstance(op, (Vec, Paren)):
        out: list[Reg] = []
        for it in op.items:
            out.extend(iter_regs(it))
        return out
    if isinstance(op, Addr):
        out = [op.base] if isinstance(op.base, Reg) else []
        if op.index is not None:
            out.extend(iter_regs(op.index))
        return out
    if isinstance(op, Pair):
        return iter_regs(op.first) + iter_regs(op.second)
    if isinstance(op, (Not, Sel)):
        return [op.reg]
    if isinstance(op, Neg):
        return iter_regs(op.reg)
    return []
