#!/usr/bin/env bash
# P11 (stop 47): does the CPU backend's batch of light files wait on memory?
# Its chunks (execution.chunk_frames, 1,048,576 frames by default: 8 MB of
# float a stereo chunk) leave every cache between steps, and 64 busy cores
# share one memory. 200 io files (255 taps + metrics, --backend cpu) with
# chunks of 1M / 256k / 64k / 16k frames, 64 and 32 threads, two rounds
# alternating, the floor in the same call; outputs compared across chunk sizes
# (SPEC: bit-identical for every chunk_frames). Then the GPU-bound batch of
# 600 files with this stop's GPU choice against every GPU (--shard 0/1).
set -uo pipefail
. bench/p11_lib.sh
NG=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) cores, $NG GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
B=.gpu/bin/sigstream
make_inputs "$B" 200 8
for r in 1 2; do
  for t in 64 32; do
    for ch in 1048576 262144 65536 16384; do
      rm -rf /tmp/po && mkdir /tmp/po
      t0=$(date +%s%N)
      perf_out=$( { TIMEFORMAT="%U user %S sys"; time "$B" batch "$C" --backend cpu --force -q --no-progress \
        --out-dir /tmp/po --set execution.chunk_frames=$ch --set execution.threads=$t >/dev/null 2>&1; } 2>&1 | tail -1)
      echo "cpu, $t threads, chunk $ch, round $r: $(ms "$t0") ms ($perf_out)"
      [ "$r" = 1 ] && [ "$t" = 64 ] && (cd /tmp/po && md5sum $(ls *.wav | head -50) | md5sum | sed "s/^/  outputs' digest, chunk $ch: /")
    done
  done
done
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files 200 \
  --work /tmp/bb_io --config io --skip-loop --runs 3 2>&1 | grep -E "io floor x"
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files 600 --work /tmp/bb_gpu2 --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:"
G2=/tmp/bb_gpu2/batch_bench.yaml
for r in 1 2; do
  for s in "" "--shard 0/1"; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    "$B" batch "$G2" --force --no-progress --out-dir /tmp/po $s >/dev/null 2>/tmp/l.txt || tail -2 /tmp/l.txt
    echo "GPU-bound 600, default ${s:-(this stop)}, round $r: $(ms "$t0") ms | $(grep -oE 'to run on cuda devices? [0-9,]+' /tmp/l.txt)"
  done
done
