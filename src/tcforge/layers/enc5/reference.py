"""The bit-exact CPU reference of enc5: all 61 phases and their epilogues, vectorised over windows (numpy).

Every mma goes through `tcforge.numerics.mma_m16n8k32_e4m3_f16` step by step (`mma_steps`, the only place enc5 calls
the numerics mma: a logical operand has k in channel order; `k_permutation` puts it in the order the mma consumes, 32
deep step by step, and every step's D is rounded to f16 by the instruction itself, as a K > 32 chain does on the
hardware); every epilogue follows the PTX operation order (`epilogues.py`). Open points are taken from an
`Assumptions` (defaults documented in `assumptions.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from tcforge import numerics as nx
from tcforge.errors import TcforgeError
from tcforge.layers.enc5 import epilogues as ep
from tcforge.layers.enc5.assumptions import Assumptions
from tcforge.layers.enc5.descriptor import LaunchGeometry, launch_geometry
from tcforge.layers.enc5.inputs import PLANES, Inputs, record_channel_order
from tcforge.layers.enc5.layout import CHANNELS, HIDDEN_CHUNKS, N_HEADS, k_permutation, region
from tcforge.layers.enc5.weights import WeightImage


def to_mma_order(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A (..., M, K) and B (..., K, N) in logical k order -> the same with k in mma consumption order."""
    perm = k_permutation(a.shape[-1])
    return a[..., perm], b[..., perm, :]


def mma_steps(a: np.ndarray, b: np.ndarray, c: np.ndarray, model: str, *, logical: bool = True) -> list[np.ndarray]:
    """Run D = A·B + C as K/32 chained m16n8k32 steps; returns the D (..., M, N) after every step.

    a: uint8 (..., M, K), b: uint8 (..., K, N), c: uint16 (..., M, N); leading dims broadcast. With logical=True the k
    axes are in channel order and are permuted to mma order first.
    """
    if logical:
        a, b = to_mma_order(a, b)
    *la, m, k = a.shape
    *lb, k2, n = b.shape
    *lc, mc, nc = c.shape
    if k != k2 or (mc, nc) != (m, n) or m % 16 or n % 8 or k % 32:
        raise ValueError(f"mma_steps: shapes A {a.shape}, B {b.shape}, C {c.shape} do not chain")
    lead = np.broadcast_shapes(tuple(la), tuple(lb), tuple(lc))
    mt, nt, steps = m // 16, n // 8, k // 32
    full = (*lead, mt, nt)
    # A tiles: (..., mt, 16, S, 32) -> (..., S, mt, 1, 16, 32)
    at = np.moveaxis(a.reshape(*la, mt, 16, steps, 32), -2, len(la))[..., :, None, :, :]
    bt = np.moveaxis(b.reshape(*lb, steps, 32, nt, 8), -2, -3)[..., None, :, :, :]  # (..., S, 1, nt, 32, 8)
    acc = np.broadcast_to(np.swapaxes(c.reshape(*lc, mt, 16, nt, 8), -3, -2), (*full, 16, 8))
    out: list[np.ndarray] = []
    nlead = len(lead)
    for s in range(steps):
        a_s = np.broadcast_to(_take_step(at, s, len(la), nlead), (*full, 16, 32))
        b_s = np.broadcast_to(_take_step(bt, s, len(lb), nlead), (*full, 32, 8))
        acc = nx.mma_m16n8k32_e4m3_f16(np.ascontiguousarray(a_s), np.ascontiguousarray(b_s),
                                       np.ascontiguousarray(acc), model)
        out.append(np.swapaxes(acc, -3, -2).reshape(*lead, m, n))
    return out


def _take_step(x: np.ndarray, s: int, nl: int, nlead: int) -> np.ndarray:
    """Select step s (the axis right after the operand's own leading dims) and left-pad leading dims to nlead."""
    y = x[(slice(None),) * nl + (s,)]
    return y.reshape((1,) * (nlead - nl) + y.shape)


MODELS = ("ada", "hopper")
StageKey = tuple[int, int, int]  # (phase, window, warp)
WINDOW_BATCH = 16  # windows per vectorised batch (bounds memory for large frames)


