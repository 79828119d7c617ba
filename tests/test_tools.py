"""The contributor tools of tools/ and bench/ on what runs without a GPU: the enc5 device check's build specs, SM
placement summary (stamps 12/13 = globaltimer at CTA start/end, 14 = %smid, 15 = launch-order index) and reference
frames (full and digest-only files carry the same outputs; compaction turns one into the other without changing what
the device compares); the enc5 source comparison's baselines; the GEMM's SASS comparison (a stand-in cuobjdump), ncu
table and the device check's spec bit-identity argument checks; bench/gemm_timeline.py's per-CTA stamp summary on
hand-made stamps; bench/gemm_small.py's variant entries; bench/eager.py's table against docs/runtime.md's."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import numpy as np
import pytest
from bench import eager, gemm_small, gemm_timeline
from tools import (
    enc5_device_check,
    enc5_probes,
    enc5_refs,
    enc5_source_compare,
    gemm_device_check,
    gemm_ncu_pair,
    gemm_sass_compare,
)

from tcforge.layers.enc5.gpu import kernel


def test_build_specs_and_the_noreorder_pseudo_option() -> None:
    builds = enc5_device_check.parse_builds("hopper_split:;hopper_split_occ3:-lineinfo +noreorder")
    assert builds == [("hopper_split", ()), ("hopper_split_occ3", ("-lineinfo", "+noreorder"))]
    assert enc5_device_check.nvcc_options(builds[1][1]) == ("-lineinfo",)
    assert enc5_device_check.reorder(builds[1][1]) is False and enc5_device_check.reorder(builds[0][1]) is True


def test_sm_load_groups_split_ctas_by_sm_and_uses_the_launch_index() -> None:
    # 3 windows of a split launch (8 stamp rows each: CTA 0's warps 0..3, CTA 1's 4..7) on 4 SMs; window 2 was
    # dispatched first (launch index 0), so its CTAs are launch CTAs 0 and 1
    st = np.zeros((3, 8, 16), np.int64)
    launch_of_window = {0: 1, 1: 2, 2: 0}
    for w in range(3):
        for r in range(2):
            c = launch_of_window[w]
            rows = slice(4 * r, 4 * r + 4)
            st[w, rows, 12] = 1_000 + 100 * c
            st[w, rows, 13] = 11_000 + 1_000 * w
            st[w, rows, 14] = (2 * c + r) % 4
            st[w, rows, 15] = c
    out = enc5_probes.sm_load(st, split=True)
    assert out["1_ctas"]["sms"] == 2 and out["2_ctas"]["sms"] == 2
    # SM 0 holds launch CTAs 0 (window 2) and 4 (window 1): the last ends 12 us after the first CTA started
    assert out["most_loaded"]["0"] == [(0, 2, 0.0, 12.0), (4, 1, 0.2, 11.0)]
    assert out["2_ctas"]["end_us_max"] == 12.0
    assert out["first_pass_sms"] == [0, 1, 2, 3, 0, 1]


def test_digest_frame_matches_the_full_frame(tmp_path: Path) -> None:
    full, dig = tmp_path / "A_1_2.npz", tmp_path / "C_1_2.npz"
    enc5_refs.reference_case(str(full), 9, 8, 1, 2, "hopper", 1, 2, False)
    enc5_refs.reference_case(str(dig), 9, 8, 1, 2, "hopper", 1, 2, False, digest_only=True)
    z, d = np.load(full), np.load(dig)
    assert set(d.files) == {"meta"}
    meta = json.loads(str(d["meta"]))
    assert meta["arena_sha256"] == enc5_refs.digest(z["arena"])
    assert meta["surface_sha256"] == enc5_refs.digest(z["surface"])
    assert meta["arena_bytes"] == z["arena"].size == 5 * 8 * 9 * 32
    # origin (1, 2): the last window column/row is partly outside, so poisoned pixels survive
    untouched = int(np.count_nonzero(np.all(z["surface"] == enc5_refs.SURFACE_POISON, axis=-1)))
    assert meta["untouched_px"] == untouched > 0
    # a changed byte changes the digest (what the device compares)
    a = z["arena"].copy()
    a[7] ^= 1
    assert enc5_refs.digest(a) != meta["arena_sha256"]
    loaded = enc5_refs._load_ref(dig)
    assert loaded[4] is None and loaded[5] is None and loaded[0]["wseed"] == 1


def test_compaction_keeps_the_first_frames_full(tmp_path: Path) -> None:
    for s in (5, 6):
        enc5_refs.reference_case(str(tmp_path / f"A_{s}_{s}.npz"), 9, 8, 0, 0, "ada", s, s, False)
    before = np.load(tmp_path / "A_6_6.npz")
    assert enc5_refs.compact_refs(tmp_path, keep=1) == 0
    assert "arena" in np.load(tmp_path / "A_5_5.npz").files
    after = np.load(tmp_path / "A_6_6.npz")
    meta = json.loads(str(after["meta"]))
    assert set(after.files) == {"meta"} and meta["arena_sha256"] == enc5_refs.digest(before["arena"])
    assert not list(tmp_path.glob("*.part*"))


def test_single_file_baseline_keeps_each_forms_entry_and_shape(tmp_path: Path) -> None:
    base = tmp_path / "enc5_base.cu"
    for name, idx in (("hopper", 0), ("hopper_split", 5), ("hopper_split_occ3", 7), ("hopper_split_timing", 6)):
        f, opts = enc5_source_compare.baseline_form(base, name)
        assert opts == (f"-DENC5_VARIANT={idx}",) and f.path == base
        assert (f.entry, f.block, f.cluster, f.dynamic_smem) == (kernel.form(name).entry, kernel.form(name).block,
                                                                 kernel.form(name).cluster,
                                                                 kernel.form(name).dynamic_smem)


def test_folder_baseline_reads_the_form_files() -> None:
    f, opts = enc5_source_compare.baseline_form(kernel.KERNELS, "hopper_split_occ3")
    assert opts == () and f == kernel.FORMS["hopper_split_occ3"]


def _fake_cuobjdump(tmp: Path) -> str:
    """A script that prints a listing whose code lines are the cubin's own bytes (so same bytes, same SASS)."""
    tool = tmp / "cuobjdump"
    tool.write_text('#!/bin/sh\necho "Fatbin elf code: $2"\necho "code for sm_90a"\ncat "$2"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return str(tool)


def test_pairs_builds_by_tag_and_reports_the_ones_whose_sass_differs(tmp_path: Path, capsys) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "gemm_a-111.cubin").write_text("IMAD R1\n")
    (new / "gemm_a-222.cubin").write_text("IMAD R1\n")  # other hash, same code
    (old / "gemm_b-111.cubin").write_text("IMAD R1\n")
    (new / "gemm_b-333.cubin").write_text("IADD3 R1\n")  # changed
    (new / "gemm_c-444.cubin").write_text("HGMMA\n")  # new build
    assert gemm_sass_compare.by_tag(str(new)) == {"gemm_a": [str(new / "gemm_a-222.cubin")],
                                                   "gemm_b": [str(new / "gemm_b-333.cubin")],
                                                   "gemm_c": [str(new / "gemm_c-444.cubin")]}
    assert gemm_sass_compare.main(["compare", str(old), str(new), "--cuobjdump", _fake_cuobjdump(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 common tags, 1 identical SASS; 1 new tags" and len(out) == 2
    assert out[1].startswith("DIFF gemm_b - ")   # then what still agrees (instruction count, opcodes, order)


def test_a_missing_cache_is_refused_with_its_name(tmp_path: Path, capsys) -> None:
    assert gemm_sass_compare.main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert "nope is not a directory" in capsys.readouterr().err


HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def _row(launch: int, kernel: str, metric: str, unit: str, value: str) -> str:
    return (f'"{launch}","7","python3","h","{kernel}","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line '
            f'profiler metrics","{metric}","{unit}","{value}"')


def test_table_has_one_column_per_run_of_launches_with_medians(tmp_path: Path, capsys) -> None:
    rows = ["==PROF== Connected to process 707", HEAD]
    # bf16: ours twice, cuBLAS twice; fp16: ours twice (a second run of tcf_gemm, its own column)
    for launch, name, cycles in [(0, "tcf_gemm", "45,000"), (1, "tcf_gemm", "44,000"), (2, "nvjet_tst", "43,000"),
                                 (3, "nvjet_tst", "43,000"), (4, "tcf_gemm", "47,000"), (5, "tcf_gemm", "48,000")]:
        rows.append(_row(launch, name, "sm__cycles_elapsed.max", "cycle", cycles))
        rows.append(_row(launch, name, "smsp__inst_executed.sum", "inst", "n/a" if launch == 5 else "2,000"))
    path = tmp_path / "pair.csv"
    path.write_text("\n".join(rows) + "\n")
    gemm_ncu_pair.summarize(str(path))
    head, *body = capsys.readouterr().out.splitlines()
    assert head.split()[1:] == ["1:tcf_gemm", "2:nvjet_tst", "3:tcf_gemm"]
    cycles = next(line for line in body if line.startswith("sm__cycles_elapsed.max"))
    assert [float(x) for x in cycles.split()[-3:]] == [44500.0, 43000.0, 47500.0]
    inst = next(line for line in body if line.startswith("smsp__inst_executed.sum"))
    assert [float(x) for x in inst.split()[-3:]] == [2000.0, 2000.0, 2000.0]  # a non-number is skipped


def test_default_lists_parse() -> None:
    shapes = gemm_device_check.parse_shapes(gemm_device_check.SHAPES)
    assert shapes[0] == (4096, 4096, 1024) and shapes[-1] == (300, 500, 16) and len(shapes) == 5
    combos = gemm_device_check.parse_combos(gemm_device_check.COMBOS)
    assert combos[0] == ("fp16", "fp32", False) and ("e4m3", "bf16", True) in combos and len(combos) == 6


@pytest.mark.parametrize("bad", ["4096x4096", "0x5x5", "ax2x3", "4x4x4x4"])
def test_malformed_shape_named(bad: str) -> None:
    with pytest.raises(ValueError, match=bad):
        gemm_device_check.parse_shapes(f"8x8x8,{bad}")


@pytest.mark.parametrize("bad", ["fp16:fp32", "fp64:fp32:row", "fp16:int8:col", "fp16:fp32:diag", "e4m3:bf16:row"])
def test_malformed_type_pair_named(bad: str) -> None:
    with pytest.raises(ValueError, match=bad):
        gemm_device_check.parse_combos(bad)


@pytest.mark.parametrize(("variants", "says"), [
    ("hoist", "two specs at least"),
    ("hoist_es,hoist@diag=2", "computes no C"),
    ("hoist_es,nosuch", "no variant 'nosuch'"),
    ("hoist_es,hoist@epi_bufs=x", "neither an integer"),
])
def test_refused_before_any_launch(variants: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        gemm_device_check.main(["--spec-bits", variants])
    assert e.value.code == 2 and says in capsys.readouterr().err


def _cta(entry: int, setup: int, a: int, b: int, first: int, done: int, stored: int, exit_: int) -> list[int]:
    row = [0] * gemm_timeline.SLOTS
    row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[15] = entry, setup, a, b, first, done, stored, exit_
    row[8], row[9], row[10] = first, done + 100, stored + 100  # the second consumer warpgroup, 0.1 us later
    return row


def test_summary_of_two_ctas() -> None:
    base = 10**12  # %globaltimer nanoseconds: only differences count
    rows = [_cta(base, base + 500, base + 600, base + 650, base + 2500, base + 23000, base + 24000, base + 25000),
            _cta(base + 200, base + 700, base + 900, base + 800, base + 3000, base + 24000, base + 25200,
                 base + 26000),
            [0] * gemm_timeline.SLOTS]  # a CTA slot past the grid: ignored
    s = gemm_timeline.summarize(rows)
    assert s["ctas"] == 2
    assert s["stamps_us"]["entry"] == {"min": 0.0, "median": 0.1, "max": 0.2}
    assert s["stamps_us"]["wg0_mainloop_done"] == {"min": 23.0, "median": 23.5, "max": 24.0}
    assert s["stamps_us"]["wg1_stored"]["max"] == pytest.approx(25.3)
    assert "wg2_first_stage" not in s["stamps_us"]
    # per CTA: set-up 0.5 / 0.5; first stage after the earlier producer's first load: 1.9 / 2.2; mainloop 20.5 /
    # 21.0; epilogue 1.0 / 1.2; exit wait 1.0 / 0.8
    assert s["phases_us"]["setup"] == {"median": 0.5, "max": 0.5}
    assert s["phases_us"]["first_stage_wait"]["median"] == pytest.approx(2.05)
    assert s["phases_us"]["first_stage_wait"]["max"] == pytest.approx(2.2)
    assert s["phases_us"]["mainloop"] == {"median": 20.75, "max": 21.0}
    assert s["phases_us"]["epilogue"]["max"] == pytest.approx(1.2)
    assert s["phases_us"]["exit_wait"]["median"] == pytest.approx(0.9)
    assert s["span_us"] == pytest.approx(26.0)
    m = gemm_timeline.median_of([s, s, {**s, "span_us": 99.0}])
    assert m["span_us"] == pytest.approx(26.0) and m["phases_us"]["mainloop"]["median"] == 20.75
    # without a cluster the exit stamp is the producer's (it leaves early): the span ends at the last stores, and no
    # exit wait is counted
    early = [_cta(base, base + 300, base + 400, base + 400, base + 2000, base + 20000, base + 21000, base + 900)]
    e = gemm_timeline.summarize(early)
    assert e["span_us"] == pytest.approx(21.1) and "exit_wait" not in e["phases_us"]


def test_a_launch_without_stamps_is_refused() -> None:
    with pytest.raises(ValueError, match="no CTA wrote an entry stamp"):
        gemm_timeline.summarize([[0] * gemm_timeline.SLOTS] * 4)


@pytest.mark.parametrize(("entry", "want"), [
    ("auto", ("auto", "auto", None)), ("sw16#4@fused", ("sw16", "fused", 4)),
    ("hoist@planes", ("hoist", "planes", None)),
    ("t64@cpa=3", ("t64@cpa=3", "auto", None)), ("t64@cpa=3#1@pair", ("t64@cpa=3", "pair", 1)),
    ("hoist@diag=2+stages=3#2", ("hoist@diag=2+stages=3", "auto", 2)),
])
def test_gemm_small_reads_split_modes_forced_splits_and_experiment_specs(entry: str, want: tuple) -> None:
    """NAME[@field=value+...][#S][@MODE]: a trailing @MODE is a split mode only where it names one."""
    assert gemm_small.parse_variant(entry) == want


def test_the_eager_table_in_the_docs_is_the_baselines() -> None:
    rendered = eager.table(json.loads(Path("bench/baselines/runtime.json").read_text())["eager_h100"]).splitlines()
    doc = Path("docs/runtime.md").read_text().splitlines()
    assert len(rendered) == 13 and [line for line in rendered if line not in doc] == []
    assert "| `matmul` 1000³ bf16 | 11.2 · 12.3 (11.5 · 12.6) | 1.10 | 0.85 | 0.86 |" in rendered  # 0.845 half up


@pytest.mark.parametrize("spec", ["nope.json", "bench/baselines/runtime.json:no_such_key", "README.md"])
def test_eager_table_of_no_result_is_one_line(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert eager.main(["--table", spec]) == 2
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith(f"bench.eager: error: --table {spec}: not a written result")


def test_jit_entries_split_keeps_declarations_and_functions_per_entry() -> None:
    """tools/jit_entries.py: each entry alone with the module's header, declarations and every .func; each piece reads
    back as a module holding exactly that entry."""
    from tools.jit_entries import split

    from tcforge.ptx.module import read_module

    ptx = """.version 8.0
.target sm_90a
.address_size 64
.global .align 4 .u32 table[4] = {1, 2, 3, 4};
.func (.param .b32 r) twice(.param .b32 x)
{
	.reg .b32 %r<2>;
	ld.param.b32 %r0, [x];
	add.s32 %r1, %r0, %r0;
	st.param.b32 [r], %r1;
	ret;
}
.visible .entry first(.param .u64 p)
{
	ret;
}
.visible .entry second(.param .u64 q)
{
	.reg .b32 %r<3>;
	ld.global.u32 %r0, [table];
	ret;
}
"""
    parts = split(ptx)
    assert list(parts) == ["first", "second"]
    for name, text in parts.items():
        module = read_module(text, name)
        assert [f.name for f in module.functions if f.kind == "entry"] == [name]
        assert "twice" in [f.name for f in module.functions] and ".global .align 4 .u32 table[4]" in text


@pytest.mark.slow
def test_mufu_tool_host_side_with_a_stand_in_cupy(tmp_path: Path, monkeypatch) -> None:
    """tools/truth/mufu.py's host side (launch loops, files, keys) with kernels that do nothing (sin / cos: fill
    tables that one quarter gives): every file it writes goes through --pack, so a device run is not spent on a
    Python slip; a cos table off the quarter is not packed."""
    import sys
    import types

    from tools.truth import mufu

    from tcforge.numerics import mufu_tables

    quarter = np.arange(1 << 23, dtype=np.uint32)

    class Device(np.ndarray):
        def get(self) -> np.ndarray:
            return np.array(self).view(np.ndarray)

    def on_device(a: np.ndarray) -> Device:
        return np.asarray(a).view(Device)

    class Module:
        def __init__(self, **_: object) -> None:
            pass

        def get_function(self, name: str):
            if name != "trig_fill":
                return lambda *_args: None

            def fill(_grid, _block, args) -> None:  # sin / cos: whole tables that one quarter gives
                args[2][:] = mufu_tables.trig_table(quarter, "cos" if int(args[0]) else "sin")
            return fill

    runtime = types.SimpleNamespace(deviceSynchronize=lambda: None, getDeviceProperties=lambda _i: {"name": b"stub"})
    cupy = types.SimpleNamespace(zeros=lambda n, dt: on_device(np.zeros(n, dt)),
                                 full=lambda n, v, dt: on_device(np.full(n, v, dt)), asarray=on_device,
                                 uint32=np.uint32, int8=np.int8, int16=np.int16, RawModule=Module,
                                 cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert mufu.main(["--out", str(tmp_path / "mufu.npz")]) == 0
    assert sorted(f.name for f in tmp_path.iterdir()) == ["mufu.npz", "mufu_cos.npz", "mufu_sin.npz"]
    archive = tmp_path / "tables.npz"
    np.savez(archive, rcp_corr=np.zeros(4, np.int8))
    for name in ("mufu.npz", "mufu_sin.npz", "mufu_cos.npz"):
        assert mufu.main(["--pack", str(tmp_path / name), "--archive", str(archive)]) == 0
    shipped = {"sqrt_corr", "rcp64h_corr", "rsq64h_corr", "lg2_t0_d1", "lg2_t1_d1", "trig_quarter_d1"}
    with np.load(archive) as z:
        assert shipped <= set(z.files) and "sin_t_d1" not in z.files
        np.testing.assert_array_equal(np.cumsum(z["trig_quarter_d1"].astype(np.int64)), quarter)
    cos = dict(np.load(tmp_path / "mufu_cos.npz"))
    cos["cos_t_d1"][5] += 1  # first differences: every bucket from 5 on one off
    np.savez(tmp_path / "bad_cos.npz", **cos)
    assert mufu.main(["--pack", str(tmp_path / "bad_cos.npz"), "--archive", str(archive)]) == 1
