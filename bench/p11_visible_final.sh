#!/usr/bin/env bash
# P11 (stop 43) on a multi-GPU lease, the final build: the CUDA tests (every
# GPU of the lease, so the multi-GPU ones run), then OLD (default
# .gpu/bin/sigstream_old: the driver sees every GPU) against NEW
# (.gpu/bin/sigstream), alternating, ROUNDS (default 2), process wall, with
# their defaults (no execution.device): `filter --backend cuda` of one file; the io config
# (IO_FILES=800) under --backend cuda and auto; the GPU-bound config
# (GPU_FILES=300) under --backend cuda; and one traced NEW run of each batch
# (what the driver saw, its start). Logs to $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
NEW=${NEW:-.gpu/bin/sigstream}; OLD=${OLD:-.gpu/bin/sigstream_old}
nvidia-smi --query-gpu=index,name --format=csv,noheader | head -1; echo "GPUs: $(nvidia-smi -L | wc -l), cores: $(nproc)"
if [ "${CHECKS:-1}" = 1 ]; then
  t0=$(date +%s%N); .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1
  echo "cuda tests rc $? ($(ms $t0) ms)"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED" "$OUT/cuda_tests.txt" | tail -6
fi
make_inputs "$NEW" "${IO_FILES:-800}" "${GPU_FILES:-300}"
for r in $(seq ${ROUNDS:-2}); do
  echo "== round $r"
  for b in $OLD $NEW; do timed "filter --backend cuda, $(basename $b)" $b filter "$ONE" /tmp/po/o.wav --lowpass 3000 --backend cuda --quiet; done
  for mode in cuda auto; do
    for b in $OLD $NEW; do timed "io $mode, $(basename $b)" $b batch $C --quiet --no-progress --out-dir /tmp/po --backend $mode; done
  done
  for b in $OLD $NEW; do timed "gpu-bound cuda, $(basename $b)" $b batch $G --quiet --no-progress --out-dir /tmp/po --backend cuda; done
done
for spec in "io cuda $C" "io auto $C" "gpu cuda $G"; do
  set -- $spec; rm -rf /tmp/po && mkdir /tmp/po
  SIGSTREAM_TRACE=1 $NEW batch $3 --quiet --no-progress --out-dir /tmp/po --backend $2 > /dev/null 2> "$OUT/trace_$1_$2.txt"
  echo "trace $1 $2: $(grep -E 'driver sees|driver initialised' "$OUT/trace_$1_$2.txt" | head -2 | awk '{printf "%s ms %s; ", $3, substr($0, index($0,$6))}')files per device: $(python3 -c "
import json; s=json.load(open('/tmp/po/batch_summary.json')); print(', '.join(f'{d[\"device\"]}: {d[\"files\"]}' for d in s['devices']))")"
done
