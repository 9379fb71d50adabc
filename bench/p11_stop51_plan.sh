#!/usr/bin/env bash
# P11 (stop 51): where a long batch's start goes before the CUDA driver's
# (after `tar -xJf .gpu.txz`): FILES GPU-bound inputs (200 distinct, the rest
# hard links; default 16,000), the default batch traced for a few seconds
# (its phases up to its first files), three times; --list-inputs timed.
set -uo pipefail
. bench/p11_lib.sh
B=$PWD/.gpu/bin/sigstream
long_work 20
gpu_bound_inputs "${FILES:-16000}"
for r in 1 2 3; do
  rm -rf "$W/po"
  SIGSTREAM_TRACE=1 timeout 4 "$B" batch "$G" --force --no-progress --backend cuda --out-dir "$W/po" \
    >/dev/null 2>/tmp/t.txt
  echo "r$r: $(grep -E ' t0 ' /tmp/t.txt | sed 's/^sigstream: trace *//' | tr '\n' ';')"
done
t0=$(date +%s%N); "$B" batch "$G" --out-dir "$W/po" --list-inputs | wc -l; echo "--list-inputs: $(ms "$t0") ms"
rm -rf "$W"
