#!/usr/bin/env bash
# On a lent 4-GPU machine (after gpu-bundle of sigstream, bench_cpu_io_floor, bench_gpu_start): the
# batch on GPU 0, GPUs 0,1 and every GPU for the I/O-bound (200, 800 files) and GPU-bound (200) configs,
# best of 3, then a trace of the GPU-bound batch on every GPU (when each device got its lanes, files per
# device). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
for run in "io 200" "io 800" "gpu 200"; do
  read -r cfg n <<<"$run"
  python3 bench/batch_bench.py --bin .gpu/bin/sigstream --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files $n \
    --work /tmp/bb_$cfg --config $cfg --skip-loop --per-device $([ $cfg = gpu ] && echo auto,4 || echo auto) --devices '0;0,1;0,1,2,3' --runs 3 > $OUT/bench_${cfg}_$n.txt 2>&1
  echo "== $cfg $n"; grep -A12 "^contender" $OUT/bench_${cfg}_$n.txt | grep -v "^$"
done
echo "== gpu config traced on every GPU"
rm -rf /tmp/pr && mkdir /tmp/pr
SIGSTREAM_TRACE=1 .gpu/bin/sigstream batch /tmp/bb_gpu/batch_bench.yaml --backend cuda --quiet --no-progress --out-dir /tmp/pr \
  > $OUT/trace_gpu_all.txt 2>&1
grep -E "driver initialised|context created" $OUT/trace_gpu_all.txt | head -6; grep "lanes allocated" $OUT/trace_gpu_all.txt | sed -n '1p;16p;17p;32p;33p;48p;49p;64p'
grep -E "outputs committed" $OUT/trace_gpu_all.txt | tail -1; grep -E "batch profile|trace .* exit" $OUT/trace_gpu_all.txt
python3 - <<'PY'
import json; s = json.load(open('/tmp/pr/batch_summary.json'))
print("files per device:", {d.get('device'): d.get('files') for d in s.get('devices', [])})
PY
