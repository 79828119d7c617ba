"""Slow, obviously-correct per-output models of the tensor-core MMAs in exact `Fraction` arithmetic (the cross-checks).

`mma_reference`: the FP8 `mma.sync` models "ada" and "hopper", the second, independent implementation the tests
cross-check `mma.py` against; it works one output element at a time on Python numbers and shares no code with the
vectorised path except the e4m3 NaN codes.

`reference`: every form of the tensor-core parameter table. It reads the same table (tensorcore.Form / Datapath:
data, not code) but shares none of the vectorised engine's arithmetic: its own decoding of the bit fields, its own
cut, rounding, IEEE addition and encoding.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tcforge.numerics.codecs import E4M3_NAN_CODES
from tcforge.numerics.tensorcore import FORMATS, Datapath, Form, Format


def floor_log2(x: Fraction) -> int:
    """floor(log2(x)) of a positive Fraction."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


# ---------------------------------------------------------------- the FP8 mma.sync models ("ada", "hopper")
F16_NAN = 0x7FFF  # the canonical f16 NaN the hardware writes
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
        return F16_NAN
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
        return F16_NAN
    x, y = f16_fraction(x_bits), f16_fraction(y_bits)
    if isinstance(x, float) or isinstance(y, float):
        total = float(x) + float(y)
        if total != total:
            return F16_NAN
        return 0xFC00 if total < 0 else 0x7C00
    s = x + y
    return round_to_f16(s, negative_zero=(s == 0 and bool(x_bits & y_bits & 0x8000)))


def _operand_exponent(v: Fraction) -> int:
    """floor(log2|v|) of a nonzero operand value (as an f16, e4m3 subnormals are normal numbers)."""
    return floor_log2(abs(v)) if v != 0 else 0


def hopper_dot(a: list[int], b: list[int], c: int, frac_bits: int | None = HOPPER_FRAC_BITS) -> int:
    """One output of the Hopper (sm_90 lowering) model: HMMA over k%4 in {0,1}, HMMA over {2,3}, then HADD2 with c."""
    if any(x in E4M3_NAN_CODES for x in a) or any(x in E4M3_NAN_CODES for x in b) or (c & 0x7FFF) > 0x7C00:
        return F16_NAN
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
    lead = a.shape[:-2]
    a2, b2, c2 = a.reshape(-1, 16, 32), b.reshape(-1, 32, 8), c.reshape(-1, 16, 8)
    out = np.empty(c2.shape, dtype=np.uint16)
    for t in range(a2.shape[0]):
        for i in range(16):
            row = [int(v) for v in a2[t, i]]
            for j in range(8):
                col = [int(v) for v in b2[t, :, j]]
                if model == "ada":
                    out[t, i, j] = ada_dot(row, col, int(c2[t, i, j]))
                else:
                    out[t, i, j] = hopper_dot(row, col, int(c2[t, i, j]), frac_bits)
    return out.reshape(*lead, 16, 8)


# ---------------------------------------------------------------- the forms of the tensor-core parameter table
NAN = "nan"  # special values travel as strings: "nan", "+inf", "-inf"


