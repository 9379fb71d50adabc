#!/usr/bin/env bash
# P11 (stop 50): why four GPUs in one process give 3.16x one GPU's files/s
# once started, where four Dask worker processes give 3.99x (after `tar -xJf
# .gpu.txz`, perf in .gpu/bin). GPU-bound config, FILES (default 1600), traced
# (SIGSTREAM_TRACE=1; bench/p11_trace_summary.py: the rate once started):
#   one process on GPU 0; on GPUs 0-3 (16 and 8 files a GPU), with the GPUs'
#   utilisation sampled; four processes at once, each on its own GPU
#   (CUDA_VISIBLE_DEVICES=i, --shard i/4), their commits pooled; perf stat and
#   an on-CPU and off-CPU profile of the one process on 0-3. Logs to $OUT.
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream; P=$PWD/.gpu/bin/perf
N=${FILES:-1600}
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs"
python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "$N" --work /tmp/g --config gpu --skip-loop --runs 1 --devices '' 2>&1 | grep -E "inputs:"
G=/tmp/g/batch_bench.yaml
run() { # LABEL ARGS...: a traced batch into an emptied /tmp/po
  local label=$1; shift; rm -rf /tmp/po && mkdir /tmp/po; local t0; t0=$(date +%s%N)
  SIGSTREAM_TRACE=1 "$B" batch "$G" --backend cuda --force -q --no-progress --out-dir /tmp/po "$@" \
    2>"$OUT/trace_$label.txt" >/dev/null || echo "failed: $label"
  echo "$label: $(ms "$t0") ms | $(python3 bench/p11_trace_summary.py "$OUT/trace_$label.txt")"
}
run gpu0 --set 'execution.device=[0]'
nvidia-smi --query-gpu=index,utilization.gpu,clocks.sm,power.draw --format=csv,noheader -lms 250 \
  > "$OUT/smi_all16.txt" 2>&1 & SMI=$!
run all16 --set 'execution.device=[0,1,2,3]'
kill $SMI; wait $SMI 2>/dev/null
python3 - "$OUT/smi_all16.txt" <<'PY'
import sys, collections
u = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = [x.strip() for x in line.split(",")]
    if len(p) >= 4 and p[0].isdigit():
        u[p[0]].append((int(p[1].split()[0]), p[2], p[3]))
for g, v in sorted(u.items()):
    busy = [x[0] for x in v if x[0] > 0]
    print(f"  GPU {g}: {len(v)} samples, utilisation median of the busy ones {sorted(busy)[len(busy)//2] if busy else 0}%, "
          f"mean over all {sum(x[0] for x in v)/max(1,len(v)):.0f}%; last clocks/power {v[len(v)//2][1]} {v[len(v)//2][2]}")
PY
run all8 --set 'execution.device=[0,1,2,3]' --files-per-device 8
run all16b --set 'execution.device=[0,1,2,3]'
# Four processes, one GPU each, started together.
rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
for i in 0 1 2 3; do
  CUDA_VISIBLE_DEVICES=$i SIGSTREAM_TRACE=1 "$B" batch "$G" --backend cuda --force -q --no-progress \
    --out-dir /tmp/po --shard "$i/4" 2>"$OUT/trace_proc$i.txt" >/dev/null &
done
wait
echo "procs4: $(ms "$t0") ms"
for i in 0 1 2 3; do echo "  proc $i: $(python3 bench/p11_trace_summary.py "$OUT/trace_proc$i.txt")"; done
cat "$OUT"/trace_proc*.txt > "$OUT/trace_procs_pooled.txt"
echo "  pooled: $(python3 bench/p11_trace_summary.py "$OUT/trace_procs_pooled.txt")"
rm -rf /tmp/po && mkdir /tmp/po
$P stat -e task-clock,context-switches,cpu-migrations,page-faults -- "$B" batch "$G" --backend cuda --force -q \
  --no-progress --out-dir /tmp/po --set 'execution.device=[0,1,2,3]' 2>&1 | grep -E "task-clock|context|migrations|faults|elapsed"
rm -rf /tmp/po && mkdir /tmp/po
$P record -F 499 -g -o /tmp/on.data -- "$B" batch "$G" --backend cuda --force -q --no-progress --out-dir /tmp/po \
  --set 'execution.device=[0,1,2,3]' > /dev/null 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.5 -g none 2>/dev/null |
  grep -E "^ +[0-9]" > "$OUT/on_flat.txt"
$P report -i /tmp/on.data --stdio --no-children --sort sym --percent-limit 2 -g caller,1,callee --max-stack 12 \
  > "$OUT/on_graph.txt" 2>&1
echo "== on-CPU, top"; head -25 "$OUT/on_flat.txt"
rm -rf /tmp/po && mkdir /tmp/po
$P record -e sched:sched_switch -g -o /tmp/off.data -- "$B" batch "$G" --backend cuda --force -q --no-progress \
  --out-dir /tmp/po --set 'execution.device=[0,1,2,3]' > /dev/null 2>&1
$P report -i /tmp/off.data --stdio --no-children --sort sym --percent-limit 1 -g caller,1,callee --max-stack 16 \
  > "$OUT/off_graph.txt" 2>&1
echo "== off-CPU (sched_switch), callers"; grep -E "[0-9]+\.[0-9]+%--" "$OUT/off_graph.txt" | head -30
