#!/usr/bin/env python3
"""Sizes a config sets, checked against the machine before anything starts (issue P10, part 1).

Usage: python3 test_limits.py PATH_TO_sigstream

execution.threads above 4 per hardware thread (it used to start that many
threads: 100000 of them took the host's process table), execution.streams
above 64, and chunks whose buffers in flight would not fit the host's
available memory are refused at once with exit 2, naming the key, this
machine's limit and what to set instead (run; batch for the threads); no
output is left behind. The limits that hold still run.
"""

import os
import subprocess
import sys
import time

if len(sys.argv) < 2:
    print("usage: test_limits.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import run_cases  # noqa: E402

CONFIG = """version: 1
source: {synth: {sample_rate: 48000, frames: 48000, channels: 2, tones: [{freq_hz: 440, amplitude: 0.5}]}}
stages:
  - {type: fir, design: {kind: lowpass, cutoff_hz: 2000, taps: 63}}
sink: {file: out.wav}
execution: {backend: cpu}
"""


def sh(*args):
    t = time.monotonic()
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    return r, time.monotonic() - t


def refused(args, key, *words):
    r, s = sh(*args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert key in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert s < 5, f"took {s:.1f} s to refuse"
    assert not os.path.exists("out.wav"), "an output was left"


def test_threads():
    open("c.yaml", "w").write(CONFIG)
    hw = os.cpu_count() or 1
    for n in ("100000", "2147483647", str(4 * hw + 1)):
        refused(["run", "c.yaml", "--set", f"execution.threads={n}"], "execution.threads",
                n, f"at most {4 * hw}", "set 0")
    r, _ = sh("run", "c.yaml", "--set", f"execution.threads={4 * hw}", "-q")
    assert r.returncode == 0, r.stderr  # the limit itself runs
    os.remove("out.wav")
    refused(["batch", os.path.join(ROOT, "configs", "examples", "batch.yaml"), "--set", "execution.threads=100000",
             "--out-dir", "b"], "execution.threads")
    assert not os.path.exists("b"), "the batch started"


def test_streams():
    open("c.yaml", "w").write(CONFIG)
    refused(["run", "c.yaml", "--set", "execution.streams=100000"], "execution.streams", "64")
    r, _ = sh("run", "c.yaml", "--set", "execution.streams=64", "-q")
    assert r.returncode == 0, r.stderr


def test_chunk_memory():
    # 2^30 frames x 64 channels a chunk (a signal long enough to fill it): TiB in flight.
    open("c.yaml", "w").write(CONFIG.replace("frames: 48000, channels: 2", "frames: 4000000000, channels: 64")
                              .replace("execution: {backend: cpu}", "execution: {backend: cpu, chunk_frames: 1073741824}"))
    refused(["run", "c.yaml"], "execution.chunk_frames", "GiB", "set chunk_frames to at most")


run_cases([test_threads, test_streams, test_chunk_memory], BIN, "sigstream-limits-")
