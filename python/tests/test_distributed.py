"""Batches on a Dask cluster (SPEC §10, issue 26): sigstream.batch(client=...),
python -m sigstream.distributed and `sigstream batch --scheduler`.

Real processes throughout: a LocalCluster of two worker processes (CPU
workers: CI has no GPU), worker and driver processes killed with SIGKILL.
Commits are counted by an LD_PRELOAD shim (tests/faults/commit_shim.cpp,
compiled here) that logs every rename/link into place, and that stops one
worker at a chosen point (the open of an input, or the commit of a file's
statistics) until the test kills it: the kills land at known moments.

Over 600 lines (~910) and one file on purpose: every test here stands on the
same fixtures and helpers (the job and its inputs, the compiled shim, the
cluster, the kill-when-stalled thread, the commit counts and the CLI
reference); split by theme, they would move into a conftest of their own
that only these tests use.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import wave
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sigstream
from sigstream.distributed import auto_files_per_task
from conftest import REPO, cli_path

distributed = pytest.importorskip("distributed", reason="Dask is the `dask` extra: pip install '.[dask]'")

FILES = 8
STALL_TIMEOUT = 60.0

CONFIG = """\
version: 1
stages:
  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255}, method: direct}
  - {type: metrics, name: after_lp}
sink: {file: placeholder.wav, format: same}
stats: {csv: placeholder.csv}
execution: {backend: cpu, threads: 1}
batch: {out_dir: out}
"""


# ---------------------------------------------------------------------------
# Fixtures and helpers


def write_wav(path: Path, frames: int, seed: int, channels: int = 2, rate: int = 16000) -> None:
    x = np.random.default_rng(seed).uniform(-0.6, 0.6, (frames, channels))
    pcm = np.round(x * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """tmp_path/job.yaml and tmp_path/in/f00.wav ... f07.wav (sizes differ: a known dispatch order)."""
    (tmp_path / "in").mkdir()
    for i in range(FILES):
        write_wav(tmp_path / "in" / f"f{i:02d}.wav", 4000 + 1500 * i, seed=100 + i)
    cfg = tmp_path / "job.yaml"
    cfg.write_text(CONFIG)
    return cfg


def inputs_of(cfg: Path) -> list[str]:
    return [str(cfg.parent / "in")]


@pytest.fixture(scope="session")
def shim(tmp_path_factory: pytest.TempPathFactory) -> str:
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler for the commit shim")
    out = tmp_path_factory.mktemp("shim") / "commit_shim.so"
    subprocess.run([cxx, "-std=c++17", "-shared", "-fPIC", "-O1", "-o", str(out),
                    str(REPO / "tests" / "faults" / "commit_shim.cpp"), "-ldl"], check=True)
    return str(out)


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("SIGSTREAM_STALL")
           and k != "SIGSTREAM_COMMIT_LOG"}
    return env


def cli() -> str:
    path = cli_path()
    if path is None:
        pytest.skip("no sigstream CLI (SIGSTREAM_CLI or build/sigstream)")
    return path


def cli_reference(cfg: Path, out: Path, *extra: str) -> dict[str, Any]:
    """The plain CLI batch over the same inputs: the outputs and summary to match."""
    p = subprocess.run([cli(), "batch", str(cfg), *inputs_of(cfg), "--out-dir", str(out), "--no-progress", "-q",
                        *extra], env=clean_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    return json.loads((out / "batch_summary.json").read_text())


def outputs(out: Path) -> dict[str, bytes]:
    """Audio outputs by name (the statistics carry timings and paths)."""
    return {p.name: p.read_bytes() for p in sorted(out.rglob("*.wav"))}


def per_file(summary: dict[str, Any], out_dir: Path, status: bool = True) -> dict[str, tuple[Any, ...]]:
    """What a file's summary entry must agree on, whichever engine ran it (and whether it was skipped)."""
    rows = {}
    for f in summary["files"]:
        rel = None if f["output"] is None else os.path.relpath(f["output"], out_dir)
        rows[Path(f["file"]).name] = ((f["status"],) if status else ()) + (
            rel, f["frames"], f["output_frames"], f["channels"], f["sample_rate"], f["output_rms"], f["output_peak"],
            f["clipped_samples"])
    return rows


def statuses_after_kill(summary: dict[str, Any], log: Path, killed: int) -> dict[str, str]:
    """Each file's status, checked: "ok", or "skipped" for a file the killed worker had committed
    whose task Dask ran again (the one it died in, or a finished one whose result died with it
    before the driver gathered it)."""
    got = {Path(f["file"]).name: f["status"] for f in summary["files"]}
    for name, status in got.items():
        assert status in (("ok", "skipped") if killed in committed_by(log, name) else ("ok",)), (name, status)
    return got


def temporaries(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if ".sigstream-" in p.name)


def commits(log: Path, out: Path) -> Counter[str]:
    """Commits into place per final name under out (a link to a hidden temporary name is not one)."""
    counted: Counter[str] = Counter()
    if not log.exists():
        return counted
    root = str(out.resolve())
    for line in log.read_text().splitlines():
        _pid, _call, path = line.split("\t", 2)
        p = os.path.realpath(path)
        if p.startswith(root + os.sep) and not os.path.basename(p).startswith("."):
            counted[os.path.relpath(p, root)] += 1
    return counted


