"""Hand-written PTX test kernels: `run_body(BODY, inputs)` wraps a body into an entry in which thread t reads its
operands at `[%rd4 + 4*i]` (row t of `inputs`, u32 words) and writes its results at `[%rd6 + 4*i]` (row t of the
output); %r0 is the global thread index. Also `round_f32`, the exact-rational f32 rounding the tests hold results to,
`tma_box_reference`, what a TMA box load and store give by the swizzle's row rule, `fns_reference`, fns by the
PTX ISA's loop, and `video_reference`, a SIMD video instruction by the PTX ISA's pseudocode."""

from __future__ import annotations

import functools
import re
from fractions import Fraction

import numpy as np
from tools.corpus.asyncproxy import im2col_geometry

from tcforge.ptx.emulate import emulate

HEADER = """.version 8.0
.target sm_90a
.address_size 64
"""

TEMPLATE = HEADER + """{funcs}
.visible .entry k(
	.param .u64 k_out,
	.param .u64 k_in
)
{{
	.reg .pred %p<32>;
	.reg .b16 %h<32>;
	.reg .b32 %r<64>;
	.reg .b64 %rd<32>;
	.reg .f32 %f<32>;
	.reg .f64 %fd<16>;
	{decls}
	ld.param.u64 %rd1, [k_out];
	ld.param.u64 %rd2, [k_in];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r0, %r2, %r3, %r1;
	mul.wide.u32 %rd3, %r0, {in_stride};
	add.s64 %rd4, %rd2, %rd3;
	mul.wide.u32 %rd5, %r0, {out_stride};
	add.s64 %rd6, %rd1, %rd5;
{body}
	ret;
}}
"""


def kernel_text(body: str, in_words: int, out_words: int, decls: str = "", funcs: str = "") -> str:
    """The PTX of a test kernel."""
    return TEMPLATE.format(body=body, in_stride=4 * in_words, out_stride=4 * out_words, decls=decls, funcs=funcs)


