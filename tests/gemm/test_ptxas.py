"""CI without a GPU: every variant compiles for sm_90a with no spill or stack frame and no wgmma serialisation (ptxas
remarks C7515 / C7511), its SASS holding HGMMA/QGMMA and what each build adds."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from tcforge.gemm import codegen
from tcforge.gemm.build import Build, all_builds, build_all
from tcforge.gemm.variants import LADDER, SUPPORTED, SWEEP, VARIANTS
from tcforge.runtime.tools import find_tool

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


def _representative() -> list[Build]:
    """One build per variant (fp16 -> fp32, row-major a and B) plus the last rung's fp8 and column-major-B builds,
    and the column-major-a builds (MN-major A operand) of the cp.async baseline, the last rung and the small tile."""
    from tcforge.gemm.variants import SMALL_AUTO

    out = []
    for v in LADDER + SWEEP:
        builds = all_builds([v], a_col=False)
        out += [b for b in builds if (b.in_kind, b.out_kind, b.b_kmajor) == ("fp16", "fp32", False)]
    last = LADDER[-1]
    out += [b for b in all_builds([last], a_col=False) if (b.in_kind, b.b_kmajor) in (("e4m3", True), ("bf16", True))]
    for v in (LADDER[0], last, VARIANTS[SMALL_AUTO]):
        out += [b for b in all_builds([v]) if not b.a_kmajor and (b.in_kind, b.out_kind) == ("bf16", "bf16")]
    return out


def _assert_clean(results: list) -> None:
    bad = {b.tag(): m.stats["tcf_gemm"] for b, m in results if m.stats["tcf_gemm"].spills}
    assert not bad, f"register spills / stack frames: {bad}"
    serialized = [b.tag() for b, m in results if m.wgmma_serialized]
    assert not serialized, f"ptxas serialised the wgmma pipeline (C7515 / C7511): {serialized}"
    for _, m in results:
        assert m.stats["tcf_gemm"].registers <= 255


def _clean_sass(builds: list[Build]) -> list[tuple[Build, str]]:
    """Compile the builds (asserting no spill and no wgmma serialisation), then each one's SASS text; skips the test
    where cuobjdump is missing (after the compile checks have run)."""
    results = build_all(builds, workers=os.cpu_count() or 2)
    _assert_clean(results)
    if find_tool("cuobjdump") is None:
        pytest.skip("no cuobjdump here")
    return [(b, m.sass()) for b, m in results]


@needs_nvcc
@pytest.mark.slow
def test_representative_builds_do_not_spill() -> None:
    _assert_clean(build_all(_representative(), workers=os.cpu_count() or 2))


@needs_nvcc
@pytest.mark.slow
def test_every_variant_every_input_type_does_not_spill() -> None:
    """Each variant with each input type's default output and every operand layout (`tcforge gemm build` does every
    build)."""
    builds = [b for b in all_builds() if b.out_kind == SUPPORTED[b.in_kind][0]]
    _assert_clean(build_all(builds, workers=os.cpu_count() or 2))


@needs_nvcc
@pytest.mark.parametrize("kinds", ["plain", pytest.param("mn_major_a_fused_splitk", marks=pytest.mark.slow)])
def test_sass_uses_wgmma_tma_and_setmaxnreg(kinds: str) -> None:
    """The last rung's fp16 -> fp32 (B MN-major) and e4m3 -> bf16 builds issue HGMMA / QGMMA at N = 256, TMA loads
    and stores and setmaxnreg, with no local memory; --slow adds their MN-major-A and fused split-K builds."""
    builds = [b for b in all_builds([LADDER[-1]]) if not b.config.splitk and (b.in_kind, b.out_kind, b.b_kmajor) in (
        ("fp16", "fp32", False), ("e4m3", "bf16", True))]
    plain = [b for b in builds if b.a_kmajor and not b.config.splitk_fused]
    assert len(plain) == 2 and len(builds) == 6
    for b, sass in _clean_sass(plain if kinds == "plain" else [b for b in builds if b not in plain]):
        assert ("QGMMA.64x256x32" if b.in_kind == "e4m3" else "HGMMA.64x256x16") in sass
        assert "UTMALDG" in sass and "UTMASTG" in sass and "USETMAXREG" in sass
        assert "LDL" not in sass and "STL" not in sass


@needs_nvcc
@pytest.mark.parametrize("outputs", ["fp32", pytest.param("others", marks=pytest.mark.slow)])
def test_promoting_fp8_build_sums_each_stage_in_two_halves(outputs: str) -> None:
    """`promote`: per stage two chains of m64n128 QGMMA, each starting with scale-d off (RZ, !UPT), no spill (the
    fp32-output build, the most registers, by default; the bf16 / fp16 outputs and fused split-K with --slow); its
    16-bit builds are rung 9's own."""

    builds = list(all_builds([VARIANTS["promote"]]))
    assert all(b.config.promote == (b.in_kind == "e4m3") for b in builds)
    def key(b: Build) -> tuple:
        return b.in_kind, b.out_kind, b.b_kmajor, b.config.splitk, b.config.splitk_fused

    hoist = {key(b): b.config for b in all_builds([VARIANTS["hoist"]])}
    assert all(b.config == hoist[key(b)] for b in builds if b.in_kind != "e4m3")
    fp8 = [b for b in builds if b.in_kind == "e4m3"]
    first = [b for b in fp8 if b.out_kind == "fp32" and not b.config.splitk_fused]
    assert len(fp8) == 6 and len(first) == 1
    for _, sass in _clean_sass(first if outputs == "fp32" else [b for b in fp8 if b not in first]):
        q = [ln for ln in sass.splitlines() if "QGMMA" in ln]
        assert len(q) == 2 * 4 and all("QGMMA.64x128x32.F32.E4M3.E4M3" in ln for ln in q), q
        assert sum("RZ, !UPT" in ln for ln in q) == 2  # the first k-step of each half ignores the old partial


