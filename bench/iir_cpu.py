#!/usr/bin/env python3
"""A 4th-order Butterworth high-pass at 80 Hz over 10 minutes of 48 kHz stereo 16-bit, end to end
(read + filter + write), on the CPU (issue P13's CPU target: >= 3x SoX and >= 3x SciPy sosfilt).

  /usr/bin/python3 bench/iir_cpu.py --bin build/sigstream [--seconds 600] [--runs 5]

Contenders, same file, same run, median of --runs wall times each:
  sigstream  `filter in.wav out.wav --highpass 80 --iir 4 --backend cpu`
  SoX        `sox in.wav out.wav highpass 80 highpass 80` (two 2-pole sections, its nearest equivalent)
  SciPy      wave read, scipy.signal.sosfilt(iirfilter(4, 80, 'highpass', fs=48000, output='sos')),
             16-bit write, in this process
The output of sigstream is checked against SciPy's (16-bit, within 1 LSB).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import wave

import numpy as np
import scipy.signal as sps

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--bin", default="build/sigstream")
ap.add_argument("--seconds", type=float, default=600.0)
ap.add_argument("--runs", type=int, default=5)
args = ap.parse_args()
RATE = 48000


def timed(fn) -> float:
    ts = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def read16(path: str) -> np.ndarray:
    with wave.open(path, "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, w.getnchannels())


def write16(path: str, y: np.ndarray) -> None:
    with wave.open(path, "wb") as w:
        w.setnchannels(y.shape[1])
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.clip(np.round(y * 32768), -32768, 32767).astype("<i2").tobytes())


with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "in.wav")
    x = (np.random.default_rng(1).standard_normal((int(args.seconds * RATE), 2)) * 3000).astype("<i2")
    write16(src, x.astype(np.float64) / 32768)
    sos = sps.iirfilter(4, 80.0, btype="highpass", ftype="butter", fs=RATE, output="sos")
    out = os.path.join(tmp, "o.wav")
    rows = []
    rows.append(("sigstream filter --highpass 80 --iir 4", timed(lambda: subprocess.run(
        [args.bin, "filter", src, out, "--highpass", "80", "--iir", "4", "--backend", "cpu", "-q"],
        check=True))))
    mine = read16(out).astype(np.int64)

    def scipy_run() -> None:
        y = sps.sosfilt(sos, read16(src).astype(np.float32) / 32768, axis=0)
        write16(os.path.join(tmp, "s.wav"), y)

    rows.append(("scipy sosfilt (read + filter + write)", timed(scipy_run)))
    ref = read16(os.path.join(tmp, "s.wav")).astype(np.int64)
    if shutil.which("sox"):
        rows.append(("sox highpass 80 highpass 80", timed(lambda: subprocess.run(
            ["sox", src, os.path.join(tmp, "x.wav"), "highpass", "80", "highpass", "80"], check=True))))
    print(f"{args.seconds:.0f} s stereo 48 kHz pcm16, median of {args.runs}; "
          f"sigstream vs SciPy: max |diff| {int(np.abs(mine - ref).max())} LSB")
    base = rows[0][1]
    for name, t in rows:
        print(f"  {name:42s} {t:7.3f} s  {t / base:5.2f}x sigstream's time")
