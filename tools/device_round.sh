#!/usr/bin/env bash
# One device call for this round (run from the repo root on the device with $OUT set; carry .enc5refs and .cache/k2):
# enc5 split-kernel smoke test under a timeout, the enc5 device check (every candidate on every reference frame,
# timings, profiles, benchmark), with RUN_GEMM_BENCH=1 the GEMM check/bench/energy of GEMM_VARIANTS, the enc5 GPU
# tests, then the enc5 sanitizers (and with RUN_GEMM_SAN=1 the GEMM ones beside them).
set -u
export PYTHONPATH=$PWD/src
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv > "$OUT/smi.txt" 2>&1
E5="env TCFORGE_CACHE_DIR=$PWD/.enc5refs/cache"
$E5 timeout 120 python3 tools/enc5_device_check.py smoke --refs .enc5refs --variant hopper_split > "$OUT/smoke.txt" 2>&1
rc=$?
echo "smoke rc=$rc" >> "$OUT/smoke.txt"
cat "$OUT/smoke.txt"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then export ENC5_SKIP_SPLIT=1; fi
# the prepared 3-CTAs-per-SM build: dropped from the candidates and sanitizers if its smoke test fails or hangs
$E5 timeout 90 python3 tools/enc5_device_check.py smoke --refs .enc5refs --variant hopper_split_occ3 \
  > "$OUT/smoke_occ3.txt" 2>&1 || export ENC5_SKIP_VARIANTS=hopper_split_occ3
tail -4 "$OUT/smoke_occ3.txt"
$E5 timeout ${ENC5_CHECK_LIMIT:-330} python3 tools/enc5_device_check.py check --refs .enc5refs --out "$OUT" \
  --skip debug,tiles,sanitize${ENC5_EXTRA_SKIP:+,$ENC5_EXTRA_SKIP} > "$OUT/check_stdout.txt" 2>&1
echo "check rc=$?"
sed -n '/== summary ==/,$p' "$OUT/enc5_device_check.log" | cut -c1-400
if [ "${RUN_GEMM_BENCH:-0}" = 1 ]; then
  # GEMM: check + time the variants in GEMM_VARIANTS beside rung 9, then joules per GEMM against cuBLAS (NVML)
  G="env TCFORGE_CACHE_DIR=$PWD/.cache/k2"
  $G timeout 240 python3 tools/gemm_device_check.py --out "$OUT/gemm" --parallel 3 --timeout 90 --phases check,bench \
    --variants "${GEMM_VARIANTS:-cluster4}" --bench-also hoist --bench-repeat 2 \
    --bench-args "--combos fp16:fp32,bf16:bf16,e4m3:bf16 --sweep none --tag round --no-plot" --bench-timeout 120 \
    > "$OUT/gemm_check.txt" 2>&1
  tail -25 "$OUT/gemm_check.txt"
  $G timeout 150 python3 bench/gemm_energy.py --variants "hoist,${GEMM_VARIANTS:-cluster4}" \
    --out "$OUT/gemm_energy.json" > "$OUT/gemm_energy.txt" 2>&1
  tail -12 "$OUT/gemm_energy.txt"
fi
$E5 timeout 150 python3 -m pytest -q -m gpu tests/layers/enc5 > "$OUT/gpu_tests.txt" 2>&1
echo "gpu tests: $(tail -1 "$OUT/gpu_tests.txt")"
$E5 timeout 200 python3 tools/enc5_device_check.py check --refs .enc5refs --out "$OUT/san" \
  --skip build,debug,tiles,candidates,profile,bench > "$OUT/san_stdout.txt" 2>&1 &
if [ "${RUN_GEMM_SAN:-0}" = 1 ]; then
  env TCFORGE_CACHE_DIR=$PWD/.cache/k2 timeout 260 python3 tools/gemm_device_check.py --out "$OUT/gemm" \
    --phases sanitize --sanitize-timeout 240 > "$OUT/gemm_san.txt" 2>&1
  tail -4 "$OUT/gemm_san.txt"
fi
wait
grep -h "sanitizer" "$OUT/san/enc5_device_check.log" | tail -8
cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz . 2>/dev/null; true
