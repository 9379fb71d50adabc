#!/usr/bin/env bash
# On a lent GPU machine: the CUDA tests, and compute-sanitizer memcheck and
# racecheck of a normalize run on CUDA (fused-FFT FIR + the gain step) and of
# the iir kernel and step tests. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$PWD/.gpu/bin/sigstream; T=$PWD/.gpu/bin/sigstream_cuda_tests
python3 - <<'PY'
import numpy as np, wave
rng = np.random.default_rng(4); n = 20 * 48000 + 313
x = (rng.standard_normal((n, 2)) * 0.05).clip(-0.99, 0.99)
with wave.open("/tmp/in.wav", "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
    w.writeframes(np.round(x * 32767).astype("<i2").tobytes())
PY
$T --gtest_brief=1 > $OUT/tests.txt 2>&1; echo "cuda tests rc $?: $(tail -2 $OUT/tests.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 "$S" filter /tmp/in.wav /tmp/o_$tool.wav --lowpass 8000 \
    --normalize lufs:-23 --backend cuda -q > $OUT/norm_$tool.txt 2>&1
  echo "normalize $tool rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/norm_$tool.txt | tr '\n' ' ')"
done
compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='Sections/IirCudaKernel.*:IirCudaStep*' \
  > $OUT/iir_racecheck.txt 2>&1; echo "iir racecheck rc $?: $(grep -E 'PASSED|RACECHECK SUMMARY' $OUT/iir_racecheck.txt | tr '\n' ' ')"
