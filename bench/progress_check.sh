#!/usr/bin/env bash
# On the GPU machine: `sigstream filter` on a 10-minute stereo 16-bit WAV under
# a pseudo-terminal (script), so the progress bar draws as a user sees it;
# prints the bar's last states, the summary lines and the statistics' keys.
# Usage: bench/progress_check.sh [BIN_DIR] (default .gpu/bin); logs to $OUT.
set -euo pipefail
BIN=${1:-.gpu/bin}; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/sigstream-progress
src=/tmp/sigstream-progress/in.wav
python3 - "$src" <<'PY'
import sys, wave, numpy as np
rng = np.random.default_rng(7)
with wave.open(sys.argv[1], "wb") as f:
    f.setnchannels(2); f.setsampwidth(2); f.setframerate(48000)
    for _ in range(10):
        x = 0.25 * rng.standard_normal((48000 * 60, 2))
        f.writeframes(np.clip(np.round(x * 32767), -32768, 32767).astype("<i2").tobytes())
PY
for backend in auto cuda; do
  script -qec "$BIN/sigstream filter $src /tmp/sigstream-progress/out_$backend.wav --lowpass 3000 --taps 255 --backend $backend --verify --stats /tmp/sigstream-progress/s_$backend.json" /dev/null \
    > "$OUT/progress_$backend.txt" 2>&1
  echo "== --backend $backend: $(tr '\r' '\n' < "$OUT/progress_$backend.txt" | grep -c '%') progress redraws; last ones and the summary:"
  tr '\r' '\n' < "$OUT/progress_$backend.txt" | grep -v '^\s*$' | tail -6
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('stats:', s['backend'], s['output']['frames'], 'frames, verification', s['verification']['passed'], s['verification']['rel_l2_error'])" /tmp/sigstream-progress/s_$backend.json
done
