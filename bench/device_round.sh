#!/usr/bin/env bash
# One round on the lent GPU machine: end to end with a timeline, the GPU tests,
# compute-sanitizer (memcheck, racecheck) on them. Logs go to $OUT.
# Run from the repository root after ../shared/tools/gpu-bundle has filled .gpu/.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
what=${1:-all}
nvidia-smi --query-gpu=name,persistence_mode,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if [[ $what == all || $what == e2e ]]; then
  PYTHONUNBUFFERED=1 python3 bench/e2e_gpu.py --bin .gpu/bin --runs 5 2>&1 | tee "$OUT/e2e.txt"
fi
if [[ $what == all || $what == tests ]]; then
  .gpu/bin/sigstream_cuda_tests --gtest_brief=1 2>&1 | tail -25 | tee "$OUT/tests.txt"
fi
if [[ $what == all || $what == sanitize ]]; then
  # CudaCheck.* makes failing CUDA calls on purpose (the error-message test):
  # memcheck would count those API errors, so it runs without the sanitizer.
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter=-CudaCheck.* > "$OUT/memcheck.txt" 2>&1
  echo "memcheck: rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | head -5
  timeout ${RACE_TIMEOUT:-300} compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter=${RACE_FILTER:-*} > "$OUT/racecheck.txt" 2>&1
  echo "racecheck: rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED|hazard" "$OUT/racecheck.txt" | head -5
  grep -c "^\[       OK" "$OUT/racecheck.txt"
fi
