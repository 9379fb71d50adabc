#!/usr/bin/env python3
"""A 6 -> 2 down-mix end to end (issue P12): what the mix costs in a run,
sigstream against SoX and FFmpeg in one run.

  python3 bench/mix_e2e.py --bin build/sigstream [--seconds 600] [--runs 5] [--backends cpu,cuda]

A 6-channel 48 kHz 16-bit WAV of --seconds of noise (made here, in a
temporary folder) is down-mixed to stereo (ITU-R BS.775, `filter --mix
5.1-stereo`, 16-bit out), --runs times per backend; reported: the median wall
time, the mix stage's own time (the statistics' stages_ms: CPU time summed
over the worker threads, or CUDA events on the GPU) and its share of the
wall time (on the CPU per thread: stages_ms / threads / wall), next to the same job
with the cheapest 6 -> 2 mix (`--mix select:0,1`: two planes copied, the
same bytes in and out) and the libsndfile copy floor
(bench_cpu_io_floor: the file read and written, no processing). Peers in the
same run, where installed: `sox in.wav out.wav remix ...` with the same
gains, and `ffmpeg -af pan=stereo|...` (each end to end, 16-bit out).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import wave

import numpy as np

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--bin", default="build/sigstream")
ap.add_argument("--floor", default="", help="bench_cpu_io_floor (default: next to --bin)")
ap.add_argument("--seconds", type=float, default=600.0)
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--backends", default="cpu")
args = ap.parse_args()
floor_bin = args.floor or os.path.join(os.path.dirname(os.path.abspath(args.bin)), "bench", "bench_cpu_io_floor")

work = tempfile.mkdtemp(prefix="mix-bench-")
src = os.path.join(work, "in.wav")
out = os.path.join(work, "out.wav")
stats = os.path.join(work, "s.json")
rate = 48000
n = int(args.seconds * rate)
rng = np.random.default_rng(3)
pcm = np.clip(np.round(rng.normal(0, 0.1, (n, 6)) * 32768), -32768, 32767).astype("<i2")
with wave.open(src, "wb") as w:
    w.setnchannels(6)
    w.setsampwidth(2)
    w.setframerate(rate)
    w.writeframes(pcm.tobytes())
del pcm


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def median_of(cmd: list[str]) -> float:
    timed(cmd)  # warm: the file in the page cache
    return statistics.median(timed(cmd) for _ in range(args.runs))


def sigstream_row(backend: str, flags: list[str], label: str) -> dict[str, object]:
    cmd = [args.bin, "filter", src, out, *flags, "--backend", backend, "--stats", stats, "-q", "--no-progress"]
    timed(cmd)
    walls, stage = [], []
    threads = 1
    for _ in range(args.runs):
        walls.append(timed(cmd))
        s = json.load(open(stats))
        stage.append(sum(s["timing"]["stages_ms"].values()))
        if backend == "cpu":  # the stage's time is summed over the worker threads
            threads = max(1, int(s["execution"]["threads"]))
    wall = statistics.median(walls)
    st = statistics.median(stage)
    return {"tool": f"sigstream {label}", "backend": backend, "wall_s": round(wall, 4),
            "stage_ms": round(st, 2), "threads": threads,
            "stage_share_of_wall": round(st / 1000.0 / threads / wall, 4)}


rows: list[dict[str, object]] = []
if os.path.exists(floor_bin):
    rows.append({"tool": "copy floor (libsndfile read + write, 6 ch)",
                 "wall_s": round(median_of([floor_bin, src, out]), 4)})
for b in args.backends.split(","):
    rows.append(sigstream_row(b, ["--mix", "5.1-stereo"], "--mix 5.1-stereo"))
    rows.append(sigstream_row(b, ["--mix", "select:0,1"], "--mix select:0,1 (a copy)"))
k = "0.7071068"
if shutil.which("sox"):
    rows.append({"tool": "sox remix", "wall_s": round(median_of(
        ["sox", src, out, "remix", f"1v1,3v{k},5v{k}", f"2v1,3v{k},6v{k}"]), 4)})
if shutil.which("ffmpeg"):
    rows.append({"tool": "ffmpeg pan", "wall_s": round(median_of(
        ["ffmpeg", "-v", "error", "-y", "-i", src, "-af",
         f"pan=stereo|c0=c0+{k}*c2+{k}*c4|c1=c1+{k}*c2+{k}*c5", "-c:a", "pcm_s16le", out]), 4)})
print(json.dumps({"seconds": args.seconds, "frames": n, "runs": args.runs}))
for r in rows:
    print(json.dumps(r))
shutil.rmtree(work)
