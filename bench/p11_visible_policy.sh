#!/usr/bin/env bash
# P11 (stop 43) on a multi-GPU lease: with the driver seeing only the GPUs a
# batch names, does a batch of light files (the io config: 255 taps + metrics)
# gain from more than one GPU, and from how many files on? For each FILES
# (default "800 2400"): GPU sets 0 / 0,1 / all under --backend cuda and under
# auto, ROUNDS (default 2) rounds, alternating, process wall; the floor (one
# process per core) from batch_bench. Logs to stdout.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
S=${BIN:-.gpu/bin/sigstream}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=index,name --format=csv,noheader | head -1; echo "cores: $(nproc)"
all=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
for n in ${FILES:-800 2400}; do
  python3 bench/batch_bench.py --bin "$PWD/$S" --floor .gpu/bin/bench_cpu_io_floor --files "$n" \
    --work /tmp/bb_$n --config io --skip-loop --runs 2 2>&1 | grep -E "inputs:|io floor x"
  for r in $(seq ${ROUNDS:-2}); do
    for mode in "--backend cuda" "--backend auto"; do
      for set in 0 0,1 "$all"; do
        rm -rf /tmp/po && mkdir /tmp/po
        t0=$(date +%s%N)
        $S batch /tmp/bb_$n/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po $mode --set "execution.device=[$set]" >/dev/null 2>&1 || echo failed
        echo "$n files, round $r, ${mode#--backend }, [$set]: $(ms $t0) ms"
      done
    done
  done
  rm -rf /tmp/bb_$n
done
