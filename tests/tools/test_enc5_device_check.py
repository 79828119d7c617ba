"""Helpers of the enc5 device check that run without a GPU: build specs with pseudo options, and the SM-placement
summary of the timing profile (stamps 12/13 = globaltimer at CTA start/end, 14 = %smid, 15 = launch-order index)."""

from __future__ import annotations

import numpy as np

from tools import enc5_device_check as dc
from tools import enc5_probes


def test_build_specs_and_the_noreorder_pseudo_option() -> None:
    builds = dc.parse_builds("hopper_split:;hopper_split_occ3:-lineinfo +noreorder")
    assert builds == [("hopper_split", ()), ("hopper_split_occ3", ("-lineinfo", "+noreorder"))]
    assert dc.nvcc_options(builds[1][1]) == ("-lineinfo",)
    assert dc.reorder(builds[1][1]) is False and dc.reorder(builds[0][1]) is True


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
