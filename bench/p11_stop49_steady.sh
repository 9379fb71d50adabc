#!/usr/bin/env bash
# P11 (stop 49): the rows with the rate once started beside the wall
# (bench/batch_bench.py --steady; bench/rates.py), after `tar -xJf .gpu.txz`:
# the io config at 200 and 3,000 files (CUDA on GPU 0 / every GPU / the
# default; the CPU backend at 200), the GPU-bound config at 800 on 1 / 2 / 4
# GPUs, then (with the wheels in .whl/) the GPU-bound 800 through Dask, one
# warm worker per GPU. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
FL=.gpu/bin/bench_cpu_io_floor
NG=$(nvidia-smi -L | wc -l)
ALL=$(seq -s, 0 $((NG - 1)))
echo "host: $(nproc) CPUs, $NG GPUs"
bb() { python3 bench/batch_bench.py --bin "$B" --floor "$FL" --skip-loop --steady "$@" 2>&1 | grep -vE "^$|^backend "; }
for n in ${IO_SIZES:-200 3000}; do
  echo "== io, $n files, CUDA"
  IODEVS="0;$ALL"; [ "$NG" -eq 1 ] && IODEVS=""
  bb --files "$n" --work "/tmp/s_$n" --config io --runs 2 --backend cuda --devices "$IODEVS"
  if [ "$n" -le 1000 ]; then
    echo "== io, $n files, CPU"
    bb --files "$n" --work "/tmp/s_$n" --config io --runs 2 --backend cpu
  fi
  rm -rf "/tmp/s_$n"
done
GN=${GPU_FILES:-800}
echo "== GPU-bound, $GN files"
DEVS="0;0,1"; [ "$NG" -gt 2 ] && DEVS="$DEVS;$ALL"; [ "$NG" -eq 1 ] && DEVS=""
bb --files "$GN" --work /tmp/g --config gpu --runs 1 --backend cuda --devices "$DEVS"
if ls .whl/*.whl >/dev/null 2>&1 && [ "$NG" -gt 1 ]; then
  dask_site || exit 1
  echo "== GPU-bound, $GN files, Dask (warm, one worker per GPU)"
  timeout 300 python3 bench/dask_gpu.py \
    /tmp/g/batch_bench.yaml --gpus "1,2,$NG" --files-per-task auto --runs 2 --out-dir /tmp/dk 2>&1 |
    grep -vE "Warn|warn"
fi
