#!/usr/bin/env bash
# P11 (stop 48): the final code after the review (the host cache's own
# mappings for huge blocks, a CPU backend kept only for chunks no longer than
# its first's), after `tar -xJf .gpu.txz`: sigstream_cuda_tests, then the CPU
# batch of 200 light files traced three times and batch_bench's io rows
# (auto), each with the floor. Logs to stdout, the tests' output under $OUT.
set -uo pipefail
. bench/p11_lib.sh
echo "== sigstream_cuda_tests"
.gpu/bin/sigstream_cuda_tests > "$OUT/cuda_tests.txt" 2>&1; echo "rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/cuda_tests.txt" | sed 's/^/  /'
ROUNDS=3 VARIANTS="default" bash bench/p11_stop48_timeline.sh
python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor \
  --files 200 --work /tmp/bb_io --config io --skip-loop --runs 3 2>&1 | grep -E "^(batch|io floor)"
