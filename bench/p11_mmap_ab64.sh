#!/usr/bin/env bash
# P11 on a big host: the CPU backend's batch (io config, 800 files, every
# thread) with the previous binary (sigstream_prev: freed memory kept, no
# mmap threshold) and the new one (buffers up to 32 MiB from the heaps),
# alternating, 3 rounds, against the floor. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nproc
python3 bench/batch_bench.py --bin .gpu/bin/sigstream --floor .gpu/bin/bench_cpu_io_floor --backend cpu --files 800 \
  --work /tmp/bb --config io --skip-loop --runs 2 2>&1 | grep -E "^(batch|io floor x)"
TIMEFORMAT='%R s real %U user %S sys'
for r in 1 2 3; do
  for b in sigstream_prev sigstream; do
    rm -rf /tmp/po && mkdir /tmp/po
    echo "$b cpu: $( { time .gpu/bin/$b batch /tmp/bb/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po --backend cpu >/dev/null 2>&1; } 2>&1 )"
  done
done
