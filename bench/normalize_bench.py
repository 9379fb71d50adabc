#!/usr/bin/env python3
"""Normalisation end to end (SPEC §13, P14): a 10-minute stereo 48 kHz 16-bit
file (seeded programme noise whose level moves), each contender reading it
and writing a normalised copy, median of --runs, same machine and run:

  filter             `sigstream filter IN OUT --highpass 40 --iir 2` (one pass, the baseline)
  normalize lufs     `sigstream filter IN OUT --normalize lufs:-23` (two passes: libebur128, then the gain)
  normalize peak     `sigstream filter IN OUT --normalize peak:-1`
  ffmpeg loudnorm    FFmpeg's two-pass loudnorm: a measuring pass (print_format=json), then
                     loudnorm=I=-23:TP=-1 with the measured_* values and linear=true
  sox --norm         `sox --norm=-1 IN OUT` (peak normalisation; SoX reads the file twice)

Prints seconds and the ratio to the plain filter run. Usage:
bench/normalize_bench.py [--bin build/sigstream] [--minutes 10] [--runs 3] [--work DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import time
import wave

import numpy as np

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bin", default="build/sigstream")
ap.add_argument("--minutes", type=float, default=10.0)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--work", default="bench/work/normalize")
args = ap.parse_args()
sig = os.path.abspath(args.bin)
os.makedirs(args.work, exist_ok=True)
rate = 48000
src = os.path.join(args.work, f"programme_{args.minutes:g}min.wav")
if not os.path.exists(src):
    rng = np.random.default_rng(2026)
    n = int(args.minutes * 60 * rate)
    level = np.repeat(10 ** (rng.uniform(-38, -14, size=n // 24000 + 1) / 20), 24000)[:n]
    x = (rng.standard_normal((n, 2)) * level[:, None] * 0.5).clip(-0.99, 0.99)
    with wave.open(src + ".part", "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.round(x * 32767).astype("<i2").tobytes())
    os.replace(src + ".part", src)
with open(src, "rb") as f:  # page cache
    while f.read(1 << 24):
        pass
out = os.path.join(args.work, "out.wav")


def timed(cmds) -> float:
    ts = []
    for _ in range(args.runs):
        if os.path.exists(out):
            os.remove(out)
        t0 = time.perf_counter()
        for c in cmds() if callable(cmds) else [cmds]:
            subprocess.run(c, check=True, capture_output=True)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def ffmpeg_two_pass():
    p = subprocess.run(["ffmpeg", "-hide_banner", "-nostats", "-i", src, "-af",
                        "loudnorm=I=-23:TP=-1:LRA=20:print_format=json", "-f", "null", "-"],
                       capture_output=True, text=True, check=True)
    m = json.loads(p.stderr[p.stderr.rfind("{"):p.stderr.rfind("}") + 1])
    return [["ffmpeg", "-hide_banner", "-nostats", "-y", "-i", src, "-af",
             "loudnorm=I=-23:TP=-1:LRA=20:measured_I=%s:measured_TP=%s:measured_LRA=%s:measured_thresh=%s:"
             "offset=%s:linear=true" % (m["input_i"], m["input_tp"], m["input_lra"], m["input_thresh"],
                                        m["target_offset"]), "-ar", "48000", out]]


rows = [("filter (one pass)", timed([sig, "filter", src, out, "--highpass", "40", "--iir", "2", "-q"])),
        ("normalize lufs:-23", timed([sig, "filter", src, out, "--normalize", "lufs:-23", "-q"])),
        ("normalize peak:-1", timed([sig, "filter", src, out, "--normalize", "peak:-1", "-q"]))]
if shutil.which("ffmpeg"):
    ts = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        for c in ffmpeg_two_pass():
            subprocess.run(c, check=True, capture_output=True)
        ts.append(time.perf_counter() - t0)
    rows.append(("ffmpeg loudnorm, two passes", statistics.median(ts)))
if shutil.which("sox"):
    rows.append(("sox --norm=-1", timed(["sox", "--norm=-1", src, out])))
base = rows[0][1]
print(f"input: {args.minutes:g} min stereo 48 kHz pcm16; {os.cpu_count()} cores; median of {args.runs}")
for name, t in rows:
    print(f"{name:30s} {t:7.3f} s  {t / base:5.2f}x the filter run")