def committed_by(log: Path, name: str) -> set[int]:
    return {int(line.split("\t")[0]) for line in log.read_text().splitlines() if line.endswith("/" + name)}


def preload(monkeypatch: pytest.MonkeyPatch, shim: str, log: Path, stall: str = "", on: str = "commit",
            mark: Path | None = None) -> None:
    """The shim in every process this test starts from now on (Dask's workers are spawned with os.environ)."""
    monkeypatch.setenv("LD_PRELOAD", shim)
    monkeypatch.setenv("SIGSTREAM_COMMIT_LOG", str(log))
    if stall:
        assert mark is not None
        monkeypatch.setenv("SIGSTREAM_STALL_PATH", stall)
        monkeypatch.setenv("SIGSTREAM_STALL_ON", on)
        monkeypatch.setenv("SIGSTREAM_STALL_MARK", str(mark))


def cluster_client() -> tuple[Any, Any]:
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                       host="127.0.0.1", silence_logs=40)
    return cluster, distributed.Client(cluster)


@pytest.fixture
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Two worker processes of one thread each, started after the test's environment is set."""
    cluster, c = cluster_client()
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def wait_for(predicate: Any, what: str, timeout: float = STALL_TIMEOUT) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def stalled_pid(mark: Path) -> int:
    wait_for(lambda: mark.exists() and mark.read_text().endswith("\n"), f"a worker to stop at {mark}")
    return int(mark.read_text())


def kill_worker_when_stalled(client: Any, mark: Path, killed: list[int]) -> threading.Thread:
    """SIGKILLs the worker the shim stopped (checked to be one of the cluster's workers)."""

    def run() -> None:
        pid = stalled_pid(mark)
        assert pid in client.run(os.getpid).values(), "the stopped process is not a Dask worker"
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def idle(client: Any, twice: bool = False) -> bool:
    """No worker is executing a task (a released task's thread may still run); twice: and 0.3 s later."""
    try:
        counts = client.run(lambda dask_worker: dask_worker.state.executing_count)
    except OSError:
        return False
    if not all(n == 0 for n in counts.values()):
        return False
    if twice:
        time.sleep(0.3)
        return idle(client)
    return True


# ---------------------------------------------------------------------------
# Tests


def test_outputs_and_summary_equal_the_cli_batch(tmp_path: Path, job: Path, client: Any) -> None:
    (tmp_path / "in" / "zz_bad.wav").write_bytes(b"RIFF but not a wav file")
    ref = cli_reference(job, tmp_path / "ref")
    summary = sigstream.batch(job, inputs_of(job), out_dir=tmp_path / "dask", client=client, quiet=True)

    assert outputs(tmp_path / "dask") == outputs(tmp_path / "ref")
    assert len(outputs(tmp_path / "ref")) == FILES
    assert per_file(summary, tmp_path / "dask") == per_file(ref, tmp_path / "ref")
    assert summary["counts"] == ref["counts"] == {"total": FILES + 1, "ok": FILES, "skipped": 0, "failed": 1,
                                                  "interrupted": 0, "not_run": 0}
    assert summary["exit_code"] == ref["exit_code"] == 1
    bad = [f for f in summary["files"] if f["status"] == "failed"]
    assert len(bad) == 1 and bad[0]["file"] == str(tmp_path / "in" / "zz_bad.wav") and "zz_bad.wav" in bad[0]["error"]
    # The summary files: the returned dict, and a CSV row per file, written by the driver.
    written = json.loads((tmp_path / "dask" / "batch_summary.json").read_text())
    assert written == summary
    assert len((tmp_path / "dask" / "batch_summary.csv").read_text().splitlines()) == FILES + 2
    assert summary["config_fingerprint"] == ref["config_fingerprint"]
    # Tasks of several files by default, shrinking to one.
    assert 1 < summary["tasks"] < FILES + 1
    assert {w["address"] for w in summary["workers"]} <= set(client.nthreads())
    assert summary["wall_s"] > 0 and summary["files_per_s"] == pytest.approx(FILES / summary["wall_s"])

    # Resume: everything done is skipped; the bad file fails again.
    again = sigstream.batch(job, inputs_of(job), out_dir=tmp_path / "dask", client=client, quiet=True)
    assert again["counts"]["skipped"] == FILES and again["counts"]["failed"] == 1 and again["counts"]["ok"] == 0
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "ref")


