#!/usr/bin/env bash
# The sanitized CPU build (issue P10), run by scripts/test.sh and so by CI:
#   1. build-fuzz/: clang, AddressSanitizer + UndefinedBehaviorSanitizer on
#      every object, libFuzzer targets (fuzz/), no CUDA;
#   2. the C++ test suite and the CLI tests in it;
#   3. each fuzz target over its regression inputs (fuzz/regressions/TARGET),
#      then for FUZZ_SECONDS seconds (default 60) from a seed corpus
#      (fuzz/make_seeds.py: configs/, designed taps, audio in every container).
# Executions per target: build-fuzz/fuzz-summary.txt; a crash's input lands in
# build-fuzz/crashes/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
secs=${FUZZ_SECONDS:-60}
jobs=$(nproc 2>/dev/null || echo 2)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIGSTREAM_CUDA=OFF -DSIGSTREAM_FUZZ=ON -DSIGSTREAM_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$jobs"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp"
# Long jobs (every key at an extreme, SciPy parity; batch and the racing commits of
# 16383-tap filters, whose 120 s timeouts ASan's slowdown exceeds on 2 cores) run in
# the plain build.
ctest --test-dir build-fuzz --output-on-failure -j "$jobs" \
  -E 'cli\.test_extremes|cli\.test_batch_cli|cli\.test_atomic_commits|^scipy\.'

out=build-fuzz
rm -rf "$out/corpus" "$out/crashes"
mkdir -p "$out/crashes"
python3 fuzz/make_seeds.py --bin "$out/sigstream" --out "$out/corpus"
summary="$out/fuzz-summary.txt"
: > "$summary"
status=0
for t in config set taps audio live; do
  bin="$out/fuzz/fuzz_$t"
  dict=()
  case $t in config|set) dict=(-dict="$out/corpus/config.dict") ;; esac
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    "$bin" fuzz/regressions/"$t"/* >"$out/fuzz-$t-regressions.log" 2>&1 || {
      echo "fuzz: $t: a regression input fails again (see $out/fuzz-$t-regressions.log)"; status=1; }
  fi
  mkdir -p "$out/corpus/$t"
  if "$bin" "$out/corpus/$t" "${dict[@]}" -max_total_time="$secs" -timeout=30 -rss_limit_mb=3072 \
       -print_final_stats=1 -artifact_prefix="$out/crashes/$t-" >"$out/fuzz-$t.log" 2>&1; then
    result=ok
  else
    result="FAILED (input in $out/crashes/, log $out/fuzz-$t.log)"
    status=1
    tail -40 "$out/fuzz-$t.log"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz-$t.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$out/fuzz-$t.log" | tail -1)
  printf 'fuzz_%-7s %10s executions in %ss, %s, corpus %s inputs: %s\n' "$t" "${runs:-?}" "$secs" \
    "${cov:-cov: ?}" "$(ls "$out/corpus/$t" | wc -l)" "$result" | tee -a "$summary"
done
exit $status
