#!/usr/bin/env bash
# P11, stop 40's round on a lent host: the CPU backend's batch at 16, 32 and
# all threads (io config, 200 files; does it scale past 16 workers now that
# the batch keeps freed memory?), then bench/p11_backends.sh (auto, cuda on
# all GPUs, on GPU 0, on GPUs 0,1; io 200 and 800, gpu 200). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cpu --files 200 \
  --work /tmp/bb_io --config io --skip-loop --runs 1 2>&1 | grep -E "^(batch|io floor x)"
for t in 16 32 0; do
  best=999999
  for r in 1 2 3; do
    rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
    $S batch /tmp/bb_io/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po --backend cpu --set execution.threads=$t >/dev/null 2>&1
    ms=$(( ($(date +%s%N) - t0) / 1000000 )); [ $ms -lt $best ] && best=$ms
  done
  echo "cpu batch, threads $t (0 = all): best of 3 $best ms"
done
G=$(nvidia-smi -L | wc -l); all=$(seq -s, 0 $((G - 1)))
BACKENDS=${BACKENDS:-"auto cuda cuda@0 cuda@0,1"} REPS=${REPS:-2} RUNSET=${RUNSET:-"io:200 io:800 gpu:200"} \
  bash bench/p11_backends.sh 2>&1 | grep -E "^==|^best|host:"
