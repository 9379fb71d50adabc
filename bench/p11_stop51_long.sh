#!/usr/bin/env bash
# P11 (stop 51): the targets by process wall on long batches, where a CUDA
# process's fixed start and exit (0.7-1.5 s with four GPUs) are a small part
# (after `tar -xJf .gpu.txz`). Inputs: 200 distinct 30 s stereo files, the
# rest hard links to them (batch_bench.py --unique), in /dev/shm where it has
# room (outputs too; the floor's and the batch's alike). io: IO_FILES files,
# the floor (one process per core) and the default batch, best of 2. GPU-bound:
# GPU_FILES files on the default's GPUs, on 0-3, 0,1 and 0, one run each. SHM_MIN:
# the GB /dev/shm must have free to be used (200).
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
long_work "${SHM_MIN:-200}"
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs; work in $W (/dev/shm: ${SHM_FREE:-?} GB free)"
IF=${IO_FILES:-10000}; GF=${GPU_FILES:-16000}
if [ "$IF" -gt 0 ]; then
  echo "== io, $IF files"
  timeout 250 python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$IF" \
    --unique 200 --work "$W/io" --config io --skip-loop --runs 2 2>&1 | tee "$OUT/long_io.txt" | grep -vE "^$"
  rm -rf "$W/io"
fi
if [ "$GF" -gt 0 ]; then
  echo "== GPU-bound, $GF files"
  timeout 420 python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$GF" \
    --unique 200 --work "$W/gpu" --config gpu --backend cuda --skip-loop --runs 1 --jobs 1 \
    --devices "0,1,2,3;0,1;0" 2>&1 | tee "$OUT/long_gpu.txt" | grep -vE "^$"
  rm -rf "$W/gpu"
fi
