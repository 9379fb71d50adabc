#!/usr/bin/env bash
# P11 (stop 44): a long light batch against the floor. The io config (255
# taps + metrics) over FILES (default 6000) files: batch_bench's auto batch
# and floor (one process per core), then `--backend cuda` and auto at their
# defaults, traced, 2 rounds (process wall, first commit, rate after it).
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=.gpu/bin/sigstream
N=${FILES:-6000}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; echo "cores: $(nproc)"; df -h /tmp | tail -1
python3 bench/batch_bench.py --bin "$PWD/$S" --floor .gpu/bin/bench_cpu_io_floor --files "$N" --work /tmp/bbl \
  --config io --skip-loop --runs 2 2>&1 | tail -6
rm -rf /tmp/bbl/out_*
for r in 1 2; do
  for mode in cuda auto; do
    a=(); [ $mode = cuda ] && a=(--backend cuda)
    t=$OUT/trace_${mode}_$r.txt; rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 $S batch /tmp/bbl/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po "${a[@]}" \
      >/dev/null 2>"$t" || echo failed
    w=$(ms "$t0")
    echo "round $r, $N files, $mode: $w ms; $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{printf "commits %.0f .. %.0f ms, after the first %.0f files/s", a[1], a[NR], (NR-1)*1000/(a[NR]-a[1])}')"
    gzip -f "$t"
  done
done
