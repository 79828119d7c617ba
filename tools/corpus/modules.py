"""The corpus's modules: how each PTX is made (a Triton kernel with its signature, constexprs and options, or
the nvcc samples and teaching-ladder rungs), by module name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Triton:
    """A Triton kernel compiled for a GPUTarget: kernel function name, signature types, constexprs, options."""

    fn: str
    types: dict
    constexprs: dict
    arch: int
    warps: int
    stages: int = 2
    div16: tuple = ()  # parameters specialised as multiples of 16 (tt.divisibility), as Triton's launcher would


@dataclass(frozen=True)
class Nvcc:
    """tools/emulate_corpus_samples.cu (or a teaching-ladder rung: `rung`) through `nvcc -ptx -O3 -arch=sm_XX`."""

    arch: str
    rung: int | None = None


_MM = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "sam", "sbk", "scm")


def _mm(dtype: str, arch: int, bm: int, bn: int, bk: int, warps: int, stages: int, acc: str, group: int = 1,
        even: bool = True) -> Triton:
    types = dict(zip(_MM, [dtype, dtype, "*fp16"] + ["i32"] * 6, strict=True))
    cx = {"sak": 1, "sbn": 1, "scn": 1, "BM": bm, "BN": bn, "BK": bk, "GROUP": group, "ACC": acc}
    return Triton("matmul", types, cx, arch, warps, stages, _MM if even else ("a_ptr", "b_ptr", "c_ptr"))


_ATTN = dict(zip(("q_ptr", "k_ptr", "v_ptr", "o_ptr", "L", "scale"), ["*fp16"] * 4 + ["i32", "fp32"], strict=True))

MODULES: dict[str, Triton | Nvcc] = {
    "samples_sm80": Nvcc("80"),
    "samples_sm89": Nvcc("89"),
    "samples_sm90a": Nvcc("90a"),
    **{f"ladder_rung{r}_sm90a": Nvcc("90a", rung=r) for r in range(1, 10)},
    "mm_f16_f16acc_sm80_64x64x32": _mm("*fp16", 80, 64, 64, 32, 4, 3, "fp16"),
    "mm_f16_f16acc_sm80_128x128x64": _mm("*fp16", 80, 128, 128, 64, 8, 3, "fp16", group=2),
    "mm_f16_f16acc_sm89_64x32x64_ragged": _mm("*fp16", 89, 64, 32, 64, 2, 4, "fp16", even=False),
    "mm_f16_f16acc_sm80_16x32x16_w1": _mm("*fp16", 80, 16, 32, 16, 1, 2, "fp16"),
    "mm_e4m3_f16acc_sm89_64x64x64": _mm("*fp8e4nv", 89, 64, 64, 64, 4, 3, "fp16"),
    "mm_e4m3_f16acc_sm89_128x64x128_w8": _mm("*fp8e4nv", 89, 128, 64, 128, 8, 2, "fp16", group=2),
    "mm_e4m3_f16acc_sm89_32x32x64_ragged": _mm("*fp8e4nv", 89, 32, 32, 64, 2, 3, "fp16", even=False),
    "mm_f16_f32acc_sm80_128x128x64": _mm("*fp16", 80, 128, 128, 64, 4, 3, "fp32"),
    "mm_bf16_f32acc_sm80_64x64x32": _mm("*bf16", 80, 64, 64, 32, 4, 3, "fp32"),
    "mm_f16_f32acc_sm90_128x128x64": _mm("*fp16", 90, 128, 128, 64, 4, 3, "fp32"),  # wgmma, B MN-major
    "mm_bf16_f32acc_sm90_64x128x32": _mm("*bf16", 90, 64, 128, 32, 4, 3, "fp32"),
    "mm_f16_f16acc_sm90_64x64x64_ragged": _mm("*fp16", 90, 64, 64, 64, 4, 3, "fp16", even=False),
    "mm_e4m3_f32acc_sm90_64x128x128": _mm("*fp8e4nv", 90, 64, 128, 128, 4, 3, "fp32"),
    "mm_e4m3_f32acc_sm89_64x64x64": _mm("*fp8e4nv", 89, 64, 64, 64, 4, 3, "fp32"),
    "mm_f32_tf32_sm90_64x64x32": _mm("*fp32", 90, 64, 64, 32, 4, 3, "fp32"),  # wgmma tf32 (Triton's default)
    "attn_f16acc_causal_sm80": Triton("attn_fwd", _ATTN, {"D": 64, "BM": 64, "BN": 32, "ACC": "fp16", "CAUSAL": True,
                                                          "EXACT": True}, 80, 4, 2),
    "attn_f32acc_sm80": Triton("attn_fwd", _ATTN, {"D": 64, "BM": 64, "BN": 64, "ACC": "fp32", "CAUSAL": False,
                                                   "EXACT": False}, 80, 4, 2),
    "softmax_exact_sm80": Triton("softmax", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "stride": "i32"},
                                 {"BLOCK": 256, "EXACT": True}, 80, 4),
    "softmax_tl_exp_sm80": Triton("softmax", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "stride": "i32"},
                                  {"BLOCK": 128, "EXACT": False}, 80, 2),
    "layernorm_sm80": Triton("layernorm", {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                           "stats_ptr": "*fp32", "n": "i32", "eps": "fp32"}, {"BLOCK": 512}, 80, 4),
    "reduce_rows_sm89": Triton("reduce_rows", {"x_ptr": "*fp32", "xi_ptr": "*i32", "out_ptr": "*fp32",
                                               "outi_ptr": "*i32", "cum_ptr": "*i32", "n": "i32"},
                               {"BLOCK": 256}, 89, 4),
    "im2col_gluon_sm90": Triton("im2col_tiles", {"in_desc": "im2col:fp16[32,32]", "out_ptr": "*fp16"},
                                {"P": 5, "Q": 6, "STRIDE": 2, "PAD": 1, "S": 3, "BM": 32, "BC": 32}, 90, 4),
    "conv_gluon_sm90": Triton("conv_fprop", {"x_desc": "im2col:fp16[64,32]", "w_desc": "desc:fp16[32,64]",
                                             "out_ptr": "*fp32", "M": "i32"},
                              {"COUT": 64, "C": 64, "P": 5, "Q": 6, "STRIDE": 2, "PAD": 1, "R": 3, "S": 3, "BM": 64,
                               "BN": 64, "BC": 32}, 90, 4),
    "desc_mm_f16_sm90": Triton("desc_matmul", {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32",
                                               "N": "i32", "K": "i32"}, {"BM": 64, "BN": 64, "BK": 32}, 90, 4, 3),
    **{f"ws_mm_{name}_sm90": Triton("ws_matmul", {"a_ptr": t, "b_ptr": t, "c_ptr": "*fp32", "M": "i32", "N": "i32",
                                                  "K": "i32"}, {"BM": 128, "BN": 64, "BK": 64}, 90, 4, 3)
       for name, t in (("f16", "*fp16"), ("e4m3", "*fp8e4nv"))},
}
