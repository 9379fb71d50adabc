"""Shared fixtures: seeded random signals, and the GPU libraries where present."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sigstream

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261124)


def cli_path() -> str | None:
    """The sigstream CLI of this checkout (SIGSTREAM_CLI, build/sigstream, or PATH)."""
    env = os.environ.get("SIGSTREAM_CLI")
    if env and os.access(env, os.X_OK):
        return env
    built = REPO / "build" / "sigstream"
    if built.exists():
        return str(built)
    return shutil.which("sigstream")


def gpu_libs() -> list[str]:
    """The GPU array libraries importable here, when sigstream has CUDA and a device."""
    if not sigstream.cuda_available():
        return []
    found = []
    for name in ("cupy", "torch"):
        try:
            mod: Any = __import__(name)
        except ImportError:
            continue
        if name == "torch" and not mod.cuda.is_available():
            continue
        found.append(name)
    return found
