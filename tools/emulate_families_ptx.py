"""The op families' PTX kernel builder and operand generators (tools/emulate_families.py runs the families)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

U = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
POISON = 0xA5  # every output byte before the launch


def align(x: int, a: int) -> int:
    """`x` rounded up to a multiple of `a`."""
    return (x + a - 1) // a * a


def bitmask(w: int) -> int:
    """The low `w` bits set."""
    return (1 << w) - 1


@dataclass
class Opnd:
    """An input operand: its name, the register it was loaded into and its width in bits."""

    name: str
    reg: str
    width: int

    def __str__(self) -> str:
        return self.reg


@dataclass
class Family:
    """One generated kernel: its PTX, buffers (initial contents) and meta (launch, layout of operands and results)."""

    name: str
    ptx: str
    buffers: dict
    meta: dict


class Kernel:
    """Builds one family's PTX: operands loaded per thread, variants appended, every result stored."""

    def __init__(self, name: str, threads: int, *, block: int = 128, target: str = "sm_90", version: str = "8.0",
                 slow: bool = False) -> None:
        self.name, self.threads, self.block, self.target, self.version = name, threads, block, target, version
        self.slow = slow
        self.lines: list[str] = []
        self.count = {"p": 1, "h": 1, "r": 8, "rd": 8}
        self.ins: list[dict] = []
        self.in_vals: dict[str, np.ndarray] = {}
        self.outs: list[dict] = []
        self.labels: dict[str, int] = {}
        self.in_bytes = 0
        self.out_bytes = 0
        self.decls: list[str] = []
        self.extra: dict[str, np.ndarray] = {}  # more global buffers (param name -> initial bytes, 2-D uint8)
        self.out_init: dict[int, tuple[int, np.ndarray]] = {}  # output offset -> (width, per-thread initial values)
        self.extra_meta: dict = {}

    # ---- registers and code ----------------------------------------------------------------------------------------
    def reg(self, w: int) -> str:
        """A fresh register of `w` bits (1: predicate; 8-bit values live in 16-bit registers)."""
        kind = {1: "p", 8: "h", 16: "h", 32: "r", 64: "rd"}[w]
        i = self.count[kind]
        self.count[kind] += 1
        return f"%{kind}{i}"

    def emit(self, *lines: str) -> None:
        """Append PTX lines to the body."""
        self.lines.extend(lines)

    def operand(self, name: str, w: int, values, kind: str = "b") -> Opnd:
        """Load a per-thread operand of `w` bits from the input row (values: one per thread)."""
        v = np.asarray(values)
        if v.dtype.kind == "i":
            v = v.astype(np.int64).astype(np.uint64)
        v = (v.astype(np.uint64) & np.uint64(bitmask(w))).astype(U[w]) if v.dtype != U[w] else v
        if v.shape != (self.threads,):
            raise ValueError(f"{self.name}: operand {name} has shape {v.shape}, want ({self.threads},)")
        if name in self.in_vals:
            raise ValueError(f"{self.name}: operand {name} given twice")
        off = align(self.in_bytes, w // 8)
        self.in_bytes = off + w // 8
        self.ins.append({"name": name, "offset": off, "width": w, "kind": kind})
        self.in_vals[name] = v
        r = self.reg(w)
        self.emit(f"ld.global.{'u8' if w == 8 else f'b{w}'} {r}, [%rd1+{off}];")
        return Opnd(name, r, w)

    def pred_operand(self, name: str, values) -> Opnd:
        """A per-thread predicate loaded from one input byte (nonzero: true)."""
        o = self.operand(name, 8, np.asarray(values).astype(np.uint8), "pred")
        p = self.reg(1)
        self.emit(f"setp.ne.u16 {p}, {o.reg}, 0;")
        return Opnd(name, p, 1)

    def _label(self, label: str) -> str:
        n = self.labels.get(label, 0)
        self.labels[label] = n + 1
        return label if n == 0 else f"{label} #{n + 1}"

    def slot(self, label: str, w: int, ops, kind: str = "b", init=None) -> int:
        """Reserve an output slot of `w` bits (1: a predicate byte); returns its byte offset in the output row."""
        nb = 1 if w == 1 else w // 8
        off = align(self.out_bytes, nb)
        self.out_bytes = off + nb
        self.outs.append({"name": self._label(label), "offset": off, "width": w, "kind": kind,
                          "ops": [o.name if isinstance(o, Opnd) else str(o) for o in ops]})
        if init is not None:
            self.out_init[off] = (8 if w == 1 else w, np.asarray(init))
        return off

    def store(self, label: str, reg: str, w: int, ops, kind: str = "b", guard: str = "") -> None:
        """Store register `reg` (`w` bits; 1: a predicate, stored as one byte) to a new output slot."""
        off = self.slot(label, w, ops, kind)
        g = f"@{guard} " if guard else ""
        if w == 1:
            h = self.reg(16)
            self.emit(f"selp.u16 {h}, 1, 0, {reg};", f"{g}st.global.u8 [%rd2+{off}], {h};")
        elif w == 8:
            self.emit(f"{g}st.global.u8 [%rd2+{off}], {reg};")
        else:
            self.emit(f"{g}st.global.b{w} [%rd2+{off}], {reg};")

    def inst(self, opcode: str, w: int, srcs, *, label: str | None = None, kind: str = "b") -> str:
        """`opcode d, srcs...;` into a fresh `w`-bit register, stored to a new output slot."""
        d = self.reg(w)
        self.emit(f"{opcode} {d}, {', '.join(str(s) for s in srcs)};")
        self.store(label or opcode, d, w, [s for s in srcs if isinstance(s, Opnd)], kind)
        return d

    # ---- the module ------------------------------------------------------------------------------------------------
    def family(self) -> Family:
        """The PTX and buffers of the kernel."""
        n = self.threads
        in_stride = align(max(self.in_bytes, 1), 16)
        out_stride = align(max(self.out_bytes, 1), 16)
        inp = np.zeros((n, in_stride), np.uint8)
        for s in self.ins:
            w = s["width"] // 8
            inp[:, s["offset"]:s["offset"] + w] = self.in_vals[s["name"]].reshape(n, 1).view(np.uint8).reshape(n, w)
        out = np.full((n, out_stride), POISON, np.uint8)
        for off, (w, vals) in self.out_init.items():
            b = w // 8
            out[:, off:off + b] = np.ascontiguousarray(vals.astype(U[w])).reshape(n, 1).view(np.uint8).reshape(n, b)
        params = ["p_in", "p_out", *self.extra]
        head = [f".version {self.version}", f".target {self.target}", ".address_size 64", "",
                f".visible .entry {self.name}(",
                ",\n".join(f"\t.param .u64 {p}" for p in params), ")", "{",
                f"\t.reg .pred %p<{self.count['p']}>;", f"\t.reg .b16 %h<{self.count['h']}>;",
                f"\t.reg .b32 %r<{self.count['r']}>;", f"\t.reg .b64 %rd<{self.count['rd']}>;",
                *(f"\t{d}" for d in self.decls),
                "\tld.param.u64 %rd3, [p_in];", "\tld.param.u64 %rd4, [p_out];",
                "\tmov.u32 %r1, %tid.x;", "\tmov.u32 %r2, %ctaid.x;", "\tmov.u32 %r3, %ntid.x;",
                "\tmad.lo.s32 %r4, %r2, %r3, %r1;",
                f"\tmul.wide.u32 %rd5, %r4, {in_stride};", "\tadd.s64 %rd1, %rd3, %rd5;",
                f"\tmul.wide.u32 %rd6, %r4, {out_stride};", "\tadd.s64 %rd2, %rd4, %rd6;"]
        body = [("" if ln.endswith(":") else "\t") + ln for ln in self.lines]
        ptx = "\n".join([*head, *body, "\tret;", "}", ""])
        buffers = {"p_in": inp, "p_out": out, **self.extra}
        meta = {"entry": self.name, "grid": [n // self.block, 1, 1], "block": [self.block, 1, 1],
                "inputs": self.ins, "outputs": self.outs, "slow": self.slow,
                "buffers": list(buffers), **self.extra_meta}
        return Family(self.name, ptx, buffers, meta)


# ---- operand generators (numpy; every value a bit pattern) -------------------------------------------------------

def _pat(byte: int, w: int) -> int:
    return int.from_bytes(bytes([byte]) * (w // 8), "little")


def int_edges(w: int) -> list[int]:
    """Edge values of a `w`-bit integer: 0, ±1, INT_MIN/MAX and neighbours, all-ones, patterns, powers of two."""
    m, s = bitmask(w), 1 << (w - 1)
    h = w // 2
    vals = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7FFF, 0x8000, 0xFFFF,
            m, m - 1, m - 2, m - 31, s, s - 1, s + 1, s - 2, s >> 1, (s >> 1) - 1, 1 << h, (1 << h) - 1,
            (1 << h) + 1, m ^ (1 << h), (1 << 23), (1 << 24) - 1, 1 << 24, 0xFF800000, 0x00800000,
            _pat(0x55, w), _pat(0xAA, w), _pat(0x0F, w), _pat(0xF0, w), _pat(0x01, w), _pat(0x80, w), _pat(0x7F, w)}
    return sorted({v & m for v in vals})


def core_edges(w: int) -> list[int]:
    """A dozen edge values of a `w`-bit integer, crossed with each other in the first rows of a family."""
    m, s = bitmask(w), 1 << (w - 1)
    return sorted({0, 1, 2, 7, m, m - 1, s, s - 1, s + 1, _pat(0x55, w), _pat(0xAA, w), (1 << (w // 2)) - 1,
                   1 << (w // 2), 3 << (w - 2)})


def rbits(rng, n: int, w: int) -> np.ndarray:
    """Uniform random `w`-bit patterns (uint64)."""
    x = rng.integers(0, 1 << 32, size=n, dtype=np.uint64) << np.uint64(32) | rng.integers(0, 1 << 32, size=n,
                                                                                         dtype=np.uint64)
    return x & np.uint64(bitmask(w))


def choose(rng, n: int, parts: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """Per element, one of several candidate arrays with the given probabilities."""
    p = np.array([q for q, _ in parts], float)
    k = rng.choice(len(parts), size=n, p=p / p.sum())
    out = parts[0][1].copy()
    for i, (_, arr) in enumerate(parts):
        out = np.where(k == i, arr, out)
    return out


def ints(rng, n: int, w: int, edges=None) -> np.ndarray:
    """`w`-bit integers mixing edge values, small signed values, powers of two ± 1 and random bits (uint64)."""
    m = np.uint64(bitmask(w))
    e = np.array(edges if edges is not None else int_edges(w), np.uint64)
    small = rng.integers(-40, 41, n).astype(np.int64).astype(np.uint64) & m
    k = rng.integers(0, w, n).astype(np.uint64)
    pow2 = ((np.uint64(1) << k) + rng.integers(-1, 2, n).astype(np.int64).astype(np.uint64)) & m
    short = rbits(rng, n, w) >> rng.integers(0, w, n).astype(np.uint64)
    neg = (~short) & m
    return choose(rng, n, [(0.35, rbits(rng, n, w)), (0.25, rng.choice(e, n)), (0.1, small), (0.1, pow2),
                            (0.1, short), (0.1, neg)])


def cross(cols: list[np.ndarray], sets: list[list[int]]) -> None:
    """Overwrite the first rows of each column with the cross product of the value sets (in place)."""
    grids = np.meshgrid(*[np.array(s, np.uint64) for s in sets], indexing="ij")
    k = grids[0].size
    for c, g in zip(cols, grids, strict=True):
        c[:k] = g.reshape(-1)[:len(c)].astype(c.dtype)


F32_EDGES = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
             0x7F800001, 0x7FBFFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 0x7FC12345, 0xFF812345, 0x00000001, 0x80000001,
             0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x00800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800001,
             0x3F7FFFFF, 0x40000000, 0x3F000000, 0x40400000, 0x477FE000, 0x477FF000, 0x477FEFFF, 0x477FF001,
             0x33800000, 0x33000000, 0x33000001, 0x33C00000, 0x38800000, 0x387FC000, 0x387FE000, 0x7F7F0000,
             0x7F7F8000, 0x7F7F7FFF, 0x43E00000, 0x43E80000, 0x43E7FFFF, 0x47600000, 0x47700000, 0x476FFFFF,
             0x4F000000, 0x4EFFFFFF, 0xCF000000, 0xCF000001, 0x4F800000, 0x4F7FFFFF, 0x5F000000, 0x5EFFFFFF,
             0x5F800000, 0xDF000000, 0x3FC00000, 0x40200000, 0xBF000000, 0x3EFFFFFF, 0xBFC00000, 0xC0200000,
             0x4B000000, 0x4B7FFFFF, 0x4B000001, 0x3F801000, 0x3F803000, 0x3F808000, 0x3F818000, 0x3F880000,
             0x3F980000, 0x3F900000, 0x3FB00000, 0x437F0000, 0x437F8000, 0x43000000, 0xC3008000, 0x46FFFE00,
             0x47000000, 0xC7000100, 0x477FFF00, 0x477FFF80, 0x3B800000, 0x3A800000, 0x3A000000]
F16_EDGES = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7DFF, 0xFFFF, 0x7FFF,
             0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x8400, 0x0401, 0x7BFF, 0xFBFF, 0x3C01, 0x3BFF, 0x4000,
             0x3800, 0x5F00, 0x5F40, 0x5F3F, 0x7B00, 0x7B80, 0x7B7F, 0x3C40, 0x3CC0, 0x3D00, 0x3E00, 0x4100,
             0x0200, 0x0300, 0x1C00, 0x5BF8, 0x57F0, 0x5800, 0x7000, 0x6000]
BF16_EDGES = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FBF, 0xFFFF, 0x7FFF,
              0x0001, 0x8001, 0x007F, 0x807F, 0x0080, 0x8080, 0x0081, 0x7F7F, 0xFF7F, 0x3F81, 0x3F7F, 0x4000,
              0x3F00, 0x4040, 0x3FC0, 0x4020, 0x4F00, 0xCF00, 0x5F00, 0x4B00, 0x437F, 0x4380, 0x4700, 0xC700]
F64_EDGES = [0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
             0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF7FFFFFFFFFFFF,
             0xFFFFFFFFFFFFFFFF, 0x7FF8000000012345, 0x1, 0x8000000000000001, 0x000FFFFFFFFFFFFF,
             0x0010000000000000, 0x8010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000001,
             0x3FEFFFFFFFFFFFFF, 0x4000000000000000, 0x3FE0000000000000, 0x4008000000000000, 0x3FF8000000000000,
             0x4004000000000000, 0xBFE0000000000000, 0x41E0000000000000, 0xC1E0000000000000, 0x41F0000000000000,
             0x43E0000000000000, 0xC3E0000000000000, 0x43F0000000000000, 0x43DFFFFFFFFFFFFF, 0x41DFFFFFFFC00000,
             0x41EFFFFFFFE00000, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x36A0000000000000, 0x3810000000000000,
             0x380FFFFFF0000000, 0x40EFFC0000000000, 0x40EFFE0000000000, 0x3E70000000000000, 0x3FF0000010000000,
             0x3FF0000020000000, 0x3FF0000030000000, 0x3FF0000000000800, 0x7FE0000000000000]


def f32s(rng, n: int, edges=F32_EDGES) -> np.ndarray:
    """f32 bit patterns: edges, values near one, uniform bits, subnormal and huge ranges, short mantissas, halves."""
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(31)
    mant = rbits(rng, n, 23)

    def expo(lo, hi):
        return sign | (rng.integers(lo, hi + 1, n).astype(np.uint64) << np.uint64(23)) | mant
    short = expo(97, 157) & ~((np.uint64(1) << rng.integers(8, 24, n).astype(np.uint64)) - np.uint64(1))
    halves = (rng.integers(-(1 << 20), 1 << 20, n) / 2.0 * np.exp2(rng.integers(-3, 12, n))).astype(np.float32)
    return choose(rng, n, [(0.15, rng.choice(np.array(edges, np.uint64), n)), (0.25, expo(97, 157)),
                            (0.15, rbits(rng, n, 32)), (0.1, expo(0, 10)), (0.05, expo(240, 254)), (0.15, short),
                            (0.15, halves.view(np.uint32).astype(np.uint64))]).astype(np.uint32)


def f16s(rng, n: int, edges=F16_EDGES) -> np.ndarray:
    """f16 bit patterns: edges, uniform bits (every class), values near one."""
    near = (rng.integers(0, 2, n) << 15 | rng.integers(9, 22, n) << 10 | rng.integers(0, 1024, n)).astype(np.uint64)
    return choose(rng, n, [(0.2, rng.choice(np.array(edges, np.uint64), n)), (0.5, rbits(rng, n, 16)),
                            (0.3, near)]).astype(np.uint16)


def bf16s(rng, n: int, edges=BF16_EDGES) -> np.ndarray:
    """bf16 bit patterns: edges, uniform bits, values near one, the subnormal range."""
    sign = rng.integers(0, 2, n) << 15
    near = (sign | rng.integers(107, 148, n) << 7 | rng.integers(0, 128, n)).astype(np.uint64)
    tiny = (sign | rng.integers(0, 4, n) << 7 | rng.integers(0, 128, n)).astype(np.uint64)
    return choose(rng, n, [(0.2, rng.choice(np.array(edges, np.uint64), n)), (0.35, rbits(rng, n, 16)),
                            (0.35, near), (0.1, tiny)]).astype(np.uint16)


def f64s(rng, n: int, edges=F64_EDGES) -> np.ndarray:
    """f64 bit patterns: edges, values near one, uniform bits, subnormal and huge ranges, short mantissas."""
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)
    mant = rbits(rng, n, 52)

    def expo(lo, hi):
        return sign | (rng.integers(lo, hi + 1, n).astype(np.uint64) << np.uint64(52)) | mant
    short = expo(983, 1063) & ~((np.uint64(1) << rng.integers(20, 53, n).astype(np.uint64)) - np.uint64(1))
    return choose(rng, n, [(0.15, rng.choice(np.array(edges, np.uint64), n)), (0.3, expo(983, 1063)),
                            (0.15, rbits(rng, n, 64)), (0.1, expo(0, 12)), (0.05, expo(2030, 2046)),
                            (0.25, short)])


def _ulp_scaled(a_bits: np.ndarray, k: np.ndarray, w: int) -> np.ndarray:
    """Bit patterns of k/4 ulp of each normal float a (w = 32 or 64), same sign as k (a tie when |k| = 2)."""
    if w == 32:
        e = ((a_bits.astype(np.int64) >> 23) & 0xFF) - 127 - 23
        v = np.ldexp(k / 4.0, np.clip(e, -149, 127)).astype(np.float32)
        return v.view(np.uint32)
    e = ((a_bits.view(np.int64) >> 52) & 0x7FF) - 1023 - 52
    return np.ldexp(k / 4.0, np.clip(e, -1074, 1023)).astype(np.float64).view(np.uint64)


def float_triples(rng, n: int, w: int = 32):
    """(a, b, c) float bit patterns with structure: edge crosses, cancellations, rounding ties, fma cancellations."""
    gen, edges, ft = (f32s, F32_EDGES, np.float32) if w == 32 else (f64s, F64_EDGES, np.float64)
    ut = U[w]
    a, b, c = (gen(rng, n).astype(ut) for _ in range(3))
    core = [e for e in edges[:32]]
    cross([a, b], [core, core])
    start = len(core) ** 2
    idx = np.arange(start, n)
    kind = rng.integers(0, 8, len(idx))
    sign = ut(1 << (w - 1))
    with np.errstate(all="ignore"):
        # exact and near cancellation
        sel = idx[kind == 0]
        b[sel] = a[sel] ^ sign
        sel = idx[kind == 1]
        b[sel] = (a[sel] + ut(1)) ^ sign
        # add: b = k/4 ulp(a): ties for every rounding mode, below and above them
        sel = idx[kind == 2]
        kk = rng.choice(np.array([-6, -5, -3, -2, -1, 1, 2, 3, 5, 6]), len(sel))
        b[sel] = _ulp_scaled(a[sel], kk, w).astype(ut)
        # mul: short significands give exact ties
        sel = idx[kind == 3]
        sh = 12 if w == 32 else 27
        for arr in (a, b):
            m1 = rng.integers(0, 1 << sh, len(sel)) | 1
            e1 = rng.integers(-20, 20, len(sel))
            arr[sel] = np.ldexp(1.0 + m1 / float(1 << sh), e1).astype(ft).view(ut) | (rng.integers(0, 2, len(sel))
                                                                                     .astype(ut) << ut(w - 1))
        # fma: c = -round(a*b): the result is the product's rounding error
        sel = idx[kind == 4]
        c[sel] = (-(a[sel].view(ft) * b[sel].view(ft))).astype(ft).view(ut)
        # products near the smallest normal (ftz and underflow boundaries)
        sel = idx[kind == 5]
        lo = -126 if w == 32 else -1022
        e1 = rng.integers(lo // 2 - 8, lo // 2 + 8, len(sel))
        ma = 1.0 + rng.integers(0, 1 << 20, len(sel)) / float(1 << 20)
        mb = 1.0 + rng.integers(0, 1 << 20, len(sel)) / float(1 << 20)
        a[sel] = np.ldexp(ma, e1).astype(ft).view(ut)
        b[sel] = np.ldexp(mb, lo - e1 - rng.integers(-1, 2, len(sel))).astype(ft).view(ut)
        # near overflow
        sel = idx[kind == 6]
        hi = 127 if w == 32 else 1023
        e1 = rng.integers(hi // 2 - 4, hi // 2 + 4, len(sel))
        a[sel] = np.ldexp(1.0 + rng.random(len(sel)), e1).astype(ft).view(ut)
        b[sel] = np.ldexp(1.0 + rng.random(len(sel)), hi - e1 - rng.integers(0, 2, len(sel))).astype(ft).view(ut)
    return a, b, c


# ---- PTX types and rounding modes ------------------------------------------------------------------------------------

MODES = ("rn", "rz", "rm", "rp")  # the rounding modes


def type_width(t: str) -> int:
    """Bits of a PTX type name (`u16` -> 16, `pred` -> 1)."""
    return int(t[1:]) if t[0] in "usbf" and t[1:].isdigit() else {"pred": 1}[t]
