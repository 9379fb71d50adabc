"""`sigstream batch --scheduler` and `python -m sigstream.distributed` (SPEC §10, issue 26): the
CLI hands a batch to Python's driver on a local cluster, a scheduler file or an address; its
signals are passed on and its child reaped; a Python without Dask or sigstream is exit 2; and
local_cluster's workers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

import sigstream
from dask_support import (FILES, clean_env, cli, cli_reference, distributed, inputs_of, outputs, per_file,
                          stalled_pid, temporaries, wait_for)
from dask_support import job, shim  # noqa: F401 - fixtures, found by pytest by name


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
    missing = subprocess.run([cli(), "batch", str(job), "--scheduler", str(tmp_path / "nowhere" / "none.json")],
                             env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
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
        # As the README's block runs them: the worker and the batch at once, before the scheduler has
        # written its file (both wait for it).
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


def stopped_while_a_file_stalls(tmp_path: Path, job: Path, shim: str, stop: Callable[[subprocess.Popen[bytes]], None],
                                python: str = sys.executable) -> tuple[int, list[int], str]:
    """Runs `sigstream batch --scheduler local:1` until a worker stalls in f02.wav (the shim), calls
    `stop` on the CLI, waits for it and for its Python driver and workers to end (killing what is left
    at the end, whatever happened); returns the CLI's exit code, its descendants and its stderr."""
    mark, errors = tmp_path / "stall.pid", tmp_path / "stderr.txt"
    env = {**clean_env(), "SIGSTREAM_PYTHON": python, "LD_PRELOAD": shim,
           "SIGSTREAM_COMMIT_LOG": str(tmp_path / "commits.log"), "SIGSTREAM_STALL_PATH": "f02.wav",
           "SIGSTREAM_STALL_ON": "open", "SIGSTREAM_STALL_MARK": str(mark)}
    family: list[int] = []
    with open(errors, "w") as err_file:
        # Its own session: whatever happens, the test can end the whole tree.
        proc = subprocess.Popen([cli(), "batch", str(job), *inputs_of(job), "--scheduler", "local:1", "--out-dir",
                                 str(tmp_path / "dask")], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err_file, start_new_session=True)
        try:
            stalled_pid(mark)
            family = descendants(proc.pid)
            stop(proc)
            proc.wait(timeout=60)
            wait_for(lambda: not any(alive(p) for p in family), "the driver and its workers to exit", timeout=60)
        finally:
            for p in [proc.pid, *family]:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait()
    assert len(family) >= 2, f"expected the Python driver and its worker processes under the CLI: {family}"
    return proc.returncode, family, errors.read_text()


def interrupted_at_f02(out: Path) -> None:
    """The summary of a batch interrupted while f02.wav stalled, and no temporary file left."""
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["interrupted"] is True and summary["exit_code"] == 130
    status = {Path(f["file"]).name: f["status"] for f in summary["files"]}
    assert status["f02.wav"] == "interrupted"
    assert not (out / "f02.wav").exists()
    assert temporaries(out) == []


def test_cli_scheduler_sigterm_is_forwarded_and_the_child_reaped(tmp_path: Path, job: Path, shim: str) -> None:
    """SIGTERM to the CLI is passed on: the driver stops the batch, writes its summary, and is reaped with its
    cluster (the helper waits for every descendant to end)."""
    code, _, err = stopped_while_a_file_stalls(tmp_path, job, shim, lambda p: p.send_signal(signal.SIGTERM))
    assert code == 130, err
    assert "run the same command again to resume" in err
    interrupted_at_f02(tmp_path / "dask")


@pytest.mark.parametrize("through", ["python", "a wrapper that does not exec"])
def test_a_sigkill_of_the_cli_stops_its_driver_and_cluster(tmp_path: Path, job: Path, shim: str, through: str) -> None:
    """SIGKILL leaves sigstream no time to pass a signal on: its Python driver sees the pipe only sigstream
    held end (and Linux's parent-death signal where it is sigstream's child), stops as on SIGTERM, writes the
    summary of an interrupted batch, and its workers end (without it they finished the batch after the
    kill). Also through a $SIGSTREAM_PYTHON wrapper script that runs Python as its child."""
    python = sys.executable
    if through != "python":
        wrapper = tmp_path / "python.sh"
        wrapper.write_text(f'#!/bin/sh\n"{sys.executable}" "$@"\n')
        wrapper.chmod(0o755)
        python = str(wrapper)
    _, family, err = stopped_while_a_file_stalls(tmp_path, job, shim, lambda p: p.kill(), python)
    assert len(family) >= (3 if through != "python" else 2), family
    interrupted_at_f02(tmp_path / "dask")


