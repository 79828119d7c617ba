"""The enc5 equivalence case: compile a shipped enc5 form to PTX with the kernel's own nvcc options, run it in the
emulator, and compare with tcforge.layers.enc5.reference. `python3 -m tests.ptx.emulate.enc5_case [FORM EX EY OX OY]`
times one run (and `--profile` prints the hot spots)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tcforge.layers.enc5.gpu import kernel
from tcforge.layers.enc5.inputs import Inputs
from tcforge.layers.enc5.reference import reference
from tcforge.layers.enc5.weights import WeightImage
from tcforge.ptx.emulate import emulate

OPTIONS = ("-O3", "-std=c++17", "--use_fast_math")  # tcforge.runtime.compile's fixed options
NUMERICS = {"hopper": "hopper", "ada": "ada", "hopper_split": "hopper", "hopper_split_occ3": "hopper"}


def nvcc() -> str | None:
    """nvcc's path, or None."""
    from tcforge.runtime.compile import find_tool

    return find_tool("nvcc") or shutil.which("nvcc")


def form_ptx(form: str) -> str:
    """The PTX nvcc makes of a shipped form (cached on disk by the source text)."""
    src = kernel.source(form)
    key = hashlib.sha256(("\0".join(OPTIONS) + src).encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"tcforge_emulate_{form}_{key}.ptx"
    if cache.is_file():
        return cache.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        cu, out = Path(tmp) / f"{form}.cu", Path(tmp) / f"{form}.ptx"
        cu.write_text(src)
        subprocess.run([nvcc(), "-ptx", f"-arch={kernel.ARCH}", *OPTIONS, "-I", str(kernel.INCLUDE_DIR), str(cu),
                        "-o", str(out)], check=True, capture_output=True)
        text = out.read_text()
    cache.write_text(text)
    return text


def emulate_enc5(form: str, weights: WeightImage, inputs: Inputs, stats: dict | None = None):
    """(arena uint8, surface uint16 (ey, ex, 4)) of the form's PTX run by the emulator."""
    f = kernel.form(form)
    ex, ey = inputs.ex, inputs.ey
    prm = kernel.params(ex, ey, inputs.ox, inputs.oy, input_ptr=0, weights_ptr=0, arena_ptr=0, texture_ptr=0,
                        surface_ptr=0)
    args = {
        f"{f.entry}_param_0": np.frombuffer(bytes(prm), np.uint8),
        "input": inputs.input.copy(), "weights": np.array(weights.array, np.uint8),
        "arena": np.zeros(inputs.input.size, np.uint8), "texture": np.array(inputs.texture, np.uint16),
        "surface": np.zeros((ey, ex, 4), np.uint16),
    }
    for off, name in ((8, "input"), (40, "weights"), (48, "arena"), (88, "texture"), (112, "surface")):
        args[f"{f.entry}_param_0@{off}"] = name
    geo = kernel.Geometry(ex, ey, 1, ctas_per_window=f.cluster)
    out = emulate(form_ptx(form), f.entry, geo.grid, f.block, args, NUMERICS[form], file=f"{form}.ptx",
                  dynamic_shared=f.dynamic_smem, stats=stats)
    return out.get("arena", args["arena"]), out.get("surface", args["surface"])


def compare(form: str, extent: tuple[int, int], origin: tuple[int, int] = (0, 0), seed: int = 0,
            stats: dict | None = None) -> tuple[int, int]:
    """(differing arena bytes, differing surface words) of emulator vs reference."""
    w = WeightImage.synthetic(seed)
    inp = Inputs.synthetic(extent, seed, ox=origin[0], oy=origin[1])
    arena, surface = emulate_enc5(form, w, inp, stats)
    ref = reference(w, inp, numerics=NUMERICS[form])
    return int(np.count_nonzero(arena.reshape(-1) != ref.arena)), int(np.count_nonzero(surface != ref.surface))


def main(argv: list[str]) -> int:
    prof = "--profile" in argv
    argv = [a for a in argv if a != "--profile"]
    form = argv[0] if argv else "hopper"
    ex, ey, ox, oy = (int(x) for x in (argv[1:5] + ["40", "23", "0", "0"][len(argv[1:5]):]))
    stats: dict = {}
    form_ptx(form)
    if prof:
        import cProfile
        import pstats

        w, inp = WeightImage.synthetic(0), Inputs.synthetic((ex, ey), 0, ox=ox, oy=oy)
        cProfile.runctx("emulate_enc5(form, w, inp, stats)", globals(), locals(), "/tmp/emulate.prof")
        pstats.Stats("/tmp/emulate.prof").sort_stats("tottime").print_stats(25)
    else:
        diff = compare(form, (ex, ey), (ox, oy), stats=stats)
        print(f"{form} {ex}x{ey} origin ({ox},{oy}): differing arena bytes {diff[0]}, surface words {diff[1]}")
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items() if k != "global_base"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