def run_body(body: str, inputs: np.ndarray, out_words: int, *, block: int = 32, decls: str = "", funcs: str = "",
             numerics: str = "hopper", out_init: np.ndarray | None = None, stats: dict | None = None) -> np.ndarray:
    """Run a body over len(inputs) threads (blocks of `block`); returns (threads, out_words) uint32."""
    inputs = np.ascontiguousarray(inputs, dtype=np.uint32)
    if inputs.ndim == 1:
        inputs = inputs[:, None]
    threads = inputs.shape[0]
    out = np.zeros((threads, out_words), np.uint32) if out_init is None else out_init.copy()
    text = kernel_text(body, inputs.shape[1], out_words, decls, funcs)
    res = emulate(text, "k", (threads // block, 1, 1), (block, 1, 1), {"k_out": out, "k_in": inputs},
                  numerics, file="k.ptx", stats=stats)
    return res.get("k_out", out)


def round_f32(q: Fraction, mode: str = "rn") -> np.uint32:
    """Exact rational -> f32 bits under rn/rz/rm/rp (normal and subnormal range; q = 0 gives +0; rn also beyond the
    largest finite value: it, or an infinity of q's sign from half an ulp past it), by integer division: |q| scaled
    to a 24-bit significand (subnormals to 2^-149's multiples), the remainder against the divisor decides."""
    if q == 0:
        return np.uint32(0)
    if mode == "rn" and abs(q) > 2**128 - 2**104:  # beyond the largest finite value: it, or past half an ulp more
        inf = abs(q) >= 2**128 - 2**103
        return np.uint32((0x7F800000 if inf else 0x7F7FFFFF) | (0 if q > 0 else 0x80000000))
    neg = q < 0
    n, d = abs(q.numerator), q.denominator
    e = n.bit_length() - d.bit_length()  # 2^e <= |q| < 2^(e + 1) after the correction
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    e = max(e, -126)  # subnormals share the smallest normal's quantum
    num, den = (n << (23 - e), d) if e <= 23 else (n, d << (e - 23))
    m, r = divmod(num, den)  # m: the significand cut toward zero, hidden bit included for normals
    if mode == "rn":
        m += 2 * r > den or (2 * r == den and m & 1)
    elif mode in ("rm", "rp"):
        m += r != 0 and neg == (mode == "rm")
    elif mode != "rz":
        raise ValueError(f"mode: {mode!r}")
    # (e + 126) << 23 plus a hidden-bit significand is the biased exponent and fraction, a carry included
    return np.uint32((((e + 126) << 23) + m) | (0x80000000 if neg else 0))


# PTX shared by the TMA test kernels (%r1 = %tid.x, %r2 = the mbarrier, %r3 = the 8 KB box in shared memory): wait
# for the box's phase, then every thread copies its 16-byte chunks of the box to the global buffer DUMP
TMA_WAIT_AND_DUMP = """$Lwait:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
	@!%p2 bra $Lwait;
	bar.sync 0;
	ld.param.u64 %rd1, [DUMP];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r10, %r1;
$Lcopy:
	shl.b32 %r11, %r10, 4;
	add.s32 %r12, %r3, %r11;
	ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r12];
	cvt.u64.u32 %rd3, %r11;
	add.s64 %rd4, %rd2, %rd3;
	st.global.v4.u32 [%rd4], {%r20, %r21, %r22, %r23};
	add.s32 %r10, %r10, 128;
	setp.lt.u32 %p3, %r10, 512;
	@%p3 bra $Lcopy;
"""


def tma_box_reference(src: np.ndarray, out: np.ndarray, dtype, span: int, x: int, y: int) -> tuple[np.ndarray,
                                                                                               np.ndarray]:
    """(shared-memory bytes, destination after the store) of an 8 KB TMA box of rows of `span` bytes (64 without a
    swizzle) loaded at (x, y) of `src` (uint8 rows) into a 1024-byte-aligned buffer and stored at (y, x) of `out`:
    out-of-bounds elements load as zeros and are not stored; row r's 16-byte chunk c sits at chunk
    c ^ (r // (128 / span) % (span / 16))."""
    es = np.dtype(dtype).itemsize
    inner = (span or 64) // es
    rows = 8192 // (inner * es)
    s_t, o = src.view(dtype), out.copy()
    o_t = o.view(dtype)
    box = np.zeros((rows, inner), dtype)
    for r in range(rows):
        for c in range(inner):
            if 0 <= y + r < s_t.shape[0] and 0 <= x + c < s_t.shape[1]:
                box[r, c] = s_t[y + r, x + c]
            if 0 <= x + r < o_t.shape[0] and 0 <= y + c < o_t.shape[1]:
                o_t[x + r, y + c] = box[r, c]
    raw = box.view(np.uint8).reshape(rows, inner * es)
    if not span:
        return raw.reshape(-1), o
    chunks = raw.reshape(rows, span // 16, 16)
    swz = np.empty_like(chunks)
    for r in range(rows):
        for c in range(span // 16):
            swz[r, c ^ (r // (128 // span) % (span // 16))] = chunks[r, c]
    return swz.reshape(-1), o


def fns_reference(mask: int, base: int, offset: int) -> int:
    """fns by the PTX ISA's loop: walk from base in offset's direction, counting set bits."""
    if offset == 0:
        return base if (mask >> base) & 1 else 0xFFFFFFFF
    pos, count, step = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += step
    return 0xFFFFFFFF


def video_reference(text: str, a: int, b: int, c: int) -> int:
    """One thread of the SIMD video instruction `text` (`vop4.dtype.atype.btype d{.mask}, a{.asel}, b{.bsel}, c`) as
    the PTX ISA's pseudocode states it, on Python integers."""
    head, *ops = re.split(r"[\s,]+", text.strip().rstrip(";"))
    parts = head.split(".")
    n = 4 if parts[0].endswith("4") else 2
    width, base = 32 // n, parts[0][:-1]
    types = [p for p in parts if p in ("u32", "s32")]
    dtype = "u32" if base == "vset" else types[0]

    def sel(op: str, default: str) -> str:
        return op.split(".", 1)[1] if "." in op else default

    def pick(selector: str, signed: bool) -> list[int]:
        word = (b << 32) | a
        out = []
        for digit in reversed(selector[1:]):
            v = (word >> (width * int(digit))) & ((1 << width) - 1)
            out.append(v - (1 << width) if signed and v >> (width - 1) else v)
        return out

    va = pick(sel(ops[1], "b3210" if n == 4 else "h10"), types[-2] == "s32")
    vb = pick(sel(ops[2], "b7654" if n == 4 else "h32"), types[-1] == "s32")
    mask_sel = sel(ops[0], "")
    keep = [not mask_sel or str(i) in mask_sel[1:] for i in range(n)]
    t = []
    for x, y in zip(va, vb, strict=True):
        if base == "vset":
            cmp = next(p for p in parts if p in ("eq", "ne", "lt", "le", "gt", "ge"))
            r = int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp])
        elif base == "vavrg":
            r = (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1
        else:
            r = {"vadd": x + y, "vsub": x - y, "vabsdiff": abs(x - y), "vmin": min(x, y), "vmax": max(x, y)}[base]
        if "sat" in parts:
            lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if dtype == "s32" else (0, (1 << width) - 1)
            r = min(max(r, lo), hi)
        t.append(r)
    if "add" in parts:
        d = c + sum(r for r, k in zip(t, keep, strict=True) if k)
    else:
        d = c
        for i, (r, k) in enumerate(zip(t, keep, strict=True)):
            if k:
                d = (d & ~(((1 << width) - 1) << (width * i))) | ((r & ((1 << width) - 1)) << (width * i))
    return d & 0xFFFFFFFF


def _im2col_matrix(x: np.ndarray, pad: int, stride: int, out: tuple[int, ...], tap: tuple[int, ...],
                   c0: int, channels: int, fill: int = 0) -> np.ndarray:
    """Rows m = (n, then the output's spatial index, outermost first) of the convolution's im2col matrix for one
    filter tap (outermost first): input[n, o · stride - pad + tap, c0 + j], `fill` where that leaves the input."""
    n_img, spatial = x.shape[0], x.shape[1:-1]
    rows = []
    for n in range(n_img):
        for o in np.ndindex(*out):
            pos = [oi * stride - pad + t for oi, t in zip(o, tap, strict=True)]
            row = np.full(channels, fill, x.dtype)
            if all(0 <= p < s for p, s in zip(pos, spatial, strict=True)):
                ch = np.arange(c0, c0 + channels)
                inside = ch < x.shape[-1]
                row[inside] = x[(n, *pos)][ch[inside]]
            rows.append(row)
    return np.array(rows)


def im2col_boxes(case: tuple, x: np.ndarray) -> np.ndarray:
    """The boxes tools.corpus's im2col entry CASE loads, one per CTA (filter taps outer, tiles of `pixels` rows
    inner), from the convolution's im2col matrix: rows past the last image filled as out of bounds."""
    rank, _, _, dtype, pad, stride, filt, pixels, channels, c0, _, fill = case
    out, rows, _ = im2col_geometry(case)
    nan = {"f16": 0x7FF7, "f32": 0x7FF77FF7}[dtype] if fill == "nan" else 0  # 0x7FF7 repeated (H100)
    boxes = []
    for tap in np.ndindex(*(filt,) * (rank - 2)):
        want = _im2col_matrix(x, pad, stride, out, tap, c0, channels, nan)
        want = np.concatenate([want, np.full((pixels, channels), nan, x.dtype)])
        boxes += [want[m0:m0 + pixels] for m0 in range(0, rows, pixels)]
    return np.array(boxes)


def swizzle_rows(box: np.ndarray, span: int) -> np.ndarray:
    """A box's bytes as a swizzled load lays them in 1024-byte-aligned shared memory: 16-byte chunk c of byte row r
    at chunk c ^ (r / (128 / span)) % (span / 16)."""
    raw = box.reshape(box.shape[0], -1).view(np.uint8).reshape(-1, span // 16, 16)
    out = np.empty_like(raw)
    for r in range(raw.shape[0]):
        for c in range(raw.shape[1]):
            out[r, c ^ (r // (128 // span)) % (span // 16)] = raw[r, c]
    return out.reshape(-1)


def gluon_conv_reference(x: np.ndarray, wt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the im2col matrix A, D as f32 words) of the corpus's Gluon convolution (tools.corpus.asyncproxy.GLUON_CONV:
    3 x 3 filter, stride 2, padding 1): numerics.tensorcore's chain of m64n8k16 f16 -> f32 steps from +0 over
    K = (filter tap, channel), the rows padded to the kernel's 64."""
    from tools.corpus.asyncproxy import GLUON_CONV

    from tcforge.numerics.tensorcore import get_form, tc_mma

    out, _, _ = im2col_geometry(GLUON_CONV)
    a = np.concatenate([_im2col_matrix(x, 1, 2, out, divmod(t, 3), 0, x.shape[-1]) for t in range(9)], axis=1)
    m = len(a)
    padded = np.concatenate([a, np.zeros((64 - m, a.shape[1]), np.uint16)])[None]
    form = get_form("wgmma.m64n8k16.f32.f16.f16")
    d = np.zeros((1, 64, wt.shape[1]), np.uint32)
    for k0 in range(0, padded.shape[-1], 16):
        d = tc_mma(form, padded[..., k0:k0 + 16], wt[None, k0:k0 + 16], d)
    return a, d[0, :m]


def sp_dense(a: np.ndarray, meta: np.ndarray, k: int, sel: int) -> tuple[np.ndarray, np.ndarray]:
    """A 2:4 sparse A decompressed (W, 16, K) and its kept positions, read from the lanes' side: lane 4g + q of a
    quad, q = sel·L + w (L = K/16 lanes; tf32: K/8, K counted in 16-bit halves), holds in nibble n (x = 8w + n) the
    ordered pair (i0, i1) of row g + 8h, chunk j = (x // 2c)·c + x % c, h = (x % 2c) // c (c = 4 chunks for 16-bit
    elements and tf32, 8 for 8-bit); a tf32 pair (0, 1) or (2, 3) keeps element 2j + i0 / 2."""
    tf32 = a.itemsize == 4
    c, lanes = (4, k // 8) if tf32 else (8 // a.itemsize, k // 16)
    chunks = k // 2 if tf32 else k // 4
    dense, keep = np.zeros((a.shape[0], 16, k), a.dtype), np.zeros((a.shape[0], 16, k), bool)
    warps = np.arange(a.shape[0])
    for lane in range(32):
        w = lane % 4 - sel * lanes
        if not 0 <= w < lanes:
            continue
        for n in range(8):
            x = 8 * w + n
            j, row = (x // (2 * c)) * c + x % c, lane // 4 + 8 * ((x % (2 * c)) // c)
            if j >= chunks:
                continue
            nib = (meta[:, lane] >> np.uint32(4 * n)) & np.uint32(0xF)
            kept = [(2 * j + (nib & 3).astype(int) // 2, j)] if tf32 else \
                [(4 * j + pos.astype(int), 2 * j + s_) for s_, pos in enumerate((nib & 3, nib >> 2))]
            for col, src in kept:
                dense[warps, row, col] = a[:, row, src]
                keep[warps, row, col] = True
    return dense, keep


def sp_dense4(a: np.ndarray, meta: np.ndarray, k: int, sel: int) -> tuple[np.ndarray, np.ndarray]:
    """sp_dense for 4-bit codes (W, 16, K/2): pairs of elements as the 8-bit units the metadata counts (4:8)."""
    units, keep = sp_dense((a[..., 0::2] | a[..., 1::2] << 4).astype(np.uint8), meta, k // 2, sel)
    return np.stack([units & 0xF, units >> 4], axis=-1).reshape(a.shape[0], 16, k), np.repeat(keep, 2, axis=-1)


def f16_k16_chain(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """f32 bits of A (M, K) @ B (K, N), fp16, as ops_tcgen05 computes a chain of K = 16 MMAs in K order from C = +0:
    numerics.tensorcore's Hopper f16 -> f32 step, C fused, one step per 16 of K."""
    from dataclasses import replace

    from tcforge.numerics.tensorcore import HOPPER_FORMS, tc_mma

    (m, k), n = a.shape, b.shape[1]
    form = replace(HOPPER_FORMS["wgmma.m64n8k16.f32.f16.f16"], op="mma", m=m, n=n)
    acc = np.zeros((m, n), np.uint32)
    for k0 in range(0, k, 16):
        acc = tc_mma(form, a[:, k0:k0 + 16].view(np.uint16), b[k0:k0 + 16].view(np.uint16), acc)
    return acc


@functools.cache
def samples_module(arch: str) -> dict:
    """The corpus's nvcc-built samples module for sm_80, sm_89 or sm_90a, built once per process (the tests using it
    share one xdist group, so one worker builds each)."""
    from tools import emulate_corpus as ec
    from tools.corpus.modules import MODULES

    return ec._build_nvcc(MODULES[f"samples_{arch}"])
