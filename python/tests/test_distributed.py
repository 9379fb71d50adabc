"""Batches on a Dask cluster (SPEC §10, issue 26): sigstream.batch(client=...), its
exactly-once commits and its interrupts, and the driver's task rules.

Real processes throughout: a LocalCluster of two worker processes (CPU
workers: CI has no GPU), worker and driver processes killed with SIGKILL, the
commits counted and the kills and interrupts landing at known moments through
the commit shim (python/tests/dask_support.py). The CLI's `--scheduler` is in
test_distributed_cli.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import sigstream
from sigstream.distributed import auto_files_per_task
from dask_support import (FILES, Releaser, check_interrupted, clean_env, cli, cli_reference, cluster_client, commits,
                          committed_by, idle, inputs_of, kill_worker_when_stalled, outputs, per_file, preload,
                          stalled_pid, statuses_after_kill, temporaries, wait_for, write_wav)
from dask_support import client, job, shim  # noqa: F401 - fixtures, found by pytest by name

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
    # Tasks of several files by default (a thread's share at most: every thread gets one).
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
from dask_support import Releaser

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


def test_a_name_that_is_not_utf8_is_a_config_error_before_any_task(tmp_path: Path, job: Path, client: Any) -> None:
    """The plan reaches the workers as JSON (UTF-8 text): a Latin-1 name is refused, named, before any task
    (it was a RuntimeError '[json.exception.type_error.316] ...'); the batch in one process takes it."""
    folder = tmp_path / "latin1"
    folder.mkdir()
    write_wav(folder / "plain.wav", 1201, seed=3)
    write_wav(folder / "x.wav", 977, seed=4)
    os.rename(folder / "x.wav", os.path.join(os.fsencode(folder), b"caf\xe9.wav"))
    with pytest.raises(sigstream.ConfigError, match="caf\ufffd.wav\" is not a UTF-8 name"):
        sigstream.batch(job, [folder], out_dir=tmp_path / "out", client=client, quiet=True)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    alone = sigstream.batch(job, [folder], out_dir=tmp_path / "out", quiet=True)
    assert alone["counts"]["ok"] == 2


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
    # Light files (an estimate of 39 ms on one CPU thread): no task under the least the driver
    # keeps up with (9 files on 64 threads, 3 on 16), but for the last, and none over a thread's
    # share of the batch for that (4 on 64 threads); without the estimate they shrink to one
    # file, and heavy files (2 s each) still do.
    for threads, least, most_tasks in ((64, 4, 50), (16, 3, 45)):
        light = _TaskQueue([1000 + k % 7 for k in range(200)], None, 0.039 / 1006)
        sizes = []
        while light:
            sizes.append(len(light.take(threads)))
        assert sum(sizes) == 200 and min(sizes[:-1]) >= least and len(sizes) <= most_tasks, (threads, sizes)
    for spb in (0.0, 2.0 / 1006):
        q = _TaskQueue([1000 + k % 7 for k in range(200)], None, spb)
        sizes = []
        while q:
            sizes.append(len(q.take(64)))
        assert sum(sizes) == 200 and sizes[-1] == 1 and len(sizes) > 100, (spb, sizes)
    # Heavy files at the head of light ones (10 of 30 s on a thread, 2,000 of 30 ms): each heavy
    # file alone, the light ones still in tasks of the least.
    mixed = _TaskQueue([1000] * 10 + [1] * 2000, None, 30.0 / 1000)
    firsts = [mixed.take(64) for _ in range(10)]
    assert all(len(t) == 1 for t in firsts), firsts
    rest = []
    while mixed:
        rest.append(len(mixed.take(64)))
    assert sum(rest) == 2000 and min(rest[:-1]) >= 9, rest
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
    summary, killed = batch_killed_once(monkeypatch, shim, job, out, log, mark, "f03.csv", "commit",
                                        files_per_task=1)  # (a task of several would run it again alone)
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


def test_the_least_files_a_task_keeps_the_driver_up_with_the_threads() -> None:
    from sigstream.distributed import TASK_COST_S, least_files_per_task

    assert least_files_per_task(64, 0.039) == 9  # ceil(2 * 64 * 2.5 ms / 39 ms)
    assert least_files_per_task(16, 0.039) == 3
    assert least_files_per_task(64, 2.0) == 1  # heavy files: one a task may be
    assert least_files_per_task(64, 0.0) == 1  # unknown
    assert least_files_per_task(64, float("nan")) == 1
    assert least_files_per_task(64, 1e-9) == 64  # at most 64
    assert least_files_per_task(64, 5e-324) == 64  # (no overflow)
    assert least_files_per_task(0, TASK_COST_S) == 2  # no thread known yet: as one


def test_workers_without_this_sigstream_are_an_input_error_not_a_traceback() -> None:
    """What client.run raises where a worker cannot load the function it was sent (no sigstream there,
    or another version: Dask wraps the worker's ImportError or AttributeError in a plain Exception)
    becomes an InputError naming the install; any other failure is raised as it came."""
    import io

    from sigstream._dask_driver import _Display, _resolve_backend

    class Raising:
        def __init__(self, e: BaseException) -> None:
            self.e = e

        def run(self, *a: Any, **k: Any) -> Any:
            raise self.e

    display = _Display(1, 1, False, True, io.StringIO())
    for inner in (ModuleNotFoundError("No module named 'sigstream._dask_tasks'"),
                  AttributeError("Can't get attribute '_worker_check' on <module 'sigstream.distributed'>")):
        with pytest.raises(sigstream.InputError, match="need this driver's sigstream.*pip install"):
            _resolve_backend(Raising(Exception(inner)), "auto", display)  # type: ignore[arg-type]
        with pytest.raises(sigstream.InputError, match=type(inner).__name__):
            _resolve_backend(Raising(inner), "auto", display)  # type: ignore[arg-type]
    with pytest.raises(OSError, match="connection refused"):
        _resolve_backend(Raising(OSError("connection refused")), "auto", display)  # type: ignore[arg-type]


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
