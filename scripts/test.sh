#!/usr/bin/env bash
# Quick start 2: set up, build, and run every test (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The sources against .clang-format (clang-format 14, installed by build.sh's install-deps).
scripts/check-format.sh
# No include runs up a layer (DESIGN §1b) beyond those scripts/layer_debt.txt lists.
python3 scripts/check_layers.py
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
# The Python package: pip install . and its pytest suite.
scripts/python-test.sh
# The sanitized CPU build: the tests under ASan/UBSan, each fuzz target for
# FUZZ_SECONDS (default 60) seconds (scripts/fuzz.sh).
scripts/fuzz.sh
