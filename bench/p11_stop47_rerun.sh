#!/usr/bin/env bash
# P11 (stop 47): on the final binaries, 200 GPU-bound files on GPU sets 0 /
# [0,1] / [0,1,2,3] / the default (two rounds alternating), then a re-run of
# up-to-date files (no driver now), then SIGSTREAM_ALL_GPUS=1 once.
set -uo pipefail
. bench/p11_lib.sh
echo "host: $(nproc) cores, $(nvidia-smi -L | wc -l) GPU(s)"
B=.gpu/bin/sigstream
make_inputs "$B" 8 200
for r in 1 2; do
  for d in 0 0,1 0,1,2,3 default; do
    set -- batch "$G" --force --no-progress --out-dir /tmp/po
    [ "$d" != default ] && set -- "$@" --set "execution.device=[$d]"
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    "$B" "$@" >/dev/null 2>/tmp/l.txt || tail -2 /tmp/l.txt
    echo "GPU-bound 200, devices $d, round $r: $(ms "$t0") ms | $(grep -oE 'GPUs? [0-9,]+ of the [0-9]+ listed|to run on cuda devices? [0-9,]+' /tmp/l.txt | tr '\n' ' ')"
  done
  t0=$(date +%s%N)
  "$B" batch "$G" --no-progress --out-dir /tmp/po >/dev/null 2>/tmp/l.txt || tail -2 /tmp/l.txt
  echo "re-run of the default, all up to date, round $r: $(ms "$t0") ms | $(tail -1 /tmp/l.txt)"
done
rm -rf /tmp/po && mkdir /tmp/po
t0=$(date +%s%N)
SIGSTREAM_ALL_GPUS=1 "$B" batch "$G" --force --no-progress --out-dir /tmp/po >/dev/null 2>/tmp/l.txt || tail -2 /tmp/l.txt
echo "SIGSTREAM_ALL_GPUS=1, default: $(ms "$t0") ms | $(grep -oE 'to run on cuda devices? [0-9,]+' /tmp/l.txt)"
