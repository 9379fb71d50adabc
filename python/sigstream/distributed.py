"""sigstream batches on a Dask cluster (SPEC §10): ``sigstream.batch(..., client=...)``,
:func:`local_cluster`, and ``python -m sigstream.distributed`` behind
``sigstream batch --scheduler``.

Over 600 lines (~980) and one module on purpose: the cluster, the worker's task
and the driver share the job, queue and summary types and the signal gate
(``python -m sigstream.distributed``'s flags and cluster choice are in
sigstream/_batch_cli.py); the driver (``_run_planned``, its queue and gate) is
the part to split off next.

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

import collections
import json
import logging
import math
import os
import signal
import threading
import socket
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, TextIO, Union

from . import _core
from .errors import Error, InputError

if TYPE_CHECKING:  # distributed is the optional `dask` extra: imported where used
    from distributed import Client, SpecCluster

__all__ = ["local_cluster", "main"]

INSTALL_HINT = "pip install '.[dask]' in sigstream's source folder (dask[distributed]==2026.8.0)"

# A file's statistics JSON as the driver saw it: (inode, mtime in ns, size), or None when missing.
Identity = Optional[tuple[int, int, int]]


def _require_distributed() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError as e:
        raise ImportError(f"Dask is not installed for {sys.executable} ({e}): {INSTALL_HINT}") from e


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


# ---------------------------------------------------------------------------
# What runs on a worker


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


def auto_files_per_task(files: int, threads: int) -> int:
    """The most files a task takes by default: a worker thread's share of the files left (guided
    self-scheduling: tasks shrink as the batch goes), 1 to 64.

    A task costs its worker and the driver a few milliseconds whatever it runs (the task's round
    trip, the config parsed and the batch set up again), more than a light file's whole work: 400
    files of 3 s on 2 CPU workers took 2.88-2.89 s at one file a task and 1.46-1.49 s in tasks of
    several; on 4 x H100, 800 light files over one GPU worker of 16 threads, 4.85-5.39 s against
    1.66-1.77 s (bench/RESULTS.md, stop 45). A task costs the driver too, one after another, so
    the fewer the better while every thread has one and they end together. At most 64: a dead
    worker's retry runs its task again (skipping what it committed), and the progress bar moves a
    task at a time.
    """
    return max(1, min(64, -(-int(files) // max(1, int(threads)))))


# The driver's own time for a task (its submission, its result's gather and summary, one task
# after another): 162 tasks of 200 light files on four GPU workers of 16 threads took 0.44-0.54 s,
# 25-50 tasks of the same files 0.15-0.17 s (bench/RESULTS.md, stop 48; Dask 2026.8.0, 4 x H100).
TASK_COST_S = 0.0025


def least_files_per_task(threads: int, file_seconds: float) -> int:
    """The fewest files a task takes by default, so that the driver keeps up with the workers: at
    most half its time goes on tasks while every thread works, each on files of ``file_seconds``
    (a file's estimated seconds on one CPU thread, sigstream's estimate); 1 to 64, 1 where the
    estimate is unknown (0 or less)."""
    if not file_seconds > 0.0:
        return 1
    need = 2.0 * max(1, int(threads)) * TASK_COST_S / file_seconds
    return 64 if not need < 64.0 else max(1, math.ceil(need))


class _TaskQueue:
    """The files not yet sent, largest first, cut into tasks as they are sent.

    With files_per_task N, N files a task. By default each task takes at most a worker thread's
    share of what is left, in files (:func:`auto_files_per_task`) and in bytes:
    tasks shrink towards the end of the batch and a long file goes alone, so the threads end
    together whatever the files' sizes, and threads that join later still find work; but no
    task takes fewer files than the driver needs to keep up (:func:`least_files_per_task`, from
    ``seconds_per_byte``, the largest file's estimated seconds on one CPU thread over its bytes;
    0: unknown), nor more than a thread's share of the whole batch for that. The files
    of a task that failed come back one a task (:meth:`again`), before the rest: only a file that
    kills its worker on every try becomes a failed entry, not the files beside it in its task.
    """

    def __init__(self, sizes: Sequence[int], files_per_task: Optional[int], seconds_per_byte: float = 0.0) -> None:
        self._sizes = list(sizes)
        self._per = files_per_task
        self._seconds_per_byte = seconds_per_byte
        self._order = collections.deque(sorted(range(len(self._sizes)), key=lambda i: -self._sizes[i]))
        self._bytes = sum(self._sizes)
        self._singles: collections.deque[int] = collections.deque()

    def __bool__(self) -> bool:
        return bool(self._order or self._singles)

    def take(self, threads: int) -> list[int]:
        """The next task's files (non-empty; call only while the queue is not empty)."""
        if self._singles:
            return [self._singles.popleft()]
        cap: Optional[float] = None
        if self._per is not None:
            most = self._per
        else:
            # A thread's share of what is left, but at least the least the driver keeps up with,
            # sized on the file at the head (the largest left: a long one still goes alone) and no
            # more than a thread's share of the whole batch, so that every thread gets a task.
            head = self._sizes[self._order[0]]
            least = min(least_files_per_task(threads, self._seconds_per_byte * head),
                        auto_files_per_task(len(self._sizes), threads))
            most = max(auto_files_per_task(len(self._order), threads), least)
            cap = max(self._bytes / max(1, threads), least * head)
        task: list[int] = []
        got = 0
        while self._order and len(task) < most:
            size = self._sizes[self._order[0]]
            if task and cap is not None and got + size > cap:
                break
            task.append(self._order.popleft())
            got += size
        self._bytes -= got
        return task

    def again(self, files: Sequence[int]) -> None:
        """Files of a failed task: each in a task of its own, next."""
        self._singles.extend(files)

    def left(self) -> list[int]:
        """The files never sent."""
        return [*self._singles, *self._order]


