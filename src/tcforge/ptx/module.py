"""The PTX module reader: header directives, declarations, `.entry`/`.func` with parameters, and linearised statements.

Statements are numbered as the enc5 analysis numbers them: from 1 inside the function body, one per instruction or
label, each with the physical line of its first token (`line`) and of its terminating `;` (`end_line`). Directives
(`.reg`, `.shared`, `.loc`, `.pragma`, ...) and scope braces are not statements; a multi-line instruction is one
statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tcforge.ptx.errors import PTXSyntaxError
from tcforge.ptx.opcodes import KNOWN_ROOTS, TYPE_BYTES
from tcforge.ptx.operands import OperandError, parse_operand, split_top


@dataclass(slots=True)
class Statement:
    """One linearised statement: an instruction (with guard, opcode, operands) or a label (`opcode == ':'`)."""

    index: int
    line: int
    end_line: int
    col: int
    text: str
    opcode: str
    operands: tuple
    guard: tuple[str, bool] | None = None
    label: str | None = None

    @property
    def is_label(self) -> bool:
        """True for a label statement."""
        return self.label is not None


@dataclass
class Param:
    """A kernel or function parameter with its byte offset in the parameter block."""

    name: str
    type: str
    size: int
    align: int
    offset: int
    array: int | None = None
    pointer_space: str | None = None


@dataclass
class Decl:
    """A variable declaration (`.shared`, `.global`, `.const`, `.local`) or a `.texref`/`.surfref`/`.samplerref`."""

    space: str
    name: str
    type: str | None
    size: int | None
    align: int | None
    line: int
    extern: bool = False


@dataclass
class Function:
    """A `.entry` kernel or `.func` with its parameters, performance directives, registers and statements."""

    name: str
    kind: str
    params: list[Param]
    line: int
    body_line: int
    end_line: int
    statements: list[Statement] = field(default_factory=list)
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)
    reg_types: dict[str, str] = field(default_factory=dict)
    decls: list[Decl] = field(default_factory=list)
    returns: list[Param] = field(default_factory=list)
    has_body: bool = True
    branch_tables: dict[str, list[str]] = field(default_factory=dict)

    @property
    def param_block_size(self) -> int:
        """Bytes of the parameter block (end of the last parameter)."""
        return max((p.offset + p.size for p in self.params), default=0)


@dataclass
class Module:
    """A parsed PTX module."""

    file: str
    version: str | None
    target: tuple[str, ...]
    address_size: int | None
    functions: list[Function]
    decls: list[Decl]
    lines: int

    @property
    def entries(self) -> list[Function]:
        """The `.entry` kernels that have a body."""
        return [f for f in self.functions if f.kind == "entry" and f.has_body]

    def function(self, name: str | None = None) -> Function:
        """The named entry (or .func); with no name, the only entry. Raises PTXSyntaxError naming the choices."""
        bodies = [f for f in self.functions if f.has_body]
        if name is None:
            if len(self.entries) == 1:
                return self.entries[0]
            names = ", ".join(f.name for f in self.entries) or "none"
            raise PTXSyntaxError(self.file, 1, 1,
                                 f"module has {len(self.entries)} entries ({names}); pick one with --entry")
        for f in bodies:
            if f.name == name:
                return f
        names = ", ".join(f.name for f in self.entries) or "none"
        raise PTXSyntaxError(self.file, 1, 1, f"entry {name!r} not found; entries: {names}")


_TOKEN = re.compile(r'(\n)|(//[^\n]*)|(/\*.*?\*/)|("(?:[^"\\\n]|\\.)*")|([;{}])|([^\n;{}"/]+)|(.)', re.S)
_LABEL = re.compile(r"([$%A-Za-z_][\w$]*)\s*:(?!:)")
_GUARD = re.compile(r"@\s*(!?)\s*(%?[A-Za-z_$][\w$]*)\s+")
_OPCODE = re.compile(r"([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*)(?=\s|$)")
_HEADER = re.compile(
    r"\s*((?:\.(?:visible|extern|weak)\s+)*)\.(entry|func)\s*(?:\((?P<ret>[^()]*)\)\s*)?(?P<name>[A-Za-z_$][\w$]*)\s*"
    r"(?:\((?P<params>[^()]*)\))?(?P<tail>.*)",
    re.S,
)
_PERF = re.compile(r"\.(maxntid|reqntid|minnctapersm|maxnreg|reqnctapercluster|maxclusterrank|explicitcluster|noreturn"
                   r"|blocksareclusters|pragma)\b\s*([0-9,\s]*)")
_DECL = re.compile(r"((?:\.(?:extern|visible|weak|common)\s+)*)"
                   r"\.(shared|global|const|local|texref|surfref|samplerref)\b"
                   r"(.*)", re.S)
_NAME_ARR = re.compile(r"([A-Za-z_$%][\w$]*)(?:\[(\d*)\])?")
_REG_RANGE = re.compile(r"(%?[A-Za-z_$][\w$]*)<(\d+)>")
_LABELLED_DIRECTIVES = (".callprototype", ".branchtargets", ".calltargets")
_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc")
_MODULE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc", ".section", ".pragma", ".alias")


class _Tokens:
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


def _parse_params(file: str, text: str, line: int, col: int) -> list[Param]:
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


def _parse_decl(file: str, text: str, line: int, col: int) -> Decl | None:
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


class _Reader:
    """Recursive-descent reader over the token cursor."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.toks = _Tokens(file, text)
        self.functions: list[Function] = []
        self.decls: list[Decl] = []
        self.version: str | None = None
        self.target: tuple[str, ...] = ()
        self.address_size: int | None = None

    def err(self, line: int, col: int, msg: str) -> PTXSyntaxError:
        """A located PTXSyntaxError."""
        return PTXSyntaxError(self.file, line, col, msg)

    def read(self) -> None:
        """Read module-level items until the end of the text."""
        item: list[str] = []
        start = (1, 1)
        seen_any = False
        nxt = self.toks.next
        while True:
            tok = nxt()
            if tok is None:
                break
            kind, text, line, col = tok
            if kind == "nl":
                if item:
                    head = item[0].lstrip()
                    if head.split(None, 1)[0] in _LINE_DIRECTIVES:
                        self._line_directive("".join(item).strip(), *start)
                        item = []
                    else:
                        item.append(" ")
                continue
            if kind == "text":
                if not item:
                    s = text.lstrip()
                    if not s:
                        continue
                    start = (line, col + len(text) - len(s))
                    if not seen_any and not s.startswith(".version"):
                        raise self.err(*start,
                                       f"expected '.version' at the start of a PTX module, got {s.split()[0]!r}")
                    seen_any = True
                    if not s.startswith("."):
                        raise self.err(*start, f"unknown token {s.split()[0]!r} at module level")
                    text = s
                item.append(text)
                continue
            if kind == "str":
                if not item:
                    raise self.err(line, col, "unexpected string at module level")
                item.append(text)
                continue
            if kind == ";":
                if not item:
                    raise self.err(line, col, "unexpected ';'")
                self._module_item("".join(item), *start)
                item = []
                continue
            if kind == "{":
                if not item:
                    raise self.err(line, col, "unexpected '{' at module level")
                header = "".join(item)
                item = []
                stripped = header.strip()
                if _HEADER.match(stripped) and re.search(r"\.(entry|func)\b", stripped):
                    self._function(header, start, (line, col))
                elif stripped.startswith(".section"):
                    self._skip_braces(line, col)
                elif "=" in stripped:
                    self._skip_braces(line, col)
                    self._expect_semicolon(stripped, start)
                else:
                    raise self.err(line, col, f"unexpected '{{' after {stripped.split()[0]!r}")
                continue
            if kind == "}":
                raise self.err(line, col, "unbalanced '}' at module level")
        if item:
            head = item[0].lstrip()
            if head.split(None, 1)[0] in _LINE_DIRECTIVES:
                self._line_directive("".join(item).strip(), *start)
            else:
                raise self.err(self.toks.line, 1, f"unexpected end of file: unterminated {head.split()[0]!r}")
        if not seen_any:
            raise self.err(1, 1, "empty PTX module (no .version directive)")

    def _line_directive(self, text: str, line: int, col: int) -> None:
        words = text.split()
        d = words[0]
        if d == ".version":
            if len(words) != 2 or not re.fullmatch(r"\d+\.\d+", words[1]):
                raise self.err(line, col, f"malformed .version {text!r}")
            self.version = words[1]
        elif d == ".target":
            self.target = tuple(w.strip() for w in " ".join(words[1:]).split(",") if w.strip())
            if not self.target:
                raise self.err(line, col, "malformed .target")
        elif d == ".address_size":
            if len(words) != 2 or words[1] not in ("32", "64"):
                raise self.err(line, col, f"malformed .address_size {text!r}")
            self.address_size = int(words[1])
        elif d in (".file", ".loc"):
            pass
        else:
            raise self.err(line, col, f"unknown directive {d!r}")

    def _module_item(self, text: str, line: int, col: int) -> None:
        s = text.strip()
        first = s.split()[0]
        if first in (".pragma", ".alias"):
            return
        if re.search(r"\.(entry|func)\b", s) and _HEADER.match(s):
            m = _HEADER.match(s)
            params = _parse_params(self.file, m.group("params") or "", line, col)
            kind = m.group(2)
            self.functions.append(Function(m.group("name"), kind, params, line, line, line, has_body=False))
            return
        decl = _parse_decl(self.file, s, line, col)
        if decl is None:
            raise self.err(line, col, f"unknown directive {first!r}")
        self.decls.append(decl)

    def _skip_braces(self, line: int, col: int) -> None:
        depth = 1
        while depth:
            tok = self.toks.next()
            if tok is None:
                raise self.err(self.toks.line, 1, f"unexpected end of file: '{{' opened at {line}:{col} is not closed")
            if tok[0] == "{":
                depth += 1
            elif tok[0] == "}":
                depth -= 1

    def _expect_semicolon(self, what: str, start: tuple[int, int]) -> None:
        while True:
            tok = self.toks.next()
            if tok is None:
                raise self.err(self.toks.line, 1, f"unexpected end of file: missing ';' after {what.split()[0]!r}")
            if tok[0] == "nl" or (tok[0] == "text" and not tok[1].strip()):
                continue
            if tok[0] == ";":
                self._module_item(what, *start)
                return
            raise self.err(tok[2], tok[3], f"expected ';' after initializer, got {tok[1].strip()!r}")

    def _function(self, header: str, start: tuple[int, int], brace: tuple[int, int]) -> None:
        m = _HEADER.match(header.strip())
        params = _parse_params(self.file, m.group("params") or "", *start)
        returns = _parse_params(self.file, m.group("ret") or "", *start)
        directives: dict[str, tuple[int, ...]] = {}
        tail = m.group("tail").strip()
        pos = 0
        while pos < len(tail):
            pm = _PERF.match(tail, pos)
            if pm is None:
                raise self.err(*start, f"unknown function attribute {tail[pos:].split()[0]!r}")
            nums = tuple(int(x) for x in re.findall(r"\d+", pm.group(2)))
            directives[pm.group(1)] = nums
            pos = pm.end()
            while pos < len(tail) and tail[pos].isspace():
                pos += 1
        fn = Function(m.group("name"), m.group(2), params, start[0], brace[0], brace[0], directives=directives,
                      returns=returns)
        self._body(fn, brace)
        self.functions.append(fn)

    def _body(self, fn: Function, brace: tuple[int, int]) -> None:
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
            decl = _parse_decl(self.file, body, line, col)
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


