"""Render kernels/gemm_sm90.cu for one build: its options as constexpr values, the host's sizes for the kernel to check,
the generated wgmma wrappers, and the kernel's part headers (kernels/*.cuh) inlined, so the rendered text is the whole
source (what is hashed and cached)."""

from __future__ import annotations

import re
from importlib import resources

from tcforge.gemm.variants import IN_KINDS, OUT_KINDS, KernelConfig

KERNEL_NAME = "tcf_gemm"
REDUCE_NAME = "tcf_splitk_reduce"
_PTX_TYPE = {"fp16": "f16", "bf16": "bf16", "e4m3": "e4m3"}


# every option the kernel reads (config.cuh describes them); one absent from `defines` is 0
OPTIONS = (
    "IN_KIND", "OUT_KIND", "BM", "BN", "BK", "STAGES", "NC", "USE_TMA", "B_KMAJOR", "CM", "TMA_STORE", "SPLITK",
    "HOIST", "SETMAXNREG", "PINGPONG", "RELAXED", "EPI_BUFS", "PRODUCER_REGS", "CONSUMER_REGS", "PROMOTE", "STREAMK",
    "EPI_DEFER", "EPI_SPREAD", "STREAMK_TRACE", "TIMELINE", "SK_FUSED", "SK_PAIR", "TRANS_C", "CLUSTER_N",
    "LOCAL_EMPTY", "A_MN", "CPA", "DIAG",
)
_LOCAL_INCLUDE = re.compile(r'^#include "([A-Za-z0-9_]+\.cuh)"[ \t]*$', re.M)


def kernel_file(name: str) -> str:
    """One file of the kernel's source folder (kernels/) shipped with the package."""
    return resources.files("tcforge.gemm").joinpath(f"kernels/{name}").read_text()


def template() -> str:
    """The kernel source with its part headers inlined (the header library's `tcforge/...` includes stay: nvcc finds
    them on the include path, and the cache key hashes them)."""
    return _LOCAL_INCLUDE.sub(lambda m: kernel_file(m.group(1)).rstrip("\n"), kernel_file("gemm_sm90.cu"))


def host_sizes(config: KernelConfig, in_kind: str, out_kind: str) -> dict[str, int]:
    """The sizes the host launches with, from its own derivation (KernelConfig): the kernel static_asserts that they
    agree with its own (config.cuh), so a change on one side that the other misses stops the build."""
    return {
        "HOST_SMEM_BYTES": config.smem_bytes(),
        "HOST_SK_SLOT": config.slot_floats,
        "HOST_THREADS": config.threads,
        "HOST_B_BOX": config.b_box_rows,
        "HOST_A_BOX": config.a_box_rows,
        "HOST_A_MN_BOX_K": config.a_mn_box_k(in_kind),
        # the C store box (api: box_c): 128 bytes of a row by one warp's 16 rows (the swapped tile: its BN rows)
        "HOST_C_BOX_COLS": 128 // (4 if out_kind == "fp32" else 2),
        "HOST_C_BOX_ROWS": config.bn if config.swap_ab else 16,
    }


def cluster_ctas(config: KernelConfig) -> int:
    """CTAs per cluster: CM, or the two splits of a pair split-K build, else 1 (no cluster)."""
    return config.cm if config.cm > 1 else (2 if config.split_pair else 1)