def auto_files_per_gpu(cores: int, gpus: int) -> int:
    """Files in flight per GPU by default: the cores over the GPUs (rounded up), 2 to 16.

    The CLI's own rule (auto_files_per_device, pipeline/batch.hpp), so that a
    local Dask cluster runs as many files a GPU as ``sigstream batch`` does.
    """
    return int(_core.auto_files_per_device(int(cores), int(gpus)))


def _cores() -> int:
    """The CPUs this process may run on (a Slurm or container allocation, not the whole machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


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


class _Call:
    """A blocking call to the cluster on a thread of its own, that the driver waits for only so
    long (a worker that died but is still listed holds a scheduler's call up to its connect
    timeout, 30 s) and not past another signal: the driver's summary comes first."""

    def __init__(self, fn: Any) -> None:
        self.value: Any = None
        self.error: Optional[str] = "no answer in time"

        def run() -> None:
            try:
                self.value = fn()
                self.error = None
            except Exception as e:  # noqa: BLE001 - said by the caller
                self.error = f"{type(e).__name__}: {e}"

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def wait(self, seconds: float, gate: Optional["_SignalGate"] = None) -> Optional[str]:
        """None once the call returned, else why not (not yet, or it raised)."""
        end = time.monotonic() + max(0.0, seconds)
        signals = gate.count if gate is not None else 0
        while self._thread.is_alive() and time.monotonic() < end:
            if gate is not None and gate.count > signals:
                return "interrupted"
            self._thread.join(timeout=0.05)
        return None if not self._thread.is_alive() and self.error is None else self.error


