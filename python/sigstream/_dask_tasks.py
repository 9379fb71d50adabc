"""What a Dask batch's workers run (sigstream.distributed's module docstring tells how a batch
runs there): the task over a run of files, the facts a worker reports, its sweep of dead writers'
temporaries; and what the cluster and the driver share with it (the install hint, the CPU count).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, Optional

from . import _core

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


@dataclass(frozen=True)
class _Job:
    """What every task of one batch shares (pickled with each task: a few kB)."""

    yaml: str
    origin: str
    overrides: tuple[str, ...]  # the user's, and execution.backend as the driver resolved it
    out_dir: str  # absolute
    config_path: str  # absolute, "" for a dict config (the resume check's dependency)
    verify: bool
    threads: int  # the config's execution.threads (0: the task chooses)
    keep_going: bool = True  # False: a task stops at its first failed file (its others: not run)
    batch_id: str = ""  # what the driver's stop names (StopBatch); "" never stops


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


def _task(job: _Job, items: list[dict[str, Any]], noted: Optional[list[Identity]]) -> dict[str, Any]:
    """Runs one task's files in this worker; returns {"summary": JSON text, "worker": facts}.

    noted: with force, each file's statistics identity when the driver
    planned; a file is forced only while its statistics are still those, and
    only if it had statistics then (one without them is not up to date, so it
    runs unforced: a retry then completes what a killed first attempt
    committed instead of committing it again).
    """
    overrides = list(job.overrides)
    if job.threads == 0:
        overrides.append(f"execution.threads={_file_threads()}")
    groups: list[tuple[list[dict[str, Any]], bool]]
    if noted is None:
        groups = [(items, False)]
    else:
        still = [n is not None and _identity(it["stats_json"]) == tuple(n) for it, n in zip(items, noted)]
        groups = [([it for it, s in zip(items, still) if s], True), ([it for it, s in zip(items, still) if not s], False)]
        groups = [g for g in groups if g[0]]
    texts: list[str] = []
    for g, force in groups:
        last = json.loads(texts[-1]) if texts and not job.keep_going else None
        if last is not None and any(f["status"] == "failed" for f in last["files"]):
            files = [{"file": it["input"], "status": "not_run", "error": None, "bytes": 0} for it in g]
            texts.append(_entries_summary(last["config_fingerprint"], files, stopped=True))
            continue
        texts.append(_core.batch_items(job.yaml, job.origin, overrides, json.dumps(g), job.out_dir, force, job.verify,
                                       1, job.config_path, True, False, job.keep_going, job.batch_id))
    text = texts[0] if len(texts) == 1 else _core.merge_summaries(texts, job.out_dir, None, None)
    text = _host_numbering(text)
    return {"summary": text, "worker": _worker_facts(text)}


async def _sweep_on_worker(targets: list[str]) -> int:
    """On each worker once a batch's tasks are done: the temporaries of this host's dead writers
    beside the targets of the files whose tasks returned (a task killed mid-file leaves them where
    the file system has no O_TMPFILE). Done once a worker, not by each task: a task's sweep listed
    the output folder, once a task. Off the worker's event loop (a listing of a large folder on NFS
    would hold up its heartbeats). Returns how many it removed."""
    import asyncio

    removed, _other_hosts, _live = await asyncio.to_thread(_core.sweep_temps, targets)
    return int(removed)


def _worker_check() -> dict[str, Any]:
    """What the driver asks every worker before a batch (client.run)."""
    import sigstream

    gpus = int(sigstream._core.cuda_device_count()) if sigstream.cuda_available() else 0
    return {"cuda": sigstream.cuda_available(), "gpus": gpus, "version": sigstream.__version__,
            "host": socket.gethostname()}


def _entries_summary(fingerprint: str, files: list[dict[str, Any]], interrupted: bool = False,
                     stopped: bool = False) -> str:
    """A summary of files the driver never got results for (not run, interrupted, lost)."""
    return json.dumps({"config_fingerprint": fingerprint, "interrupted": interrupted,
                       "stopped_at_failure": stopped, "files": files})