def wgmma_wrapper(
    bn: int, in_kind: str, b_kmajor: bool, name: str = "wgmma_tile", scale_arg: bool = False, a_mn: bool = False
) -> str:
    """`wgmma_tile(d, desc_a, desc_b)`: one m64n{bn} wgmma (K = 32 bytes), scale-d on, B transposed when MN-major
    (A too with `a_mn`: 16-bit only). With `scale_arg` the function takes scale-d as a fourth argument (0: D = A·B,
    the old D ignored). A BN over 256 (the wgmma's largest N) issues n256 on d[0:128] and n(BN - 256) on the rest,
    its B descriptor advanced to column 256 (whole 64-column slabs of an MN-major B, 256 rows of a K-major one): the
    two fragments together are laid out as one m64nBN fragment would be."""
    if bn > 256:
        params = "uint64_t da, uint64_t db, int scale_d" if scale_arg else "uint64_t da, uint64_t db"
        sd = ", scale_d" if scale_arg else ""
        hi = bn // 2 - 128
        return (
            wgmma_wrapper(256, in_kind, b_kmajor, f"{name}_lo", scale_arg, a_mn)
            + wgmma_wrapper(bn - 256, in_kind, b_kmajor, f"{name}_hi", scale_arg, a_mn)
            + f"__device__ __forceinline__ void {name}(float (&d)[{bn // 2}], {params}) {{\n"
            f"  {name}_lo(*reinterpret_cast<float (*)[128]>(&d[0]), da, db{sd});\n"
            f"  {name}_hi(*reinterpret_cast<float (*)[{hi}]>(&d[128]), da,\n"
            f"            db + (uint64_t)((B_KMAJOR ? 256 * BK_BYTES : 4 * B_SLAB) >> 4){sd});\n}}\n"
        )
    n = bn // 2
    ty = _PTX_TYPE[in_kind]
    k = 32 if in_kind == "e4m3" else 16
    regs = ", ".join(f"%{i}" for i in range(n))
    tail = "p, 1, 1" if in_kind == "e4m3" else f"p, 1, 1, {int(a_mn)}, {0 if b_kmajor else 1}"
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(n))
    asm = (
        f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{n + 2}, 0;\\n"\n'
        f'      "wgmma.mma_async.sync.aligned.m64n{bn}k{k}.f32.{ty}.{ty} {{{regs}}}, %{n}, %{n + 1}, {tail};\\n}}\\n"'
    )
    params = "uint64_t da, uint64_t db, int scale_d" if scale_arg else "uint64_t da, uint64_t db"
    return (
        f"__device__ __forceinline__ void {name}(float (&d)[{n}], {params}) {{\n"
        f'  asm volatile({asm}\n      : {outs}\n      : "l"(da), "l"(db), "r"({"scale_d" if scale_arg else 1}));\n}}\n'
    )


def operand_layouts(config: KernelConfig, b_kmajor: bool, a_kmajor: bool = True) -> tuple[bool, bool]:
    """The kernel's (B K-major, A MN-major) for the problem's operand layouts: the swapped product's B is A^T
    (K-major: a row-major a only) and its A is B^T, MN-major when B is row-major; otherwise A is MN-major when a is
    column-major (16-bit only)."""
    if config.swap_ab:
        if not a_kmajor:
            raise ValueError("the swapped product reads a as its K-major B operand: a must be row-major")
        return True, not b_kmajor
    return b_kmajor, not a_kmajor


def defines(config: KernelConfig, in_kind: str, out_kind: str, b_kmajor: bool, a_kmajor: bool = True) -> dict[str, int]:
    """The option values one cubin is built with (the ones left out are 0)."""
    kb, a_mn = operand_layouts(config, b_kmajor, a_kmajor)
    return {
        "IN_KIND": IN_KINDS[in_kind],
        "OUT_KIND": OUT_KINDS[out_kind],
        "BM": config.bm,
        "BN": config.bn,
        "BK": config.bk(in_kind),
        "STAGES": config.stages,
        "NC": config.nc,
        "USE_TMA": int(config.use_tma),
        "B_KMAJOR": int(kb),
        "CM": config.cm,
        "TMA_STORE": int(config.tma_store),
        "SPLITK": int(config.splitk),
        "HOIST": int(config.hoist),
        "SETMAXNREG": int(config.setmaxnreg),
        "PINGPONG": int(config.pingpong),
        "RELAXED": int(config.relaxed),
        "EPI_BUFS": config.epi_bufs,
        "PRODUCER_REGS": config.producer_regs,
        "CONSUMER_REGS": config.consumer_regs,
        **({"PROMOTE": 1} if config.promote else {}),  # (the switches below: left out when off, rendered as 0)
        **({"STREAMK": 1} if config.streamk else {}),
        **({"EPI_DEFER": 1} if config.epi_defer else {}),  # Build drops it for fp32 C unless spread (the plain build)
        **({"EPI_SPREAD": 1} if config.epi_spread else {}),
        **({"STREAMK_TRACE": 1} if config.streamk_trace else {}),
        **({"TIMELINE": 1} if config.timeline else {}),  # diagnostics only (bench/gemm_timeline.py)
        **({"SK_FUSED": 1} if config.splitk_fused else {}),
        **({"SK_PAIR": 1} if config.split_pair else {}),
        **({"TRANS_C": 1} if config.swap_ab else {}),
        **({"CLUSTER_N": 1} if config.cluster_n else {}),
        **({"LOCAL_EMPTY": 1} if config.local_empty else {}),  # B's (along N) / A's (along M) loads paced locally
        **({"A_MN": 1} if a_mn else {}),  # an MN-major A operand: column-major a, or swapped with row-major B
        **({"CPA": config.cpa} if config.cpa else {}),  # operands loaded with cp.async (bit 1 A, bit 2 B)
        **({"DIAG": config.diag} if config.diag else {}),  # diagnostics only (bench/gemm_bound.py)
    }


