#!/usr/bin/env bash
# P11 (stop 47): the CPU backend's batch of 200 light files (255 taps +
# metrics, --backend cpu, 30 s stereo) on 16 / 24 / 32 / 48 / 64 threads
# (execution.threads), three rounds alternating, with user and sys time, on a
# lent host whose CPUs may be hyperthreads (lscpu); the floor in the same call.
set -uo pipefail
. bench/p11_lib.sh
echo "host: $(nproc) CPUs; $(lscpu | grep -E '^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Model name)' | tr -s ' ' | tr '\n' ';')"
B=.gpu/bin/sigstream
make_inputs "$B" 200 8
for r in 1 2 3; do
  for t in 64 48 32 24 16; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    u=$( { TIMEFORMAT="%U user %S sys"; time "$B" batch "$C" --backend cpu --force -q --no-progress \
      --out-dir /tmp/po --set execution.threads=$t >/dev/null 2>&1; } 2>&1 | tail -1)
    echo "cpu, $t threads, round $r: $(ms "$t0") ms ($u)"
  done
  rm -rf /tmp/po && mkdir /tmp/po
  t0=$(date +%s%N)
  u=$( { TIMEFORMAT="%U user %S sys"; time "$B" batch "$C" --force -q --no-progress --out-dir /tmp/po >/dev/null 2>&1; } 2>&1 | tail -1)
  echo "auto (defaults), round $r: $(ms "$t0") ms ($u)"
done
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files 200 \
  --work /tmp/bb_io --config io --skip-loop --runs 3 2>&1 | grep -E "io floor x"
