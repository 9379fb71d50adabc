"""sigstream batches on a Dask cluster (SPEC §10): ``sigstream.batch(..., client=...)``,
:func:`local_cluster`, and ``python -m sigstream.distributed`` behind
``sigstream batch --scheduler``.

The clusters and the entry points are here; the driver is in
sigstream/_dask_driver.py (its task queue in sigstream/_dask_queue.py), what
the workers run in sigstream/_dask_tasks.py, and the flags and cluster choice
of ``python -m sigstream.distributed`` in sigstream/_batch_cli.py.

    >>> import sigstream, sigstream.distributed
    >>> from distributed import Client
    >>> with sigstream.distributed.local_cluster(gpus="all") as cluster, Client(cluster) as client:
    ...     summary = sigstream.batch("job.yaml", ["in/*.wav"], out_dir="out", client=client)

How a batch runs there. The driver (the process calling ``batch``) plans the
batch once, as ``sigstream batch`` does (inputs expanded and sorted, every
output path fixed), and submits tasks of ``files_per_task`` files (by default
each at most a worker thread's share of the files and bytes left, 1 to 64
files: ``_TaskQueue``) to the workers, largest files first, a bounded
number at a time. A task runs the
C++ batch over its files in the worker process, where ``sigstream._core``
stays loaded: a worker keeps its CUDA context, its pinned buffers and its
plans from file to file. The task returns the files' summary entries; the
driver merges them with the C++ merge (``sigstream batch --merge``'s) into
the CLI's batch_summary.json/.csv in out_dir. Only paths and summaries cross
the network, never samples: files are read and written by the workers, so
the inputs and out_dir must be on a file system every worker sees under the
same paths (the driver makes relative paths absolute in its own working
folder). A config's relative ``taps_file`` is read from each worker's working
folder: give an absolute path for workers on other hosts.

Exactly once under at-least-once. Dask runs a task again when its worker
dies (up to ``distributed.scheduler.allowed-failures`` times). Each output is
committed atomically (renamed or linked into place complete), and a file is
done once its statistics JSON, written last, is committed: a retried task
finds such a file up to date and skips it. With ``force=True`` the driver
notes each file's statistics JSON (inode, mtime, size) when it plans, and a
task forces only files whose statistics are still those it noted, so a retry
does not redo a file that the first attempt of this same batch committed. A
file that fails is a "failed" entry of the summary, never a retried task; a
task of one file whose worker died on every try (``KilledWorker``) makes it a
failed entry too; a task of several that fails runs its files again one a
task. Once the tasks are done, each worker removes the temporary files of its
host's dead writers beside the outputs of the files whose tasks returned (what a worker killed mid-file leaves on a file system without
O_TMPFILE), once a worker rather than once a task; a file whose task failed
keeps a dead worker's pending commit for the next run to complete.

Interrupts. Ctrl-C (or SIGTERM to ``python -m sigstream.distributed``) stops
the driver handing out tasks and has every worker stop this batch's tasks (a worker
plugin, ``sigstream._dask_plugins.StopBatch``, that workers joining later get
too): a task starts no further file and returns once the file
it runs is done, its other files ``not_run`` entries. The driver waits up to
``STOP_GRACE_S`` for the tasks out, so the summary it writes says which files
were done; a task still running then has its files ``interrupted``. A signal
never lands while the driver takes a task's result (``_SignalGate``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, TextIO, Union

from . import _core
from ._dask_driver import _plan, _run_planned
# The task sizes (and INSTALL_HINT) stay importable from here (tests, bench, users' code).
from ._dask_queue import TASK_COST_S, _TaskQueue, auto_files_per_task, least_files_per_task  # noqa: F401
from ._dask_tasks import (INSTALL_HINT, Identity, _cores, _entries_summary, _file_threads,  # noqa: F401
                          _host_numbering, _identity, _require_distributed, _worker_facts)

if TYPE_CHECKING:  # distributed is the optional `dask` extra: imported where used
    from distributed import Client, SpecCluster

__all__ = ["local_cluster", "main"]

# How long an interrupted driver waits for the tasks out to return (each finishes the file it
# runs): their finished files are then ok entries, not interrupted ones.
STOP_GRACE_S = 10.0


# ---------------------------------------------------------------------------
# Local clusters


def _visible_gpus() -> list[str]:
    """The CUDA devices this process sees, each as the CUDA_VISIBLE_DEVICES entry that selects it."""
    count = int(_core.cuda_device_count()) if _core.has_cuda else 0
    if count <= 0:
        return []
    parent = os.environ.get("CUDA_VISIBLE_DEVICES")
    if parent is not None:
        entries = [e.strip() for e in parent.split(",") if e.strip()]
        if len(entries) >= count:
            return entries[:count]
    return [str(i) for i in range(count)]


def local_cluster(
    gpus: Union[str, int] = "all",
    files_per_gpu: int = 2,
    *,
    cpu_workers: Optional[int] = None,
    scheduler_options: Optional[Mapping[str, Any]] = None,
    worker_options: Optional[Mapping[str, Any]] = None,
    **kw: Any,
) -> SpecCluster:
    """A Dask cluster on this host for sigstream batches: one worker process per GPU.

    gpus: "all" (every GPU this process sees), a number N (the first N;
    ValueError if fewer exist) or 0 (CPU workers). Each GPU worker is a
    separate process (a ``distributed.Nanny``) whose ``CUDA_VISIBLE_DEVICES``
    names its GPU alone, with ``files_per_gpu`` threads: that many files in
    flight on the GPU, their reading and writing overlapping the GPU's work.
    Without GPUs (gpus=0, a build without CUDA, or no device found) the
    workers are CPU workers: ``cpu_workers`` processes (default: N when a
    number N of GPUs was asked for, else 1) of ``files_per_gpu`` threads,
    the CPU cores shared among their files (SIGSTREAM_FILE_THREADS in each
    worker's environment). The workers ignore SIGINT (a Ctrl-C in this
    terminal is the driver's: it stops the batch's tasks after the file each
    runs). The scheduler listens on 127.0.0.1 without a
    dashboard unless ``scheduler_options`` say otherwise; ``worker_options``
    go to every Nanny, the other keywords to ``distributed.SpecCluster``
    (the scheduler's and workers' logs below ERROR are silenced unless
    ``silence_logs`` says otherwise).

    Use it as a context manager, or close it: ``with local_cluster() as c,
    Client(c) as client: ...``; in a script, under ``if __name__ ==
    "__main__":`` (each worker process imports the script again, as with any
    Dask ``LocalCluster`` of processes).
    """
    _require_distributed()
    from distributed import Nanny, Scheduler, SpecCluster

    if int(files_per_gpu) < 1:
        raise ValueError(f"files_per_gpu must be >= 1 (got {files_per_gpu})")
    files_per_gpu = int(files_per_gpu)
    visible = _visible_gpus()
    if gpus == "all":
        chosen = visible
    elif isinstance(gpus, int) and not isinstance(gpus, bool) and gpus >= 0:
        if visible and gpus > len(visible):
            raise ValueError(f"gpus={gpus}: this host has {len(visible)} GPU(s) visible "
                             f"({', '.join(visible)}); ask for at most {len(visible)}, or gpus='all'")
        chosen = visible[:gpus]
    else:
        raise ValueError(f"gpus must be 'all' or a whole number >= 0 (got {gpus!r})")

    kw.setdefault("silence_logs", logging.ERROR)
    extra = {"silence_logs": kw["silence_logs"], **dict(worker_options or {})}
    extra_env = dict(extra.pop("env", {}) or {})
    # Each worker ignores SIGINT: a Ctrl-C in the terminal that started the cluster is the driver's
    # to handle (sigstream/_local_worker.py). The user's preloads follow (worker_options', else
    # Dask's config), each with its arguments (one list for all of them, or a list each).
    import dask

    theirs = extra.pop("preload", None)
    argv = extra.pop("preload_argv", None)
    if theirs is None:
        theirs = dask.config.get("distributed.worker.preload", None) or []
    if argv is None:
        argv = dask.config.get("distributed.worker.preload-argv", None)
    theirs = [theirs] if isinstance(theirs, str) else list(theirs)
    argv = list(argv or [])
    each = argv if argv and not all(isinstance(a, str) for a in argv) else [argv] * len(theirs)
    extra["preload"] = ["sigstream._local_worker", *theirs]
    extra["preload_argv"] = [[], *each]
    workers: dict[str, dict[str, Any]] = {}
    cores = _cores()
    if chosen:
        per_file = max(1, cores // (len(chosen) * files_per_gpu))
        for dev in chosen:
            env = {**extra_env, "CUDA_VISIBLE_DEVICES": dev, "SIGSTREAM_FILE_THREADS": str(per_file)}
            workers[f"gpu-{dev}"] = {"cls": Nanny, "options": {"nthreads": files_per_gpu, "env": env, **extra}}
    else:
        if cpu_workers is not None:
            n = int(cpu_workers)
        else:
            n = gpus if isinstance(gpus, int) and gpus > 0 else 1
        if n < 1:
            raise ValueError(f"cpu_workers must be >= 1 (got {cpu_workers})")
        per_file = max(1, cores // (n * files_per_gpu))
        for k in range(n):
            # No GPU for CPU workers, even where the host has one.
            env = {**extra_env, "CUDA_VISIBLE_DEVICES": "", "SIGSTREAM_FILE_THREADS": str(per_file)}
            workers[f"cpu-{k}"] = {"cls": Nanny, "options": {"nthreads": files_per_gpu, "env": env, **extra}}
    sched = {"host": "127.0.0.1", "port": 0, "dashboard": False, "dashboard_address": ":0",
             **dict(scheduler_options or {})}
    return SpecCluster(workers=workers, scheduler={"cls": Scheduler, "options": sched}, **kw)


def auto_files_per_gpu(cores: int, gpus: int) -> int:
    """Files in flight per GPU by default: the cores over the GPUs (rounded up), 2 to 16.

    The CLI's own rule (auto_files_per_device, pipeline/batch.hpp), so that a
    local Dask cluster runs as many files a GPU as ``sigstream batch`` does.
    """
    return int(_core.auto_files_per_device(int(cores), int(gpus)))


# ---------------------------------------------------------------------------
# What Dask sends to the workers. Pickled by module and name: kept here, where a driver and
# workers of earlier versions look for them (the task's helpers are in sigstream/_dask_tasks.py).


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


# ---------------------------------------------------------------------------
# The batch (the driver: sigstream/_dask_driver.py; its queue: sigstream/_dask_queue.py)


def run_batch_on_client(
    client: Client,
    config_text: str,
    origin: str,
    config_path: str,
    overrides: Sequence[str],
    inputs: Sequence[str],
    out_dir: Optional[str],
    keep_going: Optional[bool],
    force: bool,
    verify: bool,
    quiet: bool,
    backend: Optional[str],
    progress: bool = True,
    summary_path: Optional[str] = None,
    files_per_task: Optional[int] = None,
    stream: Optional[TextIO] = None,
) -> dict[str, Any]:
    """The distributed batch behind ``sigstream.batch(client=...)`` (see the module's docstring)."""
    planned = _plan(config_text, origin, config_path, overrides, inputs, out_dir, keep_going, backend, quiet,
                    summary_path=summary_path)
    return _run_planned(client, planned, force, verify, quiet, progress, summary_path, files_per_task, stream)


# ---------------------------------------------------------------------------
# python -m sigstream.distributed (sigstream batch --scheduler)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``sigstream batch --scheduler``'s work (sigstream/_batch_cli.py); returns the CLI's exit code."""
    from ._batch_cli import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
