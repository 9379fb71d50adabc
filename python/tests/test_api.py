"""The package's public names: __all__ equals the API the README documents, and
dir(sigstream) shows nothing else (no numpy, os, json, typing helpers)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import sigstream

from conftest import REPO


def documented_names() -> set[str]:
    """The names in the first column of the README's Python API table (| `call` | what | equals |)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("| call | what | equals |")
    rows = text[start:].split("\n\n", 1)[0].splitlines()[2:]
    names: set[str] = set()
    for row in rows:
        first = row.split("|")[1]
        for code in re.findall(r"`([^`]+)`", first):
            name = code.split("(", 1)[0].strip()
            if "." not in name:  # distributed.local_cluster: a submodule's, in its own __all__
                names.add(name)
    return names


def test_all_is_the_documented_api() -> None:
    assert sorted(sigstream.__all__) == sorted(documented_names())
    for name in sigstream.__all__:
        assert hasattr(sigstream, name), name


def test_dir_hides_the_imports() -> None:
    listed = set(dir(sigstream))
    for private in ("np", "os", "json", "functools", "Any", "Iterable", "Mapping", "Union", "Batch", "as_batch"):
        assert private not in listed, private
    assert set(sigstream.__all__) <= listed and "__version__" in listed


def test_distributed_all() -> None:
    import sigstream.distributed as d

    assert "local_cluster" in d.__all__ and all(hasattr(d, n) for n in d.__all__)


def test_distributed_after_a_plain_import() -> None:
    # A fresh interpreter: this one may have imported sigstream.distributed already.
    code = ("import sigstream\n"
            "assert callable(sigstream.distributed.local_cluster)\n"
            "try:\n"
            "    sigstream.no_such_name\n"
            "except AttributeError as e:\n"
            "    assert 'no_such_name' in str(e)\n"
            "else:\n"
            "    raise SystemExit('no AttributeError')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_build_info_and_the_fused_engine() -> None:
    """Every build path gets the fused FFT engine where CUDA is built: `pip install .` through the
    pinned nvidia-mathdx build requirement, scripts/build.sh through scripts/fetch-mathdx.sh."""
    info = sigstream.build_info()
    assert set(info) == {"version", "cuda", "fused_fft", "cpu_fft"}
    assert info["version"] == sigstream.__version__ and info["cpu_fft"]
    if info["cuda"]:
        assert info["fused_fft"] is True, "built with CUDA but without the cuFFTDx headers (nvidia-mathdx)"
    cli = os.environ.get("SIGSTREAM_CLI")
    if cli:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
        assert ("fused FFT engine: on" in out) == bool(info["fused_fft"]), out
