#!/usr/bin/env bash
# P11 (stop 50): is the CPU's 255-tap FIR slower per thread on a many-core GPU
# host than on the development machine (5.5 ms for a 30 s stereo file there,
# ~22 ms a busy host thread in stop 45's profile)? The CPU, then
# bench_cpu_fir's FFT FIR at 255 taps alone, and as 16 / 32 / 64 copies at once
# (after `tar -xJf .gpu.txz`).
set -uo pipefail
. bench/p11_lib.sh
lscpu | grep -E "Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU max MHz|^CPU\(s\)"
grep -o -w -E "avx2|avx512f|fma" /proc/cpuinfo | sort | uniq -c
F=.gpu/bin/bench_cpu_fir
one() { "$F" --benchmark_filter='BM_FirFft/255$' --benchmark_min_time=1 --benchmark_format=csv 2>/dev/null |
  awk -F, '/BM_FirFft/{print $4}'; }
echo "alone: $(one) ms of CPU a call of 2^20 outputs (dev machine: 2.0)"
for n in 16 32 64; do
  seq "$n" | xargs -P "$n" -I{} bash -c "$(declare -f one); F=$F one" > /tmp/many.txt
  sort -n /tmp/many.txt | awk -v n="$n" '{a[NR]=$1} END {printf "%d at once: median %.2f, min %.2f, max %.2f ms of CPU a call\n", n, a[int((NR+1)/2)], a[1], a[NR]}'
done
