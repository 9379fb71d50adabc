#!/usr/bin/env bash
# P11 (stop 48): light files through a warm local Dask cluster of one worker
# per GPU, where 4 workers were slower than 2 (stop 46): the io config's 200
# files on 1 / 2 / 4 GPU workers with tasks of sigstream's default size and
# of 4 and 8 files, and with 8 threads a worker instead of the CPUs over the
# GPUs (after `tar -xJf .gpu.txz`; the sigstream and Dask wheels in .whl/).
# Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
dask_site || exit 1
NG=$(nvidia-smi -L | wc -l)
python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor \
  --files 200 --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x|^batch"
C=/tmp/bb_io/batch_bench.yaml
echo "== Dask, io config, default threads a worker"
timeout 240 python3 bench/dask_gpu.py "$C" --gpus "1,2,$NG" --files-per-task auto,4,8 --runs 2 \
  --out-dir /tmp/dk_io 2>&1 | grep -vE "Warn|warn"
echo "== Dask, io config, 8 threads a worker"
timeout 150 python3 bench/dask_gpu.py "$C" --gpus "2,$NG" --files-per-gpu 8 --runs 2 \
  --out-dir /tmp/dk_io8 2>&1 | grep -vE "Warn|warn"
