"""What the Dask batch tests share (python/tests/test_distributed*.py): the job and its
inputs, the compiled commit shim (tests/faults/commit_shim.cpp: it logs every rename/link into
place and stops one worker at a chosen point, the open of an input or the commit of a file's
statistics, until the test kills or releases it), the cluster, the kill-when-stalled thread, the
commit counts and the CLI reference. Not collected by pytest (no test_ prefix); the fixtures are
imported by name into each test module.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
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
