"""The PTX reader's parsing steps, which tcforge.ptx.module assembles into a Module: the tokenizer (newlines, `;`,
braces, strings and text runs with their line and column; comments dropped); parameter lists and variable
declarations (`.shared`, `.global`, `.const`, `.local`, `.texref`, ...: names, types, sizes, alignments and
parameter-block offsets); a function body (its instructions and labels as numbered statements with guard, opcode and
parsed operands, its `.reg` declarations, variable declarations and branch tables)."""

from __future__ import annotations

import re
from functools import partial

from tcforge.ptx.ir import Decl, Function, Param, PTXSyntaxError, Statement
from tcforge.ptx.opcodes import KNOWN_ROOTS, TYPE_BYTES
from tcforge.ptx.operands import OperandError, parse_operand, split_top

# the tokenizer --------------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r'(\n)|(//[^\n]*)|(/\*.*?\*/)|("(?:[^"\\\n]|\\.)*")|([;{}])|([^\n;{}"/]+)|(.)', re.S)


class Tokens:
    """All (kind, text, line, col) tokens of a text, comments dropped; `next()` returns None at the end."""

    def __init__(self, file: str, text: str) -> None:
        self.file, self.text = file, text
        self.line = 1
        toks = self._scan(text)
        self.line = toks[-1][2] + 1 if toks else 1
        self.next = partial(next, iter(toks), None)

    def error(self, line: int, col: int, message: str) -> PTXSyntaxError:
        """A located PTXSyntaxError."""
        return PTXSyntaxError(self.file, line, col, message)

    def _scan(self, text: str) -> list[tuple[str, str, int, int]]:
        out: list[tuple[str, str, int, int]] = []
        append = out.append
        line, line_start = 1, 0
        for m in _TOKEN.finditer(text):
            g = m.lastindex
            if g == 1:
                append(("nl", "\n", line, m.start() - line_start + 1))
                line += 1
                line_start = m.end()
            elif g == 6:
                append(("text", m.group(6), line, m.start() - line_start + 1))
            elif g == 5:
                c = m.group(5)
                append((c, c, line, m.start() - line_start + 1))
            elif g == 2:
                continue
            elif g == 3:
                body = m.group(3)
                n = body.count("\n")
                if n:
                    line += n
                    line_start = m.start() + body.rfind("\n") + 1
            elif g == 4:
                append(("str", m.group(4), line, m.start() - line_start + 1))
            else:
                ch = m.group(7)
                col = m.start() - line_start + 1
                if text.startswith("/*", m.start()):
                    raise self.error(line, col, "unterminated /* comment")
                if ch == '"':
                    raise self.error(line, col, "unterminated string")
                raise self.error(line, col, f"unexpected character {ch!r}")
        return out


# declarations ---------------------------------------------------------------------------------------------------------

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
        ptype, align, space, pointer = None, None, None, False
        i = 1
        while i < len(words) - 1:
            w = words[i]
            if w == ".align":
                if i + 1 >= len(words) or not words[i + 1].isdecimal():
                    raise PTXSyntaxError(file, line, col, f"malformed .align in {piece.strip()!r}")
                if not pointer:  # after .ptr (`.ptr .global .align 1`) it is the pointee's, not the parameter's
                    align = int(words[i + 1])
                i += 2
                continue
            if w.startswith(".") and w[1:] in TYPE_BYTES:
                ptype = w[1:]
            elif w in (".global", ".shared", ".const", ".local"):
                space = w[1:]
            elif w in (".ptr", ".texref", ".surfref", ".samplerref"):
                pointer = pointer or w == ".ptr"
                if w != ".ptr":
                    ptype = w[1:]
            elif w.startswith(".v") and w[2:].isdecimal():
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
        if w == ".align" and i + 1 < len(words) and words[i + 1].isdecimal():
            align = int(words[i + 1])
        elif (w.startswith(".") and w[1:] in TYPE_BYTES) or w in (".texref", ".surfref", ".samplerref"):
            dtype = w[1:]  # a type, or the kind of `.global .texref t;`
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


# function bodies ------------------------------------------------------------------------------------------------------

_LABEL = re.compile(r"([$%A-Za-z_][\w$]*)\s*:(?!:)")
_GUARD = re.compile(r"@\s*(!?)\s*(%?[A-Za-z_$][\w$]*)\s+")
_OPCODE = re.compile(r"([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*)(?=\s|$)")
_REG_RANGE = re.compile(r"(%?[A-Za-z_$][\w$]*)<(\d+)>")
_LABELLED_DIRECTIVES = (".callprototype", ".branchtargets", ".calltargets")
_OPERAND_NAME = re.compile(r"(?<![\w$.%])%?[A-Za-z_$][\w$]*")
_NUMBERED = re.compile(r"(%?[A-Za-z_$][\w$]*?)(\d+)")


