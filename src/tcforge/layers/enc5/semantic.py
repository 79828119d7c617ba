"""enc5 as a plain float32 network (no bit tricks, no activation quantisation), in numpy and in PyTorch, and the
distance of the bit-exact reference from it.

Same weights (e4m3 and f16 decoded to float32), same token gathering (window + halo, `Assumptions`), the layer's own
literal f32 constants; the cubic exponent becomes exp2(32·(c1·m − m³)), the softmax a true softmax. `compare(...)`
reports the PSNR of the surface and max |Δ| of the arena between `reference(...)` and this model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.assumptions import Assumptions
from tcforge.layers.enc5.descriptor import launch_geometry
from tcforge.layers.enc5.inputs import Inputs
from tcforge.layers.enc5.layout import HIDDEN_CHUNKS, N_HEADS
from tcforge.layers.enc5.reference import Result, row_offsets
from tcforge.layers.enc5.weights import WeightImage
from tcforge.numerics import e4m3_to_f16, f16_to_f32

# the kernel's literal f32 constants (before their run-time conversion to f16)
SCALE = 0.017186790704727173
CLAMP = 0.55615234375
CUBIC = 0.92724609375
ACT_A = 0.4121621549129486
ACT_B = 0.0810810774564743
EPS = 2.0**-13


def _f16(bits: np.ndarray) -> np.ndarray:
    return f16_to_f32(np.asarray(bits, dtype=np.uint16))


def _e4m3(codes: np.ndarray) -> np.ndarray:
    return f16_to_f32(e4m3_to_f16(np.asarray(codes, dtype=np.uint8)))


@dataclass(frozen=True)
class FloatWeights:
    """All parameters of enc5 as float32 arrays in logical order (decoded from a WeightImage)."""

    g0: np.ndarray
    q: np.ndarray
    v: np.ndarray
    score_bias: np.ndarray
    wo: np.ndarray
    proj_bias: np.ndarray
    g2: np.ndarray
    fc1: np.ndarray
    fc1_bias: np.ndarray
    fc2: np.ndarray
    out_bias: np.ndarray
    head: np.ndarray
    head_bias: np.ndarray

    @classmethod
    def from_image(cls, w: WeightImage) -> FloatWeights:
        """Decode every part of a weight image to float32."""
        return cls(
            g0=_f16(w.vector("prologue_gain")),
            q=np.stack([_e4m3(w.q(h)) for h in range(N_HEADS)]),
            v=np.stack([_e4m3(w.v(h)) for h in range(N_HEADS)]),
            score_bias=np.stack([_f16(w.score_bias(h)) for h in range(N_HEADS)]),
            wo=np.stack([_e4m3(w.wo(h)) for h in range(N_HEADS)]),
            proj_bias=_f16(w.vector("proj_bias")),
            g2=_f16(w.vector("mlp_gain")),
            fc1=np.stack([_e4m3(w.fc1(i)) for i in range(HIDDEN_CHUNKS)]),
            fc1_bias=np.stack([_f16(w.fc1_bias(i)) for i in range(HIDDEN_CHUNKS)]),
            fc2=np.stack([_e4m3(w.fc2(i)) for i in range(HIDDEN_CHUNKS)]),
            out_bias=_f16(w.vector("mlp_out_bias")),
            head=_e4m3(w.head_out()),
            head_bias=_f16(w.vector("head_out_bias")),
        )


class _Numpy:
    """The handful of array operations the forward pass needs, numpy flavour."""

    @staticmethod
    def asarray(x: Any) -> Any:
        return np.asarray(x, dtype=np.float32)

    clip = staticmethod(np.clip)
    sqrt = staticmethod(np.sqrt)
    exp2 = staticmethod(np.exp2)
    abs = staticmethod(np.abs)

    @staticmethod
    def sum(x: Any, axis: int) -> Any:
        return x.sum(axis=axis, keepdims=True)

    @staticmethod
    def max(x: Any, axis: int) -> Any:
        return x.max(axis=axis, keepdims=True)

    @staticmethod
    def t(x: Any) -> Any:
        return np.swapaxes(x, -1, -2)


class _Torch:
    """The same operations in PyTorch (imported lazily)."""

    def __init__(self, device: str = "cpu") -> None:
        import torch

        self.torch, self.device = torch, device

    def asarray(self, x: Any) -> Any:
        return self.torch.as_tensor(np.asarray(x, dtype=np.float32), device=self.device)

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        return self.torch.clamp(x, lo, hi)

    def sqrt(self, x: Any) -> Any:
        return self.torch.sqrt(x)

    def exp2(self, x: Any) -> Any:
        return self.torch.exp2(x)

    def abs(self, x: Any) -> Any:
        return self.torch.abs(x)

    def sum(self, x: Any, axis: int) -> Any:
        return x.sum(dim=axis, keepdim=True)

    def max(self, x: Any, axis: int) -> Any:
        return x.amax(dim=axis, keepdim=True)

    def t(self, x: Any) -> Any:
        return x.transpose(-1, -2)


def _forward(xp: Any, fw: FloatWeights, x: Any, asm: Assumptions) -> tuple[Any, Any]:
    """The network on gathered windows x (nb, 96, 160) -> (out (nb, 64, 160), head logits (nb, 64, 16))."""
    p = {k: xp.asarray(getattr(fw, k)) for k in fw.__dataclass_fields__}

    def rms(v: Any, g: Any) -> Any:
        return v / xp.sqrt(xp.sum(v * v, -1) + EPS) * g

    if asm.prologue_norm == "rms":
        xn = rms(x, p["g0"])
    elif asm.prologue_norm == "gain_only":
        xn = x * p["g0"]
    else:
        xn = x
    xh = xn[:, None]  # (nb, 1, 96, 160)
    q = xh @ p["q"]  # (nb, 8, 96, 32)
    v = xh @ p["v"]
    s = q[:, :, :64] @ xp.t(q) + p["score_bias"]  # (nb, 8, 64, 96)
    m = xp.clip(s * SCALE, -CLAMP, CLAMP)
    logit = 32.0 * (CUBIC * m - m * m * m)
    e = xp.exp2(logit - xp.max(logit, -1))
    prob = e / xp.sum(e, -1)
    o = prob @ v  # (nb, 8, 64, 32)
    resid = x[:, :64] if asm.residual == "raw_input" else xn[:, :64]
    d20 = resid + p["proj_bias"] + (o @ p["wo"]).sum(1)  # Σ over heads
    n2 = rms(d20, p["g2"])
    hid = n2[:, None] @ p["fc1"] + p["fc1_bias"][:, None, :]  # (nb, 20, 64, 32)
    y = xp.clip(hid, -2.0, 2.0)
    act = hid * (0.5 + y * (ACT_A - ACT_B * xp.abs(y)))
    resid2 = d20 if asm.e21_residual == "d20" else n2
    out = resid2 + p["out_bias"] + (act @ p["fc2"]).sum(1)
    head = out @ p["head"] + p["head_bias"]
    return out, head


def _gather(inputs: Inputs, asm: Assumptions, wins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    geo = launch_geometry(inputs.ex, inputs.ey, inputs.ox, inputs.oy, asm.grid)
    rows = row_offsets(asm.halo_order)
    x0 = 8 * (wins % geo.grid[0]) - inputs.ox
    y0 = 8 * (wins // geo.grid[0]) - inputs.oy
    xs, ys = x0[:, None] + rows[:, 0], y0[:, None] + rows[:, 1]
    inside = (xs >= 0) & (xs < inputs.ex) & (ys >= 0) & (ys < inputs.ey)
    feats = _e4m3(inputs.features(asm.input_record_order))
    x = feats[np.clip(ys, 0, inputs.ey - 1), np.clip(xs, 0, inputs.ex - 1)]
    if asm.out_of_frame == "zero":
        x = np.where(inside[..., None], x, np.float32(0))
    return x, xs[:, :64], ys[:, :64]


@dataclass
class SemanticResult:
    """The float model's outputs: per-token output features (ey, ex, 160) and the surface (ey, ex, 4), NaN where
    unwritten."""

    features: np.ndarray
    surface: np.ndarray


def _assemble(inputs: Inputs, asm: Assumptions, out: np.ndarray, head: np.ndarray, xs: np.ndarray,
              ys: np.ndarray) -> SemanticResult:
    ex, ey = inputs.ex, inputs.ey
    feats = np.full((ey, ex, out.shape[-1]), np.nan, np.float32)
    surf = np.full((ey, ex, 4), np.nan, np.float32)
    logits = head[..., :10] if asm.e61_values == "first10" else head[..., :9]
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w = (w / w.sum(-1, keepdims=True))[..., :9]
    dy, dx = np.divmod(np.arange(9), 3)
    dx, dy = dx - 1, dy - 1
    if asm.e61_tap_clamp == "center":
        cx = np.minimum(np.maximum(xs, 1), ex - 2)[..., None] + dx
        cy = np.minimum(np.maximum(ys, 1), ey - 2)[..., None] + dy
    else:
        cx = np.minimum(np.maximum(xs[..., None] + dx, 1), ex - 2)
        cy = np.minimum(np.maximum(ys[..., None] + dy, 1), ey - 2)
    tex = _f16(inputs.texture)
    ok_t = (cx >= 0) & (cx < ex) & (cy >= 0) & (cy < ey)
    taps = np.where(ok_t[..., None], tex[np.clip(cy, 0, ey - 1), np.clip(cx, 0, ex - 1)], 0)
    rgba = (w[..., None] * taps).sum(-2)
    rgba[..., 3] = 0
    ok = (xs >= 0) & (xs < ex) & (ys >= 0) & (ys < ey)
    bi, ri = np.nonzero(ok)
    feats[ys[bi, ri], xs[bi, ri]] = out[bi, ri]
    surf[ys[bi, ri], xs[bi, ri]] = rgba[bi, ri]
    return SemanticResult(feats, surf)


def semantic(weights: WeightImage, inputs: Inputs, *, assumptions: Assumptions | None = None,
             backend: str = "numpy", device: str = "cpu") -> SemanticResult:
    """Run the float32 model of enc5 (backend "numpy", or "torch" if PyTorch is installed)."""
    asm = assumptions or Assumptions()
    if not isinstance(weights, WeightImage) or not isinstance(inputs, Inputs):
        raise TcforgeError("semantic: expected a WeightImage and an Inputs")
    geo = launch_geometry(inputs.ex, inputs.ey, inputs.ox, inputs.oy, asm.grid)
    wins = np.arange(geo.windows)
    x, xs, ys = _gather(inputs, asm, wins)
    fw = FloatWeights.from_image(weights)
    if backend == "numpy":
        out, head = _forward(_Numpy, fw, x, asm)
    elif backend == "torch":
        try:
            xp = _Torch(device)
        except ImportError as exc:
            raise TcforgeError("semantic backend 'torch' needs PyTorch (pip install torch)") from exc
        with xp.torch.no_grad():
            o_t, h_t = _forward(xp, fw, xp.asarray(x), asm)
        out, head = o_t.cpu().numpy(), h_t.cpu().numpy()
    else:
        raise TcforgeError(f"semantic backend must be 'numpy' or 'torch', got {backend!r}")
    return _assemble(inputs, asm, np.asarray(out), np.asarray(head), xs, ys)


def torch_model(weights: WeightImage, assumptions: Assumptions | None = None, device: str = "cpu") -> Any:
    """A `torch.nn.Module` whose forward(x (nb, 96, 160) float32 gathered windows) -> (out, head logits)."""
    import torch

    asm = assumptions or Assumptions()
    fw = FloatWeights.from_image(weights)
    xp = _Torch(device)

    class Enc5Float(torch.nn.Module):
        """enc5 in fp32: attention (8 heads, position-only keys), RMS norms, 640-wide MLP, 16-output head."""

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """Gathered windows (nb, 96, 160) -> (outputs (nb, 64, 160), head logits (nb, 64, 16))."""
            return _forward(xp, fw, x, asm)

    return Enc5Float()


@dataclass(frozen=True)
class Distance:
    """How far the bit-exact reference is from the float model."""

    surface_psnr_db: float
    surface_max_abs: float
    arena_max_abs: float
    arena_rms: float
    arena_ref_rms: float


def _covered(ref: Result, ex: int, ey: int) -> np.ndarray:
    """Tokens inside the windows the reference computed (its `windows` may be a subset)."""
    mask = np.zeros((ey, ex), bool)
    gx = ref.geometry.grid[0]
    for w in ref.windows:
        x0 = 8 * (w % gx) - ref.origin[0]
        y0 = 8 * (w // gx) - ref.origin[1]
        mask[max(y0, 0) : max(y0 + 8, 0), max(x0, 0) : max(x0 + 8, 0)] = True
    return mask


def compare(ref: Result, sem: SemanticResult, ex: int, ey: int) -> Distance:
    """PSNR (peak 1.0) of the surface's RGB and max/rms |Δ| of the arena (decoded e4m3 vs float features)."""
    from tcforge.layers.enc5.inputs import arena_to_features

    ref_feat = _e4m3(arena_to_features(ref.arena, ex, ey, ref.assumptions.arena_record_order))
    written = np.isfinite(sem.features[..., 0]) & _covered(ref, ex, ey)
    d = (ref_feat - sem.features)[written]
    rs = _f16(ref.surface)[..., :3][written]
    ss = sem.surface[..., :3][written]
    mse = float(np.mean((rs - ss) ** 2)) if rs.size else 0.0
    psnr = float("inf") if mse == 0 else float(10 * np.log10(1.0 / mse))
    return Distance(psnr, float(np.max(np.abs(rs - ss), initial=0.0)), float(np.max(np.abs(d), initial=0.0)),
                    float(np.sqrt(np.mean(d**2))) if d.size else 0.0,
                    float(np.sqrt(np.mean(ref_feat[written] ** 2))) if d.size else 0.0)
