#!/usr/bin/env bash
# P11 (stop 50): files in flight a GPU for GPU-bound files (after `tar -xJf
# .gpu.txz`). The GPU-bound config, FILES (default 800), `--backend cuda` on
# GPU 0 / 0,1 / 0-3, at the default (16 a GPU on this host) and at PER (default
# "8"), ROUNDS rounds alternating; traced, so each row also gives the rate once
# started and the exit's tail (the trace's exit line to the process's end).
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
N=${FILES:-800}
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs"
python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "$N" --work /tmp/g --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:"
G=/tmp/g/batch_bench.yaml
for r in $(seq 1 "${ROUNDS:-2}"); do
  for d in ${SETS:-0 0,1 0,1,2,3}; do
    for p in default ${PER:-8}; do
      set -- batch "$G" --backend cuda --force -q --no-progress --out-dir /tmp/po --set "execution.device=[$d]"
      [ "$p" = default ] || set -- "$@" --files-per-device "$p"
      f="$OUT/trace_${d//,/}_${p}_$r.txt"
      rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 "$B" "$@" 2>"$f" >/dev/null || echo "failed: $d $p"
      w=$(ms "$t0")
      ex=$(grep -E " exit$" "$f" | tail -1 | awk '{print int($3)}')
      echo "gpus $d per $p r$r: $w ms (exit line at ${ex:-?} ms) | $(python3 bench/p11_trace_summary.py "$f")"
    done
  done
done
