#!/usr/bin/env bash
# P11 (stop 45): where a CUDA process's start and exit go on a multi-GPU host.
# bench_gpu_start on GPU 0 with the driver seeing GPU 0 alone and every GPU:
# warm-up runs, then strace (-f -tt -T, and -c), perf (on-CPU and the
# scheduler's switches) and the dynamic loader's statistics. strace and perf
# travel in .gpu. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.gpu/bin/bench_gpu_start; P=.gpu/bin/perf
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; nvidia-smi topo -m 2>/dev/null | head -8
for v in 0 "$(seq -s, 0 $((NG - 1)))"; do
  export CUDA_VISIBLE_DEVICES=$v
  for r in 1 2 3; do echo "visible $v: $($B --devices 0)"; done
  LD_DEBUG=statistics $B --devices 0 2>&1 | grep -E "total startup time|time needed for relocation" | head -3
  .gpu/bin/strace -f -tt -T -o "$OUT/strace_$r$v.txt" $B --devices 0
  .gpu/bin/strace -f -c -o "$OUT/strace_c_$v.txt" $B --devices 0 >/dev/null
  $P record -F 4999 -g -o /tmp/on.data $B --devices 0 >/dev/null 2>&1
  $P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 1 -g none 2>/dev/null \
    | grep -E "^ +[0-9]" > "$OUT/on_$v.txt"
  $P record -e sched:sched_switch -g -o /tmp/off.data $B --devices 0 >/dev/null 2>&1
  $P report -i /tmp/off.data --stdio --no-children --sort sym --percent-limit 2 -g caller,1,callee --max-stack 14 \
    > "$OUT/off_$v.txt" 2>&1
  echo "== visible $v: strace -c"; head -14 "$OUT/strace_c_$v.txt"
  echo "== visible $v: on-CPU"; head -12 "$OUT/on_$v.txt"
done
