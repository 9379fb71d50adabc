#!/usr/bin/env bash
# P13's round on the lent GPU machine (bench/p13_round.sh): the iir stage end
# to end through the CLI (10 minutes of stereo, 4th-order high-pass and an
# 8th-order band-pass zero-phase, CUDA against the CPU backend: bytes compared
# as float samples, wall times best of 3), a batch of files of different
# lengths on CUDA (each file from a zero state: the kept lane restarts) against
# the CPU, and the kernel benchmark with its peers (CuPy, torchaudio) in the
# same run. Logs go to $OUT. Run from the repository root after
# ../shared/tools/gpu-bundle has filled .gpu/ with sigstream and bench_gpu_iir.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python}
S=$PWD/.gpu/bin/sigstream
W=$(mktemp -d); cd "$W" || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"
cat > synth.yaml <<Y
version: 1
source: {synth: {sample_rate: 48000, duration_s: 600, channels: 2, tones: [{freq_hz: 50, amplitude: 0.4}], noise: {kind: uniform, amplitude: 0.3, seed: 3}}}
sink: {file: long.wav, format: pcm16}
Y
"$S" run synth.yaml --quiet --backend cpu || exit 1
for i in 1 2 3; do
  sed "s/duration_s: 600/duration_s: $((i * 7 + 1))/; s/seed: 3/seed: $i/; s/long.wav/in$i.wav/" synth.yaml > s$i.yaml
  "$S" run s$i.yaml --quiet --backend cpu
done
best() { # best wall seconds of 3 runs of "$@"
  $PY - "$@" <<'P'
import subprocess, sys, time
best = 1e9
for _ in range(3):
    t0 = time.perf_counter()
    if subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        print("null"); sys.exit()
    best = min(best, time.perf_counter() - t0)
print("%.3f" % best)
P
}
for spec in "hp:--highpass 80 --iir 4" "bpzp:--bandpass 300:3400 --iir 4 --zero-phase"; do
  name=${spec%%:*}; flags=${spec#*:}
  for be in cpu cuda; do
    t=$(best "$S" filter long.wav $name.$be.wav $flags --format float --backend $be --quiet)
    echo "{\"e2e\": \"$name\", \"backend\": \"$be\", \"best_s\": $t}" | tee -a "$OUT/e2e.txt"
  done
done
"$S" filter long.wav log.wav --highpass 80 --iir 4 --backend cuda 2>&1 | grep -i "cuda backend" | tee -a "$OUT/e2e.txt"
mkdir -p bcpu bcuda
cat > batch.yaml <<Y
version: 1
source: {file: unused.wav}
stages: [{type: iir, design: {kind: highpass, cutoff_hz: 80, order: 4}}, {type: fir, design: {kind: lowpass, cutoff_hz: 8000, taps: 63}, mode: same}]
sink: {file: out.wav, format: float}
Y
"$S" batch batch.yaml in1.wav in2.wav in3.wav --out-dir bcpu --backend cpu --quiet; echo "batch cpu rc $?" | tee -a "$OUT/e2e.txt"
"$S" batch batch.yaml in1.wav in2.wav in3.wav --out-dir bcuda --backend cuda --quiet; echo "batch cuda rc $?" | tee -a "$OUT/e2e.txt"
$PY - <<'P' 2>&1 | tee -a "$OUT/e2e.txt"
import wave, numpy as np, glob, os
def rd(p):
    b = open(p, "rb").read(); ch = int.from_bytes(b[22:24], "little"); i = b.index(b"data")
    n = int.from_bytes(b[i + 4:i + 8], "little"); return np.frombuffer(b[i + 8:i + 8 + n], "<f4").reshape(-1, ch)
def rel(a, b): return float(np.linalg.norm(a.astype(np.float64) - b) / np.linalg.norm(b))
for n in ("hp", "bpzp"):
    print({"cuda_vs_cpu": n, "rel_l2": rel(rd(n + ".cuda.wav"), rd(n + ".cpu.wav"))})
for f in sorted(glob.glob("bcpu/*.wav")):
    g = "bcuda/" + os.path.basename(f)
    print({"batch_file": os.path.basename(f), "frames": len(rd(f)), "rel_l2": rel(rd(g), rd(f))})
P
cd - > /dev/null
[[ -n ${SKIP_KERNELS:-} ]] && { rm -rf "$W"; exit 0; }
.gpu/bin/bench_gpu_iir --reps 30 --check 2>&1 | tee "$OUT/kernel.txt"
timeout 300 $PY bench/gpu_iir_peers.py --reps 5 --slow-s 15 2>&1 | grep -v Warning | tee "$OUT/peers.txt"
rm -rf "$W"