def test_stop_on_error_and_tasks_of_several_files(tmp_path: Path, job: Path, client: Any) -> None:
    for i in range(12):
        write_wav(tmp_path / "in" / f"g{i:02d}.wav", 800, seed=300 + i)
    # The largest input, so handed out first: the batch stops with most files not started.
    (tmp_path / "in" / "zz_bad.wav").write_bytes(b"RIFF" + bytes(300_000))
    stop = sigstream.batch(job, inputs_of(job), out_dir=tmp_path / "stop", client=client, quiet=True,
                           keep_going=False)
    c = stop["counts"]
    assert c["total"] == FILES + 13 and c["failed"] == 1 and c["not_run"] >= 1
    assert c["ok"] + c["not_run"] == FILES + 12
    assert stop["stopped_at_failure"] is True and stop["exit_code"] == 1
    for f in stop["files"]:
        if f["status"] == "not_run":
            assert f["output"] is None and f["stats"] is None and f["error"] is None
            assert not (tmp_path / "stop" / Path(f["file"]).name).exists()

    # One task of every file: the task too stops at its first failed file (the largest, run first),
    # as the CLI's batch does; it had run every other file of its task.
    one = sigstream.batch(job, inputs_of(job), out_dir=tmp_path / "one", client=client, quiet=True,
                          keep_going=False, files_per_task=FILES + 13)
    c = one["counts"]
    assert c["failed"] == 1 and c["not_run"] >= 1 and c["ok"] + c["not_run"] == FILES + 12, c
    assert one["stopped_at_failure"] is True and one["exit_code"] == 1

    ref = cli_reference(job, tmp_path / "ref")
    grouped = sigstream.batch(job, inputs_of(job), out_dir=tmp_path / "grouped", client=client, quiet=True,
                              files_per_task=8)
    assert grouped["tasks"] == 3
    assert per_file(grouped, tmp_path / "grouped") == per_file(ref, tmp_path / "ref")
    assert outputs(tmp_path / "grouped") == outputs(tmp_path / "ref")


def test_worker_killed_mid_file_every_output_committed_once(tmp_path: Path, job: Path, shim: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ref = cli_reference(job, tmp_path / "ref")
    log, mark = tmp_path / "commits.log", tmp_path / "stall.pid"
    preload(monkeypatch, shim, log, stall="f03.wav", on="open", mark=mark)
    cluster, client = cluster_client()
    try:
        killed: list[int] = []
        killer = kill_worker_when_stalled(client, mark, killed)
        summary = sigstream.batch(job, inputs_of(job), out_dir=tmp_path / "dask", client=client, quiet=True)
        killer.join(5)
    finally:
        client.close()
        cluster.close()
    assert len(killed) == 1, "no worker was stopped at f03.wav"
    got = statuses_after_kill(summary, log, killed[0])
    assert got["f03.wav"] == "ok" and summary["exit_code"] == 0
    assert per_file(summary, tmp_path / "dask", status=False) == per_file(ref, tmp_path / "ref", status=False)
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "ref")
    counted = commits(log, tmp_path / "dask")
    every = {f"f{i:02d}{ext}" for i in range(FILES) for ext in (".wav", ".json", ".csv")}
    assert {k: v for k, v in counted.items() if k in every} == {name: 1 for name in every}
    assert (tmp_path / "dask" / "batch_summary.json").exists() and (tmp_path / "dask" / "batch_summary.csv").exists()
    # The killed worker had not committed f03: another process did, once.
    assert killed[0] not in committed_by(log, "f03.wav")
    assert temporaries(tmp_path / "dask") == []


@pytest.mark.parametrize("force", [False, True], ids=["resume", "force"])
def test_retry_of_a_committed_file_is_a_skip(tmp_path: Path, job: Path, shim: str, monkeypatch: pytest.MonkeyPatch,
                                             force: bool) -> None:
    """The worker dies right after committing f03's statistics (its last output), before its task
    returns: Dask runs the task again, which must find f03 done. With force, the other files are
    redone (they were up to date before the batch) and f03 is still not done twice."""
    out = tmp_path / "dask"
    ref = cli_reference(job, tmp_path / "ref")
    if force:
        cli_reference(job, out)  # up to date before the forced batch
    log, mark = tmp_path / "commits.log", tmp_path / "stall.pid"
    preload(monkeypatch, shim, log, stall="f03.json", on="commit", mark=mark)
    cluster, client = cluster_client()
    try:
        killed: list[int] = []
        killer = kill_worker_when_stalled(client, mark, killed)
        summary = sigstream.batch(job, inputs_of(job), out_dir=out, client=client, quiet=True, force=force)
        killer.join(5)
    finally:
        client.close()
        cluster.close()
    assert len(killed) == 1 and committed_by(log, "f03.json") == {killed[0]}
    got = statuses_after_kill(summary, log, killed[0])
    assert got["f03.wav"] == "skipped" and summary["exit_code"] == 0
    counted = commits(log, out)
    every = {f"f{i:02d}{ext}" for i in range(FILES) for ext in (".wav", ".json", ".csv")}
    assert {k: v for k, v in counted.items() if k in every} == {name: 1 for name in every}
    assert outputs(out) == outputs(tmp_path / "ref")
    assert per_file(summary, out, status=False) == per_file(ref, tmp_path / "ref", status=False)
    assert temporaries(out) == []


