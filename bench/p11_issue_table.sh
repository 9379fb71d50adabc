#!/usr/bin/env bash
# P11 (stop 46): the GPU table with the code of this stop, on a lent
# host with 4 GPUs (after `tar -xJf .gpu.txz`); PART=inproc, dask or both (default). inproc: batch_bench's
# rows for both configs on GPU sets 0 / 0,1 / 0,1,2,3 and the default, with
# the I/O floor, best of 3 (GPU-bound: 2), in one run each; dask: the
# same inputs through a warm local Dask cluster of one worker per GPU (1, 2,
# 4 workers, the default tasks), then a GPU worker killed at 50% with its
# commits counted (needs the sigstream and Dask wheels in .whl/ and
# libsigstream_commit_shim.so in .gpu/lib). IOFILES (200) and GFILES (200)
# set the sizes. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
NG=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) cores, $NG GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
SETS="0;0,1;0,1,2,3"
io() { python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor \
  --files "${IOFILES:-200}" --work /tmp/bb_io --config io --skip-loop "$@"; }
gpu() { python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor \
  --backend cuda --files "${GFILES:-200}" --work /tmp/bb_gpu --config gpu --skip-loop "$@"; }
inproc() {
  echo "== io config, 255 taps (auto; the GPU sets with --backend as auto picks per set)"
  io --runs 3 --devices "$SETS" 2>&1 | grep -vE "^\s*$"
  echo "== GPU-bound config (cuda)"
  gpu --runs 2 --devices "$SETS" 2>&1 | grep -vE "^\s*$"
}
dask() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site SIGSTREAM_CLI=$PWD/.gpu/bin/sigstream PYTHONUNBUFFERED=1
  io --runs 1 2>&1 | grep -E "inputs:|io floor x"
  gpu --runs 1 2>&1 | grep -E "inputs:"
  C=/tmp/bb_io/batch_bench.yaml; G=/tmp/bb_gpu/batch_bench.yaml
  echo "== Dask, io config"
  timeout 200 python3 bench/dask_gpu.py "$C" --gpus "1,2,$NG" --runs 3 --out-dir /tmp/dk_io 2>&1 | grep -vE "Warn|warn"
  echo "== Dask, GPU-bound config"
  timeout 200 python3 bench/dask_gpu.py "$G" --gpus "1,2,$NG" --runs 2 --out-dir /tmp/dk_gpu 2>&1 | grep -vE "Warn|warn"
  echo "== a GPU worker killed at 50% (Dask, every GPU, io config, the default tasks)"
  SIGSTREAM_COMMIT_LOG=/tmp/commits.log LD_PRELOAD=$PWD/.gpu/lib/libsigstream_commit_shim.so \
    timeout 150 python3 bench/dask_gpu.py "$C" --gpus "$NG" --kill --out-dir /tmp/dk_kill 2>&1 | grep -vE "Warn|warn" | tail -6
  echo "kill check rc ${PIPESTATUS[0]}"
}
case "${PART:-all}" in
inproc) inproc ;;
dask) dask ;;
*) inproc; dask ;;
esac
