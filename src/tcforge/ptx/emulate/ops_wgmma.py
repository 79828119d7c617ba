"""Hopper warpgroup MMA: `wgmma.fence` / `commit_group` / `wait_group` and `wgmma.mma_async` m64nNk32 FP8 (e4m3/e5m2,
f16 or f32 D), m64nNk16 f16/bf16 (f32 D; f16 D for f16), m64nNk8 tf32 -> f32 and m64nNk32 s8/u8 -> s32
(`.satfinite`), N any multiple of 8 in 8..256, A from four registers or a shared-memory descriptor, B from a
descriptor, K-major operands (no swizzle or the 32/64/128-byte swizzles).

The mma runs eagerly at issue, for every warpgroup of the batch in one pass (A registers and shared memory are read
then); fence / commit / wait change no data (a correct program touches neither D nor the operands before the wait).
Every form is warpgroup-collective: the 128 threads of warps 4k..4k+3 of a CTA execute it together, with one
descriptor and one scale-d. The arithmetic is tcforge.numerics.tensorcore's Hopper row of the form under either
`numerics` (wgmma exists on sm_90a only). Register layouts (CUTLASS ALayout_64x32 / CLayout_64xN): warp w of the
warpgroup holds rows 16w..16w+15, g = lane / 4, t = lane % 4; 8-bit A reg r byte i: row 16w + g + 8(r & 1),
k = 4t + i + 16(r >> 1) (16-bit: half i, k = 2t + i + 8(r >> 1); tf32: the word, k = t + 4(r >> 1)); D element
q = 4j + 2h + e of a thread (f32 reg q, or half e of f16x2 reg 2j + h): row 16w + g + 8h, column 8j + 2t + e."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tcforge.numerics.tensorcore import HOPPER_FORMS, Form
from tcforge.numerics.tensorcore import tc_mma as _tc_mma
from tcforge.ptx.emulate.ops_matrix import int_products, s32_sum
from tcforge.ptx.emulate.state import UINT
from tcforge.ptx.operands import Imm, Not, Reg, Vec

WARPGROUP = 128
_SHAPE = re.compile(r"^m64n(\d+)k(\d+)$")
_SWIZZLE_BYTES = {1: 128, 2: 64, 3: 32}  # descriptor bits 62..63 -> swizzle width (0: none)
Run = Callable[[np.ndarray | None], None]  # a compiled statement: run(mask)
# tf32 -> f32 m64nNk8: one 8-term step of the f16 -> f32 form's datapath on tf32 values (f32 words whose low 13 bits
# the tensor core does not read), as mma.sync's m16n8k8 tf32 is (pinned there by the corpus); assumed for wgmma
TF32_FORM = replace(HOPPER_FORMS["wgmma.m64n8k16.f32.f16.f16"], name="wgmma.m64n8k8.f32.tf32.tf32", k=8, a="tf32",
                    b="tf32", groups=(tuple(range(8)),), sass="HGMMA.64x8x8.F32.TF32",
                    source="the f16 -> f32 wgmma datapath, one 8-term step on tf32 values (assumed)")
_WG_FORMS = {n: f for n, f in HOPPER_FORMS.items() if f.op == "wgmma"} | {TF32_FORM.name: TF32_FORM}
_FORMS = ", ".join(sorted({f"m64nNk{f.k}.{f.c}.{f.a}.{f.b}" for f in _WG_FORMS.values()}))
_ESIZE = {"e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1, "f16": 2, "bf16": 2, "tf32": 4}  # operand element bytes


def b_wgmma(ctx, st, parts: list[str]) -> Run:
    """Builder of every wgmma instruction."""
    kind = parts[1] if len(parts) > 1 else ""
    if kind in ("fence", "commit_group", "wait_group"):
        if kind == "wait_group" and not (len(st.operands) == 1 and isinstance(st.operands[0], Imm)):
            ctx.fail_static(st, "expects one immediate operand (the number of pending groups)")

        def sync(m) -> None:
            _warpgroups(ctx, st, m)
        return sync
    if kind != "mma_async" or "sp" in parts:
        ctx.unsupported(st, f"{st.opcode} (of wgmma, fence, commit_group, wait_group and the dense mma_async are "
                            "emulated)")
    return _mma_async(ctx, st, parts)


# ---- the warpgroups executing an instruction ------------------------------------------------------------------------
def _warpgroups(ctx, st, m) -> np.ndarray:
    """First lane of every warpgroup in the mask; a warpgroup only partly in it is a one-line error."""
    lpc = ctx.lanes_per_cta
    if m is None and lpc % WARPGROUP == 0:
        return np.arange(0, ctx.n, WARPGROUP)
    lanes = ctx.lanes(m)
    local = lanes % lpc
    base = lanes - local % WARPGROUP
    bases, counts = np.unique(base, return_counts=True)
    ok = (counts == WARPGROUP) & (bases % lpc + WARPGROUP <= ctx.threads)
    if not ok.all():
        b = int(bases[int(np.argmin(ok))])
        first = b % lpc
        k = first // WARPGROUP
        what = f"{st.opcode} is warpgroup-collective: warpgroup {k} (warps {4 * k}..{4 * k + 3} of the CTA)"
        if first + WARPGROUP > ctx.threads:
            ctx.failer(st)(b, f"{what} is incomplete, the CTA has {ctx.threads} threads")
        running = np.zeros(WARPGROUP, bool)
        running[lanes[(lanes >= b) & (lanes < b + WARPGROUP)] - b] = True
        ctx.failer(st)(b + int(np.argmin(running)), f"{what} must execute it together, but this thread does not "
                                                     "(divergent or exited)")
    return bases


def _uniform(ctx, st, vals: np.ndarray, bases: np.ndarray, what: str) -> np.ndarray:
    """The per-warpgroup value of an operand (its first thread's), checked equal across the warpgroup."""
    v = vals[bases[:, None] + np.arange(WARPGROUP)]
    bad = (v != v[:, :1]).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        lane = int(bases[i]) + int(np.argmax(v[i] != v[i, 0]))
        ctx.failer(st)(lane, f"{what} differs between the threads of the warpgroup ({int(v[i, 0]):#x} in its first "
                             f"thread, {int(vals[lane]):#x} here)")
    return v[:, 0]


# ---- operand layouts ------------------------------------------------------------------------------------------------
_WIDE = {np.dtype(np.uint16): np.uint32, np.dtype(np.uint32): np.uint64}  # an (even, odd) column pair as one item


def d_to_matrix(e: np.ndarray) -> np.ndarray:
    """Per-thread D elements (G, 128, N/2) -> (G, 64, N) [row, column] (element q = 4j + 2h + e: see the module)."""
    g, _, half = e.shape
    x = np.ascontiguousarray(e).view(_WIDE[e.dtype]).reshape(g, 4, 8, 4, half // 4, 2)  # [G, w, g, t, j, h]
    return np.ascontiguousarray(x.transpose(0, 1, 5, 2, 4, 3)).view(e.dtype).reshape(g, 64, 2 * half)


def matrix_to_d(d: np.ndarray) -> np.ndarray:
    """(G, 64, N) -> the per-thread D elements (G, 128, N/2) (inverse of d_to_matrix)."""
    g, _, n = d.shape
    x = np.ascontiguousarray(d).view(_WIDE[d.dtype]).reshape(g, 4, 2, 8, n // 8, 4)  # [G, w, h, g, j, t]
    return np.ascontiguousarray(x.transpose(0, 1, 3, 5, 4, 2)).view(d.dtype).reshape(g, WARPGROUP, n // 2)


def a_regs_to_matrix(words: np.ndarray, esize: int) -> np.ndarray:
    """A from registers (G, 128, 4) uint32 -> (G, 64, K) elements [row, k] (K = 32 bytes / esize)."""
    g = words.shape[0]
    per = 4 // esize
    x = np.ascontiguousarray(words).view(UINT[esize])
    x = x.reshape(g, 4, 8, 4, 2, 2, per)  # [G, w, g, t, r >> 1, r & 1, i]
    return x.transpose(0, 1, 5, 2, 4, 3, 6).reshape(g, 64, 8 * per)


def _fields(desc: int) -> tuple[int, int, int]:
    """A descriptor's start address, LBO and SBO in bytes (its 14-bit fields << 4)."""
    return tuple(((desc >> s) & 0x3FFF) << 4 for s in (0, 16, 32))


def descriptor_offsets(desc: int, rows: int, mn_major: bool = False) -> np.ndarray:
    """Shared-memory byte offsets (rows, 32) of the tile of `rows` rows (M or N) x 32 bytes of k that a descriptor
    names: start, LBO and SBO are its fields << 4. K-major, no swizzle: 8-row x 16-byte core matrices at start +
    (row / 8) SBO + (kb / 16) LBO, row r inside at 16 r; swizzle of W bytes: row n at start + (n / 8) SBO + (n % 8) W
    + kb. MN-major (16-bit elements, element k = kb / 2 of row n), no swizzle: start + (n / 8) SBO + (k / 8) LBO +
    (k % 8) 16 + (n % 8) 2; swizzle of W bytes: W / 2 elements of n per k-row, start + (n / (W / 2)) LBO + (k / 8) SBO
    + (k % 8) W + (n % (W / 2)) 2. A swizzle then XORs address bits [4, 4 + log2(W / 16)) with bits [7, ...) (on the
    CTA's shared address, as the GPU)."""
    start, lbo, sbo = _fields(desc)
    r = np.arange(rows, dtype=np.int64)[:, None]
    kb = np.arange(32, dtype=np.int64)[None, :]
    width = _SWIZZLE_BYTES.get(desc >> 62)
    if mn_major:
        k, byte = kb >> 1, kb & 1
        if width is None:
            return start + (r >> 3) * sbo + (k >> 3) * lbo + (k & 7) * 16 + (r & 7) * 2 + byte
        per = width // 2
        lin = start + (r // per) * lbo + (k >> 3) * sbo + (k & 7) * width + (r % per) * 2 + byte
    elif width is None:
        return start + (r >> 3) * sbo + (kb >> 4) * lbo + (r & 7) * 16 + (kb & 15)
    else:
        lin = start + (r >> 3) * sbo + (r & 7) * width + kb
    return lin ^ (((lin >> 7) & (width // 16 - 1)) << 4)


def _describe(desc: int) -> str:
    """A descriptor's fields, for error messages."""
    f = _fields(desc)
    sw = _SWIZZLE_BYTES.get(desc >> 62)
    return f"start {f[0]:#x}, LBO {f[1]}, SBO {f[2]}, {f'{sw}-byte swizzle' if sw else 'no swizzle'}"


_OFFSETS: dict[tuple[int, int, bool], tuple[np.ndarray, np.ndarray | None, int]] = {}  # -> _offsets


def _offsets(desc: int, rows: int, mn_major: bool) -> tuple[np.ndarray, np.ndarray | None, int]:
    """descriptor_offsets, its 16-byte units (rows, 2) where a K-major layout keeps them whole (None for MN-major
    tiles, read byte by byte) and its largest offset; cached (a kernel cycles through few descriptors)."""
    hit = _OFFSETS.get((desc, rows, mn_major))
    if hit is None:
        if len(_OFFSETS) >= 4096:
            _OFFSETS.clear()
        off = descriptor_offsets(desc, rows, mn_major)
        hit = _OFFSETS[(desc, rows, mn_major)] = (off, None if mn_major else off[:, ::16] >> 4, int(off.max()))
    return hit


def _tiles(ctx, st, desc: np.ndarray, bases: np.ndarray, rows: int, which: str, mn_major: bool = False) -> np.ndarray:
    """The (G, rows, 32) bytes a descriptor per warpgroup names in its CTA's shared memory (bounds checked)."""
    mem = ctx.mem
    uniq, inv = np.unique(desc, return_inverse=True)
    offs = []
    for u in uniq.tolist():
        lane = int(bases[int(np.argmax(desc == u))])
        if (u >> 49) & 7:
            ctx.failer(st)(lane, f"{which} descriptor {u:#x} has a nonzero base offset (bits 49..51), which the "
                                 "emulator does not support")
        off, units, hi = _offsets(u, rows, mn_major)
        if hi >= mem.shared_size:
            a = int(off.reshape(-1)[int(np.argmax(off.reshape(-1) >= mem.shared_size))])
            ctx.failer(st)(lane, f"{which} descriptor {u:#x} ({_describe(u)}) reads shared byte {a:#x}, outside the "
                                 f"CTA's {mem.shared_size} bytes of shared memory")
        offs.append(off if mn_major else units)
    cta = (bases // ctx.lanes_per_cta).astype(np.int64)[:, None, None]
    where = np.stack(offs)[inv.reshape(-1)]
    if mn_major:  # bytes: (G, rows, 32)
        return mem.shared.reshape(-1)[where + cta * mem.shared_size]
    units = mem.shared.reshape(-1, 16)[where + cta * (mem.shared_size >> 4)]  # 16-byte units: (G, rows, 2, 16)
    return units.reshape(len(bases), rows, 32)


# ---- wgmma.mma_async ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _IntForm:
    """An integer wgmma (m64nNk32 s8 / u8 -> s32): the exact sum C + A·B, wrapped, or clamped with .satfinite."""

    a: str
    b: str
    sat: bool
    k: int = 32
    c: str = "s32"


def _form(ctx, st, parts: list[str]) -> tuple[Form | _IntForm, int]:
    """The numerics form of an opcode and its N."""
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    rest = parts[parts.index(shape) + 1:] if shape else []
    sat = rest[-1:] == ["satfinite"]
    if sat:
        rest = rest[:-1]
    if shape is not None and len(rest) == 3 and rest[0] == "s32":
        n, k = (int(x) for x in _SHAPE.match(shape).groups())
        if k != 32 or rest[1] not in ("s8", "u8") or rest[2] not in ("s8", "u8"):
            ctx.unsupported(st, f"{st.opcode} (integer wgmma is emulated for m64nNk32 s8 / u8)")
        if n % 8 or not 8 <= n <= 256:
            ctx.fail_static(st, f"N = {n}: wgmma takes N a multiple of 8 in 8..256")
        return _IntForm(rest[1], rest[2], sat), n
    if shape is None or len(rest) != 3 or sat:
        ctx.unsupported(st, f"{st.opcode} (expected wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype)")
    n, k = (int(x) for x in _SHAPE.match(shape).groups())
    name = f"wgmma.m64n8k{k}.{'.'.join(rest)}"
    if name not in _WG_FORMS:
        ctx.unsupported(st, f"{st.opcode} (tcforge.numerics has no model of this type; wgmma forms: {_FORMS})")
    if n % 8 or not 8 <= n <= 256:
        ctx.fail_static(st, f"N = {n}: wgmma takes N a multiple of 8 in 8..256")
    return _WG_FORMS[name], n


def _imm(ctx, st, op, what: str, allowed: tuple[int, ...]) -> int:
    """An immediate operand's value, one of `allowed`."""
    if not isinstance(op, Imm) or op.value not in allowed:
        got = op.text if isinstance(op, Imm) else repr(op)
        ctx.fail_static(st, f"{what} must be an immediate {' or '.join(map(str, allowed))}, got {got}")
    return int(op.value)


def _mma_async(ctx, st, parts: list[str]) -> Run:
    """wgmma.mma_async: D = A·B (+ D where scale-d), per warpgroup of the batch."""
    form, n = _form(ctx, st, parts)
    integer = isinstance(form, _IntForm)
    esize = _ESIZE[form.a]
    ops = list(st.operands)
    a_regs = isinstance(ops[1], Vec) if len(ops) > 1 else False
    want = 4 if integer else 6 if esize != 2 else (7 if a_regs else 8)  # only 16-bit types transpose
    if len(ops) != want:
        tail = "" if esize != 2 else (", imm-trans-b" if a_regs else ", imm-trans-a, imm-trans-b")
        scales = "" if integer else ", imm-scale-a, imm-scale-b"
        ctx.fail_static(st, f"expects {want} operands (d, a, b-desc, scale-d{scales}{tail}), got {len(ops)}")
    d, a, b, scd = ops[:4]
    neg_a = not integer and _imm(ctx, st, ops[4], "imm-scale-a", (1, -1)) == -1
    neg_b = not integer and _imm(ctx, st, ops[5], "imm-scale-b", (1, -1)) == -1
    names = () if esize != 2 else ("imm-trans-b",) if a_regs else ("imm-trans-a", "imm-trans-b")
    trans = {what: bool(_imm(ctx, st, op, what, (0, 1))) for op, what in zip(ops[6:], names, strict=True)}
    mn_a, mn_b = trans.get("imm-trans-a", False), trans.get("imm-trans-b", False)
    dregs = list(d.items) if isinstance(d, Vec) else [d]
    nd = n // 4 if form.c == "f16" else n // 2
    if len(dregs) != nd:
        ctx.fail_static(st, f"D of m64n{n} {form.c} is {nd} registers per thread, got {len(dregs)}")
    if a_regs and len(a.items) != 4:
        ctx.fail_static(st, f"A from registers is 4 registers per thread, got {len(a.items)}")
    rd = [ctx.src_full(x, "b32") for x in dregs]
    wd = [ctx.dst(x, "b32") for x in dregs]
    ra = [ctx.src_full(x, "b32") for x in a.items] if a_regs else None
    rda = None if a_regs else ctx.src_full(a, "b64")
    rdb = ctx.src_full(b, "b64")
    const_sd, rsd = True, None
    if isinstance(scd, Imm):
        const_sd = bool(scd.value)
    elif isinstance(scd, (Reg, Not)):
        rsd = ctx.src_full(scd, "pred")
    else:
        ctx.fail_static(st, f"scale-d must be a predicate or an immediate, got {scd!r}")
    edt = UINT[esize]
    sign = edt(1 << (8 * esize - 1))
    cdt = np.uint16 if form.c == "f16" else np.uint32

    def run(m) -> None:
        bases = _warpgroups(ctx, st, m)
        full = m is None and len(bases) * WARPGROUP == ctx.n
        idx = None if full else (bases[:, None] + np.arange(WARPGROUP)).reshape(-1)
        g = len(bases)

        def gather(readers) -> np.ndarray:
            x = np.stack([r() for r in readers], axis=1)
            return (x if full else x[idx]).reshape(g, WARPGROUP, len(readers))

        if a_regs:
            A = a_regs_to_matrix(gather(ra), esize)
        else:
            A = _tiles(ctx, st, _uniform(ctx, st, rda(), bases, "the A descriptor"), bases, 64, "the A", mn_a)
            A = np.ascontiguousarray(A).view(edt)
        B = np.ascontiguousarray(_tiles(ctx, st, _uniform(ctx, st, rdb(), bases, "the B descriptor"), bases, n,
                                        "the B", mn_b)).view(edt).transpose(0, 2, 1)
        if neg_a:
            A = A ^ sign
        if neg_b:
            B = B ^ sign
        C = d_to_matrix(np.ascontiguousarray(gather(rd)).view(cdt))
        if rsd is not None:
            keep = _uniform(ctx, st, rsd(), bases, "scale-d")
            if not keep.all():
                C = np.where(keep[:, None, None], C, cdt(0))
        elif not const_sd:
            C = np.zeros_like(C)
        if integer:
            D = matrix_to_d(s32_sum(C, int_products(A, B, form.a, form.b), form.sat))
        else:
            D = matrix_to_d(_tc_mma(form, A, B, C))  # (G, 128, N/2) elements
        words = np.ascontiguousarray(D).view(np.uint32).reshape(g * WARPGROUP, nd)
        if full:
            cols = np.ascontiguousarray(words.T)
        else:
            cols = np.zeros((nd, ctx.n), np.uint32)
            cols[:, idx] = words.T
        for j, w in enumerate(wd):
            w(cols[j], m)
    return run


BUILDERS = {"wgmma": b_wgmma}