class _SignalGate:
    """While a batch's driver runs in the main thread: SIGINT (and SIGTERM where ``main`` set it to
    stop the batch) raise KeyboardInterrupt only while the driver waits for the next task to end;
    one that comes while the driver takes a task's result is counted and acted on right after, so
    that no result is ever half taken (its files' entries lost). Leaves the handlers as it found
    them, except that after a signal ``main``'s become SIG_IGN, as _on_sigterm leaves them."""

    def __init__(self) -> None:
        self.count = 0
        self.waiting = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> "_SignalGate":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                handler = signal.getsignal(sig)
                if handler is signal.default_int_handler or handler is _on_sigterm:
                    self._saved[sig] = handler
                    signal.signal(sig, self._on_signal)
        return self

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.count += 1
        if self.waiting and self.count == 1:
            self.waiting = False
            raise KeyboardInterrupt

    def another_stops_waiting(self) -> bool:
        """A second Ctrl-C given to a Python program (not to ``main``, where Slurm and the CLI
        may both send one) ends the wait for the workers' tasks."""
        return self.count >= 2 and self._saved.get(signal.SIGINT) is signal.default_int_handler

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, signal.SIG_IGN if handler is _on_sigterm and self.count else handler)


# How long an interrupted driver waits for the tasks out to return (each finishes the file it
# runs): their finished files are then ok entries, not interrupted ones.
STOP_GRACE_S = 10.0


async def _sweep_on_worker(targets: list[str]) -> int:
    """On each worker once a batch's tasks are done: the temporaries of this host's dead writers
    beside the targets of the files whose tasks returned (a task killed mid-file leaves them where
    the file system has no O_TMPFILE). Done once a worker, not by each task: a task's sweep listed
    the output folder, once a task. Off the worker's event loop (a listing of a large folder on NFS
    would hold up its heartbeats). Returns how many it removed."""
    import asyncio

    removed, _other_hosts, _live = await asyncio.to_thread(_core.sweep_temps, targets)
    return int(removed)


def _sweep_workers(client: Client, finished: list[dict[str, Any]]) -> int:
    """_sweep_on_worker on every worker, over the files whose tasks returned: only their tasks
    completed a dead writer's pending commit first (check_resume); a file whose task failed or
    never ran keeps such a record for the next run to complete. How many temporaries the workers
    that answered removed."""
    targets = [str(p) for a in finished for p in (a.get("output"), a.get("stats_json"), a.get("stats_csv")) if p]
    if not targets:
        return 0
    try:
        swept = client.run(_sweep_on_worker, targets, on_error="return")
    except Exception:  # noqa: BLE001 - no worker left to ask: the next run's sweep removes them
        return 0
    return sum(v for v in swept.values() if isinstance(v, int))  # an exception where a worker failed


def _worker_check() -> dict[str, Any]:
    """What the driver asks every worker before a batch (client.run)."""
    import sigstream

    gpus = int(sigstream._core.cuda_device_count()) if sigstream.cuda_available() else 0
    return {"cuda": sigstream.cuda_available(), "gpus": gpus, "version": sigstream.__version__,
            "host": socket.gethostname()}


# ---------------------------------------------------------------------------
# The driver


class _Display:
    """Log lines and one progress line on stderr (the line only on a terminal)."""

    def __init__(self, files: int, total_bytes: int, progress: bool, quiet: bool, stream: TextIO) -> None:
        self.stream = stream
        self.quiet = quiet
        self.enabled = progress and not quiet and stream.isatty()
        self.files = files
        self.total_bytes = total_bytes
        self.start = time.monotonic()
        self.drawn = False
        self.last = 0.0
        self.state = (0, 0, 0, 0)

    def say(self, line: str, failure: bool = False) -> None:
        if self.quiet and not failure:
            return
        self._clear()
        self.stream.write(f"sigstream: {line}\n")
        self.stream.flush()
        if self.drawn:
            self._draw()

    def update(self, done: int, bytes_done: int, failed: int, running: int) -> None:
        self.state = (done, bytes_done, failed, running)
        now = time.monotonic()
        if self.enabled and (done >= self.files or now - self.last >= 0.1):
            self.last = now
            self._draw()

    def finish(self) -> None:
        self._clear()
        self.drawn = False
        self.enabled = False

    def _clear(self) -> None:
        if self.enabled and self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def _draw(self) -> None:
        done, bytes_done, failed, running = self.state
        secs = time.monotonic() - self.start
        frac = bytes_done / self.total_bytes if self.total_bytes > 0 else (done / self.files if self.files else 1.0)
        rate = bytes_done / secs if secs > 0 else 0.0
        eta = f"ETA {(self.total_bytes - bytes_done) / rate:.0f} s" if rate > 0 else "ETA --"
        filled = int(min(max(frac, 0.0), 1.0) * 24)
        bar = "#" * filled + "." * (24 - filled)
        fail = f"  failed {failed}" if failed else ""
        self.stream.write(f"\r[{bar}] {done}/{self.files} files  {_human(bytes_done)}/{_human(self.total_bytes)}  "
                          f"{_human(rate)}/s  {eta}  {running} running{fail}\033[K")
        self.stream.flush()
        self.drawn = True


