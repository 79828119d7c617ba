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


def _pick(sel: np.ndarray, table: list[int], fallback: np.ndarray) -> np.ndarray:
    """table[sel] where table[i] >= 0, else the fallback value (a table entry of -1 means 'use fallback')."""
    out = fallback.copy()
    for i, v in enumerate(table):
        if v >= 0:
            out = np.where(sel == _u(i), _u(v), out)
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
        out = _pick(sel, [0x0000, 0x8000, 0x7C00, 0xFC00, -1, 0x3C00, 0xBC00, -1], fin)
        return np.where(sel == _u(4), nan, out)
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
        return _pick(sel, [0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x7E00, 0x0000, 0x8000, -1], fin)
    raise TcforgeError(f"kind: expected one of {sorted(MMA_KINDS)}, got {kind}")


def _mirror_partner(k: np.ndarray, mode: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kind 5: (is k the mirrored copy?, index of its source k); mode 0 pairs k<->k+16, mode 1 pairs k<->k^2."""
    is_copy = np.where(mode == 0, k >= 16, (k & 2) != 0)
    src = np.where(mode == 0, k & 15, k & ~2)
    return is_copy, src


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
    if kind == 5:
        mode = (p0 & _u(1))[:, :, None]  # (n,1,1)
        copy_a, src_a = _mirror_partner(np.broadcast_to(k_a, (16, 32))[None], mode)
        copy_b, src_b = _mirror_partner(np.broadcast_to(k_b, (32, 8))[None], mode)
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
    d = np.ascontiguousarray(np.asarray(d, dtype="<u2"))
    if d.ndim != 3 or d.shape[1:] != (16, 8):
        raise TcforgeError(f"d: expected uint16 array of shape (n, 16, 8), got {d.shape}")
    flat = d.reshape(d.shape[0], 128)
    out = np.empty(d.shape[0], dtype=np.uint64)
    for i in range(d.shape[0]):
        out[i] = int.from_bytes(hashlib.blake2b(flat[i].tobytes(), digest_size=8).digest(), "little")
    return out


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
