#!/usr/bin/env python3
"""Loudness from the command line (SPEC §13): `info --loudness` on an EBU
Tech 3341 tone and on silence; a metrics block's "loudness" object in the
statistics; FFmpeg's own ebur128 filter (an independent implementation)
agrees on random programme where ffmpeg is installed; the batch summary's
integrated_lufs and true_peak_dbtp columns, also after a resume; live mode
gives the file's values, and so does --backend cuda (where a device is).

Usage: python3 test_loudness_cli.py PATH_TO_sigstream
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

if len(sys.argv) < 2:
    print("usage: test_loudness_cli.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import Skip, run_cases, write_pcm16  # noqa: E402

RATE = 48000


def sh(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, **kw)


def tone(seconds: float, dbfs: float, channels: int = 2) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    s = 10 ** (dbfs / 20) * np.sin(2 * np.pi * 1000 * t)
    return np.repeat(s[:, None], channels, axis=1)


def programme(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE) + 1237
    level = np.repeat(10 ** (rng.uniform(-40, -14, size=n // 24000 + 1) / 20), 24000)[:n]
    return (rng.standard_normal((n, 2)) * level[:, None] * 0.5).clip(-0.99, 0.99)


def info_values(path: str) -> dict[str, str]:
    p = sh(["info", path, "--loudness"])
    assert p.returncode == 0, p.stderr
    return {k.strip(): v.strip() for k, v in (ln.split(":", 1) for ln in p.stdout.splitlines())}


def info_tone_and_silence():
    write_pcm16("t.wav", tone(20.0, -23.0))
    v = info_values("t.wav")
    i = float(v["integrated_lufs"].split()[0])
    assert abs(i + 23.0) < 0.1, v
    tp = float(v["true_peak_dbtp"].split()[0])
    assert abs(tp + 23.0) < 0.1, v
    write_pcm16("s.wav", np.zeros((RATE * 2, 2)))
    s = info_values("s.wav")
    assert s["integrated_lufs"].startswith("none"), s
    return "tone: %.2f LUFS, %.2f dBTP; silence: none" % (i, tp)


def statistics_block_and_ffmpeg():
    x = programme(23.0, 7)
    write_pcm16("p.wav", x)
    with open("c.yaml", "w") as f:
        f.write("version: 1\nsource: {file: p.wav}\nstages:\n  - {type: metrics, name: m, loudness: true}\n"
                "sink: {file: o.wav}\nexecution: {backend: auto}\n")
    p = sh(["run", "c.yaml", "-q", "--stats", "s.json"])
    assert p.returncode == 0, p.stderr
    with open("s.json") as f:
        loud = json.load(f)["metrics"]["m"]["loudness"]
    assert set(loud) == {"integrated_lufs", "range_lu", "true_peak_dbtp", "max_momentary_lufs",
                         "max_short_term_lufs"}, loud
    assert all(isinstance(v, float) for v in loud.values()), loud
    if shutil.which("ffmpeg") is None:
        return "statistics block (no ffmpeg to compare with)"
    q = subprocess.run(["ffmpeg", "-hide_banner", "-nostats", "-i", "p.wav", "-af", "ebur128=peak=true",
                        "-f", "null", "-"], capture_output=True, text=True)
    summary = q.stderr[q.stderr.rfind("Summary:"):]
    i = float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1))
    lra = float(re.search(r"LRA:\s+(-?[\d.]+) LU", summary).group(1))
    peak = float(re.search(r"Peak:\s+(-?[\d.]+) dBFS", summary).group(1))
    # FFmpeg prints one decimal; its range comes from its own histogram of short-term values
    # (0.3 LU off libebur128's here), its true peak from its own oversampling filter.
    assert abs(loud["integrated_lufs"] - i) <= 0.06, (loud, i)
    assert abs(loud["range_lu"] - lra) <= 0.5, (loud, lra)
    assert abs(loud["true_peak_dbtp"] - peak) <= 0.3, (loud, peak)
    return "I %.2f (ffmpeg %.1f), LRA %.2f (%.1f), TP %.2f (%.1f)" % (
        loud["integrated_lufs"], i, loud["range_lu"], lra, loud["true_peak_dbtp"], peak)


def batch_summary_columns():
    os.makedirs("in", exist_ok=True)
    write_pcm16("in/a.wav", tone(5.0, -20.0))
    write_pcm16("in/b.wav", tone(5.0, -30.0))
    with open("b.yaml", "w") as f:
        f.write("version: 1\nsource: {file: in/a.wav}\nstages:\n  - {type: metrics, name: m, loudness: true}\n"
                "sink: {file: x.wav}\nexecution: {backend: cpu}\nbatch: {inputs: ['in/*.wav'], out_dir: out}\n")
    for attempt in ("first", "resumed"):
        p = sh(["batch", "b.yaml", "-q", "--no-progress"])
        assert p.returncode == 0, p.stderr
        with open("out/batch_summary.csv") as f:
            rows = {os.path.basename(r["file"]): r for r in csv.DictReader(f)}
        got = {k: float(r["integrated_lufs"]) for k, r in rows.items()}
        assert abs(got["a.wav"] + 20.0) < 0.1 and abs(got["b.wav"] + 30.0) < 0.1, (attempt, got)
        assert abs(float(rows["a.wav"]["true_peak_dbtp"]) + 20.0) < 0.1, rows
        with open("out/batch_summary.json") as f:
            files = json.load(f)["files"]
        assert all(isinstance(e["integrated_lufs"], float) for e in files), files
    return "a.wav %.2f, b.wav %.2f LUFS, first and resumed" % (got["a.wav"], got["b.wav"])


def live_mode_and_cuda_give_the_files_values():
    """Live mode (blocks of 5 ms, a raw pipe in and out) measures what the file run measures, to
    1e-9 LU (the file's pieces are measured by the CPU backend's workers, each K-weighting settled
    from rest in the block's look-back; live mode's meter takes the frames in order). The CUDA
    backend's measurement gives the same values to 1e-6."""
    x = programme(6.0, 11)
    write_pcm16("p.wav", x)
    with open("c.yaml", "w") as f:
        f.write("version: 1\nsource: {file: p.wav}\nstages:\n  - {type: metrics, name: m, loudness: true}\n"
                "sink: {file: o.wav}\nexecution: {backend: cpu}\n")
    p = sh(["run", "c.yaml", "-q", "--stats", "file.json"])
    assert p.returncode == 0, p.stderr
    raw = (np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")).tobytes()
    with open("l.yaml", "w") as f:
        f.write("version: 1\nsource: {file: '-', raw: {sample_rate: 48000, channels: 2, encoding: s16le}}\n"
                "stages:\n  - {type: metrics, name: m, loudness: true}\n"
                "sink: {file: '-', type: raw, format: pcm16}\nexecution: {backend: cpu}\n")
    q = subprocess.run([BIN, "run", "l.yaml", "-q", "--latency", "5", "--stats", "live.json"], input=raw,
                       capture_output=True)
    assert q.returncode == 0, q.stderr
    with open("file.json") as f:
        want = json.load(f)["metrics"]["m"]["loudness"]
    with open("live.json") as f:
        got = json.load(f)["metrics"]["m"]["loudness"]
    for k, v in want.items():  # the file's chunks are measured by the workers (settled), live's in order
        assert (v is None) == (got[k] is None) and (v is None or abs(got[k] - v) < 1e-9), (k, got, want)
    p = sh(["run", "c.yaml", "-q", "--backend", "cuda", "--stats", "cuda.json"])
    if p.returncode != 0:
        # A build without CUDA, or a machine without a device (the GPU tests run it on one).
        assert "CUDA" in p.stderr, (p.returncode, p.stderr)
        return "live (5 ms) = file: I %.4f; cuda not run here" % got["integrated_lufs"]
    with open("cuda.json") as f:
        gpu = json.load(f)["metrics"]["m"]["loudness"]
    for k, v in want.items():
        assert (v is None) == (gpu[k] is None) and (v is None or abs(gpu[k] - v) < 1e-6), (k, gpu, want)
    return "live (5 ms) = file = cuda: I %.4f" % got["integrated_lufs"]

run_cases([info_tone_and_silence, statistics_block_and_ffmpeg, batch_summary_columns,
           live_mode_and_cuda_give_the_files_values], BIN, "sigstream-loudness-")
