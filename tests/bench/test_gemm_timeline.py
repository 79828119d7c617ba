"""`bench/gemm_timeline.py`: its per-CTA stamp summary on hand-made stamps (values worked out here), and a launch
that wrote nothing is refused rather than summarised."""

from __future__ import annotations

import pytest

from bench import gemm_timeline


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
