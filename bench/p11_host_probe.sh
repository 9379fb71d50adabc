#!/usr/bin/env bash
# P11: the host side of a batch on a lent host. (1) The CPU backend's batch
# with glibc's malloc as it is and with freed memory kept (mmap/trim
# thresholds raised, top pad): wall, page faults, context switches. (2) The
# CUDA backend's batch on GPU 0: wall, its SIGSTREAM_TRACE profile, perf stat,
# an on-CPU and an off-CPU (sched_switch) profile. perf travels in .gpu.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; P=$PWD/.gpu/bin/perf
N=${FILES:-400}
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files "$N" \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | tail -7
C=/tmp/bb_io/batch_bench.yaml
T=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=67108864
for r in 1 2 3; do
  for v in plain kept; do
    for be in cpu cuda; do
      E=X=1; [ $v = kept ] && E="GLIBC_TUNABLES=$T"
      rm -rf /tmp/po && mkdir /tmp/po
      t0=$(date +%s%N)
      env $E $P stat -x, -e task-clock,context-switches,page-faults -o /tmp/st.txt -- $S batch $C --quiet --no-progress --out-dir /tmp/po --backend $be
      echo "$v $be: $(( ($(date +%s%N) - t0) / 1000000 )) ms; $(grep -v '^#' /tmp/st.txt | grep . | awk -F, '{printf "%s %s; ", $1, $3}')"
    done
  done
done
rm -rf /tmp/po && mkdir /tmp/po
SIGSTREAM_TRACE=1 $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda 2>&1 | grep -E "batch profile|context created|driver" | head -5
rm -rf /tmp/po && mkdir /tmp/po
$P record -F 1999 -g -o /tmp/on.data -- $S batch $C --backend cuda --quiet --no-progress --out-dir /tmp/po > "$OUT/rec_on.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.4 -g none > "$OUT/cuda_on_flat.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort sym --percent-limit 1.5 -g caller,0.5,callee --max-stack 14 > "$OUT/cuda_on_graph.txt" 2>&1
grep -E "^ +[0-9]" "$OUT/cuda_on_flat.txt" | head -40
rm -rf /tmp/po && mkdir /tmp/po
$P record -e sched:sched_switch -g -o /tmp/off.data -- $S batch $C --backend cuda --quiet --no-progress --out-dir /tmp/po > "$OUT/rec_off.txt" 2>&1
$P report -i /tmp/off.data --stdio --no-children --sort sym --percent-limit 1 -g caller,0.5,callee --max-stack 18 > "$OUT/cuda_off_graph.txt" 2>&1
