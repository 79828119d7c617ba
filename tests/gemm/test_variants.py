"""The ladder's configs: every rung builds within sm_90's limits, renders a kernel, and split-K triggers where meant."""

from __future__ import annotations

import re

import pytest

from tcforge.gemm import codegen
from tcforge.gemm.build import all_builds, configs_of
from tcforge.gemm.variants import LADDER, MAX_SMEM, SWEEP, VARIANTS, choose_splits


def test_ladder_has_nine_cumulative_rungs() -> None:
    assert [v.rung for v in LADDER] == list(range(1, 10))
    assert not LADDER[0].config.use_tma and LADDER[1].config.use_tma
    assert LADDER[2].config.bn == 256 and LADDER[2].config.setmaxnreg and LADDER[2].config.nc == 2
    assert LADDER[3].config.cm == 2 and LADDER[4].config.tma_store and LADDER[5].config.bk_bytes == 128
    assert LADDER[6].persistent and LADDER[6].group_m > 1 and LADDER[7].splitk_auto and LADDER[8].config.hoist
    assert VARIANTS["r6"] is LADDER[5]


@pytest.mark.parametrize("variant", LADDER + SWEEP, ids=lambda v: v.name)
def test_every_config_fits(variant) -> None:  # noqa: ANN001
    for cfg in configs_of(variant):
        cfg.check()
        assert cfg.smem_bytes() <= MAX_SMEM
        assert cfg.threads in (256, 384)


def test_rendered_source_defines_and_wgmma_operands() -> None:
    cfg = VARIANTS["bk64"].config
    src = codegen.render(cfg, "fp16", "fp32", False)
    assert "#define BK 64\n" in src and "#define CM 2\n" in src and "#define TMA_STORE 1\n" in src
    assert "m64n256k16.f32.f16.f16" in src and "p, 1, 1, 0, 1;" in src  # B transposed (MN-major)
    assert len(re.findall(r'"\+f"\(d\[\d+\]\)', src)) == 128
    fp8 = codegen.render(cfg, "e4m3", "bf16", True)
    assert "#define BK 128\n" in fp8 and "m64n256k32.f32.e4m3.e4m3" in fp8 and "p, 1, 1;" in fp8


def test_split_k_only_when_tiles_leave_sms_idle() -> None:
    cfg = VARIANTS["splitk"].config
    assert choose_splits(cfg, 4096, 4096, 4096, "fp16", 132) == 1
    s = choose_splits(cfg, 256, 256, 65536, "fp16", 132)
    assert 2 <= s <= 16
    kt = 65536 // 64
    per = -(-kt // s)
    assert (s - 1) * per < kt  # every split has work
    assert choose_splits(cfg, 64, 64, 128, "fp16", 132) == 1  # too little K to share


def test_builds_cover_every_dtype_and_layout() -> None:
    builds = list(all_builds())
    pairs = {(b.in_kind, b.out_kind, b.b_kmajor) for b in builds}
    assert ("fp16", "fp32", False) in pairs and ("fp16", "fp32", True) in pairs
    assert ("e4m3", "bf16", True) in pairs and ("e4m3", "bf16", False) not in pairs
    assert len({b.tag() for b in builds}) == len(builds)
