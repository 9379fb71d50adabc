#!/usr/bin/env bash
# P11 (stop 43) on a multi-GPU lease: what the driver seeing only the GPUs a
# command uses (pipeline/visible_devices.cpp) gives. OLD (default
# .gpu/bin/sigstream_old) lets the driver see every GPU, NEW
# (.gpu/bin/sigstream) cuts CUDA_VISIBLE_DEVICES; alternating, ROUNDS
# (default 3), process wall:
#   (1) `filter` of one 30 s stereo file, --backend cuda (device 0);
#   (2) the io config (255 taps + metrics, IO_FILES=800) with
#       execution.device=[0], and NEW on every GPU (the default) beside it,
#       and NEW on [0] with FPD (default "32 64") files in flight;
#   (3) the GPU-bound config (65,536 taps + resample + spectrum,
#       GPU_FILES=300) on [0] and [0,1];
#   (4) what one process per GPU would pay to start: one bench_gpu_start per
#       GPU at once, each seeing only its GPU, against one seeing all.
# The floor (one process per core) from batch_bench. Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
NEW=${NEW:-.gpu/bin/sigstream}; OLD=${OLD:-.gpu/bin/sigstream_old}
nvidia-smi --query-gpu=index,name,persistence_mode --format=csv,noheader; echo "cores: $(nproc)"
n=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
make_inputs "$NEW" "${IO_FILES:-800}" "${GPU_FILES:-300}"
for r in $(seq ${ROUNDS:-3}); do
  echo "== round $r"
  for b in $OLD $NEW; do timed "filter, $(basename $b)" $b filter "$ONE" /tmp/po/o.wav --lowpass 3000 --backend cuda --quiet; done
  for b in $OLD $NEW; do timed "io [0], $(basename $b)" $b batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[0]"; done
  timed "io all $n GPUs, $(basename $NEW)" $NEW batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda
  timed "io auto, $(basename $NEW)" $NEW batch $C --quiet --no-progress --out-dir /tmp/po
  for f in ${FPD:-32 64}; do
    timed "io [0] $f a GPU, $(basename $NEW)" $NEW batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[0]" --files-per-device $f
  done
  for set in 0 0,1; do
    for b in $OLD $NEW; do timed "gpu-bound [$set], $(basename $b)" $b batch $G --quiet --no-progress --out-dir /tmp/po --backend cuda --set "execution.device=[$set]"; done
  done
  t0=$(date +%s%N)
  for d in $(seq 0 $((n - 1))); do CUDA_VISIBLE_DEVICES=$d .gpu/bin/bench_gpu_start --devices 0 > /tmp/start_$d.txt & done
  wait; echo "start: $n processes, one GPU each: $(ms $t0) ms ($(sed 's/.*driver up \([0-9.]*\) ms.*/\1/' /tmp/start_*.txt | sort -n | tail -1) ms the slowest driver)"
  t0=$(date +%s%N); o=$(.gpu/bin/bench_gpu_start --devices "$(seq -s, 0 $((n - 1)))"); echo "start: one process, $n GPUs: $(ms $t0) ms ($o)"
done
