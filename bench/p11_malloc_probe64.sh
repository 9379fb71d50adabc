#!/usr/bin/env bash
# P11 probe on a many-core GPU host: the CPU batch and the auto batch over
# the io config's inputs (the work folder of bench/p11_backends.sh), with
# glibc's default malloc and with freed memory kept in the process.
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
S=$PWD/.gpu/bin/sigstream
C=/tmp/bb_io/batch_bench.yaml
T=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824:glibc.malloc.arena_max=4
for i in 1 2; do
for v in default tuned; do
 for b in cpu auto; do
  rm -rf /tmp/bb_io/o; mkdir -p /tmp/bb_io/o
  if [ $v = tuned ]; then E="GLIBC_TUNABLES=$T"; else E="X=1"; fi
  t0=$(date +%s%N)
  env $E SIGSTREAM_TRACE=1 /usr/bin/time -f "%U user %S sys %R minflt %c invcs %w vcs" "$S" batch "$C" --out-dir /tmp/bb_io/o --force --quiet --no-progress --backend $b 2> $OUT/t.txt
  t1=$(date +%s%N)
  echo "$v $b: $(( (t1 - t0) / 1000000 )) ms; $(tail -1 $OUT/t.txt); $(grep -o 'listed after.*' $OUT/t.txt)"
 done
done
done