@needs_nvcc
@pytest.mark.slow  # hoist_ed: a variant `auto` does not pick (it runs hoist_es)
def test_deferred_epilogue_stores_between_a_wgmma_group_and_its_wait() -> None:
    """hoist_ed: the previous tile's stmatrix staging and TMA stores sit in the mainloop after a k-tile's last
    wgmma (gsb0) and before the wait for the group before it, i.e. they run while the tensor core works; the tile's
    end packs the accumulators (F2FP) and stores nothing there."""

    builds = [b for b in all_builds([VARIANTS["hoist_ed"]], a_col=False)
              if (b.in_kind, b.out_kind, b.b_kmajor) in (("bf16", "bf16", False), ("e4m3", "bf16", True))]
    assert len(builds) == 2
    for b, sass in _clean_sass(builds):
        lines = [ln for ln in sass.splitlines() if "GMMA" in ln or "STSM" in ln or "UTMASTG" in ln
                 or "WARPGROUP.DEPBAR" in ln or "F2FP" in ln]
        # (rung 9's lean loop peels a tile's first k-tile, the one that flushes, from the rest: more k-tile bodies)
        first_store = next(i for i, ln in enumerate(lines) if "STSM" in ln)
        groups = [i for i, ln in enumerate(lines[:first_store]) if "gsb0" in ln and "GMMA" in ln]
        wait1 = next(i for i, ln in enumerate(lines) if i > first_store and "WARPGROUP.DEPBAR.LE gsb0, 0x1" in ln)
        assert groups, b.tag()  # stores under the in-flight group: after a k-tile's last wgmma, before its wait
        assert not any("GMMA" in ln or "DEPBAR" in ln for ln in lines[groups[-1] + 1:first_store]), b.tag()
        between = lines[first_store:wait1]
        assert sum("STSM" in ln for ln in between) == 16 and sum("UTMASTG" in ln for ln in between) == 4, b.tag()
        tail = lines[next(i for i, ln in enumerate(lines) if "WARPGROUP.DEPBAR.LE gsb0, 0x0" in ln):]
        assert sum("F2FP" in ln for ln in tail[:80]) >= 64, b.tag()  # the tile's end: 128 values packed


