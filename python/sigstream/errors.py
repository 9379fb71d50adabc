"""The exceptions sigstream raises (SPEC §9), one per kind of failure of the CLI.

Each carries the message the CLI prints. They also derive from the built-in
exception a Python user would catch for the same failure: a bad value is a
``ValueError``, an unreadable file an ``OSError``.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every sigstream failure."""


class ConfigError(Error, ValueError):
    """A bad config, option or argument (the CLI's exit code 2)."""


class InputError(Error, OSError):
    """A missing, unreadable or malformed input, or an unwritable output (exit 1)."""


class CudaError(Error, RuntimeError):
    """The CUDA runtime or cuFFT failed, or no GPU is present (exit 1)."""


class CudaMemoryError(CudaError, MemoryError):
    """Out of GPU memory (or pinned host memory) in a CUDA allocation (exit 1)."""


class VerificationError(Error):
    """``verify=True`` found an error above the tolerance (exit 1)."""


class InternalError(Error, RuntimeError):
    """A bug in sigstream: please report it with the message."""


# ErrorKind names of core/error.hpp -> class.
KINDS: dict[str, type[BaseException]] = {
    "config": ConfigError,
    "invalid_argument": ConfigError,
    "io": InputError,
    "cuda": CudaError,
    "verification": VerificationError,
    "interrupted": KeyboardInterrupt,
    "output_closed": InputError,
    "internal": InternalError,
    "cuda_memory": CudaMemoryError,
}
