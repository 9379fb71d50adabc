#!/usr/bin/env bash
# Builds and installs the Python package (pip install ., as a user would) into
# build/pyenv, a virtual environment over Debian's python3 (NumPy and SciPy from
# Debian's packages; nanobind, scikit-build-core, pytest and Dask (the `dask`
# extra's pin, for the distributed tests) from PyPI, pinned),
# then runs its pytest suite. GPU tests skip themselves without CuPy/PyTorch and a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[ -x "$py" ] || py=python3
venv="$PWD/build/pyenv"
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv --system-site-packages "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check nanobind==2.9.2 scikit-build-core==0.11.6 nvidia-mathdx==25.6.0 pytest==8.3.5 \
  'dask[distributed]==2026.8.0'
# No build isolation: the pinned build tools above, and no second download of them.
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation .
# From outside the source tree, so that `import sigstream` is the installed package.
cd build
# The CLI built by scripts/build.sh, for the tests that compare with it (skipped without).
if [ -x "$PWD/sigstream" ]; then export SIGSTREAM_CLI="$PWD/sigstream"; fi
"$venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests
