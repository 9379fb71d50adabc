#!/usr/bin/env bash
# P11 (stop 51): the GPU-bound config on GPU_FILES files (default 16,000), by
# process wall: the default's GPUs and GPUs 0-3 in two rounds alternating,
# GPU 0 once (after `tar -xJf .gpu.txz`; inputs as p11_stop51_long.sh's);
# ROUNDS rounds (default 2); then one traced run of the default: its phases.
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
long_work 200
GF=${GPU_FILES:-16000}
timeout 300 python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files "$GF" \
  --unique 200 --work "$W/gpu" --config gpu --backend cuda --skip-loop --runs 1 --jobs 1 \
  --devices "0" 2>&1 | tee "$OUT/long4_gpu.txt" | grep -E "^(inputs|batch)"
G=$W/gpu/batch_bench.yaml
for r in $(seq 1 "${ROUNDS:-2}"); do
  for d in default 0,1,2,3; do
    set -- batch "$G" --force --no-progress --backend cuda --out-dir "$W/po"
    [ "$d" != default ] && set -- "$@" --set "execution.device=[$d]"
    rm -rf "$W/po"; mkdir "$W/po"; t0=$(date +%s%N)
    "$B" "$@" > /dev/null 2> "$OUT/err_${d}_$r.txt" || echo "failed $d"
    echo "r$r $d: $(ms "$t0") ms | $(grep -oE 'run on cuda device[^>]*' "$OUT/err_${d}_$r.txt" | head -1)"
  done
done
rm -rf "$W/po"; mkdir "$W/po"; t0=$(date +%s%N)
SIGSTREAM_TRACE=1 "$B" batch "$G" --force --no-progress --backend cuda --out-dir "$W/po" >/dev/null 2>/tmp/t.txt
echo "traced default: $(ms "$t0") ms | $(python3 bench/p11_trace_summary.py /tmp/t.txt)"
grep -E " t0 " /tmp/t.txt | sed 's/^sigstream: trace *//' | tr '\n' ';'; echo
rm -rf "$W"
