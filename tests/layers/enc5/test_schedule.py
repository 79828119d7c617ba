"""Dispatch-order swaps of the 3-CTA enc5 build (`gpu.schedule`): exact swaps for a 4K frame, always a permutation,
never a worse modelled SM load, nothing to do where there is nothing to balance; the parameter block carries them."""

from __future__ import annotations

import itertools

import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.gpu import kernel, schedule


def sm_loads(ex: int, ey: int, oy: int, sms: int, swaps) -> list[int]:
    """Live m-tiles per SM under breadth-first dispatch (CTA j on SM j mod sms), both CTAs of a cluster counted."""
    weights = schedule.window_weights(ex, ey, oy)
    loads = [0] * sms
    for c in range(len(weights)):
        w = weights[schedule.apply_swaps(c, swaps)]
        loads[(2 * c) % sms] += w
        loads[(2 * c + 1) % sms] += w
    return loads


def test_live_mtiles_counts_query_rows_inside_the_frame() -> None:
    assert schedule.live_mtiles(0, 68) == 4
    assert schedule.live_mtiles(64, 68) == 2  # 4K bottom row: token rows 64..67 of 64..71
    assert schedule.live_mtiles(16, 23) == 4  # 720p bottom row: row 22 keeps m-tile 3 alive
    assert schedule.live_mtiles(-5, 21) == 2  # origin 5: rows -5..-2 are m-tiles 0 and 1
    assert schedule.live_mtiles(-2, 10) == 3
    assert schedule.live_mtiles(6, 10) == 2


def test_4k_frame_swaps_put_light_windows_on_the_three_cta_sms() -> None:
    swaps = schedule.dispatch_swaps(120, 68, 0, 132, 3)
    # 270 CTAs: SMs 0..5 hold CTAs j, j + 132, j + 264 = clusters 0..2, 66..68, 132..134; the bottom row is 120..134
    assert swaps == ((0, 120, 3), (66, 123, 3))
    assert max(sm_loads(120, 68, 0, 132, swaps)) == 8 < max(sm_loads(120, 68, 0, 132, ())) == 10


@pytest.mark.parametrize(("ex", "ey", "oy", "sms"), [(120, 68, 0, 132), (120, 68, 3, 132), (100, 70, 0, 114),
                                                     (96, 92, 6, 132), (120, 68, 0, 114), (64, 150, 0, 132)])
def test_swaps_are_a_permutation_and_never_worsen_the_load(ex: int, ey: int, oy: int, sms: int) -> None:
    swaps = schedule.dispatch_swaps(ex, ey, oy, sms, 3)
    clusters = -(-ex // 8) * -(-ey // 8)
    assert sorted(schedule.apply_swaps(c, swaps) for c in range(clusters)) == list(range(clusters))
    ranges = [range(a, a + n) for a, _, n in swaps] + [range(b, b + n) for _, b, n in swaps]
    for r1, r2 in itertools.combinations(ranges, 2):
        assert not set(r1) & set(r2)  # the kernel applies the first matching swap: ranges must not overlap
    assert len(swaps) <= schedule.MAX_SWAPS
    assert max(sm_loads(ex, ey, oy, sms, swaps)) <= max(sm_loads(ex, ey, oy, sms, ()))


def test_nothing_to_balance_gives_no_swaps() -> None:
    assert schedule.dispatch_swaps(40, 23, 0, 132, 3) == ()  # 15 windows: one CTA per SM at most
    assert schedule.dispatch_swaps(120, 64, 0, 132, 3) == ()  # 120 windows, all full
    assert schedule.dispatch_swaps(240, 136, 0, 132, 3) == ()  # 510 windows: not one wave
    assert schedule.dispatch_swaps(120, 68, 0, 131, 3) == ()  # odd SM count: clusters straddle passes


def test_parameter_block_carries_the_swaps() -> None:
    p = kernel.params(120, 68, 0, 0, input_ptr=1, weights_ptr=2, arena_ptr=3, texture_ptr=4, surface_ptr=5,
                      order=((0, 120, 3), (66, 123, 3)))
    raw = bytes(p)
    assert len(raw) == 144
    words = [int.from_bytes(raw[56 + 2 * i:58 + 2 * i], "little") for i in range(12)]
    assert words == [0, 120, 3, 66, 123, 3] + [0] * 6
    assert raw[80:84] == bytes(4)  # ox, oy right after
    with pytest.raises(TcforgeError, match="order"):
        kernel.params(8, 8, 0, 0, input_ptr=1, weights_ptr=2, arena_ptr=3, texture_ptr=4, surface_ptr=5,
                      order=((0, 1, 1),) * 5)
    with pytest.raises(TcforgeError, match="order"):
        kernel.params(8, 8, 0, 0, input_ptr=1, weights_ptr=2, arena_ptr=3, texture_ptr=4, surface_ptr=5,
                      order=((0, 70000, 1),))
