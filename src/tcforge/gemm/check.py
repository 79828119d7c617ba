"""GPU correctness checks shared by the pytest GPU tests and tools/gemm_device_check.py (torch imported inside).

Fresh random inputs every call (never zeros), outputs poisoned with NaN, a float64 reference computed from the exact
(quantised) inputs, the relative Frobenius error against a per-dtype bound, and cuBLAS's error on the same data.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from typing import Any

from tcforge.gemm.api import torch_dtype
from tcforge.gemm.plan import LaunchOptions

# bound on ||C - ref|| / ||ref||: output rounding dominates (fp32 accumulation error is ~1e-6 at these K)
TOLERANCE = {"fp32": 2e-4, "fp16": 2e-3, "bf16": 1e-2}
# Hopper's fp8 wgmma accumulates with fewer mantissa bits than fp32 (no promotion here, unlike cuBLAS): the error
# grows with K; measured 2.1e-3 at K = 4096 and 7.1e-3 at K = 65536 (cuBLAS: 1.7e-3 / 1.3e-4 .. 1.7e-3)
FP8_TOLERANCE_SHORT_K = 3e-3  # K <= 8192
FP8_TOLERANCE_LONG_K = 1e-2


@dataclass
class CheckResult:
    """One checked call: what ran, its error, cuBLAS's error on the same inputs, and whether it passed."""

    variant: str
    in_kind: str
    out_kind: str
    b_kmajor: bool
    m: int
    n: int
    k: int
    rel_err: float
    cublas_rel_err: float
    nan: bool
    tol: float
    ok: bool
    error: str = ""
    a_kmajor: bool = True

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def make_inputs(
    m: int, n: int, k: int, in_kind: str, b_kmajor: bool, seed: int, a_kmajor: bool = True, b_pad: int = 0,
    a_pad: int = 0,
) -> tuple[Any, Any, Any, Any]:
    """Random a (M, K) and b (K, N) on the GPU (b column-major when b_kmajor; a column-major, a transposed view,
    when not a_kmajor), plus fp8 scales (else None). `b_pad` > 0 leaves that many unused elements after each of
    b's rows (columns when column-major), `a_pad` after a's: strided views, for probing how the leading
    dimension's stride maps onto the memory channels and how its alignment meets TMA."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((m, k), generator=g, device="cuda", dtype=torch.float32)
    bt = torch.randn((n, k), generator=g, device="cuda", dtype=torch.float32)
    if in_kind == "e4m3":
        a = (a * 2).to(torch.float8_e4m3fn)
        bt = (bt * 2).to(torch.float8_e4m3fn)
        sa = torch.rand((), generator=g, device="cuda") + 0.5
        sb = torch.rand((), generator=g, device="cuda") + 0.5
        return _padded(a, a_pad), _padded(bt, b_pad).t(), sa.float(), sb.float()
    dt = torch.float16 if in_kind == "fp16" else torch.bfloat16
    a = _padded(a.to(dt), a_pad) if a_kmajor else _padded(a.t().contiguous().to(dt), a_pad).t()
    b = _padded(bt.to(dt), b_pad).t() if b_kmajor else _padded(bt.t().contiguous().to(dt), b_pad)
    return a, b, None, None


def _padded(x: Any, pad: int) -> Any:
    """The same values as the 2-D `x`, as a view into rows `pad` elements longer (x itself when pad is 0)."""
    if pad <= 0:
        return x
    import torch

    full = torch.empty((x.shape[0], x.shape[1] + pad), dtype=x.dtype, device=x.device)
    full.view(torch.uint8).fill_(0x7F)  # the padding is never read: NaN / huge in every dtype, so a stray read shows
    full[:, : x.shape[1]] = x
    return full[:, : x.shape[1]]


def reference(a: Any, b: Any, sa: Any, sb: Any) -> Any:
    """float64 product of the exact input values (scales applied)."""
    ref = a.double() @ b.double()
    if sa is not None:
        ref = ref * (sa.double() * sb.double())
    return ref


def cublas(a: Any, b: Any, sa: Any, sb: Any, out_kind: str, fast_accum: bool = False) -> Any:
    """The same product through cuBLAS: torch.mm (out_dtype for fp32 out) or torch._scaled_mm. For fp8,
    `fast_accum=False` (torch's default) has cuBLAS promote partial sums to fp32; True accumulates in the tensor
    core's own fp8 accumulator throughout, as tcforge's fp8 kernels do (the like-for-like speed comparison)."""
    import torch

    od = torch_dtype(out_kind)
    if sa is not None:
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=od, use_fast_accum=fast_accum)
    if od == a.dtype:
        return torch.mm(a, b)
    try:
        return torch.mm(a, b, out_dtype=od)
    except TypeError:
        return torch.mm(a.float(), b.float())


def fast_accum_peer(variant: str, in_kind: str) -> bool:
    """Whether cuBLAS's like-for-like output for a launch of `variant` is its use_fast_accum=True one: fp8 launches
    that do not promote accumulate in the tensor core as that mode does (bit-identical unsplit); the promoting
    variants reproduce the default (promoted) mode, and 16-bit inputs have one mode. An experiment spec
    (`promote@cpa=1`) promotes as its variant does unless it overrides `promote`."""
    from tcforge.gemm.variants import VARIANTS, parse_spec

    name, overrides = parse_spec(variant) if "@" in variant else (variant, {})
    promote = overrides.get("promote", name in VARIANTS and VARIANTS[name].config.promote)
    return in_kind == "e4m3" and not promote


def poisoned_result(prepared: Any) -> Any:
    """One launch of a prepared GEMM (api.prepare_plan) with its output filled with NaN first, returned once it is
    done: any value the kernel did not write stays NaN. The benches' check before timing."""
    import torch

    prepared.poison_outputs()
    prepared()
    torch.cuda.synchronize()
    return prepared.result()


def unsplit_outputs(specs: list[str] | tuple[str, ...], a: Any, b: Any, scale_a: Any, scale_b: Any,
                    out_kind: str, options: LaunchOptions | None = None) -> list[Any]:
    """One product run by each variant spec without split-K (so each element's K order is the tile's own), done
    when returned: for bit-identity checks across tiles and experiment builds (outputs poisoned first where the
    options say so)."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.variants import plan_spec

    od = torch_dtype(out_kind)
    outs = [api.run_plan(plan_spec(a, b, spec, out_dtype=od, scale_a=scale_a, scale_b=scale_b), a, b, scale_a,
                         scale_b, splits=1, options=options) for spec in specs]
    torch.cuda.synchronize()
    return outs


def rel_err(x: Any, ref: Any) -> float:
    """||x - ref|| / ||ref|| in float64 (inf when x holds NaN)."""
    import torch

    xd = x.double()
    if torch.isnan(xd).any():
        return float("inf")
    den = ref.norm().item()
    return (xd - ref).norm().item() / (den if den else 1.0)


def check_one(
    variant: str,
    in_kind: str,
    out_kind: str,
    b_kmajor: bool,
    m: int,
    n: int,
    k: int,
    seed: int = 0,
    splits: int | None = None,
    streamk: tuple[int, int] | None = None,
    with_cublas: bool = True,
    split_mode: str = "auto",
    a_kmajor: bool = True,
) -> CheckResult:
    """Run one variant on fresh data and compare with float64 and cuBLAS (`with_cublas=False`: not cuBLAS — under
    compute-sanitizer, whose racecheck reports hazards inside some cuBLAS kernels; `split_mode`: how a split launch
    reduces, api.prepare_plan)."""
    import torch

    from tcforge.gemm import api
    from tcforge.gemm.validate import plan_matmul

    a, b, sa, sb = make_inputs(m, n, k, in_kind, b_kmajor, seed, a_kmajor)
    od = torch_dtype(out_kind)
    tol = TOLERANCE[out_kind]
    if in_kind == "e4m3":
        tol = max(tol, FP8_TOLERANCE_SHORT_K if k <= 8192 else FP8_TOLERANCE_LONG_K)
    try:
        plan = plan_matmul(a, b, out_dtype=od, scale_a=sa, scale_b=sb, variant=variant)
        out = api.run_plan(plan, a, b, sa, sb, splits=splits, streamk=streamk, split_mode=split_mode,
                           options=LaunchOptions(poison_output=True))
        torch.cuda.synchronize()
        ref = reference(a, b, sa, sb)
        err = rel_err(out, ref)
        nan = bool(torch.isnan(out).any().item())
        cb = float("nan")
        if with_cublas:
            with contextlib.suppress(Exception):  # cuBLAS refuses some shapes (fp8 needs multiples of 16)
                cb = rel_err(cublas(a, b, sa, sb, out_kind), ref)
        ok = (not nan) and err <= tol and tuple(out.shape) == (m, n) and out.dtype == od
        return CheckResult(variant, in_kind, out_kind, b_kmajor, m, n, k, err, cb, nan, tol, ok, a_kmajor=a_kmajor)
    except Exception as exc:  # reported, not raised: one failing variant must not hide the others
        return CheckResult(
            variant,
            in_kind,
            out_kind,
            b_kmajor,
            m,
            n,
            k,
            float("inf"),
            float("nan"),
            False,
            tol,
            False,
            f"{type(exc).__name__}: {exc}"[:500],
            a_kmajor,
        )


def gemm_chain(variant: str, m: int, k: int, steps: int, fp8: bool, pdl: bool, sync: bool) -> list:
    """`steps` GEMMs back to back, each taking the one before's output as its a (16-bit: fp16 -> fp16 directly;
    fp8: e4m3 -> bf16, then a torch cast to e4m3 between the GEMMs). Without `sync` the whole chain is queued
    behind a ~30 ms GPU sleep, so the kernels run back to back (with `pdl`, each may start before the one it reads
    has finished); with `sync` every step is finished before the next is launched. Fresh outputs land in blocks the
    caching allocator last held NaN in, so a read before the previous kernel's writes shows up as NaN."""
    import torch

    from tcforge.gemm import api

    g = torch.Generator(device="cuda").manual_seed(m * 7 + k)
    dt = torch.float8_e4m3fn if fp8 else torch.float16
    a = torch.randn((m, k), generator=g, device="cuda").to(dt)
    bs = [(torch.randn((k, k), generator=g, device="cuda") / k**0.5) for _ in range(steps)]
    bs = [b.to(dt).t().contiguous().t() if fp8 else b.to(dt) for b in bs]  # fp8: b column-major
    sc = torch.ones((), device="cuda") if fp8 else None
    od = torch.bfloat16 if fp8 else dt
    options = LaunchOptions(pdl=pdl)
    api.matmul(a, bs[0], out_dtype=od, scale_a=sc, scale_b=sc, variant=variant)  # compiled and loaded before timing
    junk = [torch.full((m, k), float("nan"), device="cuda", dtype=od) for _ in range(8)]
    del junk
    torch.cuda.synchronize()
    outs = []
    x = a
    if not sync:
        torch.cuda._sleep(50_000_000)
    for b in bs:
        c = api.matmul(x, b, out_dtype=od, scale_a=sc, scale_b=sc, variant=variant, options=options)
        outs.append(c)
        x = c.to(torch.float8_e4m3fn) if fp8 else c
        if sync:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return outs
