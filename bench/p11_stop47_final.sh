#!/usr/bin/env bash
# P11 (stop 47): the checks and the issue's in-process table on the final
# binaries of this stop (after `tar -xJf .gpu.txz`): sigstream_cuda_tests,
# memcheck of the CUDA batch and backend tests, then bench/p11_issue_table.sh's
# in-process rows (both configs on GPU sets 0 / 0,1 / 0,1,2,3 and the
# defaults, with the floor), where a list's GPUs are now those its work pays
# the start of. Logs to stdout, the tests' output under $OUT.
set -uo pipefail
. bench/p11_lib.sh
echo "== sigstream_cuda_tests"
.gpu/bin/sigstream_cuda_tests > "$OUT/cuda_tests.txt" 2>&1; echo "rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/cuda_tests.txt" | sed 's/^/  /'
echo "== memcheck (CudaVsCpu*:CudaBackend*:*CudaStream*:*MixCuda*)"
compute-sanitizer --tool memcheck --leak-check full .gpu/bin/sigstream_cuda_tests \
  --gtest_filter='CudaVsCpu*:CudaBackend*:*CudaStream*:*MixCuda*' > "$OUT/memcheck.txt" 2>&1; echo "rc $?"
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.txt" | sed 's/^/  /'
PART=inproc bash bench/p11_issue_table.sh
G=/tmp/bb_gpu/batch_bench.yaml
B=.gpu/bin/sigstream
echo "== GPU-bound, 200 files, [0,1,2,3]: the choice, SIGSTREAM_ALL_GPUS=1, and a re-run of up-to-date files"
for r in 1 2; do
  for env in "" "SIGSTREAM_ALL_GPUS=1"; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    env $env "$B" batch "$G" --force --no-progress --out-dir /tmp/po --set 'execution.device=[0,1,2,3]' \
      >/dev/null 2>/tmp/l.txt || tail -2 /tmp/l.txt
    echo "${env:-choice}, round $r: $(ms "$t0") ms | $(grep -oE 'GPUs? [0-9,]+ of the [0-9]+ listed|to run on cuda devices? [0-9,]+' /tmp/l.txt | tr '\n' ' ')"
  done
  t0=$(date +%s%N)
  "$B" batch "$G" --no-progress --out-dir /tmp/po --set 'execution.device=[0,1,2,3]' >/dev/null 2>/tmp/l.txt || tail -2 /tmp/l.txt
  echo "re-run, all up to date, round $r: $(ms "$t0") ms | $(tail -1 /tmp/l.txt)"
done
