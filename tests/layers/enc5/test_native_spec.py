"""`tcforge spec` on the native kernel's own PTX (all loops unrolled): the layer's 1306 mma per warp, with the MLP's
20 odd/even phase pairs in the corrected shapes (docs/enc5-native.md explains the other differences).

The spec build (kernels/spec_plain.cu) turns off the hand-issued HMMA pairs (qv_f16a) and the MLP's shared-memory
weight ring (mlp_smem) so that every mma reads as the layer's m16n8k32 e4m3 with its weights loaded from global memory;
the shipped build's PTX is counted separately (kernels/spec_shipped.cu): the same mma, P1-P10's as two m16n8k16 f16
each."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tcforge.layers.enc5.gpu import kernel

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

TEST_KERNELS = Path(__file__).with_name("kernels")


def ptx_of(form: str, out: Path) -> Path:
    """nvcc -ptx of a test form (headers inlined as the launcher compiles them), all loops unrolled."""
    src = out.with_suffix(".cu")
    src.write_text(kernel.source_text(TEST_KERNELS / f"{form}.cu"))
    subprocess.run(["nvcc", "-ptx", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-std=c++17", "--use_fast_math",
                    "-I", str(kernel.INCLUDE_DIR), "-o", str(out), str(src)], check=True)
    return out


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> dict:
    from tcforge.ptx.analysis import analyse
    from tcforge.ptx.module import read_module_file

    ptx = ptx_of("spec_plain", Path(tmp_path_factory.mktemp("enc5ptx")) / "enc5_full.ptx")
    return analyse(read_module_file(str(ptx)), "enc5_spec_plain", block=(32, 1, 8)).to_dict()


def test_total_mma_count_equals_the_layer(spec: dict) -> None:
    # per warp of the original: P1–P10 10×24, P11 48, P12 48, P13–P20 8×20, P21–P60 40×20, P61 10
    assert sum(p["mma"] for p in spec["phases"]) == 10 * 24 + 48 + 48 + 8 * 20 + 40 * 20 + 10 == 1306


def test_mlp_phases_have_the_corrected_shapes(spec: dict) -> None:
    shapes = [(p["M"], p["N"], p["K"], p["mma"]) for p in spec["phases"]]
    assert shapes.count((16, 32, 160, 20)) == 20  # fc1 chunks: 16×32×160, 4 chains of 5
    assert shapes.count((16, 160, 32, 20)) >= 20 + 6  # fc2 chunks + Wo phases (the last two heads may merge)


def test_parameter_reads_are_the_originals(spec: dict) -> None:
    # the analysis's §1.1: extents +0 (v2.u32), input +8, W +40, arena +48, origins +80 (v2.u16), +88, +112
    assert spec["param_offsets"] == [0, 8, 40, 48, 80, 88, 112]
    types = {p["offset"]: p["type"] for p in spec["params"]}
    assert types[0] == "v2.u32" and types[80] == "v2.u16" and types[40] == "u64"


def test_shipped_build_issues_the_hmma_pairs_by_hand(tmp_path) -> None:
    # P1-P10 (10 x 24 per warp) become pairs of m16n8k16 f16; the other 1066 stay m16n8k32 e4m3
    ptx = ptx_of("spec_shipped", tmp_path / "enc5_shipped.ptx")
    text = ptx.read_text()
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") == 2 * 10 * 24
    assert text.count("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16") == 1306 - 10 * 24
    assert text.count("cp.async.cg.shared.global") > 0  # the MLP's weight ring


def test_split_kernel_spec_counts_each_ctas_half(tmp_path) -> None:
    """The 2-CTA-cluster kernel (all loops unrolled): per CTA 4 heads of P1-P12, half of every N = 160 phase and of
    fc1's hidden tiles: 1086 mma (P1-P10 as 480 hand-issued m16n8k16, 96 P11/P12, 80 P13-P20, 20 x 20 + 20 MLP, 10 P61),
    with P13-P20 as one 16 x 80 x 256 phase (the CTA's 80 columns, 8 chained heads) and the MLP in 20 phases."""
    from tcforge.ptx.analysis import analyse
    from tcforge.ptx.module import read_module_file

    ptx = ptx_of("spec_split", tmp_path / "enc5_split.ptx")
    text = ptx.read_text()
    # one head per warp: 6 m-tiles x 5 k-steps x 4 n-tiles x (Q, V), each as two m16n8k16
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") == 6 * 5 * 4 * 2 * 2
    spec = analyse(read_module_file(str(ptx)), "enc5_spec_split", block=(32, 1, 4)).to_dict()
    assert sum(p["mma"] for p in spec["phases"]) == 480 + 96 + 80 + 20 * 20 + 20 + 10 == 1086
    shapes = [(p["M"], p["N"], p["K"], p["mma"]) for p in spec["phases"]]
    assert shapes.count((16, 80, 256, 80)) == 1
    assert shapes.count((16, 96, 32, 12)) == 4 and shapes.count((16, 32, 96, 12)) == 4
    assert spec["param_offsets"] == [0, 8, 40, 48, 80, 88, 112]
