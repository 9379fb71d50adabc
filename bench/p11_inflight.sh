#!/usr/bin/env bash
# P11 on a lent 1-GPU host: does the CUDA batch's steady state grow with the
# files in flight? The io config (255 taps + metrics) over FILES (default 800)
# files at PER files per GPU (default "4 8 16 32"), alternating, RUNS (3)
# rounds, process wall; then a trace at each PER: the first, median and last
# commit, so the rate after the start, (last - first) / (files - 1), shows
# apart from the driver's start. The one-process-per-core floor in the same
# run. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
N=${FILES:-800}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files "$N" \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
for r in $(seq ${RUNS:-3}); do
  for f in ${PER:-4 8 16 32}; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --files-per-device $f >/dev/null 2>&1 || echo "failed"
    echo "round $r, files per GPU $f: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  done
done
for f in ${PER:-4 8 16 32}; do
  rm -rf /tmp/po && mkdir /tmp/po
  SIGSTREAM_TRACE=1 $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --files-per-device $f > "$OUT/trace_$f.txt" 2>&1
  t=$OUT/trace_$f.txt
  echo "== trace, $f per GPU: driver at $(grep -m1 "driver initialised" "$t" | awk "{print \$3}") ms; commits first/median/last (ms): $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{printf "%s %s %s, after the first %.0f files/s", a[1], a[int(NR/2)], a[NR], (NR-1)*1000/(a[NR]-a[1])}')"
done
