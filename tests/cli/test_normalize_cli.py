#!/usr/bin/env python3
"""Normalisation from the command line (SPEC §13): `filter --normalize lufs:-23`
reaches -23 LUFS by FFmpeg's own ebur128 filter (an independent
implementation, where ffmpeg is installed); `peak:-1` gives the sample peak
SoX's `--norm=-1` gives (where sox is installed); the statistics report the
gain; a YAML normalize stage in a batch gives each file its own gain;
standard input, live mode, a bad --normalize and --true-peak-max without a
lufs target are exit 2 with no output left.

Usage: python3 test_normalize_cli.py PATH_TO_sigstream
"""

import json
import os
import re
import shutil
import subprocess
import sys
import wave

import numpy as np

if len(sys.argv) < 2:
    print("usage: test_normalize_cli.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import run_cases, write_pcm16  # noqa: E402

RATE = 48000


def sh(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, **kw)


def read_pcm16(path: str) -> np.ndarray:
    with wave.open(path, "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, w.getnchannels())


def programme(seconds: float, seed: int, db: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE) + 911
    level = np.repeat(10 ** (rng.uniform(db - 12, db + 3, size=n // 24000 + 1) / 20), 24000)[:n]
    return (rng.standard_normal((n, 2)) * level[:, None] * 0.5).clip(-0.99, 0.99)


def ffmpeg_integrated(path: str) -> float:
    q = subprocess.run(["ffmpeg", "-hide_banner", "-nostats", "-i", path, "-af", "ebur128", "-f", "null",
                        "-"], capture_output=True, text=True)
    summary = q.stderr[q.stderr.rfind("Summary:"):]
    return float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1))


def normalize_stage(stats: str) -> dict:
    with open(stats) as f:
        return next(s for s in json.load(f)["stages"] if s["type"] == "normalize")


def lufs_target_by_ffmpeg():
    write_pcm16("p.wav", programme(17.0, 3, -32.0))
    p = sh(["filter", "p.wav", "o.wav", "--normalize", "lufs:-23", "--stats", "s.json"])
    assert p.returncode == 0, p.stderr
    assert "normalize 'normalize0': measured" in p.stderr, p.stderr
    st = normalize_stage("s.json")
    assert st["mode"] == "lufs" and st["target_db"] == -23.0, st
    assert abs(st["measured_db"] + st["gain_db"] + 23.0) < 1e-9, st
    if shutil.which("ffmpeg") is None:
        return "gain %+.2f dB (no ffmpeg to compare with)" % st["gain_db"]
    before, after = ffmpeg_integrated("p.wav"), ffmpeg_integrated("o.wav")
    assert abs(before - st["measured_db"]) <= 0.06, (before, st)
    assert abs(after + 23.0) <= 0.06, after
    return "measured %.2f LUFS (ffmpeg %.1f), gain %+.2f dB, ffmpeg reads %.1f after" % (
        st["measured_db"], before, st["gain_db"], after)


def peak_target_as_sox():
    write_pcm16("p.wav", programme(9.0, 5, -20.0))
    p = sh(["filter", "p.wav", "o.wav", "--normalize", "peak:-1", "-q"])
    assert p.returncode == 0, p.stderr
    y = read_pcm16("o.wav").astype(np.float64)
    peak = 20 * np.log10(np.abs(y).max() / 32768)
    assert abs(peak + 1.0) < 0.01, peak
    if shutil.which("sox") is None:
        return "peak %.3f dBFS (no sox to compare with)" % peak
    subprocess.run(["sox", "-D", "--norm=-1", "p.wav", "s.wav"], check=True)  # -D: no dither
    s = read_pcm16("s.wav").astype(np.float64)
    sox_peak = 20 * np.log10(np.abs(s).max() / 32768)
    assert abs(peak - sox_peak) < 0.01, (peak, sox_peak)
    # One gain: without dither the two outputs agree within rounding (1 LSB).
    assert np.abs(y - s).max() <= 1, np.abs(y - s).max()
    return "peak %.3f dBFS, sox --norm=-1 %.3f dBFS, samples within 1 LSB" % (peak, sox_peak)


def batch_gain_per_file():
    for k, db in enumerate((-35.0, -20.0, -28.0)):
        write_pcm16("in_%d.wav" % k, programme(6.0 + k, 10 + k, db))
    with open("b.yaml", "w") as f:
        f.write("version: 1\nsource: {file: x.wav}\nstages:\n  - {type: normalize, name: n, rms_db: -24}\n"
                "sink: {file: x.wav}\nbatch: {inputs: ['in_*.wav'], out_dir: out}\n")
    p = sh(["batch", "b.yaml", "-q"])
    assert p.returncode == 0, p.stderr
    gains = []
    for k in range(3):
        st = normalize_stage("out/in_%d.json" % k)
        y = read_pcm16("out/in_%d.wav" % k).astype(np.float64) / 32768
        rms = 10 * np.log10(np.mean(y * y))
        assert abs(rms + 24.0) < 0.01, (k, rms)
        gains.append(st["gain_db"])
    assert len(set(round(g, 3) for g in gains)) == 3, gains
    return "gains " + ", ".join("%+.2f" % g for g in gains) + " dB, each file at -24 dBFS RMS"


def refusals_are_exit_2():
    write_pcm16("p.wav", programme(2.0, 1, -20.0))
    with open("p.wav", "rb") as f:
        data = f.read()
    cases = [
        (["filter", "-", "o1.wav", "--normalize", "lufs:-23"], "standard input is a stream", data),
        (["filter", "p.wav", "o2.wav", "--normalize", "peak:-1", "--latency", "10"], "live mode", None),
        (["filter", "p.wav", "o3.wav", "--normalize", "loud:-3"], "expected lufs:TARGET", None),
        (["filter", "p.wav", "o4.wav", "--normalize", "peak:1"], "above full scale", None),
        (["filter", "p.wav", "o5.wav", "--normalize", "rms:-20", "--true-peak-max", "-2"],
         "true peak of a lufs target", None),
        (["filter", "p.wav", "o6.wav", "--lowpass", "3000", "--true-peak-max", "-2"], "--normalize", None),
    ]
    for args, words, stdin in cases:
        p = subprocess.run([BIN, *args], input=stdin, capture_output=True)
        err = p.stderr.decode()
        assert p.returncode == 2, (args, p.returncode, err)
        assert words in err, (args, err)
        assert not os.path.exists(args[2]), args
    return "%d refusals" % len(cases)


run_cases([lufs_target_by_ffmpeg, peak_target_as_sox, batch_gain_per_file, refusals_are_exit_2], BIN,
          "sigstream-normalize-")
