#!/usr/bin/env bash
# Stop 40's last GPU round (1 x H100, after `tar -xJf .gpu.txz`): the CPU
# backend's batch with the previous binary (sigstream_prev: no mmap
# threshold) and the new one, alternating, 400 files at 16 threads; the
# batch on auto and cuda; sigstream_cuda_tests. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files 400 \
  --work /tmp/bb --config io --skip-loop --runs 2 2>&1 | grep -E "^(batch|io floor x|cuda start)"
C=/tmp/bb/batch_bench.yaml
TIMEFORMAT='%R s real %U user %S sys'
for r in 1 2 3; do
  for b in sigstream_prev sigstream; do
    for be in cpu auto cuda; do
      [ $b = sigstream_prev ] && [ $be != cpu ] && continue
      rm -rf /tmp/po && mkdir /tmp/po
      echo "$b $be: $( { time .gpu/bin/$b batch $C --quiet --no-progress --out-dir /tmp/po --backend $be >/dev/null 2>&1; } 2>&1 )"
    done
  done
done
rm -rf /tmp/pa /tmp/pb && mkdir /tmp/pa /tmp/pb
.gpu/bin/sigstream_prev batch $C --quiet --no-progress --out-dir /tmp/pa --backend cpu >/dev/null 2>&1
$S batch $C --quiet --no-progress --out-dir /tmp/pb --backend cpu >/dev/null 2>&1
same=0; diff=0; for f in /tmp/pa/*.wav; do cmp -s "$f" "/tmp/pb/$(basename "$f")" && same=$((same+1)) || diff=$((diff+1)); done
echo "prev vs new CPU outputs: $same identical, $diff differ"
timeout 400 .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1
echo "sigstream_cuda_tests: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$OUT/cuda_tests.txt" | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/cuda_tests.txt" | head
