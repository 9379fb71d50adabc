#!/usr/bin/env bash
# Makes the audio fixtures in this folder, reproducibly (SoX's -R seeds its
# noise generators the same way every run; espeak-ng's voice is fixed).
# Made with espeak-ng 1.51 and SoX 14.4.2 (Debian 12): `apt-get install
# espeak-ng sox`. Each file is under 200 KB; see README.md for what they are.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# speech.wav: a sentence read by espeak-ng (22.05 kHz), as 16 kHz mono 16-bit.
espeak-ng -v en-us -s 150 -w "$tmp/speech.wav" \
  "sigstream filters audio on the graphics card, and checks every result on the processor."
sox -R -V1 "$tmp/speech.wav" -r 16000 -b 16 speech.wav

# chirp.wav: a 4 s logarithmic sweep 20 Hz -> 7.9 kHz at 16 kHz, mono 16-bit, -6 dBFS.
sox -R -V1 -n -r 16000 -b 16 chirp.wav synth 4 sine 20/7900 gain -6

# hum.wav: 3 s of stereo 16 kHz mains hum (50 Hz and its 3rd and 5th harmonics)
# under pink noise, the kind of recording a notch or high-pass is for.
sox -R -V1 -n -r 16000 -b 16 -c 1 "$tmp/hum.wav" synth 3 sine 50 sine 150 sine 250 remix 1-3 gain -12
sox -R -V1 -n -r 16000 -b 16 -c 1 "$tmp/noise.wav" synth 3 pinknoise gain -24
sox -R -V1 -m "$tmp/hum.wav" "$tmp/noise.wav" "$tmp/mono.wav"
sox -R -V1 "$tmp/mono.wav" -c 2 hum.wav remix 1 1v0.8

# input.wav (what configs/examples/filter_file.yaml reads): the speech with hum and
# hiss under it, as long as the speech.
len=$(soxi -s speech.wav)
sox -R -V1 -n -r 16000 -b 16 -c 1 "$tmp/bed.wav" synth "${len}s" sine 50 sine 150 whitenoise remix 1-3 gain -18
sox -R -V1 -m speech.wav "$tmp/bed.wav" -b 16 input.wav
ls -l ./*.wav
