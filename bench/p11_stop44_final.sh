#!/usr/bin/env bash
# P11 (stop 44) on a lent host: the CUDA tests and sanitizers on the new
# build, then old (.gpu/bin/sigstream_old) against new at their defaults,
# alternating: the io config at 800 files (cuda and auto, traced) and 2,400
# files (cuda), and the GPU-bound config at GFILES (default 300) files. Logs
# to $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=".gpu/bin/sigstream_old .gpu/bin/sigstream"
CHECKS=${CHECKS:-1} ROUNDS=${ROUNDS:-3} FILES=800 BINS="$B" bash bench/p11_final_round1.sh
CHECKS=0 ROUNDS=2 FILES=2400 BINS="$B" OUT=$OUT/l bash bench/p11_final_round1.sh 2>&1 | grep -v "^== trace\|^ *$"
python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "${GFILES:-300}" --work /tmp/bb_gpu --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:"
for r in 1 2; do
  for b in $B; do
    timed "round $r, $(basename $b), GPU-bound ${GFILES:-300} files, cuda" $b batch /tmp/bb_gpu/batch_bench.yaml \
      --quiet --no-progress --out-dir /tmp/po --backend cuda
  done
done
