#!/usr/bin/env bash
# P11 (stop 44): files in flight for a light batch on one GPU of a many-core
# host, once a file's check no longer lists the output folder. The io config
# (255 taps + metrics), --backend cuda on GPU 0, SIZES (default "800 2400")
# files at FPD (default "16 24 32 48") files in flight, alternating, ROUNDS
# (default 3); process wall, first commit and the rate after it (trace).
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=${BIN:-.gpu/bin/sigstream}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; echo "cores: $(nproc)"
for n in ${SIZES:-800 2400}; do
  python3 bench/batch_bench.py --bin "$PWD/$S" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --work /tmp/bb_$n --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
done
for r in $(seq "${ROUNDS:-3}"); do
  for n in ${SIZES:-800 2400}; do
    for f in ${FPD:-16 24 32 48}; do
      t=$OUT/trace_${n}_$f.txt; rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 $S batch /tmp/bb_$n/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po \
        --backend cuda --set "execution.device=[0]" --files-per-device "$f" >/dev/null 2>"$t" || echo failed
      w=$(ms "$t0")
      echo "round $r, $n files, $f a GPU: $w ms; lanes last $(grep 'lanes allocated' "$t" | awk '{print $3}' | sort -n | tail -1) ms; $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{printf "commits %.0f .. %.0f ms, after the first %.0f files/s", a[1], a[NR], (NR-1)*1000/(a[NR]-a[1])}')"
    done
  done
done
