// The tile scheduler: which units (tile x K split) a cluster runs, in which order. Persistent: units round-robin
// over the clusters in grouped order (group_m column tiles of clusters along M share B in L2); split-K: each unit is
// one split of a tile's K; stream-K: the k-tiles past the last full wave shared between all clusters.
// ---------------------------------------------------------------- work units (tiles x K splits), grouped order
struct Unit { int m_tile, n_tile, kt0, kt1; };
__device__ __forceinline__ Unit unit_of(int u, int rank, int num_mc, int num_n, int num_kt, int splits, int group_m) {
  const int split = u % splits;
  const int t = u / splits;
  const int per_group = group_m * num_n;
  const int first_m = (t / per_group) * group_m;
  const int gsize = min(num_mc - first_m, group_m);
  const int mc = first_m + (t % per_group) % gsize;
  const int n = (t % per_group) / gsize;
  const int kt_per = (num_kt + splits - 1) / splits;
  Unit r;
  r.m_tile = CLUSTER_N ? mc : mc * CM + rank;   // num_mc: clusters along M (CLUSTER_N: tiles)
  r.n_tile = CLUSTER_N ? n * CM + rank : n;     // num_n: tiles along N (CLUSTER_N: clusters)
  r.kt0 = split * kt_per;
  r.kt1 = min(num_kt, r.kt0 + kt_per);
  return r;
}

// ---------------------------------------------------------------- stream-K: the last units' k-tiles, shared
// Units [0, units - sk_units) run whole, round-robin over the clusters; the k-tiles of the last sk_units units form
// one range that cluster c covers from sk_begin(c) to sk_begin(c + 1). A range cut inside a unit leaves it in
// segments: the one that ends the unit's K (its "owner": the first segment of its cluster's range) stores the tile
// after adding the others' fp32 partials; every other segment starts the cluster's share or lies inside it, ends
// before K does and is the last of its cluster's range — so each cluster leaves at most one partial, in its
// workspace slot. A cluster runs its partial FIRST (owners wait for it), then its whole units, then its owner piece
// LAST: by then each partial it adds, run first in a range about as long, is stored — the owner only waits when a
// partial is longer than everything else in the owner's range (ranges shorter than a unit). Run in range order
// instead, an owner piece came first and waited for a partial up to a whole range long (measured 25 us at 3072^3).
// Owners wait only for partials, which never wait: no cycle, as long as every cluster is resident (the launcher
// sizes the grid so).
// (the launcher keeps clusters * sk_units * num_kt below 2^31)
__device__ __forceinline__ int sk_begin(int c, int sk_units, int num_kt, int clusters) {
  return c * sk_units * num_kt / clusters;
}
// cluster c's share: [begin, rest_end) run in order after its partial (k-tiles [partial_kt0, partial_kt1) of shared
// unit partial_tile; partial_kt1 == 0 when the share ends exactly at a unit's end)
struct SkShare { int begin, rest_end, partial_tile, partial_kt0, partial_kt1; };
__device__ __forceinline__ SkShare sk_share(int c, int sk_units, int num_kt, int clusters) {
  SkShare r;
  r.begin = sk_begin(c, sk_units, num_kt, clusters);
  const int end = sk_begin(c + 1, sk_units, num_kt, clusters);
  r.rest_end = end;
  r.partial_tile = 0;
  r.partial_kt0 = r.partial_kt1 = 0;
  if (end > r.begin && end % num_kt != 0) {
    const int t = end / num_kt;               // the unit the share ends in, before its K ends
    const int first = max(r.begin, t * num_kt);
    r.partial_tile = t;
    r.partial_kt0 = first - t * num_kt;
    r.partial_kt1 = end - t * num_kt;
    r.rest_end = first;
  }
  return r;
}

// one cluster's walk: the whole (data-parallel) units, then its stream-K share. The producer (loading) and the
// consumers (computing) walk the same schedule, so they cannot fall out of step.
struct Schedule {
  int num_mc, num_nc, num_kt, splits, group_m, rank, cluster, num_clusters, units, dp_units, sk_units;
  __device__ __forceinline__ Unit unit(int u) const {
    return unit_of(u, rank, num_mc, num_nc, num_kt, splits, group_m);
  }
  // this cluster's stream-K share in the order the producer loads it and the consumers run it: f(unit w, shared
  // unit index t, is_partial) for the partial first (others wait for it), then the whole units, then the owner
  // piece (k-tiles [w.kt0, w.kt1) of shared unit t = unit dp_units + t) last, when the partials it adds are most
  // likely stored: each ran first in a range about as long
  template <class F> __device__ __forceinline__ void sk_walk(F&& f) const {
    const SkShare sh = sk_share(cluster, sk_units, num_kt, num_clusters);
    const bool part = sh.partial_kt1 > 0;
    const bool owner = sh.begin < sh.rest_end && sh.begin % num_kt != 0;   // the range starts inside a unit
    const int w0 = sh.begin / num_kt + (owner ? 1 : 0), nw = max(0, sh.rest_end / num_kt - w0);   // whole units
    const int n = (part ? 1 : 0) + nw + (owner ? 1 : 0);
    for (int i = 0; i < n; ++i) {   // one call site: the producer's TMA code is inlined once
      const int j = part ? i - 1 : i;
      int t = sh.begin / num_kt, kt0 = sh.begin % num_kt;   // the owner piece (last)
      if (j < 0) t = sh.partial_tile, kt0 = sh.partial_kt0;
      else if (j < nw) t = w0 + j, kt0 = 0;
      Unit w = unit_of(dp_units + t, rank, num_mc, num_nc, num_kt, 1, group_m);
      w.kt0 = kt0;
      w.kt1 = j < 0 ? sh.partial_kt1 : num_kt;
      f(w, t, j < 0);
    }
  }
};
