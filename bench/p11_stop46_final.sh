#!/usr/bin/env bash
# P11 (stop 46), the final GPU round on a lent host of 2 or 4 GPUs (after `tar -xJf
# .gpu.txz`; the sigstream and Dask wheels in .whl/, libsigstream_commit_shim.so
# in .gpu/lib): Ctrl-C as a terminal gives it (SIGINT to the whole process
# group: the CLI, its Python driver and the local cluster's workers) halfway
# through 200 GPU-bound files of `sigstream batch --scheduler local`, twice;
# a GPU worker killed at 50% with the final driver; sigstream_cuda_tests.
# Logs to stdout and $OUT.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site SIGSTREAM_PYTHON=python3 SIGSTREAM_CLI=$PWD/.gpu/bin/sigstream PYTHONUNBUFFERED=1
make_inputs .gpu/bin/sigstream 200 200
for round in 1 2; do
  echo "== round $round: Ctrl-C to the process group halfway through 200 GPU-bound files (--scheduler local)"
  rm -rf /tmp/dk_int
  setsid .gpu/bin/sigstream batch "$G" --scheduler local --out-dir /tmp/dk_int --no-progress > "$OUT/int$round.log" 2>&1 &
  pid=$!
  until [ "$(ls /tmp/dk_int/f*.json 2>/dev/null | wc -l)" -ge 100 ] || ! kill -0 $pid 2>/dev/null; do sleep 0.01; done
  kill -INT -- -$pid; tsig=$(date +%s%N)
  wait $pid; rc=$?
  echo "exit $rc $(( ($(date +%s%N) - tsig) / 1000000 )) ms after the signal"
  n1=$(ls /tmp/dk_int/f*.json 2>/dev/null | wc -l)
  sleep 3
  n2=$(ls /tmp/dk_int/f*.json 2>/dev/null | wc -l)
  python3 -c "
import json; s = json.load(open('/tmp/dk_int/batch_summary.json'))
print('summary:', s['counts'], 'interrupted', s['interrupted'], 'exit_code', s['exit_code'])" 2>&1
  echo "statistics committed: $n1 when it returned, $n2 three seconds later; processes left: $(pgrep -g $pid | wc -l)"
  tail -4 "$OUT/int$round.log"
done
echo "== resume after the interrupt"
.gpu/bin/sigstream batch "$G" --scheduler local --out-dir /tmp/dk_int --no-progress 2>&1 | tail -1
echo "== a GPU worker killed at 50% (Dask, every GPU, io config, the default tasks)"
SIGSTREAM_COMMIT_LOG=/tmp/commits.log LD_PRELOAD=$PWD/.gpu/lib/libsigstream_commit_shim.so \
  timeout 150 python3 bench/dask_gpu.py "$C" --gpus "$(nvidia-smi -L | wc -l)" --kill --out-dir /tmp/dk_kill 2>&1 | grep -vE "Warn|warn" | tail -4
echo "kill check rc ${PIPESTATUS[0]}"
timeout 150 .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1
echo "sigstream_cuda_tests: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$OUT/cuda_tests.txt" | tr '\n' ' ')"
