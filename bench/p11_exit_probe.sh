#!/usr/bin/env bash
# P11 (stop 42): what a CUDA process's end costs by the pinned memory it
# holds (bench_gpu_start --pinned-mb: allocation and the process's wall), the
# host<->device copy rate of pinned 4 MiB blocks (CuPy; one stream and 16,
# each direction alone and both at once), and the io batch at 16 a GPU with
# 1 Mi-frame (default) and 256 Ki-frame chunks: the start, the last commit
# and the process's end (traces). Needs /tmp/bb_io (p11_anatomy.sh). Logs to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for r in 1 2; do
  for mb in 0 200 700 1400; do
    t0=$(date +%s%N); o=$(.gpu/bin/bench_gpu_start --devices 0 --pinned-mb $mb); echo "pinned $mb MiB: $o; process $(ms $t0) ms"
  done
done
python3 - <<'PY'
import cupy as cp, numpy as np, time
n = 4 << 20
streams = [cp.cuda.Stream(non_blocking=True) for _ in range(16)]
h = [cp.cuda.alloc_pinned_memory(n) for _ in range(32)]
d = [cp.empty(n, dtype=cp.uint8) for _ in range(32)]
def run(ns, h2d, d2h, reps=40):
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for r in range(reps):
        for k in range(ns):
            s = streams[k]
            if h2d: cp.cuda.runtime.memcpyAsync(d[k].data.ptr, h[k].ptr, n, 1, s.ptr)
            if d2h: cp.cuda.runtime.memcpyAsync(h[16 + k].ptr, d[16 + k].data.ptr, n, 2, s.ptr)
    cp.cuda.Device().synchronize()
    s = time.perf_counter() - t
    return reps * ns * n * (int(h2d) + int(d2h)) / s / 1e9
run(16, True, True, 5)
for ns in (1, 16):
    print(f"copies, {ns} stream(s): H2D {run(ns, True, False):.1f} GB/s, D2H {run(ns, False, True):.1f} GB/s, both {run(ns, True, True):.1f} GB/s")
PY
C=/tmp/bb_io/batch_bench.yaml
for r in 1 2; do
  for cf in 1048576 262144; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --files-per-device 16 \
      --set execution.chunk_frames=$cf >/dev/null 2> /tmp/t.txt
    w=$(ms $t0)
    echo "chunk $cf, round $r: process $w ms; driver $(grep -m1 'driver initialised' /tmp/t.txt | awk '{print $3}'), lanes $(grep 'lanes allocated' /tmp/t.txt | awk '{print $3}' | sort -n | sed -n '1p;$p' | tr '\n' ' '), commits $(grep 'outputs committed' /tmp/t.txt | awk '{print $3}' | sort -n | sed -n '1p;$p' | tr '\n' ' '), exit $(grep ' exit' /tmp/t.txt | awk '{print $3}')"
    grep "batch profile" /tmp/t.txt | cut -c1-260
  done
done
