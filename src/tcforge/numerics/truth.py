"""Hardware-truth support: the counter-based RNG shared with the CUDA generator, the mma input families, tile digests
and loading of the committed truth files under `tests/data/numerics/`.

The RNG and the family generators here are mirrored line for line by `tools/truth/truth_kernels.cu`; committed device
samples of the first tiles prove the two agree.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tcforge.errors import TcforgeError

MASK32 = np.uint32(0xFFFFFFFF)
TILE_SLOTS = 1024  # counter slots reserved per mma tile: A 0..511, B 512..767, C 768..895, tile parameters 896..1023
SLOT_A, SLOT_B, SLOT_C, SLOT_P = 0, 512, 768, 896
MMA_KINDS = {
    0: "any finite e4m3 code, random finite C",
    1: "normal-like values (popcount exponents), cancellation",
    2: "large values, f16 overflow",
    3: "tiny values, subnormal results",
    4: "random codes incl. NaN, C from {+-0, +-inf, NaN, +-1, random}",
    5: "exact cancellation (mirrored terms), C = +-0",
    6: "mixed exponent spans (accumulation width)",
    7: "moderate values onto large C (rounding ties and sticky bits)",
    8: "large values and NaN codes with C in {+-inf, +-65504, NaN, +-0}",
}


def mix32(x: np.ndarray) -> np.ndarray:
    """Bijective 32-bit integer hash (xorshift-multiply rounds), uint32 in and out."""
    x = np.asarray(x, dtype=np.uint32).copy()
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def rng_key(seed: int, stream: int) -> np.uint32:
    """The per-(seed, stream) key: mix32(mix32(seed) ^ stream)."""
    s = mix32(np.array([seed & 0xFFFFFFFF], dtype=np.uint32))
    return mix32(s ^ np.uint32(stream & 0xFFFFFFFF))[0]


def rng_u32(seed: int, stream: int, index: np.ndarray) -> np.ndarray:
    """Counter-based random word for (seed, stream, index): mix32(mix32(index ^ key) + key), index taken mod 2^32."""
    key = rng_key(seed, stream)
    idx = np.asarray(index).astype(np.uint64, copy=False) & np.uint64(0xFFFFFFFF)
    h = mix32(idx.astype(np.uint32) ^ key)
    return mix32(h + key)


def _popcount8(x: np.ndarray) -> np.ndarray:
    """Number of set bits in the low 8 bits of each uint32."""
    x = x & np.uint32(0xFF)
    x = x - ((x >> np.uint32(1)) & np.uint32(0x55))
    x = (x & np.uint32(0x33)) + ((x >> np.uint32(2)) & np.uint32(0x33))
    return (x + (x >> np.uint32(4))) & np.uint32(0x0F)


def _u(v: int) -> np.uint32:
    return np.uint32(v)


def _finite_code(code: np.ndarray) -> np.ndarray:
    """Turn the e4m3 NaN codes 0x7f/0xff into 0x7e/0xfe, leave the rest."""
    return np.where((code & _u(0x7F)) == _u(0x7F), code ^ _u(1), code)


def _e4m3_from(w: np.ndarray, ef: np.ndarray) -> np.ndarray:
    """e4m3 code with sign bit w[7], exponent field ef (clamped to 0..15), mantissa w[2:0], never NaN."""
    ef = np.minimum(ef, _u(15))
    return _finite_code((w & _u(0x80)) | (ef << _u(3)) | (w & _u(7)))


def _f16_from(w: np.ndarray, ef: np.ndarray) -> np.ndarray:
    """f16 bits with sign bit w[15], exponent field ef (clamped to 0..30), mantissa w[9:0]."""
    ef = np.minimum(ef, _u(30))
    return (w & _u(0x8000)) | (ef << _u(10)) | (w & _u(0x3FF))


def _select(sel: np.ndarray, table: list) -> np.ndarray:
    """table[sel] elementwise, uint32 (each entry a value, or an array computed for every element)."""
    out = np.zeros(sel.shape, np.uint32)
    for i, v in enumerate(table):
        out = np.where(sel == _u(i), v, out)
    return out


def _ab_codes(kind: int, w: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """e4m3 codes of A or B elements for one family from their random words (p0: per-tile parameter word)."""
    e8 = (w >> _u(8)) & _u(0xFF)
    if kind == 0:
        return _finite_code(w & _u(0xFF))
    if kind == 1:
        return _e4m3_from(w, _u(3) + _popcount8(e8))
    if kind == 2:
        return _e4m3_from(w, _u(11) + (e8 & _u(3)) + ((e8 >> _u(2)) & _u(1)))
    if kind == 3:
        return _e4m3_from(w, (e8 & _u(3)) + ((e8 >> _u(2)) & _u(1)))
    if kind == 4:
        code = w & _u(0xFF)
        return np.where((e8 & _u(63)) == _u(0), (w & _u(0x80)) | _u(0x7F), code)
    if kind == 5:
        wide = ((p0 >> _u(1)) & _u(1)) == _u(1)
        return np.where(wide, _finite_code(w & _u(0xFF)), _e4m3_from(w, _u(3) + _popcount8(e8)))
    if kind == 6:
        span = p0 & _u(15)
        top = _u(8) + ((p0 >> _u(8)) & _u(7))
        drop = (e8 * (span + _u(1))) >> _u(8)
        ef = np.where(drop >= top, _u(0), top - drop)
        return _e4m3_from(w, ef)
    if kind == 7:
        return _e4m3_from(w, _u(6) + (e8 & _u(3)))
    if kind == 8:
        big = _e4m3_from(w, _u(10) + (e8 & _u(3)) + ((e8 >> _u(2)) & _u(3)))
        return np.where(((w >> _u(16)) & _u(31)) == _u(0), (w & _u(0x80)) | _u(0x7F), big)
    raise TcforgeError(f"kind: expected one of {sorted(MMA_KINDS)}, got {kind}")


def _c_bits(kind: int, w: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """f16 bits of C elements for one family from their random words."""
    e8 = (w >> _u(16)) & _u(0xFF)
    if kind == 0:
        bits = w & _u(0xFFFF)
        return np.where((bits & _u(0x7C00)) == _u(0x7C00), bits ^ _u(0x4000), bits)
    if kind == 1:
        return _f16_from(w, _u(11) + _popcount8(e8))
    if kind == 2:
        return _f16_from(w, _u(26) + (e8 & _u(3)) + ((e8 >> _u(2)) & _u(1)))
    if kind == 3:
        return _f16_from(w, e8 & _u(3))
    if kind == 4:
        nan = (w & _u(0x8000)) | _u(0x7C00) | (w & _u(0x3FF)) | _u(1)
        fin = _f16_from(w, _u(8) + (e8 & _u(15)))
        sel = (w >> _u(24)) & _u(7)
        return _select(sel, [_u(0x0000), _u(0x8000), _u(0x7C00), _u(0xFC00), nan, _u(0x3C00), _u(0xBC00), fin])
    if kind == 5:
        return w & _u(0x8000)
    if kind == 6:
        efc = _u(1) + ((p0 >> _u(16)) % _u(30))
        ef = np.clip(efc.astype(np.int64) + (e8 & _u(3)).astype(np.int64) - 1, 1, 30).astype(np.uint32)
        return _f16_from(w, ef)
    if kind == 7:
        return _f16_from(w, _u(20) + ((p0 >> _u(4)) % _u(11)))
    if kind == 8:
        fin = _f16_from(w, _u(20) + (e8 & _u(7)))
        sel = (w >> _u(24)) & _u(7)
        return _select(sel, [*map(_u, (0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x7E00, 0x0000, 0x8000)), fin])
    raise TcforgeError(f"kind: expected one of {sorted(MMA_KINDS)}, got {kind}")


def mma_tile_inputs(kind: int, seed: int, start: int, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Regenerate the inputs (a uint8 (n,16,32), b uint8 (n,32,8), c uint16 (n,16,8)) of tiles start..start+count-1.

    Stream = kind; the counter of tile t, slot j is t * 1024 + j.
    """
    if kind not in MMA_KINDS:
        raise TcforgeError(f"kind: expected one of {sorted(MMA_KINDS)}, got {kind}")
    if start < 0 or count < 0 or (start + count) * TILE_SLOTS > 2**32:
        raise TcforgeError(f"start/count: tiles must lie in [0, {2**32 // TILE_SLOTS}), got {start}+{count}")
    tiles = np.arange(start, start + count, dtype=np.uint64)[:, None] * np.uint64(TILE_SLOTS)
    p0 = rng_u32(seed, kind, tiles + np.uint64(SLOT_P))  # (n, 1)
    row = np.arange(16)[:, None]
    col = np.arange(8)[None, :]
    k_a = np.arange(32)[None, :]
    k_b = np.arange(32)[:, None]
    if kind == 5:  # A's mirrored copies (negated below) and their source k: mode 0 pairs k<->k+16, mode 1 k<->k^2
        mode = (p0 & _u(1))[:, :, None]  # (n,1,1)
        copy_a = np.where(mode == 0, k_a >= 16, (k_a & 2) != 0)
        src_a = np.where(mode == 0, k_a & 15, k_a & ~2)
        src_b = np.where(mode == 0, k_b & 15, k_b & ~2)
        slot_a = row[None] * 32 + src_a
        slot_b = src_b * 8 + col[None]
    else:
        slot_a = np.broadcast_to(row * 32 + k_a, (1, 16, 32))
        slot_b = np.broadcast_to(k_b * 8 + col, (1, 32, 8))
    t3 = tiles[:, :, None]
    p3 = p0[:, :, None]
    wa = rng_u32(seed, kind, t3 + np.uint64(SLOT_A) + slot_a.astype(np.uint64))
    wb = rng_u32(seed, kind, t3 + np.uint64(SLOT_B) + slot_b.astype(np.uint64))
    wc = rng_u32(seed, kind, t3 + np.uint64(SLOT_C) + (row * 8 + col).astype(np.uint64)[None])
    a = _ab_codes(kind, wa, p3)
    b = _ab_codes(kind, wb, p3)
    if kind == 5:
        a = np.where(copy_a, a ^ _u(0x80), a)
    c = _c_bits(kind, wc, p3)
    return a.astype(np.uint8), b.astype(np.uint8), c.astype(np.uint16)


