"""Random value generators the families share: f16 / f32 / bf16 / e4m3 / e5m2 / tf32 codes with a fraction of
special codes sprinkled in, and sums with exact cancellations."""

from __future__ import annotations

import numpy as np

F16_SPECIAL = np.array([0x7E00, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200, 0x7BFF,
                        0xFBFF, 0x0400, 0x7D00, 0xFE01, 0x3C00, 0xBC00], np.uint16)
F16_SUBNORMAL_OR_ZERO = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200, 0x8155, 0x0033], np.uint16)
F32_SPECIAL = np.array([0x7FC00000, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001,
                        0x007FFFFF, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800001, 0xFFC00123,
                        0x3F800000, 0xBF000000, 0x4B000000, 0xCF000000], np.uint32)
BF16_SPECIAL = np.array([0x7FC0, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x7F7F, 0xFF7F, 0x3F80],
                        np.uint16)
E5M2_SPECIAL = np.array([0x7E, 0x7C, 0xFC, 0x00, 0x80, 0x01, 0x81, 0x03, 0x7B, 0xFB, 0x04, 0x3C], np.uint8)
E4M3_SPECIAL = np.array([0x7F, 0xFF, 0x00, 0x80, 0x01, 0x81, 0x07, 0x87, 0x7E, 0xFE, 0x08, 0x88], np.uint8)


def _sprinkle(rng, bits: np.ndarray, rate: float, values: np.ndarray) -> np.ndarray:
    """Replace a fraction `rate` of the elements (raw bits) by values drawn from `values`."""
    hit = rng.random(bits.shape) < rate
    out = bits.copy()
    out[hit] = rng.choice(values, int(hit.sum()))
    return out


def f16(rng, shape, scale: float = 1.0, special: float = 0.0, subnormal: float = 0.0) -> np.ndarray:
    """Normal f16 values with a fraction of special (NaN, inf, subnormal, 0) and subnormal-or-zero elements."""
    bits = (rng.standard_normal(shape) * scale).astype(np.float16).view(np.uint16)
    bits = _sprinkle(rng, bits, subnormal, F16_SUBNORMAL_OR_ZERO)
    return _sprinkle(rng, bits, special, F16_SPECIAL).view(np.float16)


def f32(rng, shape, scale: float = 1.0, special: float = 0.0) -> np.ndarray:
    """Normal f32 values with a fraction of specials (NaN with payloads, infinities, subnormals, signed zeros)."""
    bits = (rng.standard_normal(shape) * scale).astype(np.float32).view(np.uint32)
    return _sprinkle(rng, bits, special, F32_SPECIAL).view(np.float32)


def e4m3(rng, shape, scale: float = 1.0, special: float = 0.0) -> np.ndarray:
    """e4m3 bytes (uint8) of normal values, with a fraction of NaN, 448, subnormals and zeros."""
    bits = _to_e4m3(rng.standard_normal(shape) * scale)
    return _sprinkle(rng, bits, special, E4M3_SPECIAL)


def _to_e4m3(x: np.ndarray) -> np.ndarray:
    """e4m3 codes (uint8) of float values: through f16, rounded to nearest even, saturated to ±448."""
    from tcforge.numerics.codecs import f16_to_e4m3_satfinite

    return np.asarray(f16_to_e4m3_satfinite(np.asarray(x).astype(np.float16).view(np.uint16)), np.uint8)


def _bf16(rng, shape) -> np.ndarray:
    """bf16 bits (uint16) of normal values."""
    x = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
    return ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)


def with_cancellations(rng, x: np.ndarray, rate: float = 0.1) -> np.ndarray:
    """Negated copies of earlier elements at random places (sums with exact cancellations)."""
    flat = x.reshape(-1).copy()
    hit = np.flatnonzero(rng.random(flat.size) < rate)
    hit = hit[hit > 0]
    flat[hit] = -flat[rng.integers(0, hit, hit.size)]
    return flat.reshape(x.shape)


def _wg_codes(rng, kind: str, shape, special: float) -> np.ndarray:
    """Operand codes (uint8 or uint16) of one type: normal values, a fraction `special` of special codes."""
    if kind == "f16":
        return f16(rng, shape, 1.0, special, 0.02).view(np.uint16)
    if kind == "bf16":
        return _sprinkle(rng, _bf16(rng, shape), special, BF16_SPECIAL)
    if kind == "e4m3":
        return e4m3(rng, shape, 1.0, special)
    if kind == "tf32":  # f32 words, low 13 bits random; specials and tf32 subnormals
        w = f32(rng, shape, 1.0).view(np.uint32) | rng.integers(0, 1 << 13, shape).astype(np.uint32)
        return _sprinkle(rng, w, special, np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x80000000,
                                                   0x00002000, 0x00001FFF, 0x807FE000], np.uint32))
    h = f16(rng, shape, 1.0, 0.0, 0.02).view(np.uint16).astype(np.uint32)  # e5m2: f16 rounded to its top byte
    code = ((h + 0x7F + ((h >> 8) & 1)) >> 8).astype(np.uint8)
    return _sprinkle(rng, code, special, E5M2_SPECIAL)
