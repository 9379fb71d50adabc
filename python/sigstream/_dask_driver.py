"""The driver of a Dask batch (sigstream.distributed's module docstring tells how a batch runs
there): the batch planned once, its files cut into tasks as they are sent (``_TaskQueue``), the
tasks' results taken as they end, the signal gate, the merged summary written.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, TextIO

from . import _core
from ._dask_queue import _TaskQueue
from ._dask_tasks import INSTALL_HINT, _entries_summary, _identity
from .errors import Error, InputError

if TYPE_CHECKING:  # distributed is the optional `dask` extra: imported where used
    from distributed import Client


def _stop_grace_s() -> float:
    """How long an interrupted driver waits for the tasks out: ``sigstream.distributed.STOP_GRACE_S``,
    the documented setting, read when it is needed (a user's or a test's change counts)."""
    from . import distributed

    return float(distributed.STOP_GRACE_S)


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


def _on_sigterm(signum: int, frame: Any) -> None:
    # The first SIGINT/SIGTERM stops the batch; more of them (a second
    # Ctrl-C, scancel's signal to the whole group as well as the one the CLI
    # passes on) must not cut the summary short: ignored from now on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _sweep_workers(client: Client, finished: list[dict[str, Any]]) -> int:
    """_sweep_on_worker on every worker, over the files whose tasks returned: only their tasks
    completed a dead writer's pending commit first (check_resume); a file whose task failed or
    never ran keeps such a record for the next run to complete. How many temporaries the workers
    that answered removed."""
    from .distributed import _sweep_on_worker

    targets = [str(p) for a in finished for p in (a.get("output"), a.get("stats_json"), a.get("stats_csv")) if p]
    if not targets:
        return 0
    try:
        swept = client.run(_sweep_on_worker, targets, on_error="return")
    except Exception:  # noqa: BLE001 - no worker left to ask: the next run's sweep removes them
        return 0
    return sum(v for v in swept.values() if isinstance(v, int))  # an exception where a worker failed


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


def _import_failure(e: BaseException) -> Optional[BaseException]:
    """The ImportError or AttributeError behind what ``client.run`` raised where a worker could not
    load the function it was sent (no sigstream there, or another version: Dask wraps the worker's
    error in a plain Exception), else None."""
    for x in (e, *(a for a in e.args if isinstance(a, BaseException)), e.__cause__):
        if isinstance(x, (ImportError, AttributeError)):
            return x
    return None


def _resolve_backend(client: Client, wanted: str, display: _Display) -> str:
    """'cpu' or 'cuda' for every task: one backend, so one config fingerprint and one resume record."""
    import sigstream
    from .distributed import _worker_check

    try:
        facts: dict[str, dict[str, Any]] = client.run(_worker_check)
    except Exception as e:
        why = _import_failure(e)
        if why is None:
            raise
        raise InputError(f"batch: the Dask workers cannot run sigstream {sigstream.__version__}'s worker check "
                         f"({type(why).__name__}: {why}): they need this driver's sigstream, installed where they "
                         f"run: {INSTALL_HINT}") from None

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
                                      f"device ({', '.join(missing[:3])}); use backend auto or cpu (--backend, backend=)")
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
          list_text: Optional[str] = None, list_origin: str = "", summary_path: Optional[str] = None) -> _Planned:
    """The batch's whole sorted list and every path it writes (config errors raise ConfigError here; so does a
    summary path that is a file the batch reads or writes)."""
    sets = [str(o) for o in overrides]
    if backend is not None:
        sets.append(f"execution.backend={backend}")
    plan = json.loads(_core.batch_plan(config_text, origin, sets, list(inputs), list_text, list_origin, out_dir,
                                       quiet, summary_path or "", config_path))
    keep = plan["keep_going"] if keep_going is None else bool(keep_going)
    return _Planned(plan, config_text, origin, config_path, sets, keep)


def _run_planned(client: Client, planned: _Planned, force: bool, verify: bool, quiet: bool, progress: bool,
                 summary_path: Optional[str], files_per_task: Optional[int],
                 stream: Optional[TextIO]) -> dict[str, Any]:
    from .distributed import _Job, _task

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
            grace = _stop_grace_s()
            display.finish()
            display.say("batch: interrupted: no file starts from now" +
                        (f"; waiting up to {grace:g} s for the {len(pending)} task(s) sent to finish the file "
                         "each runs" if pending else ""), True)
            deadline = time.monotonic() + grace
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
