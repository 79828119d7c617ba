"""Real compiler output: CUDA kernels with inline-PTX MMAs (nvcc 13, committed with their sources and commands) and
Triton matmuls (compiled without a GPU by tools/ptx/gen_triton_ptx.py); each test states the kernel's true table."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tcforge.ptx.analysis import Analysis
from tcforge.ptx.module import read_module, read_module_file

KEYS = ("first", "last", "M", "N", "K", "mma", "chains", "grid", "instruction", "weight", "bias", "epilogue")
E4M3 = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"

FUSED = [
    # P1: 2 m-tiles x 4 n-tiles, per-warp weight slot W + 4096*tid.z
    {"first": 37, "last": 44, "M": 32, "N": 32, "K": 32, "mma": 8, "chains": 8, "grid": "full", "instruction": E4M3,
     "weight": {"base": "param+8", "lo": 0, "hi": 528, "terms": {"%laneid": 16, "%tid.z": 4096}}, "bias": None,
     "epilogue": 35},
    # P2: 2 chains of 3 (K = 96), bias words from the lane table (laneid<<2)&12
    {"first": 80, "last": 85, "M": 16, "N": 16, "K": 96, "mma": 6, "chains": 2, "grid": "full", "instruction": E4M3,
     "weight": {"base": "param+8", "lo": 20480, "hi": 21520, "terms": {"%laneid": 16}},
     "bias": {"base": "param+8", "lo": 16384, "hi": 16404, "terms": {"(%laneid<<2)&12": 1}}, "epilogue": 14},
    # P3: bf16 m16n8k16 with f32 accumulate, one chain of 2; B uses the first 8 bytes of each 16-byte load
    {"first": 100, "last": 101, "M": 16, "N": 8, "K": 32, "mma": 2, "chains": 1, "grid": "full",
     "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
     "weight": {"base": "param+8", "lo": 24576, "hi": 25096, "terms": {"%laneid": 16}}, "bias": None, "epilogue": 9},
]


def _phases(an: Analysis) -> list[dict]:
    return [{k: p[k] for k in KEYS} for p in an.to_dict()["phases"]]


def test_fused_chains(ptx_data) -> None:
    m = read_module_file(ptx_data / "fused_chains.ptx")
    an = Analysis(m, m.function("fused_chains"), block=(32, 1, 4))
    assert _phases(an) == FUSED
    d = an.to_dict()
    assert d["param_offsets"] == [0, 8, 16, 24, 32]
    assert d["image_extent"] == {"param+0": None, "param+8": 25600}  # x is indexed by %ctaid.x: unbounded
    st = {pr.phase.index: {e.stage for e in pr.stages} for pr in an.phases}
    assert st == {1: {"next-operand-loads", "e4m3-requantise"},
                  2: {"next-operand-loads", "guarded-scatter", "warp-shuffle"}, 3: {"global-store"}}
    assert {e.stage for e in an.prologue_stages} == {"next-operand-loads", "shared-staging", "barrier"}
    src = {pr.phase.index: {k: dict(v) for k, v in pr.sources.items()} for pr in an.phases}
    assert src[2]["A"] == {"P1 (e4m3)": 16, "shared:_ZZ12fused_chainsE5stage": 8}
    assert src[3]["A"] == {"P2": 4, "shared:_ZZ12fused_chainsE5stage": 4}
    # without a block shape, .maxntid 128 bounds the thread count, not each dimension: tid.z may reach 63
    wide = Analysis(m, m.function("fused_chains"))
    assert wide.phases[0].weight.extent == 63 * 4096 + 31 * 16 + 528


def test_wgmma_descriptor_chains(ptx_data) -> None:
    m = read_module_file(ptx_data / "wgmma_chain.ptx")
    an = Analysis(m, m.function())
    (p,) = an.to_dict()["phases"]
    assert (p["M"], p["N"], p["K"], p["mma"], p["chains"], p["chain_length"], p["grid"]) == (128, 32, 64, 8, 2, 4,
                                                                                             "full")
    assert p["instruction"] == "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16"
    assert p["weight"] is None and p["bias"] is None
    assert {e.stage for e in an.prologue_stages} == {"shared-staging", "barrier"}
    src = an.phases[0].sources  # descriptors are built from the shared tiles' addresses
    assert (dict(src["A"]), dict(src["B"])) == ({"&_ZZ11wgmma_chainE2sa": 8}, {"&_ZZ11wgmma_chainE2sb": 8})


def test_tcgen05_instruction_descriptor(ptx_data) -> None:
    m = read_module_file(ptx_data / "tcgen05_chain.ptx")
    an = Analysis(m, m.function())
    (p,) = an.to_dict()["phases"]
    assert (p["M"], p["N"], p["K"], p["mma"], p["chains"], p["chain_length"]) == (128, 64, 64, 4, 1, 4)
    assert p["instruction"] == "tcgen05.mma.cta_group::1.kind::f16"
    assert dict(an.phases[0].sources["A"]) == {"&_ZZ13tcgen05_chainE2sa": 4}


def test_wmma_fragments(ptx_data) -> None:
    m = read_module_file(ptx_data / "wmma_chain.ptx")
    an = Analysis(m, m.function())
    (p,) = an.to_dict()["phases"]
    assert (p["M"], p["N"], p["K"], p["mma"], p["chains"], p["chain_length"], p["grid"]) == (32, 32, 32, 8, 4, 2,
                                                                                             "full")
    assert p["instruction"] == "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"
    # four 16x16 f16 tiles of a 32x32 column-major B with ldm = 32: the whole 2048-byte matrix
    assert p["weight"] == {"base": "param+8", "lo": 0, "hi": 2048, "terms": {}}
    assert an.image_extent() == {"param+0": 2048, "param+8": 2048}
    assert dict(an.phases[0].sources["A"]) == {"global:param+0": 64}


TRITON = {
    "matmul_f16_sm80.ptx": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 64, 64, 64, 128, 32),
    "matmul_f16_sm90a.ptx": ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", 128, 128, 64, 8, 2),
    "matmul_e4m3_sm89.ptx": ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 32, 32, 64, 16, 8),
}


# triton/: Triton 3.9 here, without a GPU; triton_h200/: Triton 3.6 on the H200 (tools/ptx/gen_triton_ptx.py DIR)
@pytest.mark.parametrize("corpus", ["triton", "triton_h200"])
@pytest.mark.parametrize("name", sorted(TRITON))
def test_triton_matmuls(ptx_data, corpus, name) -> None:
    path = ptx_data / corpus / name
    if not path.exists():
        pytest.skip(f"{path} not generated (python3 -m tools.ptx.gen_triton_ptx tests/data/ptx/{corpus})")
    m = read_module_file(path)
    an = Analysis(m, m.function("matmul_kernel"))
    d = an.to_dict()
    (p,) = d["phases"]  # one phase per K-loop body
    assert (p["instruction"], p["M"], p["N"], p["K"], p["mma"], p["chains"], p["grid"]) == (*TRITON[name], "full")
    (loop,) = d["loops"]
    assert loop["header"] <= p["first"] and p["last"] <= loop["latch"]
    src = an.phases[0].sources
    if not name.endswith("sm90a.ptx"):  # register operands come from shared memory (ldmatrix); C is loop-carried
        assert set(src["A"]) == {"shared:global_smem"} and set(src["B"]) == {"shared:global_smem"}
        assert set(src["C"]) == {"P1"}
    else:
        assert set(src["A"]) == {"&global_smem"} and set(src["B"]) == {"&global_smem"}


CUDA = [("fused_chains.cu", ["-arch=sm_89"]), ("wgmma_chain.cu", ["-gencode=arch=compute_90a,code=sm_90a"]),
        ("tcgen05_chain.cu", ["-gencode=arch=compute_100a,code=sm_100a"]), ("wmma_chain.cu", ["-arch=sm_80"])]


@pytest.mark.parametrize(("src", "flags"), CUDA)
def test_committed_ptx_matches_a_fresh_nvcc_build(ptx_data, tmp_path, src, flags) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    out = tmp_path / src.replace(".cu", ".ptx")
    subprocess.run([nvcc, "-ptx", *flags, "-O3", str(ptx_data / src), "-o", str(out)], check=True, timeout=120)
    fresh = read_module(out.read_text(), str(out))
    committed = read_module_file(ptx_data / src.replace(".cu", ".ptx"))
    a = Analysis(fresh, fresh.function(), block=(32, 1, 4)).to_dict()["phases"]
    b = Analysis(committed, committed.function(), block=(32, 1, 4)).to_dict()["phases"]
    assert [{k: p[k] for k in KEYS} for p in a] == [{k: p[k] for k in KEYS} for p in b]


def test_debug_builds_parse(ptx_data) -> None:
    dbg = read_module_file(ptx_data / "fused_chains_debug.ptx")  # -G: debug sections, .func helpers, .local depots
    assert [(f.kind, f.has_body) for f in dbg.functions] == [("func", True)] * 3 + [("entry", True)]
    assert "debug" in dbg.target and dbg.function("fused_chains").decls[0].space == "local"
    line = read_module_file(ptx_data / "fused_chains_lineinfo.ptx")  # -lineinfo: .loc ... inlined_at between statements
    a = Analysis(line, line.function(), block=(32, 1, 4))
    assert [{k: p[k] for k in KEYS} for p in a.to_dict()["phases"]] == FUSED
