"""Build and launch the enc5 kernel forms: the table of forms (name → source file, entry, launch shape, dynamic shared
memory), the 144-byte parameter block and the dispatch-order swaps it carries (`dispatch_swaps`), the launch, and the
layout of the debug-stage dump (`debug_layout`).

Each form is one `.cu` file under `kernels/` that includes the shared headers (`enc5_window.cuh`: one CTA per window;
`enc5_split.cuh`: one window per 2-CTA cluster) and declares its launch shape as constants (`ENC5_THREADS`,
`ENC5_CLUSTER`, `ENC5_DYNAMIC_SMEM`), which this module reads from the source: the host restates no size. The debug,
timing and tile-check builds are tool forms under `tools/enc5_kernels/` of a source checkout, loaded the same way.

Only raw device addresses cross this module, so it serves torch tensors (api.py) and bare driver allocations alike.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from tcforge.errors import TcforgeError

KERNELS = Path(__file__).with_name("kernels")
INCLUDE_DIR = Path(__file__).resolve().parents[3] / "include"  # the shared header library: #include "tcforge/..."
TOOL_KERNELS = Path(__file__).resolve().parents[5] / "tools" / "enc5_kernels"  # a source checkout's tool forms
ARCH = "sm_90a"
SHIPPED = ("hopper", "ada", "hopper_split", "hopper_split_occ3")  # the forms native_batch picks from
NUMERICS_FORM = {"hopper": "hopper", "ada": "ada"}  # a numerics mode's one-CTA form
ORDER_SWAPS = 4  # dispatch-order swaps the parameter block carries at +56 (Enc5Params: uint16_t order[4][3])

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*$', re.M)
_ENTRY_RE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__\w+__\s*\([^)]*\)\s*)*(\w+)\s*\(')


@lru_cache(maxsize=64)
def source_text(path: Path) -> str:
    """A form's source with its quoted includes found beside it or in `kernels/` inlined (each file once, `#line`
    markers kept): one text, so the compile cache key covers every enc5 header. Includes found in neither (the
    shared `tcforge/...` library under INCLUDE_DIR) stay for nvcc's include path (tcforge.runtime passes it). Read
    once per process (the launch path asks every call)."""
    done: set[Path] = set()

    def expand(p: Path) -> str:
        p = p.resolve()
        if p in done:
            return ""
        done.add(p)
        out, pos = [], 0
        text = p.read_text()
        for m in _INCLUDE_RE.finditer(text):
            hit = next((d / m.group(1) for d in (p.parent, KERNELS) if (d / m.group(1)).is_file()), None)
            if hit is None:
                continue
            line = text.count("\n", 0, m.end()) + 1  # the include's own (now empty) line
            out += [text[pos:m.start()], expand(hit), f'#line {line} "{p.name}"']
            pos = m.end()
        out.append(text[pos:])
        body = "".join(out).replace("#pragma once\n", "")
        return f'#line 1 "{p.name}"\n{body}'

    return expand(path)


def constant(text: str, name: str) -> int:
    """The value of `constexpr int NAME = ...;` in a kernel source: an integer literal or another such constant."""
    m = re.search(rf"\bconstexpr\s+(?:int|uint32_t|unsigned)\s+{name}\s*=\s*([^;]+);", text)
    if m is None:
        raise TcforgeError(f"constexpr {name} not found in the kernel source")
    value = m.group(1).strip()
    return int(value.rstrip("uU"), 0) if re.fullmatch(r"(0x[0-9A-Fa-f]+|\d+)[uU]?", value) else constant(text, value)


@dataclass(frozen=True)
class Form:
    """One kernel form: its source file, its entry and the launch shape its source declares."""

    name: str
    path: Path
    entry: str
    threads: int  # per CTA: blockDim (32, 1, threads / 32), warp = threadIdx.z
    cluster: int  # CTAs per window (a cluster along x)
    dynamic_smem: int  # bytes

    @property
    def block(self) -> tuple[int, int, int]:
        """blockDim of a launch."""
        return (32, 1, self.threads // 32)

    @classmethod
    def from_source(cls, path: Path, name: str | None = None) -> Form:
        """Read a form's entry and launch shape from its source file (the name defaults to the file's stem)."""
        text = source_text(path)
        entries = _ENTRY_RE.findall(Path(path).read_text())
        if len(entries) != 1:
            raise TcforgeError(f"{path}: a form file has one extern \"C\" kernel, found {entries}")
        return cls(name or Path(path).stem, Path(path), entries[0], constant(text, "ENC5_THREADS"),
                   constant(text, "ENC5_CLUSTER"), constant(text, "ENC5_DYNAMIC_SMEM"))


FORMS: dict[str, Form] = {name: Form.from_source(KERNELS / f"{name}.cu") for name in SHIPPED}


def tool_forms() -> tuple[str, ...]:
    """Names of the tool forms of this checkout (debug dump, timing stamps, tile check); empty when installed."""
    return tuple(sorted(p.stem for p in TOOL_KERNELS.glob("*.cu"))) if TOOL_KERNELS.is_dir() else ()


def form(name: str | Form) -> Form:
    """A shipped form or a tool form by name (a Form passes through)."""
    if isinstance(name, Form):
        return name
    if name in FORMS:
        return FORMS[name]
    if name in tool_forms():
        return _tool_form(name)
    raise TcforgeError(f"kernel form must be one of {', '.join((*FORMS, *tool_forms()))}, got {name!r}")


@cache
def _tool_form(name: str) -> Form:
    return Form.from_source(TOOL_KERNELS / f"{name}.cu")


def source(name: str | Form = "hopper") -> str:
    """The compiled text of a form (headers inlined)."""
    return source_text(form(name).path)


def compile_form(name: str | Form = "hopper", options: tuple[str, ...] = ()):
    """Compile one form to an sm_90a cubin (disk-cached by tcforge.runtime); returns its CompiledModule, whose
    `stats[form(name).entry]` is ptxas's report. `options` adds nvcc flags."""
    from tcforge.runtime import compile_cuda

    f = form(name)
    return compile_cuda(source_text(f.path), arch=ARCH, options=tuple(options), name=f"enc5_{f.name}")


