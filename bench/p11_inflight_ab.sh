#!/usr/bin/env bash
# P11, A/B on a lent host: the io config (255 taps + metrics) over FILES
# (default 800) files, `sigstream batch --backend cuda` of each binary in BINS
# (default: .gpu/bin/sigstream_prev and .gpu/bin/sigstream) at each of PER
# (default "8 16") files per GPU, alternating, RUNS (3) rounds, process wall;
# then a trace of each binary at each PER: the first and last lanes, the first, median and last commit, the rate after the
# first, the trace's exit line and the process's end. The one-process-per-core
# floor in the same run. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BINS=${BINS:-.gpu/bin/sigstream_prev .gpu/bin/sigstream}
last=${BINS##* }
N=${FILES:-800}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
python3 bench/batch_bench.py --bin "$PWD/$last" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "$N" --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
for r in $(seq ${RUNS:-3}); do
  for f in ${PER:-8 16}; do
    for b in $BINS; do
      rm -rf /tmp/po && mkdir /tmp/po
      t0=$(date +%s%N)
      $b batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --files-per-device $f >/dev/null 2>&1 || echo "failed"
      echo "round $r, $(basename $b), files per GPU $f: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    done
  done
done
for f in ${PER:-8 16}; do
  for b in $BINS; do
    rm -rf /tmp/po && mkdir /tmp/po
    t=$OUT/trace_$(basename $b)_$f.txt
    t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 $b batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --files-per-device $f > "$t" 2>&1
    w=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "== trace $(basename $b), $f per GPU: driver at $(grep -m1 "driver initialised" "$t" | awk "{print \$3}") ms; lanes first/last $(grep 'lanes allocated' "$t" | awk '{print $3}' | sort -n | sed -n '1p;$p' | tr '\n' ' ')ms; commits first/median/last (ms): $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{printf "%s %s %s, after the first %.0f files/s", a[1], a[int(NR/2)], a[NR], (NR-1)*1000/(a[NR]-a[1])}'); exit line $(grep ' exit$' "$t" | awk '{print $3}') ms, process $w ms"
    grep "batch profile" "$t" | cut -c1-240
  done
done
