#!/usr/bin/env bash
# One device call (repo root on the device, $OUT set) for the 64-row swapped tiles as wide as M (`sw80`, `sw96` by
# default; WIDE_VARIANTS=sw112,sw128 for the others): checked against float64 and cuBLAS (every dtype pair and B
# layout, the swapped shapes, split 3 fused / planes, split 2 through DSMEM where they have a pair build), sanitised,
# their GPU tests, then timed at 64-96 rows with a short N beside `auto`, sw64, t64, t128 and cuBLAS in the same run
# (graph medians, every launch checked against float64 first) — split launches through the pair (its ring cut to make
# room for the receive slot) and, as NAME@fused, through L2 slots on the full ring. Written and run in the tenth
# session of 2026-12-01 (docs/gemm.md, "65-112 rows"). At most 9.5 minutes with a warm cache: carry one as CACHE_TGZ
# (a tarball of a TCFORGE_CACHE_DIR under .cache/, e.g. `tar czf .cache/k42.tgz -C .cache k42`), else the run
# compiles what it needs.
set -u
export PYTHONPATH=$PWD/src
TGZ=${CACHE_TGZ:-.cache/k42.tgz}
if [ -f "$TGZ" ]; then
  tar xzf "$TGZ" -C .cache
  export TCFORGE_CACHE_DIR=$PWD/.cache/$(basename "$TGZ" .tgz)
fi
V=${WIDE_VARIANTS:-sw80,sw96}
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv > "$OUT/smi.txt" 2>&1
timeout 160 python3 tools/gemm_device_check.py --out "$OUT" --phases check --variants $V --parallel 2 \
  > "$OUT/check.txt" 2>&1
echo "check rc=$?"; tail -4 "$OUT/check.txt"
GEMM_SAN_VARIANTS=$V timeout 100 python3 tools/gemm_device_check.py --out "$OUT" --phases sanitize --variants $V \
  --sanitize-timeout 95 > "$OUT/sanitize.txt" 2>&1
echo "sanitize rc=$?"; tail -3 "$OUT/sanitize.txt"
K=$(echo "$V" | sed -E 's/([a-z0-9]+)/(\1 and not \1c4)/g; s/,/ or /g')
timeout 80 python3 -m pytest -q -m gpu tests/gemm/test_gpu.py -k "wide_swapped or $K" > "$OUT/gpu_tests.txt" 2>&1
echo "gpu tests: $(tail -1 "$OUT/gpu_tests.txt")"
# the shapes (M x N x K) where the model, given sw64-like costs for them, would run sw80 / sw96: 65-96 rows x N = 1024-8192
S=65x4096x4096,72x4096x4096,80x4096x4096,96x4096x4096,64x4096x4096,96x4096x11008,80x4096x14336,80x8192x4096
S=$S,96x8192x4096,80x1024x14336
VS=auto,sw64,sw80,sw96,sw80@fused,sw96@fused,t64,t128
timeout 150 python3 bench/gemm_small.py --b-col --combos bf16:bf16,e4m3:bf16 --variants $VS --shapes $S \
  --tag s28_wide --out "$OUT" > "$OUT/bench.txt" 2>&1
echo "bench rc=$?"; tail -1 "$OUT/bench.txt"
timeout 80 python3 bench/gemm_small.py --combos fp16:fp32 --variants $VS --shapes $S --tag s28_wide_rowb \
  --out "$OUT" > "$OUT/bench_rowb.txt" 2>&1
echo "bench rowb rc=$?"; tail -1 "$OUT/bench_rowb.txt"
python3 bench/gemm_small_table.py "$OUT/gemm_small_s28_wide.json" "$OUT/gemm_small_s28_wide_rowb.json"
