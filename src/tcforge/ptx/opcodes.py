"""What the reader and the analysis need to know about PTX opcodes: known roots, which operands are written, widths."""

from __future__ import annotations

from functools import lru_cache

KNOWN_ROOTS = frozenset([
    "abs", "activemask", "add", "addc", "alloca", "and", "applypriority", "atom", "bar", "barrier", "bfe",
    "bfi", "bfind", "bmsk", "bra", "brev", "brkpt", "brx", "call", "clusterlaunchcontrol", "clz", "cnot",
    "copysign", "cos", "cp", "createpolicy", "cvt", "cvta", "discard", "div", "dp2a", "dp4a", "elect", "ex2",
    "exit", "fence", "fma", "fns", "getctarank", "griddepcontrol", "isspacep", "istypeof", "ld", "ldmatrix",
    "ldu", "lg2", "lop3", "mad", "mad24", "madc", "mapa", "match", "max", "mbarrier", "membar", "min", "mma",
    "mov", "movmatrix", "mul", "mul24", "multimem", "nanosleep", "neg", "not", "or", "pmevent", "popc",
    "prefetch", "prefetchu", "prmt", "rcp", "red", "redux", "rem", "ret", "rsqrt", "sad", "selp", "set",
    "setmaxnreg", "setp", "shf", "shfl", "shl", "shr", "sin", "slct", "sqrt", "st", "stackrestore", "stacksave",
    "stmatrix", "sub", "subc", "suld", "suq", "sured", "sust", "szext", "tanh", "tcgen05", "tensormap", "testp",
    "tex", "tld4", "trap", "txq", "vabsdiff", "vabsdiff2", "vabsdiff4", "vadd", "vadd2", "vadd4", "vavrg2",
    "vavrg4", "vmad", "vmax", "vmax2", "vmax4", "vmin", "vmin2", "vmin4", "vote", "vset", "vset2", "vset4",
    "vshl", "vshr", "vsub", "vsub2", "vsub4", "wgmma", "wmma", "xor"
])

# opcodes (by prefix) that write no register: every operand is read
_NO_DEST_PREFIXES = (
    "st.", "st", "sust", "sured", "red.", "bra", "brx", "bar", "barrier", "ret", "exit", "membar", "fence",
    "cp.", "prefetch", "trap", "brkpt", "pmevent", "wgmma.fence", "wgmma.commit_group",
    "wgmma.wait_group",
    "tcgen05.mma", "tcgen05.commit", "tcgen05.st", "tcgen05.cp", "tcgen05.shift", "tcgen05.fence", "tcgen05.wait",
    "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.alloc", "stmatrix", "mbarrier.init",
    "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx", "griddepcontrol", "setmaxnreg", "nanosleep",
    "discard", "applypriority", "stackrestore", "multimem.st", "multimem.red", "tensormap.replace",
    "tensormap.cp_fenceproxy",
    "wmma.store", "mbarrier.arrive_drop.noComplete",
)
_NO_DEST_EXACT = frozenset({"st", "bra", "ret", "exit", "trap", "brkpt"})

BRANCH_ROOTS = frozenset({"bra", "brx", "ret", "exit", "call", "trap"})

TYPE_BYTES = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4, "s32": 4,
    "f32": 4, "f16x2": 4, "bf16x2": 4, "e4m3x2": 2, "e5m2x2": 2, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16,
    "tf32": 4, "pred": 1,
}
SUBBYTE_BITS = {"s4": 4, "u4": 4, "b1": 1}  # the mma / wmma element types narrower than a byte

MEMORY_SPACES = ("global", "shared", "local", "param", "const")


def root(opcode: str) -> str:
    """The instruction name without modifiers (`ld.weak.global.ca.v4.u32` -> `ld`)."""
    return opcode.split(".", 1)[0]


@lru_cache(maxsize=4096)
def writes_first_operand(opcode: str) -> bool:
    """True when the instruction's first operand is a destination (false for stores, branches, barriers, ...)."""
    if opcode in _NO_DEST_EXACT:
        return False
    for p in _NO_DEST_PREFIXES:
        if opcode.startswith(p) and (len(opcode) == len(p) or p.endswith(".") or opcode[len(p)] == "."):
            return False
    return True


def is_mma(opcode: str) -> bool:
    """Tensor-core matrix multiply-accumulate: mma.sync / mma.sp, wmma.mma, wgmma.mma_async(.sp), tcgen05.mma."""
    return (
        opcode.startswith("mma.")
        or opcode.startswith("wmma.mma")
        or opcode.startswith("wgmma.mma_async")
        or (opcode.startswith("tcgen05.mma") and not opcode.startswith("tcgen05.mma_"))
    )


def is_barrier(opcode: str) -> bool:
    """Block- or warp-level barriers (`bar.sync`, `barrier.cluster.wait`, `bar.warp.sync`, mbarrier waits)."""
    r = root(opcode)
    return r in ("bar", "barrier") or opcode.startswith("mbarrier.try_wait") or opcode.startswith("mbarrier.test_wait")


def is_branch(opcode: str) -> bool:
    """Control transfers that end a basic block."""
    return root(opcode) in BRANCH_ROOTS


def memory_space(opcode: str) -> str | None:
    """State space of a memory instruction (`global`, `shared`, ... or `generic`), None for non-memory opcodes."""
    r = root(opcode)
    if r not in ("ld", "ldu", "st", "atom", "red", "ldmatrix", "stmatrix", "prefetch", "cp"):
        return None
    parts = opcode.split(".")
    for p in parts[1:]:
        base = p.split("::", 1)[0]
        if base in MEMORY_SPACES:
            return base
    return "generic"


def access_bytes(opcode: str) -> int:
    """Bytes one thread moves with a ld/st-like opcode: vector count x element type size (4 when unknown)."""
    parts = opcode.split(".")
    n = 1
    size = 4
    for p in parts[1:]:
        if p in ("v2", "v4", "v8"):
            n = int(p[1:])
        elif p in TYPE_BYTES:
            size = TYPE_BYTES[p]
    return n * size
