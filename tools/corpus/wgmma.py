"""wgmma forms (samples_sm90a: wgmma_forms, and wgmma_sp_forms for the sparse ones): WgForm, WG_FORMS and
WG_SP_FORMS, the descriptors' shared-memory layouts, the inputs and expected results of each dense form, and the
forms' entry names."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tools.corpus.mma import sp_meta
from tools.corpus.values import _to_e4m3, _wg_codes, f16, f32

# Each form's steps name the descriptors the kernel builds: (start, LBO, SBO, swizzle bytes or 0) of A (None: A from
# registers) and of B, with the step's (imm-scale-a, imm-scale-b). A step reads 32 bytes of K from each row (a
# sparse step: the compressed A's 32 bytes, and 64 bytes of K from each row of B).

@dataclass(frozen=True)
class WgForm:
    """One wgmma_forms form: types, N, the per-step descriptors and scales, image bytes, scale-d, CTAs."""

    form: int
    acc: str
    ta: str
    tb: str
    n: int
    steps: tuple  # ((A descriptor or None, B descriptor, (imm-scale-a, imm-scale-b)), ...)
    image: int
    scale_d: int
    ctas: int
    mn_major: tuple = (False, False)  # (A, B) read MN-major (imm-trans-a / -b = 1)
    sels: tuple = ()  # sparse: each step's sparsity selector (empty: a dense form)
    probe: bool = False  # sparse: integer-valued A and B whose D - C names the B rows each chunk's metadata picked

    @property
    def sparse(self) -> bool:
        return bool(self.sels)

    @property
    def k(self) -> int:
        """K of one step: 32 bytes of the operand type (sparse: 64 bytes)."""
        return (64 if self.sparse else 32) // WG_BYTES[self.ta]

    @property
    def tc_form(self) -> str:
        """The numerics.tensorcore form (its n8 name; a wgmma form takes any N; sparse: the dense form of K/2)."""
        return f"wgmma.m64n8k{self.k // 2 if self.sparse else self.k}.{self.acc}.{self.ta}.{self.tb}"

    @property
    def integer(self) -> bool:
        return self.acc.startswith("s32")


WG_BYTES = {"e4m3": 1, "e5m2": 1, "f16": 2, "bf16": 2, "s8": 1, "u8": 1, "tf32": 4}
_SCALES = ((1, 1), (-1, 1), (1, -1), (-1, -1))  # (imm-scale-a, imm-scale-b) of the steps, as the kernel issues them
WG_FORMS = (
    # bf16 -> f32 n16, A from registers; B 16 rows x 128 B, 128-byte swizzle: steps 32 B apart in the swizzle span
    WgForm(0, "f32", "bf16", "bf16", 16, tuple((None, (32 * s, 16, 1024, 128), _SCALES[s]) for s in range(4)),
           2048, 1, 4),
    # e4m3 x e5m2 -> f16 n32, no swizzle: A's core matrices stacked along M (LBO 1024, SBO 128), B's along K
    WgForm(1, "f16", "e4m3", "e5m2", 32, (((0, 1024, 128, 0), (4096, 128, 512, 0), (1, 1)),
                                          ((2048, 1024, 128, 0), (4352, 128, 512, 0), (1, -1))), 6144, 0, 4),
    # f16 -> f32 n40: A 128-byte swizzle; B two K slabs of 40 rows x 64 B, 64-byte swizzle
    WgForm(2, "f32", "f16", "f16", 40,
           tuple(((32 * s, 16, 1024, 128), (8192 + 2560 * (s // 2) + 32 * (s % 2), 16, 512, 64), sc)
                 for s, sc in enumerate(((1, 1), (-1, 1), (1, 1), (1, -1)))), 13312, 1, 4),
    # e4m3 -> f16 n256: A and B (256 rows) 128-byte swizzle
    WgForm(3, "f16", "e4m3", "e4m3", 256,
           tuple(((32 * s, 16, 1024, 128), (8192 + 32 * s, 16, 1024, 128), sc)
                 for s, sc in enumerate(((1, 1), (1, 1), (-1, 1), (1, 1)))), 40960, 1, 2),
    # f16 -> f32 n64, both MN-major: A no swizzle (M blocks at SBO 128, k-blocks at LBO 1024); B 64-byte swizzle
    # (32 columns per k-row, the next 32 at LBO 2048, k-blocks at SBO 512)
    WgForm(4, "f32", "f16", "f16", 64, (((0, 1024, 128, 0), (4096, 2048, 512, 64), (1, 1)),
                                        ((2048, 1024, 128, 0), (5120, 2048, 512, 64), (-1, 1))), 8192, 1, 4,
           (True, True)),
    # integers -> s32 n64, A and B 128-byte swizzle, 4 steps: s8 x s8 wrapped, u8 x s8 .satfinite (C near the ends)
    *(WgForm(form, acc, ta, "s8", 64, tuple(((32 * s, 16, 1024, 128), (8192 + 32 * s, 16, 1024, 128), (1, 1))
                                            for s in range(4)), 16384, 1, 4)
      for form, acc, ta in ((5, "s32", "s8"), (6, "s32.satfinite", "u8"))),
    # tf32 -> f32 n32, A and B 128-byte swizzle, 4 steps with every imm-scale pair (f32 words with their low 13 bits
    # set: the tensor core must not read them)
    WgForm(7, "f32", "tf32", "tf32", 32, tuple(((32 * s, 16, 1024, 128), (8192 + 32 * s, 16, 1024, 128), _SCALES[s])
                                              for s in range(4)), 12288, 1, 4),
    # tf32 -> f32 n16, A from registers, B 64-byte swizzle (2 steps in its span), scale-d = 0
    WgForm(8, "f32", "tf32", "tf32", 16, tuple((None, (32 * s, 16, 512, 64), _SCALES[s]) for s in range(2)), 1024, 0,
           4),
)


# Sparse forms (wgmma_sp_forms), all N = 32: the compressed A 64 x 32 bytes, B 32 rows x 64 bytes of K; random
# metadata in every lane, one selector per step
WG_SP_FORMS = (
    # f16 -> f32: A and B 128-byte swizzle; step 2 (selector 1, -A) reads the second 64 bytes of B's 128-byte rows
    WgForm(0, "f32", "f16", "f16", 32, (((0, 16, 1024, 128), (8192, 16, 1024, 128), (1, 1)),
                                        ((32, 16, 1024, 128), (8192 + 64, 16, 1024, 128), (-1, 1))), 12288, 1, 4,
           sels=(0, 1)),
    # bf16 -> f32, A from registers, B without swizzle (core matrices along K at LBO 128, 8-row groups at SBO 512),
    # scale-d = 0
    WgForm(1, "f32", "bf16", "bf16", 32, ((None, (0, 128, 512, 0), (1, -1)),), 2048, 0, 4, sels=(1,)),
    # e4m3 x e5m2 -> f32 k64: A and B 64-byte swizzle, B's 64-byte rows one step's K; two B slabs
    WgForm(2, "f32", "e4m3", "e5m2", 32, (((0, 16, 512, 64), (4096, 16, 512, 64), (1, 1)),
                                          ((32, 16, 512, 64), (6144, 16, 512, 64), (1, -1))), 8192, 1, 4,
           sels=(0, 0)),
    # tf32 -> f32 k16 (1:2): A and B 128-byte swizzle, both selectors, every imm-scale sign on the second step
    WgForm(3, "f32", "tf32", "tf32", 32, (((0, 16, 1024, 128), (8192, 16, 1024, 128), (1, -1)),
                                          ((32, 16, 1024, 128), (8192 + 64, 16, 1024, 128), (-1, -1))), 12288, 1, 4,
           sels=(0, 1)),
    # u8 x s8 -> s32 .satfinite k64: A 128-byte swizzle, B without swizzle; C near both ends of the s32 range
    WgForm(4, "s32.satfinite", "u8", "s8", 32, (((0, 16, 1024, 128), (8192, 128, 512, 0), (1, 1)),), 10240, 1, 4,
           sels=(0,)),
    # f16 -> f16 with B MN-major (imm-trans-b = 1), 64-byte swizzle: 32 columns per k-row, k-blocks of 8 at SBO 512
    WgForm(5, "f16", "f16", "f16", 32, (((0, 16, 1024, 128), (8192, 2048, 512, 64), (1, 1)),), 10240, 1, 4,
           (False, True), sels=(0,)),
    # probes (one step, A and B 128-byte swizzle): f16 selector 1, e4m3 selector 0, tf32 selector 0
    *(WgForm(form, "f32", t, t, 32, (((0, 16, 1024, 128), (8192, 16, 1024, 128), (1, 1)),), 12288, 1, 4,
             sels=(sel,), probe=True) for form, t, sel in ((6, "f16", 1), (7, "e4m3", 0), (8, "tf32", 0))),
)


def wg_address(desc: tuple, row: int | np.ndarray, kb: int | np.ndarray, mn_major: bool = False):
    """Shared byte address of (row, K byte < 32, or < 64 for a sparse B) under a descriptor (start, LBO, SBO,
    swizzle), as the PTX ISA's canonical layouts place it: K-major, or MN-major for 16-bit elements (k = kb / 2; W / 2
    elements of the row dimension per k-row, 8 k-rows per atom); the swizzle XORs address bits [4, 4 + log2(W / 16))
    with bits [7, ...)."""
    start, lbo, sbo, w = desc
    row, kb = np.asarray(row), np.asarray(kb)
    if mn_major:
        k, byte = kb // 2, kb % 2
        if w == 0:  # core matrices: 8 k-rows of 16 bytes (8 elements of the row dimension)
            return start + (row // 8) * sbo + (k // 8) * lbo + (k % 8) * 16 + (row % 8) * 2 + byte
        addr = start + (row // (w // 2)) * lbo + (k // 8) * sbo + (k % 8) * w + (row % (w // 2)) * 2 + byte
    elif w == 0:
        return start + (row // 8) * sbo + (kb // 16) * lbo + (row % 8) * 16 + kb % 16
    else:
        addr = start + (row // 8) * sbo + (row % 8) * w + kb
    return addr ^ (((addr >> 7) & (w // 16 - 1)) << 4)


def wg_tiles(rng, f: WgForm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logical tiles per CTA: A (CTA, step, 64, K; sparse: the compressed K / 2), B (CTA, step, N, K) codes and C
    (CTA, 64, N) bits (the first CTA with special operands; NaN C where scale-d = 0 must ignore it)."""
    ns = len(f.steps)
    ka = f.k // 2 if f.sparse else f.k
    if f.probe:  # each 2:4 chunk's kept pair (1, 8), a tf32 pair's kept element 1; B in column n only chunk
        # n % chunks, its rows 1..4 (tf32 1..2) by position: D - C = i0 + 1 + 8 (i1 + 1) (tf32: i + 1)
        per = 2 if f.ta == "tf32" else 4
        kv = np.arange(f.k)[None, :]
        bv = np.where(kv // per == np.arange(f.n)[:, None] % (f.k // per), kv % per + 1, 0)  # (N, K)
        av = np.ones(ka) if per == 2 else np.tile([1.0, 8.0], ka // 2)
        enc = {"f16": lambda x: x.astype(np.float16).view(np.uint16),
               "tf32": lambda x: x.astype(np.float32).view(np.uint32), "e4m3": _to_e4m3}[f.ta]
        a = np.broadcast_to(enc(av), (f.ctas, ns, 64, ka)).copy()
        b = np.broadcast_to(enc(bv), (f.ctas, ns, f.n, f.k)).copy()
        c = rng.integers(-60, 61, (f.ctas, 64, f.n)).astype(np.float32).view(np.uint32)
        return a, b, c
    if f.integer:  # any codes; C within 2^17 of either end of the s32 range in half of the columns
        a = rng.integers(0, 256, (f.ctas, ns, 64, ka), dtype=np.uint8)
        b = rng.integers(0, 256, (f.ctas, ns, f.n, f.k), dtype=np.uint8)
        c = rng.integers(-2**31, 2**31, (f.ctas, 64, f.n), dtype=np.int64)
        edge = rng.integers(0, 2**17, (f.ctas, 64, f.n // 2))
        c[..., : f.n // 2] = np.where(rng.random(edge.shape) < 0.5, 2**31 - 1 - edge, -2**31 + edge)
        return a, b, c.astype(np.int32).view(np.uint32)
    special = np.array([0.01] + [0.0] * (f.ctas - 1))
    a = np.stack([_wg_codes(rng, f.ta, (ns, 64, ka), sp) for sp in special])
    b = np.stack([_wg_codes(rng, f.tb, (ns, f.n, f.k), sp) for sp in special])
    if f.acc == "f32":
        c = f32(rng, (f.ctas, 64, f.n), 4.0).view(np.uint32)
    else:
        c = f16(rng, (f.ctas, 64, f.n), 4.0).view(np.uint16)
    if not f.scale_d:
        c = np.full_like(c, 0x7FC00000 if f.acc == "f32" else 0x7E00)
    return a, b, c


def wg_meta(rng, f: WgForm) -> np.ndarray:
    """A sparse form's metadata words (CTA, step, 128 threads): random ordered index pairs in every nibble of every
    lane (tf32: the pairs (0, 1) and (2, 3)), drawn after wg_tiles."""
    return sp_meta(rng, 4 * f.ctas * len(f.steps), tf32=f.ta == "tf32").reshape(f.ctas, len(f.steps), 128)


def wg_fragments(x: np.ndarray, acc: str) -> np.ndarray:
    """C / D tiles (..., 64, N) as the warpgroup's registers (..., reg, thread) words: f32 reg 4j + i holds row
    16w + g + 8(i >> 1), column 8j + 2t + (i & 1); f16 reg 2j + h the columns 8j + 2t, + 1 of row 16w + g + 8h."""
    th = np.arange(128)
    w, g, t = th // 32, (th % 32) // 4, th % 4
    n = x.shape[-1]
    if acc != "f16":
        r = np.arange(n // 2)[:, None]
        j, i = r // 4, r % 4
        return x[..., 16 * w + g + 8 * (i >> 1), 8 * j + 2 * t + (i & 1)].astype(np.uint32)
    r = np.arange(n // 4)[:, None]
    j, h = r // 2, r % 2
    lo = x[..., 16 * w + g + 8 * h, 8 * j + 2 * t].astype(np.uint32)
    hi = x[..., 16 * w + g + 8 * h, 8 * j + 2 * t + 1].astype(np.uint32)
    return lo | hi << 16


def wg_a_registers(a: np.ndarray) -> np.ndarray:
    """16-bit A tiles (..., 64, 16) as registers (..., 4, thread): reg r half i holds row 16w + g + 8(r & 1), k
    2t + i + 8(r >> 1); tf32 tiles (..., 64, 8): reg r is the word of row 16w + g + 8(r & 1), k t + 4(r >> 1)."""
    th = np.arange(128)
    w, g, t = th // 32, (th % 32) // 4, th % 4
    r = np.arange(4)[:, None]
    if a.dtype == np.uint32:
        return a[..., 16 * w + g + 8 * (r & 1), t + 4 * (r >> 1)]
    row, k = 16 * w + g + 8 * (r & 1), 2 * t + 8 * (r >> 1)
    return a[..., row, k].astype(np.uint32) | a[..., row, k + 1].astype(np.uint32) << 16


def wg_image(f: WgForm, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each CTA's shared-memory image (CTA, bytes): every step's A and B rows at their descriptors' addresses."""
    img = np.zeros((a.shape[0], f.image), np.uint8)
    owner = np.full(f.image, -1)
    for s, (da, db, _) in enumerate(f.steps):
        for desc, tile, rows, mn, kbytes in ((da, a, 64, f.mn_major[0], 32),
                                             (db, b, f.n, f.mn_major[1], 64 if f.sparse else 32)):
            if desc is None:
                continue
            row, kb = np.meshgrid(np.arange(rows), np.arange(kbytes), indexing="ij")
            addr = wg_address(desc, row, kb, mn)
            assert (owner[addr] == -1).all(), "two descriptors name one byte"
            owner[addr] = s
            img[:, addr] = tile[:, s].view(np.uint8).reshape(tile.shape[0], rows, kbytes)
    return img


def wg_expected(f: WgForm, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D (CTA, 64, N) bits from numerics.tensorcore: per step one wgmma of the form's datapath over all N columns;
    scales as sign flips."""
    from tcforge.numerics.tensorcore import tc_mma
    from tcforge.ptx.emulate.ops_wgmma import TF32_FORM

    sign = {1: 0x80, 2: 0x8000, 4: 0x80000000}
    form = TF32_FORM if f.ta == "tf32" else f.tc_form
    d = c if f.scale_d else np.zeros_like(c)
    if f.integer:  # each step: the exact sum, wrapped, or clamped with .satfinite
        val = {"s8": lambda x: x.view(np.int8).astype(np.int64), "u8": lambda x: x.astype(np.int64)}
        for s in range(len(f.steps)):
            e = d.view(np.int32).astype(np.int64) + val[f.ta](a[:, s]) @ val[f.tb](b[:, s]).swapaxes(-1, -2)
            e = np.clip(e, -2**31, 2**31 - 1) if f.acc.endswith("satfinite") else e
            d = (e & 0xFFFFFFFF).astype(np.uint32)
        return d
    for s, (_, _, (sa, sb)) in enumerate(f.steps):
        ai = a[:, s] ^ (sign[WG_BYTES[f.ta]] if sa < 0 else 0)
        bi = b[:, s] ^ (sign[WG_BYTES[f.tb]] if sb < 0 else 0)
        d = tc_mma(form, ai, bi.swapaxes(-1, -2), d)
    return d


def _wgmma_inputs(f: WgForm):
    def make(rng):
        a, b, c = wg_tiles(rng, f)
        img = wg_image(f, a, b)
        areg = wg_a_registers(a) if f.steps[0][0] is None else np.zeros((1, 128), np.uint32)
        cw = wg_fragments(c, f.acc)
        meta = [("meta", wg_meta(rng, f))] if f.sparse else []
        return [("img", img), f.image, ("areg", areg), *meta, ("c", cw), ("d", np.zeros_like(cw)), f.form, f.scale_d]
    return make


def wg_name(f: WgForm) -> str:
    """A wgmma form's corpus entry name."""
    if f.sparse:
        sels = "".join(map(str, f.sels))
        return f"wgmma_sp_{f.acc.replace('.', '_')}_{f.ta}_{f.tb}_{_wg_label(f)}_sel{sels}" + \
            ("_probe" if f.probe else "")
    return f"wgmma_{f.acc.replace('.', '_')}_{f.ta}_{f.tb}_n{f.n}_{_wg_label(f)}"


def _wg_label(f: WgForm) -> str:
    """What a form's entry name says of its operands: rA (A from registers) or its layouts, scale-d = 0."""
    names = {0: "none", 64: "sw64", 128: "sw128"}
    mn = ("mn" if f.mn_major[0] else "", "mn" if f.mn_major[1] else "")
    a = "rA" if f.steps[0][0] is None else f"A{mn[0]}{names[f.steps[0][0][3]]}"
    return f"{a}_B{mn[1]}{names[f.steps[0][1][3]]}" + ("" if f.scale_d else "_zeroC")


def _wgmma_base_offset(base: int, swz: int | None = None):
    """Inputs of the base-offset probes (wgmma_base_offset, and wgmma_base_offset_sw with B's swizzle field `swz`):
    two CTAs' 16 KB shared images of random f16 in [-2, 2) (A at 0, B at 8192 + 384, the rest read by neither), D's
    4 registers per thread, the base offset."""
    def make(rng):
        img = rng.uniform(-2, 2, (2, 8192)).astype(np.float16).view(np.uint8).reshape(2, 16384)
        return [("img", img), 16384, ("out", np.zeros((2 * 4, 128), np.uint32)), base, *([] if swz is None else [swz])]
    return make
