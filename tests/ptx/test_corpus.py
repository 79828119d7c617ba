"""The PTX corpus, each module with its true table stated here. Real compiler output: CUDA kernels with inline-PTX MMAs
(nvcc 13, committed with their sources and commands) and Triton matmuls (compiled without a GPU by
tools/ptx/gen_triton_ptx.py). The enc5-shaped generated module (tools/ptx/gen_enc5_ptx.py, ~51,000 lines): the analysis
must reproduce the enc5 analysis's corrected phase table (§2.1 with §2.2's M/N/K and the 10304 MLP stride), its
statement conventions, the per-warp slot and lane terms, the parameter block, the image extent (431,136 with the +12
lane term) and the cut ABI, and do it in under 3 s of CPU time; its reading (another implementation) agrees with
tcforge.layers.enc5's descriptor on every phase's range, shape, chains, epilogue and operand offsets."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from tools.ptx import gen_enc5_ptx

from tcforge.layers.enc5.descriptor import PHASES
from tcforge.ptx.analysis import Analysis, analyse
from tcforge.ptx.module import read_module, read_module_file
from tcforge.ptx.report import render_json, render_text

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


ENC5_ENTRY = "cuda_dldn_engine_swin_enc5_kernel"


@pytest.fixture(scope="module")
def enc5_ptx(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("enc5") / "enc5.ptx"
    path.write_text(gen_enc5_ptx.generate())
    return path


@pytest.fixture(scope="module")
def enc5_analysis(enc5_ptx):
    return analyse(read_module_file(enc5_ptx), ENC5_ENTRY, block=(32, 1, 8))

LANE = {"%laneid": 16}
SLOT = {"%laneid": 16, "%tid.z": 27648}
TABLE = {"(%laneid<<2)&12": 1}

# The analysis's §2.1 rows as printed by the old tool: (first, last, mma, weight lo..hi_old, bias lo..hi_old, epi),
# hi_old being the start of the last 4-byte word; §2.2 gives the corrected M, N, K and the chain counts.
OLD_ROWS = {
    1: (7554, 7577, 24, (320, 844), None, 7), 2: (7585, 7608, 24, (5440, 5964), None, 7),
    3: (7616, 7639, 24, (1344, 1868), None, 7), 4: (7647, 7670, 24, (6464, 6988), None, 7),
    5: (7678, 7701, 24, (2368, 2892), None, 7), 6: (7709, 7732, 24, (7488, 8012), None, 7),
    7: (7740, 7763, 24, (3392, 3916), None, 7), 8: (7771, 7794, 24, (8512, 9036), None, 7),
    9: (7802, 7825, 24, (4416, 4940), None, 7), 10: (7833, 7856, 24, (9536, 10060), None, 171),
    11: (8028, 8075, 48, None, (10560, 22348), 3844), 12: (11920, 11967, 48, None, None, 274),
    13: (12242, 12261, 20, (22848, 27468), None, 27), 14: (12289, 12308, 20, (50496, 55116), None, 27),
    15: (12336, 12355, 20, (78144, 82764), None, 27), 16: (12383, 12402, 20, (105792, 110412), None, 27),
    17: (12430, 12449, 20, (133440, 138060), None, 27), 18: (12477, 12496, 20, (161088, 165708), None, 27),
    19: (12524, 12543, 20, (188736, 193356), None, 27), 20: (12571, 12590, 20, (216384, 221004), None, 1029),
    21: (13620, 13639, 20, (222144, 226764), (227264, 227312), 321),
    22: (13961, 13980, 20, (227328, 231948), None, 92),
    23: (14073, 14092, 20, (232768, 237388), (237888, 237936), 172),
    24: (14265, 14284, 20, (237952, 242572), None, 92),
    25: (14377, 14396, 20, (243072, 247692), (248192, 248240), 172),
    59: (19545, 19564, 20, (418240, 422860), (423360, 423408), 172),
    60: (19737, 19756, 20, (423424, 428044), None, 299),
    61: (20056, 20065, 10, (428544, 430604), (431104, 431120), 234),
}
STRIDE = 10304  # §2.1 says 10240; its own offsets (243072 - 232768, 418240 = 232768 + 18 * 10304) say 10304


def _old_row(p: int):
    if p in OLD_ROWS:
        return OLD_ROWS[p]
    if p % 2:  # odd MLP phase: the 23/25 pattern
        k = (p - 23) // 2
        w = 232768 + STRIDE * k
        return (14073 + 304 * k, 14092 + 304 * k, 20, (w, w + 4620), (w + 5120, w + 5168), 172)
    k = (p - 24) // 2
    w = 237952 + STRIDE * k
    return (14265 + 304 * k, 14284 + 304 * k, 20, (w, w + 4620), None, 92)


def _corrected(p: int) -> tuple[int, int, int, int]:
    """(M, N, K, chains) from §2.2."""
    if p <= 10:
        return 96, 32, 32, 24
    if p == 11:
        return 64, 96, 32, 48
    if p == 12:
        return 64, 32, 96, 16
    if p <= 20 or p % 2 == 0:
        return 16, 160, 32, 20
    if p == 61:
        return 16, 16, 160, 2
    return 16, 32, 160, 4


def expected_phase(p: int) -> dict:
    first, last, mma, w, b, epi = _old_row(p)
    M, N, K, chains = _corrected(p)
    weight = None if w is None else {"base": "param+40", "lo": w[0], "hi": w[1] + 4, "terms": SLOT if p <= 10 else LANE}
    bias = None if b is None else {"base": "param+40", "lo": b[0], "hi": b[1] + 4, "terms": SLOT if p == 11 else TABLE}
    return {"index": p, "first": first, "last": last, "M": M, "N": N, "K": K, "mma": mma, "chains": chains,
            "grid": "full", "instruction": "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
            "weight": weight, "bias": bias, "epilogue": epi}


def test_generated_module_is_valid_ptx(enc5_ptx, tmp_path) -> None:
    import shutil
    import subprocess

    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas not installed")
    proc = subprocess.run([ptxas, "-arch=sm_89", str(enc5_ptx), "-o", str(tmp_path / "enc5.cubin")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr[:2000]


def test_stride_sanity() -> None:
    assert _old_row(59)[3][0] == 418240 and _old_row(60)[3][0] == 423424 and _old_row(58)[3][0] == 413120


def test_corrected_phase_table(enc5_analysis) -> None:
    d = enc5_analysis.to_dict()
    assert len(d["phases"]) == 61
    keys = ("index", "first", "last", "M", "N", "K", "mma", "chains", "grid", "instruction", "weight", "bias",
            "epilogue")
    for got in d["phases"]:
        exp = expected_phase(got["index"])
        assert {k: got[k] for k in keys} == exp, got["index"]
        assert got["M"] // 16 * got["N"] // 8 * got["K"] // 32 == got["mma"]  # §2.2's rank check holds everywhere
    ext = {p["index"]: p["operand_extent"] for p in d["phases"]}
    assert ext[1] == {"weight": 848 + 31 * 16 + 7 * 27648, "bias": None}  # slot term over tid.z < 8
    assert ext[61] == {"weight": 430608 + 31 * 16, "bias": 431124 + 12}  # lane table term +12: 431136


def test_statement_and_line_conventions(enc5_analysis) -> None:
    fn = enc5_analysis.fn
    st = fn.statements
    assert (fn.line, len(st)) == (1018, 20299)
    assert st[20298].opcode == "ret" and st[20298].line == 51175 and st[20297].label == "$L__BB1_370"
    # E1 is the analysis's 7-statement run s7578..s7584: laneid, mul.wide, add, add +5440, ld, add +5952, ld
    e1 = [s.opcode for s in st[7577:7584]]
    assert e1 == ["mov.u32", "mul.wide.u32", "add.s64", "add.s64", "ld.weak.global.ca.v4.u32", "add.s64",
                  "ld.weak.global.ca.v4.u32"]
    assert st[7580].operands[2].value == 5440 and st[7582].operands[2].value == 5952
    # a 4-line mma is one statement whose range names its last line too
    p1 = enc5_analysis.phases[0]
    assert st[7553].end_line == st[7553].line + 3 and p1.last_line == st[7576].line + 3
    assert (st[8].opcode, st[9].opcode) == ("ld.param.u64", "cvta.to.global.u64")  # s9 / s10


def test_parameter_block_extent_and_abi(enc5_analysis) -> None:
    d = enc5_analysis.to_dict()
    assert d["param_offsets"] == [0, 8, 40, 48, 80, 88, 112]
    types = {r["offset"]: r["type"] for r in d["params"]}
    assert types == {0: "v2.u32", 8: "u64", 40: "u64", 48: "u64", 80: "v2.u16", 88: "u64", 112: "u64"}
    assert d["image_extent"] == {"param+8": None, "param+40": 431136}
    abi = d["cut_abi"]
    assert abi["param_block_bytes"] == 144 and abi["launch_bounds"] == {"maxntid": [32, 1, 8]}
    assert abi["shared"] == [{"name": "_ZZ33cuda_dldn_engine_swin_enc5_kernel33DldnEngineSwinEncParamsStructBaseE4smem",
                              "bytes": 16384, "align": 4}]
    reg = abi["region"]
    assert (reg["first"], reg["last"], reg["mma"], reg["phases"]) == (7554, 20065, 1306, 61)
    d61 = [r for c in enc5_analysis.phases[60].phase.chains for r in enc5_analysis.phases[60].phase.mmas[c[-1]].d]
    assert set(d61) <= set(reg["live_out"])  # the four returned accumulators
    assert {"%r1", "%r3", "%r9", "%r11547", "%rd3", "%rd138"} <= set(reg["live_in"])


def test_stages(enc5_analysis) -> None:
    st = {pr.phase.index: {e.stage for e in pr.stages} for pr in enc5_analysis.phases}
    assert st[1] == {"next-operand-loads"}
    assert {"cubic-softmax", "reciprocal", "transpose", "warp-shuffle", "e4m3-requantise"} <= st[11]
    assert {"shared-staging", "barrier", "e4m3-requantise", "next-operand-loads"} <= st[12]
    assert {"rms-norm", "warp-shuffle", "next-operand-loads"} <= st[20]
    assert all("clamped-cubic" in st[p] for p in range(21, 60, 2))
    assert "guarded-scatter" in st[60]
    assert {"ex2-softmax", "texture-read", "surface-write", "shared-staging"} <= st[61]
    pro = {e.stage for e in enc5_analysis.prologue_stages}
    assert {"shared-staging", "e4m3-requantise", "next-operand-loads"} <= pro
    src = {pr.phase.index: pr.sources for pr in enc5_analysis.phases}
    assert dict(src[13]["C"]) == {"global:param+40": 40}
    assert dict(src[24]["C"]) == {"P22": 40} and dict(src[23]["A"]) == {"P20+global:param+40 (e4m3)": 80}


def test_other_phase_rules(enc5_ptx) -> None:
    m = read_module_file(enc5_ptx)
    fn = m.function(ENC5_ENTRY)
    adjacent = Analysis(m, fn, "adjacent", (32, 1, 8))
    assert len(adjacent.phases) == 61
    dataflow = Analysis(m, fn, "dataflow", (32, 1, 8)).to_dict()["phases"]
    # the issue's rule alone fuses the Q/V projections (96 x 64 x 160) and the eight heads' output projection
    assert len(dataflow) == 26
    assert [(p["M"], p["N"], p["K"], p["mma"], p["chains"]) for p in dataflow[:4]] == [
        (96, 64, 160, 240, 48), (64, 96, 32, 48, 48), (64, 32, 96, 48, 16), (16, 160, 256, 160, 20)]


def test_speed_51k_lines_under_3s_cpu(enc5_ptx) -> None:
    t0 = time.process_time()
    m = read_module_file(enc5_ptx)
    an = Analysis(m, m.function(ENC5_ENTRY), "stream", (32, 1, 8))
    doc = json.loads(render_json(an))
    render_text(an)
    elapsed = time.process_time() - t0
    assert m.lines >= 51000 and len(doc["phases"]) == 61
    assert elapsed < 3.0, f"{elapsed:.2f} s"


def test_text_table(enc5_analysis) -> None:
    text = render_text(enc5_analysis)
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("# stmt range"))
    assert lines[head].split() == ["#", "stmt", "range", "M", "N", "K", "tiles", "mma", "grid", "weight", "bytes",
                                   "bias", "bytes", "epi"]
    assert lines[head + 1].split() == ["1", "s7554-s7577", "96", "32", "32", "24", "24", "full",
                                       "320..848+27648*%tid.z", "-", "7"]
    assert lines[head + 21].split() == ["21", "s13620-s13639", "16", "32", "160", "4", "20", "full", "222144..226768",
                                        "227264..227316", "321"]


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_other_formats_render(enc5_analysis, fmt) -> None:
    from tcforge.ptx.report import render_markdown

    out = render_markdown(enc5_analysis) if fmt == "md" else render_json(enc5_analysis)
    assert ("| E11 | s8076-s11919 | 3844 |" in out) if fmt == "md" else json.loads(out)["entry"] == ENC5_ENTRY


def test_descriptor_matches_the_spec_tool(enc5_analysis) -> None:
    tool_phases = enc5_analysis.to_dict()["phases"]
    assert len(tool_phases) == len(PHASES) == 61
    for got, p in zip(tool_phases, PHASES, strict=True):
        assert (got["index"], got["first"], got["last"]) == (p.index, p.first, p.last)
        assert (got["M"], got["N"], got["K"], got["mma"], got["chains"]) == (p.m, p.n, p.k, p.mma, p.chains), p.index
        assert got["epilogue"] == p.epilogue.count, p.index
        w = got["weight"]
        assert (None if w is None else w["lo"]) == (None if p.weight_bytes is None else p.weight_bytes[0]), p.index
        b = got["bias"]
        assert (None if b is None else b["lo"]) == (None if p.bias_bytes is None else p.bias_bytes[0]), p.index
        if p.index <= 10:
            assert w["terms"].get("%tid.z") == 27648  # the per-warp weight slot