def render(config: KernelConfig, in_kind: str, out_kind: str, b_kmajor: bool, a_kmajor: bool = True) -> str:
    """Full CUDA source of one variant (what gets hashed, compiled and cached)."""
    config.check()
    d = defines(config, in_kind, out_kind, b_kmajor, a_kmajor)
    head = "".join(f"constexpr int {k} = {d.get(k, 0)};\n" for k in OPTIONS)
    head += "".join(f"constexpr int {k} = {v};\n" for k, v in host_sizes(config, in_kind, out_kind).items())
    head += f"#define TCF_CLUSTER_CTAS {cluster_ctas(config)}\n"
    # wgmma_half is only called by promoting fp8 builds (wgmma_tile_sd by stream-K builds), but a non-dependent name
    # in a discarded `if constexpr` branch must still be declared
    kb, a_mn = operand_layouts(config, b_kmajor, a_kmajor)
    wrappers = wgmma_wrapper(config.bn, in_kind, kb, a_mn=a_mn)
    wrappers += wgmma_wrapper(config.bn // 2, in_kind, kb, name="wgmma_half", scale_arg=True, a_mn=a_mn)
    # stream-K builds start each segment with scale-d 0 instead of zeroing the accumulators: ptxas serialises every
    # wgmma of the kernel (C7515) when zeroing instructions define them on one of several paths into the mainloop
    wrappers += wgmma_wrapper(config.bn, in_kind, kb, name="wgmma_tile_sd", scale_arg=True, a_mn=a_mn)
    body = template().replace("//@@WGMMA@@", wrappers)
    return head + body


def tag(config: KernelConfig, in_kind: str, out_kind: str, b_kmajor: bool, a_kmajor: bool = True) -> str:
    """A readable cache-file prefix for one build."""
    d = defines(config, in_kind, out_kind, b_kmajor, a_kmajor)
    layouts = ([] if a_kmajor else ["am"]) + ["bk" if b_kmajor else "bn"]
    parts = [f"{in_kind}_{out_kind}", *layouts, f"{config.bm}x{config.bn}x{d['BK']}s{config.stages}"]
    parts += [f"nc{config.nc}", "tma" if config.use_tma else "cpa", f"cm{config.cm}"]
    flags = (
        ("st", config.tma_store),
        ("sk", config.splitk),
        ("h", config.hoist),
        ("pp", config.pingpong),
        ("rx", config.relaxed),
        ("pr", config.promote),
        ("ed", config.epi_defer),
        ("es", config.epi_spread),
        ("stk", config.streamk),
        ("trace", config.streamk_trace),
        ("tl", config.timeline),
        ("sw", config.swap_ab),
        ("cn", config.cluster_n),
        ("le", config.local_empty),
        ("fsk", config.splitk_fused),
        ("pair", config.split_pair),
    )
    parts += [f for f, on in flags if on]
    if config.cpa:
        parts.append(f"ca{config.cpa}")
    if config.diag:
        parts.append(f"diag{config.diag}")
    if config.epi_bufs != 2:
        parts.append(f"e{config.epi_bufs}")
    if (config.producer_regs, config.consumer_regs) != (40, 232):
        parts.append(f"r{config.producer_regs}-{config.consumer_regs}")
    return "gemm_" + "_".join(parts)
