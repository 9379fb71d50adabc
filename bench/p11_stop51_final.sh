#!/usr/bin/env bash
# P11 (stop 51), one call on a 4-GPU lease (after `tar -xJf .gpu.txz`): the GPU
# checks on HEAD (bench/p11_stop50_checks.sh), then GPU_FILES GPU-bound files
# (default 16,000; 200 distinct, the rest hard links, in /dev/shm) by process
# wall: GPU 0 once, then the default's GPUs and GPUS (default 0,1,2,3) in ROUNDS rounds
# (default 2) alternating. Each run is traced (SIGSTREAM_TRACE=1): the
# summary's time (workers joined -> summary written) and the exit are printed.
set -uo pipefail
. bench/p11_lib.sh
[ "${SKIP_CHECKS:-0}" = 1 ] || bash bench/p11_stop50_checks.sh
B=$PWD/.gpu/bin/sigstream
long_work 200
gpu_bound_inputs "${GPU_FILES:-16000}"
run() { # LABEL DEVICES|default
  local label=$1 t0
  local args=(batch "$G" --force --no-progress --backend cuda --out-dir "$W/po")
  [ "$2" != default ] && args+=(--set "execution.device=[$2]")
  rm -rf "$W/po"; mkdir "$W/po"; t0=$(date +%s%N)
  SIGSTREAM_TRACE=1 "$B" "${args[@]}" >/dev/null 2>/tmp/err.txt || { echo "failed: $label"; tail -2 /tmp/err.txt; }
  local wall; wall=$(ms "$t0")
  echo "$label: $wall ms | $(grep -oE 'run on cuda device[^>]*' /tmp/err.txt | head -1) | $(awk '/trace/ && /workers joined/ {j=$3} /trace/ && /summary written/ {s=$3} /trace/ && / exit$/ {e=$3} END {printf "summary %.0f ms, exit at %.0f ms", s-j, e}' /tmp/err.txt)"
}
run "GPU 0" 0
for r in $(seq 1 "${ROUNDS:-2}"); do
  run "r$r default" default
  run "r$r GPUs ${GPUS:-0,1,2,3}" "${GPUS:-0,1,2,3}"
done
rm -rf "$W"
