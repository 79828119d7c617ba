"""Compile a Triton matmul to PTX without a GPU (triton.compile with an explicit GPUTarget) for the tests' corpus.

Writes into OUT_DIR: matmul_f16_sm80.ptx (mma.sync m16n8k16), matmul_f16_sm90a.ptx (wgmma.mma_async m64n128k16),
matmul_e4m3_sm89.ptx (mma.sync m16n8k32 e4m3), plus versions.txt (the triton version used); with --sm100,
the sm_100a ones alone (tcgen05.mma with its accumulator in tensor memory: f16 at M = 128, bf16 at M = 64, e4m3)
and the emulator corpus's warp-specialized f16 matmul on device-made descriptors for sm_100a
(ws_matmul_f16_sm100a.ptx; its launch in launch.json).

    python3 -m pip install triton   # not a tcforge dependency
    python3 -m tools.ptx.gen_triton_ptx tests/data/ptx/triton
    python3 -m tools.ptx.gen_triton_ptx --sm100 tests/data/ptx/triton_sm100
"""

from __future__ import annotations

import sys
from pathlib import Path

CONFIGS = (
    # (file, arch, a/b dtype, BM, BN, BK, warps, stages)
    ("matmul_f16_sm80.ptx", 80, "*fp16", 128, 128, 64, 4, 3),
    ("matmul_f16_sm90a.ptx", 90, "*fp16", 128, 128, 64, 4, 3),
    ("matmul_e4m3_sm89.ptx", 89, "*fp8e4nv", 64, 64, 64, 4, 2),
)
SM100 = (("matmul_f16_sm100a.ptx", 100, "*fp16", 128, 128, 64, 4, 3),  # M = 128, ld / st .32x32b
         ("matmul_bf16_sm100a_m64.ptx", 100, "*bf16", 64, 128, 32, 4, 3),  # M = 64, ld / st .16x32bx2
         ("matmul_e4m3_sm100a.ptx", 100, "*fp8e4nv", 64, 128, 128, 4, 3))  # .kind::f8f6f4, B MN-major


def main(argv: list[str]) -> int:
    """Compile the configurations (--sm100: the sm_100a one) into the folder given as the last argument."""
    configs = SM100 if argv[:1] == ["--sm100"] else CONFIGS
    argv = argv[1:] if argv[:1] == ["--sm100"] else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc += tl.dot(tl.load(a), tl.load(b))
            a += BK * sak
            b += BK * sbk
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, arch, dtype, bm, bn, bk, warps, stages in configs:
        sig = {"a_ptr": dtype, "b_ptr": dtype, "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "sam": "i32",
               "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32", "BM": "constexpr",
               "BN": "constexpr", "BK": "constexpr"}
        src = triton.compiler.ASTSource(fn=matmul_kernel, signature=sig, constexprs={"BM": bm, "BN": bn, "BK": bk})
        kernel = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                                options={"num_warps": warps, "num_stages": stages})
        (out / name).write_text(kernel.asm["ptx"])
        print(f"{out / name}: {len(kernel.asm['ptx'].splitlines())} lines")
    if configs is SM100:
        _ws_sm100(out)
    (out / "versions.txt").write_text(f"triton {triton.__version__}\n")
    return 0


def _ws_sm100(out: Path) -> None:
    """The corpus's ws_mm_f16 module (tools/corpus/modules.py) built for sm_100a, and its launch (kernel, shared
    bytes, warps) in launch.json."""
    import dataclasses
    import json

    from tools import emulate_corpus as ec
    from tools.corpus.modules import MODULES

    mod = ec._build_triton(dataclasses.replace(MODULES["ws_mm_f16_sm90"], arch=100), ec._triton_kernels())
    (out / "ws_matmul_f16_sm100a.ptx").write_text(mod["ptx"])
    launch = {"ws_matmul_f16_sm100a.ptx": {k: mod[k] for k in ("kernel", "shared", "warps")}}
    (out / "launch.json").write_text(json.dumps(launch, indent=1) + "\n")
    print(f"{out / 'ws_matmul_f16_sm100a.ptx'}: {len(mod['ptx'].splitlines())} lines")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
