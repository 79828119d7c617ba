"""Where the windows of a split-form launch run: swaps of the dispatch order that put windows with idle warps on the
SMs that hold the most CTAs.

The block scheduler hands out CTAs in launch order (x fastest), breadth-first over the SMs: CTA j of a launch that
fits in one wave runs on the same SM as CTA j mod S (S SMs). A 4K frame in the 3-CTAs-per-SM form is 270 CTAs on 132
SMs, so 6 SMs hold three CTAs and set the frame time; its bottom window row (68 = 8 x 8 + 4 token rows) has two query
m-tiles outside the frame whose warps skip phases 13-61 (`skip_dead` in kernels/enc5_split.cuh). Moving those light
windows onto the three-CTA SMs shortens the frame. Only placement changes, never the bits (any swaps are correct);
if the scheduler dispatched differently, the frame time would just not improve.
"""

from __future__ import annotations

from tcforge.layers.enc5.gpu.kernel import ORDER_SWAPS

MTILES = 4  # query m-tiles per window (16 tokens = two token rows each)
MAX_SWAPS = ORDER_SWAPS  # range swaps the parameter block carries


def live_mtiles(y0: int, ey: int) -> int:
    """Query m-tiles of a window starting at token row y0 with a row inside the frame (enc5_split.cuh live_mtiles)."""
    return sum(1 for z in range(MTILES) if y0 + 2 * z + 1 >= 0 and y0 + 2 * z < ey)


def window_weights(ex: int, ey: int, oy: int) -> list[int]:
    """Live m-tiles of every window in launch order (x fastest)."""
    nwx, nwy = -(-ex // 8), -(-ey // 8)
    return [live_mtiles(8 * wy - oy, ey) for wy in range(nwy) for _ in range(nwx)]


def ctas_on_sm_of(cluster: int, clusters: int, sms: int) -> int:
    """CTAs on the SM that runs cluster `cluster` (both of its CTAs' SMs hold as many) under breadth-first dispatch
    of `clusters` 2-CTA clusters in one wave."""
    sm = (2 * cluster) % sms
    return len(range(sm, 2 * clusters, sms))


def dispatch_swaps(ex: int, ey: int, oy: int, sms: int, ctas_per_sm: int) -> tuple[tuple[int, int, int], ...]:
    """Range swaps (a, b, n) of cluster positions for one frame: the lightest windows onto the positions of the most
    loaded SMs. Empty when the launch is not one wave, puts at most one CTA on each SM, or has no light window."""
    nwx, nwy = -(-ex // 8), -(-ey // 8)
    clusters = nwx * nwy
    if sms <= 0 or sms % 2 or clusters >= 1 << 16 or not sms < 2 * clusters <= ctas_per_sm * sms:
        return ()
    weights = window_weights(ex, ey, oy)
    load = [ctas_on_sm_of(c, clusters, sms) for c in range(clusters)]
    top = max(load)
    hot = [c for c in range(clusters) if load[c] == top]
    hot_set = set(hot)
    light = sorted((c for c in range(clusters) if weights[c] < MTILES),
                   key=lambda c: (weights[c], c not in hot_set, c))[:len(hot)]
    light_set = set(light)
    free = [c for c in hot if c not in light_set]  # hot positions that hold a full window
    movers = [c for c in light if c not in hot_set]  # light windows elsewhere
    runs: list[list[int]] = []
    for a, b in zip(free, sorted(movers), strict=False):  # fewer light windows than hot positions: the rest stay
        if runs and runs[-1][0] + runs[-1][2] == a and runs[-1][1] + runs[-1][2] == b:
            runs[-1][2] += 1
        else:
            runs.append([a, b, 1])
    return tuple((a, b, n) for a, b, n in runs[:MAX_SWAPS])


def apply_swaps(cluster: int, swaps: tuple[tuple[int, int, int], ...]) -> int:
    """The window a cluster position runs (the kernel's split_window, for tests and the profile)."""
    for a, b, n in swaps:
        if a <= cluster < a + n:
            return b + (cluster - a)
        if b <= cluster < b + n:
            return a + (cluster - b)
    return cluster
