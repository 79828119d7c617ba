"""wmma (the warp-level matrix API): load.a / load.b / load.c, mma and store.d for m16n16k16, m32n8k16 and m8n32k16
(f16 or bf16 A / B; f32 or f16 C and D; s8 / u8 with s32, .satfinite too), m16n16k8 tf32, m8n8k4 f64 (.rn / .rz /
.rm / .rp), m8n8k32 s4 / u4 (.satfinite too) and m8n8k128 b1 (.xor.popc / .and.popc).

The products are the mma.sync forms ptxas lowers wmma to (numerics.tensorcore's m16n8k16 tiles; tf32 k8 as two
chained m16n8k4 steps, which the H100 corpus's cu_wmma_tf32 pins where one k8 step differs in 1,457 bits; rows and
columns independent; integers exact; f64 as DMMA: fmas chained in k order from C, rounded in the instruction's mode),
so the results are the Hopper model's bits. The PTX ISA leaves the fragment's element order unspecified; ptxas
(sm_90) lays a fragment out as the mma.sync fragments of its m16n8 tiles (`fragment_map`; m8n32k16 as the
transposed m32n8k16 product; the m8n8 shapes as their mma.sync fragments), whatever the memory layout, and repeats
them where the fragment has more registers than elements (f16 A and B); the mma reads the first copy. Sub-byte A
and B (row-major A, column-major B only) move as 32-bit words of 8 or 32 elements, K contiguous; their stride, in
elements, is cut to whole words (ptxas shifts it right by 3 or 5)."""

from __future__ import annotations

import numpy as np

from tcforge.numerics.tensorcore import tc_mma
from tcforge.ptx.emulate.ops_matrix import _FORMS, _int_mma, _regs, _scatter, fma_chain_f64, int_products, s32_sum
from tcforge.ptx.emulate.ops_mem import address, space_of
from tcforge.ptx.opcodes import SUBBYTE_BITS as _BITS
from tcforge.ptx.operands import Addr

_SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16), "m16n16k8": (16, 16, 8),
           "m8n8k4": (8, 8, 4), "m8n8k32": (8, 8, 32), "m8n8k128": (8, 8, 128)}
_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "s32": 4, "s8": 1, "u8": 1, "f64": 8}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_K16 = (("f16", "bf16", "s8", "u8"), ("f16", "f32", "s32"))
_TYPES = {(16, 16, 16): _K16, (32, 8, 16): _K16, (8, 32, 16): _K16, (16, 16, 8): (("tf32",), ("f32",)),
          (8, 8, 4): (("f64",), ("f64",)), (8, 8, 32): (("s4", "u4"), ("s32",)), (8, 8, 128): (("b1",), ("s32",))}
_RND = ("rn", "rz", "rm", "rp")


def _dims(operand: str, shape: tuple[int, int, int]) -> tuple[int, int]:
    m, n, k = shape
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[operand]


def _parse(ctx, st, parts) -> tuple[tuple[int, int, int], str, str]:
    """(shape, element type, memory layout) of a wmma.load / wmma.store, the pair checked against the ISA's table."""
    shape = next((_SHAPES[p] for p in parts if p in _SHAPES), None)
    etype, operand = parts[-1], parts[2]
    layout = "col" if "col" in parts else "row"
    ab, cd = _TYPES.get(shape, ((), ()))
    if etype not in (ab if operand in ("a", "b") else cd):
        ctx.unsupported(st, f"{st.opcode} (wmma m16n16k16 / m32n8k16 / m8n32k16 with f16, bf16, s8, u8, f32, s32; "
                            "m16n16k8 with tf32, f32; m8n8k4 f64; m8n8k32 s4, u4, s32; m8n8k128 b1, s32)")
    if etype in _BITS and layout != {"a": "row", "b": "col"}[operand]:
        ctx.unsupported(st, f"{st.opcode} (sub-byte A is row-major and B column-major only)")
    return shape, etype, layout


