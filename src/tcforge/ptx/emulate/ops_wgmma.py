"""Hopper warpgroup MMA: `wgmma.fence` / `commit_group` / `wait_group` and `wgmma.mma_async` m64nNk32 FP8 (e4m3/e5m2,
f16 or f32 D), m64nNk16 f16/bf16 (f32 D; f16 D for f16), m64nNk8 tf32 -> f32, m64nNk32 s8/u8 -> s32 (`.satfinite`)
and m64nNk256 b1 -> s32 (`.and.popc`), N any multiple of 8 in 8..256, A from four registers or a shared-memory
descriptor, B from a descriptor, K-major operands (no swizzle or the 32/64/128-byte swizzles); and the sparse
`wgmma.mma_async.sp` (2:4 A, 1:2 for tf32) at twice those K but b1's.

Sparse: A is the compressed 64 x K/2 tile, in the dense layout of 32 bytes of K (registers or descriptor); B is the
N x K tile, 64 bytes of K per row; each warp's metadata register and the selector name the B rows of its 16 rows as
mma.sp's m16n8 layout of the same K and type does (the PTX ISA draws both with one figure; ops_matrix._sp_columns,
pinned there by the H100). Each row's D is the dense form's arithmetic (one step, C fused) over its K/2 kept
products, FP8 included: the H100 corpus's nine wgmma_sp forms give 0 differing bits.

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
from tcforge.ptx.emulate.ops_matrix import _int_values, _sp_columns, int_products, s32_sum
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
_ESIZE = {"e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1, "f16": 2, "bf16": 2, "tf32": 4, "b1": 1}  # operand element bytes
# (b1: a byte of 8 elements)


def b_wgmma(ctx, st, parts: list[str]) -> Run:
    """Builder of every wgmma instruction."""
    kind = parts[1] if len(parts) > 1 else ""
    if kind in ("fence", "commit_group", "wait_group"):
        if kind == "wait_group" and not (len(st.operands) == 1 and isinstance(st.operands[0], Imm)):
            ctx.fail_static(st, "expects one immediate operand (the number of pending groups)")

        def sync(m) -> None:
            _warpgroups(ctx, st, m)
        return sync
    if kind != "mma_async":
        ctx.unsupported(st, f"{st.opcode} (of wgmma, fence, commit_group, wait_group and mma_async are emulated)")
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


def descriptor_offsets(desc: int, rows: int, mn_major: bool = False, kbytes: int = 32, esize: int = 2) -> np.ndarray:
    """Shared-memory byte offsets (rows, kbytes) of the tile of `rows` rows (M or N) x kbytes bytes of k (32; 64 for
    a sparse wgmma's B) that a descriptor names: start, LBO and SBO are its fields << 4. K-major, no swizzle: 8-row x
    16-byte core matrices at start + (row / 8) SBO + (kb / 16) LBO, row r inside at 16 r; swizzle of W bytes (W at
    least kbytes): row n at start + (n / 8) SBO + (n % 8) W + kb. MN-major (element k = kb / e of row n, e = esize
    bytes: 2, or 1 for tcgen05's 8-bit operands), no swizzle: start + (n / (16 / e)) SBO + (k / 8) LBO + (k % 8) 16
    + (n % (16 / e)) e; swizzle of W bytes: W / e elements of n per k-row, start + (n / (W / e)) LBO + (k / 8) SBO +
    (k % 8) W + (n % (W / e)) e. A swizzle then XORs address bits [4, 4 + log2(W / 16)) with bits [7, ...) of the
    CTA's shared address less the descriptor's base offset (bits 49-51), as the H100 does (cu_wgmma_base_offset*_probe:
    tiles in 128-, 64- and 32-byte swizzle rows 384 bytes past the pattern, base offsets 0 to 5)."""
    start, lbo, sbo = _fields(desc)
    r = np.arange(rows, dtype=np.int64)[:, None]
    kb = np.arange(kbytes, dtype=np.int64)[None, :]
    width = _SWIZZLE_BYTES.get(desc >> 62)
    if mn_major:
        k, byte = kb // esize, kb % esize
        per = (width or 16) // esize  # elements of n in a k-row of the atom (a core matrix's 16 bytes, unswizzled)
        if width is None:
            return start + (r // per) * sbo + (k >> 3) * lbo + (k & 7) * 16 + (r % per) * esize + byte
        lin = start + (r // per) * lbo + (k >> 3) * sbo + (k & 7) * width + (r % per) * esize + byte
    elif width is None:
        return start + (r >> 3) * sbo + (kb >> 4) * lbo + (r & 7) * 16 + (kb & 15)
    else:
        lin = start + (r >> 3) * sbo + (r & 7) * width + kb
    return lin ^ ((((lin >> 7) - ((desc >> 49) & 7)) & (width // 16 - 1)) << 4)


def _describe(desc: int) -> str:
    """A descriptor's fields, for error messages."""
    f = _fields(desc)
    sw = _SWIZZLE_BYTES.get(desc >> 62)
    return f"start {f[0]:#x}, LBO {f[1]}, SBO {f[2]}, {f'{sw}-byte swizzle' if sw else 'no swizzle'}"


_OFFSETS: dict[tuple[int, int, bool, int, int], tuple[np.ndarray, np.ndarray | None, int]] = {}  # -> cached_offsets


def cached_offsets(desc: int, rows: int, mn_major: bool, kbytes: int = 32,
                   esize: int = 2) -> tuple[np.ndarray, np.ndarray | None, int]:
    """descriptor_offsets, its 16-byte units (rows, kbytes / 16) where a K-major layout keeps them whole (None for
    MN-major tiles, read byte by byte) and its largest offset; cached (a kernel cycles through few descriptors)."""
    key = (desc, rows, mn_major, kbytes, esize)
    hit = _OFFSETS.get(key)
    if hit is None:
        if len(_OFFSETS) >= 4096:
            _OFFSETS.clear()
        off = descriptor_offsets(desc, rows, mn_major, kbytes, esize)
        hit = _OFFSETS[key] = (off, None if mn_major else off[:, ::16] >> 4, int(off.max()))
    return hit


def _tiles(ctx, st, desc: np.ndarray, bases: np.ndarray, rows: int, which: str, mn_major: bool = False,
           kbytes: int = 32) -> np.ndarray:
    """The (G, rows, kbytes) bytes a descriptor per warpgroup names in its CTA's shared memory (bounds checked)."""
    mem = ctx.mem
    uniq, inv = np.unique(desc, return_inverse=True)
    offs = []
    for u in uniq.tolist():
        lane = int(bases[int(np.argmax(desc == u))])
        width = _SWIZZLE_BYTES.get(u >> 62)
        if not mn_major and width is not None and kbytes > width:
            ctx.failer(st)(lane, f"{which} descriptor {u:#x} ({_describe(u)}) holds {kbytes} bytes of K per row in "
                                 f"{width}-byte swizzle rows: where the second span lies is not pinned, so the "
                                 "emulator does not run it (use a 64- or 128-byte swizzle, or none)")
        off, units, hi = cached_offsets(u, rows, mn_major, kbytes)
        if hi >= mem.shared_size:
            a = int(off.reshape(-1)[int(np.argmax(off.reshape(-1) >= mem.shared_size))])
            ctx.failer(st)(lane, f"{which} descriptor {u:#x} ({_describe(u)}) reads shared byte {a:#x}, outside the "
                                 f"CTA's {mem.shared_size} bytes of shared memory")
        offs.append(off if mn_major else units)
    cta = (bases // ctx.lanes_per_cta).astype(np.int64)[:, None, None]
    where = np.stack(offs)[inv.reshape(-1)]
    if mn_major:  # bytes: (G, rows, kbytes)
        return mem.shared.reshape(-1)[where + cta * mem.shared_size]
    units = mem.shared.reshape(-1, 16)[where + cta * (mem.shared_size >> 4)]  # 16-byte units: (G, rows, kb/16, 16)
    return units.reshape(len(bases), rows, kbytes)


# ---- wgmma.mma_async ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _IntForm:
    """An integer wgmma (m64nNk32 s8 / u8, k64 sparse; m64nNk256 b1 .and.popc): the exact sum C + A·B (b1: C + the
    popcount of A's row AND B's column), wrapped to 32 bits, or clamped to the s32 range with .satfinite."""

    a: str
    b: str
    sat: bool
    k: int
    c: str = "s32"


_SP_SELECTORS = {2: (0, 1), 4: (0, 1), 1: (0,)}  # sparse: selectors ptxas takes, by element bytes (the quad's lanes
# holding a row pair's metadata: K/16 16-bit units of it per lane)


def _form(ctx, st, parts: list[str]) -> tuple[Form | _IntForm, int, bool]:
    """The numerics form of an opcode (sparse: the dense form of half the K, whose A layout the compressed A takes
    and whose arithmetic each row's kept products take), its N and whether it is sparse."""
    sparse = "sp" in parts
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    rest = parts[parts.index(shape) + 1:] if shape else []
    sat = rest[-1:] == ["satfinite"]
    if sat:
        rest = rest[:-1]
    popc = rest[-1:] == ["popc"] and len(rest) > 1
    bop = rest[-2] if popc else None  # b1's bit operation (wgmma has .and only)
    if popc:
        rest = rest[:-2]
    if shape is None or len(rest) != 3:
        ctx.unsupported(st, f"{st.opcode} (expected wgmma.mma_async{{.sp}}.sync.aligned.m64nNkK.dtype.atype.btype)")
    n, k = (int(x) for x in _SHAPE.match(shape).groups())
    if n % 8 or not 8 <= n <= 256:
        ctx.fail_static(st, f"N = {n}: wgmma takes N a multiple of 8 in 8..256")
    what = "sparse wgmma" if sparse else "wgmma"
    dense_k = {"b1": 256}.get(rest[1], 32 // _ESIZE.get(rest[1], 1))
    if k != dense_k * (2 if sparse else 1) and rest[1] in _ESIZE:
        ctx.fail_static(st, f"{what} of {rest[1]} is m64nNk{dense_k * (2 if sparse else 1)}, got {shape}")
    if rest[0] == "s32":
        ints = ("s8", "u8")
        if rest[1] == rest[2] == "b1" and bop == "and" and not sat and not sparse:
            return _IntForm("b1", "b1", False, k), n, sparse
        if rest[1] not in ints or rest[2] not in ints or popc:
            ctx.unsupported(st, f"{st.opcode} (integer wgmma is emulated for s8 / u8 A and B, and b1 with .and.popc)")
        return _IntForm(rest[1], rest[2], sat, k), n, sparse
    name = f"wgmma.m64n8k{k // 2 if sparse else k}.{'.'.join(rest)}"
    if name not in _WG_FORMS or sat or popc:
        ctx.unsupported(st, f"{st.opcode} (tcforge.numerics has no model of this type; wgmma forms: {_FORMS})")
    return _WG_FORMS[name], n, sparse


def _imm(ctx, st, op, what: str, allowed: tuple[int, ...]) -> int:
    """An immediate operand's value, one of `allowed`."""
    if not isinstance(op, Imm) or op.value not in allowed:
        got = op.text if isinstance(op, Imm) else repr(op)
        ctx.fail_static(st, f"{what} must be an immediate {' or '.join(map(str, allowed))}, got {got}")
    return int(op.value)


def _mma_async(ctx, st, parts: list[str]) -> Run:
    """wgmma.mma_async{.sp}: D = A·B (+ D where scale-d), per warpgroup of the batch."""
    form, n, sparse = _form(ctx, st, parts)
    integer = isinstance(form, _IntForm)
    esize = _ESIZE[form.a]
    ops = list(st.operands)
    a_regs = isinstance(ops[1], Vec) if len(ops) > 1 else False
    meta = ", sp-meta, sp-sel" if sparse else ""
    want = (4 if integer else 6 if esize != 2 else (7 if a_regs else 8)) + 2 * sparse  # 16-bit types transpose
    if len(ops) != want:
        tail = "" if esize != 2 else (", imm-trans-b" if a_regs else ", imm-trans-a, imm-trans-b")
        scales = "" if integer else ", imm-scale-a, imm-scale-b"
        ctx.fail_static(st, f"expects {want} operands (d, a, b-desc{meta}, scale-d{scales}{tail}), got {len(ops)}")
    d, a, b = ops[:3]
    if sparse:
        sels = _SP_SELECTORS[esize]
        sel = _imm(ctx, st, ops[4], "the sparsity selector", sels)
        rmeta = ctx.src_full(ops[3], "b32")
        ops = ops[:3] + ops[5:]
    scd = ops[3]
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
    if sparse and not integer:
        form = replace(form, name=f"{form.name} (sparse: one row's kept products)", m=1)

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
                                        "the B", mn_b, 64 if sparse else 32)).view(edt).transpose(0, 2, 1)
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
        if sparse:  # each row's B rows: (G, 64, K/2, N)
            picked = _sp_columns(gather([rmeta]).reshape(4 * g, 32), form.k * (1 if integer else 2), esize, sel)
            B = np.take_along_axis(B[:, None], picked.reshape(g, 64, -1, 1), axis=2)
            if integer:
                D = s32_sum(C, np.einsum("gmk,gmkn->gmn", _int_values(A, form.a), _int_values(B, form.b)), form.sat)
            else:
                D = _tc_mma(form, A[:, :, None], B, C[:, :, None])[:, :, 0]
        elif form.a == "b1":  # popcount of A's row AND B's column: bits as 0 / 1 values
            bits = np.unpackbits(A, axis=-1).astype(np.int64) @ np.unpackbits(B, axis=1).astype(np.int64)
            D = s32_sum(C, bits, False)
        elif integer:
            D = s32_sum(C, int_products(A, B, form.a, form.b), form.sat)
        else:
            D = _tc_mma(form, A, B, C)
        D = matrix_to_d(D)  # (G, 128, N/2) elements
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
