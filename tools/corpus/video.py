"""The scalar video forms swept against ptxas's expansion (tests/ptx/emulate/test_ops_video.py, on the CPU) and
against the GPU (tools/video_sweep.py): the forms, and a CUDA source running 32 of them per kernel."""

from __future__ import annotations

import itertools
import random


def scalar_forms() -> list[str]:
    """1,184 scalar video forms (inline-asm text, %0 = d, %1 = a, %2 = b, %3 = c): every op, type triple, .sat or
    not, with each secondary operation, destination parts (.b0 / .b2 / .h1; shifts .b1 / .h0; vset .b2 / .h1) and
    the plain form, source selectors drawn at random; vmad in every type triple, .sat, scale and negation (-a, -b,
    -c, -a -b, .po)."""
    pick = random.Random(7).choice
    t2, sels = ("u32", "s32"), ["", ".b0", ".b1", ".b2", ".b3", ".h0", ".h1"]
    out = []

    def form(head: str, tail: str) -> str:
        a, b = pick(sels), pick(sels)
        if tail.startswith((".b", ".h")):
            return f"{head} %0{tail}, %1{a}, %2{b}, %3;"
        if tail:
            return f"{head}{tail} %0, %1{a}, %2{b}, %3;"
        return f"{head} %0, %1{a}, %2{b};"

    for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
        for (d, a, b), sat in itertools.product(itertools.product(t2, t2, t2), ("", ".sat")):
            out += [form(f"{op}.{d}.{a}.{b}{sat}", tail) for tail in ("", ".add", ".min", ".max", ".b0", ".b2", ".h1")]
    for op in ("vshl", "vshr"):
        for (d, a), sat, mode in itertools.product(itertools.product(t2, t2), ("", ".sat"), (".clamp", ".wrap")):
            out += [form(f"{op}.{d}.{a}.u32{sat}{mode}", tail) for tail in ("", ".add", ".min", ".max", ".b1", ".h0")]
    for (a, b), cmp in itertools.product(itertools.product(t2, t2), ("eq", "ne", "lt", "le", "gt", "ge")):
        out += [form(f"vset.{a}.{b}.{cmp}", tail) for tail in ("", ".add", ".min", ".max", ".b2", ".h1")]
    for (d, a, b), sat, scale in itertools.product(itertools.product(t2, t2, t2), ("", ".sat"),
                                                   ("", ".shr7", ".shr15")):
        for neg in ("", "a", "b", "c", "ab", "po"):
            na, nb, nc = ("-" if "a" in neg else ""), ("-" if "b" in neg else ""), ("-" if neg == "c" else "")
            po = ".po" if neg == "po" else ""
            out.append(f"vmad.{d}.{a}.{b}{po}{sat}{scale} %0, {na}%1{pick(sels)}, {nb}%2{pick(sels)}, {nc}%3;")
    return out


def source(forms: list[str]) -> str:
    """Kernels k0, k1, ... (x: n {a, b, c} triples, out: n x 32 words, n): kernel k runs forms 32k .. 32k + 31."""
    lines = []
    for k in range(0, len(forms), 32):
        lines.append(f'extern "C" __global__ void k{k // 32}(const unsigned* x, unsigned* out, int n) {{ '
                     "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; "
                     "unsigned a = x[3 * i], b = x[3 * i + 1], c = x[3 * i + 2], r;")
        for j, f in enumerate(forms[k:k + 32]):
            ins = '"r"(a), "r"(b)' + ("" if f.count("%") == 3 else ', "r"(c)')
            lines.append(f'    asm("{f}" : "=r"(r) : {ins}); out[32 * i + {j}] = r;')
        lines.append("}")
    return "\n".join(lines) + "\n"
