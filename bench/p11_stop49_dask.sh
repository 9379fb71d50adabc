#!/usr/bin/env bash
# P11 (stop 49): Dask's tasks for GPU workers sized on a file's GPU seconds
# times the worker's threads (72ae382) against the CPU estimate before, on
# one host (after `tar -xJf .gpu.txz`; the Dask wheels and the old sigstream
# wheel in .whl/, the new one in .whl_new/): the GPU-bound config's 800 files
# on 1 / 2 / 4 warm GPU workers and the io config's 800 on 2 / 4, rounds
# alternating old / new. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
NG=$(nvidia-smi -L | wc -l)
make_inputs .gpu/bin/sigstream "${IO_FILES:-800}" "${GPU_FILES:-800}"
for r in 1 2; do
  for v in old new; do
    if [ "$v" = old ]; then dask_site .whl || exit 1; else dask_site .whl_new || exit 1; fi
    echo "== $v, round $r: GPU-bound"
    timeout 200 python3 bench/dask_gpu.py "$G" \
      --gpus "1,2,$NG" --files-per-task auto --runs 1 --out-dir /tmp/dk 2>&1 | grep -E "^dask|round|rror" | sed 's/^/  /'
    echo "== $v, round $r: io"
    timeout 200 python3 bench/dask_gpu.py "$C" \
      --gpus "2,$NG" --files-per-task auto --runs 2 --out-dir /tmp/dk 2>&1 | grep -E "^dask|round|rror" | sed 's/^/  /'
  done
done
