#!/usr/bin/env bash
# On a lent GPU machine (P14, P11): the CUDA tests; normalize on the CUDA
# backend against the CPU's (gain and samples) and under compute-sanitizer
# memcheck; an auto batch of short files. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$PWD/.gpu/bin/sigstream; W=/tmp/p14; mkdir -p $W
echo "== cuda tests"; .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > $OUT/cuda_tests.txt 2>&1; echo "rc $?"; tail -3 $OUT/cuda_tests.txt
python3 - <<'PY'
import numpy as np, wave
rng = np.random.default_rng(4)
n = 60 * 48000 + 313
lv = np.repeat(10 ** (rng.uniform(-40, -15, n // 24000 + 1) / 20), 24000)[:n]
x = (rng.standard_normal((n, 2)) * lv[:, None] * 0.5).clip(-0.99, 0.99)
with wave.open("/tmp/p14/in.wav", "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
    w.writeframes(np.round(x * 32767).astype("<i2").tobytes())
PY
for b in cpu cuda; do
  "$S" filter $W/in.wav $W/out_$b.wav --lowpass 8000 --normalize lufs:-23 --format float --backend $b --stats $W/s_$b.json 2> $OUT/norm_$b.txt
  echo "normalize on $b: rc $? $(grep -o 'normalize.*' $OUT/norm_$b.txt | head -1) $(grep -o 'on cuda\|on cpu' $OUT/norm_$b.txt | head -1)"
done
python3 - <<'PY'
import json, numpy as np
def rd(p):
    d = open(p, "rb").read(); i = d.find(b"data"); return np.frombuffer(d[i + 8:], "<f4")
a, b = rd("/tmp/p14/out_cpu.wav"), rd("/tmp/p14/out_cuda.wav")
g = [next(s for s in json.load(open("/tmp/p14/s_%s.json" % k))["stages"] if s["type"] == "normalize")["gain_db"] for k in ("cpu", "cuda")]
print("gains cpu %.6f cuda %.6f dB; samples %d/%d; rel L2 cuda vs cpu %.3g" % (g[0], g[1], a.size, b.size, np.linalg.norm(a - b) / np.linalg.norm(a)))
PY
echo "== memcheck: normalize on cuda"
compute-sanitizer --tool memcheck --error-exitcode 9 "$S" filter $W/in.wav $W/out_m.wav --lowpass 8000 --normalize peak:-1 --backend cuda -q > $OUT/memcheck.txt 2>&1; echo "rc $?"; grep -E "ERROR SUMMARY" $OUT/memcheck.txt
echo "== auto batch, 40 files of 5 s"
python3 - <<'PY'
import numpy as np, wave, os
os.makedirs("/tmp/p14/b", exist_ok=True)
rng = np.random.default_rng(1)
for k in range(40):
    x = (rng.standard_normal((5 * 48000 + k, 2)) * 0.1).clip(-0.99, 0.99)
    with wave.open("/tmp/p14/b/f%02d.wav" % k, "wb") as w:
        w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
        w.writeframes(np.round(x * 32767).astype("<i2").tobytes())
PY
printf 'version: 1\nsource: {file: x.wav}\nstages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255}, method: direct}\n  - {type: normalize, name: n, peak_db: -1}\nsink: {file: x.wav}\n' > $W/b.yaml
for b in auto cuda cpu; do
  "$S" batch $W/b.yaml "$W/b/*.wav" --out-dir $W/o_$b --quiet --backend $b; echo "batch $b rc $?"
done
for b in auto cuda; do cmp -s <(cat $W/o_$b/*.wav) <(cat $W/o_cpu/*.wav) && echo "$b == cpu bytes" || echo "$b differs from cpu"; done
