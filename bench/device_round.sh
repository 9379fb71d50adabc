#!/usr/bin/env bash
# One round on the lent GPU machine: bench/device_round.sh [all | e2e kernels tests sanitize]
# End to end with a timeline, the kernel benchmarks against CuPy/PyTorch, the GPU tests,
# compute-sanitizer (memcheck, racecheck) on them. Logs go to $OUT.
# Run from the repository root after ../shared/tools/gpu-bundle has filled .gpu/.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WHAT=" ${*:-all} "
want() { [[ $WHAT == *" $1 "* || $WHAT == *" all "* ]]; }
nvidia-smi --query-gpu=name,persistence_mode,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if want e2e; then
  PYTHONUNBUFFERED=1 python3 bench/e2e_gpu.py --bin .gpu/bin --runs ${RUNS:-5} --long-minutes ${LONG_MINUTES:-0} 2>&1 | tee "$OUT/e2e.txt"
  PYTHONUNBUFFERED=1 python3 bench/e2e_gpu.py --bin .gpu/bin --runs ${RUNS:-5} --fresh 2>&1 | head -5 | tee "$OUT/e2e_fresh.txt"
fi
if want kernels; then
  .gpu/bin/bench_gpu_fir --taps 31,127,255,1023,4095,16383 > "$OUT/fir.txt" 2>&1; echo "bench_gpu_fir rc $?"
  PYTHONUNBUFFERED=1 python3 bench/gpu_peers.py --sigstream "$OUT/fir.txt" 2>&1 | tee "$OUT/peers.txt"
fi
if want tests; then
  .gpu/bin/sigstream_cuda_tests --gtest_brief=1 2>&1 | tail -25 | tee "$OUT/tests.txt"
fi
if want sanitize; then
  # CudaCheck.* makes failing CUDA calls on purpose (the error-message test):
  # memcheck would count those API errors, so it runs without the sanitizer.
  [[ -n ${SKIP_MEMCHECK:-} ]] || timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter=-CudaCheck.* > "$OUT/memcheck.txt" 2>&1
  echo "memcheck: rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | head -5
  timeout ${RACE_TIMEOUT:-300} compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter=${RACE_FILTER:-*} > "$OUT/racecheck.txt" 2>&1
  echo "racecheck: rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED|hazard" "$OUT/racecheck.txt" | head -5
  grep -c "^\[       OK" "$OUT/racecheck.txt"
fi
