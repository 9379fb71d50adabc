"""The project's own tools (issue P10): bench/soak.py's sampler and summary,
and fuzz/make_seeds.py's corpora, run for real on a short job."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
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
