"""Candidate tensor-core models around the shipped ones, scored against the hardware truth (evidence, not API).

`hopper_truncated`: candidate Hopper HMMA accumulators of the FP8 `mma.sync`, scored against the H200 truth by the
tests. Family: every addend cut toward zero to `frac_bits` bits below the largest addend exponent, then one
rounding to f16 (frac_bits None: the exact sum, one rounding). Two exponent rules for the alignment. The shipped
model (`mma.py`) is the member that the hardware data leaves standing: frac_bits 25 with the "operands" rule. This
straightforward float64 version is slow and independent of the shipped fast path.

`candidates(form)`: parameter sets around each form of the tensor-core table. It changes one table parameter at a
time (F, the zero exponent, the subnormal exponent rule, the cut direction, the result's kept bits and rounding,
subnormal, underflow-sign and overflow handling, the k grouping, where C enters, whether FP8 operands are seen as
f16, the NaN D holds), adds a few pairs that only show together (the zero sign with the zero exponent) and a small
grid over the parameters most likely to be off together (F x result bits x exponent rule). `python3 -m
tools.truth.tc_truth check` scores them where the shipped row misses.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcforge.numerics.codecs import F16_CANONICAL_NAN
from tcforge.numerics.mma import _HOPPER_K, _VALUES, _nan_mask
from tcforge.numerics.tensorcore import FORMATS, Form, run_form, with_step

# ---------------------------------------------------------------- the FP8 mma.sync's Hopper accumulator
EXPONENT_RULES = ("value", "operands")


def _floor_log2(x: np.ndarray) -> np.ndarray:
    """floor(log2|x|) for nonzero x; a very negative number for zero."""
    e = np.frexp(x)[1] - 1
    return np.where(x != 0, e, -1000)


def _truncated_hmma(acc: np.ndarray, prods: np.ndarray, exps: np.ndarray, frac_bits: int) -> np.ndarray:
    """acc (T, 16, 8) f16 values (finite), prods/exps (T, 16, 8, 16): one truncated-accumulator HMMA step."""
    if frac_bits is None:  # exact: float64 holds these sums exactly (a 2^-24 grid below 2^23)
        with np.errstate(over="ignore"):
            return (prods.sum(axis=-1) + acc + 0.0).astype(np.float16).astype(np.float64)
    acc_exp = _floor_log2(acc)
    m = np.maximum(exps.max(axis=-1), acc_exp)
    unit = np.ldexp(1.0, np.maximum(m, -200) - frac_bits)
    total = np.trunc(prods / unit[..., None]).sum(axis=-1) + np.trunc(acc / unit) + 0.0
    with np.errstate(over="ignore"):
        return (total * unit).astype(np.float16).astype(np.float64)


def hopper_truncated(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, frac_bits: int | None, exponent: str = "operands"
) -> np.ndarray:
    """The Hopper lowering with truncated-accumulator HMMAs; tiles (N, 16, 32), (N, 32, 8), (N, 16, 8) -> (N, 16, 8).

    exponent "value": an addend's exponent is floor(log2|x|); "operands": a product's exponent is the sum of its f16
    operands' exponents (its significand then lies in [1, 4)), as some tensor cores align.
    """
    if exponent not in EXPONENT_RULES:
        raise ValueError(f"exponent: expected one of {EXPONENT_RULES}, got {exponent!r}")
    av = _VALUES[a[:, :, _HOPPER_K]]
    bv = _VALUES[b[:, _HOPPER_K, :]]
    prods = av[:, :, None, :] * bv.transpose(0, 2, 1)[:, None, :, :]  # (N, 16, 8, 32)
    if exponent == "value":
        exps = _floor_log2(prods)
    else:
        exps = _floor_log2(av)[:, :, None, :] + _floor_log2(bv).transpose(0, 2, 1)[:, None, :, :]
        exps = np.where(prods != 0, exps, -1000)
    acc = np.zeros(c.shape, np.float64)
    acc = _truncated_hmma(acc, prods[..., :16], exps[..., :16], frac_bits)
    acc_inf = np.isinf(acc)
    acc2 = _truncated_hmma(np.where(acc_inf, 0.0, acc), prods[..., 16:], exps[..., 16:], frac_bits)
    acc = np.where(acc_inf, acc, acc2)
    cv = c.view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = (acc + cv).astype(np.float16).view(np.uint16)
    nan = _nan_mask(a, b, c) | ((d & 0x7FFF) > 0x7C00)
    return np.where(nan, np.uint16(F16_CANONICAL_NAN), d)


# ---------------------------------------------------------------- rows of the tensor-core parameter table
_F8 = ("e4m3", "e5m2")


def _groupings(k: int) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Named ways to split k into chained steps."""
    ks = range(k)
    return {
        "one": (tuple(ks),),
        "halves": (tuple(range(k // 2)), tuple(range(k // 2, k))),
        "mod4": (tuple(i for i in ks if i % 4 < 2), tuple(i for i in ks if i % 4 >= 2)),
        "quarters": tuple(tuple(range(q * k // 4, (q + 1) * k // 4)) for q in range(4)),
    }


def candidates(form: Form) -> list[tuple[str, Form]]:
    """(label, form) for every candidate around `form` (the shipped row itself first, labelled "shipped")."""
    st = form.step
    fc = FORMATS[form.c]
    out: list[tuple[str, Form]] = [("shipped", form)]
    for df in (-3, -2, -1, 1, 2, 3):
        out.append((f"F={st.frac_bits + df}", with_step(form, frac_bits=st.frac_bits + df)))
    out.append(("zero_exp=none", with_step(form, zero_exp=None)))
    out.append((f"zero_exp={fc.emin}", with_step(form, zero_exp=fc.emin)))
    other_rule = "floor" if st.exp_rule == "clamp" else "clamp"
    out.append((f"exp={other_rule}", with_step(form, exp_rule=other_rule)))
    out.append(("cut=floor", with_step(form, cut="floor")))
    other_round = "rz" if st.out_round == "rne" else "rne"
    out.append((f"out={other_round}{st.out_frac}", with_step(form, out_round=other_round)))
    if form.c == "f32":
        for bits in (13, 14, 23):
            for rnd in ("rz", "rne"):
                if (bits, rnd) != (st.out_frac, st.out_round) and (bits, rnd) != (st.out_frac, other_round):
                    out.append((f"out={rnd}{bits}", with_step(form, out_frac=bits, out_round=rnd)))
    out.append(("out_sub=flush", with_step(form, out_subnormal="flush")))
    for zs in ("underflow", "ieee"):
        out.append((f"zero_sign={zs}", with_step(form, zero_sign=zs)))
        out.append((f"zero_sign={zs} zero_exp=none", with_step(form, zero_sign=zs, zero_exp=None)))
    out.append(("zero_sign=underflow exp=floor", with_step(form, zero_sign="underflow", exp_rule="floor")))
    out.append(("c_sub=flush", with_step(form, c_subnormal="flush")))
    if st.out_round == "rz":
        out.append(("overflow=max", with_step(form, overflow="max")))
    for gname, groups in _groupings(form.k).items():
        if groups != form.groups:
            out.append((f"groups={gname}", replace(form, groups=groups)))
    other_entry = "add" if form.c_entry == "fused" else "fused"
    out.append((f"c_entry={other_entry}", replace(form, c_entry=other_entry)))
    if form.a in _F8 and form.b in _F8:
        other_as = None if form.operands_as else "f16"
        out.append((f"operands_as={other_as}", replace(form, operands_as=other_as)))
    for nan in (0x7FC00000, 0xFFC00000, 0xFFFFFFFF) if form.c == "f32" else (0x7E00, 0xFE00, 0xFFFF):
        out.append((f"nan={nan:#x}", replace(form, nan_bits=nan)))
    bits_grid = (13, 14, 23) if form.c == "f32" else (st.out_frac,)
    seen = {f.step for _, f in out if f.groups == form.groups and f.c_entry == form.c_entry}
    for df in (-2, -1, 0, 1, 2):
        for bits in bits_grid:
            for rule in ("clamp", "floor"):
                cand = with_step(form, frac_bits=st.frac_bits + df, out_frac=bits, exp_rule=rule)
                if cand.step not in seen:
                    seen.add(cand.step)
                    out.append((f"F={st.frac_bits + df} out={st.out_round}{bits} exp={rule}", cand))
    return out


def score(form: Form, tiles: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]) -> list[int]:
    """Mismatching outputs of `form` on each (a, b, c, d) tile set (one entry per family)."""
    return [int((run_form(form, a, b, c) != d).sum()) for a, b, c, d in tiles]
