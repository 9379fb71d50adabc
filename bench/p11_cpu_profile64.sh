#!/usr/bin/env bash
# P11: where the CPU backend's batch on every core of a big host stops
# scaling (io config, FILES=800): wall and user/sys at 32 and all threads,
# perf stat, an on-CPU profile and an off-CPU one (sched_switch). perf
# travels in .gpu. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; P=$PWD/.gpu/bin/perf
N=${FILES:-800}
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cpu --files $N \
  --work /tmp/bb --config io --skip-loop --runs 2 2>&1 | grep -E "^(batch|io floor x)"
C=/tmp/bb/batch_bench.yaml
b() { rm -rf /tmp/po && mkdir /tmp/po; $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cpu "$@"; }
TIMEFORMAT='%R s real %U user %S sys'
for t in 32 0; do for r in 1 2; do echo "threads $t: $( { time b --set execution.threads=$t >/dev/null 2>&1; } 2>&1 )"; done; done
rm -rf /tmp/po && mkdir /tmp/po
$P stat -e task-clock,context-switches,cpu-migrations,page-faults -- $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cpu 2>&1 | grep -E "task-clock|context|migrations|faults|elapsed"
rm -rf /tmp/po && mkdir /tmp/po
$P record -F 999 -g -o /tmp/on.data -- $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po > /dev/null 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.7 -g none 2>/dev/null | grep -E "^ +[0-9]" > "$OUT/on_flat.txt"
$P report -i /tmp/on.data --stdio --no-children --sort sym --percent-limit 3 -g caller,1,callee --max-stack 10 > "$OUT/on_graph.txt" 2>&1
head -30 "$OUT/on_flat.txt"
rm -rf /tmp/po && mkdir /tmp/po
$P record -e sched:sched_switch -g -o /tmp/off.data -- $S batch $C --backend cpu --quiet --no-progress --out-dir /tmp/po > /dev/null 2>&1
$P report -i /tmp/off.data --stdio --no-children --sort sym --percent-limit 1 -g caller,1,callee --max-stack 16 > "$OUT/off_graph.txt" 2>&1
grep -E "[0-9]+\.[0-9]+%--" "$OUT/off_graph.txt" | head -40
