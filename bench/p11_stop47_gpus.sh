#!/usr/bin/env bash
# P11 (stop 47): the batch lets the driver see only the GPUs its work pays the
# start of (pipeline/backend_choice.cpp, gpus_that_pay), against the rule
# before (a --shard 0/1 keeps it: every listed GPU seen, every GPU by
# default), in one call on a lent host (after `tar -xJf .gpu.txz`). Process
# wall, rounds alternating; GPU-bound (65,536 taps direct + resample +
# spectrum, --backend cuda) 200 and GFILES2 (600) files, io (255 taps, auto)
# 200 files, with the floor. The batch's own lines go to $OUT/lines_*.txt.
set -uo pipefail
. bench/p11_lib.sh
NG=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) cores, $NG GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
B=.gpu/bin/sigstream
make_inputs "$B" 200 200
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --backend cuda \
  --files "${GFILES2:-600}" --work /tmp/bb_gpu2 --config gpu --skip-loop --runs 1 2>&1 | grep -E "inputs:"
G2=/tmp/bb_gpu2/batch_bench.yaml
# row CONFIG NAME DEVICES(default|list) [--shard 0/1]
row() {
  local cfg=$1 name=$2 d=$3; shift 3
  set -- batch "$cfg" --force --no-progress --out-dir /tmp/po "$@"
  [ "$d" != default ] && set -- "$@" --set "execution.device=[$d]"
  rm -rf /tmp/po && mkdir /tmp/po
  local t0; t0=$(date +%s%N)
  "$B" "$@" >/dev/null 2>"$OUT/lines_${name}.txt" || { echo "failed: $name"; tail -2 "$OUT/lines_${name}.txt"; }
  local took; took=$(ms "$t0")
  echo "$name: $took ms | $(grep -oE 'to run on cuda devices? [0-9,]+|GPUs? [0-9,]+ of the [0-9]+ listed|using the CPU backend' "$OUT/lines_${name}.txt" | tr '\n' ' ')"
}
for r in 1 2; do
  echo "== GPU-bound, 200 files, round $r"
  row "$G" "g200_default_new_$r" default
  row "$G" "g200_default_old_$r" default --shard 0/1
  row "$G" "g200_0_$r" 0
  row "$G" "g200_01_new_$r" 0,1
  row "$G" "g200_0123_new_$r" 0,1,2,3
  row "$G" "g200_0123_old_$r" 0,1,2,3 --shard 0/1
done
for r in 1 2; do
  echo "== GPU-bound, ${GFILES2:-600} files, round $r"
  row "$G2" "g600_default_new_$r" default
  row "$G2" "g600_default_old_$r" default --shard 0/1
  row "$G2" "g600_01_old_$r" 0,1 --shard 0/1
  row "$G2" "g600_012_old_$r" 0,1,2 --shard 0/1
done
for r in 1 2; do
  echo "== io, 200 files, round $r"
  row "$C" "io_default_$r" default
  row "$C" "io_0_$r" 0
  row "$C" "io_0123_new_$r" 0,1,2,3
  row "$C" "io_0123_old_$r" 0,1,2,3 --shard 0/1
done
python3 bench/batch_bench.py --bin "$PWD/$B" --floor .gpu/bin/bench_cpu_io_floor --files 200 \
  --work /tmp/bb_io --config io --skip-loop --runs 3 2>&1 | grep -E "io floor x"