def _words(shape: tuple[int, int, int], etype: str) -> tuple[tuple[int, int, int], int]:
    """The shape in 32-bit words along K and the elements per word, for sub-byte operands (else as they are, 1)."""
    if etype not in _BITS:
        return shape, 1
    per = 32 // _BITS[etype]
    return (shape[0], shape[1], shape[2] // per), per


def fragment_map(operand: str, shape: tuple[int, int, int], esize: int, nregs: int) -> np.ndarray:
    """(32, nregs * max(1, 4 // esize)) flat indices (the operand row-major: A m x k, B k x n, C / D m x n) of the
    element each lane holds in each slot of the fragment (x[i], register i * esize // 4; f64: one per register).

    Registers hold 8-row blocks of the operand seen as mma.sync sees it (A m x k, B n x k, C m x n): lane 4g + t holds
    row g and the 4 / esize columns at t of a block (f32 / s32 accumulators: columns 2t, 2t + 1 of an 8-column block
    over two registers). A takes its 16-row tiles' blocks rows 0-7, 8-15 at each k step; B its n-blocks of 8, k steps
    within; C and D the m16n8 tiles (m first), rows 0-7 then 8-15 in each. The blocks repeat to fill the registers.
    m8n32k16 is the m32n8k16 product transposed (D^T = B^T A^T): its A is that one's B, its B that one's A, its C and D
    that one's transposed."""
    if shape == (8, 32, 16):
        where = fragment_map({"a": "b", "b": "a"}.get(operand, operand), (32, 8, 16), esize, nregs)
        if operand == "a":  # B^T (16 x 8) -> A (8 x 16)
            return where % 8 * 16 + where // 8
        if operand == "b":  # A^T (32 x 16) -> B (16 x 32)
            return where % 16 * 32 + where // 16
        return where % 8 * 32 + where // 8  # C^T / D^T (32 x 8) -> C / D (8 x 32)
    m, n, k = shape
    acc = operand in ("c", "d")
    per = max(1, 4 // esize)  # elements per register (f64: one 64-bit register each)
    pair = acc and esize >= 4
    rows, cols = {"a": (m, k), "b": (n, k)}.get(operand, (m, n))
    width = 8 if pair else 4 * per
    if operand == "a":
        blocks = [(t + h, c) for t in range(0, rows, 16) for c in range(0, cols, width) for h in (0, 8) if t + h < rows]
    elif operand == "b":
        blocks = [(r, c) for r in range(0, rows, 8) for c in range(0, cols, width)]
    else:
        blocks = [(t + h, c) for t in range(0, rows, 16) for c in range(0, cols, 8) for h in (0, 8) if t + h < rows]
    g, t = np.arange(32) // 4, np.arange(32) % 4
    slots = []
    for r0, c0 in blocks:
        for j in range(2) if pair else range(1):
            for e in range(per):
                r, c = r0 + g, c0 + (2 * t + j if pair else per * t + e)
                slots.append(c * n + r if operand == "b" else r * cols + c)
    unique = np.stack(slots, axis=1)
    total = nregs * per
    if total == 0 or total % unique.shape[1]:
        raise ValueError(f"{nregs} registers for a wmma {operand} fragment of m{m}n{n}k{k} with {esize}-byte "
                         f"elements (ptxas's layout fills {unique.shape[1] // per} or a multiple)")
    return np.tile(unique, total // unique.shape[1])


def _to_regs(mat: np.ndarray, where: np.ndarray, nregs: int) -> list[np.ndarray]:
    """(W, R, C) elements -> the fragment's registers, each (W, 32) uint32 (uint64 for f64; `where`:
    fragment_map)."""
    elems = np.ascontiguousarray(mat.reshape(mat.shape[0], -1)[:, where])  # (W, 32, slots)
    word = np.uint64 if mat.dtype == np.uint64 else np.uint32
    return list(elems.view(word).reshape(mat.shape[0], 32, nregs).transpose(2, 0, 1))


def _from_regs(regs: list[np.ndarray], where: np.ndarray, rows: int, cols: int, esize: int) -> np.ndarray:
    """The fragment's registers -> (W, rows, cols) elements, each from its first copy."""
    words = np.ascontiguousarray(np.stack(regs, axis=-1))  # (W, 32, nregs)
    elems = words.view(_UINT[esize]).reshape(words.shape[0], -1)
    flat, first = np.unique(where.reshape(-1), return_index=True)
    out = np.zeros((words.shape[0], rows * cols), _UINT[esize])
    out[:, flat] = elems[:, first]
    return out.reshape(words.shape[0], rows, cols)


def _mem_matrix(ctx, st, op: Addr, space: str, stride_r, rows: int, cols: int, esize: int, layout: str,
                per: int = 1):
    """`where(warps, mask)`: (W, rows, cols) addresses of the matrix elements in `space` (the stride in elements,
    by default the matrix's own leading extent; `per` elements to a word for sub-byte types, the matrix in words) and
    the lane of each warp whose address operand is read."""
    at = address(ctx, st, op, space)

    def where(warps: np.ndarray, m) -> tuple[np.ndarray, np.ndarray]:
        lanes = warps * 32 if m is None else np.array([w * 32 + int(np.argmax(m[w * 32:w * 32 + 32])) for w in warps])
        base = at(lanes).astype(np.int64)
        ld = stride_r()[lanes].astype(np.int64) // per if stride_r is not None else \
            np.full(len(lanes), cols if layout == "row" else rows, np.int64)
        i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        offs = (i * ld[:, None, None] + j) if layout == "row" else (j * ld[:, None, None] + i)
        return base[:, None, None] + offs * esize, lanes
    return where


def b_wmma(ctx, st, parts):
    """wmma.load.{a,b,c} / wmma.store.d / wmma.mma (see the module's docstring)."""
    if parts[1] in ("load", "store"):
        return _load_store(ctx, st, parts)
    if parts[1] == "mma":
        return _mma(ctx, st, parts)
    ctx.unsupported(st, st.opcode)


def _load_store(ctx, st, parts):
    operand = parts[2]
    shape, etype, layout = _parse(ctx, st, parts)
    shape, per = _words(shape, etype)
    rows, cols = _dims(operand, shape)
    esize = 4 if etype in ("tf32", *_BITS) else _BYTES[etype]
    reg = "b64" if esize == 8 else "b32"
    space = space_of(parts)
    space = "generic" if space not in ("global", "shared") else space
    store = parts[1] == "store"
    frag, mem_op = (st.operands[1], st.operands[0]) if store else (st.operands[0], st.operands[1])
    stride_r = ctx.src_full(st.operands[2], "u32") if len(st.operands) > 2 else None
    regs = _regs(frag)
    try:
        at = fragment_map(operand, shape, esize, len(regs))
    except ValueError as e:
        ctx.unsupported(st, f"{st.opcode} ({e})")
    fail = ctx.failer(st)
    where = _mem_matrix(ctx, st, mem_op, space, stride_r, rows, cols, esize, layout, per)
    mem = ctx.mem

    def locate(addrs: np.ndarray, lane: int):
        lanes = np.full(len(addrs), lane)
        if mem.record is not None:  # every element, as the access of the lane whose address operand is read
            parts = mem.split_generic(addrs) if space == "generic" else {space: (None, addrs)}
            for sp, (_, at_) in (parts or {"global": (None, addrs)}).items():
                mem.record(st.line, sp, np.asarray(at_, np.int64), ctx.thread_ids(lanes[:len(at_)]), esize, store)
        if space == "generic":
            return mem.locate_generic(addrs, lanes, esize, fail, store)
        return mem.locate(space, addrs, lanes, esize, fail, store)

    if store:
        rs = [ctx.src_full(r, reg) for r in regs]

        def run_store(m):
            warps = ctx.warps(m, st)
            mats = _from_regs([r().reshape(-1, 32)[warps] for r in rs], at, rows, cols, esize)
            addrs, lanes = where(warps, m)
            for k, lane in enumerate(lanes.tolist()):
                flat, offs = locate(addrs[k].reshape(-1), lane)
                mem.write(flat, offs, esize, mats[k].reshape(-1, 1))
        return run_store

    ws = [ctx.dst(r, reg) for r in regs]

    def run_load(m):
        warps = ctx.warps(m, st)
        addrs, lanes = where(warps, m)
        mats = np.zeros((len(warps), rows, cols), _UINT[esize])
        for k, lane in enumerate(lanes.tolist()):
            flat, offs = locate(addrs[k].reshape(-1), lane)
            mats[k] = mem.read(flat, offs, esize, 1).reshape(rows, cols)
        for w, x in zip(ws, _to_regs(mats, at, len(ws)), strict=True):
            _scatter(ctx, warps, x, w, m)
    return run_load


def _fragments(ctx, st, shape, sizes):
    """fragment_map of D, A, B, C (element sizes `sizes`, the registers as the statement has them), or the one-line
    refusal of a wrong register count."""
    try:
        return [fragment_map(o, shape, size, len(_regs(x))) for o, size, x in zip("dabc", sizes, st.operands[:4],
                                                                                  strict=True)]
    except ValueError as e:
        ctx.unsupported(st, f"{st.opcode} ({e})")


def _mma_run(ctx, st, shape: tuple[int, int, int], sizes: tuple[int, int, int, int], product):
    """The closure of a wmma.mma: A, B and C read from their fragments (element bytes `sizes` of D, A, B, C; 8: f64
    registers), D = product(A, B, C) written to its fragment."""
    reg = "b64" if sizes[0] == 8 else "b32"
    d, a, b, c = st.operands[:4]
    ra, rb, rc = ([ctx.src_full(x, reg) for x in _regs(o)] for o in (a, b, c))
    ws = [ctx.dst(x, reg) for x in _regs(d)]
    md, ma, mb, mc = _fragments(ctx, st, shape, sizes)
    m, n, k = shape

    def run(mk):
        warps = ctx.warps(mk, st)
        A = _from_regs([r().reshape(-1, 32)[warps] for r in ra], ma, m, k, sizes[1])
        B = _from_regs([r().reshape(-1, 32)[warps] for r in rb], mb, k, n, sizes[2])
        C = _from_regs([r().reshape(-1, 32)[warps] for r in rc], mc, m, n, sizes[3])
        D = np.asarray(product(A, B, C)).astype(_UINT[sizes[0]])
        for w, x in zip(ws, _to_regs(D, md, len(ws)), strict=True):
            _scatter(ctx, warps, x, w, mk)
    return run


def _mma_f64(ctx, st, parts):
    """wmma.mma m8n8k4 f64 as DMMA.8x8x4: D = C + A·B as fmas chained in k order from C, each rounded in the
    instruction's mode (.rn by default)."""
    if [p for p in parts if p in _BYTES] != ["f64"] * 4 or "m8n8k4" not in parts:
        ctx.unsupported(st, f"{st.opcode} (f64 wmma.mma is m8n8k4 with f64 A, B, C and D)")
    mode = next((p for p in parts if p in _RND), "rn")
    return _mma_run(ctx, st, (8, 8, 4), (8, 8, 8, 8), lambda A, B, C: fma_chain_f64(A, B, C, mode))


def _unpack(words: np.ndarray, bits: int, axis: int) -> np.ndarray:
    """uint32 words -> their 32 / bits elements each (lowest bits first, as uint8), spread along `axis`."""
    shifts = np.arange(32 // bits, dtype=np.uint32) * np.uint32(bits)
    v = ((np.moveaxis(words, axis, -1)[..., None] >> shifts) & np.uint32((1 << bits) - 1)).astype(np.uint8)
    return np.moveaxis(v.reshape(*v.shape[:-2], -1), -1, axis)


def _mma_subbyte(ctx, st, parts):
    """wmma.mma m8n8k32 s4 / u4 and m8n8k128 b1 (.xor.popc / .and.popc): the mma.sync form's exact sums (A and B
    one word of K per lane, the m8n8 fragments; s32 C and D)."""
    shape = next((p for p in parts if p in _SHAPES), "")
    types = [p for p in parts if p in _BITS or p == "s32"]
    _, product = _int_mma(ctx, st, parts, shape, types)
    bits = _BITS[types[1]]
    return _mma_run(ctx, st, _words(_SHAPES[shape], types[1])[0], (4, 4, 4, 4),
                    lambda A, B, C: product(_unpack(A, bits, 2), _unpack(B, bits, 1), C))


def _mma(ctx, st, parts):
    if any(p in _BITS for p in parts):
        return _mma_subbyte(ctx, st, parts)
    if "f64" in parts:
        return _mma_f64(ctx, st, parts)
    shape = next((_SHAPES[p] for p in parts if p in _SHAPES), None)
    types = [p for p in parts[3:] if p in _BYTES]
    if shape is None or len(types) not in (2, 4):
        ctx.unsupported(st, f"{st.opcode} (wmma.mma: see the emulator's wmma shapes and types)")
    m, n, k = shape
    d_t, c_t = types[0], types[-1]
    ab = types[1] if len(types) == 4 else {8: "tf32"}.get(k, "f16")
    if len(types) == 4 and types[1] != types[2]:
        ctx.unsupported(st, f"{st.opcode} (A and B of one type)")
    if d_t != c_t:
        ctx.unsupported(st, f"{st.opcode} (D and C of one type; the mixed forms are not modelled)")
    integer = ab in ("s8", "u8")
    if not integer:
        name = f"mma.m16n8k{k}.{d_t}.{ab}.{ab}"
        if name not in _FORMS or (ab == "tf32") != (k == 8):
            ctx.unsupported(st, f"{st.opcode} (no Hopper mma.sync form {name} to lower it to)")
        form = _FORMS["mma.m16n8k4.f32.tf32.tf32" if ab == "tf32" else name]
    esize = {"tf32": 4}.get(ab, _BYTES[ab])
    desize = _BYTES[d_t]
    sat = "satfinite" in parts

    def product(A, B, C):
        if integer:
            return s32_sum(C, int_products(A, B, ab, ab), sat)
        mp = max(m, 16)  # m8n32k16: A padded to the m16 tiles ptxas uses
        A16 = np.zeros((A.shape[0], -(-mp // 16) * 16, k), A.dtype)
        A16[:, :m] = A
        C16 = np.zeros((C.shape[0], A16.shape[1], n), C.dtype)
        C16[:, :m] = C
        out = np.zeros_like(C16)
        for r0 in range(0, A16.shape[1], 16):
            for c0 in range(0, n, 8):
                acc = C16[:, r0:r0 + 16, c0:c0 + 8]
                for k0 in range(0, k, form.k):  # tf32 k8: two chained m16n8k4 steps
                    acc = tc_mma(form, A16[:, r0:r0 + 16, k0:k0 + form.k], B[:, k0:k0 + form.k, c0:c0 + 8], acc)
                out[:, r0:r0 + 16, c0:c0 + 8] = acc
        return out[:, :m]
    return _mma_run(ctx, st, shape, (desize, esize, esize, desize), product)


BUILDERS = {"wmma": b_wmma}
