"""Parameter-table model of Hopper tensor-core arithmetic: one vectorised engine, one table row per instruction form.

A tensor-core step ("fused dot-product accumulate") is described by a `Datapath`: the exact products and the
accumulator are aligned to the largest addend exponent M (a product's exponent is the sum of its operands'), every
addend is cut to a multiple of 2^(M - frac_bits), the cut addends are summed exactly, and the sum is rounded once to
the step's result format. A `Form` says which operand formats an instruction reads, how its k range is split into
steps, and where C enters (fused into the first step, or added afterwards by an IEEE f16/f32 add, as ptxas 13.0
lowers the FP8 `mma.sync` on sm_90). docs/numerics.md gives each parameter and its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.numerics._checks import tile
from tcforge.numerics.f32_ops import f32_add_ftz, f32_mul_ftz, f32_to_f16_rn

# ---------------------------------------------------------------- formats


@dataclass(frozen=True)
class Format:
    """A binary floating-point storage format (IEEE-like unless `ieee` is False: OCP e4m3fn, no infinities)."""

    name: str
    ebits: int
    mbits: int
    bias: int
    ieee: bool
    nbytes: int

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal number (the subnormals' exponent)."""
        return 1 - self.bias

    @property
    def top_field(self) -> int:
        """Largest exponent field of a finite number."""
        return (1 << self.ebits) - (2 if self.ieee else 1)

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite number."""
        return self.top_field - self.bias

    @property
    def bits(self) -> int:
        """Width of a code in bits."""
        return 1 + self.ebits + self.mbits

    @property
    def shift(self) -> int:
        """Bits below a code in its container word (tf32: the 13 low bits of an f32 word the tensor core drops)."""
        return 8 * self.nbytes - self.bits

    @property
    def dtype(self) -> type[np.unsignedinteger]:
        """numpy dtype holding one code."""
        return {1: np.uint8, 2: np.uint16, 4: np.uint32}[self.nbytes]

    @property
    def nan(self) -> int:
        """The canonical NaN code the tensor cores write (all ones but the sign; tf32: in the word's top 19 bits)."""
        return ((1 << (self.bits - 1)) - 1) << self.shift


FORMATS = {
    "e4m3": Format("e4m3", 4, 3, 7, False, 1),
    "e5m2": Format("e5m2", 5, 2, 15, True, 1),
    "f16": Format("f16", 5, 10, 15, True, 2),
    "bf16": Format("bf16", 8, 7, 127, True, 2),
    "f32": Format("f32", 8, 23, 127, True, 4),
    "tf32": Format("tf32", 8, 10, 127, True, 4),  # operands only: f32 bits, of which values_of reads the top 19
}
FORMAT_IDS = {"e4m3": 0, "e5m2": 1, "f16": 2, "bf16": 3, "f32": 4}  # the CUDA generator's format numbers


def decode_codes(codes: np.ndarray, fmt: Format) -> np.ndarray:
    """float64 values of codes in `fmt` (NaN for every NaN code, +-inf for infinities), from the bit fields (tf32:
    an f32 word's top 19 bits)."""
    x = np.asarray(codes).astype(np.int64) >> fmt.shift
    sign = np.where((x >> (fmt.ebits + fmt.mbits)) & 1, -1.0, 1.0)
    ef = (x >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    mant = (x & ((1 << fmt.mbits) - 1)).astype(np.float64)
    normal = np.ldexp(mant + (1 << fmt.mbits), (ef - fmt.bias - fmt.mbits).astype(np.int32))
    sub = np.ldexp(mant, fmt.emin - fmt.mbits)
    mag = np.where(ef == 0, sub, normal)
    if fmt.ieee:
        top = ef == (1 << fmt.ebits) - 1
        mag = np.where(top, np.where(mant == 0, np.inf, np.nan), mag)
    else:
        mag = np.where((x & ((1 << (fmt.bits - 1)) - 1)) == (1 << (fmt.bits - 1)) - 1, np.nan, mag)
    return sign * mag


_TABLES: dict[str, np.ndarray] = {}


def values_of(codes: np.ndarray, fmt: Format) -> np.ndarray:
    """decode_codes through a cached table for 8- and 16-bit formats (f32 bits decode by a view)."""
    if fmt.nbytes == 4:  # f32 bits; tf32 reads their top 19 (the tensor core drops the low 13)
        bits = np.asarray(codes, dtype=np.uint32) & np.uint32((0xFFFFFFFF << (23 - fmt.mbits)) & 0xFFFFFFFF)
        with np.errstate(invalid="ignore"):  # signalling NaN payloads stay NaN
            return bits.view(np.float32).astype(np.float64)
    if fmt.name not in _TABLES:
        _TABLES[fmt.name] = decode_codes(np.arange(1 << fmt.bits), fmt)
    return _TABLES[fmt.name][np.asarray(codes)]


def encode_values(values: np.ndarray, fmt: Format) -> np.ndarray:
    """Codes of float64 values that `fmt` represents exactly (zeros keep their sign; NaN -> canonical); else raises."""
    v = np.asarray(values, dtype=np.float64)
    if fmt.nbytes == 4:  # f32, and tf32 (f32 words whose low 13 bits are zero)
        out = v.astype(np.float32).view(np.uint32)
    elif fmt.name == "f16":
        out = v.astype(np.float16).view(np.uint16)
    else:
        table = values_of(np.arange(1 << fmt.bits), fmt)
        finite = np.flatnonzero(np.isfinite(table) | np.isinf(table))
        order = finite[np.argsort(table[finite], kind="stable")]
        pos = np.clip(np.searchsorted(table[order], v), 0, order.size - 1)
        out = order[pos].astype(fmt.dtype)
        out = np.where((v == 0) & np.signbit(v), np.asarray(1 << (fmt.bits - 1)).astype(fmt.dtype), out)
        out = np.where((v == 0) & ~np.signbit(v), fmt.dtype(0), out)
    out = np.where(np.isnan(v), fmt.dtype(fmt.nan), out).astype(fmt.dtype)
    back = values_of(out, fmt)
    if not np.all((back == v) | (np.isnan(back) & np.isnan(v))):
        raise TcforgeError(f"values: not all exactly representable in {fmt.name}")
    return out


# ---------------------------------------------------------------- the parameter table

EXP_RULES = ("clamp", "floor")
CUT_MODES = ("trunc", "floor")
ROUNDINGS = ("rne", "rz")


@dataclass(frozen=True)
class Datapath:
    """One fused dot-product-accumulate step: alignment, cut, exact sum, one rounding (see the module doc)."""

    frac_bits: int  # addends cut to multiples of 2^(M - frac_bits), M the largest addend exponent
    zero_exp: int | None  # exponent a zero addend takes in the maximum (None: zeros take no part)
    out_frac: int  # fraction bits of the step result (f16 10, f32 23; 13 is the "e8m13" FP8 accumulator)
    out_round: str  # "rne" (nearest even) or "rz" (toward zero) for the step result
    exp_rule: str = "clamp"  # exponent of a subnormal operand/accumulator: "clamp" at its format's emin, or "floor"
    cut: str = "trunc"  # "trunc": each aligned addend toward zero; "floor": toward -inf (two's complement)
    out_subnormal: str = "keep"  # step results below the normal range: "keep" or "flush" (to +0)
    overflow: str = "inf"  # rz results beyond the largest finite value: "inf" or "max" (saturate)
    c_subnormal: str = "keep"  # a subnormal accumulator entering a step: "keep" or "flush" (to 0)
    zero_sign: str = "plus"  # zero results: "plus" (always +0), "underflow" (a nonzero sum rounding to zero keeps
    # its sign), "ieee" (that, and a step with only zero addends gives -0 iff every addend is -0)

    def label(self) -> str:
        """Compact text of the parameters (for reports)."""
        z = "none" if self.zero_exp is None else str(self.zero_exp)
        return (
            f"F={self.frac_bits} zero_exp={z} out={self.out_round}{self.out_frac} exp={self.exp_rule} "
            f"cut={self.cut} out_sub={self.out_subnormal} ovf={self.overflow} c_sub={self.c_subnormal} "
            f"zero_sign={self.zero_sign}"
        )


@dataclass(frozen=True)
class Form:
    """One instruction form: operand formats, how k is split into steps, where C enters, the step's datapath."""

    name: str
    op: str  # "wgmma" or "mma"
    m: int
    n: int
    k: int
    a: str
    b: str
    c: str  # C and D format
    groups: tuple[tuple[int, ...], ...]  # k indices of each step, in execution order
    c_entry: str  # "fused": C is the first step's accumulator; "add": steps start from +0, then D = RN(acc + C)
    step: Datapath
    operands_as: str | None = None  # "f16": the operands reach the tensor core converted (exactly) to f16
    nan_bits: int | None = None  # the NaN D holds (None: the canonical all-ones-but-sign of C's format)
    sass: str = ""  # what ptxas 13.0 emits for it (sm_90a)
    source: str = ""  # where the parameters come from

    @property
    def ptx(self) -> str:
        """The PTX instruction (wgmma with n = 8; the arithmetic does not depend on n)."""
        if self.op == "wgmma":
            return f"wgmma.mma_async.sync.aligned.m{self.m}n{self.n}k{self.k}.{self.c}.{self.a}.{self.b}"
        return f"mma.sync.aligned.m{self.m}n{self.n}k{self.k}.row.col.{self.c}.{self.a}.{self.b}.{self.c}"

    def operand_format(self, which: str) -> Format:
        """The format whose exponent range the tensor core applies to operand `which` ("a" or "b")."""
        return FORMATS[self.operands_as or (self.a if which == "a" else self.b)]


def _halves_mod4() -> tuple[tuple[int, ...], ...]:
    """The sm_90 FP8 mma.sync lowering: HMMA over k % 4 in {0, 1}, then HMMA over k % 4 in {2, 3}."""
    ks = range(32)
    return tuple(k for k in ks if k % 4 < 2), tuple(k for k in ks if k % 4 >= 2)


HMMA_F16 = Datapath(frac_bits=25, zero_exp=-21, out_frac=10, out_round="rne")
HMMA_F32 = Datapath(frac_bits=25, zero_exp=-133, out_frac=23, out_round="rz")
QGMMA_F16 = Datapath(frac_bits=13, zero_exp=-21, out_frac=10, out_round="rne")
QGMMA_F32 = Datapath(frac_bits=13, zero_exp=-133, out_frac=13, out_round="rz")

_MMASIM = "MMA-Sim (arXiv 2511.10909, package mmasim 2.1.1) Hopper parameters"
_PROJECT = "the project's H200 truth (h200_mma_truth.npz: F = 25, operand exponents, C through HADD2)"


def _build_hopper() -> dict[str, Form]:
    """Every Hopper form the truth generator measures, by name."""
    forms: dict[str, Form] = {}
    f8 = ("e4m3", "e5m2")
    for d in ("f32", "f16"):
        for a in f8:
            for b in f8:
                name = f"wgmma.m64n8k32.{d}.{a}.{b}"
                forms[name] = Form(
                    name, "wgmma", 64, 8, 32, a, b, d, (tuple(range(32)),), "fused",
                    QGMMA_F32 if d == "f32" else QGMMA_F16,
                    sass=f"QGMMA.64x8x32.{d.upper()}.{a.upper()}.{b.upper()}", source=_MMASIM,
                )
    for ab, d in (("f16", "f32"), ("f16", "f16"), ("bf16", "f32")):
        name = f"wgmma.m64n8k16.{d}.{ab}.{ab}"
        forms[name] = Form(
            name, "wgmma", 64, 8, 16, ab, ab, d, (tuple(range(16)),), "fused",
            HMMA_F32 if d == "f32" else HMMA_F16, sass=f"HGMMA.64x8x16.{d.upper()}{'.BF16' if ab == 'bf16' else ''}",
            source=_MMASIM,
        )
    for d in ("f32", "f16"):
        for a in f8:
            for b in f8:
                name = f"mma.m16n8k32.{d}.{a}.{b}"
                step = HMMA_F32 if d == "f32" else HMMA_F16
                add = "FADD" if d == "f32" else "HADD2"
                forms[name] = Form(
                    name, "mma", 16, 8, 32, a, b, d, _halves_mod4(), "add", step, operands_as="f16",
                    sass=f"F2FP.F16.*.UNPACK_B, HMMA.16816.{d.upper()} x2 (C = RZ, then chained), {add} with C",
                    source=_PROJECT if (d, a, b) == ("f16", "e4m3", "e4m3") else f"{_PROJECT}; step from {_MMASIM}",
                )
    for ab, d in (("f16", "f32"), ("bf16", "f32"), ("f16", "f16")):
        name = f"mma.m16n8k16.{d}.{ab}.{ab}"
        forms[name] = Form(
            name, "mma", 16, 8, 16, ab, ab, d, (tuple(range(16)),), "fused",
            HMMA_F32 if d == "f32" else HMMA_F16,
            sass=f"HMMA.16816.{d.upper()}{'.BF16' if ab == 'bf16' else ''}", source=_MMASIM,
        )
    return forms


HOPPER_FORMS = _build_hopper()
FORM_NAMES = tuple(HOPPER_FORMS)  # fixed order: the truth streams are numbered by it


def get_form(name: str) -> Form:
    """The Hopper form named `name` (a clear error listing the valid names otherwise)."""
    if name not in HOPPER_FORMS:
        raise TcforgeError(f"form: unknown form {name!r}; valid forms: {', '.join(FORM_NAMES)}")
    return HOPPER_FORMS[name]


def with_step(form: Form, **changes: object) -> Form:
    """A copy of `form` with some Datapath parameters changed (candidate models)."""
    return replace(form, step=replace(form.step, **changes))


# ---------------------------------------------------------------- the engine

_NONE = -(1 << 20)  # "no addend" exponent (below every real one)
_DEAD = -(1 << 40)  # a zero or non-finite operand's exponent when products' maxima are taken (sums stay < _NONE)
_CHUNK_TERMS = 1 << 17  # products per vectorised pass (tiles x m x n x k): keeps the temporaries cache-sized


def _floor_log2(x: np.ndarray) -> np.ndarray:
    """floor(log2|x|) of finite nonzero float64 values (int64); garbage elsewhere (callers mask)."""
    with np.errstate(invalid="ignore"):
        return (np.frexp(np.where(np.isfinite(x), x, 1.0))[1] - 1).astype(np.int64)


def _exponents(v: np.ndarray, fmt: Format, rule: str, zero_exp: int | None) -> np.ndarray:
    """Alignment exponent of finite values: floor(log2|v|) (at least fmt.emin under "clamp"); zeros: zero_exp."""
    e = _floor_log2(v)
    if rule == "clamp":
        e = np.maximum(e, fmt.emin)
    return np.where(v == 0, _NONE if zero_exp is None else zero_exp, e)


def round_scaled(s: np.ndarray, u: np.ndarray, out: Format, frac: int, mode: str, subnormal: str = "keep",
                 overflow: str = "inf", zero_sign: str = "plus") -> np.ndarray:
    """The value s * 2^u (s int64, |s| < 2^52) rounded once to `frac` fraction bits in out's exponent range."""
    neg = s < 0
    mag = np.abs(s)
    lg = _floor_log2(mag.astype(np.float64))
    e = lg + u
    q = np.maximum(e, out.emin) - frac  # exponent of the result's last kept bit
    shift = q - u
    left = np.clip(-shift, 0, 62)
    right = np.clip(shift, 0, 62)
    m = np.where(shift <= 0, mag << left, mag >> right)
    if mode == "rne":
        rem = mag - (m << right)
        half = np.where(right > 0, np.left_shift(1, np.maximum(right - 1, 0)), 0)
        up = (shift > 0) & ((rem > half) | ((rem == half) & (half > 0) & ((m & 1) == 1)))
        m = m + up
    elif mode != "rz":
        raise TcforgeError(f"mode: expected one of {ROUNDINGS}, got {mode!r}")
    val = np.ldexp(m.astype(np.float64), q.astype(np.int32))
    big = val >= np.ldexp(1.0, out.emax + 1)
    if mode == "rz" and overflow == "max":
        val = np.where(big, np.ldexp(2.0 - np.ldexp(1.0, -frac), out.emax), val)
    else:
        val = np.where(big, np.inf, val)
    if subnormal == "flush":
        val = np.where(val < np.ldexp(1.0, out.emin), 0.0, val)
    val = np.where(mag == 0, 0.0, val)
    if zero_sign in ("underflow", "ieee"):
        return np.where(neg, -val, val)  # a negative sum that rounds to zero is -0; an exact zero sum stays +0
    return np.where(neg & (val != 0), -val, val)


def _max_exponent_sum(ea: np.ndarray, eb: np.ndarray, live_a: np.ndarray, live_b: np.ndarray) -> np.ndarray:
    """max over g of ea[t, i, g] + eb[t, j, g] where both operands are live, far below _NONE where no pair is.

    Where every exponent lies within 84 of its operand's largest (the e4m3, e5m2 and f16 ranges, and most data), one
    matrix product replaces the (T, m, n, g) sums: with each row's and column's largest exponent taken out, every
    term of sum_g 64^(ea' + eb') is at least 2^-1008 and the sum lies in [64^M, g 64^M) for g < 64, so its binary
    exponent // 6 is the maximum M (float64 rounding cannot cross a power of 64)."""
    a_dead, b_dead = np.where(live_a, ea, _DEAD), np.where(live_b, eb, _DEAD)
    ra, rb = a_dead.max(axis=-1), b_dead.max(axis=-1)  # (T, m), (T, n)
    low_a = np.where(live_a, ea, -_DEAD).min(axis=-1)
    low_b = np.where(live_b, eb, -_DEAD).min(axis=-1)
    if ea.shape[-1] >= 64 or (ra - low_a).max(initial=0) > 84 or (rb - low_b).max(initial=0) > 84:
        return (a_dead[:, :, None, :] + b_dead[:, None, :, :]).max(axis=-1)
    wa = np.where(live_a, np.ldexp(1.0, (6 * np.clip(ea - ra[..., None], -84, 0)).astype(np.int32)), 0.0)
    wb = np.where(live_b, np.ldexp(1.0, (6 * np.clip(eb - rb[..., None], -84, 0)).astype(np.int32)), 0.0)
    s = np.matmul(wa, wb.transpose(0, 2, 1))  # (T, m, n); 0 exactly where no pair is live
    return np.where(s > 0, ra[:, :, None] + rb[:, None, :] + (np.frexp(s)[1] - 1) // 6, 2 * _DEAD)


def _step(va: np.ndarray, ea: np.ndarray, vb: np.ndarray, eb: np.ndarray, acc: np.ndarray, dp: Datapath,
          out: Format) -> np.ndarray:
    """One step on va/ea (T, m, g), vb/eb (T, n, g) (b transposed) and acc (T, m, n) float64 values.

    Everything but the cut products is taken on the operands, not on the (T, m, n, g) products: a product of finite
    values is exact in float64 and zero only where an operand is, and it is finite only where both operands are."""
    fin_a, fin_b = np.isfinite(va), np.isfinite(vb)
    live_a, live_b = fin_a & (va != 0), fin_b & (vb != 0)
    e_max = _max_exponent_sum(ea, eb, live_a, live_b)
    if dp.zero_exp is not None:  # zero products (finite ones: 0 * inf is NaN) take part at zero_exp
        zero_a, zero_b = (fin_a & ~live_a).astype(np.float32), (fin_b & ~live_b).astype(np.float32)
        bt = (0, 2, 1)
        zeros = np.matmul(zero_a, fin_b.astype(np.float32).transpose(bt)) + \
            np.matmul(fin_a.astype(np.float32), zero_b.transpose(bt))
        e_max = np.where(zeros > 0, np.maximum(e_max, dp.zero_exp), e_max)
    accf = np.where(np.isfinite(acc), acc, 0.0)
    if dp.c_subnormal == "flush":
        accf = np.where(np.abs(accf) < np.ldexp(1.0, out.emin), 0.0, accf)
    ec = _exponents(accf, out, dp.exp_rule, dp.zero_exp)
    top_c = np.maximum(np.maximum(e_max, ec), -300)  # all-zero steps: any finite scale (real exponents >= -266)
    scale = np.ldexp(1.0, (dp.frac_bits - top_c).astype(np.int32))
    cut = np.trunc if dp.cut == "trunc" else np.floor
    finite = fin_a.all(axis=-1)[:, :, None] & fin_b.all(axis=-1)[:, None, :]  # (T, m, n): every product finite
    with np.errstate(invalid="ignore", over="ignore"):
        p = va[:, :, None, :] * vb[:, None, :, :]  # (T, m, n, g), exact
        neg0 = None
        if dp.zero_sign == "ieee":  # only zero addends: -0 iff all of them are -0
            neg0 = (np.signbit(p) & (p == 0)).all(axis=-1) & (accf == 0) & np.signbit(accf)
        special = ~finite | ~np.isfinite(acc)
        inf_sum = None
        if special.any():
            p_bad = ~(fin_a[:, :, None, :] & fin_b[:, None, :, :])
            inf_sum = np.where(p_bad, p, 0.0).sum(axis=-1) + np.where(np.isfinite(acc), 0.0, acc)
            p[p_bad] = 0.0
        p *= scale[..., None]
        cut(p, out=p)
        total = p.sum(axis=-1) + cut(accf * scale)
    u = (top_c - dp.frac_bits).astype(np.int64)
    res = round_scaled(total.astype(np.int64), u, out, dp.out_frac, dp.out_round, dp.out_subnormal, dp.overflow,
                       dp.zero_sign)
    if neg0 is not None:
        res = np.where(neg0, -0.0, res)
    if inf_sum is not None:
        res = np.where(special, inf_sum, res)
    return res


def _ieee_add(x: np.ndarray, y: np.ndarray, out: Format) -> np.ndarray:
    """x + y rounded once to `out` (f16 or f32) by IEEE rules (nearest even, signed zeros, inf - inf = NaN)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        if out.name == "f16":
            return s.astype(np.float16).astype(np.float64)  # the float64 sum of two f16 values is exact
        # round to odd at 53 bits (TwoSum error decides), then one rounding to 24 bits: a correct single rounding
        bb = s - x
        err = (x - (s - bb)) + (y - bb)
        fix = np.isfinite(s) & (err != 0) & ((s.view(np.int64) & 1) == 0)
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32).astype(np.float64)


def _encode_result(v: np.ndarray, out: Format, nan_bits: int | None) -> np.ndarray:
    """Bits of result values (every one representable in `out`); NaN -> nan_bits or the canonical NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        bits = v.astype(np.float16).view(np.uint16) if out.name == "f16" else v.astype(np.float32).view(np.uint32)
    nan = out.nan if nan_bits is None else nan_bits
    return np.where(np.isnan(v), out.dtype(nan), bits).astype(out.dtype)


def run_form(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The form's model on checked arrays a (T, m, k), b (T, k, n), c (T, m, n) -> d (T, m, n) bits."""
    fa, fb, fc = FORMATS[form.a], FORMATS[form.b], FORMATS[form.c]
    oa, ob = form.operand_format("a"), form.operand_format("b")
    dp = form.step
    out = np.empty(c.shape, dtype=fc.dtype)
    groups = [np.asarray(g) for g in form.groups]
    chunk = max(1, _CHUNK_TERMS // (form.m * c.shape[-1] * form.k))
    for lo in range(0, a.shape[0], chunk):
        sl = slice(lo, lo + chunk)
        va = values_of(a[sl], fa)
        vb = values_of(b[sl], fb).transpose(0, 2, 1)
        ea = _exponents(va, oa, dp.exp_rule, dp.zero_exp)
        eb = _exponents(vb, ob, dp.exp_rule, dp.zero_exp)
        vc = values_of(c[sl], fc)
        acc = vc if form.c_entry == "fused" else np.zeros(vc.shape)
        for g in groups:
            acc = _step(va[..., g], ea[..., g], vb[..., g], eb[..., g], acc, dp, fc)
        if form.c_entry == "add":
            acc = _ieee_add(acc, vc, fc)
        out[sl] = _encode_result(acc, fc, form.nan_bits)
    return out


def check_tiles(form: Form, a: object, b: object, c: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """Validate the operands of `form` and flatten them to one tile axis; also returns the leading dims."""
    fa, fb, fc = FORMATS[form.a], FORMATS[form.b], FORMATS[form.c]
    a_ = tile(a, "a", fa.dtype, (form.m, form.k))
    n = b.shape[-1] if isinstance(b, np.ndarray) and b.ndim >= 2 else form.n
    b_ = tile(b, "b", fb.dtype, (form.k, n))
    if form.op == "wgmma" and (n % 8 or not 8 <= n <= 256):
        raise TcforgeError(f"b: N must be a multiple of 8 in [8, 256] for wgmma, got shape {b_.shape}")
    if form.op == "mma" and n != form.n:
        raise TcforgeError(f"b: expected shape (..., {form.k}, {form.n}), got {b_.shape}")
    c_ = tile(c, "c", fc.dtype, (form.m, n))
    lead = a_.shape[:-2]
    if b_.shape[:-2] != lead or c_.shape[:-2] != lead:
        raise TcforgeError(
            f"a, b, c must share their leading dims: a {a_.shape}, b {b_.shape}, c {c_.shape} "
            f"(expected a (..., {form.m}, {form.k}), b (..., {form.k}, N), c (..., {form.m}, N))"
        )
    return a_.reshape(-1, form.m, form.k), b_.reshape(-1, form.k, n), c_.reshape(-1, form.m, n), lead


def tc_mma(form: Form | str, a: object, b: object, c: object) -> np.ndarray:
    """D = A·B + C of one Hopper form (by Form or name), bit for bit under its parameters; leading dims kept."""
    f = get_form(form) if isinstance(form, str) else form
    a2, b2, c2, lead = check_tiles(f, a, b, c)
    d = run_form(f, a2, b2, c2)
    return d.reshape(*lead, f.m, b2.shape[-1])


# ---------------------------------------------------------------- the fp8 GEMM built on wgmma

GEMM_FP8_MODES = ("fast", "promote")
GEMM_OUT_DTYPES = ("fp32", "bf16", "fp16")  # tcforge.gemm's out kinds
GEMM_BK = 128  # K of one ring stage of tcforge's fp8 GEMM (128 bytes): the promotion interval, and K's padding


def f32_to_bf16_rn(x: np.ndarray) -> np.ndarray:
    """`cvt.rn.bf16.f32` on float32 values: bf16 bits, nearest even, overflow to inf, NaN as 0x7fff."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), r)


def gemm_fp8_epilogue(acc: np.ndarray, scale_a: float, scale_b: float, out_dtype: str) -> np.ndarray:
    """tcforge's fp8 GEMM epilogue on f32 accumulators (built --use_fast_math): FMUL.FTZ by sa * sb, then cvt.rn."""
    if out_dtype not in GEMM_OUT_DTYPES:
        raise TcforgeError(f"out_dtype: expected one of {', '.join(GEMM_OUT_DTYPES)}, got {out_dtype!r}")
    alpha = f32_mul_ftz(np.float32(scale_a), np.float32(scale_b))
    c = f32_mul_ftz(np.asarray(acc, np.float32), np.float32(alpha))
    if out_dtype == "fp32":
        return c.view(np.uint32)
    if out_dtype == "bf16":
        return f32_to_bf16_rn(c)
    return f32_to_f16_rn(c)


def gemm_fp8_acc(a_codes: object, b_codes: object, mode: str = "fast", form: Form | str | None = None,
                 rows_per_pass: int | None = None) -> np.ndarray:
    """The fp32 accumulators (float64 values) of tcforge's unsplit fp8 GEMM, before the epilogue (see gemm_fp8)."""
    if mode not in GEMM_FP8_MODES:
        raise TcforgeError(f"mode: expected one of {', '.join(GEMM_FP8_MODES)}, got {mode!r}")
    f = get_form(form or "wgmma.m64n8k32.f32.e4m3.e4m3")
    if f.op != "wgmma" or f.c != "f32" or f.k != 32:
        raise TcforgeError(f"form: an f32 FP8 wgmma form is needed, got {f.name}")
    a = np.asarray(a_codes)
    b = np.asarray(b_codes)
    if a.dtype != np.uint8 or b.dtype != np.uint8 or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise TcforgeError(f"a_codes (M, K) and b_codes (K, N) must be uint8 codes, got a {a.shape} {a.dtype}, "
                           f"b {b.shape} {b.dtype}")
    (m, k), n = a.shape, b.shape[1]
    kp = max(GEMM_BK, -(-k // GEMM_BK) * GEMM_BK)  # TMA fills the last stage's columns past K with zeros
    ap = np.zeros((m, kp), np.uint8)
    ap[:, :k] = a
    bp = np.zeros((n, kp), np.uint8)
    bp[:, :k] = b.T
    fa, fb, out, dp = FORMATS[f.a], FORMATS[f.b], FORMATS["f32"], f.step
    va, vb = values_of(ap, fa), values_of(bp, fb)
    ea = _exponents(va, f.operand_format("a"), dp.exp_rule, dp.zero_exp)
    eb = _exponents(vb, f.operand_format("b"), dp.exp_rule, dp.zero_exp)
    rows = rows_per_pass or max(1, _CHUNK_TERMS // (n * 32))
    acc = np.zeros((m, n))
    for r0 in range(0, m, rows):
        r = slice(r0, r0 + rows)
        tot = np.zeros((1, va[r].shape[0], n))
        part = tot
        for s in range(kp // 32):
            ks = slice(32 * s, 32 * s + 32)
            if mode == "fast":  # one accumulator through K, scale-d 1 onto zeroed registers
                tot = _step(va[None, r, ks], ea[None, r, ks], vb[None, :, ks], eb[None, :, ks], tot, dp, out)
                continue
            if s % (GEMM_BK // 32) == 0:  # a stage's first k-step: scale-d 0
                part = np.zeros_like(tot)
            part = _step(va[None, r, ks], ea[None, r, ks], vb[None, :, ks], eb[None, :, ks], part, dp, out)
            if s % (GEMM_BK // 32) == GEMM_BK // 32 - 1:  # the stage's sum into the fp32 totals (FADD, from +0)
                tot = f32_add_ftz(tot.astype(np.float32), part.astype(np.float32)).astype(np.float64)
        acc[r] = tot[0]
    return acc


# Per output: K zero-padded to a multiple of 128 (TMA's fill of the last stage). fast (`auto`): one accumulator chained
# through every k32 wgmma from zeroed registers. promote: each 128 of K summed by four chained wgmmas (the first with
# scale-d 0), then added into fp32 totals (from +0) in K order by FADD.FTZ. Splits are not modelled (force splits=1).
def gemm_fp8(a_codes: object, b_codes: object, scale_a: float, scale_b: float, out_dtype: str = "bf16",
             mode: str = "fast", form: Form | str | None = None) -> np.ndarray:
    """C's bits (uint32 fp32, uint16 bf16/fp16) from tcforge.gemm.matmul on e4m3 codes a (M, K), b (K, N), unsplit."""
    return gemm_fp8_epilogue(gemm_fp8_acc(a_codes, b_codes, mode, form), scale_a, scale_b, out_dtype)
