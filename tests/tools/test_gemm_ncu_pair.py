"""The ncu table of tools/gemm_ncu_pair.py without a GPU: a details-page CSV in the layout `ncu --csv --page details`
writes (profiler lines before the header included), one column per run of consecutive launches of one kernel."""

from __future__ import annotations

from pathlib import Path

from tools import gemm_ncu_pair as npair

HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def _row(launch: int, kernel: str, metric: str, unit: str, value: str) -> str:
    return (f'"{launch}","7","python3","h","{kernel}","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line '
            f'profiler metrics","{metric}","{unit}","{value}"')


def test_table_has_one_column_per_run_of_launches_with_medians(tmp_path: Path, capsys) -> None:
    rows = ["==PROF== Connected to process 707", HEAD]
    # bf16: ours twice, cuBLAS twice; fp16: ours twice (a second run of tcf_gemm, its own column)
    for launch, kernel, cycles in [(0, "tcf_gemm", "45,000"), (1, "tcf_gemm", "44,000"), (2, "nvjet_tst", "43,000"),
                                   (3, "nvjet_tst", "43,000"), (4, "tcf_gemm", "47,000"), (5, "tcf_gemm", "48,000")]:
        rows.append(_row(launch, kernel, "sm__cycles_elapsed.max", "cycle", cycles))
        rows.append(_row(launch, kernel, "smsp__inst_executed.sum", "inst", "n/a" if launch == 5 else "2,000"))
    path = tmp_path / "pair.csv"
    path.write_text("\n".join(rows) + "\n")
    npair.summarize(str(path))
    head, *body = capsys.readouterr().out.splitlines()
    assert head.split()[1:] == ["1:tcf_gemm", "2:nvjet_tst", "3:tcf_gemm"]
    cycles = next(line for line in body if line.startswith("sm__cycles_elapsed.max"))
    assert [float(x) for x in cycles.split()[-3:]] == [44500.0, 43000.0, 47500.0]
    inst = next(line for line in body if line.startswith("smsp__inst_executed.sum"))
    assert [float(x) for x in inst.split()[-3:]] == [2000.0, 2000.0, 2000.0]  # a non-number is skipped
