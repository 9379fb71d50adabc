#!/usr/bin/env bash
# On the lent GPU machine: sigstream batch vs per-file loops vs the I/O floor
# (bench/batch_bench.py), then resume and CPU-vs-GPU byte checks on the same
# files. Run from the repository root after gpu-bundle; logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
FILES=${FILES:-100}
mkdir -p .gpu/bin/bench && cp -f .gpu/bin/bench_cpu_io_floor .gpu/bin/bench/
PYTHONUNBUFFERED=1 python3 bench/batch_bench.py --bin .gpu/bin/sigstream --backend cuda --files "$FILES" \
  --seconds 30 --jobs "$(nproc)" --work /tmp/bb ${BATCH_ARGS:-} 2>&1 | tee "$OUT/batch.txt" | tail -12
S=.gpu/bin/sigstream; C=/tmp/bb/batch_bench.yaml
$S batch $C --backend cuda --no-progress 2>&1 | tail -1
$S batch $C --backend cuda --set stages.0.design.cutoff_hz=2000 --no-progress 2>&1 | tail -1
# Both backends on the direct method (bit-identical by design; with auto the
# CPU takes the FFT at 255 taps and differs from CUDA's direct in the last bit).
for b in cpu cuda; do
  t0=$(date +%s%N); $S batch $C --backend $b --set stages.0.method=direct --out-dir /tmp/bb/out_$b --force --no-progress 2>&1 | tail -1
  echo "$b batch, process wall: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
n=0; for f in /tmp/bb/out_cpu/*.wav; do cmp -s "$f" "/tmp/bb/out_cuda/$(basename "$f")" && n=$((n+1)); done
echo "cpu == cuda byte for byte (method direct): $n of $(ls /tmp/bb/out_cpu/*.wav | wc -l) files"
