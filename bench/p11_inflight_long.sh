#!/usr/bin/env bash
# P11 (stop 43): is a long light batch on one GPU of a many-core host bound by
# its files in flight? The io config (255 taps + metrics) over FILES (default
# 2400) files on GPU 0 under --backend cuda with FPD (default "16 32 64")
# files in flight, alternating, ROUNDS (default 2), process wall, one trace
# each (first and last commit: the rate after the start); the floor (one
# process per core) from batch_bench. Logs to stdout, traces to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=${BIN:-.gpu/bin/sigstream}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; echo "cores: $(nproc)"
N=${FILES:-2400}
python3 bench/batch_bench.py --bin "$PWD/$S" --floor .gpu/bin/bench_cpu_io_floor --files "$N" --work /tmp/bb \
  --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
for r in $(seq ${ROUNDS:-2}); do
  for f in ${FPD:-16 32 64}; do
    rm -rf /tmp/po && mkdir /tmp/po
    t=$OUT/trace_${f}_$r.txt
    t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 $S batch /tmp/bb/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po --backend cuda \
      --set "execution.device=[0]" --files-per-device $f >/dev/null 2>"$t" || echo failed
    w=$(ms $t0)
    echo "round $r, $f a GPU: process $w ms; lanes last $(grep 'lanes allocated' "$t" | awk '{print $3}' | sort -n | tail -1) ms; $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{printf "commits %s .. %s ms, after the first %.0f files/s", a[1], a[NR], (NR-1)*1000/(a[NR]-a[1])}')"
  done
done
