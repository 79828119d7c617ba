#!/usr/bin/env bash
# The device round: build, check and time on the GPU machine in one call. Run from the repo root there, with $OUT set:
#   bash tools/device_round.sh PHASE...
# Phases (each writes its log under $OUT/logs and prints a short summary; logs.tgz comes back):
#   runtime  tools/runtime_check (driver, cluster + PDL launch, tensor maps, NVML) and the runtime GPU tests
#   enc5     the enc5 kernel forms against the CPU reference frames in .enc5refs (tools.enc5_device_check), GPU tests
#   gemm     the GEMM GPU suite, in 8 concurrent shards so a cold kernel cache compiles on every core
#   ladder   the teaching ladder's rungs against torch (tests/gemm/test_ladder.py --slow)
#   truth    the numerics truth tests on the GPU (tests/numerics -m gpu)
#   eager    host time per call, eager and graph-replay times against torch (bench.eager), torch.compile check
#   eagerbig the 4096³ / 8192³ rows of bench.eager alone, 41 rounds or $EAGER_ROUNDS (do_bench against graph replays);
#            eagerbig_nopdl the same with tcforge launched without programmatic dependent launch
#   enc5bench  the enc5 kernel forms' graph-replay and eager µs per frame (bench.enc5_native; carry .enc5refs)
#   ab       the old tree in .abold against this one: same output bits, time old / new (tools.ab_commits)
#   san      compute-sanitizer memcheck / racecheck / synccheck shots of the enc5 forms
#   cpa      the GEMM's cp.async operand builds (KernelConfig.cpa): bits against TMA, sanitizers, graph-replay times
#   corpus   the emulator's GPU corpus made afresh ($OUT/logs/corpus.npz, for tests/data/emulate/) and checked against
#            the emulator there; carry build/emulate_corpus_ptx.npz (`python3 -m tools.emulate_corpus build` here);
#            the entries not yet run on a GPU (AWAITING_GPU) go to $OUT/logs/corpus_freshN.npz, a process per group
#   fresh    only those entries not yet run on a GPU (groups of name globs, each in its own process; FRESH_GROUPS
#            overrides them: "GLOB GLOB;GLOB ...", the first group first)
#   mufu     MUFU.SQRT's, RCP64H's, RSQ64H's, LG2's, SIN's, COS's and TANH's tables with whole-domain checks
#            (tools.truth.mufu and mufu_tanh, CuPy; mufu.npz, mufu_sin.npz, mufu_cos.npz, mufu_tanh.npz)
# Carry: .whl (cuda-bindings, cuda-pathfinder, nvidia-ml-py wheels when the image lacks them), .enc5refs, .abold.
set -u
L=${ROUND_LOGS:-$OUT/logs}  # ROUND_LOGS outside $OUT: only logs.tgz (and mufu*.npz) come back, within the 8-file limit
mkdir -p "$L"
pack() { tar czf "$OUT/logs.tgz" --exclude='mufu*.npz' -C "$(dirname "$L")" "$(basename "$L")" 2>/dev/null; }
if ! python3 -c "import cuda.bindings.driver, pynvml" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
export TCFORGE_CACHE_DIR=${TCFORGE_CACHE_DIR:-$PWD/.cache/round}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader \
  | tee "$L/smi.txt"
