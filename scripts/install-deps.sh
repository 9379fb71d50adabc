#!/usr/bin/env bash
# Installs what sigstream builds and tests with, from Debian 12 packages.
# Run as root (or with sudo). Skips apt entirely when everything is present.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config libsndfile1-dev libebur128-dev libyaml-cpp-dev libcli11-dev
      nlohmann-json3-dev libssl-dev libgtest-dev libbenchmark-dev python3-pythran python3 python3-numpy python3-scipy
      python3-venv python3-pip python3-matplotlib clang libclang-rt-14-dev clang-format-14 ffmpeg)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
