"""The enc5 epilogue arithmetic in PTX operation order, vectorised over any leading dims, through `tcforge.numerics`.

Values are f16 bit patterns (uint16) laid out as logical matrices (..., rows, columns). The f16 sum trees reproduce
the lane
structure of a C/D fragment: column c = 8·ntile + 2·t + j lives in lane t's f16x2 word of n-tile `ntile`, half j.
"""

from __future__ import annotations

import numpy as np

from tcforge import numerics as nx

# f16 constants (enc5.md §6: f32/f64 literals converted to f16 at run time)
SOFTMAX_SCALE = np.uint16(0x2466)
CLAMP_HI = np.uint16(0x3873)
CLAMP_LO = np.uint16(0xB873)
CUBIC_C1 = np.uint16(0x3B6B)
CUBIC_C0 = np.uint16(0x3D80)
NORM_EPS = np.uint16(0x0800)
ACT_A = np.uint16(0x3698)  # 0.412109375
ACT_B = np.uint16(0x2D30)  # 0.0810546875
ACT_HALF = np.uint16(0x3800)
ACT_TWO = np.uint16(0x4000)
LOG2E_F32 = np.array(0x3FB8AA3B, dtype=np.uint32).view(np.float32)
ONE_F32 = np.float32(1.0)


def requant(x: np.ndarray) -> np.ndarray:
    """`cvt.rn.satfinite.e4m3x2.f16x2` per element: f16 bits -> e4m3 codes."""
    return nx.f16_to_e4m3_satfinite(x)


def dequant(codes: np.ndarray) -> np.ndarray:
    """`cvt.rn.f16x2.e4m3x2` per element: e4m3 codes -> f16 bits (exact)."""
    return nx.e4m3_to_f16(codes)


def approx_via_f32(op, x: np.ndarray) -> np.ndarray:
    """cvt.f32.f16 -> op.approx.ftz.f32 -> cvt.rn.f16.f32, the wrapping every enc5 rcp/rsqrt uses."""
    return nx.f32_to_f16_rn(op(nx.f16_to_f32(x)))


# ---- f16 sum trees over the 20 (or 12) n-tile words of a row, then the 4-lane butterfly -----------------------------

