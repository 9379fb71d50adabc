#!/usr/bin/env bash
# P11 (stop 49): where the issue's targets hold as a batch grows (after
# `tar -xJf .gpu.txz`). The io config at 200 / 1,000 / 3,000 files and the
# GPU-bound one at 200 / 800: the floor (one process per core), the CUDA
# batch on GPU 0 and on every GPU, the CPU batch and the default (auto), each
# the same run's; then one traced run per backend at the largest size, summed
# by bench/p11_trace_summary.py (files committed over time: the rate once
# started). Traces under $OUT.
set -uo pipefail
. bench/p11_lib.sh
B=.gpu/bin/sigstream
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs, $(free -g | awk '/Mem:/{print $2}') GB"
IO_SIZES=${IO_SIZES:-200 1000 3000}
for n in $IO_SIZES; do
  echo "== io, $n files"
  python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --work "/tmp/s_$n" --config io --skip-loop --runs 2 --backend cuda --devices '0;0,1,2,3' 2>&1 |
    grep -vE "^$|^backend "
  C=/tmp/s_$n/batch_bench.yaml
  for r in 1 2; do
    timed "cpu $n r$r" "$B" batch "$C" --backend cpu --force -q --no-progress --out-dir /tmp/po
    timed "auto $n r$r" "$B" batch "$C" --force -q --no-progress --out-dir /tmp/po
  done
  if [ "$n" = "${IO_SIZES##* }" ]; then
    for b in cpu cuda auto; do
      rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 "$B" batch "$C" --backend "$b" --force -q --no-progress --out-dir /tmp/po \
        2>"$OUT/trace_io${n}_$b.txt" >/dev/null || echo "failed: traced $b"
      echo "traced $b $n: $(ms "$t0") ms | $(python3 bench/p11_trace_summary.py "$OUT/trace_io${n}_$b.txt")"
    done
  fi
  rm -rf "/tmp/s_$n" /tmp/po
done
for n in ${GPU_SIZES:-200 800}; do
  echo "== GPU-bound, $n files"
  python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --work "/tmp/g_$n" --config gpu --skip-loop --runs 1 --backend cuda --devices '0;0,1;0,1,2,3' 2>&1 |
    grep -vE "^$|^backend "
  rm -rf "/tmp/g_$n"
done
