#!/usr/bin/env bash
# P11 (stop 42) on a multi-GPU lease: GPU-bound scaling and the io config.
# (1) What a CUDA process pays with no work (bench_gpu_start, GPU 0 and all).
# (2) The GPU-bound config (65,536-tap direct FIR + 44.1 kHz + spectrum) over
#     GPU_FILES (default 600) files on GPU sets SETS (default "0 0,1 0,1,...")
#     with each binary of BINS (default .gpu/bin/sigstream), `--backend cuda`,
#     traced, ROUNDS (default 2) rounds: process wall, the devices' starts,
#     the commits' first/10%/90%/last, files/s between the 10% and the 90%
#     commit, and the steady rate: files/s from 0.1 s after the last device's
#     lanes to the 40th-last commit (every device busy). Files per device.
# (3) The io config (255 taps + metrics) over IO_FILES (default 800) files:
#     the floor (batch_bench), then each binary's batch with no --backend
#     (auto) and `--backend cuda` on GPU 0 and on all, its default files a
#     GPU, alternating, two rounds, process wall.
# Logs to $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
nvidia-smi --query-gpu=index,name,persistence_mode --format=csv,noheader; echo "cores: $(nproc)"
all=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
for d in 0 "$all"; do
  t0=$(date +%s%N); o=$(.gpu/bin/bench_gpu_start --devices "$d"); echo "cuda start $d: $o; process $(ms $t0) ms"
done

echo "== GPU-bound config, ${GPU_FILES:-600} files"
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files "${GPU_FILES:-600}" \
  --work /tmp/bb_gpu --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:|io floor x"
G=/tmp/bb_gpu/batch_bench.yaml
BINS=${BINS:-.gpu/bin/sigstream}
for r in $(seq ${ROUNDS:-2}); do
  for set in ${SETS:-0 0,1 $all}; do
   for B in $BINS; do
    rm -rf /tmp/po && mkdir /tmp/po
    t=$OUT/trace_gpu_$(basename $B)_${set//,/_}_$r.txt
    t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 $B batch $G --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[$set]" \
      > /dev/null 2> "$t"
    w=$(ms $t0)
    echo "-- $(basename $B), GPUs $set, round $r: process $w ms; driver $(grep -m1 'driver initialised' "$t" | awk '{print $3}') ms; $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{lo=int(NR/10); hi=int(9*NR/10); printf "commits first %s, 10%% %s, 90%% %s, last %s ms; steady %.1f files/s", a[1], a[lo], a[hi], a[NR], (hi-lo)*1000/(a[hi]-a[lo])}')"
    grep -E "batch: device .* (starts|stays idle)|holds its lanes" "$t" | awk '{printf "   %s %s\n", $3, substr($0, index($0,$6))}' | head -8
    python3 -c "
import json
s=json.load(open('/tmp/po/batch_summary.json'))
print('   files per device:', ', '.join(f'{d[\"device\"]}: {d[\"files\"]}' for d in s['devices']))" 2>/dev/null
    L=$(grep "lanes allocated" "$t" | awk '{print $3}' | sort -n | tail -1)
    grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk -v L="$L" '{a[NR]=$1} END{hi=a[NR-40]; c=0; for(i=1;i<=NR;i++) if (a[i]>L+100 && a[i]<=hi) {c++; if(!f) f=a[i]; l=a[i]} printf "   last lanes %s ms; steady %.1f files/s (%d commits)\n", L, (c-1)*1000/(l-f), c}'
   done
  done
done

echo "== io config, ${IO_FILES:-800} files"
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --files "${IO_FILES:-800}" --work /tmp/bb_io \
  --config io --skip-loop --runs 2 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
for r in 1 2; do
  for mode in "" "--backend cuda --set execution.device=[0]" "--backend cuda"; do
    for B in $BINS; do
      timed "round $r, $(basename $B) ${mode:-(auto)}" $B batch $C --quiet --no-progress --out-dir /tmp/po $mode
    done
  done
done
