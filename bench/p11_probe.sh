#!/usr/bin/env bash
# On a lent multi-GPU machine: why a batch on more GPUs is slower for the
# I/O-bound config. For 200 files (made by batch_bench.py), traces of one
# batch on GPU 0 and on every GPU (SIGSTREAM_TRACE=1: driver, contexts, first
# and last chunk, commits, the workers' profile), then the process wall of
# three batches each with CUDA's lazy and eager module loading. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
G=$(nvidia-smi -L | wc -l); all=$(seq -s, 0 $((G - 1)))
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files 200 \
  --work /tmp/bb_io --config io --skip-loop --runs 1 > "$OUT/probe_bench.txt" 2>&1 || tail -3 "$OUT/probe_bench.txt"
C=/tmp/bb_io/batch_bench.yaml
for d in 0 "$all"; do
  rm -rf /tmp/pr && mkdir /tmp/pr
  SIGSTREAM_TRACE=1 $S batch $C --backend cuda --quiet --no-progress --out-dir /tmp/pr --set "execution.device=[$d]" \
    > "$OUT/trace_gpus${d//,/_}.txt" 2>&1
  t=$OUT/trace_gpus${d//,/_}.txt
  echo "== gpus $d: $(grep -c 'outputs committed' "$t") files"
  grep -m1 "driver initialised" "$t"; grep "context created" "$t" | head -1; grep "context created" "$t" | tail -1
  grep -m1 "lanes allocated" "$t"; grep -m1 "first chunk read" "$t"; grep "lanes allocated" "$t" | tail -1
  grep "outputs committed" "$t" | tail -1; grep -E "trace .* exit|batch profile" "$t"
done
for loading in LAZY EAGER; do
  for d in 0 "$all"; do
    for r in 1 2 3; do
      rm -rf /tmp/pr && mkdir /tmp/pr
      t0=$(date +%s%N)
      CUDA_MODULE_LOADING=$loading $S batch $C --backend cuda --quiet --no-progress --out-dir /tmp/pr \
        --set "execution.device=[$d]" > /dev/null 2>&1 || echo "batch failed"
      echo "$loading gpus $d run $r: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    done
  done
done