def test_each_worker_sweeps_once_at_the_end_not_each_task(tmp_path: Path, job: Path, shim: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A dead writer of this host left a temporary beside one of the batch's outputs (what a worker
    killed mid-file leaves where there is no O_TMPFILE): once the tasks are done each worker removes
    such files, and a live writer's and another host's stay. The output folder is listed once a
    worker (the commit shim's listing log), not once a task, as when each task swept it."""
    out = tmp_path / "dask"
    out.mkdir()
    ref = cli_reference(job, tmp_path / "ref")
    gone = subprocess.Popen(["true"])
    gone.wait()
    tag = sigstream._core.temp_host_tag()
    dead = out / f".f03.wav.sigstream-{tag}-{gone.pid}-Ab1234"
    live = out / f".f05.csv.sigstream-{tag}-{os.getpid()}-Cd5678"
    other = out / ".f04.json.sigstream-elsewhere-4242-Ef9012"
    for t in (dead, live, other):
        t.write_text("left behind")
    listed = tmp_path / "listed.log"
    preload(monkeypatch, shim, tmp_path / "commits.log")
    monkeypatch.setenv("SIGSTREAM_LIST_LOG", str(listed))
    cluster, client = cluster_client()
    try:
        summary = sigstream.batch(job, inputs_of(job), out_dir=out, client=client, quiet=True)
    finally:
        client.close()
        cluster.close()
    assert summary["exit_code"] == 0 and summary["counts"]["ok"] == FILES
    assert outputs(out) == outputs(tmp_path / "ref")
    assert per_file(summary, out, status=False) == per_file(ref, tmp_path / "ref", status=False)
    assert not dead.exists(), "a dead writer's temporary is removed"
    assert live.exists() and other.exists(), "a live writer's and another host's stay"
    lines = [line.rstrip("\n").split("\t") for line in listed.read_text().splitlines()] if listed.exists() else []
    of_out = [line for line in lines if len(line) == 3 and os.path.realpath(line[2]) == os.path.realpath(out)]
    assert 1 <= len(of_out) <= 2, f"{len(of_out)} listings of the output folder by 2 workers for {FILES} files"


def batch_killed_once(monkeypatch: pytest.MonkeyPatch, shim: str, job: Path, out: Path, log: Path, mark: Path,
                      stall: str, on: str, **kw: Any) -> tuple[dict[str, Any], list[int]]:
    """The batch on a fresh 2-worker cluster that Dask allows no retry (allowed-failures 0), the
    worker the shim stops at `stall` SIGKILLed once; the summary and the killed pids."""
    import dask

    preload(monkeypatch, shim, log, stall=stall, on=on, mark=mark)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster, client = cluster_client()
        try:
            killed: list[int] = []
            killer = kill_worker_when_stalled(client, mark, killed)
            summary = sigstream.batch(job, inputs_of(job), out_dir=out, client=client, quiet=True, **kw)
            killer.join(5)
        finally:
            client.close()
            cluster.close()
    return summary, killed


def test_a_task_of_several_files_whose_worker_died_runs_them_again_one_a_task(tmp_path: Path, job: Path, shim: str,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """One task holds every file, and its worker is killed at f03 with Dask allowing no retry: the
    task's files run again one a task (had they become failed entries, the task's one bad file would
    fail every file beside it, on every run). Every file is done, each output committed once. (A
    file killing its worker on every try then fails alone; not killed twice here, as tasks queued
    on a killed worker die with it under allowed-failures 0.)"""
    out = tmp_path / "dask"
    cli_reference(job, tmp_path / "ref")
    log, mark = tmp_path / "commits.log", tmp_path / "stall.pid"
    summary, killed = batch_killed_once(monkeypatch, shim, job, out, log, mark, "f03.wav", "open",
                                        files_per_task=FILES)
    assert len(killed) == 1, killed
    got = statuses_after_kill(summary, log, killed[0])
    assert got["f03.wav"] == "ok" and summary["exit_code"] == 0, got
    assert summary["tasks"] == FILES, summary["tasks"]  # the summaries merged: the files one a task
    assert outputs(out) == outputs(tmp_path / "ref")
    counted = commits(log, out)
    every = {f"f{i:02d}{ext}" for i in range(FILES) for ext in (".wav", ".json", ".csv")}
    assert {k: v for k, v in counted.items() if k in every} == {name: 1 for name in every}
    assert temporaries(out) == []


class Releaser(threading.Thread):
    """Writes `go` (the shim's STALL_UNTIL: the held worker goes on) once every worker has the
    running batch's stop, or at the latest after STALL_TIMEOUT (a held worker never stays held);
    check() re-raises what went wrong in it."""

    def __init__(self, client: Any, go: Path) -> None:
        super().__init__(daemon=True)
        self.client, self.go, self.error = client, go, None
        self.start()

    def stopped(self) -> bool:
        keys = [str(k) for ks in self.client.processing().values() for k in ks]
        ids = {k.split("-")[2] for k in keys if k.startswith("sigstream-batch-")}
        if len(ids) != 1:
            return False
        time.sleep(0.2)  # not a broadcast to the workers every 20 ms
        return all(self.client.run(lambda b: sigstream._core.batch_stopped(b), ids.pop()).values())

    def run(self) -> None:
        try:
            wait_for(self.stopped, "every worker to have the batch's stop")
        except BaseException as e:  # noqa: BLE001 - re-raised by check()
            self.error = e
        finally:
            self.go.write_text("")

    def check(self) -> None:
        self.join(timeout=STALL_TIMEOUT)
        if self.error is not None:
            raise self.error


def check_interrupted(summary: dict[str, Any], out: Path, log: Path) -> dict[str, str]:
    """The summary of a batch interrupted while f02 (second of the task f03..f00) was held: f03 and
    f02 ok, f01 and f00 never started, and nothing committed once the batch had returned (while its
    workers still run)."""
    got = {Path(f["file"]).name: f["status"] for f in summary["files"]}
    assert summary["interrupted"] is True and summary["exit_code"] == 130, summary["counts"]
    assert (got["f03.wav"], got["f02.wav"], got["f01.wav"], got["f00.wav"]) == ("ok", "ok", "not_run", "not_run"), got
    assert set(got.values()) <= {"ok", "not_run"}, got  # the other task finished or stopped likewise
    lines = log.read_text().count("\n")
    time.sleep(1.0)
    assert log.read_text().count("\n") == lines, "a worker committed after the batch returned"
    for name, status in got.items():
        assert (out / name).exists() == (status == "ok"), (name, status)
    assert temporaries(out) == []
    return got


def test_an_interrupted_driver_has_its_tasks_stop_and_reports_what_they_finished(tmp_path: Path, job: Path,
                                                                                 shim: str,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C at the driver while a task of four files runs its second (held at f02 by the shim):
    the workers' tasks of the batch hand out no further file, the running one finishes its file, and
    the summary says what happened: f03 and f02 ok, f01 and f00 not_run (before, every file of a task
    still out was 'interrupted', finished or not, and the task went on committing after the driver
    had left). Nothing is committed after the batch returned; a re-run finishes the rest."""
    out, mark, go, log = tmp_path / "dask", tmp_path / "stall.pid", tmp_path / "go", tmp_path / "commits.log"
    preload(monkeypatch, shim, log, "f02.wav", "open", mark)
    monkeypatch.setenv("SIGSTREAM_STALL_UNTIL", str(go))
    monkeypatch.setattr(sigstream.distributed, "STOP_GRACE_S", 120.0)  # a slow CI machine: not the point here
    cluster, client = cluster_client()
    try:
        def interrupt() -> None:
            stalled_pid(mark)
            os.kill(os.getpid(), signal.SIGINT)  # the driver: this process's main thread

        threading.Thread(target=interrupt, daemon=True).start()
        releaser = Releaser(client, go)
        with pytest.raises(KeyboardInterrupt) as stopped:
            sigstream.batch(job, inputs_of(job), out_dir=out, client=client, quiet=True, files_per_task=4)
        releaser.check()
        summary = getattr(stopped.value, "summary")
        assert summary == json.loads((out / "batch_summary.json").read_text())
        got = check_interrupted(summary, out, log)
        again = sigstream.batch(job, inputs_of(job), out_dir=out, client=client, quiet=True)
        assert again["counts"]["skipped"] == list(got.values()).count("ok")
        assert again["counts"]["ok"] == list(got.values()).count("not_run") and again["exit_code"] == 0
    finally:
        go.write_text("")
        client.close()
        cluster.close()


INTERRUPTED_SCRIPT = """
import json, sys, threading, time
from pathlib import Path
import sigstream, sigstream.distributed as sd
from distributed import Client
sys.path.insert(0, sys.argv[4])
from test_distributed import Releaser

if __name__ == "__main__":
    job, out, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    sd.STOP_GRACE_S = 60.0
    with sd.local_cluster(gpus=0, cpu_workers=2, files_per_gpu=1) as cluster, Client(cluster) as client:
        releaser = Releaser(client, go)
        try:
            sigstream.batch(job, [str(Path(job).parent / "in")], out_dir=out, client=client, quiet=True,
                            files_per_task=4)
        except KeyboardInterrupt as e:
            releaser.check()
            lines = Path(sys.argv[5]).read_text().count("\\n")
            time.sleep(1.0)  # the workers still run: none commits after the batch returned
            assert Path(sys.argv[5]).read_text().count("\\n") == lines, "a commit after the batch returned"
            print(json.dumps(getattr(e, "summary", None)))
        finally:
            go.write_text("")
"""


def test_ctrl_c_in_the_terminal_of_a_local_cluster_stops_the_batch_not_its_workers(tmp_path: Path, job: Path,
                                                                                   shim: str) -> None:
    """A terminal's Ctrl-C reaches its whole process group: the driver and local_cluster's workers.
    The workers ignore it (a worker process ended by it lost the file it ran, and the driver waited
    for nothing), so the batch stops as when the driver alone is signalled."""
    out, mark, go, log = tmp_path / "dask", tmp_path / "stall.pid", tmp_path / "go", tmp_path / "commits.log"
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_SCRIPT)
    env = {**clean_env(), "LD_PRELOAD": shim, "SIGSTREAM_COMMIT_LOG": str(log), "SIGSTREAM_STALL_PATH": "f02.wav",
           "SIGSTREAM_STALL_ON": "open", "SIGSTREAM_STALL_MARK": str(mark), "SIGSTREAM_STALL_UNTIL": str(go)}
    proc = subprocess.Popen([sys.executable, str(script), str(job), str(out), str(go), str(Path(__file__).parent),
                             str(log)],
                            env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stalled_pid(mark)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        go.write_text("")
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, stderr[-2000:]
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary is not None, stderr[-2000:]
    check_interrupted(summary, out, log)


def test_an_out_dir_that_is_a_file_is_a_config_error_before_any_task(tmp_path: Path, job: Path, client: Any) -> None:
    (tmp_path / "afile").write_text("not a folder")
    for out in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        with pytest.raises(sigstream.ConfigError, match="is a file, not a folder"):
            sigstream.batch(job, inputs_of(job), out_dir=out, client=client, quiet=True)
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_tasks_are_cut_by_files_and_bytes_left_and_a_failed_tasks_files_come_back_alone() -> None:
    from sigstream.distributed import _TaskQueue

    # Equal files, 2 threads: a thread's share of what is left, shrinking to 1.
    q = _TaskQueue([10] * 40, None)
    sizes = []
    while q:
        sizes.append(len(q.take(2)))
    assert sum(sizes) == 40 and sizes[0] == 20 and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True), sizes
    # A long file goes alone; the short ones after it share tasks, none over a thread's share of
    # the bytes left.
    q = _TaskQueue([1000] + [1] * 100, None)
    first = q.take(4)
    assert first == [0]
    second = q.take(4)
    assert len(second) == 25
    # A fixed count; a failed task's files come back one a task, first; left() is what was never sent.
    q = _TaskQueue([5, 4, 3, 2, 1], 2)
    assert q.take(8) == [0, 1]
    q.again([0, 1])
    assert q.take(8) == [0] and q.take(8) == [1] and q.take(8) == [2, 3]
    assert q.left() == [4]


def test_a_failed_tasks_pending_commit_is_kept_for_the_next_run(tmp_path: Path, job: Path, shim: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A task's only try is killed between its file's commits (the audio and the CSV committed, the
    statistics JSON still a hidden record): the file is a failed entry, and the workers' sweep at
    the end leaves that record, since no task of this batch completed it. The next run completes
    it: each output is committed once over both runs."""
    out = tmp_path / "dask"
    log, mark = tmp_path / "commits.log", tmp_path / "stall.pid"
    summary, killed = batch_killed_once(monkeypatch, shim, job, out, log, mark, "f03.csv", "commit")
    assert len(killed) == 1 and committed_by(log, "f03.wav") == {killed[0]}
    got = {Path(f["file"]).name: f["status"] for f in summary["files"]}
    assert got["f03.wav"] == "failed" and summary["exit_code"] == 1, got
    assert [p for p in out.iterdir() if p.name.startswith(".f03.json.sigstream-")], "the pending record was swept"

    env = clean_env()
    env["LD_PRELOAD"] = shim
    env["SIGSTREAM_COMMIT_LOG"] = str(log)
    again = subprocess.run([cli(), "batch", str(job), *inputs_of(job), "--out-dir", str(out), "--no-progress"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "completed the commits of 1 file(s)" in again.stderr, again.stderr
    counted = commits(log, out)
    every = {f"f{i:02d}{ext}" for i in range(FILES) for ext in (".wav", ".json", ".csv")}
    assert {k: v for k, v in counted.items() if k in every} == {name: 1 for name in every}
    assert temporaries(out) == []


def test_driver_killed_then_rerun_skips_finished_files(tmp_path: Path, job: Path, shim: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "dask"
    cli_reference(job, tmp_path / "ref")
    log, mark = tmp_path / "commits.log", tmp_path / "stall.pid"
    # f05 keeps one worker busy for good: the driver dies with files done and a file not done.
    preload(monkeypatch, shim, log, stall="f05.wav", on="open", mark=mark)
    cluster, client = cluster_client()
    try:
        address = cluster.scheduler_address
        driver_env = clean_env()
        cmd = [sys.executable, "-m", "sigstream.distributed", str(job), *inputs_of(job), "--scheduler", address,
               "--out-dir", str(out), "--no-progress"]
        driver = subprocess.Popen(cmd, env=driver_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            stuck = stalled_pid(mark)
            wait_for(lambda: len(list(out.glob("*.json"))) >= 2, "two files done")
            driver.send_signal(signal.SIGKILL)
        finally:
            driver.communicate(timeout=30)
        assert driver.returncode == -signal.SIGKILL
        assert not (out / "batch_summary.json").exists()
        os.kill(stuck, signal.SIGKILL)  # the task it held was released with the driver's client
        wait_for(lambda: idle(client, twice=True), "the workers to finish the released tasks")
        finished = {p.stem for p in out.glob("f*.json")}
        assert 2 <= len(finished) < FILES and "f05" not in finished

        again = subprocess.run(cmd, env=driver_env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    finally:
        client.close()
        cluster.close()
    assert again.returncode == 0, again.stderr
    summary = json.loads((out / "batch_summary.json").read_text())
    statuses = {Path(f["file"]).stem: f["status"] for f in summary["files"]}
    assert statuses == {f"f{i:02d}": "skipped" if f"f{i:02d}" in finished else "ok" for i in range(FILES)}
    assert f"{len(finished)} up to date" in again.stderr
    counted = commits(log, out)
    every = {f"f{i:02d}{ext}" for i in range(FILES) for ext in (".wav", ".json", ".csv")}
    assert {k: v for k, v in counted.items() if k in every} == {name: 1 for name in every}
    assert outputs(out) == outputs(tmp_path / "ref")
    assert temporaries(out) == []


def test_cli_scheduler_local(tmp_path: Path, job: Path) -> None:
    taps = ("--set", "stages.0.design.taps=127")  # not the config's: the driver must get --set
    ref = cli_reference(job, tmp_path / "ref", *taps)
    env = {**clean_env(), "SIGSTREAM_PYTHON": sys.executable}
    from sigstream.distributed import _visible_gpus

    gpus = len(_visible_gpus())  # a GPU host gets one worker per GPU, CPU-only hosts two CPU workers
    p = subprocess.run([cli(), "batch", str(job), *inputs_of(job), "--scheduler", "local" if gpus else "local:2",
                        "--out-dir", str(tmp_path / "dask"), *taps], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    summary = json.loads((tmp_path / "dask" / "batch_summary.json").read_text())
    assert per_file(summary, tmp_path / "dask") == per_file(ref, tmp_path / "ref")
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "ref")
    # A worker process each; a log, no progress line off a terminal.
    assert len({w["address"] for w in summary["workers"]}) == (gpus or 2)
    assert f"batch: {FILES} ok, 0 failed, 0 up to date" in p.stderr
    assert "\r" not in p.stderr

    # Usage errors are the CLI's exit 2.
    bad = subprocess.run([cli(), "batch", str(job), "--scheduler", "local:two"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "local:N" in bad.stderr
    missing = subprocess.run([cli(), "batch", str(job), "--scheduler", str(tmp_path / "none.json")], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no such scheduler file" in missing.stderr
    cfg = subprocess.run([cli(), "batch", str(job), "--scheduler", "local:1", "--set", "stages.0.mdoe=same"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert cfg.returncode == 2 and "did you mean 'mode'" in cfg.stderr


def test_cli_scheduler_file_of_a_dask_scheduler_and_worker(tmp_path: Path, job: Path) -> None:
    """`dask scheduler --scheduler-file` and `dask worker` as a user starts them, then --scheduler FILE.json."""
    ref = cli_reference(job, tmp_path / "ref")
    sched_file = tmp_path / "scheduler.json"
    env = {**clean_env(), "SIGSTREAM_PYTHON": sys.executable}
    started = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
                                 str(sched_file), "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        wait_for(sched_file.exists, "the scheduler file")
        started.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                         str(sched_file), "--nthreads", "2", "--no-dashboard", "--host",
                                         "127.0.0.1"], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        p = subprocess.run([cli(), "batch", str(job), *inputs_of(job), "--scheduler", str(sched_file), "--out-dir",
                            str(tmp_path / "dask"), "--quiet"], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""  # --quiet
    summary = json.loads((tmp_path / "dask" / "batch_summary.json").read_text())
    assert per_file(summary, tmp_path / "dask") == per_file(ref, tmp_path / "ref")
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "ref")
    assert len(summary["workers"]) == 1 and summary["workers"][0]["threads"] == 2


def test_cli_scheduler_sigterm_is_forwarded_and_the_child_reaped(tmp_path: Path, job: Path, shim: str) -> None:
    log, mark, errors = tmp_path / "commits.log", tmp_path / "stall.pid", tmp_path / "stderr.txt"
    env = {**clean_env(), "SIGSTREAM_PYTHON": sys.executable, "LD_PRELOAD": shim, "SIGSTREAM_COMMIT_LOG": str(log),
           "SIGSTREAM_STALL_PATH": "f02.wav", "SIGSTREAM_STALL_ON": "open", "SIGSTREAM_STALL_MARK": str(mark)}
    family: list[int] = []
    with open(errors, "w") as err_file:
        # Its own session: whatever happens, the test can end the whole tree (killpg below).
        proc = subprocess.Popen([cli(), "batch", str(job), *inputs_of(job), "--scheduler", "local:1", "--out-dir",
                                 str(tmp_path / "dask")], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err_file, start_new_session=True)
        try:
            stalled_pid(mark)
            family = descendants(proc.pid)
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None or any(alive(p) for p in family):
                for p in [proc.pid, *family]:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                proc.wait()
    err = errors.read_text()
    assert len(family) >= 2, f"expected the Python driver and its worker processes under the CLI: {family}"
    assert proc.returncode == 130, err
    summary = json.loads((tmp_path / "dask" / "batch_summary.json").read_text())
    assert summary["interrupted"] is True and summary["exit_code"] == 130
    status = {Path(f["file"]).name: f["status"] for f in summary["files"]}
    assert status["f02.wav"] == "interrupted"
    assert "run the same command again to resume" in err
    # The driver was reaped by the CLI, and the cluster it started is gone with it.
    wait_for(lambda: not any(alive(p) for p in family), "the driver and its workers to exit", timeout=30)
    assert temporaries(tmp_path / "dask") == []


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def python_without(tmp_path: Path, keep: list[str]) -> Path:
    """A real Python (this one, without its site-packages: -S) that sees only the packages in keep."""
    site = tmp_path / "site"
    site.mkdir()
    for name in keep:
        mod = __import__(name)
        assert mod.__file__ is not None
        src = Path(mod.__file__).parent
        (site / name).symlink_to(src)
        libs = src.parent / f"{name}.libs"
        if libs.is_dir():
            (site / libs.name).symlink_to(libs)
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_cli_scheduler_without_dask_or_sigstream_exits_2(tmp_path: Path, job: Path) -> None:
    (tmp_path / "a").mkdir()
    no_dask = python_without(tmp_path / "a", ["sigstream", "numpy"])
    # An honest Python for the case: sigstream imports there, distributed does not.
    assert subprocess.run([str(no_dask), "-c", "import sigstream.distributed"]).returncode == 0
    check = subprocess.run([str(no_dask), "-c", "import distributed"], capture_output=True, text=True)
    assert check.returncode != 0 and "No module named 'distributed'" in check.stderr
    p = subprocess.run([cli(), "batch", str(job), "--scheduler", "local"],
                       env={**clean_env(), "SIGSTREAM_PYTHON": str(no_dask)}, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2, p.stderr
    assert "pip install '.[dask]'" in p.stderr and "distributed" in p.stderr

    (tmp_path / "b").mkdir()
    no_sigstream = python_without(tmp_path / "b", ["numpy"])
    p = subprocess.run([cli(), "batch", str(job), "--scheduler", "local"],
                       env={**clean_env(), "SIGSTREAM_PYTHON": str(no_sigstream)}, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2, p.stderr
    assert "pip install '.[dask]'" in p.stderr and "No module named 'sigstream'" in p.stderr


def test_a_scheduler_that_is_neither_local_a_file_nor_an_address_is_a_usage_error(
        tmp_path: Path, job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sigstream.distributed import main

    assert main(["--scheduler", "locale", "--out-dir", str(tmp_path / "o"), "--", str(job)]) == 2
    assert "did you mean 'local'?" in capsys.readouterr().err
    assert main(["--scheduler", "myhost", "--out-dir", str(tmp_path / "o"), "--", str(job)]) == 2
    err = capsys.readouterr().err
    assert "tcp://HOST:8786" in err and "did you mean" not in err
    assert not (tmp_path / "o").exists()


def test_local_cluster_workers_ignore_sigint_and_run_the_users_preloads(tmp_path: Path) -> None:
    """local_cluster preloads its SIGINT-ignoring setup before the user's preloads, whose per-preload
    arguments (a list each) still line up."""
    ran = tmp_path / "ran"
    code = f"def dask_setup(worker):\n    open({str(ran)!r}, 'w').write('yes')\n"
    with sigstream.distributed.local_cluster(gpus=0, cpu_workers=1, files_per_gpu=1,
                                             worker_options={"preload": [code], "preload_argv": [["--x"]]}) as c, \
            distributed.Client(c) as client:
        assert list(client.run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN).values()) == [True]
    assert ran.read_text() == "yes"


def test_local_cluster_gives_cpu_workers_without_a_gpu() -> None:
    if sigstream.cuda_available():
        pytest.skip("this host has a GPU: local_cluster gives GPU workers")
    from sigstream.distributed import local_cluster

    with local_cluster(gpus=2, files_per_gpu=3) as cluster, distributed.Client(cluster) as c:
        c.wait_for_workers(2)
        assert sorted(c.nthreads().values()) == [3, 3]
        envs = c.run(lambda: (os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("SIGSTREAM_FILE_THREADS"),
                              os.getpid()))
        assert {e[0] for e in envs.values()} == {""}
        assert len({e[2] for e in envs.values()} | {os.getpid()}) == 3  # two worker processes, not this one
    with pytest.raises(ValueError, match="gpus must be"):
        local_cluster(gpus=-1)
    with pytest.raises(ValueError, match="files_per_gpu"):
        local_cluster(files_per_gpu=0)


def test_auto_files_per_task_is_a_threads_share_from_1_to_64() -> None:
    assert auto_files_per_task(13, 2) == 7  # ceil(13 / 2)
    assert auto_files_per_task(400, 2) == 64  # at most 64
    assert auto_files_per_task(800, 64) == 13
    assert auto_files_per_task(3, 16) == 1  # at least 1
    assert auto_files_per_task(0, 4) == 1
    assert auto_files_per_task(10, 0) == 10  # no thread known yet: as one


def test_auto_files_per_gpu_is_the_cores_over_the_gpus_from_2_to_16() -> None:
    """`--scheduler local` keeps as many files in flight a GPU as the CLI's batch (pipeline/batch.hpp)."""
    from sigstream.distributed import auto_files_per_gpu

    assert auto_files_per_gpu(16, 1) == 16
    assert auto_files_per_gpu(64, 1) == 16  # at most 16
    assert auto_files_per_gpu(64, 4) == 16
    assert auto_files_per_gpu(64, 8) == 8
    assert auto_files_per_gpu(12, 2) == 6
    assert auto_files_per_gpu(5, 2) == 3  # rounded up, as the CLI's
    assert auto_files_per_gpu(2, 4) == 2
    assert auto_files_per_gpu(1, 1) == 2
