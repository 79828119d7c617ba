"""Slow, obviously-correct per-element models of the FP8 `mma.sync` (exact rational arithmetic with `Fraction`).

This is the second, independent implementation the tests cross-check `mma.py` against; it works one output
element at a time on Python numbers and shares no code with the vectorised path except the e4m3 value table.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tcforge.numerics.codecs import E4M3_NAN_CODES

NAN = 0x7FFF
F16_MAX_FINITE = Fraction(65504)
F16_OVERFLOW = Fraction(65520)  # values at or beyond this round to inf under round-to-nearest-even


def e4m3_fraction(code: int) -> tuple[Fraction, int]:
    """Exact value of an e4m3 code and its exponent clamped at the subnormal exponent (-6)."""
    sign = -1 if code & 0x80 else 1
    exp_field, mant = (code >> 3) & 0xF, code & 7
    if exp_field == 0:
        return sign * Fraction(mant, 2**9), -6
    return sign * Fraction(8 + mant, 8) * Fraction(2) ** (exp_field - 7), exp_field - 7


def f16_fraction(bits: int) -> Fraction | float:
    """Exact value of finite f16 bits as a Fraction; +-inf as a float."""
    sign = -1 if bits & 0x8000 else 1
    exp_field, mant = (bits >> 10) & 0x1F, bits & 0x3FF
    if exp_field == 0x1F:
        return sign * float("inf")
    if exp_field == 0:
        return sign * Fraction(mant, 2**24)
    return sign * Fraction(1024 + mant, 2**25) * Fraction(2) ** exp_field


def floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for a positive Fraction."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def round_to_f16(x: Fraction, negative_zero: bool = False) -> int:
    """Round a rational to f16 bits once (nearest, ties to even; subnormals kept; overflow to inf)."""
    if x == 0:
        return 0x8000 if negative_zero else 0
    sign = 0x8000 if x < 0 else 0
    mag = abs(x)
    if mag >= F16_OVERFLOW:
        return sign | 0x7C00
    e = max(floor_log2(mag), -14)
    quantum = Fraction(2) ** (e - 10)
    q = mag / quantum
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = n * quantum
    if value < Fraction(2) ** -14:
        return sign | int(value * 2**24)
    e = floor_log2(value)
    mant = int(value / Fraction(2) ** (e - 10)) - 1024
    return sign | ((e + 15) << 10) | mant


def _trunc_to_unit(x: Fraction, unit: Fraction) -> Fraction:
    """x cut toward zero to a multiple of unit."""
    q = abs(x) / unit
    n = q.numerator // q.denominator
    return (n if x >= 0 else -n) * unit


def ada_dot(a: list[int], b: list[int], c: int) -> int:
    """One output of the Ada (sm_89) model: two 16-term blocks, terms cut to 13 bits below the block max exponent."""
    if any(x in E4M3_NAN_CODES for x in a) or any(x in E4M3_NAN_CODES for x in b) or (c & 0x7FFF) > 0x7C00:
        return NAN
    acc_bits = c
    for lo in (0, 16):
        acc = f16_fraction(acc_bits)
        if isinstance(acc, float):  # +-inf: finite products cannot change it
            continue
        terms: list[tuple[Fraction, int]] = []
        zero_signs: list[bool] = [bool(acc_bits & 0x8000)]
        for k in range(lo, lo + 16):
            (va, ea), (vb, eb) = e4m3_fraction(a[k]), e4m3_fraction(b[k])
            p = va * vb
            if p != 0:
                terms.append((p, ea + eb))
            else:
                zero_signs.append(bool((a[k] ^ b[k]) & 0x80))
        if acc != 0:
            terms.append((acc, max(floor_log2(abs(acc)), -14)))
        if not terms:
            acc_bits = 0x8000 if all(zero_signs) else 0
            continue
        unit = Fraction(2) ** (max(e for _, e in terms) - 13)
        acc_bits = round_to_f16(sum((_trunc_to_unit(t, unit) for t, _ in terms), Fraction(0)))
    return acc_bits


HOPPER_FRAC_BITS = 25


def hmma_sum(acc_bits: int, terms: list[tuple[Fraction, int]], frac_bits: int | None = HOPPER_FRAC_BITS) -> int:
    """One HMMA.16816.F16 step: acc + sum of the product terms (value, exponent), rounded once to f16.

    Each addend is first cut toward zero to `frac_bits` bits below the largest addend exponent; a product's exponent
    is the sum of its f16 operands' exponents, the accumulator's is floor(log2|acc|). frac_bits None: the exact sum.
    """
    acc = f16_fraction(acc_bits)
    if isinstance(acc, float):
        return acc_bits
    addends = [(p, e) for p, e in terms if p != 0]
    if acc != 0:
        addends.append((acc, floor_log2(abs(acc))))
    if not addends:
        return 0  # the hardware's zero: +0 (C = +0 in the first step; an f16 accumulator is never -0 here)
    if frac_bits is None:
        return round_to_f16(sum((v for v, _ in addends), Fraction(0)))
    unit = Fraction(2) ** (max(e for _, e in addends) - frac_bits)
    return round_to_f16(sum((_trunc_to_unit(v, unit) for v, _ in addends), Fraction(0)))


def f16_add_exact(x_bits: int, y_bits: int) -> int:
    """`add.rn.f16` (HADD2) on Python ints, IEEE rules for inf and signed zero; NaN -> 0x7fff."""
    if (x_bits & 0x7FFF) > 0x7C00 or (y_bits & 0x7FFF) > 0x7C00:
        return NAN
    x, y = f16_fraction(x_bits), f16_fraction(y_bits)
    if isinstance(x, float) or isinstance(y, float):
        total = float(x) + float(y)
        if total != total:
            return NAN
        return 0xFC00 if total < 0 else 0x7C00
    s = x + y
    return round_to_f16(s, negative_zero=(s == 0 and bool(x_bits & y_bits & 0x8000)))


def _operand_exponent(v: Fraction) -> int:
    """floor(log2|v|) of a nonzero operand value (as an f16, e4m3 subnormals are normal numbers)."""
    return floor_log2(abs(v)) if v != 0 else 0


def hopper_dot(a: list[int], b: list[int], c: int, frac_bits: int | None = HOPPER_FRAC_BITS) -> int:
    """One output of the Hopper (sm_90 lowering) model: HMMA over k%4 in {0,1}, HMMA over {2,3}, then HADD2 with c."""
    if any(x in E4M3_NAN_CODES for x in a) or any(x in E4M3_NAN_CODES for x in b) or (c & 0x7FFF) > 0x7C00:
        return NAN
    terms = []
    for k in range(32):
        va, vb = e4m3_fraction(a[k])[0], e4m3_fraction(b[k])[0]
        terms.append((va * vb, _operand_exponent(va) + _operand_exponent(vb)))
    acc = hmma_sum(0, [terms[k] for k in range(32) if k % 4 < 2], frac_bits)
    acc = hmma_sum(acc, [terms[k] for k in range(32) if k % 4 >= 2], frac_bits)
    return f16_add_exact(acc, c)


def mma_reference(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str, frac_bits: int | None = HOPPER_FRAC_BITS
) -> np.ndarray:
    """The whole-tile slow model (same shapes as `mma_m16n8k32_e4m3_f16`); for tests and small checks only."""
    dot = ada_dot if model == "ada" else hopper_dot
    lead = a.shape[:-2]
    a2, b2, c2 = a.reshape(-1, 16, 32), b.reshape(-1, 32, 8), c.reshape(-1, 16, 8)
    out = np.empty(c2.shape, dtype=np.uint16)
    for t in range(a2.shape[0]):
        for i in range(16):
            row = [int(v) for v in a2[t, i]]
            for j in range(8):
                col = [int(v) for v in b2[t, :, j]]
                if model == "ada":
                    out[t, i, j] = dot(row, col, int(c2[t, i, j]))
                else:
                    out[t, i, j] = hopper_dot(row, col, int(c2[t, i, j]), frac_bits)
    return out.reshape(*lead, 16, 8)