def decode(code: int, fmt: Format) -> Fraction | str:
    """Exact value of one code: a Fraction, or "nan" / "+inf" / "-inf"."""
    neg = (code >> (fmt.ebits + fmt.mbits)) & 1
    ef = (code >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    mant = code & ((1 << fmt.mbits) - 1)
    if fmt.ieee and ef == (1 << fmt.ebits) - 1:
        return NAN if mant else ("-inf" if neg else "+inf")
    if not fmt.ieee and ef == (1 << fmt.ebits) - 1 and mant == (1 << fmt.mbits) - 1:
        return NAN
    if ef == 0:
        mag = Fraction(mant, 1 << fmt.mbits) * Fraction(2) ** fmt.emin
    else:
        mag = Fraction((1 << fmt.mbits) + mant, 1 << fmt.mbits) * Fraction(2) ** (ef - fmt.bias)
    return -mag if neg else mag



def exponent(x: Fraction, fmt: Format, rule: str) -> int:
    """Alignment exponent of a nonzero value: floor(log2|x|), at least fmt.emin under the "clamp" rule."""
    e = floor_log2(abs(x))
    return max(e, fmt.emin) if rule == "clamp" else e


def round_to(x: Fraction, frac: int, fmt: Format, mode: str, subnormal: str = "keep",
             overflow: str = "inf") -> Fraction | str:
    """Round x once to `frac` fraction bits within fmt's exponent range (mode "rne" or "rz")."""
    if x == 0:
        return Fraction(0)
    mag = abs(x)
    q = Fraction(2) ** (max(floor_log2(mag), fmt.emin) - frac)
    n, rem = divmod(mag, q)
    n = int(n)
    if mode == "rne" and (rem > q / 2 or (rem == q / 2 and n % 2 == 1)):
        n += 1
    value = n * q
    if value >= Fraction(2) ** (fmt.emax + 1):
        if mode == "rz" and overflow == "max":
            value = (2 - Fraction(1, 2**frac)) * Fraction(2) ** fmt.emax
        else:
            return "-inf" if x < 0 else "+inf"
    if subnormal == "flush" and value < Fraction(2) ** fmt.emin:
        value = Fraction(0)
    return -value if x < 0 else value


def _cut(x: Fraction, unit: Fraction, mode: str) -> Fraction:
    """x cut to a multiple of unit: toward zero ("trunc") or toward -inf ("floor")."""
    q = x / unit
    n = q.numerator // q.denominator  # floor
    if mode == "trunc" and x < 0 and n * unit != x:
        n += 1
    return n * unit


def _special_sum(items: list[Fraction | str]) -> str | None:
    """IEEE rules for the non-finite addends: "nan" if any NaN or both infinities, the infinity, or None."""
    specials = {v for v in items if isinstance(v, str)}
    if not specials:
        return None
    if NAN in specials or specials == {"+inf", "-inf"}:
        return NAN
    return specials.pop()


def _mul(x: Fraction | str, y: Fraction | str) -> Fraction | str:
    """Exact product with IEEE specials (inf * 0 = NaN)."""
    if x == NAN or y == NAN:
        return NAN
    if isinstance(x, str) or isinstance(y, str):
        other = y if isinstance(x, str) else x
        if not isinstance(other, str) and other == 0:
            return NAN
        neg = (x == "-inf" or (not isinstance(x, str) and x < 0)) != (y == "-inf" or (not isinstance(y, str) and y < 0))
        return "-inf" if neg else "+inf"
    return x * y


def step(products: list[tuple[Fraction | str, int | None, bool]], acc: Fraction | str, acc_neg_zero: bool,
         dp: Datapath, out: Format) -> tuple[Fraction | str, bool]:
    """One fused step: products (value, exponent sum, is -0) and the accumulator -> (result, is negative zero)."""
    special = _special_sum([p for p, _, _ in products] + [acc])
    if special is not None:
        return special, False
    all_neg_zero = all(p == 0 and nz for p, _, nz in products) and acc == 0 and acc_neg_zero
    terms: list[tuple[Fraction, int]] = []
    for p, e, _ in products:
        if p != 0:
            terms.append((p, e))
        elif dp.zero_exp is not None:
            terms.append((Fraction(0), dp.zero_exp))
    if dp.c_subnormal == "flush" and acc != 0 and abs(acc) < Fraction(2) ** out.emin:
        acc = Fraction(0)
    if acc != 0:
        terms.append((acc, exponent(acc, out, dp.exp_rule)))
    elif dp.zero_exp is not None:
        terms.append((Fraction(0), dp.zero_exp))
    if not terms or all(v == 0 for v, _ in terms):
        return Fraction(0), dp.zero_sign == "ieee" and all_neg_zero
    unit = Fraction(2) ** (max(e for _, e in terms) - dp.frac_bits)
    total = sum((_cut(v, unit, dp.cut) for v, _ in terms), Fraction(0))
    res = round_to(total, dp.out_frac, out, dp.out_round, dp.out_subnormal, dp.overflow)
    return res, dp.zero_sign in ("underflow", "ieee") and total < 0 and res == 0


def ieee_add(x: Fraction | str, x_neg_zero: bool, y: Fraction | str, y_neg_zero: bool, out: Format) -> tuple:
    """x + y rounded to nearest even in `out` by IEEE rules; returns (value, is_negative_zero)."""
    special = _special_sum([x, y])
    if special is not None:
        return special, False
    s = x + y
    if s == 0:
        return Fraction(0), x_neg_zero and y_neg_zero and x == 0 and y == 0
    return round_to(s, out.mbits, out, "rne"), False


def encode(v: Fraction | str, neg_zero: bool, fmt: Format, nan_bits: int | None = None) -> int:
    """Bits of a value representable in fmt (NaN -> nan_bits, by default the canonical NaN)."""
    if v == NAN:
        return fmt.nan if nan_bits is None else nan_bits
    sign = 1 << (fmt.bits - 1)
    if isinstance(v, str):
        return (sign if v == "-inf" else 0) | (((1 << fmt.ebits) - 1) << fmt.mbits)
    if v == 0:
        return sign if neg_zero else 0
    s = sign if v < 0 else 0
    mag = abs(v)
    if mag < Fraction(2) ** fmt.emin:
        return s | int(mag / Fraction(2) ** (fmt.emin - fmt.mbits))
    e = floor_log2(mag)
    mant = int(mag / Fraction(2) ** (e - fmt.mbits)) - (1 << fmt.mbits)
    return s | ((e + fmt.bias) << fmt.mbits) | mant


def dot(form: Form, arow: list[int], bcol: list[int], c_code: int) -> int:
    """One output d[i, j] of `form`: arow = A[i, :], bcol = B[:, j] codes, c_code = C[i, j]; returns D bits."""
    fa, fb, fc = FORMATS[form.a], FORMATS[form.b], FORMATS[form.c]
    oa, ob = form.operand_format("a"), form.operand_format("b")
    dp = form.step
    xs = [decode(int(v), fa) for v in arow]
    ys = [decode(int(v), fb) for v in bcol]
    c = decode(int(c_code), fc)
    c_neg_zero = c_code == 1 << (fc.bits - 1)
    if NAN in xs or NAN in ys or c == NAN:
        return encode(NAN, False, fc, form.nan_bits)
    acc: Fraction | str = c if form.c_entry == "fused" else Fraction(0)
    neg_zero = c_neg_zero if form.c_entry == "fused" else False
    for group in form.groups:
        prods = []
        for k in group:
            p = _mul(xs[k], ys[k])
            e = None
            if not isinstance(p, str) and p != 0:
                e = exponent(xs[k], oa, dp.exp_rule) + exponent(ys[k], ob, dp.exp_rule)
            zero_sign = bool(((int(arow[k]) >> (fa.bits - 1)) ^ (int(bcol[k]) >> (fb.bits - 1))) & 1)
            prods.append((p, e, zero_sign))
        acc, neg_zero = step(prods, acc, neg_zero, dp, fc)
    if form.c_entry == "add":
        acc, neg_zero = ieee_add(acc, neg_zero, c, c_neg_zero, fc)
    return encode(acc, neg_zero, fc, form.nan_bits)


def reference(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray,
              positions: list[tuple[int, int, int]] | None = None) -> np.ndarray:
    """Whole tiles (t, m, k) / (t, k, n) / (t, m, n) one output at a time; with positions only those (t, i, j)."""
    out = np.zeros(c.shape, dtype=FORMATS[form.c].dtype)
    if positions is None:
        positions = [(t, i, j) for t in range(c.shape[0]) for i in range(c.shape[1]) for j in range(c.shape[2])]
    for t, i, j in positions:
        out[t, i, j] = dot(form, a[t, i, :].tolist(), b[t, :, j].tolist(), int(c[t, i, j]))
    return out
