#!/usr/bin/env bash
# P14 on a lent GPU machine: loudness measured on the CUDA backend.
#  1. the CUDA tests (the loudness ones first, then all);
#  2. its cost end to end: 10 minutes of stereo 48 kHz pcm16 programme, `run`
#     with a 255-tap low-pass and a metrics block with and without
#     `loudness: true`, on cuda and on cpu, alternating, RUNS (7) each, wall;
#     the stages' GPU time from the statistics; the values cpu vs cuda;
#  3. --normalize lufs:-23 against the plain filter run on cuda;
#  4. compute-sanitizer memcheck and racecheck of a loudness run on cuda
#     (3 lanes, odd chunks). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$PWD/.gpu/bin/sigstream; W=/tmp/p14l; mkdir -p $W
RUNS=${RUNS:-7}
echo "host: $(nproc) cores, $(nvidia-smi -L | head -1)"
echo "== loudness cuda tests"
.gpu/bin/sigstream_cuda_tests --gtest_filter="*LoudnessCuda*:SpectrumCuda*:*ormalize*" > $OUT/loud_tests.txt 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED|Failure" $OUT/loud_tests.txt | head -20
echo "== all cuda tests"
.gpu/bin/sigstream_cuda_tests --gtest_brief=1 > $OUT/cuda_tests.txt 2>&1; echo "rc $?"; tail -4 $OUT/cuda_tests.txt
python3 - <<'PY'
import numpy as np, wave
rng = np.random.default_rng(14)
for name, sec in (("p10", 600), ("p20s", 20)):
    n = sec * 48000 + 313
    lv = np.repeat(10 ** (rng.uniform(-40, -12, n // 62400 + 1) / 20), 62400)[:n]
    x = (rng.standard_normal((n, 2)) * lv[:, None]).clip(-0.99, 0.99)
    with wave.open(f"/tmp/p14l/{name}.wav", "wb") as w:
        w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
        w.writeframes(np.round(x * 32767).astype("<i2").tobytes())
PY
for loud in false true; do
  printf 'version: 1\nsource: {file: %s/p10.wav}\nstages:\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255}}\n  - {type: metrics, name: m, loudness: %s}\nsink: {file: %s/o.wav}\n' $W $loud $W > $W/l_$loud.yaml
done
echo "== end to end, 10 min stereo (wall s, $RUNS runs each, alternating)"
for be in cuda cpu; do for loud in false true; do : > $W/t_${be}_$loud; done; done
for i in $(seq $RUNS); do
  for be in cuda cpu; do for loud in false true; do
    t0=$EPOCHREALTIME; "$S" run $W/l_$loud.yaml -q --backend $be --stats $W/s_${be}_$loud.json || echo "rc $? ($be $loud)"
    awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.4f\n", b-a}' >> $W/t_${be}_$loud
  done; done
done
for be in cuda cpu; do for loud in false true; do
  echo "$be loudness=$loud: $(sort -n $W/t_${be}_$loud | awk '{a[NR]=$1} END{printf "min %.3f median %.3f max %.3f", a[1], a[int((NR+1)/2)], a[NR]}')"
done; done
python3 - <<'PY'
import json
for be in ("cuda", "cpu"):
    for loud in ("false", "true"):
        s = json.load(open(f"/tmp/p14l/s_{be}_{loud}.json"))
        p = s["timing"]
        print(be, loud, "stages_ms", p.get("stages_ms"), "wall_s", p.get("wall_s"), "setup_s", p.get("setup_s"))
a = json.load(open("/tmp/p14l/s_cpu_true.json"))["metrics"]["m"]["loudness"]
b = json.load(open("/tmp/p14l/s_cuda_true.json"))["metrics"]["m"]["loudness"]
print("cpu ", a); print("cuda", b)
print("max |cuda - cpu|:", max(abs(a[k] - b[k]) for k in a if a[k] is not None))
PY
echo "== normalize lufs:-23 vs the plain filter, cuda ($RUNS runs each)"
: > $W/n_plain; : > $W/n_norm
for i in $(seq $RUNS); do
  t0=$EPOCHREALTIME; "$S" filter $W/p10.wav $W/f.wav --lowpass 3000 --backend cuda -q; awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.4f\n", b-a}' >> $W/n_plain
  t0=$EPOCHREALTIME; "$S" filter $W/p10.wav $W/g.wav --lowpass 3000 --normalize lufs:-23 --backend cuda -q; awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.4f\n", b-a}' >> $W/n_norm
done
for f in n_plain n_norm; do echo "$f: $(sort -n $W/$f | awk '{a[NR]=$1} END{printf "min %.3f median %.3f", a[1], a[int((NR+1)/2)]}')"; done
echo "== compute-sanitizer"
printf 'version: 1\nsource: {file: %s/p20s.wav}\nstages:\n  - {type: metrics, name: a, loudness: true}\n  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 63}, method: direct}\n  - {type: metrics, name: m, loudness: true}\nsink: {file: %s/o2.wav}\nexecution: {backend: cuda, chunk_frames: 65537, streams: 3}\n' $W $W > $W/san.yaml
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 "$S" run $W/san.yaml -q > $OUT/$tool.txt 2>&1; echo "$tool rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$tool.txt)"
done
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests --gtest_filter="*LoudnessCuda*" > $OUT/memcheck_tests.txt 2>&1; echo "memcheck tests rc $?: $(grep -E 'ERROR SUMMARY' $OUT/memcheck_tests.txt) $(grep -E '^\[  PASSED' $OUT/memcheck_tests.txt)"
echo "== ncu: the loudness kernels on the 10-minute run (first chunks)"
ncu --kernel-name regex:"widen_kernel|energy_kernel|peaks_kernel|iir|scan|segment" --launch-count 12 --metrics gpu__time_duration.sum,dram__bytes.sum "$S" run $W/l_true.yaml -q --backend cuda > $OUT/ncu.txt 2>&1
grep -E "_kernel|iir|scan|gpu__time_duration|dram__bytes" $OUT/ncu.txt | head -40
