"""The parsed form of a PTX module: its functions (`.entry` / `.func`) with parameters, declarations and linearised
statements (see tcforge.ptx.module for how statements are numbered), and the error the reader raises for malformed
input, carrying the file, line and column it points at."""

from __future__ import annotations

from dataclasses import dataclass, field

from tcforge.errors import TcforgeError


class PTXSyntaxError(TcforgeError):
    """Malformed or unsupported PTX; the message starts with `FILE:LINE:COL:` so editors and the CLI can point at it."""

    def __init__(self, file: str, line: int, col: int, message: str) -> None:
        self.file = file
        self.line = line
        self.col = col
        self.detail = message
        super().__init__(f"{file}:{line}:{col}: {message}")


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