def tile_digests(d: np.ndarray) -> np.ndarray:
    """Per-tile 64-bit digest of (n,16,8) uint16: first 8 bytes of BLAKE2b over the tile's little-endian bits."""
    d = np.asarray(d, dtype="<u2")
    if d.ndim != 3 or d.shape[1:] != (16, 8):
        raise TcforgeError(f"d: expected uint16 array of shape (n, 16, 8), got {d.shape}")
    return chunk_digests(d.reshape(-1), 128)


def chunk_digests(values: np.ndarray, chunk: int) -> np.ndarray:
    """64-bit BLAKE2b digest of each consecutive `chunk` elements of a 1-D array (little-endian bytes)."""
    v = np.ascontiguousarray(values)
    if v.ndim != 1 or v.size % chunk:
        raise TcforgeError(f"values: expected a 1-D array whose length is a multiple of {chunk}, got shape {v.shape}")
    v = v.astype(v.dtype.newbyteorder("<"), copy=False)
    out = np.empty(v.size // chunk, dtype=np.uint64)
    for i in range(out.size):
        blob = v[i * chunk : (i + 1) * chunk].tobytes()
        out[i] = int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "little")
    return out


def truth_dir() -> Path:
    """Directory of the committed hardware truth (`tests/data/numerics` of a source checkout)."""
    return Path(__file__).resolve().parents[3] / "tests" / "data" / "numerics"


