"""The errors of the PTX emulator: one line naming the thread, the PTX line and the address or buffer."""

from __future__ import annotations

from tcforge.errors import TcforgeError


class EmulationError(TcforgeError):
    """A kernel or launch the emulator cannot run faithfully (bad access, barrier, shuffle, missing argument)."""


class OutOfScopeError(EmulationError):
    """An instruction the emulator does not execute (tcgen05, TMA reductions, textures, ...)."""


OUT_OF_SCOPE = ("tcgen05", "cp.reduce.async.bulk", "tensormap", "clusterlaunchcontrol", "multimem", "red.async",
                "tex", "suld", "sust", "tld4", "txq", "suq")

