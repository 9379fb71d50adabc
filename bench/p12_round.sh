#!/usr/bin/env bash
# P12 on the lent GPU machine: bench/p12_round.sh [checks] [bench] [live]
#   checks: the GPU tests, then compute-sanitizer memcheck on the mix and the
#           backend/stream tests the channel geometry touched, racecheck on the mix's;
#   bench:  the mix kernel against the copy floor (bench_gpu_mix), a 10-minute
#           6 -> 2 down-mix end to end on both backends (bench/mix_e2e.py), and the
#           FIR kernel table against CuPy/PyTorch (bench_gpu_fir + gpu_peers.py);
#   live:   live latency after the refactor, CUDA 32 ch K = 65536 and CPU stereo K = 4095;
#           where .gpu/bin/sigstream_old exists (an older build), each case runs with the
#           new binary, then the old one, so both are measured on the same lease.
# MEMCHECK_FILTER / RACECHECK_FILTER override the sanitizers' test filters.
# Run from the repository root after ../shared/tools/gpu-bundle has filled .gpu/; logs in $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WHAT=" ${*:-checks bench} "
want() { [[ $WHAT == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if want checks; then
  .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/tests.txt" 2>&1; echo "cuda tests: rc $?"
  tail -4 "$OUT/tests.txt"
  timeout ${MEMCHECK_TIMEOUT:-240} compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter="${MEMCHECK_FILTER:-*Mix*:CudaVsCpu*:*Spectrum*:*CudaStream*}" > "$OUT/memcheck.txt" 2>&1
  echo "memcheck: rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | head -5
  timeout ${RACECHECK_TIMEOUT:-150} compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter="${RACECHECK_FILTER:-*MixCuda*}" > "$OUT/racecheck.txt" 2>&1
  echo "racecheck: rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED|hazard" "$OUT/racecheck.txt" | head -5
fi
if want bench; then
  .gpu/bin/bench_gpu_mix --log2n 24 > "$OUT/mix.txt" 2>&1; echo "bench_gpu_mix rc $?"; cat "$OUT/mix.txt"
  PYTHONUNBUFFERED=1 python3 bench/mix_e2e.py --bin .gpu/bin/sigstream --floor .gpu/bin/bench_cpu_io_floor \
    --backends cpu,cuda --runs 5 2>&1 | tee "$OUT/mix_e2e.txt"
  if [[ -x .gpu/bin/bench_gpu_fir ]]; then
    .gpu/bin/bench_gpu_fir --taps 31,127,255,1023,4095,16383 > "$OUT/fir.txt" 2>&1; echo "bench_gpu_fir rc $?"
    PYTHONUNBUFFERED=1 python3 bench/gpu_peers.py --sigstream "$OUT/fir.txt" 2>&1 | tee "$OUT/peers.txt"
  fi
fi
if want live; then
  bins=(.gpu/bin/sigstream)
  [[ -x .gpu/bin/sigstream_old ]] && bins+=(.gpu/bin/sigstream_old)
  for bin in "${bins[@]}"; do
    tag=$(basename "$bin")
    PYTHONUNBUFFERED=1 python3 bench/live_latency.py --bin "$bin" --pacer .gpu/bin/bench_live_pace \
      --channels 32 --taps 65536 --backend cuda --seconds ${LIVE_SECONDS:-60} --peers sigstream \
      --busy-poll --redundant --harness-spin 2>&1 | tee "$OUT/live_cuda_$tag.txt"
  done
  for bin in "${bins[@]}"; do
    tag=$(basename "$bin")
    PYTHONUNBUFFERED=1 python3 bench/live_latency.py --bin "$bin" --pacer .gpu/bin/bench_live_pace \
      --taps 4095 --seconds ${LIVE_SECONDS:-60} --peers sigstream 2>&1 | tee "$OUT/live_cpu_$tag.txt"
  done
fi
