"""Input checks for `matmul`, run before anything imports torch or CUDA: every bad input becomes a TcforgeError.

Works on anything tensor-like (shape, dtype, device, stride(), data_ptr(), element_size()), so it is testable without
a GPU. The result is a `Plan`: sizes, kinds, B's layout and which operands must be copied to meet TMA's alignment.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcforge.errors import TcforgeError, UnsupportedError
from tcforge.gemm.config import IN_BYTES, SUPPORTED
from tcforge.gemm.variants import Variant, resolve_variant

_IN_NAMES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "e4m3"}
_OUT_NAMES = {"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16"}
MAX_DIM = 2**31 - 1


def dtype_name(dtype: object) -> str:
    """'torch.float16' -> 'float16' (also accepts plain strings)."""
    return str(dtype).rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Plan:
    """What `matmul` will run: sizes, type kinds, B layout, copies needed for alignment, variant and device."""

    m: int
    n: int
    k: int
    in_kind: str
    out_kind: str
    b_kmajor: bool
    copy_a: bool  # a's row stride or base is not 16-byte aligned (or K must be padded): a padded copy is made
    copy_b: bool
    k_padded: int
    variant: Variant
    device_index: int
    auto: bool = False  # the caller asked for variant="auto" (the plan refines the choice by shape: auto.py)
    a_kmajor: bool = True  # a row-major (K contiguous); False: column-major a, the kernel's MN-major A (16-bit)


def _is_tensor(x: object) -> bool:
    return all(hasattr(x, attr) for attr in ("shape", "dtype", "device", "stride", "data_ptr"))


def _device(t: object, name: str) -> tuple[str, int]:
    dev = t.device  # type: ignore[attr-defined]
    kind = getattr(dev, "type", str(dev).split(":")[0])
    index = getattr(dev, "index", None)
    if index is None and ":" in str(dev):
        index = int(str(dev).split(":")[1])
    return kind, int(index or 0)


def _in_kind(t: object, name: str) -> str:
    dn = dtype_name(t.dtype)  # type: ignore[attr-defined]
    if dn not in _IN_NAMES:
        raise UnsupportedError(
            f"{name} has dtype {dn}; supported inputs are float16, bfloat16 and float8_e4m3fn "
            f"(cast with {name}.to(torch.float16) or torch.bfloat16)"
        )
    return _IN_NAMES[dn]


def plan_matmul(
    a: object,
    b: object,
    *,
    out_dtype: object = None,
    scale_a: object = None,
    scale_b: object = None,
    variant: object = "auto",
    out: object = None,
) -> Plan:
    """Check every argument of `matmul` and decide how it will run; raises TcforgeError saying what to change.
    `out` (C's destination): its dtype is C's unless out_dtype names one (`check_out`)."""
    for name, t in (("a", a), ("b", b)):
        if not _is_tensor(t):
            raise TcforgeError(f"{name} must be a torch tensor on a CUDA device, got {type(t).__name__}")
        if len(t.shape) != 2:  # type: ignore[attr-defined]
            raise TcforgeError(f"{name} must be 2-D, got shape {tuple(t.shape)}")  # type: ignore[attr-defined]
    m, k = (int(x) for x in a.shape)  # type: ignore[attr-defined]
    kb, n = (int(x) for x in b.shape)  # type: ignore[attr-defined]
    if k != kb:
        raise TcforgeError(f"shapes do not chain: a is ({m}, {k}), b is ({kb}, {n}); a.shape[1] must equal b.shape[0]")
    for dim, val in (("M", m), ("N", n), ("K", k)):
        if not 1 <= val <= MAX_DIM:
            raise TcforgeError(f"{dim} = {val}: every dimension must be in [1, 2^31 - 1]")
    ka, kb_ = _in_kind(a, "a"), _in_kind(b, "b")
    if ka != kb_:
        raise UnsupportedError(f"a and b must have the same dtype, got {dtype_name(a.dtype)} and {dtype_name(b.dtype)}")  # type: ignore[attr-defined]
    in_kind = ka
    if out is not None and not _is_tensor(out):
        raise TcforgeError(f"out must be a torch tensor on a CUDA device, got {type(out).__name__}")
    named = "out_dtype"
    if out is not None and out_dtype is None:
        out_dtype, named = out.dtype, "out's dtype"  # type: ignore[attr-defined]
    if out_dtype is None:
        out_kind = SUPPORTED[in_kind][0]
    else:
        dn = dtype_name(out_dtype)
        out_kind = _OUT_NAMES.get(dn, dn)
        if out_kind not in SUPPORTED[in_kind]:
            allowed = ", ".join(SUPPORTED[in_kind])
            raise UnsupportedError(f"{named} {dn} is not supported for {in_kind} inputs; choose one of {allowed}")
    (dev_a, idx_a), (dev_b, idx_b) = _device(a, "a"), _device(b, "b")
    for name, dev in (("a", dev_a), ("b", dev_b)):
        if dev != "cuda":
            raise TcforgeError(f"{name} is on {dev}; move it to the GPU with {name}.cuda()")
    if idx_a != idx_b:
        raise TcforgeError(f"a is on cuda:{idx_a} and b on cuda:{idx_b}; put both on the same device")
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s is None:
            continue
        if in_kind != "e4m3":
            raise TcforgeError(f"{name} applies to float8_e4m3fn inputs only; drop it for {in_kind}")
        if not _is_tensor(s):
            raise TcforgeError(f"{name} must be a float32 CUDA tensor with one element (as torch._scaled_mm takes)")
        if dtype_name(s.dtype) != "float32" or _numel(s) != 1:  # type: ignore[attr-defined]
            got = f"{dtype_name(s.dtype)} of shape {tuple(s.shape)}"  # type: ignore[attr-defined]
            raise TcforgeError(f"{name} must be float32 with one element, got {got}")
        if _device(s, name) != ("cuda", idx_a):
            raise TcforgeError(f"{name} must be on cuda:{idx_a}, like a and b")
    if out is not None:
        check_out(out, m, n, out_kind, idx_a)
    v = resolve_variant(variant, m)

    ib = IN_BYTES[in_kind]
    align = 16 // ib  # elements per 16 bytes
    sa0, sa1 = (int(x) for x in a.stride())  # type: ignore[attr-defined]
    a_kmajor = sa1 == 1 or k == 1
    if not a_kmajor:
        if sa0 != 1 and m > 1:
            raise TcforgeError(
                f"a must be row-major or column-major (one stride equal to 1), got strides {(sa0, sa1)}; "
                "call a.contiguous()"
            )
        if in_kind == "e4m3":
            raise TcforgeError(
                f"float8 a must be row-major (a.stride(1) == 1: fp8 wgmma reads A K-major), got strides "
                f"{(sa0, sa1)}; call a.contiguous()"
            )
        if v.config.swap_ab:  # (a swapped cluster along N multicasts b's rows, not a's)
            raise TcforgeError(
                f"variant {v.name!r} computes C^T = B^T A^T and reads a as a K-major operand: it needs a row-major "
                f"a, got strides {(sa0, sa1)}; call a.contiguous() or use variant='auto'"
            )
        if v.config.cluster_n:
            raise TcforgeError(
                f"variant {v.name!r} multicasts row slices of a K-major a across its cluster: it needs a row-major "
                f"a, got strides {(sa0, sa1)}; call a.contiguous() or use variant='auto'"
            )
    sb0, sb1 = (int(x) for x in b.stride())  # type: ignore[attr-defined]
    row_major_b = sb1 == 1 or n == 1
    col_major_b = sb0 == 1 or k == 1
    if in_kind == "e4m3":
        if not col_major_b:
            raise TcforgeError(
                f"float8 b must be column-major (b.stride(0) == 1, as torch._scaled_mm takes), got strides "
                f"{(sb0, sb1)}; pass b.t().contiguous().t()"
            )
        b_kmajor = True
    elif col_major_b and not row_major_b:
        b_kmajor = True
    elif row_major_b:
        b_kmajor = False
    else:
        raise TcforgeError(
            f"b must be row-major or column-major (one stride equal to 1), got strides {(sb0, sb1)}; "
            "call b.contiguous()"
        )
    k_padded = -(-k // align) * align
    # a's leading stride: between rows (row-major) or between columns (column-major: the (K, M) storage's rows)
    lda = (sa0 if m > 1 else k) if a_kmajor else sa1
    # (a leading stride below the row length — rows that overlap, as in a broadcast view — is copied too)
    a_ok = k_padded == k and lda % align == 0 and lda >= (k if a_kmajor else m)
    a_ok = a_ok and a.data_ptr() % 16 == 0  # type: ignore[attr-defined]
    ldb = (sb1 if n > 1 else k) if b_kmajor else (sb0 if k > 1 else n)
    b_ok = k_padded == k and ldb % align == 0 and ldb >= (k if b_kmajor else n)
    b_ok = b_ok and b.data_ptr() % 16 == 0  # type: ignore[attr-defined]
    return Plan(m, n, k, in_kind, out_kind, b_kmajor, not a_ok, not b_ok, k_padded, v, idx_a, auto=variant == "auto",
                a_kmajor=a_kmajor)


def check_out(out: object, m: int, n: int, out_kind: str, device: int) -> None:
    """`out` (a tensor) must be a contiguous (m, n) tensor of C's dtype on the operands' device (TcforgeError else)."""
    shape = tuple(int(x) for x in out.shape)  # type: ignore[attr-defined]
    if shape != (m, n):
        raise TcforgeError(f"out has shape {shape}; C is ({m}, {n})")
    dn = dtype_name(out.dtype)  # type: ignore[attr-defined]
    if _OUT_NAMES.get(dn, dn) != out_kind:
        raise TcforgeError(f"out has dtype {dn}; C is {out_kind} (out_dtype, or out's dtype where out_dtype is None)")
    if _device(out, "out") != ("cuda", device):
        raise TcforgeError(f"out must be on cuda:{device}, like a and b")
    s0, s1 = (int(x) for x in out.stride())  # type: ignore[attr-defined]
    if (m > 1 and s0 != n) or (n > 1 and s1 != 1):
        raise TcforgeError(f"out must be contiguous (strides ({n}, 1)), got {(s0, s1)}")


def _numel(t: object) -> int:
    n = 1
    for d in t.shape:  # type: ignore[attr-defined]
        n *= int(d)
    return n
