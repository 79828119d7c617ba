"""The address spaces of one batch of CTAs: global buffers by name (one flat byte array, each buffer at its own
256-aligned address with a gap between, bounds checked), shared memory per CTA (a shared::cluster address names
another CTA of the cluster by rank + 1 in its bits 24 and up; below, the thread's own CTA), local memory per thread,
the kernel's parameter block, and generic addresses (windows that map onto shared, local and param)."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.state import UINT

GLOBAL_BASE = 0x7F00_0000_0000  # global buffers live at and above this address (generic = global there)
SHARED_WINDOW = 0x1000_0000_0000  # generic address of shared offset 0
LOCAL_WINDOW = 0x2000_0000_0000  # generic address of local offset 0
STACK_BYTES = 16384  # the stack `alloca` takes from, per thread, above a program's local variables (when it allocates)
PARAM_WINDOW = 0x3000_0000_0000  # generic address of the kernel parameter block
WINDOW_SIZE = 1 << 40
RANK_SHIFT = 24  # shared::cluster addresses: (rank + 1) << RANK_SHIFT | offset in that CTA's shared memory
_GAP = 256


def _round16(n: int) -> int:
    return (n + 15) // 16 * 16


class Memory:
    """Global, shared, local and param memory of one launch (shared and local are re-made per batch of CTAs)."""

    def __init__(self, buffers: dict[str, np.ndarray], param_block: bytes) -> None:
        self.names: list[str] = []
        self.starts: list[int] = []
        self.sizes: list[int] = []
        self.originals: dict[str, np.ndarray] = {}
        cursor = 0
        for name, arr in buffers.items():
            a = np.ascontiguousarray(arr)
            self.names.append(name)
            self.starts.append(cursor)
            self.sizes.append(a.nbytes)
            self.originals[name] = a
            cursor = (cursor + a.nbytes + _GAP + 255) // 256 * 256
        self.gmem = np.zeros(max(cursor, 16), dtype=np.uint8)
        for name, s, n in zip(self.names, self.starts, self.sizes, strict=True):
            self.gmem[s:s + n] = self.originals[name].reshape(-1).view(np.uint8)
        self._starts = np.array(self.starts, dtype=np.int64)
        self._ends = np.array([s + n for s, n in zip(self.starts, self.sizes, strict=True)], dtype=np.int64)
        self.written: set[str] = set()
        self.param = np.frombuffer(bytes(param_block) + bytes(-len(param_block) % 16), dtype=np.uint8).copy()
        self.param_size = len(param_block)
        self.shared = np.zeros(16, np.uint8)
        self.shared_size = 0
        self.tmem: np.ndarray | None = None
        self.tmem_used: np.ndarray | None = None
        self.local = np.zeros(16, np.uint8)
        self.local_size = 0
        self.lanes_per_cta = 1
        self.cluster_size = 1
        self.images: dict[int, tuple] = {}  # texture / surface handle -> (object, buffer name)
        self.record = None  # record(line, space, addresses, thread ids, bytes, store) at each global/shared access

    def address(self, name: str) -> int:
        """Device address of a global buffer."""
        return GLOBAL_BASE + self.starts[self.names.index(name)]

    def result(self, name: str) -> np.ndarray:
        """A buffer's current contents with its original dtype and shape."""
        i = self.names.index(name)
        a = self.originals[name]
        raw = self.gmem[self.starts[i]:self.starts[i] + self.sizes[i]].copy()
        return raw.view(a.dtype).reshape(a.shape)

    def new_batch(self, ctas: int, lanes_per_cta: int, shared_bytes: int, local_bytes: int,
                  cluster_size: int = 1) -> None:
        """Fresh (zeroed) shared memory per CTA and local memory per thread for a batch of whole clusters."""
        self.shared_size = _round16(shared_bytes)
        self.local_size = _round16(local_bytes)
        self.lanes_per_cta = lanes_per_cta
        self.cluster_size = cluster_size
        self.shared = np.zeros(max(ctas * self.shared_size, 16), np.uint8)
        self.local = np.zeros(max(ctas * lanes_per_cta * self.local_size, 16), np.uint8)
        self.tmem = self.tmem_used = None  # sm_100 tensor memory, made by ops_tcgen05 on first use

    # ---- address resolution: (flat byte array, byte index per lane) ----------------------------------------------
    def locate(self, space: str, addr: np.ndarray, lanes: np.ndarray, size: int, fail, store: bool, align: int = 0):
        """Flat array and byte offsets for `size`-byte accesses at `addr` by `lanes`, aligned to `size` (or to
        `align`); `fail(lane, msg)` raises."""
        addr = addr.astype(np.int64, copy=False) if addr.dtype != np.int64 else addr
        align = align or size
        if align > 1:
            bad = (addr & (align - 1)) != 0
            if bad.any():
                k = int(np.argmax(bad))
                fail(int(lanes[k]), f"misaligned {space} {'store' if store else 'load'} of {size} bytes at "
                                    f"{int(addr[k]):#x}")
        if space == "global":
            off = addr - GLOBAL_BASE
            k = np.searchsorted(self._starts, off, side="right") - 1
            ok = (k >= 0) & (off >= 0)
            kk = np.maximum(k, 0)
            ok &= off + size <= self._ends[kk] if len(self._ends) else False
            if not np.all(ok):
                j = int(np.argmin(ok))
                fail(int(lanes[j]), self._describe_global(int(addr[j]), size, store))
            if store:
                for b in np.unique(kk):
                    self.written.add(self.names[int(b)])
            return self.gmem, off
        if space == "shared":
            cta, off = self.shared_cta(addr, lanes, fail)
            ok = (off >= 0) & (off + size <= self.shared_size)
            if not np.all(ok):
                j = int(np.argmin(ok))
                fail(int(lanes[j]), f"shared {'store' if store else 'load'} of {size} bytes at {int(addr[j]):#x} "
                                    f"outside the CTA's {self.shared_size} bytes of shared memory")
            return self.shared, off + cta * self.shared_size
        if space == "local":
            off = addr
            ok = (off >= 0) & (off + size <= self.local_size)
            if not np.all(ok):
                j = int(np.argmin(ok))
                fail(int(lanes[j]), f"local {'store' if store else 'load'} of {size} bytes at {int(addr[j]):#x} "
                                    f"outside the thread's {self.local_size} bytes of local memory")
            return self.local, off + lanes * self.local_size
        if space == "param":
            off = addr
            ok = (off >= 0) & (off + size <= self.param_size)
            if store or not np.all(ok):
                j = int(np.argmin(ok)) if not store else 0
                fail(int(lanes[j]), f"param {'store' if store else 'load'} of {size} bytes at {int(addr[j]):#x} "
                                    f"outside the {self.param_size}-byte kernel parameter block")
            return self.param, off
        raise AssertionError(space)

    def shared_cta(self, addr: np.ndarray, lanes: np.ndarray, fail) -> tuple[np.ndarray, np.ndarray]:
        """(CTA index in the batch, offset in its shared memory) of shared::cluster addresses used by `lanes`."""
        own = lanes // self.lanes_per_cta
        rank = addr >> RANK_SHIFT
        if not rank.any():
            return own, addr
        bad = (rank > self.cluster_size) | (addr < 0)
        if bad.any():
            j = int(np.argmax(bad))
            fail(int(lanes[j]), f"shared::cluster address {int(addr[j]):#x} names CTA rank {int(rank[j]) - 1}, "
                                f"outside the cluster of {self.cluster_size}")
        cta = np.where(rank > 0, own - own % self.cluster_size + rank - 1, own)
        return cta, addr & ((1 << RANK_SHIFT) - 1)

    def _describe_global(self, addr: int, size: int, store: bool) -> str:
        what = f"global {'store' if store else 'load'} of {size} bytes at {addr:#x}"
        if not self.names:
            return f"{what}: no global buffers were given"
        off = addr - GLOBAL_BASE
        k = int(np.searchsorted(self._starts, off, side="right") - 1)
        k = max(k, 0)
        name, s, n = self.names[k], self.starts[k], self.sizes[k]
        if s <= off < s + n:
            return f"{what} runs past the end of buffer {name!r} ({n} bytes; access at byte {off - s})"
        if off >= s + n:
            return f"{what} is outside buffer {name!r}: the buffer has {n} bytes, the access is at byte {off - s}"
        return f"{what} is outside every buffer (nearest: {name!r} at {GLOBAL_BASE + s:#x}, {n} bytes)"

    def split_generic(self, addr: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Generic addresses by space: space -> (positions in `addr`, space address)."""
        a = addr.astype(np.int64)
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        glob = a >= GLOBAL_BASE
        if glob.all():
            return {"global": (np.arange(len(a)), a)}
        for space, base in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW), ("param", PARAM_WINDOW)):
            sel = (a >= base) & (a < base + WINDOW_SIZE)
            if sel.any():
                idx = np.flatnonzero(sel)
                out[space] = (idx, a[idx] - base)
        if glob.any():
            idx = np.flatnonzero(glob)
            out["global"] = (idx, a[idx])
        return out

    def locate_generic(self, addr: np.ndarray, lanes: np.ndarray, size: int, fail, store: bool):
        """`locate` for generic addresses of one access that lie in one state space (an address in no window is
        taken as global, where `locate` names it); an access spanning spaces fails."""
        parts = self.split_generic(np.asarray(addr, np.int64))
        if len(parts) > 1:
            fail(int(lanes[0]), f"one access spans the {' and '.join(parts)} state spaces")
        space, (_, at) = next(iter(parts.items()), ("global", (None, np.asarray(addr, np.int64))))
        return self.locate(space, at, lanes, size, fail, store)

    def read(self, flat: np.ndarray, off: np.ndarray, width: int, count: int) -> np.ndarray:
        """(k, count) elements of `width` bytes at byte offsets `off` (aligned)."""
        view = flat.view(UINT[width]) if width > 1 else flat
        idx = off // width
        if count == 1:
            return view[idx][:, None]
        return view[idx[:, None] + np.arange(count)]

    def write(self, flat: np.ndarray, off: np.ndarray, width: int, values: np.ndarray) -> None:
        """Store (k, count) elements of `width` bytes at byte offsets `off` (aligned); later lanes win."""
        view = flat.view(UINT[width]) if width > 1 else flat
        count = values.shape[1]
        idx = off // width
        if count == 1:
            view[idx] = values[:, 0]
        else:
            view[idx[:, None] + np.arange(count)] = values
