"""A pure-Python LZ4 *block* decoder: the format of fatbin entries compressed with nvcc `--compress-mode=speed`."""

from __future__ import annotations


class LZ4Error(ValueError):
    """The block is truncated or refers outside the data decoded so far."""


def _extended(src: bytes, i: int, length: int, what: str) -> tuple[int, int]:
    """A 4-bit length of 15 plus the bytes from src[i] up to and including the first one below 255: (length, next i)."""
    while True:
        if i >= len(src):
            raise LZ4Error(f"truncated {what} length")
        b = src[i]
        i += 1
        length += b
        if b != 255:
            return length, i


def lz4_block_decompress(src: bytes, size: int) -> bytes:
    """Decode one raw LZ4 block (no frame header) that expands to exactly `size` bytes."""
    out = bytearray()
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            lit, i = _extended(src, i, lit, "literal")
        if i + lit > n:
            raise LZ4Error("literals run past the end of the block")
        out += src[i:i + lit]
        i += lit
        if i >= n:  # the last sequence has literals only
            break
        if i + 2 > n:
            raise LZ4Error("truncated match offset")
        offset = src[i] | src[i + 1] << 8
        i += 2
        if offset == 0 or offset > len(out):
            raise LZ4Error(f"match offset {offset} outside the {len(out)} bytes decoded so far")
        mlen = token & 15
        if mlen == 15:
            mlen, i = _extended(src, i, mlen, "match")
        mlen += 4
        start = len(out) - offset
        if offset >= mlen:
            out += out[start:start + mlen]
        else:  # overlapping copy: the match repeats its own output
            for k in range(mlen):
                out.append(out[start + k])
        if len(out) > size:
            raise LZ4Error(f"block expands past its stated {size} bytes")
    if len(out) != size:
        raise LZ4Error(f"block expands to {len(out)} bytes, header says {size}")
    return bytes(out)
