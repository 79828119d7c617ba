"""What every `tcforge` command shares: a one-line-error argument parser, output paths checked before any work, and
progress bars (tqdm) shown on a terminal only."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from tcforge.errors import TcforgeError

T = TypeVar("T")


class UsageError(TcforgeError):
    """A malformed command line: the dispatcher prints it as one line, exit 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors raise UsageError (one line via the dispatcher) instead of printing usage and exiting,
    and which accepts option values that start with '-' (`--extent -1x5` reaches the command's own check)."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        return super().parse_args(_join_dash_values(self, list(args or [])), namespace)


def _options(p: argparse.ArgumentParser, takes_value: set[str], every: set[str]) -> None:
    for a in p._actions:
        every.update(a.option_strings)
        if a.option_strings and a.nargs != 0:
            takes_value.update(a.option_strings)
        if isinstance(a, argparse._SubParsersAction):
            for sub in a.choices.values():
                _options(sub, takes_value, every)


def _join_dash_values(p: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`--opt -1x5` -> `--opt=-1x5` where `--opt` takes a value and `-1x5` is no option of ours."""
    takes_value: set[str] = set()
    every: set[str] = set()
    _options(p, takes_value, every)
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if (a in takes_value and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1] != "-"
                and argv[i + 1].split("=", 1)[0] not in every):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def require_subcommand(parser: argparse.ArgumentParser, cmd: str | None) -> None:
    """A command group called bare: its help on stdout, then UsageError (one line, exit 2)."""
    if cmd is None:
        parser.print_help()
        sys.stdout.flush()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        raise UsageError(f"a subcommand is required: {', '.join(sub.choices)}")


def _probe_dir(d: Path, what: str) -> None:
    """Create and remove a temporary file in `d`: the only reliable writability test (root, /proc, read-only mounts)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".tcforge-probe-", dir=d)
    except OSError as exc:
        raise TcforgeError(f"{what}: cannot write into {str(d)!r} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(name)


def output_file(path: str | Path | None, option: str, make_parent: bool = False, stdout: bool = True) -> Path | None:
    """Check a file the command will write (None, or '-' where `stdout`, is stdout): its folder exists (or, with
    `make_parent`, is created) and is writable, and the path is not a folder. Character devices such as /dev/null are
    accepted, as any Unix tool accepts them."""
    if path is None or (stdout and str(path) == "-"):
        return None
    p = Path(path)
    what = f"{option} {str(path)!r}"
    if p.is_dir():
        raise TcforgeError(f"{what} is a folder; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if make_parent and not parent.exists():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TcforgeError(f"{what}: cannot create folder {str(parent)!r} ({exc.strerror or exc})") from None
    if not parent.exists():
        raise TcforgeError(f"{what}: folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise TcforgeError(f"{what}: {str(parent)!r} is not a folder")
    if p.exists():
        if not (p.is_file() or p.is_char_device()):
            raise TcforgeError(f"{what} is not a regular file")
        if not os.access(p, os.W_OK):
            raise TcforgeError(f"{what}: not writable")
        if p.is_char_device():
            return p
    _probe_dir(parent, what)
    return p


def output_dir(path: str, option: str) -> Path:
    """Create (with parents) and check a folder the command will write into, before any work starts."""
    p = Path(path)
    what = f"{option} {path!r}"
    if p.exists() and not p.is_dir():
        raise TcforgeError(f"{what} exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TcforgeError(f"{what}: cannot create the folder ({exc.strerror or exc})") from None
    _probe_dir(p, what)
    return p


def input_file(path: str, option: str) -> Path:
    """Check a file the command will read: it exists and is a file, not a folder."""
    p = Path(path)
    if p.is_dir():
        raise TcforgeError(f"{option} {path!r} is a folder, not a file")
    if not p.exists():
        raise TcforgeError(f"{option} {path!r}: no such file")
    if not os.access(p, os.R_OK):
        raise TcforgeError(f"{option} {path!r}: not readable")
    return p


def show_progress(quiet: bool = False) -> bool:
    """Progress goes to stderr, and only when it is a terminal and --quiet is off."""
    return not quiet and sys.stderr.isatty()


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "it",
             quiet: bool = False) -> Iterator[T]:
    """`items` wrapped in a tqdm bar on a terminal; the plain iterable otherwise."""
    if not show_progress(quiet):
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)


class Counter:
    """A bar advanced by hand (`update(n)`), for work that reports as it goes; a no-op off a terminal."""

    def __init__(self, total: int, desc: str, unit: str, quiet: bool = False) -> None:
        self._bar = None
        if show_progress(quiet):
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> Counter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


TOOL_VARIABLES = ("TCFORGE_NVCC", "TCFORGE_PTXAS", "TCFORGE_CUOBJDUMP", "TCFORGE_NVDISASM")


def check_tool_environment() -> None:
    """A TCFORGE_<TOOL> variable that is set must name an executable file: refused here, before any work."""
    for var in TOOL_VARIABLES:
        value = os.environ.get(var)
        if not value:
            continue
        p = Path(value)
        if p.is_dir():
            raise TcforgeError(f"{var}={value!r} is a folder; it must name the {var[8:].lower()} executable")
        if not p.is_file():
            raise TcforgeError(f"{var}={value!r}: no such file; unset it or point it at the "
                               f"{var[8:].lower()} executable")
        if not os.access(p, os.X_OK):
            raise TcforgeError(f"{var}={value!r} is not executable")
