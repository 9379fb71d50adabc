#!/usr/bin/env bash
# P11: the batch's backends against each other on one warm machine, alternating runs (process
# wall, new outputs each run), for the io config at 200 and 800 files and the
# gpu config at 200. BACKENDS ("auto cuda"; cuda@0,1 = CUDA on GPUs 0 and 1),
# REPS (4), RUNSET ("io:200 io:800 gpu:200"). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; F=$PWD/.gpu/bin/bench_cpu_io_floor
echo "host: $(nproc) cores, $(nvidia-smi -L | wc -l) GPU(s)"
for run in ${RUNSET:-io:200 io:800 gpu:200}; do
  cfg=${run%%:*}; n=${run##*:}
  python3 bench/batch_bench.py --bin "$S" --floor "$F" --backend cuda --files $n --config $cfg --work /tmp/bb_$cfg \
    --skip-loop --runs 2 > $OUT/bench_${cfg}_$n.txt 2>&1
  echo "== $cfg $n: $(grep -E '^io floor x' $OUT/bench_${cfg}_$n.txt | awk '{print "floor", $4, "s"}'); $(grep -E '^cuda start' $OUT/bench_${cfg}_$n.txt | awk '{print "cuda start", $4, "s"}')"
  C=/tmp/bb_$cfg/batch_bench.yaml
  declare -A best=()
  for r in $(seq ${REPS:-4}); do
    for b in ${BACKENDS:-auto cuda}; do
      rm -rf /tmp/bb_$cfg/o; mkdir -p /tmp/bb_$cfg/o
      t0=$(date +%s%N)
      be=${b%%@*}; devset=(); [ "$be" != "$b" ] && devset=(--set "execution.device=[${b#*@}]")
      SIGSTREAM_TRACE=1 "$S" batch "$C" /tmp/bb_$cfg/in_${n}x30s/*.wav --out-dir /tmp/bb_$cfg/o --force --quiet \
        --no-progress --backend $be "${devset[@]}" 2> $OUT/trace_${cfg}_${n}_$b.txt
      rc=$?; t1=$(date +%s%N); ms=$(( (t1 - t0) / 1000000 ))
      if [ -z "${best[$b]:-}" ] || [ $ms -lt ${best[$b]} ]; then best[$b]=$ms; fi
      on=$(python3 -c "
import json, collections
s = json.load(open('/tmp/bb_$cfg/o/batch_summary.json'))
print(dict(collections.Counter(str(f.get('device')) for f in s['files'])))")
      echo "$b: rc $rc $ms ms $on $(grep -E 'listed after' $OUT/trace_${cfg}_${n}_$b.txt | sed 's/.*listed after \([0-9.]*\) s; \([0-9]*\) of.*device 0 \(.*\)/listed \1 s, cpu did \2, gpu \3/') $(grep -m1 'context created' $OUT/trace_${cfg}_${n}_$b.txt | awk '{print "ctx", $3}') $(grep -m1 'holds its lanes' $OUT/trace_${cfg}_${n}_$b.txt | awk '{print "lanes", $3}')"
    done
  done
  for b in ${BACKENDS:-auto cuda}; do echo "best $b: ${best[$b]} ms"; done
  unset best
done
