#!/usr/bin/env bash
# P11 (stop 49): where a warm Dask batch's wall goes on 1 / 2 / 4 GPU workers
# (after `tar -xJf .gpu.txz`; the wheels in .whl/): the GPU-bound config's
# 800 files, each run's first and last file end (their statistics JSON's
# mtimes), the rate once started and the driver's time after the last file
# (bench/dask_gpu.py's timeline). Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
NG=$(nvidia-smi -L | wc -l)
# WHEELS: folders of sigstream wheels to compare (default .whl), each with .whl's Dask wheels.
make_inputs .gpu/bin/sigstream 8 "${GPU_FILES:-800}"
for w in ${WHEELS:-.whl}; do
  dask_site "$w" || exit 1
  echo "== sigstream from $w"
  timeout 300 python3 bench/dask_gpu.py "$G" \
    --gpus "${GPUS:-1,2,$NG}" --files-per-task auto --runs "${RUNS:-2}" --out-dir /tmp/dk ${PROBE:+--probe-tail} 2>&1 |
    grep -E "^dask|round|rror"
done
