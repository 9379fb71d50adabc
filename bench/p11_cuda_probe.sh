#!/usr/bin/env bash
# P11: what a CUDA batch's workers wait for (1 GPU). The batch profile
# (SIGSTREAM_TRACE), the wall at 4/8/16/32 files per GPU and with one chunk a
# file, and an nsys timeline summary where nsys exists. Needs the inputs of
# p11_host_probe.sh (/tmp/bb_io) or makes them. Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
N=${FILES:-400}
[ -f /tmp/bb_io/batch_bench.yaml ] || python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor \
  --backend cuda --files "$N" --work /tmp/bb_io --config io --skip-loop --runs 1 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
w() { rm -rf /tmp/po && mkdir /tmp/po; local t0=$(date +%s%N)
  $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda "$@" 2>/tmp/err.txt || tail -2 /tmp/err.txt
  echo "$* : $(( ($(date +%s%N) - t0) / 1000000 )) ms"; }
for r in 1 2; do
  for f in 4 8 16 32; do w --files-per-device $f; done
  w --set execution.chunk_frames=4194304
  w --set execution.streams=2
done
rm -rf /tmp/po && mkdir /tmp/po
SIGSTREAM_TRACE=1 $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda 2> "$OUT/trace.txt"
grep -E "batch profile" "$OUT/trace.txt"
which nsys || ls /usr/local/cuda/bin | grep -i nsys || ls -d /opt/nvidia/nsight-systems* 2>/dev/null
NS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NS" ]; then
  rm -rf /tmp/po && mkdir /tmp/po
  $NS profile -o /tmp/nb -t cuda,osrt --force-overwrite true $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda > "$OUT/nsys_run.txt" 2>&1
  $NS stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,osrt_sum /tmp/nb.nsys-rep > "$OUT/nsys_stats.txt" 2>&1
  head -60 "$OUT/nsys_stats.txt"
fi
