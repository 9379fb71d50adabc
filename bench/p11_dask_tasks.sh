#!/usr/bin/env bash
# P11 (stop 45): the Dask batch's tasks of several files on a lent host. The io
# config (IOFILES, default 800) and the GPU-bound one (GFILES, default 200):
# the floor, the in-process batch, and a warm local cluster (one worker per
# GPU, 1 and every GPU) at one file a task and at the default (several),
# alternating; then a GPU worker killed at 50% with the default tasks, its
# commits counted. Needs the bundle (.gpu.txz with
# libsigstream_commit_shim.so in .gpu/lib) and the sigstream and Dask wheels
# in .whl/. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site SIGSTREAM_CLI=$PWD/.gpu/bin/sigstream PYTHONUNBUFFERED=1
NG=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) cores, $NG GPU(s)"
make_inputs .gpu/bin/sigstream "${IOFILES:-800}" "${GFILES:-200}"
for r in 1 2; do
  timed "round $r, io, in-process batch (auto)" .gpu/bin/sigstream batch "$C" --quiet --no-progress --out-dir /tmp/po
done
timeout 300 python3 bench/dask_gpu.py "$C" --gpus "1,$NG" --files-per-task 1,auto --runs 2 --out-dir /tmp/dk_io \
  2>&1 | grep -E "^dask|round|Error"
timeout 200 python3 bench/dask_gpu.py "$G" --gpus "$NG" --files-per-task 1,auto --runs 2 --out-dir /tmp/dk_gpu \
  2>&1 | grep -E "^dask|round|Error"
for r in 1 2; do
  timed "round $r, GPU-bound, in-process batch (cuda)" .gpu/bin/sigstream batch "$G" --quiet --no-progress \
    --out-dir /tmp/po --backend cuda
done
echo "== a GPU worker killed at 50% (Dask, every GPU, default tasks)"
SIGSTREAM_COMMIT_LOG=/tmp/commits.log LD_PRELOAD=$PWD/.gpu/lib/libsigstream_commit_shim.so \
  timeout 200 python3 bench/dask_gpu.py "$C" --gpus "$NG" --kill --out-dir /tmp/dk_kill 2>&1 | grep -vE "Warn|warn" | tail -5
echo "kill check rc ${PIPESTATUS[0]}"
