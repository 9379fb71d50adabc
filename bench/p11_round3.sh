#!/usr/bin/env bash
# On a lent 2-GPU machine (DEVICES='0;0,1;0,1,2,3' on 4) (after gpu-bundle of sigstream, sigstream_cuda_tests, bench_cpu_io_floor):
# the CUDA tests, then the batch on GPU 0 and GPUs 0,1 for the I/O-bound (200 files) and GPU-bound
# (200) configs, best of 3, and the device-start decisions traced. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | head -2
[ -n "${SKIP_TESTS:-}" ] || timeout 300 .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1
echo "sigstream_cuda_tests: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|SKIPPED \]' "$OUT/cuda_tests.txt" | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/cuda_tests.txt" | head
for run in ${RUNS:-"io_200 gpu_200"}; do run=${run/_/ }
  read -r cfg n <<<"$run"
  python3 bench/batch_bench.py --bin .gpu/bin/sigstream --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files $n \
    --work /tmp/bb_${cfg}_$n --config $cfg --skip-loop --per-device auto --devices "${DEVICES:-0;0,1}" --runs 3 > $OUT/bench_${cfg}_$n.txt 2>&1
  echo "== $cfg $n"; grep -A8 "^contender" $OUT/bench_${cfg}_$n.txt | grep -v "^$"
  rm -rf /tmp/pr && mkdir /tmp/pr
  SIGSTREAM_TRACE=1 .gpu/bin/sigstream batch /tmp/bb_${cfg}_$n/batch_bench.yaml --backend cuda --quiet --no-progress \
    --out-dir /tmp/pr > $OUT/trace_$cfg.txt 2>&1
  grep -E "batch: device" $OUT/trace_$cfg.txt | head -3
done
