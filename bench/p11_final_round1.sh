#!/usr/bin/env bash
# P11 (stop 42), one GPU, on the final build: the CUDA tests, compute-sanitizer
# memcheck of the backend, stream, live and stage tests (the lanes' warm blocks
# changed) and racecheck of a few, then the io config (255 taps + metrics)
# over FILES (default 800) files: each binary of BINS with no --files-per-device
# (the default) under `--backend cuda` and auto, alternating, ROUNDS (3)
# rounds, process wall, and one trace each (lanes, commits, exit). The
# one-process-per-core floor in the same run. Logs to $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T=.gpu/bin/sigstream_cuda_tests
nvidia-smi --query-gpu=name --format=csv,noheader; echo "cores: $(nproc)"
if [ "${CHECKS:-1}" = 1 ]; then
  t0=$(date +%s%N); $T --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1; echo "cuda tests rc $? ($(ms $t0) ms)"
  grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests ran" "$OUT/cuda_tests.txt" | tail -4
  t0=$(date +%s%N)
  timeout ${MEMCHECK_TIMEOUT:-240} compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_brief=1 \
    --gtest_filter="${MEMCHECK_FILTER:-CudaVsCpu*:CudaBackend*:*CudaStream*:*CudaLive*:*MixCuda*:*SpectrumCuda*:*FirChannelsCuda*:*IirCudaRun*}" \
    > "$OUT/memcheck.txt" 2>&1
  echo "memcheck rc $? ($(ms $t0) ms)"; grep -E "ERROR SUMMARY|tests ran|PASSED|FAILED" "$OUT/memcheck.txt" | tail -4
  t0=$(date +%s%N)
  timeout ${RACECHECK_TIMEOUT:-120} compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_brief=1 \
    --gtest_filter="${RACECHECK_FILTER:-CudaVsCpu*:CudaBackend.Kept*:*MixCuda*:IirCudaStep*}" > "$OUT/racecheck.txt" 2>&1
  echo "racecheck rc $? ($(ms $t0) ms)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests ran|PASSED|FAILED" "$OUT/racecheck.txt" | tail -4
fi
BINS=${BINS:-.gpu/bin/sigstream}
N=${FILES:-800}
python3 bench/batch_bench.py --bin "$PWD/${BINS##* }" --floor .gpu/bin/bench_cpu_io_floor --files "$N" --work /tmp/bb_io \
  --config io --skip-loop --runs 2 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
for r in $(seq ${ROUNDS:-3}); do
  for mode in "--backend cuda" ""; do
    for b in $BINS; do
      timed "round $r, $(basename $b) ${mode:-(auto)}" $b batch $C --quiet --no-progress --out-dir /tmp/po $mode
    done
  done
done
for b in $BINS; do
  rm -rf /tmp/po && mkdir /tmp/po
  t=$OUT/trace_$(basename $b).txt
  t0=$(date +%s%N)
  SIGSTREAM_TRACE=1 $b batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda > "$t" 2>&1
  w=$(ms $t0)
  echo "== trace $(basename $b), cuda: driver $(grep -m1 'driver initialised' "$t" | awk '{print $3}') ms; lanes first/last $(grep 'lanes allocated' "$t" | awk '{print $3}' | sort -n | sed -n '1p;$p' | tr '\n' ' ')ms; commits first/median/last $(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{printf "%s %s %s ms, after the first %.0f files/s", a[1], a[int(NR/2)], a[NR], (NR-1)*1000/(a[NR]-a[1])}'); exit line $(grep ' exit$' "$t" | awk '{print $3}') ms, process $w ms"
done
