#!/usr/bin/env bash
# P11: the CPU backend's batch, old binary (sigstream_old) against new, and
# glibc malloc settings for the new one (GLIBC_TUNABLES): as it is; freed
# memory kept (trim threshold, top pad); plus large blocks from the arenas
# (mmap threshold 32 MiB, glibc's largest). Alternating, process wall and
# user/sys (bash time). Then the CUDA batch old/new. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
N=${FILES:-400}
python3 bench/batch_bench.py --bin .gpu/bin/sigstream --floor .gpu/bin/bench_cpu_io_floor --backend cpu --files "$N" \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
K=glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=67108864
M=$K:glibc.malloc.mmap_threshold=33554432
TIMEFORMAT='%R s real %U user %S sys'
for r in 1 2 3; do
  for v in old new new_kept new_arena; do
    for be in cpu cuda; do
      [ $be = cuda ] && [ $v != old ] && [ $v != new ] && continue
      b=.gpu/bin/sigstream; [ $v = old ] && b=.gpu/bin/sigstream_old
      E=X=1; [ $v = new_kept ] && E="GLIBC_TUNABLES=$K"; [ $v = new_arena ] && E="GLIBC_TUNABLES=$M"
      rm -rf /tmp/po && mkdir /tmp/po
      t=$( { time env $E $b batch $C --quiet --no-progress --out-dir /tmp/po --backend $be >/dev/null 2>&1; } 2>&1 )
      echo "$v $be: $t"
    done
  done
done
# the new binary's outputs equal the old one's (CPU)
rm -rf /tmp/pa /tmp/pb && mkdir /tmp/pa /tmp/pb
.gpu/bin/sigstream_old batch $C --quiet --no-progress --out-dir /tmp/pa --backend cpu >/dev/null 2>&1
.gpu/bin/sigstream batch $C --quiet --no-progress --out-dir /tmp/pb --backend cpu >/dev/null 2>&1
same=0; diff=0; for f in /tmp/pa/*.wav; do cmp -s "$f" "/tmp/pb/$(basename "$f")" && same=$((same+1)) || diff=$((diff+1)); done
echo "old vs new CPU outputs: $same identical, $diff differ"
