#!/usr/bin/env bash
# P11 (stop 50): what a CUDA process's release at exit costs, and whether
# destroying the contexts before it, one thread a device, is shorter (after
# `tar -xJf .gpu.txz`). bench_gpu_start on GPU 0 and on 0-3, with PINNED MiB
# (default "0 256") pinned in each device's context, --release exit / reset /
# reset-serial, ROUNDS rounds alternating; "tail" = the process's wall after
# main's last line (its _Exit's release; for reset, after the resets).
set -uo pipefail
. bench/p11_lib.sh
S=.gpu/bin/bench_gpu_start
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs"
for r in $(seq 1 "${ROUNDS:-3}"); do
  for d in 0 0,1,2,3; do
    for mb in ${PINNED:-0 256}; do
      for rel in exit reset reset-serial; do
        t0=$(date +%s%N)
        line=$("$S" --devices "$d" --pinned-mb "$mb" --release "$rel")
        w=$(ms "$t0")
        main=$(echo "$line" | sed -E 's/.*main returns at ([0-9.]+) ms.*/\1/')
        rel_ms=$(echo "$line" | grep -oE "$rel in [0-9.]+ ms" | grep -oE "[0-9.]+ ms")
        echo "r$r gpus $d pinned ${mb} MiB/device $rel: wall $w ms, main returns ${main} ms${rel_ms:+ (release ${rel_ms})}, tail $(python3 -c "print(round($w - $main))") ms"
      done
    done
  done
done
