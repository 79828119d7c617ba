"""The error the PTX reader raises for malformed input, carrying the file, line and column it points at."""

from __future__ import annotations

from tcforge.errors import TcforgeError


class PTXSyntaxError(TcforgeError):
    """Malformed or unsupported PTX; the message starts with `FILE:LINE:COL:` so editors and the CLI can point at it."""

    def __init__(self, file: str, line: int, col: int, message: str) -> None:
        self.file = file
        self.line = line
        self.col = col
        self.detail = message
        super().__init__(f"{file}:{line}:{col}: {message}")
