#!/usr/bin/env bash
# On a lent 2-GPU machine: the batch on GPU 0 and on GPUs 0,1 with this build (.gpu/bin/sigstream) and
# an older one (.gpu/old/sigstream, the same libraries), I/O-bound and GPU-bound configs, the two builds
# alternating, best of 5 each. Needs the work folders of bench/p11_round3.sh (made here if missing).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
for cfg in io gpu; do
  [ -f /tmp/bb_$cfg/batch_bench.yaml ] || python3 bench/batch_bench.py --bin .gpu/bin/sigstream \
    --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files 200 --work /tmp/bb_$cfg --config $cfg \
    --skip-loop --devices '0' --runs 1 > /dev/null 2>&1
  for dev in 0 0,1; do
    for b in new old; do
      bin=.gpu/bin/sigstream; [ $b = old ] && bin=.gpu/old/sigstream
      best=99
      for i in 1 2 3 4 5; do
        rm -rf /tmp/ab && mkdir /tmp/ab
        t0=$EPOCHREALTIME
        $bin batch /tmp/bb_$cfg/batch_bench.yaml --backend cuda --set "execution.device=[$dev]" --force --quiet --no-progress --out-dir /tmp/ab > /dev/null 2>&1 || echo "rc $?"
        best=$(awk -v a=$t0 -v b=$EPOCHREALTIME -v m=$best 'BEGIN{t=b-a; printf "%.3f", (t<m)?t:m}')
      done
      echo "$cfg devices $dev $b: best of 5 $best s"
    done
  done
done
