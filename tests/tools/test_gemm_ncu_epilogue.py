"""The ncu summary of tools/gemm_ncu_epilogue.py without a GPU: a two-kernel source-page CSV in the layout
`ncu --page source --csv --print-source sass` writes, the share of stall samples on once-per-tile instructions."""

from __future__ import annotations

from pathlib import Path

from tools import gemm_ncu_epilogue as ne

HEAD = ('"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",'
        '"Instructions Executed","stall_barrier","stall_wait","stall_barrier (Not Issued)"')


def test_summary_counts_samples_on_once_per_tile_instructions(tmp_path: Path, capsys) -> None:
    rows = [
        '"Kernel Name","tcf_gemm",', HEAD,
        '"0x10","HGMMA","90","90","65536","80","10","0"',      # main loop: not once per tile
        '"0x20","STSM","6","6","4096","2","4","0"',            # epilogue
        '"0x30","UTMASTG","4","4","4096","4","0","0"',
        '"Kernel Name","nvjet_x",', HEAD,
        '"0x10","QGMMA","50","50","8192","50","0","0"',
    ]
    csv_path = tmp_path / "sass.csv"
    csv_path.write_text("\n".join(rows) + "\n")
    ne.summarize(str(csv_path))
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert "samples    100" in out[0] and "instructions: 2 holding 10.0% of samples" in out[0]
    assert "barrier 6" in out[0] and "wait 4" in out[0]
    assert "instructions: 0 holding 0.0%" in out[1]
