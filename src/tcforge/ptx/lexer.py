"""The PTX tokenizer: newlines, `;`, braces, strings and text runs with their line and column; comments dropped."""

from __future__ import annotations

import re
from functools import partial

from tcforge.ptx.errors import PTXSyntaxError

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
