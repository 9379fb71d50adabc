#!/usr/bin/env bash
# P11: backend auto against the CPU alone and CUDA (BACKENDS) on a lent host, io config,
# 200 and 800 files, alternating, 2 rounds; auto's decision from its trace.
# Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
nproc; nvidia-smi -L | wc -l
for n in 200 800; do
  python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files $n \
    --work /tmp/bb$n --config io --skip-loop --runs 2 2>&1 | grep -E "^(io floor x|cuda start)" | sed "s/^/$n files: /"
  for r in 1 2; do
    for be in ${BACKENDS:-auto cpu cuda}; do
      rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 $S batch /tmp/bb$n/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po --backend $be 2> "$OUT/t_$be.txt" >/dev/null
      echo "$n files, $be: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    done
  done
  grep -E "batch: " "$OUT/t_auto.txt" | head -4
done
