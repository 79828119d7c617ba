"""PTX from where it really lives: fatbin containers inside ELF and PE binaries, .fatbin and .cubin files, read in
pure Python (docs/extract.md describes the format as verified against nvcc 13.0 and cuobjdump)."""

from __future__ import annotations

from pathlib import Path

from tcforge.extract.binary import Binary, read_binary, sniff
from tcforge.extract.fatbin import Entry, ExtractError, read_container, scan

__all__ = ["Binary", "Entry", "ExtractError", "ptx_sources", "ptx_text", "read_binary", "read_container", "scan",
           "sniff"]


def ptx_sources(path: str | Path, data: bytes | None = None) -> list[tuple[str, bytes]]:
    """The PTX texts a file holds, as (label, bytes): the file itself when it is PTX, else every PTX entry of its
    fatbin containers, labelled `FILE[compute_80#2]` (architecture, entry number). ExtractError when it holds none."""
    name = str(path)
    if data is None:
        data = Path(path).read_bytes()
    fmt = sniff(data)
    if fmt in ("ptx", "unknown") and b"\x00" not in data[:4096]:
        return [(name, data)]  # text: the PTX reader reports what is wrong with it
    binary = read_binary(name, data)
    found = binary.ptx()
    if not found:
        why = binary.note or f"its {len(binary.entries)} entries are all SASS"
        raise ExtractError(f"{name}: no PTX inside ({binary.format}: {why})")
    return [(f"{name}[{e.arch_name}#{i + 1}]", e.data()) for i, (_, e) in enumerate(found)]


def ptx_text(path: str | Path, arch: str | None = None, data: bytes | None = None) -> tuple[str, bytes]:
    """One PTX text of a file, for a tool that runs a single module (`tcforge emulate`): the file itself when it is
    PTX; in a binary, the PTX entry whose architecture matches the glob `arch` (e.g. 'compute_90a'), or the only one.
    ExtractError names the choices when that is ambiguous."""
    import fnmatch

    found = ptx_sources(path, data)
    if arch is not None:
        found = [(label, text) for label, text in found if fnmatch.fnmatchcase(label.rsplit("[", 1)[-1], f"{arch}#*")]
    if len(found) != 1:
        labels = ", ".join(label for label, _ in ptx_sources(path, data))
        raise ExtractError(f"{path}: {len(found)} PTX entries {'match ' + repr(arch) if arch else 'inside'} "
                           f"({labels}); pick one by architecture")
    return found[0]
