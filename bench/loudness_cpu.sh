#!/usr/bin/env bash
# Loudness's cost end to end on the CPU backend (P14): 10 minutes of stereo
# 48 kHz pcm16 programme (bench/normalize_bench.py's file, made if missing),
# `run` with a 255-tap low-pass and a metrics block with and without
# `loudness: true`, and FFmpeg's ebur128 for scale; three runs each, wall.
set -uo pipefail
S=${SIGSTREAM:-build/sigstream}
W=bench/work/normalize; IN=$W/programme_10min.wav
[ -f "$IN" ] || python3 bench/normalize_bench.py --bin "$S" --runs 1 > /dev/null
for loud in false true; do
  cat > $W/loud_$loud.yaml <<YAML
version: 1
source: {file: $IN}
stages:
  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255}}
  - {type: metrics, name: m, loudness: $loud}
sink: {file: $W/loud_out.wav}
execution: {backend: cpu}
YAML
  for i in 1 2 3; do
    t0=$EPOCHREALTIME; "$S" run $W/loud_$loud.yaml -q || exit 1
    awk -v a=$t0 -v b=$EPOCHREALTIME -v l=$loud 'BEGIN{printf "loudness %-5s %.3f s\n", l, b-a}'
  done
done
if command -v ffmpeg > /dev/null; then
  for i in 1 2 3; do
    t0=$EPOCHREALTIME; ffmpeg -hide_banner -nostats -i "$IN" -af ebur128=peak=true -f null - 2> /dev/null
    awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "ffmpeg ebur128 %.3f s\n", b-a}'
  done
fi