def read_module(text: str | bytes, file: str = "<ptx>") -> Module:
    """Parse PTX text into a Module; raises PTXSyntaxError (with file, line, col) on malformed input."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            prefix = text[: exc.start]
            line = prefix.count(b"\n") + 1
            col = exc.start - (prefix.rfind(b"\n") + 1) + 1
            raise PTXSyntaxError(file, line, col, "input is not UTF-8 text (binary file?)") from None
    if "\x00" in text:
        i = text.index("\x00")
        line = text.count("\n", 0, i) + 1
        raise PTXSyntaxError(file, line, i - (text.rfind("\n", 0, i) + 1) + 1, "NUL byte: binary input, not PTX")
    if not text.strip():
        raise PTXSyntaxError(file, 1, 1, "empty PTX module")
    reader = _Reader(file, text)
    try:
        reader.read()
    except OperandError as exc:  # a bracket or list error outside an instruction (parameter lists, declarations)
        raise PTXSyntaxError(file, reader.toks.line, 1, str(exc)) from None
    return Module(file, reader.version, reader.target, reader.address_size, reader.functions, reader.decls,
                  text.count("\n") + 1)


def read_module_file(path: str | Path) -> Module:
    """Read and parse a PTX file; a missing or unreadable file is a PTXSyntaxError at 1:1."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PTXSyntaxError(str(path), 1, 1, f"cannot read file: {exc.strerror or exc}") from None
    return read_module(data, str(path))
