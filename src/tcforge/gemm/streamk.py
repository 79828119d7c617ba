"""The stream-K schedule of gemm_sm90.cu (STREAMK builds) in Python: which k-tiles of which unit each cluster runs,
in which order, and who adds whose partial. The kernel computes the same thing on the fly; this mirror lets tests
prove, without a GPU, that it covers every k-tile once, cannot wait in a cycle and how long owners can wait."""

from __future__ import annotations

from dataclasses import dataclass

INT32_LIMIT = 2**31  # the kernel's schedule arithmetic is 32-bit: clusters * sk_units * num_kt must stay below


@dataclass(frozen=True)
class Segment:
    """k-tiles [kt0, kt1) of unit `unit` run by one cluster.

    role: 'whole' (all of K, stored as is), 'owner' (ends the unit's K but starts later than k-tile 0: adds the
    partials of `contributors`, in that order, then stores the tile) or 'partial' (ends before K does: its fp32 sums
    go to the cluster's workspace slot for the owner).
    """

    unit: int
    kt0: int
    kt1: int
    role: str
    contributors: tuple[int, ...] = ()


def sk_begin(c: int, clusters: int, sk_units: int, num_kt: int) -> int:
    """First shared k-tile (in the flattened range of the last sk_units units) of cluster c."""
    return c * sk_units * num_kt // clusters


def fits_int32(clusters: int, sk_units: int, num_kt: int) -> bool:
    """Whether the kernel's 32-bit schedule arithmetic holds for this launch."""
    return (clusters + 1) * sk_units * num_kt < INT32_LIMIT


def cluster_segments(cluster: int, clusters: int, units: int, sk_units: int, num_kt: int) -> list[Segment]:
    """Everything cluster `cluster` runs, in the kernel's order: its whole units round-robin, then its share of the
    rest — the partial (the share's last segment, when it ends before its unit's K does) first, since owners wait for
    it; then the share's whole units; then its owner segment (the share's first, when it starts inside a unit) last,
    when the partials it adds have had the longest time to be stored."""
    dp = units - sk_units
    out = [Segment(u, 0, num_kt, "whole") for u in range(cluster, dp, clusters)]
    begin = sk_begin(cluster, clusters, sk_units, num_kt)
    end = sk_begin(cluster + 1, clusters, sk_units, num_kt)
    rest_end = end
    if end > begin and end % num_kt:
        t = end // num_kt
        first = max(begin, t * num_kt)
        out.append(Segment(dp + t, first - t * num_kt, end - t * num_kt, "partial"))
        rest_end = first
    owner = begin < rest_end and begin % num_kt != 0
    g = (begin // num_kt + 1) * num_kt if owner else begin
    while g < rest_end:
        out.append(Segment(dp + g // num_kt, 0, num_kt, "whole"))
        g += num_kt
    if owner:
        t, kt0 = divmod(begin, num_kt)
        contrib = []
        for c in range(cluster - 1, -1, -1):
            e = sk_begin(c + 1, clusters, sk_units, num_kt)
            if e <= t * num_kt:
                break
            if sk_begin(c, clusters, sk_units, num_kt) != e:
                contrib.append(c)
        out.append(Segment(dp + t, kt0, num_kt, "owner", tuple(contrib)))
    return out


def owner_waits(segs: list[list[Segment]], units: int, sk_units: int) -> list[int]:
    """For each owner segment, in k-tile steps of the shared phase (every cluster equally fast, starting together,
    fix-ups free): how long it waits for the last of its contributors' partials."""
    dp = units - sk_units
    done: dict[int, int] = {}  # cluster -> step at which its partial is stored
    start: dict[int, int] = {}  # cluster -> step at which its owner segment is done
    for c, mine in enumerate(segs):
        step = 0
        for s in (x for x in mine if x.unit >= dp):
            step += s.kt1 - s.kt0
            if s.role == "partial":
                done[c] = step
            if s.role == "owner":
                start[c] = step
    waits = []
    for c, mine in enumerate(segs):
        for s in mine:
            if s.role == "owner":
                waits.append(max(0, max(done[x] for x in s.contributors) - start[c]))
    return waits


def schedule(clusters: int, units: int, sk_units: int, num_kt: int) -> list[list[Segment]]:
    """Every cluster's segments."""
    return [cluster_segments(c, clusters, units, sk_units, num_kt) for c in range(clusters)]


def unit_tile(u: int, num_mc: int, num_n: int, group_m: int) -> tuple[int, int]:
    """(cluster row, tile column) of unit u in the kernel's grouped raster (unit_of without K splits)."""
    per_group = group_m * num_n
    first = (u // per_group) * group_m
    gsize = min(num_mc - first, group_m)
    return first + (u % per_group) % gsize, (u % per_group) // gsize