def function(name: str | Form = "hopper", device: int = 0, options: tuple[str, ...] = ()):
    """The loaded kernel of a form (compiled on first use)."""
    from tcforge.runtime import loader

    f = form(name)
    fn, _ = loader.get_function(source_text(f.path), f.entry, arch=ARCH, options=tuple(options),
                                tag=f"enc5_{f.name}", device=device)
    return fn


class Enc5Params(ctypes.Structure):
    """The kernel's parameter block, byte for byte the original's 144-byte layout (kernels/enc5_layer.cuh)."""

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


@dataclass(frozen=True)
class Geometry:
    """Grid of one launch: ceil(ex/8) x ceil(ey/8) windows (x times the CTAs per window of the cluster forms),
    `frames` in grid z."""

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
    (`dispatch_swaps`)."""
    if len(order) > ORDER_SWAPS or any(len(t) != 3 or not all(0 <= v < 1 << 16 for v in t) for t in order):
        raise TcforgeError(f"order must be at most {ORDER_SWAPS} (a, b, n) triples of uint16, got {order!r}")
    p = Enc5Params()
    for k, (a, b, n) in enumerate(order):
        p.order[3 * k], p.order[3 * k + 1], p.order[3 * k + 2] = a, b, n
    p.ex, p.ey, p.ox, p.oy = ex, ey, ox, oy
    p.input, p.weights, p.arena = input_ptr, weights_ptr, arena_ptr
    p.texture, p.surface, p.debug = texture_ptr, surface_ptr, debug_ptr
    return p


def launch(name: str | Form, prm: Enc5Params, frames: int = 1, stream: int = 0, device: int = 0,
           options: tuple[str, ...] = ()) -> None:
    """Launch a form over `frames` frames of extent (prm.ex, prm.ey) on `stream`."""
    from tcforge.runtime import driver

    f, fn = _ready(name, device, options)
    driver.launch(fn, _grid(f, prm, frames), f.block, [prm], shared_bytes=f.dynamic_smem, stream=stream)


_dynamic_smem_set: set[int] = set()


def _ready(name: str | Form, device: int, options: tuple[str, ...]) -> tuple[Form, Any]:
    """A form and its loaded kernel, its dynamic shared-memory limit raised once per kernel."""
    f = form(name)
    fn = function(f, device, options)
    if f.dynamic_smem and fn.handle not in _dynamic_smem_set:
        fn.set_max_dynamic_shared(f.dynamic_smem)
        _dynamic_smem_set.add(fn.handle)
    return f, fn


def _grid(f: Form, prm: Enc5Params, frames: int) -> tuple[int, int, int]:
    """The launch grid of a form over `frames` frames of extent (prm.ex, prm.ey)."""
    return Geometry(int(prm.ex), int(prm.ey), frames, ctas_per_window=f.cluster).grid


def ranges_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """True when the byte ranges (address, size) share a byte."""
    return a[1] > 0 and b[1] > 0 and a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def check_apart(outputs: tuple[tuple[str, int, int], ...], inputs: tuple[tuple[str, int, int], ...]) -> None:
    """Outputs (name, address, bytes) must not overlap an input or each other: a CTA reads its neighbours' input
    tokens (the halo) and texels (E61's taps) while other CTAs write the arena and the surface, so aliased buffers
    would race (TcforgeError)."""
    for k, (oname, po, no) in enumerate(outputs):
        for iname, p, n in (*inputs, *outputs[k + 1:]):
            if ranges_overlap((po, no), (p, n)):
                raise TcforgeError(f"{oname} overlaps {iname}: the kernel reads neighbouring windows' {iname} while "
                                   f"writing {oname}; pass separate buffers")


class Prepared:
    """One form's launch over one grid, prepared once: the loaded kernel, a parameter block the launch points at and
    the launch config per stream. Set `params`' fields, then `prepared(stream)` enqueues (the eager path)."""

    __slots__ = ("params", "_launch")

    def __init__(self, name: str | Form, prm: Enc5Params, frames: int, device: int = 0,
                 options: tuple[str, ...] = ()) -> None:
        from tcforge.runtime import driver

        f, fn = _ready(name, device, options)
        self.params = Enc5Params()
        ctypes.memmove(ctypes.addressof(self.params), ctypes.addressof(prm), ctypes.sizeof(Enc5Params))
        self._launch = driver.Launch(fn, _grid(f, prm, frames), f.block, [self.params], shared_bytes=f.dynamic_smem)

    def __call__(self, stream: int) -> None:
        self._launch(stream)


# dispatch-order swaps of the split forms ------------------------------------------------------------------------------
# Where the windows of a split-form launch run: swaps of the dispatch order that put windows with idle warps on the
# SMs that hold the most CTAs.
#
# The block scheduler hands out CTAs in launch order (x fastest), breadth-first over the SMs: CTA j of a launch that
# fits in one wave runs on the same SM as CTA j mod S (S SMs). A 4K frame in the 3-CTAs-per-SM form is 270 CTAs on 132
# SMs, so 6 SMs hold three CTAs and set the frame time; its bottom window row (68 = 8 x 8 + 4 token rows) has two query
# m-tiles outside the frame whose warps skip phases 13-61 (`skip_dead` in kernels/enc5_split.cuh). Moving those light
# windows onto the three-CTA SMs shortens the frame. Only placement changes, never the bits (any swaps are correct);
# if the scheduler dispatched differently, the frame time would just not improve.

MTILES = 4  # query m-tiles per window (16 tokens = two token rows each)
MAX_SWAPS = ORDER_SWAPS  # range swaps the parameter block carries


def live_mtiles(y0: int, ey: int) -> int:
    """Query m-tiles of a window starting at token row y0 with a row inside the frame (enc5_split.cuh live_mtiles)."""
    return sum(1 for z in range(MTILES) if y0 + 2 * z + 1 >= 0 and y0 + 2 * z < ey)


def window_weights(ex: int, ey: int, oy: int) -> list[int]:
    """Live m-tiles of every window in launch order (x fastest)."""
    nwx, nwy = -(-ex // 8), -(-ey // 8)
    return [live_mtiles(8 * wy - oy, ey) for wy in range(nwy) for _ in range(nwx)]


def ctas_on_sm_of(cluster: int, clusters: int, sms: int) -> int:
    """CTAs on the SM that runs cluster `cluster` (both of its CTAs' SMs hold as many) under breadth-first dispatch
    of `clusters` 2-CTA clusters in one wave."""
    sm = (2 * cluster) % sms
    return len(range(sm, 2 * clusters, sms))


def dispatch_swaps(ex: int, ey: int, oy: int, sms: int, ctas_per_sm: int) -> tuple[tuple[int, int, int], ...]:
    """Range swaps (a, b, n) of cluster positions for one frame: the lightest windows onto the positions of the most
    loaded SMs. Empty when the launch is not one wave, puts at most one CTA on each SM, or has no light window."""
    nwx, nwy = -(-ex // 8), -(-ey // 8)
    clusters = nwx * nwy
    if sms <= 0 or sms % 2 or clusters >= 1 << 16 or not sms < 2 * clusters <= ctas_per_sm * sms:
        return ()
    weights = window_weights(ex, ey, oy)
    load = [ctas_on_sm_of(c, clusters, sms) for c in range(clusters)]
    top = max(load)
    hot = [c for c in range(clusters) if load[c] == top]
    hot_set = set(hot)
    light = sorted((c for c in range(clusters) if weights[c] < MTILES),
                   key=lambda c: (weights[c], c not in hot_set, c))[:len(hot)]
    light_set = set(light)
    free = [c for c in hot if c not in light_set]  # hot positions that hold a full window
    movers = [c for c in light if c not in hot_set]  # light windows elsewhere
    runs: list[list[int]] = []
    for a, b in zip(free, sorted(movers), strict=False):  # fewer light windows than hot positions: the rest stay
        if runs and runs[-1][0] + runs[-1][2] == a and runs[-1][1] + runs[-1][2] == b:
            runs[-1][2] += 1
        else:
            runs.append([a, b, 1])
    return tuple((a, b, n) for a, b, n in runs[:MAX_SWAPS])


def apply_swaps(cluster: int, swaps: tuple[tuple[int, int, int], ...]) -> int:
    """The window a cluster position runs (the kernel's split_window, for tests and the profile)."""
    for a, b, n in swaps:
        if a <= cluster < a + n:
            return b + (cluster - a)
        if b <= cluster < b + n:
            return a + (cluster - b)
    return cluster


# the debug-stage dump's layout (the kernel's DBG_* offsets) -----------------------------------------------------------

DEBUG_PARTS = (  # name, phase, per-head (8 warps) or per-row-tile (4 warps), logical shape per head / per window
    ("d9", 9, "head", (96, 32)),
    ("d10", 10, "head", (96, 32)),
    ("s11", 11, "head", (64, 96)),
    ("o12", 12, "head", (64, 32)),
    ("d20", 20, "rows", (64, 160)),
    ("d21", 21, "rows", (64, 32)),
    ("d22", 22, "rows", (64, 160)),
    ("d60", 60, "rows", (64, 160)),
    ("d61", 61, "rows", (64, 16)),
)


@lru_cache(maxsize=1)
def debug_layout() -> dict:
    """Offsets (in f16 elements) of each debug part inside one window's block; `total` is the block size."""
    parts = {}
    off = 0
    for name, phase, kind, shape in DEBUG_PARTS:
        n = shape[0] * shape[1] * (8 if kind == "head" else 1)
        parts[name] = (phase, kind, off, shape)
        off += n
    return {"parts": parts, "total": off}
