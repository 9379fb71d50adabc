#!/usr/bin/env bash
# P11 (stop 46), the last GPU round on a lent 4-GPU host (after `tar -xJf
# .gpu.txz`; the sigstream and Dask wheels in .whl/, libsigstream_commit_shim.so
# in .gpu/lib): the Dask rows of bench/p11_issue_table.sh with this stop's
# driver (results gathered together), then Ctrl-C to `sigstream batch
# --scheduler local` halfway through a GPU-bound batch (the summary's ok
# files against the statistics committed, and nothing committed after it
# returned), then sigstream_cuda_tests and memcheck of the batch's CUDA
# tests. Logs to stdout and $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PART=dask bash bench/p11_issue_table.sh
export PYTHONPATH=/tmp/site SIGSTREAM_PYTHON=python3
G=/tmp/bb_gpu/batch_bench.yaml
echo "== Ctrl-C halfway through 200 GPU-bound files, sigstream batch --scheduler local"
rm -rf /tmp/dk_int
setsid .gpu/bin/sigstream batch "$G" --scheduler local --out-dir /tmp/dk_int --no-progress > "$OUT/int.log" 2>&1 &
pid=$!
t0=$(date +%s%N)
until [ "$(ls /tmp/dk_int/*.json 2>/dev/null | wc -l)" -ge 100 ] || ! kill -0 $pid 2>/dev/null; do sleep 0.01; done
kill -INT $pid; tsig=$(date +%s%N)
wait $pid; rc=$?
echo "signal at $(( (tsig - t0) / 1000000 )) ms, exit $rc $(( ($(date +%s%N) - tsig) / 1000000 )) ms after it"
n1=$(ls /tmp/dk_int/f*.json /tmp/dk_int/*/*.json 2>/dev/null | grep -v batch_summary | wc -l)
sleep 3
n2=$(ls /tmp/dk_int/f*.json /tmp/dk_int/*/*.json 2>/dev/null | grep -v batch_summary | wc -l)
python3 -c "
import json; s = json.load(open('/tmp/dk_int/batch_summary.json'))
print('summary:', s['counts'], 'interrupted', s['interrupted'], 'exit_code', s['exit_code'])" 2>&1
echo "statistics committed: $n1 when it returned, $n2 three seconds later"
tail -3 "$OUT/int.log"
echo "== checks"
timeout 150 .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1
echo "sigstream_cuda_tests: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$OUT/cuda_tests.txt" | tr '\n' ' ')"
timeout 240 compute-sanitizer --tool memcheck --leak-check full .gpu/bin/sigstream_cuda_tests --gtest_brief=1 \
  --gtest_filter='CudaVsCpu*:CudaBackend*:*CudaStream*:*MixCuda*' > "$OUT/memcheck.txt" 2>&1
echo "memcheck: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|ERROR SUMMARY' "$OUT/memcheck.txt" | tr '\n' ' ')"
