"""Build and launch the fused enc5 kernel (`enc5.cu`): variants, the 144-byte parameter block, ptxas statistics.

Only raw device addresses cross this module, so it serves torch tensors (api.py) and bare driver allocations alike.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tcforge.errors import TcforgeError

SOURCE_PATH = Path(__file__).with_name("enc5.cu")
ARCH = "sm_90a"
BLOCK = (32, 1, 8)
SPLIT_BLOCK = (32, 1, 4)
VARIANTS = {"hopper": ("enc5_hopper", 0), "hopper_debug": ("enc5_hopper_debug", 1), "ada": ("enc5_ada", 2),
            "hopper_timing": ("enc5_hopper_timing", 3),  # timing: clock64 per warp at the phase boundaries
            "tile_check": ("enc5_tile_check", 4),  # single m16n8k32 tiles: native e4m3 mma vs the hand-issued HMMA
            "hopper_split": ("enc5_hopper_split", 5),  # one window per 2-CTA cluster (4 warps per CTA)
            "hopper_split_timing": ("enc5_hopper_split_timing", 6),
            # three CTAs per SM for one 4K frame (168 registers, 68,576 B shared memory)
            "hopper_split_occ3": ("enc5_hopper_split_occ3", 7),
            "hopper_split_occ3_timing": ("enc5_hopper_split_occ3_timing", 8)}
SPLIT_VARIANTS = ("hopper_split", "hopper_split_timing", "hopper_split_occ3", "hopper_split_occ3_timing")
# dynamic shared memory of the split kernel: sizeof(SplitSmem) in enc5.cu (a 30720 + o 16384 + x 10240 + hq 4096
# + d61 2048 + fc1 biases 1280 + Wo 40960 + bias/gain rows 992 + P61 weights 2560 + 27 mbarriers and the window
# origin padded to 256), checked there by a static_assert and in CI by test_native_build; two CTAs still fit one SM
# (2 x 107 KB)
SPLIT_SMEM_BYTES = 30720 + 16384 + 10240 + 4096 + 2048 + 1280 + 40960 + 992 + 2560 + 256
SPLIT_SMEM_BYTES_OCC3 = SPLIT_SMEM_BYTES - 40960  # hopper_split_occ3: Wo through registers


def split_smem_bytes(variant: str) -> int:
    """Dynamic shared memory of a split-kernel variant."""
    return SPLIT_SMEM_BYTES_OCC3 if variant.startswith("hopper_split_occ3") else SPLIT_SMEM_BYTES
NUMERICS_VARIANT = {"hopper": "hopper", "ada": "ada"}
ORDER_SWAPS = 4  # dispatch-order swaps the parameter block carries at +56 (enc5.cu: uint16_t order[4][3])


class Enc5Params(ctypes.Structure):
    """The kernel's parameter block, byte for byte the original's 144-byte layout (see enc5.cu)."""

    _fields_ = [
        ("ex", ctypes.c_uint32), ("ey", ctypes.c_uint32),  # +0
        ("input", ctypes.c_uint64),  # +8
        ("unused16", ctypes.c_uint64),
        ("debug", ctypes.c_uint64),  # +24 (0: no debug dump)
        ("unused32", ctypes.c_uint64),
        ("weights", ctypes.c_uint64),  # +40
        ("arena", ctypes.c_uint64),  # +48
        ("order", ctypes.c_uint16 * (3 * ORDER_SWAPS)),  # +56: split forms' dispatch-order swaps (a, b, n)
        ("ox", ctypes.c_uint16), ("oy", ctypes.c_uint16),  # +80
        ("unused84", ctypes.c_uint32),
        ("texture", ctypes.c_uint64),  # +88: RGBA16F texels (ey, ex, 4)
        ("unused96", ctypes.c_uint64 * 2),
        ("surface", ctypes.c_uint64),  # +112: RGBA16F surface (ey, ex, 4)
        ("unused120", ctypes.c_uint64 * 3),
    ]


assert ctypes.sizeof(Enc5Params) == 144


@lru_cache(maxsize=1)
def source() -> str:
    """The kernel's CUDA source text."""
    return SOURCE_PATH.read_text()


