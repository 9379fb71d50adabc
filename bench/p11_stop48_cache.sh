#!/usr/bin/env bash
# P11 (stop 48): the CPU batch with the process's host block cache and kept
# CPU backends (the threads, the chunks' memory and the output blocks go
# from file to file) against 25c71c8's binary (.gpu/bin/sigstream_25c71c8:
# a fresh thread and ~6 MB of fresh pages a file), same inputs, rounds
# alternating: 200 and 800 light files (`--backend cpu`, and the default,
# which picks the CPU alone for them), wall, user and sys; the floor first
# and last.
set -uo pipefail
. bench/p11_lib.sh
echo "host: $(nproc) CPUs"
B=.gpu/bin/sigstream
OLD=.gpu/bin/sigstream_25c71c8
make_inputs "$B" 200 8
run() { # LABEL BIN ARGS...
  local label=$1 bin=$2; shift 2
  rm -rf /tmp/po && mkdir /tmp/po
  local t0 u; t0=$(date +%s%N)
  u=$( { TIMEFORMAT="%U user %S sys"; time "$bin" batch "$C" --force -q --no-progress --out-dir /tmp/po "$@" \
    >/dev/null 2>/tmp/err.txt; } 2>&1 | tail -1)
  echo "$label: $(ms "$t0") ms ($u)"
}
for r in 1 2 3; do
  run "200 cpu, 25c71c8, round $r" $OLD --backend cpu
  run "200 cpu, this stop, round $r" $B --backend cpu
done
for r in 1 2; do
  run "200 default, 25c71c8, round $r" $OLD
  run "200 default, this stop, round $r" $B
done
rm -rf /tmp/po_old && mkdir /tmp/po_old && $OLD batch "$C" --backend cpu -q --no-progress --out-dir /tmp/po_old >/dev/null 2>&1
same=0; differ=0
for f in /tmp/po_old/*.wav; do if cmp -s "$f" "/tmp/po/$(basename "$f")"; then same=$((same+1)); else differ=$((differ+1)); fi; done
echo "outputs against 25c71c8's: $same identical, $differ differ"
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files 800 \
  --work /tmp/bb_io800 --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x|^batch"
C=/tmp/bb_io800/batch_bench.yaml
for r in 1 2; do
  run "800 cpu, 25c71c8, round $r" $OLD --backend cpu
  run "800 cpu, this stop, round $r" $B --backend cpu
done
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files 200 \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | grep -E "io floor x|^batch"
