"""What a Dask batch's task uses on its worker (sigstream.distributed's module docstring tells how
a batch runs there): a file's statistics identity, the CPU threads a file gets, the summary in the
host's GPU numbering, the facts a worker reports; and what the cluster and the driver share with it
(the install hint, the CPU count, a summary of files without results). The task itself and what the
driver runs on every worker stay in sigstream.distributed, the names Dask pickles them by.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any, Optional


INSTALL_HINT = "pip install '.[dask]' in sigstream's source folder (dask[distributed]==2026.8.0)"

# A file's statistics JSON as the driver saw it: (inode, mtime in ns, size), or None when missing.
Identity = Optional[tuple[int, int, int]]


def _require_distributed() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError as e:
        raise ImportError(f"Dask is not installed for {sys.executable} ({e}): {INSTALL_HINT}") from e


def _cores() -> int:
    """The CPUs this process may run on (a Slurm or container allocation, not the whole machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _identity(path: str) -> Identity:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _file_threads() -> int:
    """CPU threads for one file's pipeline in this worker: its share of the host's cores."""
    env = os.environ.get("SIGSTREAM_FILE_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    nthreads = 1
    try:
        from distributed import get_worker

        nthreads = max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        pass
    return max(1, _cores() // nthreads)


def _physical(local: Any) -> Any:
    """A CUDA ordinal of this process as the host numbers it (CUDA_VISIBLE_DEVICES maps them)."""
    entries = [e.strip() for e in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if e.strip()]
    if isinstance(local, int) and not isinstance(local, bool) and 0 <= local < len(entries):
        return int(entries[local]) if entries[local].isdigit() else entries[local]
    return local


def _host_numbering(summary_text: str) -> str:
    """The summary with its device ordinals as the host numbers them (one GPU per worker sees only 0)."""
    if not os.environ.get("CUDA_VISIBLE_DEVICES"):
        return summary_text
    s = json.loads(summary_text)
    for f in s.get("files", []):
        f["device"] = _physical(f.get("device"))
    for d in s.get("devices", []):
        d["device"] = _physical(d.get("device"))
    for w in s.get("workers", []):
        w["device"] = _physical(w.get("device"))
    return json.dumps(s)


def _worker_facts(summary_text: str) -> dict[str, Any]:
    facts: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid()}
    try:
        from distributed import get_worker

        w = get_worker()
        facts["address"] = w.address
        facts["threads"] = int(w.state.nthreads)
    except (ImportError, ValueError):
        facts["address"] = ""
        facts["threads"] = 1
    devices = [d.get("device") for d in json.loads(summary_text).get("devices", [])]
    facts["device"] = devices[0] if len(devices) == 1 else ("cpu" if not devices else devices)
    return facts


def _entries_summary(fingerprint: str, files: list[dict[str, Any]], interrupted: bool = False,
                     stopped: bool = False) -> str:
    """A summary of files the driver never got results for (not run, interrupted, lost)."""
    return json.dumps({"config_fingerprint": fingerprint, "interrupted": interrupted,
                       "stopped_at_failure": stopped, "files": files})
