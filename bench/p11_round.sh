#!/usr/bin/env bash
# On a lent GPU machine (1, 2 or 4 GPUs): the batch's scaling table (SPEC §10,
# issue P11). For the I/O-bound config (255 taps) and the GPU-bound config
# (65,536 taps + resample + spectrum): files/s of the in-process batch on 1,
# 2, 4 GPUs (execution.device), of Dask (one worker per GPU) and of the I/O
# floor (one process per core); CPU == CUDA bytes; a GPU worker killed at
# 50%. Run from the repository root after gpu-bundle (sigstream,
# bench_cpu_io_floor, libsigstream_commit_shim.so in .gpu/lib) with the
# sigstream wheel and Dask's wheels in .whl/. Logs to $OUT.
# FILES (200) and FILES_MORE (800; 0: none) for the io config, FILES_GPU (200), RUNS (2).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; F=$PWD/.gpu/bin/bench_cpu_io_floor
G=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) cores, $G GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
sets="0"; gl="1"
[ "$G" -ge 2 ] && { sets="$sets;0,1"; gl="$gl,2"; }
[ "$G" -ge 4 ] && { sets="$sets;0,1,2,3"; gl="$gl,4"; }
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
for run in "io ${FILES:-200}" "io ${FILES_MORE:-800}" "gpu ${FILES_GPU:-200}"; do
  read -r cfg n <<<"$run"
  [ "$n" = 0 ] && continue
  echo "== $cfg config, $n files"
  PYTHONUNBUFFERED=1 timeout 300 python3 bench/batch_bench.py --bin "$S" --floor "$F" --backend cuda --files "$n" \
    --work /tmp/bb_$cfg --config $cfg --skip-loop --per-device auto --devices "$sets" --jobs "$(nproc)" \
    --runs "${RUNS:-2}" > "$OUT/bench_${cfg}_$n.txt" 2>&1
  tail -9 "$OUT/bench_${cfg}_$n.txt"
  if [ -n "${PYTHONPATH:-}" ]; then
    PYTHONUNBUFFERED=1 timeout 240 python3 bench/dask_gpu.py /tmp/bb_$cfg/batch_bench.yaml --gpus "$gl" \
      --out-dir /tmp/bb_$cfg/out_dask > "$OUT/dask_${cfg}_$n.txt" 2>&1
    grep -E "^dask|Error|error" "$OUT/dask_${cfg}_$n.txt" | head -8
  fi
done
echo "== cpu == cuda bytes (method direct), io config"
C=/tmp/bb_io/batch_bench.yaml
for b in cpu cuda; do
  timeout 120 $S batch $C --backend $b --set stages.0.method=direct --out-dir /tmp/bb_io/out_$b --force --quiet \
    --no-progress || echo "$b batch failed"
done
k=0; t=0; for f in /tmp/bb_io/out_cpu/*.wav; do t=$((t+1)); cmp -s "$f" "/tmp/bb_io/out_cuda/$(basename "$f")" && k=$((k+1)); done
echo "cpu == cuda byte for byte: $k of $t files"
$S batch $C --backend cuda --out-dir /tmp/bb_io/out_cuda --no-progress 2>&1 | tail -1
if [ -n "${PYTHONPATH:-}" ]; then
  echo "== a GPU worker killed at 50% (Dask, every GPU)"
  SIGSTREAM_COMMIT_LOG=/tmp/commits.log LD_PRELOAD=$PWD/.gpu/lib/libsigstream_commit_shim.so \
    PYTHONUNBUFFERED=1 timeout 200 python3 bench/dask_gpu.py $C --gpus "$G" --kill --out-dir /tmp/bb_io/out_kill \
    > "$OUT/dask_kill.txt" 2>&1; echo "kill check rc $?"
  grep -vE "^dask" "$OUT/dask_kill.txt" | tail -6
fi
