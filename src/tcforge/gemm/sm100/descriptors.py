"""Encoders and decoders for the two tcgen05.mma descriptors, with the PTX ISA's bit fields named one by one.

The CUDA kernel builds the same words with its own constexpr helpers; the compile test passes these values to nvcc so a
`static_assert` checks that the two independent encoders agree.
"""

from __future__ import annotations

from tcforge.errors import TcforgeError

# ---- instruction descriptor, .kind::f16 (PTX ISA table "Instruction descriptor format for .kind::tf32, .kind::f16...")
D_FORMATS = {"f16": 0, "f32": 1}  # bits 4-5, dtype (matrix D)
AB_TYPES_F16_KIND = {"f16": 0, "bf16": 1}  # bits 7-9 atype, bits 10-12 btype
MAJORS = {"K": 0, "MN": 1}  # bit 15 transpose A, bit 16 transpose B: 0 = K-major, 1 = MN-major
INSTR_M_VALUES = (64, 128, 256)  # M of one tcgen05.mma.kind::f16 (256 only with .cta_group::2)

# (name, first bit, width) of every instruction-descriptor field, low to high
INSTR_DESC_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("sparsity_selector", 0, 2),
    ("sparse", 2, 1),
    ("saturate", 3, 1),
    ("d_format", 4, 2),
    ("reserved_6", 6, 1),
    ("a_type", 7, 3),
    ("b_type", 10, 3),
    ("negate_a", 13, 1),
    ("negate_b", 14, 1),
    ("transpose_a", 15, 1),
    ("transpose_b", 16, 1),
    ("n_shr3", 17, 6),
    ("reserved_23", 23, 1),
    ("m_shr4", 24, 5),
    ("reserved_29", 29, 1),
    ("max_shift", 30, 2),
)

# ---- shared-memory matrix descriptor (PTX ISA "Shared memory descriptor" for tcgen05)
SWIZZLES = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}  # bits 61-63
SMEM_DESC_FIXED_CONSTANT = 0b001  # bits 46-48

SMEM_DESC_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("start_addr_shr4", 0, 14),
    ("lbo_shr4", 16, 14),
    ("sbo_shr4", 32, 14),
    ("fixed_0b001", 46, 3),
    ("base_offset", 49, 3),
    ("lbo_mode", 52, 1),
    ("swizzle", 61, 3),
)


def _choice(name: str, value: str, table: dict[str, int]) -> int:
    if value not in table:
        raise TcforgeError(f"{name} must be one of {sorted(table)}, got {value!r}")
    return table[value]


def instr_desc_f16(
    *,
    d_format: str = "f32",
    a_type: str = "f16",
    b_type: str = "f16",
    a_major: str = "K",
    b_major: str = "MN",
    m: int = 256,
    n: int = 256,
    negate_a: bool = False,
    negate_b: bool = False,
) -> int:
    """The 32-bit instruction descriptor of a dense tcgen05.mma.kind::f16 (the kernel: f32 D, K-major A, N-major B)."""
    if a_type != b_type:
        raise TcforgeError(f"a_type and b_type must match for .kind::f16, got {a_type!r} and {b_type!r}")
    if m not in INSTR_M_VALUES:
        raise TcforgeError(f"m must be one of {INSTR_M_VALUES}, got {m!r}")
    if not isinstance(n, int) or n < 8 or n > 256 or n % 8:
        raise TcforgeError(f"n must be a multiple of 8 in 8..256, got {n!r}")
    value = 0
    value |= _choice("d_format", d_format, D_FORMATS) << 4
    value |= _choice("a_type", a_type, AB_TYPES_F16_KIND) << 7
    value |= _choice("b_type", b_type, AB_TYPES_F16_KIND) << 10
    value |= int(bool(negate_a)) << 13
    value |= int(bool(negate_b)) << 14
    value |= _choice("a_major", a_major, MAJORS) << 15
    value |= _choice("b_major", b_major, MAJORS) << 16
    value |= (n >> 3) << 17
    value |= (m >> 4) << 24
    return value


