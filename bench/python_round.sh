#!/usr/bin/env bash
# One GPU-machine round for the Python module (#13): GPU gtests of the kernels it uses,
# the pytest suite with CuPy/PyTorch (its Python 3.12), compute-sanitizer on both, and
# bench/python_batch.py. Expects the bundle made here:
#   ../shared/tools/gpu-bundle build/sigstream build/tests/sigstream_cuda_tests
#   cp -r build-py312/python/sigstream .gpu/py/; pip install --target .gpu/pylib pytest
#   (strip the binaries and `tar -cf - .gpu | xz > .gpu.txz` when .gpu passes 64 MiB)
# Logs go to $OUT (or ./out-round).
set -uo pipefail
# The bundle may come as one xz tarball (.gpu.txz: under the 64 MiB carry limit).
if [[ -f .gpu.txz && ! -d .gpu ]]; then tar -xJf .gpu.txz; fi
out=${OUT:-out-round}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export SIGSTREAM_CLI=$PWD/.gpu/bin/sigstream
py=${PY:-/opt/torch/.venv/bin/python}
# Its own pytest where it has one (its plugins need it); else the one carried.
if PYTHONPATH= $py -c "import pytest" 2>/dev/null; then export PYTHONPATH=$PWD/.gpu/py
else export PYTHONPATH=$PWD/.gpu/py:$PWD/.gpu/pylib; fi
what=${1:-all}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
if [[ $what == all || $what == tests ]]; then
  .gpu/bin/sigstream_cuda_tests --gtest_brief=1 > "$out/gtest.log" 2>&1; echo "gtest rc=$?"
  tail -3 "$out/gtest.log"
  $py -m pytest -q -p no:cacheprovider python/tests > "$out/pytest.log" 2>&1; echo "pytest rc=$?"
  tail -3 "$out/pytest.log"
fi
if [[ $what == all || $what == sanitize ]]; then
  compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter='FirDirectTest.InputSpan*:FftFirTest.InputSpan*' > "$out/memcheck_gtest.log" 2>&1
  echo "memcheck gtest rc=$?"; tail -2 "$out/memcheck_gtest.log"
  compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/bin/sigstream_cuda_tests \
    --gtest_filter='FirDirectTest.InputSpan*:FftFirTest.InputSpan*' > "$out/racecheck_gtest.log" 2>&1
  echo "racecheck gtest rc=$?"; tail -2 "$out/racecheck_gtest.log"
  # The GPU pytest suite under memcheck (CuPy and PyTorch make their own allocations; the
  # CUPTI trace test cannot run beside the sanitizer).
  compute-sanitizer --tool memcheck --error-exitcode 9 --target-processes all $py -m pytest -q -p no:cacheprovider \
    python/tests/test_gpu.py -k "not cupti and not callers_stream" > "$out/memcheck_pytest.log" 2>&1
  echo "memcheck pytest rc=$?"; tail -3 "$out/memcheck_pytest.log"
fi
if [[ $what == all || $what == bench ]]; then
  $py bench/python_batch.py --json "$out/python_batch.json" > "$out/bench.log" 2>&1; echo "bench rc=$?"
  cat "$out/bench.log"
fi
