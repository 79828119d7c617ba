"""Device printf (`vprintf`): C formatting of a packed argument buffer, and a kernel whose threads print in lane
order with the argument count returned."""

from __future__ import annotations

import struct

import numpy as np
from tests.ptx.emulate.kernels import HEADER

from tcforge.ptx.emulate import emulate
from tcforge.ptx.emulate.ops_printf import format_c


def _packed(values: list[tuple[str, object]]) -> bytes:
    """An argument buffer as nvcc lays it out: each value at its natural alignment."""
    buf = bytearray()
    for fmt, v in values:
        size = struct.calcsize(fmt)
        buf += bytes(-len(buf) % size)
        buf += struct.pack("<" + fmt, v)
    return bytes(buf)


def test_format_c_reads_each_argument_at_its_alignment() -> None:
    buf = _packed([("i", -7), ("d", 2.0 / 3.0), ("Q", 0x1000), ("I", 0xBEEF), ("q", -(1 << 40)), ("i", 65),
                   ("i", 6), ("d", 1e-5), ("Q", 0)])
    pos = [0]

    def arg(size: int) -> bytes:
        pos[0] += -pos[0] % size
        pos[0] += size
        return buf[pos[0] - size:pos[0]]

    text, used = format_c(b"%d|%5.2f|%s|%#x|%lld|%c|%*.1e|%%|%-4s|%p", arg, {0x1000: b"ok"}.get)
    assert text == "-7| 0.67|ok|0xbeef|-1099511627776|A|1.0e-05|%|(null)|0x0" and used == 10


_KERNEL = HEADER + """
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 fmt[17] = {116, 37, 100, 32, 37, 46, 51, 102, 32, 37, 115, 32, 37, 108, 120, 10, 0};
.global .align 1 .b8 word[3] = {111, 107, 0};
.visible .entry k(.param .u64 k_out)
{
	.local .align 8 .b8 buf[32];
	.reg .b32 %r<8>;
	.reg .b64 %rd<16>;
	.reg .f64 %fd<2>;
	mov.u32 %r1, %tid.x;
	mov.u64 %rd1, buf;
	cvta.local.u64 %rd2, %rd1;
	st.local.u32 [%rd1], %r1;
	cvt.rn.f64.u32 %fd1, %r1;
	div.rn.f64 %fd1, %fd1, 0d4008000000000000;
	st.local.f64 [%rd1+8], %fd1;
	mov.u64 %rd3, word;
	cvta.global.u64 %rd4, %rd3;
	st.local.u64 [%rd1+16], %rd4;
	cvt.u64.u32 %rd5, %r1;
	shl.b64 %rd5, %rd5, 36;
	st.local.u64 [%rd1+24], %rd5;
	mov.u64 %rd6, fmt;
	cvta.global.u64 %rd7, %rd6;
	{
	.param .b64 param0;
	st.param.b64 [param0], %rd7;
	.param .b64 param1;
	st.param.b64 [param1], %rd2;
	.param .b32 retval0;
	call.uni (retval0), vprintf, (param0, param1);
	ld.param.b32 %r2, [retval0];
	}
	ld.param.u64 %rd8, [k_out];
	cvta.to.global.u64 %rd9, %rd8;
	mul.wide.u32 %rd10, %r1, 4;
	add.s64 %rd11, %rd9, %rd10;
	st.global.u32 [%rd11], %r2;
	ret;
}
"""


def test_threads_print_in_lane_order_and_get_the_argument_count(capsys) -> None:
    out = emulate(_KERNEL, "k", 1, 4, {"k_out": np.zeros(4, np.uint32)})["k_out"]
    assert capsys.readouterr().out == "".join(f"t{t} {t / 3:.3f} ok {t << 36:x}\n" for t in range(4))
    np.testing.assert_array_equal(out, [4, 4, 4, 4])