def _check_offset(name: str, value: int) -> None:
    if not isinstance(value, int) or value < 0 or value % 16 or value >> 4 >= 1 << 14:
        raise TcforgeError(f"{name} must be a multiple of 16 bytes below 256 KiB, got {value!r}")


def smem_desc(start_addr: int, lbo: int, sbo: int, swizzle: str = "128B", *, base_offset: int = 0) -> int:
    """The 64-bit shared-memory matrix descriptor of a tcgen05.mma operand (byte offsets; fields keep bits 4..17)."""
    _check_offset("start_addr", start_addr)
    _check_offset("lbo", lbo)
    _check_offset("sbo", sbo)
    if base_offset not in range(8):
        raise TcforgeError(f"base_offset must be 0..7, got {base_offset!r}")
    value = (start_addr >> 4) << 0
    value |= (lbo >> 4) << 16
    value |= (sbo >> 4) << 32
    value |= SMEM_DESC_FIXED_CONSTANT << 46
    value |= base_offset << 49
    value |= 0 << 52  # leading-dimension stride mode: relative byte offset
    value |= _choice("swizzle", swizzle, SWIZZLES) << 61
    return value


def _decode(value: int, fields: tuple[tuple[str, int, int], ...], bits: int) -> dict[str, int]:
    if not isinstance(value, int) or value < 0 or value >> bits:
        raise TcforgeError(f"descriptor must be an unsigned {bits}-bit integer, got {value!r}")
    return {name: (value >> lo) & ((1 << width) - 1) for name, lo, width in fields}


def decode_instr_desc(value: int) -> dict[str, int]:
    """Split a 32-bit instruction descriptor into its named fields (raw field values)."""
    return _decode(value, INSTR_DESC_FIELDS, 32)


def decode_smem_desc(value: int) -> dict[str, int]:
    """Split a 64-bit shared-memory descriptor into its named fields (raw field values)."""
    return _decode(value, SMEM_DESC_FIELDS, 64)


# ---- the kernel's operand layouts (BK = 64, 128-byte swizzle, fp16/bf16)
A_LBO = 16  # K-major swizzled: LBO unused, "assumed 1" (16 bytes)
A_SBO = 8 * 128  # 8 rows x 128 B between 8-row core-matrix groups
A_K16_STEP = 16 * 2  # one UMMA K = 16 step: +32 bytes of start address inside the swizzle row
B_SLAB_BYTES = 64 * 64 * 2  # 64 K-rows x 64 N-columns x 2 B
B_LBO = B_SLAB_BYTES  # N-major swizzled: LBO = distance between 64-element N groups (slabs)
B_SBO = 8 * 128  # 8 K-rows x 128 B
B_K16_STEP = 16 * 128  # one UMMA K = 16 step: 16 rows = +2048 bytes


def kernel_instr_desc(in_dtype: str) -> int:
    """The instruction descriptor the sm100 kernel issues: f32 accumulate, K-major A, N-major B, M = N = 256."""
    kind = {"float16": "f16", "bfloat16": "bf16"}.get(in_dtype)
    if kind is None:
        raise TcforgeError(f"in_dtype must be 'float16' or 'bfloat16', got {in_dtype!r}")
    return instr_desc_f16(d_format="f32", a_type=kind, b_type=kind, a_major="K", b_major="MN", m=256, n=256)


def kernel_a_desc(start_addr: int) -> int:
    """The A-operand descriptor the kernel builds at `start_addr` (K-major, 128-byte swizzle)."""
    return smem_desc(start_addr, A_LBO, A_SBO, "128B")


def kernel_b_desc(start_addr: int) -> int:
    """The B-operand descriptor the kernel builds at `start_addr` (N-major, 128-byte swizzle, 64-column slabs)."""
    return smem_desc(start_addr, B_LBO, B_SBO, "128B")
