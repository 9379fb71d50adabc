#!/usr/bin/env bash
# On the lent GPU machine: where a batch's time goes. Runs bench/batch_bench.py
# (batch at several files in flight per GPU, the I/O floors), then traced
# batches (SIGSTREAM_TRACE=1: the per-phase worker profile, and the timeline
# of the first files with one file in flight). Run from the repository root
# after gpu-bundle; logs to $OUT. FILES (200), PER_DEVICE (auto,4,8,16,32),
# SECONDS_PER_FILE (30), CONFIG_ARGS (extra batch_bench.py arguments).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
FILES=${FILES:-200}
S=$PWD/.gpu/bin/sigstream
echo "host: $(nproc) cores, $(nvidia-smi -L | wc -l) GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
PYTHONUNBUFFERED=1 python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "$FILES" --seconds "${SECONDS_PER_FILE:-30}" --jobs "$(nproc)" --work /tmp/bb --skip-loop \
  --per-device "${PER_DEVICE:-auto,4,8,16,32}" ${CONFIG_ARGS:-} 2>&1 | tee "$OUT/batch_bench.txt"
C=/tmp/bb/batch_bench.yaml
for per in 1 auto; do
  echo "== traced batch, $per file(s) in flight per GPU"
  flag=(); [ "$per" = auto ] || flag=(--files-per-device "$per")
  SIGSTREAM_TRACE=1 $S batch $C --backend cuda --force --no-progress "${flag[@]}" \
    >"$OUT/trace_$per.txt" 2>&1
  grep -E "batch profile|files/s" "$OUT/trace_$per.txt"
done
echo "== timeline, 1 in flight (first 60 trace lines)"
grep "trace" "$OUT/trace_1.txt" | head -60
echo "== cpu backend batch"
SIGSTREAM_TRACE=1 $S batch $C --backend cpu --force --no-progress --out-dir /tmp/bb/out_cpu 2>&1 | grep -E "batch profile|files/s"
