#!/usr/bin/env bash
# Stop 39's last GPU round on the final binaries: all CUDA tests; memcheck and
# racecheck of the loudness CUDA tests and of a loudness run on 3 lanes; ncu
# of the loudness kernels (time, DRAM bytes). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$PWD/.gpu/bin/sigstream; T=$PWD/.gpu/bin/sigstream_cuda_tests; W=/tmp/p14s; mkdir -p $W
echo "== sigstream_cuda_tests"; $T --gtest_brief=1 > $OUT/all.txt 2>&1; echo "rc $?"; tail -3 $OUT/all.txt
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='*LoudnessCuda*' > $OUT/t_$tool.txt 2>&1
  echo "$tool, LoudnessCuda tests: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/t_$tool.txt) $(grep -E '^\[  PASSED' $OUT/t_$tool.txt)"
done
python3 -c "
import numpy as np, wave
rng = np.random.default_rng(5); n = 60 * 48000 + 313
x = (rng.standard_normal((n, 2)) * 0.05).clip(-0.99, 0.99)
w = wave.open('$W/p.wav', 'wb'); w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000); w.writeframes(np.round(x * 32767).astype('<i2').tobytes()); w.close()"
printf 'version: 1\nsource: {file: %s/p.wav}\nstages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 63}, method: direct}\n  - {type: metrics, name: m, loudness: true}\nsink: {file: %s/o.wav}\nexecution: {backend: cuda, chunk_frames: 65537, streams: 3}\n' $W $W > $W/s.yaml
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 "$S" run $W/s.yaml -q --set source.file=$W/p.wav > $OUT/r_$tool.txt 2>&1
  echo "$tool, loudness run: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r_$tool.txt)"
done
sed -i 's/chunk_frames: 65537, streams: 3/chunk_frames: 1048576, streams: 4/' $W/s.yaml
timeout 120 ncu --kernel-name regex:"widen_kernel|energy_kernel|peaks_kernel|iir_" --launch-count 8 --metrics gpu__time_duration.sum,dram__bytes.sum "$S" run $W/s.yaml -q > $OUT/ncu.txt 2>&1
grep -E "_kernel|iir_|gpu__time|dram__bytes" $OUT/ncu.txt | sed 's/(const.*//' | head -24
