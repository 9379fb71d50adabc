#!/usr/bin/env bash
# P11 (stop 48): Dask with the driver's least files a task (5213b43), on a
# warm local cluster of one worker per GPU (after `tar -xJf .gpu.txz`; the
# sigstream and Dask wheels in .whl/): both configs' 200 files on 1 / 2 / 4
# GPU workers with sigstream's tasks and with tasks of 4 and 8 files, then a
# GPU worker killed at 50% with its commits counted. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
dask_site || exit 1
NG=$(nvidia-smi -L | wc -l)
make_inputs .gpu/bin/sigstream 200 200
echo "== Dask, io config"
timeout 200 python3 bench/dask_gpu.py "$C" --gpus "1,2,$NG" --files-per-task auto,4,8 --runs 2 \
  --out-dir /tmp/dk_io 2>&1 | grep -vE "Warn|warn"
echo "== Dask, GPU-bound config"
timeout 200 python3 bench/dask_gpu.py "$G" --gpus "1,2,$NG" --files-per-task auto,4 --runs 1 \
  --out-dir /tmp/dk_gpu 2>&1 | grep -vE "Warn|warn"
echo "== a GPU worker killed at 50% (Dask, every GPU, io config, the default tasks)"
SIGSTREAM_COMMIT_LOG=/tmp/commits.log LD_PRELOAD=$PWD/.gpu/lib/libsigstream_commit_shim.so \
  timeout 150 python3 bench/dask_gpu.py "$C" --gpus "$NG" --kill --out-dir /tmp/dk_kill 2>&1 | grep -vE "Warn|warn" | tail -6
echo "kill check rc ${PIPESTATUS[0]}"
