#!/usr/bin/env bash
# P11 (stop 50): the final code's checks and the issue's in-process rows
# (after `tar -xJf .gpu.txz`): the batch's unit tests on a many-core host (the
# files-a-GPU wiring needs 8 hardware threads), sigstream_cuda_tests, then the
# GPU-bound config (800 files) on the defaults and on GPU 0 / 0,1 / 0-3, traced
# (files in flight, the rate once started), and the io config at 200 and
# 3,000 files with the floor (bench/batch_bench.py, the defaults and CUDA).
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
echo "== sigstream_tests (Batch*:Plan*)"
.gpu/bin/sigstream_tests --gtest_filter='Batch*:Plan*' > "$OUT/unit.txt" 2>&1; echo "rc $?"
grep -E "FilesTheGpuBounds|^\[  (PASSED|FAILED|SKIPPED) " "$OUT/unit.txt" | sed 's/^/  /'
echo "== sigstream_cuda_tests"
t0=$(date +%s%N); .gpu/bin/sigstream_cuda_tests > "$OUT/cuda_tests.txt" 2>&1; echo "rc $? in $(ms "$t0") ms"
grep -E "^\[  (PASSED|FAILED) " "$OUT/cuda_tests.txt" | sed 's/^/  /'
python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files 800 --work /tmp/g --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:"
G=/tmp/g/batch_bench.yaml
for r in 1 2; do
  for d in default 0 0,1 0,1,2,3; do
    set -- batch "$G" --force -q --no-progress --out-dir /tmp/po
    [ "$d" = default ] || set -- "$@" --backend cuda --set "execution.device=[$d]"
    f="$OUT/trace_gpu_${d//,/}_$r.txt"
    rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 "$B" "$@" 2>"$f" >/dev/null || echo "failed: $d"
    echo "GPU-bound 800, gpus $d r$r: $(ms "$t0") ms | $(python3 bench/p11_trace_summary.py "$f")"
  done
done
rm -rf /tmp/g
for n in 200 3000; do
  echo "== io, $n files (default, then CUDA)"
  python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --work "/tmp/s_$n" --config io --skip-loop --runs 2 2>&1 | grep -E "^(inputs|batch|io floor)"
  python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --work "/tmp/s_$n" --config io --skip-loop --runs 2 --backend cuda 2>&1 | grep -E "^(batch|io floor)"
  rm -rf "/tmp/s_$n"
done
