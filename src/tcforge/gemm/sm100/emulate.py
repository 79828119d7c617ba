"""The sm100 kernel without a Blackwell GPU, two ways: a byte-level numpy model of one CTA pair (TMA boxes into
swizzled shared memory, the MMA's operand fetch through the descriptors, the staged epilogue back out through a TMA
store), and `emulate_ptx`, the compiled kernel's own PTX run in tcforge.ptx.emulate.

The kernel cannot run here, so this model is how its address contract is checked: TMA writes follow the
CU_TENSOR_MAP_SWIZZLE_128B pattern, and the MMA reads follow the PTX ISA's canonical tcgen05 layouts
(K-major SW128: ((8,m),(T,2k)) : ((8T,SBO),(1,T)); MN-major SW128: ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO)), in units
where T elements make 16 bytes), reading LBO, SBO, the start address and the swizzle mode out of the very descriptor
words `descriptors.py` builds. If those words, the box shapes or the epilogue's swizzled writes disagreed, the
emulated product would not equal A @ B.
"""

from __future__ import annotations

import functools

import numpy as np

from tcforge.errors import TcforgeError

from . import descriptors as d
from . import launch

SMEM_BYTES = 1 << 18  # the 14-bit start-address field spans 256 KiB
RING_BASE = 1024  # any 1024-aligned base: the swizzle is a function of the address bits
_SWIZZLE_CODE_128B = d.SWIZZLES["128B"]


def swizzle_128b(addr: np.ndarray) -> np.ndarray:
    """The 128-byte swizzle on byte addresses: 16-byte chunk bits [4:6] ^= row bits [7:9] (8 rows x 128 B atoms)."""
    return addr ^ (((addr >> 7) & 7) << 4)


def tma_load_2d(smem: np.ndarray, dst: int, tensor: np.ndarray, x: int, y: int, box: tuple[int, int]) -> int:
    """Copy the box at column x, row y of a row-major 2-D tensor into smem with 128B swizzle; zero-fill outside.

    Returns the bytes the copy completes on its mbarrier (the full box, out-of-bounds elements included).
    """
    bx, by = box
    esize = tensor.dtype.itemsize
    if bx * esize != 128:
        raise TcforgeError(f"box inner extent must be the 128-byte swizzle span, got {bx} x {esize} bytes")
    tile = np.zeros((by, bx), tensor.dtype)
    rows, cols = tensor.shape
    src = tensor[max(y, 0):min(y + by, rows), max(x, 0):min(x + bx, cols)]
    tile[: src.shape[0], : src.shape[1]] = src
    raw = tile.view(np.uint8).reshape(by, 128)
    addr = dst + np.arange(by)[:, None] * 128 + np.arange(128)[None, :]
    smem[swizzle_128b(addr)] = raw
    return by * 128


def tma_store_2d(smem: np.ndarray, src: int, out: np.ndarray, x: int, y: int, box: tuple[int, int]) -> None:
    """Write a 128B-swizzled smem box to column x, row y of a row-major tensor; out-of-bounds parts are dropped."""
    bx, by = box
    addr = src + np.arange(by)[:, None] * 128 + np.arange(128)[None, :]
    tile = smem[swizzle_128b(addr)].reshape(by, 128).copy().view(out.dtype).reshape(by, bx)
    rows, cols = out.shape
    r1, c1 = min(y + by, rows), min(x + bx, cols)
    if r1 > y and c1 > x:
        out[y:r1, x:c1] = tile[: r1 - y, : c1 - x]


def _fields(desc: int) -> tuple[int, int, int]:
    f = d.decode_smem_desc(desc)
    if f["swizzle"] != _SWIZZLE_CODE_128B or f["fixed_0b001"] != 1 or f["base_offset"] or f["lbo_mode"]:
        raise TcforgeError(f"the model reads 128B-swizzled descriptors with base offset 0 only, got {f}")
    return f["start_addr_shr4"] << 4, f["lbo_shr4"] << 4, f["sbo_shr4"] << 4


