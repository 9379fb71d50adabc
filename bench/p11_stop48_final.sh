#!/usr/bin/env bash
# P11 (stop 48): the checks and the issue's in-process table on this stop's
# final binaries (after `tar -xJf .gpu.txz`): sigstream_cuda_tests, memcheck
# of the CUDA batch and backend tests, bench/p11_issue_table.sh's in-process
# rows (both configs on GPU sets 0 / 0,1 / 0,1,2,3 and the defaults, with the
# floor), then the CPU batch of 200 light files traced with more files in
# flight than cores (bench/p11_stop48_timeline.sh). Logs to stdout, the
# tests' output and the traces under $OUT.
set -uo pipefail
. bench/p11_lib.sh
echo "== sigstream_cuda_tests"
.gpu/bin/sigstream_cuda_tests > "$OUT/cuda_tests.txt" 2>&1; echo "rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/cuda_tests.txt" | sed 's/^/  /'
echo "== memcheck (CudaVsCpu*:CudaBackend*:*CudaStream*:*MixCuda*)"
timeout 300 compute-sanitizer --tool memcheck --leak-check full .gpu/bin/sigstream_cuda_tests \
  --gtest_filter='CudaVsCpu*:CudaBackend*:*CudaStream*:*MixCuda*' > "$OUT/memcheck.txt" 2>&1; echo "rc $?"
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.txt" | sed 's/^/  /'
PART=inproc bash bench/p11_issue_table.sh
ROUNDS=2 VARIANTS="default threads96 threads128" bash bench/p11_stop48_timeline.sh