@dataclass
class StageStats:
    """Running statistics of one named point of the layer (over all computed windows)."""

    count: int = 0
    sumsq: float = 0.0
    max_abs: float = 0.0
    zeros: int = 0
    saturated: int = 0  # e4m3 ±448 (satfinite hit) or non-finite f16

    def add_f16(self, bits: np.ndarray) -> None:
        """Accumulate f16 values (bit patterns); non-finite ones count as saturated."""
        v = np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float64)
        finite = np.isfinite(v)
        self.count += v.size
        self.sumsq += float(np.sum(np.where(finite, v, 0.0) ** 2))
        self.max_abs = max(self.max_abs, float(np.max(np.abs(np.where(finite, v, 0.0)), initial=0.0)))
        self.zeros += int(np.sum(v == 0))
        self.saturated += int(np.sum(~finite))

    def add_e4m3(self, codes: np.ndarray) -> None:
        """Accumulate e4m3 codes; ±448 (satfinite hits) count as saturated."""
        self.add_f16(nx.e4m3_to_f16(codes))
        self.saturated += int(np.sum((np.asarray(codes) & 0x7F) == 0x7E))

    @property
    def rms(self) -> float:
        """Root mean square of the finite values seen."""
        return float(np.sqrt(self.sumsq / self.count)) if self.count else 0.0

    def as_dict(self) -> dict[str, float]:
        """rms, max |x|, zero fraction and saturated fraction."""
        n = max(self.count, 1)
        return {"rms": self.rms, "max_abs": self.max_abs, "zero_frac": self.zeros / n, "sat_frac": self.saturated / n}


@dataclass
class Result:
    """What one reference run produced: the arena, the surface, the requested stages and per-point statistics."""

    arena: np.ndarray  # uint8, 5·ey·ex·32
    surface: np.ndarray  # uint16 f16 bits, (ey, ex, 4)
    stages: dict[StageKey, dict[str, np.ndarray]]
    stats: dict[str, StageStats]
    geometry: LaunchGeometry
    windows: tuple[int, ...]
    numerics: str
    assumptions: Assumptions = field(default_factory=Assumptions)
    origin: tuple[int, int] = (0, 0)  # the inputs' (ox, oy)


