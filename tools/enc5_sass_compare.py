"""Same machine code: compile every enc5 kernel form of the working tree and of a baseline, and compare their SASS
(`cuobjdump -sass`) and their cubin bytes form by form. No GPU needed.

The baseline is the `kernels/` folder of another checkout (its headers are found beside the form files; compare the
shipped forms: `--forms hopper,ada,hopper_split,hopper_split_occ3`) or, from before the forms were files, that
revision's single `enc5.cu` (`git show REV:src/tcforge/layers/enc5/gpu/enc5.cu > /tmp/enc5_base.cu`; forms selected by
-DENC5_VARIANT, every shipped and tool form).

Usage (from the repository root): python3 -m tools.enc5_sass_compare --baseline /tmp/enc5_base.cu [--forms all]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

# the pre-refactor enc5.cu selected a form with -DENC5_VARIANT (its kernel names are the forms' entries)
SINGLE_FILE_VARIANT = {"hopper": 0, "hopper_debug": 1, "ada": 2, "hopper_timing": 3, "tile_check": 4,
                       "hopper_split": 5, "hopper_split_timing": 6, "hopper_split_occ3": 7,
                       "hopper_split_occ3_timing": 8}


def baseline_form(base: Path, name: str):
    """(Form, nvcc options) of form `name` in a baseline: a folder of form files or one pre-refactor enc5.cu."""
    from tcforge.layers.enc5.gpu import kernel

    if base.is_dir():
        return replace(kernel.Form.from_source(base / f"{name}.cu"), name=name), ()
    return replace(kernel.form(name), path=base), (f"-DENC5_VARIANT={SINGLE_FILE_VARIANT[name]}",)


def sass(cubin: Path) -> str:
    """cuobjdump -sass of a cubin."""
    from tcforge.runtime.tools import find_tool, sass_env

    tool = find_tool("cuobjdump")
    if tool is None:
        raise SystemExit("cuobjdump not found (CUDA toolkit, or pip install nvidia-cuda-cuobjdump)")
    return subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, check=True,
                          env=sass_env()).stdout


def compile_in(cache: Path, f, options: tuple[str, ...]):
    """Compile a form into a private cache directory."""
    from tcforge.layers.enc5.gpu import kernel

    os.environ["TCFORGE_CACHE_DIR"] = str(cache)
    return kernel.compile_form(f, options)


def main(argv: list[str]) -> int:
    """Compare each form; exit status 1 if any SASS differs."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", required=True, help="a folder of form files, or a pre-refactor enc5.cu")
    ap.add_argument("--forms", default="all", help="comma list, or all (the shipped and the tool forms)")
    ap.add_argument("--keep", default="", help="a folder to keep the SASS listings in (baseline_*.sass, new_*.sass)")
    args = ap.parse_args(argv)
    from tcforge.layers.enc5.gpu import kernel

    names = [*kernel.FORMS, *kernel.tool_forms()] if args.forms == "all" else args.forms.split(",")
    differ = 0
    with tempfile.TemporaryDirectory(prefix="enc5-sass-") as tmp:
        for name in names:
            old = compile_in(Path(tmp) / "baseline", *baseline_form(Path(args.baseline), name))
            new = compile_in(Path(tmp) / "new", kernel.form(name), ())
            s_old, s_new = sass(old.cubin_path), sass(new.cubin_path)
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                (Path(args.keep) / f"baseline_{name}.sass").write_text(s_old)
                (Path(args.keep) / f"new_{name}.sass").write_text(s_new)
            st = new.stats.get(kernel.form(name).entry)
            same = s_old == s_new
            differ += not same
            count = len(re.findall(r"/\*[0-9a-f]{4,}\*/", s_new))
            print(f"{name:26s} sass {'identical' if same else 'DIFFERS'}  cubin bytes "
                  f"{'identical' if old.cubin() == new.cubin() else 'differ'}  instructions {count}  registers "
                  f"{st.registers if st else '?'}  spill stores {st.spill_stores if st else '?'}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
