#!/usr/bin/env bash
# P12 on a lent GPU host: live latency of two builds on the same lease, CPU
# backend, stereo 48 kHz, 1 ms blocks: cases K = 4095 (partitioned FIR),
# `--highpass 80 --iir 4` (the iir stage) and K = 63 (direct FIR: the stage's
# step), LIVE_SECONDS (25) each, ROUNDS (2) rounds, the builds alternating within a
# case (BINS, default .gpu/bin/sigstream_old then .gpu/bin/sigstream).
# PACER: the C++ clock (default .gpu/bin/bench_live_pace). Prints
# bench/live_latency.py's line per run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BINS=${BINS:-.gpu/bin/sigstream_old .gpu/bin/sigstream}
for r in $(seq ${ROUNDS:-2}); do
  for c in "--taps 4095" "--iir 4 --taps 4095" "--taps 63"; do
    for b in $BINS; do
      echo "== round $r, $(basename $b), $c"
      # shellcheck disable=SC2086
      python3 bench/live_latency.py --bin "$b" --pacer "${PACER:-.gpu/bin/bench_live_pace}" $c --seconds ${LIVE_SECONDS:-25} \
        --peers sigstream --backend cpu 2>&1 | grep -E "^sigstream" | sed -E "s/'lanes'.*//"
    done
  done
done
