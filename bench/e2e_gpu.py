#!/usr/bin/env python3
"""End to end on the GPU machine: `sigstream filter` on a 10-minute 48 kHz
stereo 16-bit WAV with 255 taps, CUDA and CPU backends, against the I/O floor
(the same file read and written through libsndfile with no processing).

Usage: bench/e2e_gpu.py --bin DIR [--minutes 10] [--taps 255] [--runs 3] [--work DIR]
DIR holds sigstream and bench_cpu_io_floor (e.g. .gpu/bin from gpu-bundle).
The WAV is made here with NumPy (noise + tones), so nothing large travels.
"""
import argparse
import json
import os
import statistics
import subprocess
import time
import wave

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True)
ap.add_argument("--minutes", type=float, default=10.0)
ap.add_argument("--taps", type=int, default=255)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--work", default="/tmp/sigstream-e2e")
ap.add_argument("--fresh", action="store_true",
                help="delete each command's output before its run (untimed): every run writes a new file; "
                     "by default runs replace the previous round's output, which on ext4 adds a flush")
ap.add_argument("--long-minutes", type=float, default=0.0,
                help="also run auto/cuda/cpu once each on a file this long (the hybrid hand-over)")
args = ap.parse_args()
os.makedirs(args.work, exist_ok=True)
w = lambda n: os.path.join(args.work, n)
sig = os.path.join(args.bin, "sigstream")
floor = os.path.join(args.bin, "bench_cpu_io_floor")

def make_wav(path, minutes):
    frames = int(minutes * 60 * 48000)
    if os.path.exists(path):
        return frames
    rng = np.random.default_rng(1)
    with wave.open(path, "wb") as f:
        f.setnchannels(2)
        f.setsampwidth(2)
        f.setframerate(48000)
        step = 48000 * 60  # a minute at a time
        for a in range(0, frames, step):
            n = min(step, frames - a)
            t = np.arange(a, a + n) / 48000.0
            x = 0.2 * rng.standard_normal((n, 2)) + 0.3 * np.sin(2 * np.pi * 440 * t)[:, None]
            f.writeframes(np.clip(np.round(x * 32767), -32768, 32767).astype("<i2").tobytes())
    return frames


src = w("in.wav")
frames = make_wav(src, args.minutes)


def timed_round_robin(cmds):
    """Runs the commands in turn, args.runs rounds; dirty pages of earlier
    outputs are flushed (untimed) before each run so that no run pays for
    another's write-back."""
    times = {name: [] for name in cmds}
    for _ in range(args.runs):
        for name, cmd in cmds.items():
            if args.fresh:
                for a in cmd[2:]:
                    if a.endswith(".wav") and a != src and os.path.exists(a):
                        os.remove(a)
            os.sync()
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t0)
    return {name: (statistics.median(r), r) for name, r in times.items()}


common = ["--lowpass", "3000", "--taps", str(args.taps), "--quiet"]
results = timed_round_robin({
    "io floor (libsndfile copy)": [floor, src, w("copy.wav")],
    "sigstream (backend auto)": [sig, "filter", src, w("out_auto.wav")] + common,
    "sigstream --backend cuda": [sig, "filter", src, w("out_cuda.wav"), "--backend", "cuda"] + common,
    "sigstream --backend cpu": [sig, "filter", src, w("out_cpu.wav"), "--backend", "cpu"] + common,
})
print(f"# e2e: {args.minutes:g} min stereo 48 kHz pcm16 ({frames} frames), {args.taps} taps, "
      f"median of {args.runs}, {os.cpu_count()} CPU cores, "
      f"{'new output files' if args.fresh else 'outputs replaced each round'}")
f0 = results["io floor (libsndfile copy)"][0]
for name, (t, runs) in results.items():
    print(f"{name:28s} {t:7.3f} s  {frames / t / 1e6:7.1f} Mframes/s  {t / f0:5.2f}x floor   "
          f"runs {' '.join(f'{r:.3f}' for r in runs)}")
def samples(path):
    with wave.open(path, "rb") as f:
        return np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(np.int32)


def compare(a, b):
    """'byte for byte' or how far apart two outputs' samples are (LSB)."""
    if open(w(a), "rb").read() == open(w(b), "rb").read():
        return "identical, byte for byte"
    d = np.abs(samples(w(a)) - samples(w(b)))
    return f"max {d.max()} LSB apart, {np.count_nonzero(d)} of {d.size} samples differ"


# The CPU's auto method may be the FFT where CUDA's is direct (their own
# crossovers): 1-LSB differences from the FFT's rounding are expected then.
print("auto vs cpu output:", compare("out_auto.wav", "out_cpu.wav"))
print("cuda vs cpu output:", compare("out_cuda.wav", "out_cpu.wav"))

# Stats and verification on the GPU.
subprocess.run([sig, "filter", src, w("out_v.wav"), "--backend", "cuda", "--verify", "--stats", w("s.json")]
               + common[:-1], check=True)
s = json.load(open(w("s.json")))
print("verify:", json.dumps(s["verification"]), "device:", s["device"], "timing:", json.dumps(s["timing"]))

# Where the time goes: one traced run per backend (SIGSTREAM_TRACE=1 prints a timeline).
for backend in ("auto", "cuda", "cpu"):
    os.sync()
    t0 = time.perf_counter()
    p = subprocess.run([sig, "filter", src, w(f"out_t_{backend}.wav"), "--backend", backend] + common[:-1],
                       env=dict(os.environ, SIGSTREAM_TRACE="1"), capture_output=True, text=True, check=True)
    total = time.perf_counter() - t0
    print(f"--- timeline, --backend {backend} (process wall {total * 1e3:.1f} ms as seen from here)")
    print(p.stderr.rstrip())

if args.long_minutes > 0:
    long_src = w("long.wav")
    long_frames = make_wav(long_src, args.long_minutes)
    print(f"--- {args.long_minutes:g} min stereo file ({long_frames} frames), one run each")
    for backend in ("auto", "cuda", "cpu"):
        os.sync()
        t0 = time.perf_counter()
        p = subprocess.run([sig, "filter", long_src, w(f"long_{backend}.wav"), "--backend", backend,
                            "--no-progress"] + common[:-1], capture_output=True, text=True, check=True)
        dt = time.perf_counter() - t0
        said = [l for l in p.stderr.splitlines() if "backend auto" in l or " on " in l]
        print(f"{backend:5s} {dt:7.3f} s  {long_frames / dt / 1e6:7.1f} Mframes/s   " + " | ".join(said))
    for backend in ("auto", "cuda"):
        print(f"long file, {backend} vs cpu:", compare(f"long_{backend}.wav", "long_cpu.wav"))
