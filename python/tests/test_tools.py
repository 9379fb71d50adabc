"""The project's own tools (issue P10): bench/soak.py's sampler and summary,
fuzz/make_seeds.py's corpora, run for real on a short job, and bench/rates.py's
rate once started (P11), on a real batch's trace."""
from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import time
import wave
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("SIGSTREAM_CLI", "")


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


soak = load(ROOT / "bench" / "soak.py")
rates = load(ROOT / "bench" / "rates.py")


def test_read_sample_of_this_process() -> None:
    s = soak.read_sample(os.getpid(), 1.5)
    assert s is not None
    assert s.t == 1.5 and s.rss_kb > 1000 and s.threads >= 1
    assert s.fds == len(os.listdir("/proc/self/fd"))  # each count sees its own listing's descriptor
    assert soak.read_sample(2**22 + 12345, 0.0) is None  # no such process


def test_summary_counts_growth_after_the_warmup() -> None:
    series = soak.Series("x", 1, [soak.Sample(float(t), 1000 + 7 * t, 4 + (t > 5), 3) for t in range(12)])
    out = soak.summarize(series, warmup_s=3.0)
    assert out["samples"] == 12 and out["seconds"] == 11.0
    assert out["rss_kb"] == {"first": 1021, "min": 1021, "max": 1077, "last": 1077, "growth": 56}
    assert out["fds"]["growth"] == 1 and out["threads"]["growth"] == 0


@pytest.mark.skipif(not CLI, reason="needs the CLI (SIGSTREAM_CLI)")
def test_soak_runs_each_mode(tmp_path: Path) -> None:
    for mode, extra in (("synth", ["--audio-hours", "0.002"]), ("pipe", ["--audio-hours", "0.002"]),
                        ("live", ["--wall-seconds", "1.5"])):
        csv = tmp_path / f"{mode}.csv"
        got = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), mode, "--bin", CLI, "--warmup", "0",
                              "--csv", str(csv), *extra], capture_output=True, text=True, check=True)
        result = json.loads(got.stdout)
        assert set(result["exit_codes"].values()) == {0}, result
        # All of the audio came out: 7.2 s of the synthetic source; live: about 1.5 s of paced blocks.
        want = 7.2 if mode != "live" else 1.5
        assert abs(result["audio_out_s"] - want) < (0.05 if mode != "live" else 0.3), result
        assert csv.read_text().startswith("process,t_s,rss_kb,fds,threads\n")


@pytest.mark.skipif(not CLI, reason="needs the CLI (SIGSTREAM_CLI)")
def test_make_seeds_writes_every_corpus(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "fuzz" / "make_seeds.py"), "--bin", CLI, "--out", str(tmp_path)],
                   check=True)
    counts = {t: len(list((tmp_path / t).iterdir())) for t in ("config", "set", "taps", "audio", "live")}
    assert counts["config"] == len(list(ROOT.glob("configs/**/*.yaml")))
    assert min(counts.values()) >= 5, counts
    # Audio seeds are the target's 3-byte prefix and a file libsndfile reads.
    seed = next(p for p in (tmp_path / "audio").iterdir() if p.read_bytes()[3:7] == b"RIFF")
    assert seed.read_bytes()[:3] in (b"\x00\x00\x00", b"\x01\x00\x00")
    words = (tmp_path / "config.dict").read_text().splitlines()
    assert '"chunk_frames:"' in words and '"kaiser"' in words


def test_the_rate_once_started_leaves_out_the_start_and_the_tail() -> None:
    rng = random.Random(7)
    # 997 files: a start of 0.8 s before the first, then one every 3 ms (333.3/s) with jitter
    # below the spacing, the slowest 3% strung out over a tail of 0.5 s more.
    ends = [0.8 + 0.003 * i + rng.uniform(-0.001, 0.001) for i in range(967)]
    ends += [ends[-1] + rng.uniform(0.01, 0.5) for _ in range(30)]
    rng.shuffle(ends)
    rate = rates.steady_rate(ends)
    assert rate is not None and abs(rate - 1 / 0.003) < 0.01 * (1 / 0.003), rate
    # The whole-wall rate is far below: the start and the tail weigh on it.
    assert len(ends) / max(ends) < 0.8 * rate
    assert rates.steady_rate(ends[:9]) is None  # too few to tell
    # Halves round up, as the trace summary's quantiles do: 26 files -> the 4th and the 24th.
    assert (rates.quantile_index(26, 0.1), rates.quantile_index(26, 0.9)) == (3, 23)
    assert rates.steady_rate([float(k) for k in range(26)]) == pytest.approx(1.0)
    assert rates.steady_rate([1.0] * 50) is None  # no time between them
    with pytest.raises(ValueError):
        rates.steady_rate(ends, 0.9, 0.1)


def test_commit_times_read_a_trace() -> None:
    lines = ["sigstream: trace     0.007 ms t0   main",
             "sigstream: trace    14.500 ms t3   outputs committed",
             "sigstream: warning: something else entirely",
             "sigstream: trace     9.250 ms t12  outputs committed",
             "sigstream: trace    20.000 ms t3   source opened"]
    assert rates.commit_times(lines) == [0.00925, 0.0145]
    assert rates.trace_events(lines)[1] == (14.5, 3, "outputs committed")


@pytest.mark.skipif(not CLI, reason="needs the CLI (SIGSTREAM_CLI)")
def test_commit_times_of_a_real_batch(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(11)
    for i in range(13):
        with wave.open(str(src / f"f{i:02d}.wav"), "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(48000)
            w.writeframes(rng.randbytes(2 * 2 * (4000 + 37 * i)))
    cfg = tmp_path / "b.yaml"
    cfg.write_text("version: 1\nsource: {file: x.wav}\nstages:\n"
                   "  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 63}}\n"
                   "sink: {file: x.wav}\nexecution: {backend: cpu}\n"
                   f"batch:\n  inputs: [\"{src}/*.wav\"]\n  out_dir: {tmp_path / 'out'}\n")
    t0 = time.monotonic()
    got = subprocess.run([CLI, "batch", str(cfg), "--quiet", "--no-progress"], capture_output=True, text=True,
                         env=dict(os.environ, SIGSTREAM_TRACE="1"), check=True)
    wall = time.monotonic() - t0
    ends = rates.commit_times(got.stderr.splitlines())
    assert len(ends) == 13 and len(list((tmp_path / "out").glob("*.wav"))) == 13
    assert 0 < ends[0] and ends[-1] < wall  # seconds since the process started, within its run
    # 13 files: the 10th to the 90th percentile are the 2nd and the 12th, 10 files over at most the wall.
    assert (rates.quantile_index(13, 0.1), rates.quantile_index(13, 0.9)) == (1, 11)
    rate = rates.steady_rate(ends)
    assert rate is not None and rate >= 10 / wall
