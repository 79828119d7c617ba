"""A function body: its instructions and labels as numbered statements (guard, opcode, parsed operands), its `.reg`
declarations (register types), variable declarations and branch tables."""

from __future__ import annotations

import re

from tcforge.ptx.declarations import parse_decl
from tcforge.ptx.errors import PTXSyntaxError
from tcforge.ptx.ir import Function, Statement
from tcforge.ptx.lexer import Tokens
from tcforge.ptx.opcodes import KNOWN_ROOTS
from tcforge.ptx.operands import OperandError, parse_operand, split_top

_LABEL = re.compile(r"([$%A-Za-z_][\w$]*)\s*:(?!:)")
_GUARD = re.compile(r"@\s*(!?)\s*(%?[A-Za-z_$][\w$]*)\s+")
_OPCODE = re.compile(r"([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*)(?=\s|$)")
_REG_RANGE = re.compile(r"(%?[A-Za-z_$][\w$]*)<(\d+)>")
_LABELLED_DIRECTIVES = (".callprototype", ".branchtargets", ".calltargets")


class BodyReader:
    """Reads one function body at a time from the module's token cursor."""

    def __init__(self, toks: Tokens) -> None:
        self.file = toks.file
        self.toks = toks

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
                if directive:
                    self._body_directive(fn, body, sline, scol, local_regs, reg_types)
                else:
                    stmts.append(self._instruction(len(stmts) + 1, body, sline, scol, line, local_regs))
            elif kind == "{":
                if skip_line:
                    raise self.err(line, col, "unexpected '{' after a line directive")
                if parts:
                    parts.append("{")
                    vec += 1
                else:
                    depth += 1
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

    def _instruction(self, index: int, body: str, line: int, col: int, end_line: int, local: set[str]) -> Statement:
        guard = None
        pos = 0
        if body[0] == "@":
            gm = _GUARD.match(body)
            if gm is None:
                raise self.err(line, col, f"malformed guard in {body[:40]!r}")
            guard = (gm.group(2), gm.group(1) == "!")
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
        ops: tuple = ()
        if rest:
            try:
                ops = tuple(parse_operand(p, local) for p in split_top(rest))
            except OperandError as exc:
                raise self.err(line, col, f"{opcode}: {exc}") from None
        if guard is not None and not guard[0].startswith("%") and guard[0] not in local:
            raise self.err(line, col, f"guard {guard[0]!r} is not a predicate register")
        return Statement(index, line, end_line, col, body, opcode, ops, guard)
