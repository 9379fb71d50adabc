#!/usr/bin/env bash
# P11: why the CPU backend's batch in one process stops at ~250 files/s on
# many cores while one process per core reaches the floor. On a lent host
# (16+ cores): the floor and the batch (batch_bench.py), the batch's
# SIGSTREAM_TRACE profile, perf stat, an on-CPU profile and an off-CPU one
# (sched_switch with call chains), and the batch at 4/8/16/all threads.
# perf travels in .gpu (gpu-bundle /usr/bin/perf). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; P=$PWD/.gpu/bin/perf
N=${FILES:-400}
uname -r; nproc
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cpu --files "$N" \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | tail -8
C=/tmp/bb_io/batch_bench.yaml
for t in 4 8 16 0; do

  t0=$(date +%s%N); rm -rf /tmp/po && mkdir /tmp/po
  $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po --set execution.threads=$t
  echo "threads $t: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
rm -rf /tmp/po && mkdir /tmp/po
SIGSTREAM_TRACE=1 $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po 2>&1 | grep -iE "profile|setup|read|write|run |commit|release|stats" | tail -12
rm -rf /tmp/po && mkdir /tmp/po
$P stat -e task-clock,context-switches,cpu-migrations,page-faults -- $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po 2>&1 | tail -12
rm -rf /tmp/po && mkdir /tmp/po
$P record -F 1999 -g -o /tmp/on.data -- $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po > "$OUT/rec_on.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.5 -g none > "$OUT/on_flat.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort sym --percent-limit 2 -g caller,0.5,callee --max-stack 12 > "$OUT/on_graph.txt" 2>&1
head -60 "$OUT/on_flat.txt"
rm -rf /tmp/po && mkdir /tmp/po
$P record -e sched:sched_switch -g -o /tmp/off.data -- $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po > "$OUT/rec_off.txt" 2>&1
$P report -i /tmp/off.data --stdio --no-children --sort sym --percent-limit 1 -g caller,0.5,callee --max-stack 16 > "$OUT/off_graph.txt" 2>&1
head -80 "$OUT/off_graph.txt"