def test_a_summary_over_an_input_is_refused_before_any_cluster(tmp_path: Path, job: Path) -> None:
    """--stats naming an input of the batch is exit 2 through --scheduler too (SPEC §5), the input unchanged."""
    env = {**clean_env(), "SIGSTREAM_PYTHON": sys.executable}
    target = sorted(Path(inputs_of(job)[0]).glob("*.wav"))[0]
    before = target.read_bytes()
    p = subprocess.run([cli(), "batch", str(job), *inputs_of(job), "--scheduler", "local:1", "--stats", str(target),
                        "--out-dir", str(tmp_path / "dask")], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2, p.stderr
    assert "would be written over" in p.stderr
    assert target.read_bytes() == before
    assert not (tmp_path / "dask").exists()


def test_names_that_are_not_utf8_are_refused_before_any_cluster(tmp_path: Path, job: Path) -> None:
    """--scheduler with a Latin-1 --out-dir or an --inputs-from list naming a Latin-1 file: exit 2 naming it (they
    were a TypeError or UnicodeDecodeError traceback, exit 1)."""
    env = {**clean_env(), "SIGSTREAM_PYTHON": sys.executable}
    src = sorted(Path(inputs_of(job)[0]).glob("*.wav"))[0]
    (tmp_path / "list.txt").write_bytes(os.fsencode(src.parent) + b"/caf\xe9.wav\n")
    for extra in (["--out-dir", os.fsdecode(os.fsencode(tmp_path) + b"/o\xe9")],
                  ["--inputs-from", str(tmp_path / "list.txt"), "--out-dir", str(tmp_path / "o")]):
        args = [cli(), "batch", str(job), "--scheduler", "local:1", *extra]
        if extra[0] == "--out-dir":
            args[3:3] = inputs_of(job)
        p = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        assert p.returncode == 2, err
        assert "UTF-8" in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["in", "job.yaml", "list.txt"]  # no output folder made


def test_a_scheduler_file_is_waited_for_then_checked(tmp_path: Path, job: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """--scheduler FILE.json waits for a scheduler to write the file (the batch planned first: a config error
    is said at once), takes its address once it is whole, and refuses (exit 2, naming it) a file that is not
    a scheduler's: no traceback."""
    from sigstream import _batch_cli

    monkeypatch.setattr(_batch_cli, "SCHEDULER_FILE_WAIT_S", 1.3)
    monkeypatch.setattr(_batch_cli, "SCHEDULER_FILE_WHOLE_S", 0.6)  # the half-written file below lasts 0.1 s
    args = [str(job), *inputs_of(job)]
    late = tmp_path / "late.json"
    t0 = time.monotonic()
    assert _batch_cli.main([*args, "--scheduler", str(late)]) == 2
    assert time.monotonic() - t0 >= 1.3
    err = capsys.readouterr().err
    assert "sigstream: batch: waiting for the scheduler file" in err, err
    assert "no such scheduler file after 1.3 s" in err, err
    # A config error first, without the wait.
    t0 = time.monotonic()
    assert _batch_cli.main([*args, "--scheduler", str(late), "--set", "stages.0.mdoe=same"]) == 2
    assert time.monotonic() - t0 < 1.0
    assert "did you mean 'mode'" in capsys.readouterr().err
    # A file written during the wait, first half of it, then whole.
    def write_late() -> None:
        time.sleep(0.3)
        late.write_text('{"address": "tcp://127.0.0.1:')
        time.sleep(0.1)
        late.write_text('{"address": "tcp://127.0.0.1:8786", "id": "Scheduler-1"}')

    writer = threading.Thread(target=write_late)
    writer.start()
    try:
        assert _batch_cli._scheduler_address(str(late), None) == "tcp://127.0.0.1:8786"
    finally:
        writer.join()
    bad = tmp_path / "bad.json"
    for text, why in (("{garbage", "not JSON"), ('{"foo": 1}', 'it has no "address"'), ("", "not JSON"),
                      ("[1, 2]", 'it has no "address"'), ('{"address": ""}', 'it has no "address"')):
        bad.write_text(text)
        assert _batch_cli.main([*args, "--scheduler", str(bad), "--quiet"]) == 2, text
        err = capsys.readouterr().err
        assert f"--scheduler '{bad}': not a Dask scheduler file ({why}" in err, err
        assert "Traceback" not in err


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
