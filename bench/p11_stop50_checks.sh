#!/usr/bin/env bash
# P11 (stop 50): the GPU checks owed on HEAD before #26 can be resolved (after
# `tar -xJf .gpu.txz`): sigstream_cuda_tests, compute-sanitizer memcheck (with
# leak check) of the kept-backend and CUDA-backend tests, racecheck of the
# kept-backend tests. Logs under $OUT, a summary on stdout.
set -uo pipefail
. bench/p11_lib.sh
T=.gpu/bin/sigstream_cuda_tests
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
echo "== sigstream_cuda_tests"
t0=$(date +%s%N); $T > "$OUT/cuda_tests.txt" 2>&1; echo "rc $? in $(ms "$t0") ms"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$OUT/cuda_tests.txt" | sed 's/^/  /'
echo "== memcheck --leak-check full (*KeptBackend*:CudaBackend*)"
timeout 280 compute-sanitizer --tool memcheck --leak-check full "$T" \
  --gtest_filter='*KeptBackend*:CudaBackend*' > "$OUT/memcheck.txt" 2>&1; echo "rc $?"
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.txt" | sed 's/^/  /'
grep -E "^========= (Program hit|Leaked|Invalid)" "$OUT/memcheck.txt" | sort | uniq -c | sed 's/^/  /'
echo "== racecheck (*KeptBackend*)"
timeout 200 compute-sanitizer --tool racecheck "$T" --gtest_filter='*KeptBackend*' \
  > "$OUT/racecheck.txt" 2>&1; echo "rc $?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/racecheck.txt" | sed 's/^/  /'
