"""Shared by the GEMM tests: tensor-like fakes for planning without torch or a GPU (shape, dtype, device, stride(),
data_ptr(), t()), and the GPU tests' dtype / layout combos, poisoning launch options and checks."""

from __future__ import annotations

from dataclasses import dataclass

from tcforge.gemm.build import b_layouts
from tcforge.gemm.config import SUPPORTED
from tcforge.gemm.plan import LaunchOptions

COMBOS = [(i, o, bk) for i, outs in SUPPORTED.items() for o in outs for bk in b_layouts(i)]
# every launch's outputs are filled with NaN first, so a value the kernel never writes shows
POISON = LaunchOptions(poison_output=True)


@dataclass
class FakeDevice:
    type: str = "cuda"
    index: int = 0

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


@dataclass
class FakeTensor:
    shape: tuple[int, ...]
    dtype: str = "torch.float16"
    device: FakeDevice = None  # type: ignore[assignment]
    strides: tuple[int, ...] | None = None
    ptr: int = 1 << 20

    def __post_init__(self) -> None:
        if self.device is None:
            self.device = FakeDevice()
        if self.strides is None:  # contiguous
            s, acc = [], 1
            for d in reversed(self.shape):
                s.append(acc)
                acc *= max(1, d)
            self.strides = tuple(reversed(s))

    def stride(self) -> tuple[int, ...]:
        return self.strides  # type: ignore[return-value]

    def data_ptr(self) -> int:
        return self.ptr

    def t(self) -> FakeTensor:
        return FakeTensor(tuple(reversed(self.shape)), self.dtype, self.device, tuple(reversed(self.strides)), self.ptr)


def col_major(k: int, n: int, dtype: str = "torch.float8_e4m3fn") -> FakeTensor:
    """A (K, N) tensor stored column-major (b.t() contiguous), as torch._scaled_mm wants b."""
    return FakeTensor((n, k), dtype).t()


F16, BF16, F8, F32 = "torch.float16", "torch.bfloat16", "torch.float8_e4m3fn", "torch.float32"


def check(
    variant: str,
    combo: tuple,
    m: int,
    n: int,
    k: int,
    seed: int,
    splits: int | None = None,
    streamk: tuple[int, int] | None = None,
    split_mode: str = "auto",
) -> None:
    from tcforge.gemm.check import check_one

    r = check_one(variant, *combo, m, n, k, seed=seed, splits=splits, streamk=streamk, split_mode=split_mode)
    assert r.ok, r.as_dict()
    assert not r.nan
    if r.cublas_rel_err == r.cublas_rel_err:  # cuBLAS ran: we are within 4x of its error (or the dtype bound)
        assert r.rel_err <= max(4 * r.cublas_rel_err, r.tol)


def pair_id(p: object) -> str:
    if isinstance(p, tuple):
        return f"{p[0]}-{p[1]}-{'K' if p[2] else 'N'}"
    return str(p)


def unsplit(variants: tuple[str, ...], shape: tuple, combo: tuple, seed: int) -> list:
    """The same fresh random product run by each variant without split-K (so each element's K order is the tile's
    own), synchronised: for the bit-identity tests across tiles."""
    from tcforge.gemm.check import make_inputs, unsplit_outputs

    a, b, sa, sb = make_inputs(*shape, combo[0], combo[2], seed)
    return unsplit_outputs(variants, a, b, sa, sb, combo[1], options=POISON)  # (variant specs too: experiment builds)


def assert_same_bits(variants: tuple[str, ...], shape: tuple, combo: tuple, seed: int) -> None:
    """The variants' unsplit outputs of one fresh product: no NaN (outputs are poisoned first), every one bit-identical
    to the first."""
    import torch

    outs = unsplit(variants, shape, combo, seed)
    assert not torch.isnan(outs[0]).any()
    assert all(torch.equal(outs[0], o) for o in outs[1:])
