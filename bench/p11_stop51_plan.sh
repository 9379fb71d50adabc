#!/usr/bin/env bash
# P11 (stop 51): where a long batch's start goes before the CUDA driver's
# (after `tar -xJf .gpu.txz`): FILES GPU-bound inputs (200 distinct, the rest
# hard links; default 16,000), the default batch traced for a few seconds
# (its phases up to its first files), ROUNDS times (3) for each binary of
# BINS (default .gpu/bin/sigstream; e.g. "sigstream_old sigstream" for the
# code before and after, alternating); --list-inputs timed.
set -uo pipefail
. bench/p11_lib.sh
long_work 20
gpu_bound_inputs "${FILES:-16000}"
for r in $(seq 1 "${ROUNDS:-3}"); do
  for b in ${BINS:-sigstream}; do
    rm -rf "$W/po"
    SIGSTREAM_TRACE=1 timeout 4 ".gpu/bin/$b" batch "$G" --force --no-progress --backend cuda \
      --out-dir "$W/po" >/dev/null 2>/tmp/t.txt
    echo "r$r $b: $(grep -E ' t0 ' /tmp/t.txt | grep -E 'listed|sees|initialised|scheduled' |
      sed -E 's/^sigstream: trace +([0-9.]+) ms t0 +/\1 /; s/ CUDA_VISIBLE.*//' | tr '\n' ';')"
  done
done
for b in ${BINS:-sigstream}; do
  t0=$(date +%s%N); ".gpu/bin/$b" batch "$G" --out-dir "$W/po" --list-inputs | wc -l
  echo "$b --list-inputs: $(ms "$t0") ms"
done
rm -rf "$W"
