"""The errors of the PTX emulator: one line naming the thread, the PTX line and the address or buffer."""

from __future__ import annotations

from tcforge.errors import TcforgeError


class EmulationError(TcforgeError):
    """A kernel or launch the emulator cannot run faithfully (bad access, barrier, shuffle, missing argument)."""


class OutOfScopeError(EmulationError):
    """An instruction the emulator does not execute (TMA, mbarrier, tcgen05, setmaxnreg, ...)."""


OUT_OF_SCOPE = ("tcgen05", "mbarrier", "cp.async.bulk", "cp.reduce.async.bulk", "setmaxnreg", "tensormap",
                "griddepcontrol", "clusterlaunchcontrol", "multimem", "tex", "suld", "sust", "tld4", "txq", "suq")