def window_origin(window: int, geometry: LaunchGeometry, ox: int, oy: int) -> tuple[int, int]:
    """(x0, y0) of a window: x0 = 8·ctaid.x − ox, y0 = 8·ctaid.y − oy with window = ctaid.x + gridDim.x·ctaid.y."""
    gx = geometry.grid[0]
    return 8 * (window % gx) - ox, 8 * (window // gx) - oy


def frame_covered(ex: int, ey: int, ox: int, oy: int) -> bool:
    """True when the windows of the launch (the 'ceil' grid) cover every token, so every arena byte and surface
    texel is written and fresh outputs need no zeroing: windows span x in [-ox, 8·ceil(ex/8) - ox), y likewise."""
    return 8 * -(-ex // 8) - ox >= ex and 8 * -(-ey // 8) - oy >= ey


def halo_offsets(order: str) -> np.ndarray:
    """(32, 2) (dx, dy) offsets of rows 64..95 relative to the window origin (assumption `halo_order`)."""
    top = [(x, -1) for x in range(8)]
    bottom = [(x, 8) for x in range(8)]
    left = [(-1, y) for y in range(8)]
    right = [(8, y) for y in range(8)]
    if order == "tblr":
        offs = top + bottom + left + right
    elif order == "ring":
        offs = top + right + bottom[::-1] + left[::-1]
    else:
        raise TcforgeError(f"halo_order must be 'tblr' or 'ring', got {order!r}")
    return np.array(offs, dtype=np.int64)


def row_offsets(halo_order: str) -> np.ndarray:
    """(96, 2) (dx, dy) of the 96 staged rows: 64 window tokens in raster order, then the halo."""
    r = np.arange(64)
    window = np.stack([r % 8, r // 8], axis=1)
    return np.concatenate([window, halo_offsets(halo_order)], axis=0)


def _check_args(weights: object, inputs: object, numerics: str) -> None:
    if not isinstance(weights, WeightImage):
        raise TcforgeError(f"weights: expected a WeightImage, got {type(weights).__name__}")
    if not isinstance(inputs, Inputs):
        raise TcforgeError(f"inputs: expected an Inputs, got {type(inputs).__name__}")
    if numerics not in MODELS:
        raise TcforgeError(f"numerics must be one of {', '.join(MODELS)}, got {numerics!r}")


def reference(weights: WeightImage, inputs: Inputs, *, numerics: str = "ada", stages: Iterable[int] = (),
              windows: Iterable[int] | None = None, assumptions: Assumptions | None = None,
              arena: np.ndarray | None = None, surface: np.ndarray | None = None,
              progress: Callable[[int], object] | None = None) -> Result:
    """Run enc5 on the CPU, bit-exactly: `.arena`, `.surface`, `.stages[(phase, window, warp)]` (A, B, C, D).

    `arena` / `surface` are the buffers' contents before the launch (default zeros): bytes and pixels the guarded
    stores skip keep them. They are copied, never modified. `progress(n)` is called after each batch of n windows.
    """
    _check_args(weights, inputs, numerics)
    asm = assumptions or Assumptions()
    if not isinstance(asm, Assumptions):
        raise TcforgeError(f"assumptions: expected an Assumptions, got {type(asm).__name__}")
    geo = launch_geometry(inputs.ex, inputs.ey, inputs.ox, inputs.oy, asm.grid)
    want = sorted({int(p) for p in stages})
    for p in want:
        if not 1 <= p <= 61:
            raise TcforgeError(f"stages: phase numbers must be in 1..61, got {p}")
    if windows is None:
        wins = list(range(geo.windows))
    else:
        wins = sorted({int(w) for w in windows})
        bad = [w for w in wins if not 0 <= w < geo.windows]
        if bad:
            raise TcforgeError(f"windows: {bad[:5]} outside 0..{geo.windows - 1} (grid {geo.grid[0]}x{geo.grid[1]})")
    run = _Run(weights, inputs, numerics, set(want), asm, geo)
    if arena is not None:
        run.arena[...] = _initial(arena, np.uint8, (run.arena.size,), "arena").reshape(run.arena.shape)
    if surface is not None:
        run.surface[...] = _initial(surface, np.uint16, run.surface.shape, "surface")
    for i in range(0, len(wins), WINDOW_BATCH):
        run.batch(np.array(wins[i : i + WINDOW_BATCH], dtype=np.int64))
        if progress is not None:
            progress(len(wins[i : i + WINDOW_BATCH]))
    return Result(run.arena.reshape(-1), run.surface, run.stages, run.stats, geo, tuple(wins), numerics, asm,
                  (inputs.ox, inputs.oy))


def _initial(x: object, dtype: type, shape: tuple[int, ...], name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray) or x.dtype != dtype or x.size != int(np.prod(shape)):
        got = f"{x.dtype} array of shape {x.shape}" if isinstance(x, np.ndarray) else type(x).__name__
        raise TcforgeError(f"{name}: expected a {np.dtype(dtype).name} array of {int(np.prod(shape))} elements "
                           f"(shape {shape}), got {got}")
    return x.reshape(shape)


class _Run:
    """State of one reference run; `batch` computes a group of windows through all phases."""

    def __init__(self, w: WeightImage, inp: Inputs, model: str, want: set[int], asm: Assumptions,
                 geo: LaunchGeometry) -> None:
        self.w, self.inp, self.model, self.want, self.asm, self.geo = w, inp, model, want, asm, geo
        self.arena = np.zeros((PLANES, inp.ey, inp.ex, 32), dtype=np.uint8)
        self.surface = np.zeros((inp.ey, inp.ex, 4), dtype=np.uint16)
        self.stages: dict[StageKey, dict[str, np.ndarray]] = {}
        self.stats: dict[str, StageStats] = {}
        self.features = inp.features(asm.input_record_order)  # (ey, ex, 160) e4m3 codes
        self.rows = row_offsets(asm.halo_order)
        self.tex = inp.texture
        lit = asm.table_offsets == "literal"
        img = w.array
        self.proj_bias = self._vec(img, region("proj_bias").start + (16 if lit else 0), CHANNELS)
        self.mlp_gain = self._vec(img, region("mlp_gain").start + (16 if lit else 0), CHANNELS)
        self.pro_gain = w.vector("prologue_gain")
        self.out_bias = w.vector("mlp_out_bias")
        self.q = np.stack([w.q(h) for h in range(N_HEADS)])
        self.v = np.stack([w.v(h) for h in range(N_HEADS)])
        self.sbias = np.stack([w.score_bias(h) for h in range(N_HEADS)])
        self.wo = np.stack([w.wo(h) for h in range(N_HEADS)])
        self.fc1 = np.stack([w.fc1(i) for i in range(HIDDEN_CHUNKS)])
        self.fc1_bias = np.stack([w.fc1_bias(i) for i in range(HIDDEN_CHUNKS)])
        self.fc2 = np.stack([w.fc2(i) for i in range(HIDDEN_CHUNKS)])
        self.head = w.head_out()
        self.head_bias = w.vector("head_out_bias")

    @staticmethod
    def _vec(img: np.ndarray, start: int, n: int) -> np.ndarray:
        return img[start : start + 2 * n].view("<u2").astype(np.uint16)

    def _stat(self, name: str, bits: np.ndarray, e4m3: bool = False) -> None:
        st = self.stats.setdefault(name, StageStats())
        (st.add_e4m3 if e4m3 else st.add_f16)(bits)

    # -- stage capture ------------------------------------------------------------------------------------------------
    def _capture(self, phase: int, wins: np.ndarray, warps: Iterable[int], a, b, c, d) -> None:
        """Record stage matrices; a/b/c/d are callables (batch index, warp) -> logical matrices (k in channel order)."""
        if phase not in self.want:
            return
        for bi, win in enumerate(wins):
            for z in warps:
                al, bl = a(bi, z), b(bi, z)
                perm = k_permutation(al.shape[-1])
                self.stages[(phase, int(win), int(z))] = {
                    "A": np.ascontiguousarray(al[:, perm]), "B": np.ascontiguousarray(bl[perm, :]),
                    "C": np.ascontiguousarray(c(bi, z)), "D": np.ascontiguousarray(d(bi, z))}

    # -- one batch of windows -----------------------------------------------------------------------------------------
    def batch(self, wins: np.ndarray) -> None:
        """Compute windows `wins` through the prologue, phases 1–61 and their epilogues."""
        asm, model = self.asm, self.model
        gx = self.geo.grid[0]
        x0 = 8 * (wins % gx) - self.inp.ox
        y0 = 8 * (wins // gx) - self.inp.oy
        xs = x0[:, None] + self.rows[None, :, 0]  # (nb, 96)
        ys = y0[:, None] + self.rows[None, :, 1]
        inside = (xs >= 0) & (xs < self.inp.ex) & (ys >= 0) & (ys < self.inp.ey)
        codes = self.features[np.clip(ys, 0, self.inp.ey - 1), np.clip(xs, 0, self.inp.ex - 1)]  # (nb, 96, 160)
        if asm.out_of_frame == "zero":
            codes = np.where(inside[..., None], codes, np.uint8(0))
        self._stat("input", codes, e4m3=True)

        # prologue: dequantise, RMS-normalise with the W+0 gain, requantise; stage 96×160
        x = ep.dequant(codes)
        if asm.prologue_norm == "rms":
            staged = ep.requant(ep.rms_norm(x, self.pro_gain, asm.prologue_sum_tree, asm.norm_mul_order))
        elif asm.prologue_norm == "gain_only":
            staged = ep.requant(nx.f16_mul(x, self.pro_gain))
        else:
            staged = codes
        self._stat("prologue_out", staged, e4m3=True)

        # P1–P10: per head, chain A (Q, D9) and chain B (V, D10), 5 k-steps each; one phase = one step
        wqv = np.concatenate([self.q, self.v])  # (16, 160, 32): heads' Q then V
        zero = np.zeros((1, 1, 96, 32), np.uint16)
        steps = mma_steps(staged[:, None], wqv[None], zero, model)  # each (nb, 16, 96, 32)
        for s in range(5):
            for which in (0, 1):
                p = 2 * s + 1 + which
                sl = slice(32 * s, 32 * s + 32)
                hoff = 8 * which
                self._capture(
                    p, wins, range(8),
                    lambda bi, z, sl=sl: staged[bi, :, sl],
                    lambda bi, z, sl=sl, hoff=hoff: wqv[hoff + z, sl, :],
                    lambda bi, z, s=s, hoff=hoff: zero[0, 0] if s == 0 else steps[s - 1][bi, hoff + z],
                    lambda bi, z, s=s, hoff=hoff: steps[s][bi, hoff + z])
        d9, d10 = steps[4][:, :8], steps[4][:, 8:]
        self._stat("D9_q", d9)
        self._stat("D10_v", d10)

        # E10 / P11: S = Q·Qᵀ + score bias (64 queries × 96 keys), one k-step
        q8 = ep.requant(d9)  # (nb, 8, 96, 32)
        a11 = q8[:, :, :64, :]
        b11 = np.swapaxes(q8, -1, -2)  # (nb, 8, 32, 96)
        (s11,) = mma_steps(a11, b11, self.sbias[None], model)
        self._capture(11, wins, range(8), lambda bi, z: a11[bi, z], lambda bi, z: b11[bi, z],
                      lambda bi, z: self.sbias[z], lambda bi, z: s11[bi, z])
        self._stat("S_scores", s11)

        # E11: cubic-exponent softmax; V transposed by movmatrix and requantised
        _, _, prob = ep.e11_softmax(s11)
        self._stat("P_probs", prob)
        p8 = ep.requant(prob)  # (nb, 8, 64, 96)
        v8 = ep.requant(d10)  # (nb, 8, 96, 32)

        # P12: O = P·V, K = 96 in 3 k-steps, C = 0
        zero12 = np.zeros((1, 1, 64, 32), np.uint16)
        o = mma_steps(p8, v8, zero12, model)[-1]  # (nb, 8, 64, 32)
        self._capture(12, wins, range(8), lambda bi, z: p8[bi, z], lambda bi, z: v8[bi, z],
                      lambda bi, z: zero12[0, 0], lambda bi, z: o[bi, z])
        self._stat("O_attn", o)

        # E12: O -> e4m3 (shared staging); P13's C = proj_bias + residual; warps 0..3 own rows 16z..16z+15
        o8 = ep.requant(o)
        resid = x[:, :64] if asm.residual == "raw_input" else ep.dequant(staged[:, :64])
        c = nx.f16_add(self.proj_bias, resid)  # (nb, 64, 160)
        for j in range(8):
            c_in = c
            (c,) = mma_steps(o8[:, j], self.wo[j][None], c_in, model)
            self._capture(13 + j, wins, range(4), lambda bi, z, j=j: o8[bi, j, 16 * z : 16 * z + 16],
                          lambda bi, z, j=j: self.wo[j],
                          lambda bi, z, c_in=c_in: c_in[bi, 16 * z : 16 * z + 16],
                          lambda bi, z, c_out=c: c_out[bi, 16 * z : 16 * z + 16])
        d20 = c
        self._stat("D20_attn_out", d20)

        # E20: RMS norm -> the shared A operand of every odd phase
        normed = ep.rms_norm(d20, self.mlp_gain, asm.e20_sum_tree, asm.norm_mul_order)
        a_odd = ep.requant(normed)  # (nb, 64, 160)
        self._stat("E20_norm", a_odd, e4m3=True)

        # odd phases 21..59: all 20 fc1 chunks are independent (C = bias), 5 k-steps each
        bias = np.broadcast_to(self.fc1_bias[:, None, :], (HIDDEN_CHUNKS, 64, 32))
        h_steps = mma_steps(a_odd[:, None], self.fc1[None], bias[None], model)
        hid = h_steps[-1]  # (nb, 20, 64, 32)
        for i in range(HIDDEN_CHUNKS):
            self._capture(21 + 2 * i, wins, range(4), lambda bi, z: a_odd[bi, 16 * z : 16 * z + 16],
                          lambda bi, z, i=i: self.fc1[i], lambda bi, z, i=i: bias[i, :16],
                          lambda bi, z, i=i: hid[bi, i, 16 * z : 16 * z + 16])
        self._stat("D_fc1", hid)
        act8 = ep.requant(ep.activation(hid))
        self._stat("act", act8, e4m3=True)

        # E21: P22's C = mlp_out_bias + residual; even phases 22..60 chain the residual stream
        resid2 = d20 if asm.e21_residual == "d20" else normed
        c = nx.f16_add(self.out_bias, resid2)
        for i in range(HIDDEN_CHUNKS):
            c_in = c
            (c,) = mma_steps(act8[:, i], self.fc2[i][None], c_in, model)
            self._capture(22 + 2 * i, wins, range(4), lambda bi, z, i=i: act8[bi, i, 16 * z : 16 * z + 16],
                          lambda bi, z, i=i: self.fc2[i],
                          lambda bi, z, c_in=c_in: c_in[bi, 16 * z : 16 * z + 16],
                          lambda bi, z, c_out=c: c_out[bi, 16 * z : 16 * z + 16])
        d60 = c
        self._stat("D60_out", d60)

        # E60: requantise and scatter to the plane arena (guarded)
        y8 = ep.requant(d60)  # (nb, 64, 160)
        self._scatter(y8, x0, y0)

        # P61: head on e4m3(D60), C = head bias
        hb = np.broadcast_to(self.head_bias, (64, 16))
        d61 = mma_steps(y8, self.head[None], hb[None], model)[-1]  # (nb, 64, 16)
        self._capture(61, wins, range(4), lambda bi, z: y8[bi, 16 * z : 16 * z + 16], lambda bi, z: self.head,
                      lambda bi, z: hb[:16], lambda bi, z: d61[bi, 16 * z : 16 * z + 16])
        self._stat("D61_head", d61)

        # E61: per-token softmax over the returned values, 9-tap gather, surface write
        self._e61(d61, x0, y0)

    def _scatter(self, y8: np.ndarray, x0: np.ndarray, y0: np.ndarray) -> None:
        r = np.arange(64)
        xs = x0[:, None] + r % 8
        ys = y0[:, None] + r // 8
        ok = (xs >= 0) & (xs < self.inp.ex) & (ys >= 0) & (ys < self.inp.ey)
        if self.asm.e60_lane_guard == "apply":
            ok &= (r % 8 < 4)[None, :]
        rec = y8[..., record_channel_order(self.asm.arena_record_order)].reshape(*y8.shape[:2], PLANES, 32)
        bi, ri = np.nonzero(ok)
        self.arena[:, ys[bi, ri], xs[bi, ri], :] = np.moveaxis(rec[bi, ri], 1, 0)

    def _e61(self, d61: np.ndarray, x0: np.ndarray, y0: np.ndarray) -> None:
        ex, ey = self.inp.ex, self.inp.ey
        vals = d61[..., :10]  # (nb, 64, 10)
        n_sum = 9 if self.asm.e61_values == "first9" else 10
        p = ep.e61_weights(vals, n_sum, n_sum)[..., :9]
        r = np.arange(64)
        xs = x0[:, None] + r % 8
        ys = y0[:, None] + r // 8
        dy, dx = np.divmod(np.arange(9), 3)
        dx, dy = dx - 1, dy - 1
        if self.asm.e61_tap_clamp == "center":
            cx = np.minimum(np.maximum(xs, 1), ex - 2)[..., None] + dx
            cy = np.minimum(np.maximum(ys, 1), ey - 2)[..., None] + dy
        else:
            cx = np.minimum(np.maximum(xs[..., None] + dx, 1), ex - 2)
            cy = np.minimum(np.maximum(ys[..., None] + dy, 1), ey - 2)
        in_tex = (cx >= 0) & (cx < ex) & (cy >= 0) & (cy < ey)
        taps = self.tex[np.clip(cy, 0, ey - 1), np.clip(cx, 0, ex - 1)]  # (nb, 64, 9, 4)
        taps = np.where(in_tex[..., None], taps, np.uint16(0))
        rgba = ep.e61_fold(p, taps) if self.asm.e61_fold == "sequential" else ep.e61_fold_paired(p, taps)
        rgba[..., 3] = 0
        self._stat("surface", rgba)
        ok = (xs >= 0) & (xs < ex) & (ys >= 0) & (ys < ey)
        bi, ri = np.nonzero(ok)
        self.surface[ys[bi, ri], xs[bi, ri]] = rgba[bi, ri]
