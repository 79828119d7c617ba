"""`vprintf`, the device side of CUDA's printf: a call of the extern `vprintf(format, arguments)` reads the format
string and the packed argument buffer (each argument at its natural alignment: 32-bit integers, 64-bit integers,
doubles, floats promoted to doubles, pointers) from memory, formats them with C's rules and writes the text to
standard output (or to `out`), one thread after another in lane order; like CUDA's printf it returns the number of
arguments."""

from __future__ import annotations

import re
import struct
import sys
from collections.abc import Callable

import numpy as np

_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGaAcsp%])")
_LIMIT = 1 << 16  # the longest string read for a format or a %s argument


def _reader(ctx, fail):
    """`read(lane, address, n) -> bytes` at a generic address (global, shared, local or param memory)."""
    mem = ctx.mem

    def read(lane: int, addr: int, n: int) -> bytes:
        flat, offs = mem.locate_generic(np.array([addr]), np.array([lane]), n, fail, False)
        return bytes(mem.read(flat, offs, 1, n)[0])
    return read


def _cstring(read, lane: int, addr: int) -> bytes:
    """The NUL-terminated bytes at `addr`, read a byte at a time up to _LIMIT (a buffer's end stops it too)."""
    out = bytearray()
    while len(out) < _LIMIT:
        b = read(lane, addr + len(out), 1)
        if b == b"\0":
            break
        out += b
    return bytes(out)


def format_c(fmt: bytes, arg: Callable[[int], bytes], string: Callable[[int], bytes]) -> tuple[str, int]:
    """(text, arguments used) of C format `fmt`; `arg(size)` gives the next argument's bytes at its alignment,
    `string(pointer)` the bytes of a %s argument."""
    text, used, pos = [], 0, 0
    src = fmt.decode("latin-1")
    for m in _SPEC.finditer(src):
        text.append(src[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            text.append("%")
            continue
        if width == "*":
            width, used = str(struct.unpack("<i", arg(4))[0]), used + 1
        if prec == "*":
            prec, used = str(struct.unpack("<i", arg(4))[0]), used + 1
        wide = length in ("l", "ll", "j", "z", "t") or conv in "eEfFgGaAsp"
        raw = arg(8 if wide else 4)
        used += 1
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        if conv in "di":
            text.append((spec + "d") % int.from_bytes(raw, "little", signed=True))
        elif conv in "ouxX":
            text.append((spec + conv) % int.from_bytes(raw, "little"))
        elif conv == "c":
            text.append((spec + "c") % chr(raw[0]))
        elif conv == "s":
            ptr = int.from_bytes(raw, "little")
            text.append((spec + "s") % (string(ptr).decode("latin-1") if ptr else "(null)"))
        elif conv == "p":
            text.append((spec + "s") % hex(int.from_bytes(raw, "little")))
        elif conv in "aA":
            text.append(float.hex(struct.unpack("<d", raw)[0]))
        else:
            text.append((spec + conv) % struct.unpack("<d", raw)[0])
    text.append(src[pos:])
    return "".join(text), used


def b_vprintf(ctx, st, args: tuple, rets: tuple, out=None):
    """The statement `call (ret), vprintf, (format, arguments);` as one closure."""
    if len(args) != 2:
        ctx.fail_static(st, f"vprintf takes a format and an argument buffer, given {len(args)} arguments")
    fail = ctx.failer(st)
    read = _reader(ctx, fail)
    stream = out or sys.stdout

    def run(m):
        lanes = ctx.lanes(m)
        fmts = ctx.frame_param(args[0], 8, lanes)[lanes, :8].copy().view(np.uint64)[:, 0]
        bufs = ctx.frame_param(args[1], 8, lanes)[lanes, :8].copy().view(np.uint64)[:, 0]
        counts = np.zeros(len(lanes), np.int32)
        for i, lane in enumerate(lanes.tolist()):
            cursor = [int(bufs[i])]

            def arg(size: int, lane=lane, cursor=cursor) -> bytes:
                cursor[0] = (cursor[0] + size - 1) // size * size
                data = read(lane, cursor[0], size)
                cursor[0] += size
                return data

            text, counts[i] = format_c(_cstring(read, lane, int(fmts[i])), arg,
                                       lambda p, lane=lane: _cstring(read, lane, p))
            stream.write(text)
        if rets:
            buf = ctx.frame_param(rets[0], 4, lanes)
            buf[lanes, :4] = counts.view(np.uint8).reshape(-1, 4)
    return run
