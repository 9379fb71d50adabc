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
