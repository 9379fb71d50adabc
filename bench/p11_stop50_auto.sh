#!/usr/bin/env bash
# P11 (stop 50; stop 51 prints the devices started): is the default (auto: the CPU beside the GPU's start, then
# the GPU) slower than --backend cuda on long light batches? (after `tar -xJf
# .gpu.txz`). The io config, 3,000 files and the first 1,000 of them (an input
# list), auto and cuda alternating, ROUNDS rounds, traced (the rate once
# started; where the GPU took over).
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
echo "host: $(nproc) CPUs, $(nvidia-smi -L | wc -l) GPUs"
python3 bench/batch_bench.py --bin "$B" --floor .gpu/bin/bench_cpu_io_floor --files 3000 --unique 300 --work /tmp/s \
  --config io --skip-loop --runs 1 --backend cuda 2>&1 | grep -E "^(inputs|batch|io floor)"
C=/tmp/s/batch_bench.yaml
"$B" batch "$C" --out-dir /tmp/po --list-inputs > /tmp/all.tsv
head -1000 /tmp/all.tsv > /tmp/k1.tsv
for r in $(seq 1 "${ROUNDS:-3}"); do
  for n in 1000 3000; do
    for b in auto cuda; do
      set -- batch "$C" --force -q --no-progress --out-dir /tmp/po
      [ "$n" = 1000 ] && set -- "$@" --inputs-from /tmp/k1.tsv
      [ "$b" = cuda ] && set -- "$@" --backend cuda
      rm -rf /tmp/po && mkdir /tmp/po; t0=$(date +%s%N)
      SIGSTREAM_TRACE=1 "$B" "$@" 2>/tmp/t.txt >/dev/null || echo "failed $b $n"
      w=$(ms "$t0")
      echo "r$r $n $b: $w ms | $(python3 bench/p11_trace_summary.py /tmp/t.txt | sed 's/^.*| begun/begun/') $(grep -oE '[0-9]+ of [0-9]+ files done on the CPU' /tmp/t.txt) | $(grep -oE 'device [0-9]+ (starts|stays idle)' /tmp/t.txt | tr '\n' ' ')| lanes $(grep -oE 'a worker of device [0-9]+ holds' /tmp/t.txt | awk '{print $5}' | sort | uniq -c | tr -s ' \n' ' ')"
    done
  done
done
