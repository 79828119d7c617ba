"""PTX from where it really lives: fatbin containers inside ELF and PE binaries, .fatbin and .cubin files, read in
pure Python (docs/spec.md, "PTX inside binaries", describes the format as verified against nvcc 13.0 and cuobjdump).

A file's containers are found here (`read_binary`): a .fatbin, an ELF host object / executable / shared library
(sections `.nv_fatbin`, `__nv_relfatbin`), a PE .dll/.exe (sections such as `.nv_fatb`), or a cubin (SASS only, no
PTX); the container itself is read by tcforge.extract.fatbin.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from tcforge.extract.fatbin import MAGIC_BYTES, Entry, ExtractError, read_container, scan

__all__ = ["Binary", "Entry", "ExtractError", "ptx_sources", "ptx_text", "read_binary", "read_container", "scan",
           "sniff"]


EM_CUDA = 190
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin", ".nv_fatb", "__nv_fatbin")


@dataclass
class Binary:
    """What a file holds: its format, and each found entry with the section (or `-`) it sits in."""

    path: str
    format: str  # "fatbin", "elf", "cubin", "pe", "ptx", "unknown"
    entries: list[tuple[str, Entry]] = field(default_factory=list)
    note: str = ""  # e.g. why there is no PTX

    def ptx(self) -> list[tuple[str, Entry]]:
        """The PTX entries."""
        return [(s, e) for s, e in self.entries if e.kind == "PTX"]


def sniff(data: bytes) -> str:
    """The format of a file by its first bytes."""
    if data[:4] == MAGIC_BYTES:
        return "fatbin"
    if data[:4] == b"\x7fELF":
        return "elf"
    if data[:2] == b"MZ":
        return "pe"
    if re.search(rb"^\s*\.version\s", data[:8192], re.M):  # PTX: a .version directive at a line's start
        return "ptx"
    return "unknown"


def read_binary(path: str | Path, data: bytes | None = None) -> Binary:
    """Every fatbin entry of a file; ExtractError (one line) on a truncated or corrupt container."""
    name = str(path)
    if data is None:
        data = Path(path).read_bytes()
    fmt = sniff(data)
    if fmt == "fatbin":  # one container, or several back to back (read the first strictly: it names the format)
        first, end = read_container(data, 0, 0, name)
        return Binary(name, fmt, [("-", e) for e in first + scan(data, end, name=name, first=1)])
    if fmt == "elf":
        return _read_elf(name, data)
    if fmt == "pe":
        return _read_pe(name, data)
    if fmt == "ptx":
        return Binary(name, fmt, note="a PTX text file, not a binary")
    entries = [("-", e) for e in scan(data, name=name)]
    return Binary(name, "unknown" if not entries else "raw", entries,
                  "" if entries else "no ELF, PE or fatbin header and no fatbin container inside")


def _read_sections(name: str, found: list[tuple[str, int, int]], data: bytes, fmt: str) -> Binary:
    """Scan the named fatbin sections, else (a stripped or unusual layout) the whole file."""
    chosen = [s for s in found if s[0] in FATBIN_SECTIONS] or [("-", 0, len(data))]
    out: list[tuple[str, Entry]] = []
    for sec, off, size in chosen:
        if off + size > len(data):
            raise ExtractError(f"{name}: section {sec} runs past the end of the file (truncated file?)")
        out += [(sec, e) for e in scan(data, off, off + size, name, first=len({e.container for _, e in out}))]
    return Binary(name, fmt, out, "" if out else "no fatbin container (no CUDA device code)")


def _read_elf(name: str, data: bytes) -> Binary:
    if len(data) < 64:
        raise ExtractError(f"{name}: truncated ELF header")
    is64, little = data[4] == 2, data[5] == 1
    e = "<" if little else ">"
    machine = struct.unpack_from(e + "H", data, 18)[0]
    if machine == EM_CUDA:  # a cubin: SASS for one architecture, never PTX
        flags = struct.unpack_from(e + "I", data, 48 if is64 else 36)[0]
        arch = (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF
        entry = Entry(-1, 0, 0, "ELF", arch, 0, (data[8], 0), data, len(data), name)
        return Binary(name, "cubin", [("-", entry)], "a cubin holds SASS only; the PTX it came from is not inside")
    try:
        if is64:
            shoff, = struct.unpack_from(e + "Q", data, 40)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 58)
        else:
            shoff, = struct.unpack_from(e + "I", data, 32)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 46)
        sections = []
        for i in range(shnum):
            o = shoff + i * shentsize
            if is64:
                nm, typ, _, _, off, size = struct.unpack_from(e + "IIQQQQ", data, o)
            else:
                nm, typ, _, _, off, size = struct.unpack_from(e + "IIIIII", data, o)
            sections.append((nm, typ, off, size))
        strtab = sections[shstrndx] if shnum else None
    except struct.error:
        raise ExtractError(f"{name}: truncated ELF section table") from None
    found = []
    for nm, typ, off, size in sections:
        if typ == 8 or strtab is None:  # SHT_NOBITS has no bytes in the file
            continue
        s = data[strtab[2] + nm: data.find(b"\x00", strtab[2] + nm)].decode("latin-1")
        found.append((s, off, size))
    return _read_sections(name, found, data, "elf")


def _read_pe(name: str, data: bytes) -> Binary:
    try:
        pe, = struct.unpack_from("<I", data, 0x3C)
        if data[pe:pe + 4] != b"PE\x00\x00":
            raise ExtractError(f"{name}: MZ header without a PE signature")
        nsec, = struct.unpack_from("<H", data, pe + 6)
        opt_size, = struct.unpack_from("<H", data, pe + 20)
        table = pe + 24 + opt_size
        found = []
        for i in range(nsec):
            raw_name, _, _, raw_size, raw_off = struct.unpack_from("<8sIIII", data, table + 40 * i)
            found.append((raw_name.rstrip(b"\x00").decode("latin-1"), raw_off, raw_size))
    except struct.error:
        raise ExtractError(f"{name}: truncated PE header or section table") from None
    return _read_sections(name, found, data, "pe")


# the PTX a file holds -------------------------------------------------------------------------------------------------


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
