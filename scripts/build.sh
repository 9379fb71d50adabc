#!/usr/bin/env bash
# Configures and builds into build/ (CUDA targets too when nvcc is found,
# e.g. /usr/local/cuda/bin/nvcc; the build is CPU-only otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# cuFFTDx headers for the fused FFT engine, where the CUDA backend is built.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then scripts/fetch-mathdx.sh; fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$jobs"
