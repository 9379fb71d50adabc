#!/usr/bin/env bash
# P11 on a lent multi-GPU host: a config (CONFIG=gpu, the default: 65,536-tap
# direct FIR + 48k->44.1k resample + spectrum; CONFIG=io: 255 taps + metrics)
# over 1, 2 and all GPUs at PER files per GPU (default "2 4 8 auto"; auto =
# sigstream's default), process wall, best of RUNS (2); then (TRACE=1) traces
# of the default and of 4 per GPU on all GPUs: when each worker's backend was
# ready, the first and last commits. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
N=${FILES:-200}
G=$(nvidia-smi -L | wc -l); all=$(seq -s, 0 $((G - 1)))
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files "$N" \
  --work /tmp/bb_${CONFIG:-gpu} --config ${CONFIG:-gpu} --skip-loop --runs 1 2>&1 | tail -6
C=/tmp/bb_${CONFIG:-gpu}/batch_bench.yaml
sets="0"; [ "$G" -ge 2 ] && sets="$sets 0,1"; [ "$G" -ge 4 ] && sets="$sets $all"
for d in $sets; do
  for f in ${PER:-2 4 8 auto}; do
    best=999999
    for r in $(seq ${RUNS:-2}); do
      rm -rf /tmp/po && mkdir /tmp/po
      extra=""; [ $f != auto ] && extra="--files-per-device $f"
      t0=$(date +%s%N)
      $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[$d]" $extra >/dev/null 2>&1 || echo "failed"
      t=$(( ($(date +%s%N) - t0) / 1000000 )); [ $t -lt $best ] && best=$t
    done
    echo "gpus $d, files per GPU $f: $best ms"
  done
done
[ -n "${TRACE-1}" ] && for f in auto 4; do
  rm -rf /tmp/po && mkdir /tmp/po
  extra=""; [ $f != auto ] && extra="--files-per-device $f"
  SIGSTREAM_TRACE=1 $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[$all]" $extra > "$OUT/trace_$f.txt" 2>&1
  t=$OUT/trace_$f.txt
  echo "== trace, all GPUs, $f per GPU"
  grep -m1 "driver initialised" "$t"; grep "context created" "$t" | sed -n '1p;$p'
  echo "backends prepared: $(grep -c 'backend prepared' "$t"), first/last: $(grep 'backend prepared' "$t" | awk '{print $3}' | sort -n | sed -n '1p;$p' | tr '\n' ' ')"
  echo "commits first/median/last: $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{print a[1], a[int(NR/2)], a[NR]}')"
  grep -E "batch profile|batch: device" "$t" | head -6
done
