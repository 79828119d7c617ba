"""The host side of the sm100 kernel: its launch contract (grid, cluster, threads, shared memory and the three TMA
maps) and `matmul_sm100`, the Python entry point, which refuses, as the kernel never ran on hardware.

The contract is everything a future Blackwell driver needs besides the driver itself: it encodes the listed tensor maps
with `cuTensorMapEncodeTiled`, loads the cubin from `compile_sm100`, sets the dynamic shared memory attribute and
launches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcforge.errors import TcforgeError, UnsupportedError

# Geometry, mirrored from gemm_sm100.cu (the compile test cross-checks the shared-memory size with a static_assert).
TILE_M = 256  # rows of C per CTA pair
TILE_N = 256  # columns of C per CTA pair (BN)
CTA_M = TILE_M // 2
CTA_N = TILE_N // 2
BK = 64
SLAB_N = 64
STORE_BOX = (32, 32)  # epilogue TMA store box (columns, rows): 32 fp32 = 128 B
THREADS = 320  # warps 0-7 epilogue, warp 8 TMA producer, warp 9 MMA issuer
CLUSTER = (2, 1, 1)
DEFAULT_STAGES = 3
STAGE_RANGE = range(2, 7)
SMEM_ALIGN_SLACK = 1024
BARRIER_BYTES = 256
SMEM_PER_SM = 228 * 1024  # Blackwell datacenter SM (B200/B300)
SMEM_RESERVED_PER_BLOCK = 1024
TMEM_COLUMNS = 512
TMEM_COLUMNS_PER_CTA = TILE_N

IN_DTYPES = {"float16": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "tcforge_sm100_gemm_f16_f32"),
             "bfloat16": ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "tcforge_sm100_gemm_bf16_f32")}
KERNEL_NAMES = tuple(name for _, name in IN_DTYPES.values())


def stage_bytes() -> int:
    """Bytes of one ring stage in one CTA: a 128x64 A box plus two 64x64 B slabs, 16-bit elements."""
    return (CTA_M * BK + BK * CTA_N) * 2


def smem_bytes(stages: int = DEFAULT_STAGES) -> int:
    """Dynamic shared memory one CTA requests: alignment slack + the ring + barriers (the epilogue reuses the ring)."""
    if stages not in STAGE_RANGE:
        raise TcforgeError(f"stages must be in {STAGE_RANGE.start}..{STAGE_RANGE.stop - 1}, got {stages!r}")
    return SMEM_ALIGN_SLACK + stages * stage_bytes() + BARRIER_BYTES


def ctas_per_sm(stages: int = DEFAULT_STAGES) -> int:
    """How many CTAs fit on one SM, limited by shared memory and by TMEM (256 of 512 columns each)."""
    by_smem = SMEM_PER_SM // (smem_bytes(stages) + SMEM_RESERVED_PER_BLOCK)
    return min(by_smem, TMEM_COLUMNS // TMEM_COLUMNS_PER_CTA)


@dataclass(frozen=True)
class TensorMapSpec:
    """Arguments of one cuTensorMapEncodeTiled call (dimensions innermost first, strides in bytes)."""

    operand: str
    data_type: str
    global_dims: tuple[int, int]
    global_strides: tuple[int]
    box_dims: tuple[int, int]
    element_strides: tuple[int, int] = (1, 1)
    interleave: str = "CU_TENSOR_MAP_INTERLEAVE_NONE"
    swizzle: str = "CU_TENSOR_MAP_SWIZZLE_128B"
    l2_promotion: str = "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"
    oob_fill: str = "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"

    def box_bytes(self, element_bytes: int) -> int:
        """Bytes one TMA copy of this box moves (out-of-bounds elements included: TMA counts the full box)."""
        return self.box_dims[0] * self.box_dims[1] * element_bytes


@dataclass(frozen=True)
class LaunchSpec:
    """One launch of the sm100 kernel for C[M,N] = A[M,K] @ B[K,N]; kernel params: (tmap_a, tmap_b, tmap_c, M, N, K)."""

    kernel_name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int]
    dynamic_smem_bytes: int
    stages: int
    ctas_per_sm: int
    tensor_maps: tuple[TensorMapSpec, TensorMapSpec, TensorMapSpec]
    scalar_args: tuple[int, int, int]
    tx_bytes_per_stage: int

    @property
    def tiles(self) -> int:
        """Output tiles of 256x256 (one per CTA pair)."""
        return (self.grid[0] // 2) * self.grid[1]


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value >= 1 << 31:
        raise TcforgeError(f"{name} must be an integer in 1..2**31-1, got {value!r}")
    return value


def describe_launch(m: int, n: int, k: int, *, in_dtype: str = "float16", stages: int = DEFAULT_STAGES) -> LaunchSpec:
    """The launch of C (fp32, row-major M x N) = A (row-major M x K) @ B (row-major K x N), fp16 or bf16 inputs."""
    m, n, k = _positive_int("M", m), _positive_int("N", n), _positive_int("K", k)
    if in_dtype not in IN_DTYPES:
        raise UnsupportedError(f"in_dtype must be one of {sorted(IN_DTYPES)}, got {in_dtype!r}")
    # TMA needs every global row stride to be a multiple of 16 bytes.
    if k % 8:
        raise UnsupportedError(f"K = {k}: A's row stride (K x 2 bytes) must be a multiple of 16 bytes for TMA; "
                               "pad K to a multiple of 8")
    if n % 8:
        raise UnsupportedError(f"N = {n}: B's row stride (N x 2 bytes) must be a multiple of 16 bytes for TMA; "
                               "pad N to a multiple of 8")
    cu_type, kernel = IN_DTYPES[in_dtype]
    tmap_a = TensorMapSpec("A", cu_type, (k, m), (k * 2,), (BK, CTA_M))
    tmap_b = TensorMapSpec("B", cu_type, (n, k), (n * 2,), (SLAB_N, BK))
    tmap_c = TensorMapSpec("C", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", (n, m), (n * 4,), STORE_BOX)
    tx = 2 * (tmap_a.box_bytes(2) + (CTA_N // SLAB_N) * tmap_b.box_bytes(2))
    return LaunchSpec(
        kernel_name=kernel,
        grid=(2 * -(-m // TILE_M), -(-n // TILE_N), 1),
        block=(THREADS, 1, 1),
        cluster=CLUSTER,
        dynamic_smem_bytes=smem_bytes(stages),
        stages=stages,
        ctas_per_sm=ctas_per_sm(stages),
        tensor_maps=(tmap_a, tmap_b, tmap_c),
        scalar_args=(m, n, k),
        tx_bytes_per_stage=tx,
    )


# the entry point ------------------------------------------------------------------------------------------------------

NEVER_RUN = (
    "the tcgen05 kernel (src/tcforge/gemm/sm100/gemm_sm100.cu) is only verified to compile for sm_100a with ptxas "
    "(no spills, tcgen05/TMA instructions in the SASS); it has never run on a Blackwell GPU, so its results are "
    "unvalidated and tcforge ships no launch driver for it"
)


def _device_description(a: Any) -> str:
    """What the caller's tensor lives on, without importing torch unless the caller already uses it."""
    device = getattr(a, "device", None)
    if device is None or getattr(device, "type", None) != "cuda":
        return f"the input is on {device if device is not None else type(a).__name__}, not a CUDA device"
    try:
        import torch

        major, minor = torch.cuda.get_device_capability(device)
        name = torch.cuda.get_device_name(device)
    except Exception as exc:  # no driver, no torch: say so rather than guess
        return f"the CUDA device could not be queried ({exc.__class__.__name__})"
    return f"{name} is sm_{major}{minor}"


def matmul_sm100(a: Any, b: Any, *, out_dtype: Any = None) -> Any:
    """C = a @ b on a Blackwell GPU with the 2-SM tcgen05 kernel; always raises UnsupportedError (see the message)."""
    where = _device_description(a)
    if "is sm_10" in where:
        raise UnsupportedError(f"matmul_sm100: a Blackwell GPU is present ({where}), but {NEVER_RUN}; "
                               "use tcforge.gemm.matmul or torch.mm")
    raise UnsupportedError(f"matmul_sm100 needs a Blackwell sm_100a GPU (compute capability 10.0) and none is present "
                           f"({where}); besides, {NEVER_RUN}. Use tcforge.gemm.matmul (Hopper) or torch.mm")
