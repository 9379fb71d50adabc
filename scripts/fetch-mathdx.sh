#!/usr/bin/env bash
# Fetches the cuFFTDx headers for the fused FFT engine: the nvidia-mathdx wheel
# from PyPI (pinned, sha256-checked), of which only include/cufftdx* and
# include/commondx are kept, in third_party/mathdx-VERSION (ignored by git).
# CMake finds them there (SIGSTREAM_MATHDX_DIR). Without them the build still
# works and the FFT method runs on cuFFT alone, so a failed download (no
# network, no pip) warns and exits 0; a wheel whose sha256 differs is an
# error (exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."
version=25.6.0
sha256=22e6ad5d0d005f836be5cbd14e836cf2e9ea42c82deb602707246ce8198eaa96
dest=third_party/mathdx-$version
[ -f "$dest/include/cufftdx.hpp" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! python3 -m pip download --quiet --no-deps --only-binary :all: -d "$tmp" "nvidia-mathdx==$version"; then
  echo "fetch-mathdx: could not download nvidia-mathdx==$version: the fused FFT engine stays off" >&2
  exit 0
fi
whl=$(ls "$tmp"/nvidia_mathdx-"$version"-*.whl)
echo "$sha256  $whl" | sha256sum -c --quiet
rm -rf "$dest.partial"
python3 - "$whl" "$dest.partial" <<'PY'
import sys
import zipfile
from pathlib import Path

wheel, dest = sys.argv[1], Path(sys.argv[2])
prefix = "nvidia/mathdx/include/"
keep = ("cufftdx.hpp", "cufftdx/", "commondx/")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        rel = name[len(prefix):] if name.startswith(prefix) else ""
        if rel.startswith(keep) and not name.endswith("/"):
            target = dest / "include" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(name))
PY
rm -rf "$dest"  # a stale or partial folder without the headers
mv "$dest.partial" "$dest"
echo "fetch-mathdx: cuFFTDx headers in $dest"
