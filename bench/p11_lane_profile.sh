#!/usr/bin/env bash
# P11 (stop 44): where the CUDA workers of a long light batch on one GPU of a
# many-core host spend their time. The io config (255 taps + metrics) over
# FILES (default 2400) files on GPU 0, --backend cuda, FPD (default "16 32")
# files in flight. For each: a traced run (each worker's set-up span, the
# commits' rate after the first) with the GPU's utilisation sampled beside
# it, perf stat, an off-CPU profile (sched_switch with call chains) and an
# on-CPU one. perf travels in .gpu (gpu-bundle /usr/bin/perf). Logs to
# stdout, profiles to $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; P=$PWD/.gpu/bin/perf
N=${FILES:-2400}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; echo "cores: $(nproc)"
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --files "$N" --work /tmp/bb \
  --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
C=/tmp/bb/batch_bench.yaml
one() { rm -rf /tmp/po && mkdir /tmp/po; "$@" $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda \
  --set "execution.device=[0]" --files-per-device "$f" >/dev/null; }
for f in ${FPD:-16 32}; do
  echo "== $f files in flight"
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 50 > /tmp/util.txt &
  u=$!
  t0=$(date +%s%N)
  SIGSTREAM_TRACE=1 one env 2>"$OUT/trace_$f.txt"
  echo "process $(ms "$t0") ms"
  kill $u 2>/dev/null; wait $u 2>/dev/null
  echo "GPU utilisation samples (50 ms): $(tr '\n' ' ' < /tmp/util.txt)"
  python3 - "$OUT/trace_$f.txt" <<'EOF'
import re, sys, statistics
ctx, lanes, commits = {}, {}, []
for line in open(sys.argv[1]):
    m = re.match(r"sigstream: trace +([\d.]+) ms t(\d+) +(.*)", line)
    if not m:
        continue
    t, th, what = float(m[1]), int(m[2]), m[3]
    if what.startswith("cuda: context created"):
        ctx.setdefault(th, t)
    elif what.startswith("cuda: lanes allocated"):
        lanes.setdefault(th, t)
    elif "outputs committed" in what:
        commits.append(t)
spans = sorted((ctx[t], lanes[t]) for t in lanes if t in ctx)
print(f"workers' set-up: {len(spans)}; context-made at {spans[0][0]:.0f}..{spans[-1][0]:.0f} ms; "
      f"lanes {spans[0][1]:.0f}..{max(b for _, b in spans):.0f} ms; "
      f"span median {statistics.median(b - a for a, b in spans):.1f} ms, max {max(b - a for a, b in spans):.1f} ms")
commits.sort()
if len(commits) > 41:
    a, b = commits[0], commits[-1]
    mid = commits[len(commits) // 10], commits[len(commits) * 9 // 10]
    print(f"commits {a:.0f} .. {b:.0f} ms; after the first {(len(commits) - 1) * 1000 / (b - a):.0f} files/s; "
          f"10%-90% {(len(commits) * 8 // 10) * 1000 / (mid[1] - mid[0]):.0f} files/s")
EOF
  one $P stat -e task-clock,context-switches,cpu-migrations,page-faults -o /tmp/stat.txt --
  grep -E "task-clock|switches|faults|elapsed|user|sys" /tmp/stat.txt
  one $P record -q -e sched:sched_switch -g -o /tmp/off.data --
  $P report -i /tmp/off.data --stdio --no-children --sort sym --percent-limit 2 -g caller,1,callee --max-stack 14 \
    > "$OUT/off_$f.txt" 2>&1
  head -120 "$OUT/off_$f.txt" | grep -v "^$" | head -90
  one $P record -q -F 1999 -g -o /tmp/on.data --
  $P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.7 -g none \
    > "$OUT/on_$f.txt" 2>&1
  grep -v "^#" "$OUT/on_$f.txt" | grep -v "^$" | head -40
done
