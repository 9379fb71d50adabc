#!/usr/bin/env bash
# P11 (stop 42): where a batch's process wall goes on a lent host, phase by
# phase. (1) What any run of the binary pays: loading and leaving with no
# CUDA (`--version`, the loader's statistics), and a CUDA process with no work
# (bench_gpu_start). (2) The io config (255 taps + metrics) over FILES
# (default 800) files: batch_bench's rows (auto and 16 a GPU against the
# one-process-per-core floor), then traced runs of `--backend cuda` at 8 and
# 16 a GPU and of auto: the driver, the first lanes, the first and last
# commit, the trace's last line and the process's end. (3) perf of the CUDA
# batch at 16 a GPU (on-CPU, by library and symbol; CPUs used). (4) The
# GPU-bound config (GPU_FILES, default 200) traced with the default files a
# GPU: each worker's set-up (thread, start, end). perf travels in .gpu. Logs
# to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=$PWD/.gpu/bin/sigstream; P=$PWD/.gpu/bin/perf
N=${FILES:-800}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,persistence_mode,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cores: $(nproc)"

echo "== (1) loading and leaving"
for i in 1 2 3 4 5; do t0=$(date +%s%N); $S --version >/dev/null; echo "sigstream --version: $(ms $t0) ms"; done
LD_DEBUG=statistics $S --version 2>&1 >/dev/null | grep -E "total startup time|relocation processing|number of relocations:" | head -4
for i in 1 2 3; do t0=$(date +%s%N); .gpu/bin/bench_gpu_start --devices 0; echo "  bench_gpu_start: $(ms $t0) ms"; done

echo "== (2) io config, $N files"
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --files "$N" --work /tmp/bb_io \
  --config io --skip-loop --runs 3 --per-device auto,16 2>&1 | tail -6
C=/tmp/bb_io/batch_bench.yaml
summary() { # trace file, wall ms
  local t=$1
  local driver=$(grep -m1 "driver initialised" "$t" | awk '{print $3}')
  local lanes=$(grep -m1 "lanes allocated" "$t" | awk '{print $3}')
  local commits=$(grep 'outputs committed' "$t" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END{if (NR>1) printf "%s / %s / %s ms (%d files), after the first %.0f files/s", a[1], a[int(NR/2)], a[NR], NR, (NR-1)*1000/(a[NR]-a[1])}')
  local last=$(grep "sigstream: trace" "$t" | tail -1 | awk '{print $3, $6, $7}')
  echo "   driver ${driver:-none} ms, first lanes ${lanes:-none} ms; commits first/median/last $commits; last line $last; process ${2} ms"
  grep -E "batch profile|batch: .*listed|CPU workers|auto" "$t" | head -4 | cut -c1-300
}
for mode in "--backend cuda --files-per-device 8" "--backend cuda --files-per-device 16" ""; do
  for r in 1 2; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 $S batch $C --quiet --no-progress --out-dir /tmp/po $mode > /dev/null 2> "$OUT/trace_io_${mode// /_}_$r.txt"
    w=$(ms $t0)
    echo "-- traced batch ${mode:-(auto)}, round $r: $w ms"
    summary "$OUT/trace_io_${mode// /_}_$r.txt" "$w"
  done
done

echo "== (3) perf, cuda, 16 a GPU"
rm -rf /tmp/po && mkdir /tmp/po
$P stat -x, -e task-clock,context-switches,page-faults -o "$OUT/perf_stat.txt" -- \
  $S batch $C --quiet --no-progress --out-dir /tmp/po --backend cuda --files-per-device 16
grep -v '^#' "$OUT/perf_stat.txt" | grep .
rm -rf /tmp/po && mkdir /tmp/po
$P record -F 1999 -g -o /tmp/on.data -- $S batch $C --backend cuda --files-per-device 16 --quiet --no-progress \
  --out-dir /tmp/po > "$OUT/perf_rec.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso,sym --percent-limit 0.5 -g none > "$OUT/perf_flat.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort dso --percent-limit 0.5 -g none > "$OUT/perf_dso.txt" 2>&1
$P report -i /tmp/on.data --stdio --no-children --sort sym --percent-limit 2 -g caller,0.5,callee --max-stack 14 \
  > "$OUT/perf_graph.txt" 2>&1
grep -E "^ +[0-9]" "$OUT/perf_dso.txt" | head -12
grep -E "^ +[0-9]" "$OUT/perf_flat.txt" | head -40

echo "== (4) GPU-bound config, ${GPU_FILES:-200} files, default files a GPU"
python3 bench/batch_bench.py --bin "$S" --floor .gpu/bin/bench_cpu_io_floor --backend cuda --files "${GPU_FILES:-200}" \
  --work /tmp/bb_gpu --config gpu --skip-loop --runs 1 2>&1 | tail -5
rm -rf /tmp/po && mkdir /tmp/po
t0=$(date +%s%N)
SIGSTREAM_TRACE=1 $S batch /tmp/bb_gpu/batch_bench.yaml --quiet --no-progress --out-dir /tmp/po --backend cuda \
  > /dev/null 2> "$OUT/trace_gpu.txt"
w=$(ms $t0)
echo "-- traced GPU-bound batch: $w ms"
summary "$OUT/trace_gpu.txt" "$w"
echo "   set-ups (thread: backend chosen -> prepared, ms):"
awk '/backend chosen/ {s[$5]=$3} /backend prepared/ {if ($5 in s) {printf "   %s %.1f -> %.1f (%.1f)\n", $5, s[$5], $3, $3-s[$5]; delete s[$5]}}' \
  "$OUT/trace_gpu.txt" | head -24