class BodyReader:
    """Reads one function body at a time from the module's token cursor."""

    def __init__(self, toks: Tokens) -> None:
        self.file = toks.file
        self.toks = toks
        self.scoped = 0  # registers declared in nested scopes so far (their new names' suffix)

    def err(self, line: int, col: int, msg: str) -> PTXSyntaxError:
        """A located PTXSyntaxError."""
        return PTXSyntaxError(self.file, line, col, msg)

    def read(self, fn: Function, brace: tuple[int, int]) -> None:
        """Fill `fn` (statements, registers, declarations, branch tables) from the tokens after its opening brace up to
        the matching one; `brace` is where that opening brace stands."""
        stmts = fn.statements
        local_regs: set[str] = set()
        reg_types = fn.reg_types
        depth = 1
        scopes: list[dict[str, str]] = []  # per nested `{ }`: its registers renamed (names already in use)
        renames: dict[str, str] = {}  # the names in force (innermost scope last)
        parts: list[str] = []
        sline = scol = 0
        vec = 0
        skip_line = False
        directive = False
        nxt = self.toks.next
        while True:
            tok = nxt()
            if tok is None:
                raise self.err(self.toks.line, 1,
                               f"unexpected end of file: body of {fn.name!r} opened at {brace[0]}:{brace[1]} "
                               "is not closed")
            kind, text, line, col = tok
            if kind == "text":
                if skip_line:
                    continue
                if not parts:
                    s = text.lstrip()
                    if not s:
                        continue
                    col += len(text) - len(s)
                    lm = _LABEL.match(s)
                    if lm is not None and not s[lm.end():].lstrip().startswith(_LABELLED_DIRECTIVES):
                        name = lm.group(1)
                        stmts.append(Statement(len(stmts) + 1, line, line, col, name + ":", ":", (), None, name))
                        rest = s[lm.end():]
                        s = rest.lstrip()
                        col += lm.end() + len(rest) - len(s)
                        if not s:
                            continue
                    if s.split(None, 1)[0] in (".loc", ".file"):
                        skip_line = True
                        continue
                    directive = s[0] == "." or _LABEL.match(s) is not None
                    if not directive and s[0] != "@" and not s[0].isalpha():
                        raise self.err(line, col, f"unknown token {s.split()[0]!r}")
                    sline, scol = line, col
                    parts.append(s)
                else:
                    parts.append(text)
            elif kind == "nl":
                if skip_line:
                    skip_line = False
                elif parts:
                    parts.append(" ")
            elif kind == ";":
                if skip_line:
                    raise self.err(line, col, "unexpected ';' after a line directive")
                if not parts:
                    continue
                body = "".join(parts).strip()
                parts = []
                if vec:
                    raise self.err(sline, scol, "unbalanced '{' in statement")
                if body.startswith(".reg."):  # `.reg.b16 hl, hu;` as cuda_fp16's inline asm writes it (ptxas takes it)
                    body = ".reg " + body[4:]
                if directive:
                    if scopes and body.split(None, 1)[0] == ".reg":
                        self._scoped_regs(body, sline, scol, local_regs, reg_types, scopes[-1])
                        renames = {k: v for sc in scopes for k, v in sc.items()}
                    else:
                        self._body_directive(fn, body, sline, scol, local_regs, reg_types)
                else:
                    stmts.append(self._instruction(len(stmts) + 1, body, sline, scol, line, local_regs, renames))
            elif kind == "{":
                if skip_line:
                    raise self.err(line, col, "unexpected '{' after a line directive")
                if parts:
                    parts.append("{")
                    vec += 1
                else:
                    depth += 1
                    scopes.append({})
            elif kind == "}":
                if skip_line:
                    raise self.err(line, col, "unexpected '}' after a line directive")
                if vec:
                    parts.append("}")
                    vec -= 1
                elif parts:
                    raise self.err(line, col, "missing ';' before '}'")
                else:
                    depth -= 1
                    if depth == 0:
                        fn.end_line = line
                        return
                    scopes.pop()
                    renames = {k: v for sc in scopes for k, v in sc.items()}
            else:  # string
                if parts and directive:
                    parts.append(text)
                else:
                    raise self.err(line, col, "unexpected string in function body")

    def _body_directive(self, fn: Function, body: str, line: int, col: int, local: set[str],
                        reg_types: dict[str, str]) -> None:
        first = body.split(None, 1)[0]
        if first == ".reg":
            words = body.split(None, 1)[1:] if len(body.split(None, 1)) > 1 else []
            if not words:
                raise self.err(line, col, "malformed .reg declaration")
            rest = words[0]
            tm = re.match(r"((?:\.[A-Za-z0-9_]+\s*)+)(.*)", rest, re.S)
            if tm is None or not tm.group(2).strip():
                raise self.err(line, col, f"malformed .reg declaration {body!r}")
            types = tm.group(1).split()
            rtype = types[-1][1:]
            for name in tm.group(2).split(","):
                name = name.strip()
                rm = _REG_RANGE.fullmatch(name)
                if rm is not None:
                    reg_types[rm.group(1) + "<>"] = rtype
                    if not rm.group(1).startswith("%"):
                        local.add(rm.group(1))
                    continue
                if not re.fullmatch(r"%?[A-Za-z_$][\w$]*", name):
                    raise self.err(line, col, f"malformed register name {name!r}")
                reg_types[name] = rtype
                if not name.startswith("%"):
                    local.add(name)
            return
        if first in (".shared", ".local", ".global", ".const"):
            decl = parse_decl(self.file, body, line, col)
            if decl is not None:
                fn.decls.append(decl)
            return
        lm = _LABEL.match(body)
        if lm is not None and body[lm.end():].lstrip().startswith((".branchtargets", ".calltargets")):
            names = body[lm.end():].split(None, 1)
            fn.branch_tables[lm.group(1)] = [n.strip() for n in (names[1] if len(names) > 1 else "").split(",")
                                             if n.strip()]
            return
        if first in (".param", ".pragma", ".maxnreg", ".section") or ".callprototype" in body:
            return
        raise self.err(line, col, f"unknown directive {first!r} in function body")

    def _scoped_regs(self, body: str, line: int, col: int, local: set[str], reg_types: dict[str, str],
                     scope: dict[str, str]) -> None:
        """A `.reg` inside a nested `{ }` (nvcc's inline-asm blocks): a register whose name is already declared in the
        function (by name, by a `%p<N>` range, or in an earlier block) gets a name of its own, NAME$N, which the
        scope's instructions read, so it neither clobbers nor retypes the other; a new name stays as it is."""
        tm = re.match(r"\.reg\s+((?:\.[A-Za-z0-9_]+\s*)+)(.+)", body, re.S)
        if tm is None:
            raise self.err(line, col, f"malformed .reg declaration {body!r}")
        rtype = tm.group(1).split()[-1][1:]
        for name in tm.group(2).split(","):
            name = name.strip()
            rm = _REG_RANGE.fullmatch(name)
            names = [f"{rm.group(1)}{i}" for i in range(int(rm.group(2)))] if rm is not None else [name]
            if rm is None and not re.fullmatch(r"%?[A-Za-z_$][\w$]*", name):
                raise self.err(line, col, f"malformed register name {name!r}")
            for n in names:
                pm = _NUMBERED.fullmatch(n)
                new = n
                if n in reg_types or (pm is not None and pm.group(1) + "<>" in reg_types):
                    self.scoped += 1
                    scope[n] = new = f"{n}${self.scoped}"
                reg_types[new] = rtype
                if not n.startswith("%"):
                    local.add(new)

    def _instruction(self, index: int, body: str, line: int, col: int, end_line: int, local: set[str],
                     renames: dict[str, str] | None = None) -> Statement:
        guard = None
        pos = 0
        if body[0] == "@":
            gm = _GUARD.match(body)
            if gm is None:
                raise self.err(line, col, f"malformed guard in {body[:40]!r}")
            guard = (gm.group(2), gm.group(1) == "!")
            if renames and guard[0] in renames:
                guard = (renames[guard[0]], guard[1])
            pos = gm.end()
        om = _OPCODE.match(body, pos)
        if om is None:
            tok = body[pos:].split(None, 1)[0] if body[pos:].strip() else body
            raise self.err(line, col + pos, f"unknown token {tok!r}")
        opcode = om.group(1)
        r = opcode.split(".", 1)[0]
        if r not in KNOWN_ROOTS:
            raise self.err(line, col + pos, f"unknown instruction {opcode!r}")
        rest = body[om.end():].strip()
        if renames:  # registers of enclosing nested scopes, in the operands only (never opcode words)
            rest = _OPERAND_NAME.sub(lambda m: renames.get(m.group(0), m.group(0)), rest)
        ops: tuple = ()
        if rest:
            try:
                ops = tuple(parse_operand(p, local) for p in split_top(rest))
            except OperandError as exc:
                raise self.err(line, col, f"{opcode}: {exc}") from None
        if guard is not None and not guard[0].startswith("%") and guard[0] not in local:
            raise self.err(line, col, f"guard {guard[0]!r} is not a predicate register")
        return Statement(index, line, end_line, col, body, opcode, ops, guard)
