#!/usr/bin/env bash
# P11: does the CPU backend's batch scale with the cores of a lent host?
# io config, FILES (200) and 4x as many, at 8, 16, 32, 48 and all threads,
# best of 3, against the one-process-per-core floor; then auto. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
S=$PWD/.gpu/bin/sigstream
N=${FILES:-200}
for n in $N $((4 * N)); do
  python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cpu --files $n \
    --work /tmp/bb_io$n --config io --skip-loop --runs 2 2>&1 | grep -E "^(batch|io floor x)" | sed "s/^/$n files: /"
  for t in 8 16 32 48 0 auto; do
    best=999999
    for r in 1 2 3; do
      rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      if [ $t = auto ]; then a=(--backend auto); else a=(--backend cpu --set execution.threads=$t); fi
      $S batch /tmp/bb_io$n/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po "${a[@]}" >/dev/null 2>&1
      ms=$(( ($(date +%s%N) - t0) / 1000000 )); [ $ms -lt $best ] && best=$ms
    done
    echo "$n files, threads $t (0 = all): best of 3 $best ms"
  done
done
