#!/usr/bin/env bash
# P11 (stop 43): does a process that uses a subset of a multi-GPU host's GPUs
# start faster when the driver sees only that subset (CUDA_VISIBLE_DEVICES)?
# bench_gpu_start on GPU 0 with and without CUDA_VISIBLE_DEVICES=0, and all
# GPUs, alternating, ROUNDS (default 4) rounds: its own driver/context times
# and the process wall. Logs to stdout.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
all=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
for r in $(seq ${ROUNDS:-4}); do
  for v in "" "0" "$all"; do
    t0=$(date +%s%N)
    if [ -n "$v" ]; then o=$(CUDA_VISIBLE_DEVICES=$v .gpu/bin/bench_gpu_start --devices 0); else o=$(.gpu/bin/bench_gpu_start --devices 0); fi
    echo "round $r, visible '${v:-(unset)}', device 0: $o; process $(ms $t0) ms"
  done
done