def read_k_major(smem: np.ndarray, desc: int, rows: int, k: int, dtype: np.dtype) -> np.ndarray:
    """The (rows, k) operand a K-major SW128 descriptor names (PTX ISA canonical layout; LBO unused)."""
    start, _, sbo = _fields(desc)
    esize = np.dtype(dtype).itemsize
    r = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    # ((8, m), (T, 2k)) : ((8T, SBO), (1, T)) in elements; 8T elements = one 128-byte row
    offset = (r % 8) * 128 + (r // 8) * sbo + kk * esize
    return _gather(smem, start + offset, dtype)


def read_mn_major(smem: np.ndarray, desc: int, mn: int, k: int, dtype: np.dtype) -> np.ndarray:
    """The (k, mn) operand an MN-major SW128 descriptor names (PTX ISA canonical layout)."""
    start, lbo, sbo = _fields(desc)
    esize = np.dtype(dtype).itemsize
    per_row = 128 // esize  # T x 8 elements: one 128-byte row of MN
    kk = np.arange(k)[:, None]
    n = np.arange(mn)[None, :]
    # ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)) in elements
    offset = (n % per_row) * esize + (n // per_row) * lbo + (kk % 8) * 128 + (kk // 8) * sbo
    return _gather(smem, start + offset, dtype)


def _gather(smem: np.ndarray, addr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    esize = np.dtype(dtype).itemsize
    byte_addr = swizzle_128b(addr[..., None] + np.arange(esize))
    return smem[byte_addr].copy().view(dtype).reshape(addr.shape)


def emulate_pair_tile(a: np.ndarray, b: np.ndarray, out: np.ndarray, pair: int, n_tile_index: int,
                      stages: int = launch.DEFAULT_STAGES) -> None:
    """Run one CTA pair's tile (grid x = 2*pair + rank, grid y = n_tile_index) through the byte model, into `out`."""
    k_total = a.shape[1]
    smem = [np.zeros(SMEM_BYTES, np.uint8) for _ in range(2)]  # rank 0 (leader), rank 1 (peer)
    stage_bytes = launch.stage_bytes()
    a_bytes = launch.CTA_M * launch.BK * 2
    slab_bytes = launch.BK * launch.SLAB_N * 2
    acc = np.zeros((launch.TILE_M, launch.TILE_N), np.float64)  # rows r*128.. live in rank r's TMEM
    n_tile = n_tile_index * launch.TILE_N
    for t in range(-(-k_total // launch.BK)):
        s = t % stages
        landed = 0
        for rank in range(2):  # producers: own A rows, own half of B; both complete on the leader's barrier
            a_dst = RING_BASE + s * stage_bytes
            m_cta = pair * launch.TILE_M + rank * launch.CTA_M
            n_cta = n_tile + rank * launch.CTA_N
            landed += tma_load_2d(smem[rank], a_dst, a, t * launch.BK, m_cta, (launch.BK, launch.CTA_M))
            for j in range(launch.CTA_N // launch.SLAB_N):
                landed += tma_load_2d(smem[rank], a_dst + a_bytes + j * slab_bytes, b, n_cta + j * launch.SLAB_N,
                                      t * launch.BK, (launch.SLAB_N, launch.BK))
        if landed != 2 * stage_bytes:
            raise TcforgeError(f"stage {t}: {landed} bytes landed, the leader armed {2 * stage_bytes}")
        for kstep in range(launch.BK // 16):  # the leader's four M=256, N=256, K=16 MMAs
            a_desc = d.kernel_a_desc(RING_BASE + s * stage_bytes + kstep * d.A_K16_STEP)
            b_desc = d.kernel_b_desc(RING_BASE + s * stage_bytes + a_bytes + kstep * d.B_K16_STEP)
            # the same descriptors address both CTAs: A rows 128*rank.., B columns 128*rank..
            a_op = np.concatenate([read_k_major(smem[r], a_desc, launch.CTA_M, 16, a.dtype) for r in range(2)])
            b_op = np.concatenate([read_mn_major(smem[r], b_desc, launch.CTA_N, 16, b.dtype) for r in range(2)], axis=1)
            acc += a_op.astype(np.float64) @ b_op.astype(np.float64)
    accum = acc.astype(np.float32)
    for rank in range(2):  # epilogue warps 0-7 of each CTA, staging in the idle ring
        m_cta = pair * launch.TILE_M + rank * launch.CTA_M
        for warp in range(launch.THREADS // 32 - 2):
            quarter, half = warp % 4, warp // 4
            staging = RING_BASE + warp * 2 * 4096
            for c in range(launch.CTA_N // 32):
                buf = staging + (c & 1) * 4096
                cols = half * launch.CTA_N + c * 32
                for lane in range(32):  # tcgen05.ld 32x32b.x32: lane = TMEM lane = row, 32 consecutive columns
                    v = accum[rank * launch.CTA_M + quarter * 32 + lane, cols:cols + 32]
                    for chunk in range(8):  # the kernel's swizzled st.shared.v4: chunk j at j ^ (lane % 8)
                        at = buf + lane * 128 + (chunk ^ (lane & 7)) * 16
                        smem[rank][at:at + 16] = v[4 * chunk:4 * chunk + 4].view(np.uint8)
                tma_store_2d(smem[rank], buf, out, n_tile + cols, m_cta + quarter * 32, launch.STORE_BOX)


def emulate_matmul(a: np.ndarray, b: np.ndarray, stages: int = launch.DEFAULT_STAGES) -> np.ndarray:
    """C (fp32) = a @ b computed tile by tile through the byte model of the kernel's whole grid."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise TcforgeError(f"a (M, K) and b (K, N) must be 2-D with matching K, got {a.shape} and {b.shape}")
    if a.dtype != b.dtype or a.dtype.itemsize != 2:
        raise TcforgeError(f"a and b must share a 16-bit dtype (float16 / bfloat16), got {a.dtype} and {b.dtype}")
    spec = launch.describe_launch(a.shape[0], b.shape[1], a.shape[1], stages=stages)
    out = np.full((a.shape[0], b.shape[1]), np.nan, np.float32)  # poisoned: every element must be written
    for pair in range(spec.grid[0] // 2):
        for n_index in range(spec.grid[1]):
            emulate_pair_tile(a, b, out, pair, n_index, stages)
    return out


_SWIZZLE_BYTES = {"CU_TENSOR_MAP_SWIZZLE_128B": 128}
_MAP_TYPES = {"CU_TENSOR_MAP_DATA_TYPE_FLOAT16": "f16", "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16": "bf16",
              "CU_TENSOR_MAP_DATA_TYPE_FLOAT32": "f32"}


@functools.cache
def kernel_ptx(stages: int = launch.DEFAULT_STAGES) -> str:
    """The kernel's sm_100a PTX, as nvcc compiles it (cached per stage count)."""
    from .compile import compile_sm100

    return compile_sm100("sm_100a", stages=stages, with_sass=False).ptx


def emulate_ptx(a: np.ndarray, b: np.ndarray, stages: int = launch.DEFAULT_STAGES, *, ptx: str | None = None,
                stats: dict | None = None) -> np.ndarray:
    """C (fp32) = a @ b by the kernel's own PTX run in tcforge.ptx.emulate (ops_tcgen05: tensor memory and the MMA
    as the PTX ISA describes them, the arithmetic Hopper's), over the launch describe_launch gives: every warp role,
    mbarrier phase, TMA box and epilogue store of the compiled kernel, where the byte model above re-states them."""
    from tcforge.ptx.emulate import emulate
    from tcforge.ptx.emulate.tensor_map import TensorMap

    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise TcforgeError(f"a (M, K) and b (K, N) must be 2-D with matching K, got {a.shape} and {b.shape}")
    in_dtype = {"float16": "float16", "bfloat16": "bfloat16"}.get(a.dtype.name)
    if in_dtype is None or a.dtype != b.dtype:
        raise TcforgeError(f"a and b must share a dtype, float16 or bfloat16, got {a.dtype} and {b.dtype}")
    m, k = a.shape
    n = b.shape[1]
    spec = launch.describe_launch(m, n, k, in_dtype=in_dtype, stages=stages)
    out = np.full((m, n), np.nan, np.float32)  # poisoned: every element must be written
    maps = [TensorMap(t.operand, _MAP_TYPES[t.data_type], t.global_dims, t.global_strides, t.box_dims,
                      _SWIZZLE_BYTES[t.swizzle]) for t in spec.tensor_maps]
    name = spec.kernel_name
    args = {"A": np.ascontiguousarray(a).view(np.uint16), "B": np.ascontiguousarray(b).view(np.uint16), "C": out,
            **{f"{name}_param_{i}": v for i, v in enumerate([*maps, *spec.scalar_args])}}
    return emulate(ptx if ptx is not None else kernel_ptx(stages), name, spec.grid, spec.block, args,
                   file="gemm_sm100.ptx", dynamic_shared=spec.dynamic_smem_bytes, stats=stats)["C"]
