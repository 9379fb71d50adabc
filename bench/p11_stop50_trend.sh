#!/usr/bin/env bash
# P11 (stop 50): the fixed part and the rate of a batch, from two batch
# lengths in one call (after `tar -xJf .gpu.txz`): with wall = c + n / r at n1
# and n2 files, r = (n2 - n1) / (w2 - w1) and c = w1 - n1 / r. The GPU-bound
# config (in process) on GPU 0 / 0,1 / 0-3 at GPU_SIZES (default 800 2400),
# the io config (default: auto; and CUDA on GPU 0) with the floor at IO_SIZES
# (default 1000 4000). From c and r, the length from which a target holds by
# wall (bench/RESULTS.md, stop 50).
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
FL=.gpu/bin/bench_cpu_io_floor
NG=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) CPUs, $NG GPUs, $(free -g | awk '/Mem:/{print $2}') GB"
bb() { python3 bench/batch_bench.py --bin "$B" --floor "$FL" --skip-loop "$@" 2>&1 | grep -vE "^$|^backend "; }
for n in ${GPU_SIZES:-800 2400}; do
  echo "== GPU-bound, $n files"
  DEVS="0;0,1"; [ "$NG" -gt 2 ] && DEVS="$DEVS;$(seq -s, 0 $((NG - 1)))"
  bb --files "$n" --work "/tmp/g_$n" --config gpu --runs 1 --backend cuda --devices "$DEVS"
  rm -rf "/tmp/g_$n"
done
for n in ${IO_SIZES:-1000 4000}; do
  echo "== io, $n files, default (auto)"
  bb --files "$n" --work "/tmp/s_$n" --config io --runs 2
  echo "== io, $n files, CUDA"
  bb --files "$n" --work "/tmp/s_$n" --config io --runs 2 --backend cuda
  rm -rf "/tmp/s_$n"
done
