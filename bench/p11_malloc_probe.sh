#!/usr/bin/env bash
# P11 probe: does the CPU workers' memory churn (mmap/munmap, page faults)
# slow the CUDA start beside them? The auto batch with glibc's default malloc
# and with mmap/trim thresholds raised (freed buffers stay in the process).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
S=$PWD/.gpu/bin/sigstream; F=$PWD/.gpu/bin/bench_cpu_io_floor
python3 bench/batch_bench.py --bin "$S" --floor "$F" --backend cpu --files 200 --work /tmp/bb_io --skip-loop --runs 1 | grep -E "^batch|floor x"
C=/tmp/bb_io/batch_bench.yaml
T=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824
for i in 1 2 3; do
  for v in default tuned; do
    for b in auto cpu; do
      rm -rf /tmp/bb_io/o; mkdir -p /tmp/bb_io/o
      t0=$(date +%s%N)
      if [ $v = tuned ]; then E="GLIBC_TUNABLES=$T"; else E="X=1"; fi
      env $E SIGSTREAM_TRACE=1 /usr/bin/time -f "%U user %S sys %R minflt" "$S" batch "$C" /tmp/bb_io/in_200x30s/*.wav --out-dir /tmp/bb_io/o --force --quiet --no-progress --backend $b 2> $OUT/t.txt
      t1=$(date +%s%N)
      echo "$v $b: $(( (t1 - t0) / 1000000 )) ms; $(tail -1 $OUT/t.txt); $(grep -E 'context created' $OUT/t.txt | head -1 | awk '{print "context", $3}') $(grep -E 'holds its lanes' $OUT/t.txt | awk '{print "lanes", $3}')"
    done
  done
done
