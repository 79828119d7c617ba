"""Parameter lists and variable declarations (`.shared`, `.global`, `.const`, `.local`, `.texref`, ...): names, types,
sizes, alignments and parameter-block offsets."""

from __future__ import annotations

import re

from tcforge.ptx.errors import PTXSyntaxError
from tcforge.ptx.ir import Decl, Param
from tcforge.ptx.opcodes import TYPE_BYTES
from tcforge.ptx.operands import OperandError, split_top

_DECL = re.compile(r"((?:\.(?:extern|visible|weak|common)\s+)*)"
                   r"\.(shared|global|const|local|texref|surfref|samplerref)\b"
                   r"(.*)", re.S)
_NAME_ARR = re.compile(r"([A-Za-z_$%][\w$]*)(?:\[(\d*)\])?")


def parse_params(file: str, text: str, line: int, col: int) -> list[Param]:
    """The `.param` / `.reg` list between a function's parentheses, each with its offset in the parameter block."""
    params: list[Param] = []
    cursor = 0
    if not text.strip():
        return params
    try:
        pieces = split_top(text)
    except OperandError as exc:
        raise PTXSyntaxError(file, line, col, f"parameter list: {exc}") from None
    for piece in pieces:
        words = piece.split()
        if not words or words[0] not in (".param", ".reg"):
            raise PTXSyntaxError(file, line, col, f"malformed parameter {piece.strip()!r}")
        ptype, align, space = None, None, None
        i = 1
        while i < len(words) - 1:
            w = words[i]
            if w == ".align":
                if i + 1 >= len(words) or not words[i + 1].isdigit():
                    raise PTXSyntaxError(file, line, col, f"malformed .align in {piece.strip()!r}")
                align = int(words[i + 1])
                i += 2
                continue
            if w.startswith(".") and w[1:] in TYPE_BYTES:
                ptype = w[1:]
            elif w in (".global", ".shared", ".const", ".local"):
                space = w[1:]
            elif w in (".ptr", ".texref", ".surfref", ".samplerref"):
                if w != ".ptr":
                    ptype = w[1:]
            elif w.startswith(".v") and w[2:].isdigit():
                pass
            else:
                raise PTXSyntaxError(file, line, col, f"unknown parameter attribute {w!r}")
            i += 1
        m = _NAME_ARR.fullmatch(words[-1])
        if m is None or ptype is None:
            raise PTXSyntaxError(file, line, col, f"malformed parameter {piece.strip()!r}")
        elem = TYPE_BYTES.get(ptype, 8)
        count = int(m.group(2)) if m.group(2) else None
        size = elem * (count if count is not None else 1)
        al = align or elem
        offset = (cursor + al - 1) // al * al
        cursor = offset + size
        params.append(Param(m.group(1), ptype, size, al, offset, count, space))
    return params


def parse_decl(file: str, text: str, line: int, col: int) -> Decl | None:
    """A variable declaration's space, name, type, size and alignment; None if `text` declares no variable."""
    m = _DECL.match(text.strip())
    if m is None:
        return None
    mods, space, rest = m.group(1), m.group(2), m.group(3)
    rest = rest.split("=", 1)[0]
    words = rest.split()
    if not words:
        raise PTXSyntaxError(file, line, col, f"malformed .{space} declaration")
    align, dtype = None, None
    if space in ("texref", "surfref", "samplerref"):
        dtype = space
    for i, w in enumerate(words[:-1]):
        if w == ".align" and i + 1 < len(words) and words[i + 1].isdigit():
            align = int(words[i + 1])
        elif w.startswith(".") and w[1:] in TYPE_BYTES:
            dtype = w[1:]
    last = " ".join(words[-1:])
    nm = _NAME_ARR.fullmatch(last)
    if nm is None:
        # `.shared .b8 a[4], b[8]` style lists: keep the first name
        nm = _NAME_ARR.match(last)
        if nm is None:
            raise PTXSyntaxError(file, line, col, f"malformed .{space} declaration {text.strip()!r}")
    size = None
    if dtype in TYPE_BYTES:
        size = TYPE_BYTES[dtype] * (int(nm.group(2)) if nm.group(2) else 1)
        if nm.group(2) == "":
            size = None
    return Decl(space, nm.group(1), dtype, size, align, line, extern=".extern" in mods)
