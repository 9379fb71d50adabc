#!/usr/bin/env python3
"""Resampling on the CPU, sigstream against SoX, FFmpeg and SciPy in one run (issue P6).

  /usr/bin/python3 bench/resample_cpu.py --bin build/sigstream [--seconds 600] [--runs 5]

A stereo 44.1 kHz 16-bit WAV of --seconds of noise (made here, in a temporary
folder) is resampled to 48 kHz by each tool, end to end (file in, 16-bit file
out, as `sox in.wav -r 48000 out.wav`), --runs times; the median wall time is
reported with the libsndfile copy floor (bench_cpu_io_floor: the same file
read and written, no processing), measured in the same run. Accuracy (a
separate, untimed run of each tool writing 32-bit float): the output is
compared with scipy.signal.resample_poly(x, 160, 147) in float64 (relative
L2 over the file); as SoX and FFmpeg use other filters, the image band each
leaves (the power of the output in 22.05-24 kHz, which the ideal filter
removes, relative to the passband's) is reported too, for all.
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
ap.add_argument("--floor", default="", help="bench_cpu_io_floor (default: next to --bin)")
ap.add_argument("--seconds", type=float, default=600.0)
ap.add_argument("--runs", type=int, default=5)
args = ap.parse_args()
floor_bin = args.floor or os.path.join(os.path.dirname(os.path.abspath(args.bin)), "bench", "bench_cpu_io_floor")

work = tempfile.mkdtemp(prefix="resample-bench-")
src = os.path.join(work, "in.wav")
rate_in, rate_out = 44100, 48000
n = int(args.seconds * rate_in)
rng = np.random.default_rng(3)
pcm = np.clip(np.round(rng.normal(0, 0.2, (n, 2)) * 32768), -32768, 32767).astype("<i2")
with wave.open(src, "wb") as w:
    w.setnchannels(2)
    w.setsampwidth(2)
    w.setframerate(rate_in)
    w.writeframes(pcm.tobytes())
x = pcm.astype(np.float64) / 32768.0


def read_float_wav(path: str) -> np.ndarray:
    raw = open(path, "rb").read()
    pos = 12
    fmt = data = None
    while pos + 8 <= len(raw):
        cid, size = raw[pos:pos + 4], int.from_bytes(raw[pos + 4:pos + 8], "little")
        if cid == b"fmt ":
            fmt = raw[pos + 8:pos + 8 + size]
        elif cid == b"data":
            data = raw[pos + 8:pos + 8 + size]
        pos += 8 + size + (size & 1)
    assert fmt is not None and data is not None
    channels = int.from_bytes(fmt[2:4], "little")
    return np.frombuffer(data, "<f4").reshape(-1, channels).astype(np.float64)


def timed(cmd: list[str]) -> float:
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


ref = sps.resample_poly(x, 160, 147, axis=0)
f = np.fft.rfftfreq(1 << 16, 1.0 / rate_out)
image = (f > 22050) & (f < 24000)
passband = f < 20000


def image_db(y: np.ndarray) -> float:
    _, p = sps.welch(y[:, 0], fs=rate_out, nperseg=1 << 16)
    return 10 * np.log10(np.mean(p[image]) / np.mean(p[passband]))


out = lambda name: os.path.join(work, name)  # noqa: E731
# (name, timed command writing 16-bit, the same writing float, its float output)
jobs = [("sigstream filter --resample 48000 (cpu)",
         [args.bin, "filter", src, out("s16.wav"), "--resample", "48000", "--backend", "cpu", "-q"],
         [args.bin, "filter", src, out("s.wav"), "--resample", "48000", "--format", "float", "--backend", "cpu", "-q"],
         "s.wav")]
if shutil.which("sox"):
    jobs.append(("sox rate (default quality)", ["sox", src, out("sox16.wav"), "rate", "48000"],
                 ["sox", src, "-e", "float", "-b", "32", out("sox.wav"), "rate", "48000"], "sox.wav"))
if shutil.which("ffmpeg"):
    for tag, af in (("swr", "aresample=48000"), ("soxr", "aresample=48000:resampler=soxr")):
        jobs.append(("ffmpeg aresample (%s)" % tag,
                     ["ffmpeg", "-v", "error", "-y", "-i", src, "-af", af, out(tag + "16.wav")],
                     ["ffmpeg", "-v", "error", "-y", "-i", src, "-af", af, "-c:a", "pcm_f32le", out(tag + ".wav")],
                     tag + ".wav"))
scipy_script = ("import numpy as np, scipy.signal as s, wave, sys, struct\n"
                "w = wave.open(sys.argv[1]); x = np.frombuffer(w.readframes(w.getnframes()), '<i2').reshape(-1, 2) / 32768.0\n"
                "y = s.resample_poly(x, 160, 147, axis=0)\n"
                "if sys.argv[3] == 'float':\n"
                "    d = y.astype('<f4').tobytes(); fmt = struct.pack('<IHHIIHH', 16, 3, 2, 48000, 48000 * 8, 8, 32)\n"
                "else:\n"
                "    d = np.clip(np.round(y * 32768), -32768, 32767).astype('<i2').tobytes(); fmt = struct.pack('<IHHIIHH', 16, 1, 2, 48000, 48000 * 4, 4, 16)\n"
                "o = open(sys.argv[2], 'wb'); o.write(b'RIFF' + struct.pack('<I', 36 + len(d)) + b'WAVEfmt ' + fmt + b'data' + struct.pack('<I', len(d)) + d)\n")
with open(out("scipy_job.py"), "w") as fh:
    fh.write(scipy_script)
jobs.append(("scipy resample_poly (+ read/write)", ["/usr/bin/python3", out("scipy_job.py"), src, out("scipy16.wav"), "pcm16"],
             ["/usr/bin/python3", out("scipy_job.py"), src, out("scipy.wav"), "float"], "scipy.wav"))

rows = []
floor = timed([floor_bin, src, out("copy.wav")]) if os.access(floor_bin, os.X_OK) else float("nan")
print("copy floor (libsndfile read + write): %.3f s" % floor, flush=True)
for name, cmd, float_cmd, result in jobs:
    t = timed(cmd)
    subprocess.run(float_cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    y = read_float_wav(out(result))
    m = min(len(y), len(ref))
    err = float(np.linalg.norm(y[:m] - ref[:m]) / np.linalg.norm(ref[:m]))
    rows.append((name, t, err, image_db(y), len(y)))
    print("%-40s %.3f s  (%.2fx floor)  rel L2 vs resample_poly %.2e  image band %.1f dB  %d frames"
          % (name, t, t / floor, err, image_db(y), len(y)), flush=True)
print("\n| tool | time | x copy floor | rel L2 vs resample_poly | 22.05-24 kHz image vs passband |")
print("|---|---|---|---|---|")
print("| libsndfile copy (floor) | %.3f s | 1.00 | | |" % floor)
for name, t, err, img, _ in rows:
    print("| %s | %.3f s | %.2f | %.1e | %.1f dB |" % (name, t, t / floor, err, img))
shutil.rmtree(work, ignore_errors=True)
