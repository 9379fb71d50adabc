#!/usr/bin/env bash
# P11 (stop 50): the reviewed code on a GPU host (after `tar -xJf .gpu.txz`):
# the batch's unit tests on many cores, then the files in flight a GPU that
# the defaults choose: the GPU-bound config (8 a GPU: uncompressed, 2.6 ns a
# sample of GPU time) and the io one (16), 200 files each, traced.
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs"
.gpu/bin/sigstream_tests --gtest_filter='Batch*:Plan*' > "$OUT/unit.txt" 2>&1; echo "unit rc $?"
grep -E "FilesTheGpuBounds|^\[  (PASSED|FAILED|SKIPPED) " "$OUT/unit.txt" | sed 's/^/  /'
for cfg in gpu io; do
  python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files 200 \
    --work "/tmp/w_$cfg" --config "$cfg" --skip-loop --runs 1 2>&1 | grep -E "inputs:"
  for d in 0 0,1,2,3; do
    rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 "$B" batch "/tmp/w_$cfg/batch_bench.yaml" --backend cuda --force --no-progress \
      --out-dir /tmp/po --set "execution.device=[$d]" 2>"$OUT/t.txt" >/dev/null || echo "failed"
    echo "$cfg gpus $d: $(ms "$t0") ms; $(grep -oE "to run on cuda devices? [0-9,]+ \([0-9]+ file\(s\) in flight\)" "$OUT/t.txt") | $(python3 bench/p11_trace_summary.py "$OUT/t.txt" | sed 's/.*| file/file/')"
  done
  rm -rf "/tmp/w_$cfg"
done