def _words(x: np.ndarray) -> np.ndarray:
    """(..., R, 8·nt) -> (..., R, nt, 4, 2): n-tile word, lane t, half j."""
    *lead, r, c = x.shape
    return x.reshape(*lead, r, c // 8, 4, 2)


def _tree(words: list[np.ndarray], shape: str) -> np.ndarray:
    if shape == "sequential":
        acc = words[0]
        for w in words[1:]:
            acc = nx.f16_add(acc, w)
        return acc
    if shape == "pairwise":
        level = list(words)
        while len(level) > 1:
            nxt = [nx.f16_add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]
    raise ValueError(f"unknown sum tree {shape!r}")


def butterfly_row_sum(partial: np.ndarray) -> np.ndarray:
    """(..., 4 lanes, 2 halves) f16x2 partials -> row sum: add shfl.bfly 1, add shfl.bfly 2, then add.f16 lo + hi."""
    s = nx.f16_add(partial, partial[..., [1, 0, 3, 2], :])
    s = nx.f16_add(s, s[..., [2, 3, 0, 1], :])
    return nx.f16_add(s[..., 0, 0], s[..., 0, 1])


def row_sum_of_squares(x: np.ndarray, tree: str) -> np.ndarray:
    """Σ_c x² per row in f16: mul.f16 squares, in-lane tree over the 20 n-tile words, butterfly, halves."""
    sq = _words(nx.f16_mul(x, x))
    partial = _tree([sq[..., i, :, :] for i in range(sq.shape[-3])], tree)
    return butterfly_row_sum(partial)


def rms_norm(x: np.ndarray, gain: np.ndarray, tree: str, mul_order: str = "x_inv_gain") -> np.ndarray:
    """E20's RMS norm: inv = f16(rsqrt.approx(f32(f16(Σx² + 2⁻¹³)))), out = f16(f16(x·inv)·gain[c]); no mean, no 1/N."""
    ss = row_sum_of_squares(x, tree)
    inv = approx_via_f32(nx.rsqrt_approx_ftz_f32, nx.f16_add(ss, NORM_EPS))[..., None]
    if mul_order == "x_inv_gain":
        return nx.f16_mul(nx.f16_mul(x, inv), gain)
    if mul_order == "inv_gain_first":
        return nx.f16_mul(x, nx.f16_mul(inv, gain))
    raise ValueError(f"unknown norm multiplication order {mul_order!r}")


# ---- E11: cubic-exponent softmax -------------------------------------------------------------------------------------

def cubic_exponent(x: np.ndarray) -> np.ndarray:
    """E11(a): m = clamp(f16(x·0x2466), ±0x3873); t = fma(m, −m, 0x3B6B); u = fma(m, t, 0x3D80); bits (u << 5) &
    0x7FE0."""
    m = nx.f16_min(nx.f16_max(nx.f16_mul(x, SOFTMAX_SCALE), CLAMP_LO), CLAMP_HI)
    t = nx.f16_fma(m, nx.f16_neg(m), CUBIC_C1)
    u = nx.f16_fma(m, t, CUBIC_C0)
    return ((u.astype(np.uint32) << 5) & 0x7FE0).astype(np.uint16)


def e11_row_sum(e: np.ndarray) -> np.ndarray:
    """E11(b,c): per row of (..., 64, 96): ((w0+w2)+(w4+w6))+(w8+w10) + the same over odd n-tiles, butterfly, lo +
    hi."""
    w = _words(e)

    def tri(a: int) -> np.ndarray:
        s01 = nx.f16_add(w[..., a, :, :], w[..., a + 2, :, :])
        s23 = nx.f16_add(w[..., a + 4, :, :], w[..., a + 6, :, :])
        return nx.f16_add(nx.f16_add(s01, s23), nx.f16_add(w[..., a + 8, :, :], w[..., a + 10, :, :]))

    return butterfly_row_sum(nx.f16_add(tri(0), tri(1)))


def e11_softmax(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E11: expval, row reciprocal f16(rcp.approx(f32(rowsum))) and p = f16(expval · rcp) for a (..., 64, 96) score
    block."""
    e = cubic_exponent(s)
    rcp = approx_via_f32(nx.rcp_approx_ftz_f32, e11_row_sum(e))
    return e, rcp, nx.f16_mul(e, rcp[..., None])


# ---- E21/E23…: clamped cubic activation ----------------------------------------------------------------------------

def activation(x: np.ndarray) -> np.ndarray:
    """E21: y = min(max(x, −2), 2); g = 0.5 + y·(0.412… − 0.0810…·|y|); out = x·g (neg, max, min, abs, mul, sub,
    mul, add, mul)."""
    neg_two = nx.f16_neg(ACT_TWO)
    y = nx.f16_min(nx.f16_max(x, neg_two), ACT_TWO)
    a = nx.f16_abs(y)
    s = nx.f16_sub(ACT_A, nx.f16_mul(ACT_B, a))
    g = nx.f16_add(ACT_HALF, nx.f16_mul(y, s))
    return nx.f16_mul(x, g)


# ---- E61: f32 softmax over the returned values, 9-tap weighted gather ---------------------------------------------

def e61_weights(v: np.ndarray, n_max: int, n_sum: int) -> np.ndarray:
    """E61(c) for (..., 10) f16 values: max over the first n_max (f16 max), x − max (f16), ex2.approx(f32·log2e),
    f32 sum over the first n_sum, r = f16(div.approx(1, sum)), p_i = f16(f16(e_i)·r). Returns (..., 10) p bits."""
    m = v[..., 0]
    for i in range(1, n_max):
        m = nx.f16_max(m, v[..., i])
    d = nx.f16_sub(v, m[..., None])
    e32 = nx.ex2_approx_ftz_f32(nx.f32_mul_ftz(nx.f16_to_f32(d), LOG2E_F32))
    total = e32[..., 0]
    for i in range(1, n_sum):
        total = nx.f32_add_ftz(total, e32[..., i])
    r = nx.f32_to_f16_rn(nx.div_approx_ftz_f32(np.broadcast_to(ONE_F32, total.shape).astype(np.float32), total))
    return nx.f16_mul(nx.f32_to_f16_rn(e32), r[..., None])


def e61_fold(p: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """acc = 0; acc = fma.rn.f16(p_i, tap_i, acc) for taps i = 0..8 per channel. p (..., 9), taps (..., 9, 4) ->
    (..., 4)."""
    acc = np.zeros(taps.shape[:-2] + (4,), dtype=np.uint16)
    for i in range(taps.shape[-2]):
        acc = nx.f16_fma(p[..., i, None], taps[..., i, :], acc)
    return acc


def e61_fold_paired(p: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """12 fma.rn.f16x2 = 3 colour channels × 4 tap pairs: acc = fma((p2i, p2i+1), (tap2i.c, tap2i+1.c), acc) from 0
    for i = 0..3, then out = fma.rn.f16(p8, tap8.c, acc.lo + acc.hi). p (..., 9), taps (..., 9, 4) -> (..., 4)."""
    acc = np.zeros(taps.shape[:-2] + (4, 2), dtype=np.uint16)  # channel, half
    for i in range(4):
        pair_p = np.stack([p[..., 2 * i], p[..., 2 * i + 1]], axis=-1)[..., None, :]
        pair_t = np.stack([taps[..., 2 * i, :], taps[..., 2 * i + 1, :]], axis=-1)
        acc = nx.f16_fma(pair_p, pair_t, acc)
    return nx.f16_fma(p[..., 8, None], taps[..., 8, :], nx.f16_add(acc[..., 0], acc[..., 1]))