def _human(b: float) -> str:
    units = ["B", "kB", "MB", "GB", "TB"]
    u = 0
    while b >= 1000.0 and u < 4:
        b /= 1000.0
        u += 1
    return f"{b:.0f} {units[u]}" if u == 0 else f"{b:.1f} {units[u]}"


def _joined(path: str) -> str:
    """A path made absolute from this folder without touching its ".." (os.path.abspath drops
    them by text: "link/../x.wav" would become this folder's x.wav, not the link's parent's)."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _absolute(item: dict[str, Any]) -> dict[str, Any]:
    out = dict(item)
    for k in ("input", "output", "stats_json", "stats_csv"):
        if out.get(k):
            out[k] = _joined(out[k])
    return out


def _entries_summary(fingerprint: str, files: list[dict[str, Any]], interrupted: bool = False,
                     stopped: bool = False) -> str:
    """A summary of files the driver never got results for (not run, interrupted, lost)."""
    return json.dumps({"config_fingerprint": fingerprint, "interrupted": interrupted,
                       "stopped_at_failure": stopped, "files": files})


def _resolve_backend(client: Client, wanted: str, display: _Display) -> str:
    """'cpu' or 'cuda' for every task: one backend, so one config fingerprint and one resume record."""
    try:
        facts: dict[str, dict[str, Any]] = client.run(_worker_check)
    except ImportError as e:
        raise InputError(f"batch: the Dask workers cannot import sigstream ({e}); install it where the workers "
                         f"run: {INSTALL_HINT}") from None
    import sigstream

    versions = sorted({str(f.get("version")) for f in facts.values()})
    if versions != [sigstream.__version__]:
        display.say(f"batch: warning: the workers run sigstream {', '.join(versions)}, this driver "
                    f"{sigstream.__version__}")
    with_cuda = [a for a, f in facts.items() if f.get("cuda")]
    crowded = sorted(a for a, f in facts.items() if int(f.get("gpus", 0)) > 1)
    if crowded and wanted != "cpu":
        # A task's file runs on its worker's first visible GPU: a worker that
        # sees several GPUs leaves all but one idle.
        display.say(f"batch: warning: {len(crowded)} Dask worker(s) see several GPUs ({', '.join(crowded[:3])}) and "
                    "run every file on the first; start one worker per GPU (CUDA_VISIBLE_DEVICES, "
                    "sigstream.distributed.local_cluster, or dask-cuda's LocalCUDACluster)")
    if wanted == "cpu":
        return "cpu"
    if wanted == "cuda":
        if len(with_cuda) < len(facts):
            missing = sorted(set(facts) - set(with_cuda))
            raise sigstream.CudaError(f"backend 'cuda': {len(missing)} of {len(facts)} Dask worker(s) have no CUDA "
                                      f"device ({', '.join(missing[:3])}); use backend='auto' or 'cpu'")
        return "cuda"
    if with_cuda and len(with_cuda) == len(facts):
        return "cuda"
    if with_cuda:
        display.say(f"batch: warning: only {len(with_cuda)} of {len(facts)} Dask workers have a CUDA device: the "
                    "batch runs on the CPU backend everywhere (one backend per batch keeps its outputs and resume "
                    "records alike); backend='cuda' with GPU workers only uses the GPUs")
    return "cpu"


def _threads_of(client: Client) -> int:
    try:
        return sum(int(n) for n in client.nthreads().values())
    except (OSError, ValueError):
        return 0


@dataclass
class _Planned:
    """A batch planned by the driver, before any worker is asked."""

    plan: dict[str, Any]
    config_text: str
    origin: str
    config_path: str
    overrides: list[str]
    keep_going: bool


def _plan(config_text: str, origin: str, config_path: str, overrides: Sequence[str], inputs: Sequence[str],
          out_dir: Optional[str], keep_going: Optional[bool], backend: Optional[str], quiet: bool,
          list_text: Optional[str] = None, list_origin: str = "") -> _Planned:
    """The batch's whole sorted list and every path it writes (config errors raise ConfigError here)."""
    sets = [str(o) for o in overrides]
    if backend is not None:
        sets.append(f"execution.backend={backend}")
    plan = json.loads(_core.batch_plan(config_text, origin, sets, list(inputs), list_text, list_origin, out_dir,
                                       quiet))
    keep = plan["keep_going"] if keep_going is None else bool(keep_going)
    return _Planned(plan, config_text, origin, config_path, sets, keep)


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
    planned = _plan(config_text, origin, config_path, overrides, inputs, out_dir, keep_going, backend, quiet)
    return _run_planned(client, planned, force, verify, quiet, progress, summary_path, files_per_task, stream)


