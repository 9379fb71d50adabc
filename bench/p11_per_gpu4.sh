#!/usr/bin/env bash
# P11 on a lent 4-GPU host: the io config (255 taps + metrics) over FILES
# (default 400) files on GPU 0, GPUs 0,1 and GPUs 0-3 at each of PER (default
# "8 16") files per GPU, alternating, RUNS (2) rounds, process wall, with the
# one-process-per-core floor in the same run. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
S=$PWD/.gpu/bin/sigstream
N=${FILES:-400}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files "$N" \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
for r in $(seq ${RUNS:-2}); do
  for d in 0 0,1 0,1,2,3; do
    for f in ${PER:-8 16}; do
      rm -rf /tmp/po && mkdir /tmp/po
      t0=$(date +%s%N)
      $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[$d]" \
        --files-per-device $f >/dev/null 2>&1 || echo "failed"
      echo "round $r, GPUs $d, files per GPU $f: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    done
  done
done
