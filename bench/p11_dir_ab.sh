#!/usr/bin/env bash
# P11 (stop 44): the batch's per-file folder listing and thread making,
# before (.gpu/bin/sigstream_old) and after (.gpu/bin/sigstream). The io
# config (255 taps + metrics), --backend cuda on GPU 0: FILES (default 2400)
# files at FPD (default "16 32") files in flight, then 800 files at the
# defaults (cuda and auto), alternating, ROUNDS (default 3); the rate after
# the first commit from a trace; the audio outputs compared; then perf's
# callers of the hottest kernel spin lock for the new binary at 32.
set -uo pipefail
. bench/p11_lib.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
P=$PWD/.gpu/bin/perf
N=${FILES:-2400}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; echo "cores: $(nproc)"
python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor --files "$N" \
  --work /tmp/bb --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
python3 bench/batch_bench.py --bin "$PWD/.gpu/bin/sigstream" --floor .gpu/bin/bench_cpu_io_floor --files 800 \
  --work /tmp/bb8 --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
rate() { grep 'outputs committed' "$1" | awk '{print $3}' | sort -n |
  awk '{a[NR]=$1} END{printf "first commit %.0f ms, after it %.0f files/s", a[1], (NR-1)*1000/(a[NR]-a[1])}'; }
for r in $(seq "${ROUNDS:-3}"); do
  for b in old new; do
    S=.gpu/bin/sigstream; [ $b = old ] && S=.gpu/bin/sigstream_old
    for f in ${FPD:-16 32}; do
      t=$OUT/trace_${b}_$f.txt; rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 $S batch /tmp/bb/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po --backend cuda \
        --set "execution.device=[0]" --files-per-device "$f" >/dev/null 2>"$t" || echo failed
      echo "round $r $b, $N files, $f a GPU: $(ms "$t0") ms; $(rate "$t")"
    done
    rm -rf /tmp/po_$b; mv /tmp/po /tmp/po_$b
    timed "round $r $b, 800 files, cuda (defaults)" $S batch /tmp/bb8/batch_bench.yaml --quiet --no-progress \
      --out-dir /tmp/po --backend cuda
    timed "round $r $b, 800 files, auto (defaults)" $S batch /tmp/bb8/batch_bench.yaml --quiet --no-progress \
      --out-dir /tmp/po
  done
done
n=0; d=0
for f in /tmp/po_new/*.wav; do n=$((n+1)); cmp -s "$f" "/tmp/po_old/$(basename "$f")" || d=$((d+1)); done
echo "audio outputs: $n compared, $d differ"
rm -rf /tmp/po && mkdir /tmp/po
$P record -q -F 1999 -g -o /tmp/on.data -- .gpu/bin/sigstream batch /tmp/bb/batch_bench.yaml --quiet --no-progress \
  --out-dir /tmp/po --backend cuda --set "execution.device=[0]" --files-per-device 32 >/dev/null 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.7 -g none > "$OUT/on_new.txt" 2>&1
grep -v "^#" "$OUT/on_new.txt" | grep -v "^$" | head -25
$P report -i /tmp/on.data --stdio --no-children --sort sym --symbol-filter=queued_spin_lock_slowpath \
  -g caller,0.5,callee --max-stack 12 > "$OUT/spin_new.txt" 2>&1
grep -v "^$" "$OUT/spin_new.txt" | head -70
