#!/usr/bin/env bash
# On a lent GPU machine: the sanitizers over the kept-backend and concurrent
# FFT tests and over a short batch with kept backends (several files a
# worker, FFT filter). Run from the repository root after gpu-bundle (with
# sigstream_cuda_tests); logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T=.gpu/bin/sigstream_cuda_tests; S=.gpu/bin/sigstream
f='CudaVsCpu.KeptBackend*:CudaBackend.Kept*'
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_brief=1 --gtest_filter="$f" \
    > "$OUT/$tool.txt" 2>&1; echo "$tool ($f): rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.txt" | tail -1)"
done
mkdir -p /tmp/sb && python3 - <<'PY'
import numpy as np, wave
for i in range(6):
    n = 300007 - 40000 * i
    x = (np.random.default_rng(i).standard_normal((n, 2)) * 3000).astype('<i2')
    with wave.open(f'/tmp/sb/f{i}.wav', 'wb') as w:
        w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000); w.writeframes(x.tobytes())
PY
cat > /tmp/sb/c.yaml <<'Y'
version: 1
source: {file: x.wav}
stages:
  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255}, method: fft}
  - {type: metrics, name: m}
sink: {file: x.wav, format: same}
execution: {chunk_frames: 65536}
batch: {inputs: ["/tmp/sb/f*.wav"], out_dir: /tmp/sb/out}
Y
timeout 200 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $S batch /tmp/sb/c.yaml \
  --backend cuda --files-per-device 2 --force --no-progress > "$OUT/memcheck_batch.txt" 2>&1
echo "memcheck batch: rc $? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck_batch.txt" | tail -1)"
for f in /tmp/sb/f*.wav; do
  $S run /tmp/sb/c.yaml --set source.file=$f --set sink.file=/tmp/sb/ref_$(basename $f) --backend cuda --quiet
done
k=0; for f in /tmp/sb/f*.wav; do cmp -s /tmp/sb/out/$(basename $f) /tmp/sb/ref_$(basename $f) && k=$((k+1)); done
echo "batch (kept lanes, files shrinking) == one run per file: $k of 6"
echo "== the CUDA and unit test suites on this machine"
timeout 300 .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$OUT/cuda_tests.txt" 2>&1
echo "sigstream_cuda_tests: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' "$OUT/cuda_tests.txt" | tr '\n' ' ')"
if [ -x .gpu/bin/sigstream_tests ]; then  # (left out when the lease carry is full)
  timeout 300 .gpu/bin/sigstream_tests --gtest_brief=1 > "$OUT/unit_tests.txt" 2>&1
  echo "sigstream_tests: rc $? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' "$OUT/unit_tests.txt" | tr '\n' ' ')"
fi
