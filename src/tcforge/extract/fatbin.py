"""The fatbin container (magic 0xBA55ED50): a 16-byte header, then entries of one header each followed by a payload,
each entry PTX text or a cubin (ELF holding SASS) for one architecture, stored raw, LZ4- or zstd-compressed.

Layout as verified against nvcc 13.0 and cuobjdump (docs/spec.md, "PTX inside binaries", has the byte tables).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from tcforge.errors import TcforgeError
from tcforge.extract.lz4 import LZ4Error, lz4_block_decompress

MAGIC = 0xBA55ED50
MAGIC_BYTES = struct.pack("<I", MAGIC)
_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, size of the entries that follow
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # the first 64 bytes of an entry header

KINDS = {1: "PTX", 2: "ELF"}  # ELF: a cubin, the architecture's SASS
FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_LINUX = 0x10
FLAG_LZ4 = 0x2000  # nvcc --compress-mode=speed
FLAG_ZSTD = 0x8000  # nvcc --compress-mode=default|size|balance (and PTX by default)
FLAG_ARCH_SPECIFIC = 0x100000  # sm_90a-style "a" target


class ExtractError(TcforgeError):
    """A truncated or corrupt container, or an entry that cannot be decompressed."""


@dataclass(frozen=True)
class Entry:
    """One entry of a fatbin container; `payload` is the stored (possibly compressed) bytes, padding removed."""

    container: int  # index of the container in its file
    index: int  # index of the entry in its container
    offset: int  # file offset of the entry header
    kind: str  # "PTX", "ELF" or "kind N"
    arch: int  # 80 for sm_80 / compute_80
    flags: int
    ptx_version: tuple[int, int]  # (major, minor) of PTX entries; the cubin ABI version for ELF entries
    payload: bytes
    size: int  # bytes once decompressed
    file: str = "<data>"  # the file it was read from, for messages

    @property
    def compression(self) -> str:
        """'zstd', 'lz4' or 'none'."""
        return "zstd" if self.flags & FLAG_ZSTD else "lz4" if self.flags & FLAG_LZ4 else "none"

    @property
    def arch_name(self) -> str:
        """sm_90a for an arch-specific SASS entry, compute_80 for PTX."""
        suffix = "a" if self.flags & FLAG_ARCH_SPECIFIC else ""
        return f"{'compute' if self.kind == 'PTX' else 'sm'}_{self.arch}{suffix}"

    def data(self) -> bytes:
        """The entry decompressed; PTX without its terminating NUL and padding."""
        raw = _decompress(self)
        return raw.split(b"\x00", 1)[0] if self.kind == "PTX" else raw


def _decompress(e: Entry) -> bytes:
    where = f"{e.file}: container {e.container} entry {e.index} ({e.kind} {e.arch_name}) at offset {e.offset:#x}"
    if e.compression == "none":
        return e.payload
    if e.compression == "lz4":
        try:
            return lz4_block_decompress(e.payload, e.size)
        except LZ4Error as exc:
            raise ExtractError(f"{where}: corrupt LZ4 data: {exc}") from None
    try:
        out = _zstd_decompress(e.payload, e.size)
    except ImportError:
        raise ExtractError(f"{where}: zstd-compressed; reading it needs the zstandard package "
                           "(pip install zstandard)") from None
    except Exception as exc:  # zstandard.ZstdError / compression.zstd.ZstdError
        raise ExtractError(f"{where}: corrupt zstd data: {exc}") from None
    if len(out) != e.size:
        raise ExtractError(f"{where}: zstd data expands to {len(out)} bytes, header says {e.size}")
    return out


def _zstd_decompress(data: bytes, size: int) -> bytes:
    """zstandard (a dependency) where installed, else Python 3.14's compression.zstd."""
    try:
        import zstandard
    except ModuleNotFoundError:
        from compression import zstd  # type: ignore[import-not-found]  # ImportError before 3.14

        return zstd.decompress(data)
    return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)


def looks_like_container(data: bytes, offset: int = 0) -> bool:
    """True when a plausible container header (magic, version 1, header size 16) starts at `offset`."""
    if offset + _HEADER.size > len(data):
        return False
    magic, version, hsize, _ = _HEADER.unpack_from(data, offset)
    return magic == MAGIC and version == 1 and hsize == _HEADER.size


def read_container(data: bytes, offset: int = 0, container: int = 0, name: str = "<data>") -> tuple[list[Entry], int]:
    """The entries of the container at `offset` and the offset just past it; ExtractError on a truncated one."""
    where = f"{name}: fatbin container at offset {offset:#x}"
    if offset + _HEADER.size > len(data):
        raise ExtractError(f"{where}: truncated header ({len(data) - offset} of {_HEADER.size} bytes)")
    magic, version, hsize, fat_size = _HEADER.unpack_from(data, offset)
    if magic != MAGIC:
        raise ExtractError(f"{where}: bad magic {magic:#010x} (expected {MAGIC:#010x})")
    if version != 1 or hsize < _HEADER.size:
        raise ExtractError(f"{where}: unsupported version {version} / header size {hsize}")
    end = offset + hsize + fat_size
    if end > len(data):
        raise ExtractError(f"{where}: truncated: header says {fat_size} bytes of entries, {len(data) - offset - hsize}"
                           " present")
    entries, pos = [], offset + hsize
    while pos < end:
        if pos + _ENTRY.size > end:
            raise ExtractError(f"{where}: entry {len(entries)} at {pos:#x}: truncated entry header")
        (kind, _, ehsize, size, csize, _, minor, major, arch, _, _, flags, _, dsize) = _ENTRY.unpack_from(data, pos)
        if ehsize < _ENTRY.size or pos + ehsize + size > end:
            raise ExtractError(f"{where}: entry {len(entries)} at {pos:#x}: header size {ehsize} / payload {size} "
                               "bytes run past the container")
        compressed = flags & (FLAG_LZ4 | FLAG_ZSTD)
        if compressed and not 0 < csize <= size:
            raise ExtractError(f"{where}: entry {len(entries)} at {pos:#x}: compressed size {csize} outside its "
                               f"{size}-byte payload")
        payload = data[pos + ehsize: pos + ehsize + (csize if compressed else size)]
        entries.append(Entry(container, len(entries), pos, KINDS.get(kind, f"kind {kind}"), arch, flags,
                             (major, minor), payload, dsize if compressed else size, name))
        pos += ehsize + size
    return entries, end


def scan(data: bytes, start: int = 0, stop: int | None = None, name: str = "<data>", first: int = 0) -> list[Entry]:
    """Every container in data[start:stop]: read one, then look for the next magic after it."""
    stop = len(data) if stop is None else stop
    entries: list[Entry] = []
    pos, n = start, first
    while True:
        pos = data.find(MAGIC_BYTES, pos, stop)
        if pos < 0:
            return entries
        if not looks_like_container(data, pos):
            pos += 4
            continue
        found, pos = read_container(data[:stop], pos, n, name)
        entries += found
        n += 1
