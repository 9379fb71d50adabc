#!/usr/bin/env bash
# Quick start 1: set up, build, and run the built-in demo (writes out/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build/sigstream
