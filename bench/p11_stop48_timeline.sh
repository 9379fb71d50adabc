#!/usr/bin/env bash
# P11 (stop 48): where the CPU batch of 200 light files spends its wall on
# every core (after `tar -xJf .gpu.txz`): each run traced (SIGSTREAM_TRACE=1)
# and summed up by bench/p11_trace_summary.py (start-up, files begun and
# committed over time, busy workers, the tail), for the default, half the
# threads, and smaller chunks (VARIANTS: a list of those; "old..." runs
# .gpu/bin/sigstream_25c71c8, the binary before this stop, "thp..." the one
# with the block cache and huge pages but no shared pool); the floor first.
# Traces in $OUT.
set -uo pipefail
. bench/p11_lib.sh
echo "host: $(nproc) CPUs"
B=.gpu/bin/sigstream
make_inputs "$B" 200 8
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled), defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
for r in $(seq "${ROUNDS:-2}"); do
  for v in ${VARIANTS:-default threads32 chunk256k chunk128k}; do
    B=.gpu/bin/sigstream
    case $v in old*) B=.gpu/bin/sigstream_25c71c8 ;; thp*) B=.gpu/bin/sigstream_thp ;; esac
    set -- batch "$C" --backend cpu --force -q --no-progress --out-dir /tmp/po
    case $v in
      *threads32) set -- "$@" --set execution.threads=32 ;;
      *threads96) set -- "$@" --set execution.threads=96 ;;
      *threads128) set -- "$@" --set execution.threads=128 ;;
      *chunk256k) set -- "$@" --set execution.chunk_frames=262144 ;;
      *chunk128k) set -- "$@" --set execution.chunk_frames=131072 ;;
    esac
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    SIGSTREAM_TRACE=1 "$B" "$@" 2>"$OUT/trace_${v}_$r.txt" >/dev/null || echo "failed: $v"
    echo "$v, round $r: $(ms "$t0") ms | $(python3 bench/p11_trace_summary.py "$OUT/trace_${v}_$r.txt")"
  done
done
