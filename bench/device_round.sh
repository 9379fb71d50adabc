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
  for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
      --gtest_brief=1 ${SANITIZE_FILTER:+--gtest_filter=$SANITIZE_FILTER} > "$OUT/$tool.txt" 2>&1
    echo "$tool: rc $? ($(grep -c 'ERROR SUMMARY: 0 errors' "$OUT/$tool.txt") clean summaries)"; tail -3 "$OUT/$tool.txt"
  done
fi