python3 -c "import torch, cuda.bindings; print('torch', torch.__version__, 'cuda-bindings', cuda.bindings.__version__)"
summary() { echo "== $1: $(grep -E "passed|failed|error|PASS|FAIL" "$2" | tail -1 | cut -c1-300)"; }
for phase in "$@"; do
  t0=$(date +%s)
  case $phase in
    runtime)
      timeout 120 python3 -m tools.runtime_check > "$L/runtime_check.txt" 2>&1; echo "runtime_check rc=$?"
      grep -E "FAIL|encoded|host" "$L/runtime_check.txt" | head -8
      timeout 200 python3 -m pytest -q -m gpu tests/runtime > "$L/runtime_gpu.txt" 2>&1
      summary runtime "$L/runtime_gpu.txt" ;;
    enc5)
      export TCFORGE_CACHE_DIR=$PWD/.enc5refs/cache  # the forms precompiled here travel with the frames
      timeout 330 python3 -m tools.enc5_device_check check --refs .enc5refs --out "$L/enc5" \
        --skip bench,sanitize,profile > "$L/enc5_check.txt" 2>&1; echo "enc5 check rc=$?"
      sed -n '/== summary ==/,$p' "$L/enc5/enc5_device_check.log" | cut -c1-300
      timeout 200 python3 -m pytest -q -m gpu tests/layers/enc5 > "$L/enc5_gpu.txt" 2>&1
      summary enc5 "$L/enc5_gpu.txt"; export TCFORGE_CACHE_DIR=$PWD/.cache/round ;;
    gemm)
      timeout 560 python3 -m tools.pytest_shards --shards 8 --log-dir "$L/gemm" -- -m gpu tests/gemm \
        --ignore=tests/gemm/test_ladder.py > "$L/gemm_suite.txt" 2>&1; echo "gemm suite rc=$?"
      tail -10 "$L/gemm_suite.txt"
      grep -h -E "^(FAILED|ERROR)" "$L"/gemm/shard*.txt | head -10 ;;
    ladder)
      timeout 300 python3 -m pytest -q --slow tests/gemm/test_ladder.py > "$L/ladder.txt" 2>&1
      summary ladder "$L/ladder.txt"; grep -E "^(FAILED|ERROR)" "$L/ladder.txt" | head -10 ;;
    truth)
      timeout 300 python3 -m pytest -q -m gpu tests/numerics > "$L/truth.txt" 2>&1
      summary truth "$L/truth.txt" ;;
    eager)
      timeout 300 python3 -m pytest -q -s -m gpu tests/test_ops.py > "$L/eager_tests.txt" 2>&1
      summary eager-tests "$L/eager_tests.txt"
      timeout 400 python3 -m bench.eager --compile-check --breakdown --out "$L/eager.json" > "$L/eager.txt" 2>&1
      echo "bench.eager rc=$?"; tail -25 "$L/eager.txt" ;;
    eagerbig|eagerbig_nopdl)
      # eagerbig_nopdl: tcforge launched without PDL (TCFORGE_PDL=0), so back-to-back graph replays cannot overlap a
      # call's prologue with the previous call's tail, which do_bench's L2 flush between calls never lets happen
      pdl=1; [ "$phase" = eagerbig_nopdl ] && pdl=0
      TCFORGE_PDL=$pdl timeout 420 python3 -m bench.eager --shapes 4096x4096x4096,8192x8192x8192 \
        --rounds "${EAGER_ROUNDS:-41}" --no-enc5 --out "$L/$phase.json" > "$L/$phase.txt" 2>&1
      echo "bench.eager (TCFORGE_PDL=$pdl) rc=$?"; tail -12 "$L/$phase.txt" ;;
    enc5bench)
      TCFORGE_CACHE_DIR=$PWD/.enc5refs/cache timeout 200 python3 -m bench.enc5_native --json "$L/enc5_native.json" \
        > "$L/enc5_native.txt" 2>&1; echo "bench.enc5_native rc=$?"; tail -20 "$L/enc5_native.txt" ;;
    ab)
      timeout 580 python3 -m tools.ab_commits --old .abold --new . --rounds 2 --out "$L/ab_commits.json" \
        > "$L/ab.txt" 2>&1; echo "ab rc=$?"; tail -14 "$L/ab.txt" ;;
    san)
      timeout 300 python3 -m tools.enc5_device_check check --refs .enc5refs --out "$L/san" \
        --skip build,debug,tiles,candidates,profile,bench > "$L/san.txt" 2>&1; echo "san rc=$?"
      grep -h "sanitizer" "$L/san/enc5_device_check.log" | tail -8 ;;
    corpus|fresh)
      # fresh: only the entries not yet run on a GPU (AWAITING_GPU), in groups, each in its own process (a faulting
      # kernel ends only its group); corpus: the rest of the corpus first, in one process
      fresh=$(python3 -c "from tools.corpus.entries import AWAITING_GPU as A; print(' '.join(sorted(A)))")
      if [ "$phase" = corpus ]; then
        timeout 300 python3 -m tools.emulate_corpus generate --ptx build/emulate_corpus_ptx.npz --out "$L/corpus.npz" \
          --skip $fresh > "$L/corpus_generate.txt" 2>&1; echo "corpus generate rc=$?"; tail -3 "$L/corpus_generate.txt"
        timeout 200 python3 -m tools.emulate_corpus check "$L/corpus.npz" > "$L/corpus_check.txt" 2>&1
        echo "corpus check rc=$? (0: every entry 0 differing bits)"; grep -v " 0 bits" "$L/corpus_check.txt" | tail -8
      fi
      set -f; i=0
      IFS=';' read -ra groups <<< "${FRESH_GROUPS:-tex* tld4* cu_image_queries;sul* sus* sured*;tma_reduce* bulk_reduce* \
cu_tma_nanfill* cu_tma_replace*;wgmma_sp_* wgmma_s32* wgmma_f32_tf32* mm_f32_tf32* desc_mm* ws_mm*;cu_mufu16* cu_set_forms \
cu_fns_spaces cu_int_packs cu_wmma* cu_video*;cu_tma_im2col* im2col_gluon* conv_gluon*}"
      for group in "${groups[@]}"; do
        i=$((i + 1))
        timeout 120 python3 -m tools.emulate_corpus generate --ptx build/emulate_corpus_ptx.npz \
          --out "$L/corpus_fresh$i.npz" --only $group > "$L/corpus_fresh$i.txt" 2>&1
        echo "fresh group $i ($group) rc=$?: $(tail -1 "$L/corpus_fresh$i.txt" | cut -c1-150)"
        timeout 60 python3 -m tools.emulate_corpus check "$L/corpus_fresh$i.npz" > "$L/corpus_fresh${i}_check.txt" 2>&1
        grep -v " 0 bits" "$L/corpus_fresh${i}_check.txt" | tail -30 | cut -c1-160
        pack  # each group's files kept if the call is cut
      done; set +f ;;
    mufu)
      timeout 240 python3 -m tools.truth.mufu --out "$L/mufu.npz" > "$L/mufu.txt" 2>&1; rc=$?
      timeout 120 python3 -m tools.truth.mufu_tanh --out "$L/mufu_tanh.npz" >> "$L/mufu.txt" 2>&1 || rc=1
      [ "$L" != "$OUT/logs" ] && cp "$L"/mufu*.npz "$OUT"/ 2>/dev/null  # each its own file back (16 MiB each)
      echo "mufu rc=$rc (0: the SQRT model holds on all 2^32 inputs; then: python3 -m tools.truth.mufu --pack FILE)"
      tail -6 "$L/mufu.txt" | cut -c1-400 ;;
    cpa)
      timeout 200 python3 -m pytest -q -m gpu tests/gemm/test_gpu_launch.py -k cp_async > "$L/cpa_tests.txt" 2>&1
      summary cpa-tests "$L/cpa_tests.txt"
      timeout 240 python3 -m bench.gemm_small --variants auto,t64,t64@cpa=1,t64@cpa=3,t128,t128@cpa=3 \
        --combos bf16:bf16,fp16:fp32 --b-col --shapes 1000x1000x1000,2000x2000x2008,1024x1024x1024 --tag cpa \
        --out "$L" > "$L/cpa_bench.txt" 2>&1; echo "gemm_small rc=$?"; cut -c1-100 "$L/cpa_bench.txt" | tail -40
      for tool in memcheck racecheck synccheck; do
        api=; [ $tool = memcheck ] && api="--report-api-errors no"
        PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool $tool $api --error-exitcode 9 \
          python3 -m pytest -q -p no:cacheprovider -m gpu tests/gemm/test_gpu_launch.py -k "cp_async and t64" \
          > "$L/cpa_$tool.txt" 2>&1 &
      done; wait
      for tool in memcheck racecheck synccheck; do
        echo "$tool: $(grep -E "SUMMARY|passed|failed" "$L/cpa_$tool.txt" | tr '\n' ' ' | cut -c1-200)"; done ;;
    *) echo "device_round: error: unknown phase $phase"; exit 2 ;;
  esac
  echo "-- $phase took $(( $(date +%s) - t0 )) s"
  pack  # after every phase: a call cut short keeps what is done
done
true
