"""What every instruction builder sees: the lanes of a batch of CTAs (special registers, warps), the register file
of the function being built, the symbols' addresses, memory, call frames, the numerics model, and the emulator's
errors with the helpers that name the thread and the PTX line."""

from __future__ import annotations

import numpy as np

from tcforge.errors import TcforgeError
from tcforge.ptx.emulate.state import Group, Regs, reader, storage, viewer, writer
from tcforge.ptx.operands import Imm, Not, Reg, Sym


class EmulationError(TcforgeError):
    """A kernel or launch the emulator cannot run faithfully (bad access, barrier, shuffle, missing argument)."""


class OutOfScopeError(EmulationError):
    """An instruction the emulator does not execute (tcgen05, TMA im2col, multimem, ...)."""


OUT_OF_SCOPE = ("clusterlaunchcontrol", "multimem", "red.async")


class Machine:
    """One batch of CTAs: `n` lanes, CTA after CTA, each CTA padded to whole warps."""

    def __init__(self, *, file: str, n: int, lanes_per_cta: int, block: tuple[int, int, int],
                 grid: tuple[int, int, int], ctaids: list[tuple[int, int, int]], mem, model: str,
                 kernel_params: dict[str, int], cluster: tuple[int, int, int] = (1, 1, 1),
                 explicit_cluster: bool = False) -> None:
        self.bar_arrived: dict[tuple[int, int], int] = {}  # bar.arrive counts per (CTA, barrier id)
        self.file, self.n, self.lanes_per_cta = file, n, lanes_per_cta
        self.block, self.grid, self.ctaids = block, grid, ctaids
        self.mem, self.model = mem, model
        self.kernel_params = kernel_params
        self.all_lanes = np.arange(n)
        lane = np.arange(n)
        local = lane % lanes_per_cta
        cta = lane // lanes_per_cta
        bx, by, bz = block
        self.threads = bx * by * bz
        self.padding = local >= self.threads
        self.laneid = (lane % 32).astype(np.uint32)
        cid = np.array(ctaids, dtype=np.uint32).reshape(-1, 3)[cta]
        self.specials = {
            "%tid.x": (local % bx).astype(np.uint32), "%tid.y": ((local // bx) % by).astype(np.uint32),
            "%tid.z": (local // (bx * by)).astype(np.uint32),
            "%ctaid.x": cid[:, 0].copy(), "%ctaid.y": cid[:, 1].copy(), "%ctaid.z": cid[:, 2].copy(),
            "%laneid": self.laneid, "%warpid": (local // 32).astype(np.uint32),
            "%nwarpid": np.full(n, lanes_per_cta // 32, np.uint32),
            "%smid": np.zeros(n, np.uint32), "%nsmid": np.full(n, 132, np.uint32),
            "%gridid": np.zeros(n, np.uint64),
            "%lanemask_eq": (np.uint32(1) << self.laneid),
            "%lanemask_lt": ((np.uint64(1) << self.laneid.astype(np.uint64)) - np.uint64(1)).astype(np.uint32),
        }
        sp = self.specials
        sp["%lanemask_le"] = sp["%lanemask_lt"] | sp["%lanemask_eq"]
        sp["%lanemask_ge"] = ~sp["%lanemask_lt"]
        sp["%lanemask_gt"] = ~sp["%lanemask_le"]
        for axis, k in zip("xyz", range(3), strict=True):
            sp[f"%ntid.{axis}"] = np.full(n, block[k], np.uint32)
            sp[f"%nctaid.{axis}"] = np.full(n, grid[k], np.uint32)
            sp[f"%cluster_ctaid.{axis}"] = cid[:, k] % np.uint32(cluster[k])
            sp[f"%cluster_nctaid.{axis}"] = np.full(n, cluster[k], np.uint32)
            sp[f"%clusterid.{axis}"] = cid[:, k] // np.uint32(cluster[k])
            sp[f"%nclusterid.{axis}"] = np.full(n, grid[k] // cluster[k], np.uint32)
        # a batch holds whole clusters in rank order, so a lane's rank is its CTA's position in the batch
        self.cluster_size = cluster[0] * cluster[1] * cluster[2]
        sp["%cluster_ctarank"] = (cta % self.cluster_size).astype(np.uint32)
        sp["%cluster_nctarank"] = np.full(n, self.cluster_size, np.uint32)
        sp["%is_explicit_cluster"] = np.full(n, explicit_cluster, bool)
        self.cluster_arrived = np.zeros(n, np.int64)  # barrier.cluster.arrive count per thread
        self.cluster_passed = np.zeros(n, np.int64)  # barrier.cluster.wait count per thread
        self.instructions = 0
        self.special_lazy = {
            "%clock": lambda: np.full(n, self.instructions & 0xFFFFFFFF, np.uint32),
            "%clock64": lambda: np.full(n, self.instructions, np.uint64),
            "%globaltimer": lambda: np.full(n, self.instructions, np.uint64),
        }
        self.group = Group()
        self.regs: Regs = Regs(n, {}, self.group)
        self.consts: dict[str, int] = {}
        self.frames: list[dict[str, np.ndarray]] = [{}]
        self.depth = np.zeros(n, np.int64)
        self.sp = np.full(n, mem.local_size, np.int64)  # alloca's stack pointer (local offset), down to stack_floor
        self.stack_floor = mem.local_size
        self.sp_at_call: list[np.ndarray] = []  # the stack pointer at each call depth's call, restored at its return

    # ---- per-function state --------------------------------------------------------------------------------------
    def new_regs(self, types: dict[str, str]) -> Regs:
        """A register file for one function, holding the special registers."""
        regs = Regs(self.n, dict(types), self.group)
        regs.update(self.specials)
        return regs

    # ---- operand access -------------------------------------------------------------------------------------------
    def src(self, op, ptype: str):
        """Reader of an operand's bits at the width of `ptype` (array or scalar)."""
        if isinstance(op, Reg) and op.name in self.special_lazy:
            f = self.special_lazy[op.name]
            dt = storage(ptype)
            return lambda: f().astype(dt)
        try:
            return reader(op, ptype, self.regs, self.consts)
        except KeyError as exc:
            raise EmulationError(f"unknown symbol {exc.args[0]!r}") from None

    def srcv(self, op, ptype: str):
        """Reader giving the type's arithmetic dtype (signed ints, floats) instead of raw bits."""
        if isinstance(op, Reg) and op.name in self.special_lazy:
            return self.src(op, ptype)
        try:
            return viewer(op, ptype, self.regs, self.consts)
        except KeyError as exc:
            raise EmulationError(f"unknown symbol {exc.args[0]!r}") from None

    def src_full(self, op, ptype: str):
        """Reader that always gives an array of every lane."""
        f = self.src(op, ptype)
        if isinstance(op, (Imm, Sym)):
            v = np.full(self.n, f(), dtype=storage(ptype))
            return lambda: v
        if isinstance(op, (Reg, Not)):
            return f
        return lambda: np.broadcast_to(f(), (self.n,))

    def dst(self, op, ptype: str):
        """Writer of a destination register (sink `_` or None: dropped)."""
        return writer(op, ptype, self.regs)

    def lanes(self, m) -> np.ndarray:
        """Lane indices of a mask (None: every lane)."""
        return self.all_lanes if m is None else np.flatnonzero(m)

    def warps(self, m, st) -> np.ndarray:
        """Warps in the mask; a warp only partly in it is an error (.aligned warp-wide instructions)."""
        if m is None:
            return np.arange(self.n // 32)
        wm = m.reshape(-1, 32)
        anyw = wm.any(axis=1)
        part = anyw & ~wm.all(axis=1)
        if part.any():
            w = int(np.argmax(part))
            lane = w * 32 + int(np.argmin(wm[w]))
            self.failer(st)(lane, f"{st.opcode} needs every lane of the warp, but lane {lane % 32} is not executing "
                                  f"it (divergent or exited)")
        return np.flatnonzero(anyw)

    def half_values(self, kind: str):
        """bits -> float64 for f16 or bf16 lanes."""
        if kind == "f16":
            return lambda x: np.asarray(x).astype(np.uint16).view(np.float16).astype(np.float64)
        return lambda x: (np.asarray(x).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)

    def float_op(self, st, parts):
        """Builder of a float form of add/sub/mul/min/max/abs/neg/div (ops_float)."""
        from tcforge.ptx.emulate import ops_float

        return ops_float.build(self, st, parts)

    def frame_param(self, name: str, size: int, lanes: np.ndarray) -> np.ndarray:
        """Per-lane bytes of a call parameter `name` in the frame of `lanes` (created or grown on demand)."""
        d = int(self.depth[lanes[0]]) if len(lanes) else 0
        while len(self.frames) <= d:
            self.frames.append({})
        frame = self.frames[d]
        buf = frame.get(name)
        if buf is None or buf.shape[1] < size:
            new = np.zeros((self.n, max(size, 16)), np.uint8)
            if buf is not None:
                new[:, :buf.shape[1]] = buf
            frame[name] = buf = new
        return buf

    # ---- errors ---------------------------------------------------------------------------------------------------
    def thread(self, lane: int) -> str:
        """`ctaid (x,y,z) tid (x,y,z)` of a lane."""
        cta, local = divmod(int(lane), self.lanes_per_cta)
        bx, by, _ = self.block
        tid = (local % bx, (local // bx) % by, local // (bx * by))
        c = self.ctaids[cta]
        return f"ctaid ({c[0]},{c[1]},{c[2]}) tid ({tid[0]},{tid[1]},{tid[2]})"

    def thread_ids(self, lanes: np.ndarray) -> dict[str, np.ndarray]:
        """%tid.*, %ctaid.*, %laneid and %warpid of the given lanes."""
        return {k: self.specials[k][lanes] for k in ("%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                                                      "%laneid", "%warpid")}

    def failer(self, st):
        """`fail(lane, message)` raising an EmulationError located at statement `st`."""
        def fail(lane: int, msg: str):
            raise EmulationError(f"{self.file}:{st.line}: thread {self.thread(lane)}: {msg}")
        return fail

    def fail_static(self, st, msg: str):
        raise EmulationError(f"{self.file}:{st.line}: {st.opcode}: {msg}")

    def unsupported(self, st, what: str):
        raise EmulationError(f"{self.file}:{st.line}: {what} is not supported by the emulator")

    def out_of_scope(self, st):
        raise OutOfScopeError(f"{self.file}:{st.line}: {st.opcode} is out of scope ({', '.join(OUT_OF_SCOPE[:-1])} "
                              f"and {OUT_OF_SCOPE[-1]} are not emulated)")
