#!/usr/bin/env bash
# P11 (stop 47): the CPU backend's batch of 200 light files on every core
# spends as much system time as user time (page faults, one process's
# memory-map lock). Probe: glibc's malloc tunables (huge pages for the heap,
# fewer arenas, a higher mmap threshold) against the defaults, three rounds
# alternating, wall, user and sys; the host's transparent huge page setting.
set -uo pipefail
. bench/p11_lib.sh
echo "host: $(nproc) CPUs; THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
B=.gpu/bin/sigstream
make_inputs "$B" 200 8
for r in 1 2 3; do
  for t in "" glibc.malloc.hugetlb=1 glibc.malloc.arena_max=8 glibc.malloc.mmap_threshold=33554432; do
    rm -rf /tmp/po && mkdir /tmp/po
    t0=$(date +%s%N)
    u=$( { TIMEFORMAT="%U user %S sys"; time env ${t:+GLIBC_TUNABLES=$t} "$B" batch "$C" --backend cpu --force -q \
      --no-progress --out-dir /tmp/po >/dev/null 2>&1; } 2>&1 | tail -1)
    echo "${t:-defaults}, round $r: $(ms "$t0") ms ($u)"
  done
done
