"""The enc5 reference, phase by phase: B = weight bytes at the documented addresses, D = numerics mma on A, B, C,
chaining, the arena index formula, determinism, assumption switches, and the distance to the independent float model
(numpy and PyTorch paths agree; the torch path is exercised where torch is installed)."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge import numerics as nx
from tcforge.errors import TcforgeError
from tcforge.layers.enc5 import Assumptions, Inputs, WeightImage, phase, reference
from tcforge.layers.enc5 import epilogues as ep
from tcforge.layers.enc5.reference import frame_covered
from tcforge.layers.enc5.semantic import compare, semantic

EXTENT = (12, 10)  # grid 2×2: 4 windows, two of them partial, all four touching the frame edge
STAGES = (1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 59, 60, 61)


@pytest.fixture(scope="module")
def weights() -> WeightImage:
    return WeightImage.synthetic(1)


@pytest.fixture(scope="module")
def inputs() -> Inputs:
    return Inputs.synthetic(EXTENT, 2)


@pytest.fixture(scope="module")
def run(weights, inputs):
    return reference(weights, inputs, numerics="ada", stages=STAGES)


def channel(kk: np.ndarray) -> np.ndarray:
    """mma k -> logical channel (enc5.md §4, written out here independently)."""
    return 2 * ((kk >> 2) & 3) + (kk & 1) + 16 * ((kk >> 1) & 1) + 8 * ((kk >> 4) & 1)


def addr(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    return (512 * (n >> 4) + 64 * (n & 7) + 16 * ((k >> 1) & 3) + 8 * ((n >> 3) & 1) + 4 * ((k >> 3) & 1)
            + 2 * ((k >> 4) & 1) + (k & 1))


def expected_b(raw: np.ndarray, p: int, warp: int) -> np.ndarray:
    """B (mma-k order) of phase p read straight from the image bytes."""
    ph = phase(p)
    kk = np.arange(ph.k)[:, None]
    n = np.arange(ph.n)[None, :]
    s, k = kk // 32, channel(kk % 32)
    if p <= 10:
        base = 27648 * warp + (320 if p % 2 else 5440) + 1024 * ((p - 1) // 2)
        off = base + addr(n, k)
    elif 13 <= p <= 20:
        off = 22848 + 27648 * (p - 13) + addr(n, k)
    elif p == 61:
        off = 428544 + 512 * s + addr(n, k)
    elif p % 2:  # fc1: steps at +512, columns 16..31 five tiles on
        off = ph.b.base + 512 * (s + 5 * (n >> 4)) + addr(n & 15, k)
    else:
        off = ph.b.base + addr(n, k)
    return raw[off]


def apply_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str) -> np.ndarray:
    """D from A, B, C tile by tile (16×8), step by step (32-deep), with the numerics mma (a step's tiles at once)."""
    m, k = a.shape
    n = b.shape[1]
    mt, nt = m // 16, n // 8
    acc = c.reshape(mt, 16, nt, 8).transpose(0, 2, 1, 3)  # (mt, nt, 16, 8)
    for s in range(k // 32):
        at = a[:, 32 * s : 32 * s + 32].reshape(mt, 1, 16, 32)
        bt = b[32 * s : 32 * s + 32].reshape(32, nt, 8).transpose(1, 0, 2)[None]
        acc = nx.mma_m16n8k32_e4m3_f16(np.ascontiguousarray(np.broadcast_to(at, (mt, nt, 16, 32))),
                                       np.ascontiguousarray(np.broadcast_to(bt, (mt, nt, 32, 8))), acc, model)
    return acc.transpose(0, 2, 1, 3).reshape(m, n)


def test_every_phase_of_one_window(weights, inputs) -> None:
    """All 61 phases of window 3 and every warp: B at the documented address, D = mma(A, B, C), C = chained D."""
    res = reference(weights, inputs, stages=range(1, 62), windows=[3])
    raw = weights.array
    assert len(res.stages) == 12 * 8 + 49 * 4
    for (p, w, z), st in sorted(res.stages.items()):
        assert w == 3
        assert np.array_equal(apply_mma(st["A"], st["B"], st["C"], "ada"), st["D"]), (p, z)
        if p not in (11, 12):
            assert np.array_equal(st["B"], expected_b(raw, p, z)), (p, z)
        src = phase(p).chain_from
        if src is not None:
            assert np.array_equal(st["C"], res.stages[(src, w, z)]["D"]), (p, z)
    # data flow between phases (k in mma order: channel perm within each 32-deep step)
    q8 = nx.f16_to_e4m3_satfinite
    p32, p96 = channel(np.arange(32)), channel(np.arange(96) % 32) + 32 * (np.arange(96) // 32)
    for z in range(8):
        d9, d10 = res.stages[(9, 3, z)]["D"], res.stages[(10, 3, z)]["D"]
        assert np.array_equal(res.stages[(11, 3, z)]["A"], q8(d9)[:64][:, p32])  # E10: queries = D9 rows 0..63
        assert np.array_equal(res.stages[(12, 3, z)]["B"], q8(d10)[p96, :])  # E11: movmatrix-transposed V
    for z in range(4):
        for j in range(8):  # E12/E13..: head j's O, m-tile z, via shared memory
            o = res.stages[(12, 3, j)]["D"][16 * z : 16 * z + 16]
            assert np.array_equal(res.stages[(13 + j, 3, z)]["A"], q8(o)[:, p32])
        for i in range(20):  # E21/E23..: activation of the odd phase -> the next even phase's A
            act = ep.activation(res.stages[(21 + 2 * i, 3, z)]["D"])
            assert np.array_equal(res.stages[(22 + 2 * i, 3, z)]["A"], q8(act)[:, p32])
    # P13's C = proj bias + the raw input tokens (window 3 = ctaid (1, 1): x0 = 8, y0 = 8; extent 12×10)
    feats = inputs.features()
    tok = np.zeros((16, 160), np.uint8)
    for r in range(16):
        x, y = 8 + r % 8, 8 + r // 8
        if x < 12 and y < 10:
            tok[r] = feats[y, x]
    c13 = nx.f16_add(weights.proj_bias(), ep.dequant(tok))
    assert np.array_equal(res.stages[(13, 3, 0)]["C"], c13)
    # odd MLP phases all consume E20's operand; P61 consumes e4m3(D60)
    assert all(np.array_equal(res.stages[(21, 3, 1)]["A"], res.stages[(p, 3, 1)]["A"]) for p in range(23, 60, 2))
    d60 = res.stages[(60, 3, 2)]["D"]
    perm = channel(np.arange(160) % 32) + 32 * (np.arange(160) // 32)
    assert np.array_equal(res.stages[(61, 3, 2)]["A"], nx.f16_to_e4m3_satfinite(d60)[:, perm])


def test_input_record_order_is_consistent(weights) -> None:
    base = Inputs.synthetic((9, 8), 4)
    natural = Inputs.from_features(base.features(), base.texture, order="natural")
    assert not np.array_equal(natural.input, base.input)
    a = reference(weights, base, windows=[0])
    b = reference(weights, natural, windows=[0], assumptions=Assumptions(input_record_order="natural"))
    assert np.array_equal(a.arena, b.arena) and np.array_equal(a.surface, b.surface)


@pytest.mark.parametrize("change", [{"prologue_norm": "gain_only"}, {"prologue_norm": "none"},
                                    {"out_of_frame": "clamp"}, {"residual": "staged"}, {"e21_residual": "normed"},
                                    {"e61_values": "first10"}, {"e61_tap_clamp": "tap"}, {"table_offsets": "literal"},
                                    {"prologue_sum_tree": "pairwise"}, {"norm_mul_order": "inv_gain_first"},
                                    {"e61_fold": "sequential"}])
def test_each_switch_runs_and_matters(weights, run, change) -> None:
    inp = Inputs.synthetic(EXTENT, 2)
    res = reference(weights, inp, windows=[0], assumptions=Assumptions(**change))
    base = reference(weights, inp, windows=[0])
    assert not (np.array_equal(res.arena, base.arena) and np.array_equal(res.surface, base.surface)), change


@pytest.mark.slow
def test_720p_frame(weights) -> None:
    import time

    inp = Inputs.synthetic((40, 23), 0)
    t0 = time.perf_counter()
    res = reference(weights, inp)
    assert time.perf_counter() - t0 < 60.0
    assert res.geometry.grid == (5, 3, 1) and res.arena.size == 147_200 and len(res.windows) == 15
    assert res.arena.reshape(5, 23, 40, 32).any(axis=(0, 3)).all()  # every token written
    rgb = res.surface.view(np.float16)[..., :3].astype(np.float32)
    assert np.isfinite(rgb).all() and rgb.min() >= 0.0 and rgb.max() <= 1.01


def test_stage_keys_and_shapes(run) -> None:
    for p in STAGES:
        ph = phase(p)
        keys = sorted(k for k in run.stages if k[0] == p)
        assert keys == [(p, w, z) for w in range(4) for z in range(ph.warps)]
        st = run.stages[keys[0]]
        assert st["A"].shape == (ph.m, ph.k) and st["A"].dtype == np.uint8
        assert st["B"].shape == (ph.k, ph.n) and st["B"].dtype == np.uint8
        assert st["C"].shape == st["D"].shape == (ph.m, ph.n) and st["D"].dtype == np.uint16


@pytest.mark.parametrize("p", [p for p in STAGES if p not in (11, 12)])
def test_b_is_the_weight_image_at_the_documented_addresses(run, weights, p) -> None:
    raw = weights.array
    for (q, w, z), st in run.stages.items():
        if q == p and w in (0, 3):
            assert np.array_equal(st["B"], expected_b(raw, p, z)), (p, w, z)


@pytest.mark.parametrize("p", STAGES)
def test_d_is_the_numerics_mma_of_a_b_c(run, p) -> None:
    for key in [(p, 0, 0), (p, 3, phase(p).warps - 1)]:
        st = run.stages[key]
        assert np.array_equal(apply_mma(st["A"], st["B"], st["C"], "ada"), st["D"]), key


def test_chaining_and_c_sources(run, weights) -> None:
    for (p, w, z), st in run.stages.items():
        src = phase(p).chain_from
        if src is not None and (src, w, z) in run.stages:
            assert np.array_equal(st["C"], run.stages[(src, w, z)]["D"]), (p, w, z)
    assert not run.stages[(1, 0, 5)]["C"].any() and not run.stages[(12, 2, 7)]["C"].any()
    raw = weights.array
    # P11's C: score bias of head z, byte base + 512(4(n>>1)+m) + 16·lane + 8(n&1) + 4r + 2j
    z = 6
    row = np.arange(64)[:, None]
    col = np.arange(96)[None, :]
    m, r, g, n, t, j = row >> 4, (row >> 3) & 1, row & 7, col >> 3, (col >> 1) & 3, col & 1
    off = 27648 * z + 10560 + 512 * (4 * (n >> 1) + m) + 16 * (4 * g + t) + 8 * (n & 1) + 4 * r + 2 * j
    assert np.array_equal(run.stages[(11, 1, z)]["C"], raw[off] | (raw[off + 1].astype(np.uint16) << 8))
    # P11 is position-only attention: the keys are the queries (B column n = A row n for the 64 window rows)
    st = run.stages[(11, 2, 3)]
    assert np.array_equal(st["B"][:, :64].T, st["A"])
    # P21's C is the fc1 bias of chunk 0 replicated over rows; P59's that of chunk 19
    assert np.all(run.stages[(21, 0, 1)]["C"] == raw[227264:227328].view("<u2")[None, :])
    assert np.all(run.stages[(59, 0, 2)]["C"] == raw[423360:423424].view("<u2")[None, :])


def test_arena_index_formula(run, inputs) -> None:
    ex, ey = inputs.ex, inputs.ey
    arena = run.arena.view(np.uint32)
    for window, x0, y0 in [(0, 0, 0), (3, 8, 8)]:
        for z in range(4):
            d60 = run.stages[(60, window, z)]["D"]
            for row in range(16):
                x, y = x0 + row % 8, y0 + 2 * z + row // 8
                if x >= ex or y >= ey:
                    continue
                q = nx.f16_to_e4m3_satfinite(d60[row]).astype(np.uint32)
                for p in range(5):
                    for t in range(4):
                        for d, off in ((t, 0), (t | 4, 8)):
                            c = 32 * p + off + 2 * t
                            word = q[c] | q[c + 1] << 8 | q[c + 16] << 16 | q[c + 17] << 24
                            assert arena[8 * ex * ey * p + 8 * ex * y + 8 * x + d] == word, (window, z, row, p, d)


def test_out_of_frame_tokens_are_not_written(weights) -> None:
    inp = Inputs.synthetic((12, 10), 2)
    res = reference(weights, inp, windows=[1])  # window 1: x0 = 8, columns 8..11 in frame
    rec = res.arena.reshape(5, 10, 12, 32)
    assert rec[:, :8, 8:12].any(axis=(0, 3)).all() and not rec[:, 8:, :].any() and not rec[:, :, :8].any()
    surf = res.surface
    assert surf[:8, 8:12].any(axis=-1).all() and not surf[8:].any() and not surf[:, :8].any()
    assert np.all(surf[..., 3] == 0)


def test_guarded_stores_leave_initial_buffers_untouched(weights) -> None:
    inp = Inputs.synthetic((8, 8), 0, ox=2)  # one window at x0 = -2: columns 6..7 are never written
    surface0 = np.full((8, 8, 4), 0x3C00, np.uint16)
    arena0 = np.full(5 * 8 * 8 * 32, 0xAA, np.uint8)
    res = reference(weights, inp, surface=surface0, arena=arena0)
    assert np.all(res.surface[:, 6:] == 0x3C00) and np.all(res.surface[:, :6, 3] == 0)
    rec = res.arena.reshape(5, 8, 8, 32)
    assert np.all(rec[:, :, 6:] == 0xAA) and np.all(surface0 == 0x3C00) and np.all(arena0 == 0xAA)
    with pytest.raises(TcforgeError, match="surface: expected a uint16 array of 256 elements"):
        reference(weights, inp, surface=np.zeros((8, 8, 3), np.uint16))


@pytest.mark.parametrize(("extent", "origin"), [((12, 10), (3, 2)), ((8, 8), (2, 0)), ((8, 10), (0, 7))])
def test_frame_covered_says_which_launches_write_every_byte(weights, extent, origin) -> None:
    """`frame_covered` (what lets the GPU's eager path skip zeroing fresh outputs) against the reference run on two
    different initial fillings: a byte or texel is untouched where both fillings survive, and the untouched tokens are
    exactly those outside the windows' span."""
    (ex, ey), (ox, oy) = extent, origin
    inp = Inputs.synthetic(extent, 3, ox=ox, oy=oy)
    kept_a, kept_s = True, True
    for v in (0xA5, 0x5A):
        res = reference(weights, inp, arena=np.full(5 * ey * ex * 32, v, np.uint8),
                        surface=np.full((ey, ex, 4), v * 257, np.uint16))
        kept_a = kept_a & (res.arena.reshape(5, ey, ex, 32) == v)
        kept_s = kept_s & (res.surface == v * 257)
    y, x = np.mgrid[0:ey, 0:ex]
    outside = (x >= 8 * -(-ex // 8) - ox) | (y >= 8 * -(-ey // 8) - oy)
    assert np.array_equal(kept_a.all(axis=(0, 3)), outside) and not (kept_a.any(axis=(0, 3)) & ~outside).any()
    assert np.array_equal(kept_s.all(axis=-1), outside) and not (kept_s.any(axis=-1) & ~outside).any()
    assert frame_covered(ex, ey, ox, oy) == (not outside.any())


def test_windows_subset_matches_full_run(run, weights, inputs) -> None:
    part = reference(weights, inputs, windows=[2])  # window 2 = ctaid (0, 1): rows 8..9, columns 0..7
    full = run.arena.reshape(5, 10, 12, 32)
    sub = part.arena.reshape(5, 10, 12, 32)
    assert np.array_equal(sub[:, 8:10, 0:8], full[:, 8:10, 0:8])
    assert np.array_equal(part.surface[8:10, 0:8], run.surface[8:10, 0:8])


def test_window_batches_do_not_change_results(run, weights, inputs, monkeypatch) -> None:
    import sys

    refmod = sys.modules["tcforge.layers.enc5.reference"]  # the package's `reference` attribute is the function
    monkeypatch.setattr(refmod, "WINDOW_BATCH", 3)  # 4 windows -> batches [0, 1, 2], [3]
    small = reference(weights, inputs, stages=(11, 61))
    assert np.array_equal(small.arena, run.arena) and np.array_equal(small.surface, run.surface)
    for key in [(11, 3, 5), (61, 3, 2), (61, 0, 0)]:
        for name in "ABCD":
            assert np.array_equal(small.stages[key][name], run.stages[key][name]), (key, name)


def test_deterministic(run, weights, inputs) -> None:
    again = reference(weights, inputs)
    assert np.array_equal(again.arena, run.arena) and np.array_equal(again.surface, run.surface)


def test_assumption_switches_change_the_bits(run, weights, inputs) -> None:
    ring = reference(weights, inputs, windows=[0], assumptions=Assumptions(halo_order="ring"))
    full0 = run.arena.reshape(5, 10, 12, 32)[:, :8, :8]
    assert not np.array_equal(ring.arena.reshape(5, 10, 12, 32)[:, :8, :8], full0)
    guard = reference(weights, inputs, windows=[0], assumptions=Assumptions(e60_lane_guard="apply"))
    g = guard.arena.reshape(5, 10, 12, 32)
    assert not g[:, :8, 4:8].any() and np.array_equal(g[:, :8, :4], full0[:, :, :4])
    natural = reference(weights, inputs, windows=[0], assumptions=Assumptions(arena_record_order="natural"))
    assert not np.array_equal(natural.arena, ring.arena)


def test_hopper_numerics_differ_but_stay_close(run, weights, inputs) -> None:
    hop = reference(weights, inputs, numerics="hopper", stages=(13,))
    st = hop.stages[(13, 1, 2)]
    assert np.array_equal(apply_mma(st["A"], st["B"], st["C"], "hopper"), st["D"])
    assert not np.array_equal(hop.arena, run.arena)
    ref = run.arena.view(np.int8)
    assert np.mean(hop.arena != run.arena) < 0.5 and ref.size == hop.arena.size


def test_synthetic_activations_neither_saturate_nor_vanish(run) -> None:
    for name, st in run.stats.items():
        d = st.as_dict()
        assert d["sat_frac"] == 0.0, name
        assert 0.02 < d["rms"] < 40.0, (name, d)
        if name not in ("input", "prologue_out", "D9_q", "D10_v", "surface"):  # those include out-of-frame zeros
            assert d["zero_frac"] < 0.1, (name, d)


def test_distance_to_the_float_model(run, weights, inputs) -> None:
    d = compare(run, semantic(weights, inputs), *EXTENT)
    assert d.surface_psnr_db > 40.0
    assert d.arena_rms < 0.1 * d.arena_ref_rms and d.arena_max_abs < 1.0


def test_bad_arguments(weights, inputs) -> None:
    with pytest.raises(TcforgeError, match="numerics must be one of ada, hopper"):
        reference(weights, inputs, numerics="volta")
    with pytest.raises(TcforgeError, match="phase numbers must be in 1..61"):
        reference(weights, inputs, stages=(62,))
    with pytest.raises(TcforgeError, match="windows: \\[4\\] outside 0..3"):
        reference(weights, inputs, windows=[4])
    with pytest.raises(TcforgeError, match="expected a WeightImage"):
        reference(bytes(weights), inputs)  # type: ignore[arg-type]
    with pytest.raises(TcforgeError, match="expected an Inputs"):
        reference(weights, None)  # type: ignore[arg-type]


def test_numpy_model_shapes_and_unwritten_pixels() -> None:
    res = semantic(WeightImage.synthetic(0), Inputs.synthetic((8, 8), 0, ox=2))
    assert res.features.shape == (8, 8, 160) and res.surface.shape == (8, 8, 4)
    # origin offset 2 with the ceil grid (one window, x0 = -2): columns 6..7 of the frame are beyond it
    assert np.isnan(res.features[:, 6:]).all() and np.isfinite(res.features[:, :6]).all()
    with pytest.raises(TcforgeError, match="backend must be"):
        semantic(WeightImage.synthetic(0), Inputs.synthetic((9, 8), 0), backend="jax")


def test_torch_model_matches_numpy() -> None:
    pytest.importorskip("torch")
    w, inp = WeightImage.synthetic(0), Inputs.synthetic((9, 8), 0)
    a = semantic(w, inp, backend="numpy")
    b = semantic(w, inp, backend="torch")
    assert np.allclose(a.features, b.features, atol=1e-4) and np.allclose(a.surface, b.surface, atol=1e-5)
