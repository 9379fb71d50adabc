#!/usr/bin/env bash
# P11 (stop 45): would one process per GPU start a multi-GPU batch faster
# than one process holding every GPU? The driver's start grows with the GPUs
# it sees (stop 43), and contexts made side by side in one process wait on
# each other (stop 42). Probes, alternating, ROUNDS (default 2) rounds:
#  - bench_gpu_start: one process on every GPU against one process per GPU,
#    each seeing only its own (CUDA_VISIBLE_DEVICES), all started at once;
#  - the GPU-bound config (GFILES, default 600) and the io config (IOFILES,
#    default 800): the in-process batch on GPU 0, on GPUs 0..k, and k+1
#    `--shard i/(k+1)` processes each seeing GPU i, then `--merge` (the wall
#    covers all of it).
# Logs to stdout.
set -uo pipefail
. bench/p11_lib.sh
BIN=.gpu/bin/sigstream
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
all=$(seq -s, 0 $((NG - 1)))
nproc; nvidia-smi --query-gpu=name,persistence_mode --format=csv,noheader | head -1
make_inputs $BIN "${IOFILES:-800}" "${GFILES:-600}"
# shards K CONFIG EXTRA...: K processes, shard i on GPU i alone, then merge.
shards() {
  local k=$1 cfg=$2; shift 2
  local pids=() i
  for i in $(seq 0 $((k - 1))); do
    CUDA_VISIBLE_DEVICES=$i $BIN batch "$cfg" --quiet --no-progress --out-dir /tmp/po \
      --shard "$i/$k" "$@" 2>/tmp/err.$i.txt & pids+=($!)
  done
  local rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
  [ $rc = 0 ] || tail -2 /tmp/err.*.txt
  $BIN batch --merge /tmp/po --quiet
}
export -f shards; export BIN
for r in $(seq "${ROUNDS:-2}"); do
  t0=$(date +%s%N); o=$(.gpu/bin/bench_gpu_start --devices "$all"); echo "round $r, start, one process on $all: $o; $(ms "$t0") ms"
  t0=$(date +%s%N)
  for i in $(seq 0 $((NG - 1))); do CUDA_VISIBLE_DEVICES=$i .gpu/bin/bench_gpu_start --devices 0 > /tmp/st.$i & done; wait
  echo "round $r, start, $NG processes: $(cat /tmp/st.* | tr '\n' ' '); $(ms "$t0") ms"
  for k in 1 2 $NG; do
    dev=$(seq -s, 0 $((k - 1)))
    timed "round $r, GPU-bound, in-process, GPUs $dev" $BIN batch "$G" --quiet --no-progress \
      --out-dir /tmp/po --backend cuda --set "execution.device=[$dev]"
    [ "$k" = 1 ] || timed "round $r, GPU-bound, $k processes" bash -c "shards $k $G --backend cuda"
  done
  timed "round $r, io, auto" $BIN batch "$C" --quiet --no-progress --out-dir /tmp/po
  timed "round $r, io, cuda GPU 0" $BIN batch "$C" --quiet --no-progress --out-dir /tmp/po --backend cuda
  for k in 2 $NG; do
    timed "round $r, io, $k processes, cuda" bash -c "shards $k $C --backend cuda"
    timed "round $r, io, $k processes, auto" bash -c "shards $k $C"
  done
  .gpu/bin/bench_cpu_io_floor --help >/dev/null 2>&1 || true
done
python3 bench/batch_bench.py --bin "$PWD/$BIN" --floor .gpu/bin/bench_cpu_io_floor --files "${IOFILES:-800}" \
  --work /tmp/bb_io --config io --skip-loop --runs 2 2>&1 | grep -E "io floor x"
