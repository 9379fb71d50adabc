#!/usr/bin/env bash
# P11 (stop 49): where a GPU-bound batch's wall goes on one GPU and on four
# (after `tar -xJf .gpu.txz`): 800 GPU-bound files (bench/batch_bench.py's gpu
# config), traced runs (SIGSTREAM_TRACE=1) on GPU 0, GPUs 0-3 and the default,
# summed by bench/p11_trace_summary.py; traces under $OUT.
set -uo pipefail
. bench/p11_lib.sh
B=.gpu/bin/sigstream
N=${FILES:-800}
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "$N" --work /tmp/bb_gpu --config gpu --skip-loop --runs 1 --per-device auto 2>&1 | grep -E "inputs:|^batch "
G=/tmp/bb_gpu/batch_bench.yaml
for r in 1 2; do
  for d in 0 0,1,2,3 default; do
    set -- batch "$G" --backend cuda --force -q --no-progress --out-dir /tmp/po
    [ "$d" = default ] || set -- "$@" --set "execution.device=[$d]"
    rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
    f="$OUT/trace_gpu${N}_${d//,/-}_$r.txt"
    SIGSTREAM_TRACE=1 "$B" "$@" 2>"$f" >/dev/null || echo "failed: $d"
    echo "gpus $d r$r: $(ms "$t0") ms | $(python3 bench/p11_trace_summary.py "$f")"
  done
done
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw --format=csv