def load_truth(name: str, directory: Path | None = None) -> dict[str, np.ndarray]:
    """Load one committed truth archive (`name`.npz) as a dict of arrays; a clear error if it is absent or malformed."""
    path = (directory or truth_dir()) / f"{name}.npz"
    if not path.is_file():
        raise TcforgeError(f"name: no truth file {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise TcforgeError(f"name: {path} is not a readable .npz archive ({exc})") from exc


# ---------------------------------------------------------------- operand generators of the element-wise truth
TRUTH_SEED = 0x7C0F0D6E
STREAM_F16 = 0x100  # +0, +1, +2: x, y, z of the scalar f16 ops
STREAM_F16X2 = 0x110  # +0, +1, +2: x, y, z words of the f16x2 ops
STREAM_F32 = 0x200  # +0, +1: x, y of cvt.rn.f16.f32 / mul.ftz.f32 / add.ftz.f32
STREAM_APPROX = 0x300  # whole-domain f32 bit patterns for rcp / rsqrt / ex2
STREAM_DIV = 0x310  # +0, +1: a, b of div.approx.ftz.f32

_F16_SPECIALS = [
    0x0000,
    0x8000,
    0x7C00,
    0xFC00,
    0x7E00,
    0xFE00,
    0x7C01,
    0x7BFF,
    0xFBFF,
    0x0001,
    0x8001,
    0x03FF,
    0x0400,
    0x3C00,
    0xBC00,
    0x3555,
]


def f16_operands(seed: int, stream: int, n: int) -> np.ndarray:
    """n f16 bit patterns: 10/16 any code, 1/16 special values, 5/16 values of exponent 13..18 (cancellation, ties)."""
    w = rng_u32(seed, stream, np.arange(n, dtype=np.uint64))
    sel = w >> _u(28)
    anyc = w & _u(0xFFFF)
    special = np.asarray(_F16_SPECIALS, dtype=np.uint32)[(w >> _u(16)) & _u(15)]
    near = _f16_from(w, _u(13) + ((w >> _u(16)) & _u(3)) + ((w >> _u(18)) & _u(3)) // _u(2))
    out = np.where(sel < _u(10), anyc, np.where(sel == _u(10), special, near))
    return out.astype(np.uint16)


_F32_SPECIALS = [
    0x00000000,
    0x80000000,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0xFFC00001,
    0x00000001,
    0x807FFFFF,
    0x00800000,
    0x7F7FFFFF,
    0x477FE000,
    0x477FF000,
    0x33800000,
    0x33000000,
    0x387FC000,
    0x3F800000,
]


def f32_operands(seed: int, stream: int, n: int) -> np.ndarray:
    """n f32 bit patterns: 8/16 any, 1/16 special, 4/16 in the f16 range (exp 100..143), 3/16 f16 rounding ties."""
    w = rng_u32(seed, stream, np.arange(n, dtype=np.uint64))
    w2 = mix32(w ^ _u(0xA5A5A5A5))
    sel = w >> _u(28)
    special = np.asarray(_F32_SPECIALS, dtype=np.uint32)[(w >> _u(20)) & _u(15)]
    exp = _u(100) + (w2 >> _u(24)) % _u(44)
    f16range = (w & _u(0x80000000)) | (exp << _u(23)) | (w2 & _u(0x7FFFFF))
    tie = (f16range & ~_u(0x1FFF)) | _u(0x1000)
    out = np.where(sel < _u(8), w2, np.where(sel == _u(8), special, np.where(sel < _u(13), f16range, tie)))
    return out.astype(np.uint32)


def approx_operands(seed: int, n: int) -> np.ndarray:
    """n uniformly random f32 bit patterns (the whole domain) for the unary approximations."""
    return rng_u32(seed, STREAM_APPROX, np.arange(n, dtype=np.uint64)).astype(np.uint32)


def div_operands(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) f32 bit patterns: the first 3/4 finite a over positive normal b (required domain), the rest any bits."""
    idx = np.arange(n, dtype=np.uint64)
    wa = rng_u32(seed, STREAM_DIV, idx)
    wb = rng_u32(seed, STREAM_DIV + 1, idx)
    req = idx < np.uint64(n - n // 4)
    a_fin = np.where(((wa >> _u(23)) & _u(255)) == _u(255), wa ^ _u(0x40000000), wa)
    eb = _u(1) + (wb >> _u(23)) % _u(254)
    b_pos = (eb << _u(23)) | (wb & _u(0x7FFFFF))
    a = np.where(req, a_fin, wa)
    b = np.where(req, b_pos, wb)
    return a.astype(np.uint32), b.astype(np.uint32)


STREAM_EDGE = 0x320  # +0, +1: a, b pairs near the f32 underflow/overflow edges (mul.ftz.f32, div.approx.ftz.f32)


def edge_operands(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) f32 bit patterns, b positive normal: 1/2 products a*b near 2^-126, 1/4 tiny a over large b,
    1/4 finite a over b >= 2^125 (where rcp(b) flushes); the last 4096 pairs crafted around 2^-126."""
    idx = np.arange(n, dtype=np.uint64)
    wa = rng_u32(seed, STREAM_EDGE, idx)
    wb = rng_u32(seed, STREAM_EDGE + 1, idx)
    part = (wb >> _u(30)) & _u(3)
    ea_mul = _u(2) + (wa >> _u(23)) % _u(124)
    eb_mul = _u(126) + ((wb >> _u(23)) % _u(3)) - ea_mul
    ea_div = _u(1) + (wa >> _u(23)) % _u(40)
    eb_div = _u(100) + (wb >> _u(23)) % _u(155)
    ea_any = _u(1) + (wa >> _u(23)) % _u(254)
    eb_big = _u(252) + (wb >> _u(23)) % _u(3)
    ea = np.where(part < _u(2), ea_mul, np.where(part == _u(2), ea_div, ea_any))
    eb = np.where(part < _u(2), eb_mul, np.where(part == _u(2), eb_div, eb_big))
    a = (wa & _u(0x80000000)) | (ea << _u(23)) | (wa & _u(0x7FFFFF))
    b = (eb << _u(23)) | (wb & _u(0x7FFFFF))
    # the last 4096 pairs are crafted: (1 - j 2^-24) * 2^-126 (1 + k 2^-23), products straddling 2^-126 by a few ulp
    crafted = idx >= np.uint64(max(n - 4096, 0))
    j = (idx & np.uint64(63)).astype(np.uint32)
    k = ((idx >> np.uint64(6)) & np.uint64(63)).astype(np.uint32)
    a = np.where(crafted, (wa & _u(0x80000000)) | (_u(0x3F7FFFFF) - j), a)
    b = np.where(crafted, _u(0x00800000) + k, b)
    return a.astype(np.uint32), b.astype(np.uint32)


# ---------------------------------------------------------------- tensor-core forms (wgmma, mma.sync f32 and e5m2)
# Tile inputs of every form in tensorcore.HOPPER_FORMS, generated for any operand format from format parameters; the
# CUDA twin is k_gen_tc in tools/truth/wgmma_kernels.cu. Counter of tile t, slot j: t * TC_TILE_SLOTS + j.
TC_TILE_SLOTS = 4096
TC_SLOT_A, TC_SLOT_B, TC_SLOT_C, TC_SLOT_P = 0, 2048, 3072, 4032
TC_STREAM_BASE = 0x1000
TC_MIX = 0x9E3779B9  # second word of an element: mix32(w ^ TC_MIX)
TC_FAMILIES = {
    0: "any finite codes (exponent field reduced below the operand top), any finite C",
    1: "normal-like values around 1 (popcount exponents), cancellation",
    2: "large values (the operand top's binades: products reach C's overflow), C near the largest products",
    3: "tiny values: subnormal operands (per tile: both tiny, or subnormal A against normal B; half the tiles with "
       "+0 / -0 rows of A and B >= 0); C subnormal in its format, just below the products, or +-0",
    4: "specials: NaN (1/128), inf (1/64; e4m3: +-448), zeros (1/16); C in {+-0, +-inf, NaN, +-1, moderate}",
    5: "exact cancellation (terms mirrored k<->k+K/2 or k<->k^2, a negated), C = +-0",
    6: "mixed exponent spans per tile (alignment width), C below the top product",
    7: "moderate values onto large C (ties and sticky bits of the cut and the rounding)",
    8: "large values with NaN (1/128) and inf (1/32; e4m3: +-448) codes; C in {+-inf, +-max, NaN, +-0, large}",
}


def tc_stream(form_index: int, family: int) -> int:
    """RNG stream of one (form, family): TC_STREAM_BASE + 16 * form index + family."""
    return TC_STREAM_BASE + 16 * form_index + family


class _Fmt:
    """Format constants the generator needs (mirrors the CUDA twin's table)."""

    def __init__(self, name: str) -> None:
        from tcforge.numerics.tensorcore import FORMATS

        f = FORMATS[name]
        self.name, self.E, self.M, self.B, self.ieee, self.T = f.name, f.ebits, f.mbits, f.bias, f.ieee, f.top_field
        self.emax = f.emax

    def mk(self, w: np.ndarray, ef: np.ndarray) -> np.ndarray:
        """Code with w's sign (bit 31) and mantissa (low bits), exponent field min(ef, top) (never NaN)."""
        ef = np.minimum(ef.astype(np.int64), self.T).astype(np.uint32)
        code = ((w >> _u(31)) << _u(self.E + self.M)) | (ef << _u(self.M)) | (w & _u((1 << self.M) - 1))
        return self.finite(code)

    def finite(self, code: np.ndarray) -> np.ndarray:
        """A non-finite code made finite: IEEE clears the exponent's top bit, e4m3 turns NaN into +-448."""
        if self.ieee:
            ef = (code >> _u(self.M)) & _u((1 << self.E) - 1)
            return np.where(ef == _u((1 << self.E) - 1), code ^ _u(1 << (self.M + self.E - 1)), code)
        return np.where((code & _u(0x7F)) == _u(0x7F), code ^ _u(1), code)

    def any(self, w: np.ndarray) -> np.ndarray:
        """Any code: the low bits of w."""
        return w & _u((1 << (1 + self.E + self.M)) - 1) if self.E + self.M < 31 else w.copy()

    def any_below(self, w: np.ndarray, top: int) -> np.ndarray:
        """Any finite code whose exponent field is reduced modulo top + 1."""
        code = self.any(w)
        ef = ((code >> _u(self.M)) & _u((1 << self.E) - 1)) % _u(top + 1)
        keep = code & ~_u(((1 << self.E) - 1) << self.M)
        return self.finite(keep | (ef << _u(self.M)))

    def sign(self, w: np.ndarray) -> np.ndarray:
        """Signed zero with w's sign."""
        return (w >> _u(31)) << _u(self.E + self.M)

    def nan(self, w: np.ndarray) -> np.ndarray:
        """A NaN code with w's sign (quiet bit and w's lowest bit set for IEEE; S.1111.111 for e4m3)."""
        if not self.ieee:
            return self.sign(w) | _u(0x7F)
        return self.sign(w) | _u(((1 << self.E) - 1) << self.M) | _u(1 << (self.M - 1)) | (w & _u(1))

    def inf(self, w: np.ndarray) -> np.ndarray:
        """+-inf with w's sign (e4m3: +-448, it has no infinity)."""
        if not self.ieee:
            return self.sign(w) | _u(0x7E)
        return self.sign(w) | _u(((1 << self.E) - 1) << self.M)

    def max(self, w: np.ndarray) -> np.ndarray:
        """+-(largest finite) with w's sign."""
        mant = (1 << self.M) - (1 if self.ieee else 2)
        return self.sign(w) | _u((self.T << self.M) | mant)

    def mkc(self, w: np.ndarray, ec: np.ndarray) -> np.ndarray:
        """Code with unbiased exponent ec clamped to the normal range, w's sign and mantissa."""
        ef = np.clip(np.asarray(ec, dtype=np.int64) + self.B, 1, self.T).astype(np.uint32)
        return self.mk(w, ef)


def tc_operand_top(f: _Fmt, fc: _Fmt) -> int:
    """Largest exponent field the families give an operand: products of two such reach the top of C's range."""
    return min(f.T, f.B + (fc.emax + 1) // 2)


def _tc_ab(f: _Fmt, fam: int, w: np.ndarray, p0: np.ndarray, top: int, which: int) -> np.ndarray:
    """A (which 0) or B (which 1) codes of one family from the element words w and the tile word p0."""
    w2 = mix32(w ^ _u(TC_MIX))
    e8 = (w >> _u(23)) & _u(0xFF)
    if fam == 0:
        return f.any_below(w, top)
    if fam in (1, 5):
        normal = f.mk(w, _u(f.B - 4) + _popcount8(e8))
        if fam == 1:
            return normal
        return np.where(((p0 >> _u(1)) & _u(1)) == _u(1), f.any_below(w, top), normal)
    if fam == 2:
        return f.mk(w, _u(top - 4) + (e8 & _u(3)) + ((e8 >> _u(2)) & _u(1)))
    if fam == 3:
        tiny = f.mk(w, (e8 & _u(3)) + ((e8 >> _u(2)) & _u(1)))
        sub = f.mk(w, ((e8 & _u(3)) == _u(3)).astype(np.uint32))
        split = (p0 & _u(1)) == _u(1)  # subnormal A against normal-like B
        other = f.mk(w, _u(f.B - 4) + _popcount8(e8)) if which else sub
        return np.where(split, other, tiny)
    if fam == 4:
        r = w2 & _u(127)
        out = np.where(r == _u(0), f.nan(w), np.where(r <= _u(2), f.inf(w), f.finite(f.any(w))))
        return np.where((r >= _u(3)) & (r <= _u(10)), f.sign(w), out)
    if fam == 6:
        span = (p0 & _u(31)) % _u(min(top, 31) + 1)
        tile_top = _u(top) - ((p0 >> _u(8)) & _u(7))
        drop = (e8 * (span + _u(1))) >> _u(8)
        return f.mk(w, np.where(drop >= tile_top, _u(0), tile_top - drop))
    if fam == 7:
        return f.mk(w, _u(f.B - 1) + (e8 & _u(3)))
    if fam == 8:
        r = w2 & _u(127)
        big = f.mk(w, _u(top - 5) + (e8 & _u(3)) + ((e8 >> _u(2)) & _u(3)))
        return np.where(r == _u(0), f.nan(w), np.where(r <= _u(4), f.inf(w), big))
    raise TcforgeError(f"family: expected one of {sorted(TC_FAMILIES)}, got {fam}")


def _tc_c(f: _Fmt, fa: _Fmt, fb: _Fmt, fam: int, w: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """C codes of one family (format f) for operands of formats fa, fb."""
    w2 = mix32(w ^ _u(TC_MIX))
    e8 = ((w >> _u(23)) & _u(0xFF)).astype(np.int64)
    ta, tb = tc_operand_top(fa, f), tc_operand_top(fb, f)
    top_ab = ta - fa.B + tb - fb.B  # unbiased exponent of the largest operands' product (within a factor 4)
    sel = (w2 >> _u(8)) & _u(7)
    pos, neg = w & _u(0), w | _u(0x80000000)  # words whose sign bit is 0 / 1 (for the fixed special values)
    if fam == 0:
        return f.finite(f.any(w))
    if fam == 1:
        return f.mkc(w, _popcount8(e8.astype(np.uint32)).astype(np.int64) - 2)
    if fam == 2:
        return f.mkc(w, top_ab - 3 + (e8 & 7))
    if fam == 3:
        own = f.sign(w) | (((e8 & 3) == 3).astype(np.uint32) << _u(f.M)) | (w & _u((1 << f.M) - 1))
        near = f.mkc(w, 1 - fa.B - 4 + (e8 & 7))  # around A's subnormal exponent: its low bits meet the cut
        sel3 = (w2 >> _u(8)) & _u(3)
        return np.where(sel3 <= _u(1), own, np.where(sel3 == _u(2), near, f.sign(w)))
    if fam == 4:
        one = _u(f.B << f.M)
        table = [f.sign(pos), f.sign(neg), f.inf(pos), f.inf(neg), f.nan(w), one + pos, one | f.sign(neg),
                 f.mkc(w, -4 + (e8 & 15))]
        return _select(sel, table)
    if fam == 5:
        return f.sign(w)
    if fam == 6:
        shift = ((p0 >> _u(8)) & _u(7)).astype(np.int64)
        ec = top_ab - 2 * shift + 2 - ((p0 >> _u(16)) % _u(40)).astype(np.int64) + (e8 & 3) - 1
        return f.mkc(w, ec)
    if fam == 7:
        return f.mkc(w, 5 + ((p0 >> _u(4)) % _u(11 if f.name == "f16" else 26)).astype(np.int64))
    if fam == 8:
        table = [f.inf(pos), f.inf(neg), f.max(pos), f.max(neg), f.nan(w), f.sign(pos), f.sign(neg),
                 f.mkc(w, top_ab - 4 + (e8 & 7))]
        return _select(sel, table)
    raise TcforgeError(f"family: expected one of {sorted(TC_FAMILIES)}, got {fam}")


def tc_tile_inputs(form: str, family: int, seed: int, start: int, count: int) -> tuple[np.ndarray, ...]:
    """Inputs (a (n, m, k), b (n, k, n_), c (n, m, n_) codes) of tiles start..start+count-1 of one form and family."""
    from tcforge.numerics.tensorcore import FORM_NAMES, FORMATS, get_form

    spec = get_form(form)
    if family not in TC_FAMILIES:
        raise TcforgeError(f"family: expected one of {sorted(TC_FAMILIES)}, got {family}")
    if start < 0 or count < 0 or (start + count) * TC_TILE_SLOTS > 2**32:
        raise TcforgeError(f"start/count: tiles must lie in [0, {2**32 // TC_TILE_SLOTS}), got {start}+{count}")
    m, n, k = spec.m, spec.n, spec.k
    fa, fb, fc = _Fmt(spec.a), _Fmt(spec.b), _Fmt(spec.c)
    stream = tc_stream(FORM_NAMES.index(form), family)
    tiles = np.arange(start, start + count, dtype=np.uint64)[:, None, None] * np.uint64(TC_TILE_SLOTS)
    p0 = rng_u32(seed, stream, tiles + np.uint64(TC_SLOT_P))  # (count, 1, 1)
    ka = np.arange(k)[None, None, :]
    kb = np.arange(k)[None, :, None]
    src_a = np.broadcast_to(ka, (1, m, k))
    src_b = np.broadcast_to(kb, (1, k, n))
    copy_a = np.zeros((1, m, k), dtype=bool)
    if family == 5:
        mode = (p0 & _u(1)) == _u(1)  # (count, 1, 1)
        half = k // 2
        copy_a = np.where(mode, (ka & 2) != 0, ka >= half)
        src_a = np.where(mode, ka & ~2, ka & (half - 1))
        src_b = np.where(mode, kb & ~2, kb & (half - 1))
    slot_a = np.arange(m)[None, :, None] * k + src_a
    slot_b = src_b * n + np.arange(n)[None, None, :]
    slot_c = np.arange(m)[None, :, None] * n + np.arange(n)[None, None, :]
    wa = rng_u32(seed, stream, tiles + np.uint64(TC_SLOT_A) + slot_a.astype(np.uint64))
    wb = rng_u32(seed, stream, tiles + np.uint64(TC_SLOT_B) + slot_b.astype(np.uint64))
    wc = rng_u32(seed, stream, tiles + np.uint64(TC_SLOT_C) + slot_c.astype(np.uint64))
    a = _tc_ab(fa, family, wa, p0, tc_operand_top(fa, fc), 0)
    b = _tc_ab(fb, family, wb, p0, tc_operand_top(fb, fc), 1)
    if family == 3:  # tiles with p0 bit 1: B >= 0, the rows of A with bit 8 + row % 16 of p0 set are zeros, -0 where
        # bit 24 + row % 8 is set too (so a whole row of products can be -0)
        rows = np.arange(m, dtype=np.uint32)[None, :, None]
        zero_tile = (p0 & _u(2)) != _u(0)
        zero_row = zero_tile & (((p0 >> (_u(8) + (rows & _u(15)))) & _u(1)) == _u(1))
        neg_row = ((p0 >> (_u(24) + (rows & _u(7)))) & _u(1)) << _u(fa.E + fa.M)
        a = np.where(zero_row, neg_row, a)
        b = np.where(zero_tile, b & ~_u(1 << (fb.E + fb.M)), b)
    if family == 5:
        a = np.where(copy_a, a ^ _u(1 << (fa.E + fa.M)), a)
    c = _tc_c(fc, fa, fb, family, wc, p0)
    return a.astype(FORMATS[spec.a].dtype), b.astype(FORMATS[spec.b].dtype), c.astype(FORMATS[spec.c].dtype)


def block_sha256(d: np.ndarray, block: int) -> np.ndarray:
    """SHA-256 of each consecutive `block` tiles of d (little-endian bytes, row-major) as (nblocks, 32) uint8."""
    d = np.ascontiguousarray(d)
    d = d.astype(d.dtype.newbyteorder("<"), copy=False)
    if d.shape[0] % block:
        raise TcforgeError(f"d: {d.shape[0]} tiles is not a multiple of the block of {block}")
    out = np.empty((d.shape[0] // block, 32), dtype=np.uint8)
    for i in range(out.shape[0]):
        out[i] = np.frombuffer(hashlib.sha256(d[i * block : (i + 1) * block].tobytes()).digest(), dtype=np.uint8)
    return out


def inputs_sha256(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """SHA-256 of a, b, c tiles concatenated (little-endian bytes) as (32,) uint8: the RNG twin's fingerprint."""
    h = hashlib.sha256()
    for x in (a, b, c):
        x = np.ascontiguousarray(x)
        h.update(x.astype(x.dtype.newbyteorder("<"), copy=False).tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8).copy()


TC_TRUTH = "hopper_tc_truth"  # tests/data/numerics/hopper_tc_truth.npz: the packed tensor-core truth
TC_TRUTH_HOWTO = (
    "run `PYTHONPATH=src python3 -m tools.truth.generate --only wgmma,hmma_f32 --out $OUT` on a Hopper GPU, then "
    "`python3 -m tools.truth.pack --src <its files>` here"
)


def tc_key(form: str, family: int, what: str) -> str:
    """Archive key of one (form, family) entry of the tensor-core truth ("sha", "d" or "twin_sha")."""
    return f"{form.replace('.', '_')}__f{family}__{what}"
