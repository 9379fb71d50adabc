#!/usr/bin/env bash
# Final GPU checks of stop 39 (P14): the CUDA tests; loudness in live mode on
# the CUDA backend equals the file run's; a batch with loudness on cuda lists
# the same values as on cpu; memcheck of a loudness + normalize run. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$PWD/.gpu/bin/sigstream; W=/tmp/p14f; mkdir -p $W
echo "== cuda tests"; .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > $OUT/cuda_tests.txt 2>&1; echo "rc $?"; tail -3 $OUT/cuda_tests.txt
python3 - <<'PY'
import numpy as np, wave, os
rng = np.random.default_rng(39)
os.makedirs("/tmp/p14f/b", exist_ok=True)
def w(p, x):
    with wave.open(p, "wb") as f:
        f.setnchannels(x.shape[1]); f.setsampwidth(2); f.setframerate(48000)
        f.writeframes(np.round(x * 32767).astype("<i2").tobytes())
n = 48000 * 20 + 77
lv = np.repeat(10 ** (rng.uniform(-35, -12, n // 48000 + 1) / 20), 48000)[:n]
x = (rng.standard_normal((n, 2)) * lv[:, None]).clip(-0.99, 0.99)
w("/tmp/p14f/p.wav", x)
open("/tmp/p14f/p.raw", "wb").write(np.round(x * 32767).astype("<i2").tobytes())
for k in range(12):
    w("/tmp/p14f/b/f%02d.wav" % k, (rng.standard_normal((48000 * 5 + k * 101, 2)) * 10 ** (rng.uniform(-30, -10) / 20)).clip(-0.99, 0.99))
PY
printf 'version: 1\nsource: {file: %s/p.wav}\nstages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 127}, method: direct}\n  - {type: metrics, name: m, loudness: true}\nsink: {file: %s/o.wav}\n' $W $W > $W/f.yaml
printf 'version: 1\nsource: {file: "-", raw: {sample_rate: 48000, channels: 2, encoding: s16le}}\nstages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 127}, method: direct}\n  - {type: metrics, name: m, loudness: true}\nsink: {file: "-", type: raw, format: pcm16}\n' > $W/l.yaml
for b in cpu cuda; do "$S" run $W/f.yaml -q --backend $b --stats $W/file_$b.json; echo "file $b rc $?"; done
"$S" run $W/l.yaml -q --backend cuda --latency 5 --stats $W/live_cuda.json < $W/p.raw > /dev/null; echo "live cuda rc $?"
python3 - <<'PY'
import json
v = {k: json.load(open("/tmp/p14f/%s.json" % k))["metrics"]["m"]["loudness"] for k in ("file_cpu", "file_cuda", "live_cuda")}
for k, l in v.items(): print(k, l)
print("max |file_cuda - file_cpu|:", max(abs(v["file_cuda"][k] - v["file_cpu"][k]) for k in v["file_cpu"]))
print("max |live_cuda - file_cpu|:", max(abs(v["live_cuda"][k] - v["file_cpu"][k]) for k in v["file_cpu"]))
PY
printf 'version: 1\nsource: {file: x.wav}\nstages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255}, method: direct}\n  - {type: metrics, name: m, loudness: true}\n  - {type: normalize, name: n, lufs: -23}\nsink: {file: x.wav}\n' > $W/b.yaml
for b in cpu cuda; do "$S" batch $W/b.yaml $W/b --out-dir $W/o_$b --quiet --no-progress --backend $b; echo "batch $b rc $?"; done
python3 - <<'PY'
import json
a = {f["file"]: f for f in json.load(open("/tmp/p14f/o_cpu/batch_summary.json"))["files"]}
b = {f["file"]: f for f in json.load(open("/tmp/p14f/o_cuda/batch_summary.json"))["files"]}
d = max(max(abs(a[k]["integrated_lufs"] - b[k]["integrated_lufs"]), abs(a[k]["true_peak_dbtp"] - b[k]["true_peak_dbtp"])) for k in a)
print("batch: %d files, devices %s; max |cuda - cpu| over integrated and true peak: %.3g" % (len(a), sorted({str(f.get("device")) for f in b.values()}), d))
PY
echo "== memcheck: loudness + normalize on cuda"
compute-sanitizer --tool memcheck --error-exitcode 9 "$S" run $W/b.yaml --set source.file=$W/p.wav --set sink.file=$W/m.wav -q --backend cuda > $OUT/memcheck.txt 2>&1; echo "rc $?: $(grep 'ERROR SUMMARY' $OUT/memcheck.txt)"