def _branches_above(line: str, address: int) -> bool:
    """A SASS line that branches to an address before `address` (a loop's back edge)."""
    target = re.search(r" BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)", line)
    return target is not None and int(target.group(1), 16) < address


@needs_nvcc
@pytest.mark.parametrize("fp8", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_spread_epilogue_stages_one_held_sub_tile_per_k_tile(fp8: bool) -> None:
    """hoist_es: under each k-tile's in-flight wgmma group the mainloop stages one held sub-tile (a branch per held
    sub-tile, each its stores and one TMA store: 16-bit C 4 stmatrix, fp32 C 8 st.shared.v2 per warp), in every
    k-tile's loop (not a peeled first one), and the tile's end stages 4 of fp32 C's 8 sub-tiles at once (the fp8
    build with --slow)."""

    cases = {("bf16", "bf16"): (4, "STSM.16.", 4, 0), ("fp16", "fp32"): (4, "STS.64 ", 8, 4),
             ("e4m3", "fp32"): (4, "STS.64 ", 8, 4)}
    builds = [b for b in all_builds([VARIANTS["hoist_es"]], a_col=False) if (b.in_kind, b.out_kind) in cases
              and b.b_kmajor == (b.in_kind == "e4m3") and (b.in_kind == "e4m3") == fp8]  # fp8 with --slow
    assert len(builds) == (1 if fp8 else 2)
    for b, sass in _clean_sass(builds):
        held, store, per_sub, at_end = cases[(b.in_kind, b.out_kind)]
        lines = [ln for ln in sass.splitlines() if "GMMA" in ln or store in ln or "UTMASTG" in ln
                 or "WARPGROUP.DEPBAR" in ln or " BRA " in ln]
        first_group = next(i for i, ln in enumerate(lines) if "gsb0" in ln and "GMMA" in ln)
        wait1 = next(i for i, ln in enumerate(lines) if i > first_group and "WARPGROUP.DEPBAR.LE gsb0, 0x1" in ln)
        under = lines[first_group + 1:wait1]  # the k-tile's body after its last wgmma: the flush branches
        assert not any("GMMA" in ln for ln in under), b.tag()
        # every k-tile flushes (hoist_ed flushes in a peeled first k-tile, then runs a loop without it): after the
        # wait, the loop branches back above this group before any other wgmma
        group_at = int(re.search(r"/\*([0-9a-f]{4,})\*/", lines[first_group]).group(1), 16)
        after = next(ln for ln in lines[wait1 + 1:] if "GMMA" in ln or _branches_above(ln, group_at))
        assert " BRA " in after, (b.tag(), after)
        assert sum("UTMASTG" in ln for ln in under) == held, b.tag()
        assert sum(store in ln for ln in under) == held * per_sub, b.tag()
        # the tile's end (after the last k-tile's wait for every group): fp32's sub-tiles staged at once
        end = lines[next(i for i, ln in enumerate(lines) if "WARPGROUP.DEPBAR.LE gsb0, 0x0" in ln):]
        first_gmma = next((i for i, ln in enumerate(end) if "GMMA" in ln), len(end))
        assert sum("UTMASTG" in ln for ln in end[:first_gmma]) >= at_end, b.tag()


@needs_nvcc
@pytest.mark.parametrize("other_b", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_320_column_tile_runs_an_n256_and_an_n64_wgmma_per_k_step(other_b: bool) -> None:
    """t320: per k-step and consumer one 64x256 and one 64x64 HGMMA/QGMMA (the 160 accumulators within ptxas's 168
    registers, no spill), B over either layout (16-bit MN-major and fp8 K-major B by default, 16-bit K-major B
    with --slow)."""

    builds = [b for b in all_builds([VARIANTS["t320"]], a_col=False) if not b.config.splitk_fused
              and (b.in_kind, b.out_kind) in (("fp16", "fp32"), ("e4m3", "bf16"))
              and (b.b_kmajor == (b.in_kind == "e4m3")) != other_b]  # 16-bit B MN-major, fp8 K-major; --slow: swapped
    assert len(builds) == (1 if other_b else 2)
    for b, sass in _clean_sass(builds):
        big, small = ("QGMMA.64x256x32", "QGMMA.64x64x32") if b.in_kind == "e4m3" else ("HGMMA.64x256x16",
                                                                                          "HGMMA.64x64x16")
        assert sass.count(big) == sass.count(small) > 0, b.tag()


@needs_nvcc
@pytest.mark.slow
def test_diagnostic_builds_leave_out_what_they_name() -> None:
    """bench/gemm_bound.py's builds of rung 9: no loads (1) still loads (the ring's first fill) and keeps its
    HGMMAs; no stores (2) keeps the same HGMMAs (its stores stay in the binary behind a branch never taken); no wgmma
    (4) has no real HGMMA; all spill-free."""
    from dataclasses import replace

    r9 = LADDER[-1].config
    sass = {b.config.diag: text for b, text in _clean_sass([Build(replace(r9, diag=d), "fp16", "fp32", False)
                                                            for d in (1, 2, 4)])}
    def hgmmas(s: str) -> int:
        return sum("HGMMA.64x256x16" in ln for ln in s.splitlines())

    assert "UTMALDG" in sass[1] and "UTMASTG" in sass[1] and hgmmas(sass[1]) >= 4
    # no stores: the stores stay in the binary behind a branch never taken, so the accumulators stay live (with them
    # gone ptxas replaced every wgmma by a dummy 64x8x16 one); the same HGMMAs as rung 9 itself
    assert hgmmas(sass[2]) == hgmmas(sass[1])
    # no wgmma: ptxas keeps one zero-register HGMMA.64x8x16 per commit group (1/32 of one 64x256x16), no real one
    assert hgmmas(sass[4]) == 0 and "UTMALDG" in sass[4] and "UTMASTG" in sass[4]
    assert all("RZ, !UPT" in ln for ln in sass[4].splitlines() if "HGMMA" in ln)


@needs_nvcc
@pytest.mark.slow
def test_timeline_builds_add_only_their_stamps() -> None:
    """bench/gemm_timeline.py's builds (rung 9, n96c4): spill-free, the same HGMMAs, TMA loads and stores as the
    plain build, and %globaltimer reads (S2UR / CS2R of SR_GLOBALTIMERLO/HI) that the plain build does not have."""
    from dataclasses import replace


    for name, bk in (("hoist", False), ("n96c4", True)):
        cfg = VARIANTS[name].config
        (_, plain), (_, tl) = _clean_sass([Build(cfg, "bf16", "bf16", bk), Build(replace(cfg, timeline=True),
                                                                               "bf16", "bf16", bk)])
        for op in ("HGMMA", "UTMALDG", "UTMASTG"):
            assert plain.count(op) == tl.count(op) > 0, (name, op)
        assert "GLOBALTIMER" not in plain and "GLOBALTIMER" in tl, name


@needs_nvcc
def test_rung9_epilogue_stages_with_shared_stores_and_per_warp_tma_stores() -> None:
    """Rung 9's staged epilogue: 16-bit C through stmatrix (16 STSM per warp and tile), fp32 C through st.shared.v2
    (64 per warp and tile), no generic stores; each warp issues its own TMA store per sub-tile (4 for bf16, 8 for
    fp32) and no named barrier is left in the kernel; the main loop keeps one m64n256 chain of KSTEPS wgmmas."""
    r9 = LADDER[-1].config
    builds = [Build(r9, "bf16", "bf16", False), Build(r9, "fp16", "fp32", False), Build(r9, "e4m3", "bf16", True)]
    sass = [text.splitlines() for _, text in _clean_sass(builds)]

    def count(lines: list[str], op: str) -> int:
        return sum(op in ln for ln in lines)

    bf16, fp32, fp8 = sass
    assert count(bf16, "STSM.16.M88.4") == 16 and count(bf16, "UTMASTG") == 4
    assert count(fp32, "STS.64") == 64 and count(fp32, "UTMASTG") == 8 and count(fp32, "STSM") == 0
    assert count(fp8, "STSM.16.M88.4") == 16 and count(fp8, "UTMASTG") == 4
    for lines in (bf16, fp32, fp8):
        assert count(lines, "ST.E") == 0 and count(lines, "BAR.SYNC") == 0
        assert count(lines, "GMMA.64x128") == 0
    assert count(bf16, "HGMMA.64x256x16") % 4 == 0 and count(fp8, "QGMMA.64x256x32") % 4 == 0


@needs_nvcc
def test_rung9_wgmma_descriptors_stay_in_uniform_registers() -> None:
    """Rung 9's hoisted descriptors live in uniform registers: between the wgmmas of one chain (up to its gsb0
    commit) no R2UR moves a descriptor over from vector registers (the template before computed them from threadIdx:
    18 such moves in the bf16 build, ~20 instructions per wgmma per warp; docs/gemm.md "Same design, more cycles")."""
    r9 = LADDER[-1].config
    builds = [Build(r9, "bf16", "bf16", False), Build(r9, "fp16", "fp32", True), Build(r9, "e4m3", "bf16", True)]
    for b, text in _clean_sass(builds):
        moves, chain, wgmmas = 0, False, 0
        for ln in text.splitlines():
            if "GMMA.64x256" in ln:
                wgmmas += 1
                chain = "gsb0" not in ln
            elif chain and "R2UR" in ln:
                moves += 1
        assert wgmmas >= 4 and moves == 0, (b.tag(), wgmmas, moves)


@needs_nvcc
def test_rung9_k_tile_loop_is_lean() -> None:
    """Rung 9's lean loops (docs/gemm.md, "The producer's instruction chain"): a consumer k-tile — from its
    WARPGROUP.ARRIVE to the wait that retires the k-tile before it — holds its wgmmas and at most ~30 instructions
    around them (ring position by a compare, descriptors by constant adds; 39-55 with a k-tile counter divided by the
    stage count and descriptors rebuilt per wgmma), for rung 9's tile and the small swapped ones."""
    import re
    import statistics


    want = {("hoist", "fp16", "fp32", False), ("sw56n2", "bf16", "bf16", True), ("sw16", "e4m3", "bf16", True)}
    builds = [b for name in ("hoist", "sw56n2", "sw16") for b in all_builds([VARIANTS[name]], a_col=False)
              if (name, b.in_kind, b.out_kind, b.b_kmajor) in want and not b.config.splitk_fused]
    assert len(builds) == 3
    for b, sass in _clean_sass(builds):
        ins = [m.group(1) for m in (re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", ln) for ln in sass.splitlines()) if m]
        sizes, start = [], None
        for i, x in enumerate(ins):
            if "WARPGROUP.ARRIVE" in x:
                start = i
            elif "WARPGROUP.DEPBAR.LE gsb0, 0x1" in x and start is not None:
                sizes.append(i - start + 1)
                start = None
        assert sizes and statistics.median(sizes) <= 32, (b.tag(), sizes)


@needs_nvcc
@pytest.mark.parametrize("slow", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_cluster_builds_leave_by_the_producer_tail_not_a_cluster_barrier(slow: bool) -> None:
    """A cluster build meets its peers once, after the barriers' set-up (one UCGABAR_ARV / UCGABAR_WAIT pair): at the
    end each multicast producer waits for every CTA's consumers to release its last slots instead (no CTA leaves while
    a peer may still arrive on its barriers). The pair split-K build, whose CTAs read each other's shared memory,
    keeps its barrier at the end too; a build without a cluster has none. By default one build of each kind, with
    --slow all seven."""
    from tcforge.gemm.variants import pair_config

    cases = [(VARIANTS[n].config, "bf16", bk, 1) for n, bk in
             (("hoist", False), ("cluster2", False), ("n96c4", True), ("sw16c4", True), ("sw32n2", True))]
    cases += [(pair_config(VARIANTS["sw16"].config), "bf16", True, 2), (VARIANTS["tuned"].config, "bf16", False, 0)]
    if not slow:  # by default one build of each kind: a multicast cluster, the pair split-K, no cluster
        cases = [cases[0], cases[5], cases[6]]
    sass = _clean_sass([Build(cfg, kind, "bf16", bk) for cfg, kind, bk, _ in cases])
    for (*_, meets), (build, text) in zip(cases, sass, strict=True):
        ops = [ln.split()[1].rstrip(";") for ln in text.splitlines() if "UCGABAR" in ln]
        assert ops == ["UCGABAR_ARV", "UCGABAR_WAIT"] * meets, (build.tag(), ops)


@needs_nvcc
def test_host_sizes_are_checked_by_the_kernel() -> None:
    """The sizes the host launches with (codegen.host_sizes, from KernelConfig) are static_asserted against the
    kernel's own: a host-side slot size that drifts from the kernel's stops the build."""
    from tcforge.runtime.compile import CompileError, compile_cuda

    b = next(iter(all_builds([LADDER[-1]], a_col=False)))
    good = f"constexpr int HOST_SK_SLOT = {b.config.slot_floats};"
    source = b.source()
    assert good in source and set(codegen.host_sizes(b.config, b.in_kind, b.out_kind)) <= set(source.split())
    with pytest.raises(CompileError, match="slot differs from the kernel's"):
        compile_cuda(source.replace(good, f"constexpr int HOST_SK_SLOT = {b.config.slot_floats + 4};"),
                     name="host_sizes_drift")


@needs_nvcc
@pytest.mark.parametrize("cpas", [(0, 3), pytest.param((1, 2), marks=pytest.mark.slow)])
def test_cp_async_operands_replace_their_tma_loads(cpas: tuple[int, int]) -> None:
    """`cpa` (bit 1 A, bit 2 B): each such operand's loads are 16-byte cp.async copies (LDGSTS: t64's 64-row A 8 per
    thread and k-tile, its 128-row B 16) whose completion arrives on the stage's barrier, in place of its TMA loads;
    the consumers fence the proxies after each wait; spill-free. With cpa 0 the build has none of it (cpa 0 and 3 by
    default, 1 and 2 with --slow)."""
    from dataclasses import replace

    t64 = VARIANTS["t64"].config
    want = {0: (0, 0, True), 1: (8, 1, True), 2: (16, 1, True), 3: (24, 2, False)}  # LDGSTS, arrives, TMA loads
    builds = [Build(replace(t64, cpa=c), "bf16", "bf16", True) for c in cpas]
    for (b, sass), (ldgsts, arrives, tma) in zip(_clean_sass(builds), [want[c] for c in cpas], strict=True):
        assert sass.count("LDGSTS.E.BYPASS.128") == ldgsts, b.tag()
        assert sass.count("ARRIVES.LDGSTSBAR.64") == arrives, b.tag()
        assert ("UTMALDG" in sass) == tma, b.tag()
        assert ("FENCE.VIEW.ASYNC.S" in sass) and (sass.count("FENCE.VIEW.ASYNC.S") > 3) == (b.config.cpa > 0), b.tag()
