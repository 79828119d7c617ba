"""The PTX module reader: header directives, declarations, `.entry`/`.func` with parameters, and linearised statements
(the parsed form is tcforge.ptx.ir's, re-exported here; tokens, declarations and a function's body are read by
tcforge.ptx.parse).

Statements are numbered as the enc5 analysis numbers them: from 1 inside the function body, one per instruction or
label, each with the physical line of its first token (`line`) and of its terminating `;` (`end_line`). Directives
(`.reg`, `.shared`, `.loc`, `.pragma`, ...) and scope braces are not statements; a multi-line instruction is one
statement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tcforge.ptx.ir import Decl, Function, Module, Param, PTXSyntaxError, Statement
from tcforge.ptx.operands import OperandError
from tcforge.ptx.parse import BodyReader, Tokens, parse_decl, parse_params

__all__ = ["Decl", "Function", "Module", "Param", "Statement", "read_module", "read_module_file"]

_HEADER = re.compile(
    r"\s*((?:\.(?:visible|extern|weak)\s+)*)\.(entry|func)\s*(?:\((?P<ret>[^()]*)\)\s*)?(?P<name>[A-Za-z_$][\w$]*)\s*"
    r"(?:\((?P<params>[^()]*)\))?(?P<tail>.*)",
    re.S,
)
_PERF = re.compile(r"\.(maxntid|reqntid|minnctapersm|maxnreg|reqnctapercluster|maxclusterrank|explicitcluster|noreturn"
                   r"|blocksareclusters|pragma)\b\s*([0-9,\s]*)")
_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc")


class _Reader:
    """Recursive-descent reader over the token cursor."""

    def __init__(self, file: str, text: str, progress: Callable[[int], None] | None = None) -> None:
        self.file = file
        self.progress = progress  # called with the line reached after each function body
        self.toks = Tokens(file, text)
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
            params = parse_params(self.file, m.group("params") or "", line, col)
            kind = m.group(2)
            self.functions.append(Function(m.group("name"), kind, params, line, line, line, has_body=False))
            return
        decl = parse_decl(self.file, s, line, col)
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
        params = parse_params(self.file, m.group("params") or "", *start)
        returns = parse_params(self.file, m.group("ret") or "", *start)
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
        BodyReader(self.toks).read(fn, brace)
        self.functions.append(fn)
        if self.progress is not None:
            self.progress(fn.end_line)


def read_module(text: str | bytes, file: str = "<ptx>", progress: Callable[[int], None] | None = None) -> Module:
    """Parse PTX text into a Module; raises PTXSyntaxError (with file, line, col) on malformed input. `progress`, if
    given, is called with the line reached after each function (for a progress display on large modules)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            prefix = text[: exc.start]
            line = prefix.count(b"\n") + 1
            col = exc.start - (prefix.rfind(b"\n") + 1) + 1
            raise PTXSyntaxError(file, line, col, "input is not UTF-8 text (binary file?)") from None
    if text.startswith("\ufeff"):  # a UTF-8 byte-order mark (editors on Windows write one): not part of the PTX
        text = text[1:]
    if "\x00" in text:
        i = text.index("\x00")
        line = text.count("\n", 0, i) + 1
        raise PTXSyntaxError(file, line, i - (text.rfind("\n", 0, i) + 1) + 1, "NUL byte: binary input, not PTX")
    if not text.strip():
        raise PTXSyntaxError(file, 1, 1, "empty PTX module")
    reader = _Reader(file, text, progress)
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