def _variant(name: str) -> tuple[str, int]:
    if name not in VARIANTS:
        raise TcforgeError(f"variant must be one of {', '.join(VARIANTS)}, got {name!r}")
    return VARIANTS[name]


def compile_variant(name: str = "hopper", options: tuple[str, ...] = ()):
    """Compile one variant to an sm_90a cubin (disk-cached by tcforge.runtime); returns its CompiledModule.
    `options` adds nvcc flags (e.g. "-DENC5_J_UNROLL=2" for experiments)."""
    from tcforge.runtime import compile_cuda

    _, idx = _variant(name)
    return compile_cuda(source(), arch=ARCH, options=(f"-DENC5_VARIANT={idx}", *options), name=f"enc5_{name}")


def function(name: str = "hopper", device: int = 0, options: tuple[str, ...] = ()):
    """The loaded kernel of a variant (compiled on first use)."""
    from tcforge.runtime import loader

    fname, idx = _variant(name)
    fn, _ = loader.get_function(source(), fname, arch=ARCH, options=(f"-DENC5_VARIANT={idx}", *options),
                                tag=f"enc5_{name}", device=device)
    return fn


@dataclass(frozen=True)
class Geometry:
    """Grid of one launch: ceil(ex/8) x ceil(ey/8) windows (x doubled for the split kernel's CTA pairs), `frames`
    in grid z."""

    ex: int
    ey: int
    frames: int = 1
    ctas_per_window: int = 1

    @property
    def grid(self) -> tuple[int, int, int]:
        """(gx, gy, frames)."""
        return (self.ctas_per_window * -(-self.ex // 8), -(-self.ey // 8), self.frames)

    @property
    def windows(self) -> int:
        """Windows per frame."""
        return -(-self.ex // 8) * -(-self.ey // 8)


def params(ex: int, ey: int, ox: int, oy: int, *, input_ptr: int, weights_ptr: int, arena_ptr: int,
           texture_ptr: int, surface_ptr: int, debug_ptr: int = 0,
           order: tuple[tuple[int, int, int], ...] = ()) -> Enc5Params:
    """Fill a parameter block from device addresses; `order`: up to four dispatch-order swaps of the split forms
    (`schedule.dispatch_swaps`)."""
    if len(order) > ORDER_SWAPS or any(len(t) != 3 or not all(0 <= v < 1 << 16 for v in t) for t in order):
        raise TcforgeError(f"order must be at most {ORDER_SWAPS} (a, b, n) triples of uint16, got {order!r}")
    p = Enc5Params()
    for k, (a, b, n) in enumerate(order):
        p.order[3 * k], p.order[3 * k + 1], p.order[3 * k + 2] = a, b, n
    p.ex, p.ey, p.ox, p.oy = ex, ey, ox, oy
    p.input, p.weights, p.arena = input_ptr, weights_ptr, arena_ptr
    p.texture, p.surface, p.debug = texture_ptr, surface_ptr, debug_ptr
    return p


def launch(variant: str, prm: Enc5Params, frames: int = 1, stream: int = 0, device: int = 0,
           options: tuple[str, ...] = ()) -> None:
    """Launch a variant over `frames` frames of extent (prm.ex, prm.ey) on `stream`."""
    from tcforge.runtime import driver

    fn = function(variant, device, options)
    if variant in SPLIT_VARIANTS:
        nbytes = split_smem_bytes(variant)
        if fn.handle not in _dynamic_smem_set:
            fn.set_max_dynamic_shared(nbytes)
            _dynamic_smem_set.add(fn.handle)
        geo = Geometry(int(prm.ex), int(prm.ey), frames, ctas_per_window=2)
        driver.launch(fn, geo.grid, SPLIT_BLOCK, [prm], shared_bytes=nbytes, stream=stream)
        return
    geo = Geometry(int(prm.ex), int(prm.ey), frames)
    driver.launch(fn, geo.grid, BLOCK, [prm], stream=stream)


_dynamic_smem_set: set[int] = set()