def _run_planned(client: Client, planned: _Planned, force: bool, verify: bool, quiet: bool, progress: bool,
                 summary_path: Optional[str], files_per_task: Optional[int],
                 stream: Optional[TextIO]) -> dict[str, Any]:
    t0 = time.monotonic()
    out = stream if stream is not None else sys.stderr
    if files_per_task is not None and int(files_per_task) < 1:
        raise ValueError(f"files_per_task must be >= 1, or None to choose (got {files_per_task})")
    plan = planned.plan
    items: list[dict[str, Any]] = plan["items"]
    given_out_dir: str = plan["out_dir"]
    keep = planned.keep_going
    config_text, origin, config_path, overrides = (planned.config_text, planned.origin, planned.config_path,
                                                   planned.overrides)
    display = _Display(len(items), sum(int(it["bytes"]) for it in items), progress, quiet, out)

    if not client.nthreads():
        display.say("batch: waiting for a Dask worker to join the scheduler ...")
        client.wait_for_workers(1)
    resolved = _resolve_backend(client, plan["backend"], display)
    fingerprint: str = plan["config_fingerprint"][resolved]
    batch_id = uuid.uuid4().hex[:12]
    job = _Job(yaml=config_text, origin=origin, overrides=(*overrides, f"execution.backend={resolved}"),
               out_dir=_joined(given_out_dir), config_path=_joined(config_path) if config_path else "",
               verify=bool(verify), threads=int(plan.get("threads", 0)), keep_going=bool(keep), batch_id=batch_id)

    # Files largest first (as the CLI hands them out), cut into tasks as they are sent (_TaskQueue.take).
    largest = plan.get("largest_file") or {}
    largest_s, largest_bytes = largest.get("cpu_seconds"), int(largest.get("bytes") or 0)
    seconds_per_byte = float(largest_s) / largest_bytes if largest_s is not None and largest_bytes > 0 else 0.0
    queue = _TaskQueue([int(it["bytes"]) for it in items], None if files_per_task is None else int(files_per_task),
                       seconds_per_byte)
    tasks: list[list[int]] = []  # every task sent, by number
    absolute = [_absolute(it) for it in items]
    noted = [_identity(a["stats_json"]) for a in absolute] if force else None
    by_input = {a["input"]: i for i, a in enumerate(absolute)}
    workers_now = len(client.nthreads())
    display.say(f"batch: {len(items)} file{'s' if len(items) != 1 else ''} on a Dask cluster "
                f"({workers_now} worker(s), {_threads_of(client)} thread(s), backend {resolved}) -> {given_out_dir}")

    from distributed import as_completed

    texts: list[str] = []
    finished: list[int] = []  # the files whose tasks returned (their pending commits were completed)
    workers: dict[str, dict[str, Any]] = {}
    pending: dict[Any, int] = {}  # future -> task index
    done_files = done_bytes = failures = 0
    returned = 0  # tasks whose summaries came back (the summary's "tasks")
    stopped = interrupted = False
    window_at = 0.0
    window = 4
    threads = 1
    ac = as_completed()

    def submit_more() -> None:
        nonlocal window, window_at, threads
        now = time.monotonic()
        # Workers may join or leave: a few tasks per thread in flight, and tasks cut for the
        # threads there are. Asked of the scheduler once a second, not for each task (a round
        # trip: the driver handles one task after another).
        if now - window_at > 1.0:
            threads = max(1, _threads_of(client))
            window = max(4, 2 * threads + 2)
            window_at = now
        while queue and len(pending) < window and not stopped and not interrupted:
            idx = queue.take(threads)
            number = len(tasks)
            tasks.append(idx)
            fut = client.submit(_task, job, [absolute[i] for i in idx],
                                None if noted is None else [noted[i] for i in idx],
                                key=f"sigstream-batch-{batch_id}-{number}", pure=False)
            pending[fut] = number
            ac.add(fut)

    def lost(idx: list[int], status: str, why: Optional[str]) -> None:
        files = [{"file": items[i]["input"], "status": status, "error": f"{items[i]['input']}: {why}" if why else None,
                  "bytes": int(items[i]["bytes"])} for i in idx]
        texts.append(_entries_summary(fingerprint, files,
                                      interrupted=status == "interrupted" or (status == "not_run" and interrupted),
                                      stopped=status == "not_run" and stopped))

    def outcome_of(fut: Any, timeout: Optional[float] = None) -> Any:
        """A task's result, or the exception it raised (a round trip through the scheduler; a
        TimeoutError where the timeout passed first: a result lost with its worker is computed
        again)."""
        try:
            return fut.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001 - whatever a task raised becomes its files' error entries
            return e

    def fetch(ended: list[Any]) -> dict[Any, Any]:
        """The outcomes of tasks that ended together: the finished ones' results in one gather, the
        others one by one. (Fetched one a task, the results cost the driver a round trip each, one
        after another: 5-13 ms a task, the bound on light files over many worker threads.)"""
        ok = [f for f in ended if f.status == "finished"]
        got: dict[Any, Any] = {}
        if len(ok) > 1:
            try:
                got = dict(zip(ok, client.gather(ok)))
            except Exception:  # noqa: BLE001 - one of them failed meanwhile: each on its own below
                got = {}
        return {f: got[f] if f in got else outcome_of(f) for f in ended}

    def take(fut: Any, outcome: Any) -> None:
        """A task that ended: its summary's entries, or its files again one a task, or failed."""
        nonlocal done_files, done_bytes, failures, stopped, returned
        idx = tasks[pending.pop(fut)]
        if isinstance(outcome, BaseException):
            e = outcome
            if interrupted:
                lost(idx, "interrupted", "the batch was interrupted and the task running this file failed meanwhile "
                     f"({type(e).__name__}: {e}); a re-run skips it if a worker completed it")
                return
            if len(idx) > 1 and not stopped:
                # One of its files may have killed its worker on every try: each file runs again in a
                # task of its own (a file the first tries committed is then skipped), so that only
                # such a file is a failed entry, not the files beside it.
                queue.again(idx)
                return
            why = f"{type(e).__name__}: {e}"
            if type(e).__name__ == "KilledWorker":
                why = f"its Dask worker died on every try ({e})"
            for k, i in enumerate(idx):
                display.say(f"[{done_files + k + 1}/{len(items)}] failed {items[i]['input']}: the task running it "
                            f"failed: {why}", True)
            lost(idx, "failed", f"the task running it failed: {why}")
            failures += len(idx)
            done_files += len(idx)
            if not keep:
                stopped = True
            return
        finished.extend(idx)
        returned += 1
        summary = json.loads(outcome["summary"])
        w = outcome["worker"]
        workers.setdefault(w.get("address") or f"{w['host']}:{w['pid']}", w)
        for f in summary["files"]:
            at = by_input.get(f["file"])
            if at is None:
                continue
            given, a = items[at], absolute[at]
            f["file"] = given["input"]
            if f.get("output"):
                f["output"] = given["output"]
            if f.get("stats"):
                f["stats"] = given["stats_json"]
            if f.get("error"):
                f["error"] = f["error"].replace(a["input"], given["input"])
            if f["status"] in ("not_run", "interrupted"):
                continue
            done_files += 1
            done_bytes += int(given["bytes"])
            if f["status"] == "failed":
                failures += 1
                display.say(f"[{done_files}/{len(items)}] failed {f['error']}", True)
                if not keep:
                    stopped = True
        texts.append(json.dumps(summary))

    gate = _SignalGate()
    with gate:  # left once the summary is written: a signal till then is counted
        try:
            submit_more()
            batches = ac.batches()
            while True:
                gate.waiting = True
                try:
                    if gate.count:  # one that came while a task was being taken
                        raise KeyboardInterrupt
                    ended = next(batches)
                    outcomes = fetch(ended)
                except StopIteration:
                    break
                finally:
                    gate.waiting = False
                # (Futures an interrupted wait had got are still in pending: taken below.)
                for fut in ended:
                    take(fut, outcomes[fut])
                display.update(done_files, done_bytes, failures, len(pending))
                if not gate.count:
                    submit_more()
            interrupted = gate.count > 0  # one that came after the last wait: nothing was left to stop
        except KeyboardInterrupt:
            interrupted = True
            display.finish()
            display.say("batch: interrupted: no file starts from now" +
                        (f"; waiting up to {STOP_GRACE_S:g} s for the {len(pending)} task(s) sent to finish the file "
                         "each runs" if pending else ""), True)
            deadline = time.monotonic() + STOP_GRACE_S
            # Every worker's tasks of this batch, and those of workers that join later, hand out no
            # further file (a worker plugin, registered while the driver waits); those that return
            # in time give their finished files as ok entries, the files they never started not_run.
            from ._dask_plugins import StopBatch

            plugin = f"sigstream-stop-{batch_id}"
            over = threading.Event()  # the driver is done with the stop: a late registration undoes itself

            def register() -> None:
                client.register_plugin(StopBatch(batch_id), name=plugin)
                if over.is_set():
                    client.unregister_worker_plugin(plugin)

            telling = _Call(register) if pending else None
            while pending and time.monotonic() < deadline and not gate.another_stops_waiting():
                for fut in [f for f in pending if f.status in ("finished", "error", "cancelled")]:
                    # A result lost with its worker is computed again: at most a second for each, so
                    # that the results at hand are all taken.
                    was = fut.status
                    outcome = outcome_of(fut, min(1.0, max(0.0, deadline - time.monotonic())))
                    if was == "finished" and isinstance(outcome, TimeoutError):
                        continue
                    take(fut, outcome)
                time.sleep(0.02)
            told = telling.wait(max(0.5, deadline - time.monotonic()), gate) if telling is not None else "-"
            over.set()
            if telling is not None and told is not None:
                told = telling.wait(0.0)  # (answered since: the driver unregisters it below)
            if telling is not None and told is not None:
                display.say(f"batch: not every worker confirmed the stop ({told})", True)
            for fut, t in pending.items():
                lost(tasks[t], "interrupted",
                     "the batch was interrupted while this file was in flight on a Dask worker (a re-run skips it "
                     "if the worker completed it)")
            left = list(pending)
            pending.clear()
            _Call(lambda: client.cancel(left)).wait(5.0, gate)
            if told is None:  # every worker has it: no later one needs it (nor its unpickling)
                _Call(lambda: client.unregister_worker_plugin(plugin)).wait(5.0, gate)
            # (Not answered yet: the registering thread unregisters once it is, while the client lasts.)
        display.finish()
        rest = queue.left()
        if rest:
            lost(rest, "not_run", None)
        if not interrupted:  # else tasks may still run: the next run sweeps
            targets = [absolute[i] for i in finished]
            sweep = _Call(lambda: _sweep_workers(client, targets))
            why = sweep.wait(30.0, gate)
            if why is None and sweep.value:
                display.say(f"batch: removed {sweep.value} temporary file(s) left by a killed run")
            elif why is not None:
                display.say(f"batch: the workers did not remove dead writers' temporaries ({why}): the next run "
                            "does", True)
            interrupted = gate.count > 0
        wall = time.monotonic() - t0
        worker_list = [{"device": w.get("device", "cpu"), "threads": w.get("threads", 1), "host": w.get("host"),
                        "address": w.get("address")} for w in workers.values()]
        merged = _core.merge_summaries(texts, given_out_dir, wall, json.dumps(worker_list), returned)
        result: dict[str, Any] = json.loads(merged)
        path = summary_path or plan["summary_json"]
        try:
            csv = _core.write_summary(merged, path)
            written = True
        except Error as e:
            display.say(f"batch: error: cannot write the summary: {e}", True)
            written = False
        if result.get("interrupted"):
            display.say("batch: interrupted: run the same command again to resume", True)
        elif interrupted:
            display.say("batch: interrupted once every file was done: the summary is complete", True)
        elif stopped and result["counts"]["not_run"] > 0:
            display.say(f"batch: stopped at the first failure (keep_going is off): {result['counts']['not_run']} file(s) "
                        "not started", True)
        c = result["counts"]
        line = f"batch: {c['ok']} ok, {c['failed']} failed, {c['skipped']} up to date"
        if c["interrupted"] + c["not_run"] > 0:
            line += f", {c['interrupted'] + c['not_run']} not done"
        line += f" in {wall:.2f} s"
        if wall > 0 and c["ok"] > 0:
            line += f" ({c['ok'] / wall:.2f} files/s, {_human(result['bytes'] / wall)}/s)"
        if written:
            line += f"; summary: {path} and {os.path.basename(csv)}"
        display.say(line, c["failed"] > 0)
        if not written and result.get("exit_code", 0) == 0:
            result["exit_code"] = 1
    if interrupted:
        raise _Interrupted(result)
    return result


class _Interrupted(KeyboardInterrupt):
    """KeyboardInterrupt carrying the summary written for the interrupted batch."""

    def __init__(self, summary: dict[str, Any]) -> None:
        super().__init__("sigstream batch interrupted")
        self.summary = summary


# ---------------------------------------------------------------------------
# python -m sigstream.distributed (sigstream batch --scheduler)


def _on_sigterm(signum: int, frame: Any) -> None:
    # The first SIGINT/SIGTERM stops the batch; more of them (a second
    # Ctrl-C, scancel's signal to the whole group as well as the one the CLI
    # passes on) must not cut the summary short: ignored from now on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``sigstream batch --scheduler``'s work (sigstream/_batch_cli.py); returns the CLI's exit code."""
    from ._batch_cli import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
