#!/usr/bin/env bash
# P11 (stop 52), after `tar -xJf .gpu.txz`: how the targets hold as a batch
# grows, by process wall, on this host (IO_SIZES= or GPU_SIZES= leaves a part
# out). io: IO_SIZES files (default 200 1000
# 4000), the floor (one process per core) against the default batch, best of
# 2. GPU-bound: GPU_SIZES files (default 1600) on GPU 0 and on GPUs 0-3. Inputs
# as p11_stop51_long.sh's (200 distinct, the rest hard links, in /dev/shm).
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
long_work 100
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs; work in $W"
for n in ${IO_SIZES-200 1000 4000}; do
  echo "== io, $n files"
  timeout 120 python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --unique 200 --work "$W/io$n" --config io --skip-loop --runs 2 2>&1 | grep -E "^(batch|io floor)"
  rm -rf "$W/io$n"
done
for n in ${GPU_SIZES-1600}; do
  echo "== GPU-bound, $n files"
  timeout 150 python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --unique 200 --work "$W/gpu$n" --config gpu --backend cuda --skip-loop --runs 1 --jobs 1 \
    --devices "0,1,2,3;0" 2>&1 | grep -E "^batch"
  rm -rf "$W/gpu$n"
done
