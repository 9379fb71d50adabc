#!/usr/bin/env bash
# P11 (stop 47): where a short GPU-bound batch's time goes on 1, 2 and 4 GPUs,
# to base the choice of how many GPUs the driver sees on (after
# `tar -xJf .gpu.txz`). The CUDA start for 1-4 visible GPUs (bench_gpu_start,
# two rounds), then 200 GPU-bound files (GFILES) on GPU sets 0 / 0,1 / 0-3 and
# the default, with the default files in flight and 4 a GPU, each run traced
# (SIGSTREAM_TRACE=1) into $OUT/trace_*.txt: when each device's context and
# lanes came up and when files were committed. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
NG=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) cores, $NG GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
echo "== bench_gpu_start, visible 0 / 0,1 / 0,1,2 / 0-3 (two rounds)"
for r in 1 2; do
  for v in 0 0,1 0,1,2 0,1,2,3; do
    t0=$(date +%s%N)
    CUDA_VISIBLE_DEVICES=$v .gpu/bin/bench_gpu_start --devices "$(python3 -c "print(','.join(str(i) for i in range(len('$v'.split(',')))))")" 2>&1 | tr '\n' ' '
    echo " | visible $v: process $(ms "$t0") ms"
  done
done
make_inputs .gpu/bin/sigstream 8 "${GFILES:-200}"
B=.gpu/bin/sigstream
for per in auto 4; do
  for d in 0 0,1 0,1,2,3 default; do
    set -- batch "$G" --backend cuda --force --no-progress -q --out-dir /tmp/po
    [ "$d" != default ] && set -- "$@" --set "execution.device=[$d]"
    [ "$per" != auto ] && set -- "$@" --files-per-device "$per"
    for r in 1 2; do
      rm -rf /tmp/po && mkdir /tmp/po
      t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 "$B" "$@" 2>"$OUT/trace_${per}_${d}_$r.txt" >/dev/null || echo "failed: $d $per"
      echo "devices $d, files/device $per, round $r: $(ms "$t0") ms"
    done
  done
done
