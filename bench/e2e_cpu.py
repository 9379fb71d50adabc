#!/usr/bin/env python3
"""End-to-end CPU timing: sigstream vs SoX `fir` vs FFmpeg `afir` vs the I/O floor.

Usage: bench/e2e_cpu.py [--sigstream build/sigstream] [--minutes 10] [--taps 255] [--runs 3]

Makes a stereo 48 kHz 16-bit WAV of the given length (pink noise + tones, made
by SoX), designs a low-pass at 3 kHz with `sigstream design`, and times, each
the median of --runs runs, in the same session:
  floor      `sox in.wav copy.wav`  (read + write, no processing)
  sigstream  `sigstream filter in.wav out.wav --taps-file taps.txt --backend cpu`
  sox        `sox in.wav out.wav fir taps.txt`
  ffmpeg     `ffmpeg -i in.wav -i ir.wav -lavfi afir=gtype=none out.wav` (default threads)
and prints the ratios. Needs sox and ffmpeg (apt-get install sox ffmpeg).
Files go to bench/work/ (git-ignored).
"""
import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import time
import wave

ap = argparse.ArgumentParser()
ap.add_argument("--sigstream", default="build/sigstream")
ap.add_argument("--minutes", type=float, default=10.0)
ap.add_argument("--taps", type=int, default=255)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--work", default="bench/work")
ap.add_argument("--threads", default="", help="sigstream CPU threads (default: all)")
args = ap.parse_args()

for tool in ("sox", "ffmpeg"):
    if shutil.which(tool) is None:
        sys.exit(f"e2e_cpu: needs {tool} (apt-get install sox ffmpeg)")
os.makedirs(args.work, exist_ok=True)
w = lambda name: os.path.join(args.work, name)
sig = os.path.abspath(args.sigstream)

src = w(f"in_{args.minutes:g}min.wav")
if not os.path.exists(src):
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", src, "synth", str(args.minutes * 60),
                    "pinknoise", "sine", "440", "gain", "-6"], check=True)
taps = subprocess.run([sig, "design", "--lowpass", "3000", "--rate", "48000", "--taps", str(args.taps)],
                      check=True, capture_output=True, text=True).stdout.split()
with open(w("taps.txt"), "w") as f:
    f.write("\n".join(taps) + "\n")
# FFmpeg's afir takes the response as audio: a stereo float WAV of the taps.
with open(w("ir.wav"), "wb") as f:
    data = b"".join(struct.pack("<ff", float(t), float(t)) for t in taps)
    hdr = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 3, 2, 48000,
                      48000 * 8, 8, 32, b"data", len(data))
    f.write(hdr + data)

sig_cmd = [sig, "filter", src, w("out_sig.wav"), "--taps-file", w("taps.txt"), "--backend", "cpu", "--quiet"]
if args.threads:
    sig_cmd = [sig, "run", "-", ]  # placeholder, replaced below
    cfg = w("cpu_threads.yaml")
    with open(cfg, "w") as f:
        f.write(f"version: 1\nsource: {{file: {src}}}\nstages:\n  - type: fir\n    taps_file: {w('taps.txt')}\n"
                f"sink: {{file: {w('out_sig.wav')}}}\nexecution: {{backend: cpu, threads: {args.threads}}}\n")
    sig_cmd = [sig, "run", cfg, "--quiet"]
floor_tool = os.path.join(os.path.dirname(sig), "bench", "bench_cpu_io_floor")
cmds = {
    "floor (sox copy)": ["sox", src, w("copy.wav")],
    "sigstream cpu": sig_cmd,
    "sox fir": ["sox", src, w("out_sox.wav"), "fir", w("taps.txt")],
    "ffmpeg afir": ["ffmpeg", "-v", "error", "-y", "-i", src, "-i", w("ir.wav"), "-lavfi", "afir=gtype=none",
                    "-c:a", "pcm_s16le", w("out_ff.wav")],
}
if os.path.exists(floor_tool):
    cmds["floor (libsndfile copy)"] = [floor_tool, src, w("copy2.wav")]
times = {}
for name, cmd in cmds.items():
    runs = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        runs.append(time.perf_counter() - t0)
    times[name] = statistics.median(runs)

with wave.open(src) as f:
    frames = f.getnframes()
print(f"# {args.minutes:g} min stereo 48 kHz pcm16 ({frames} frames), {args.taps} taps, "
      f"median of {args.runs}, {os.cpu_count()} cores")
floor = times["floor (sox copy)"]
for name, t in times.items():
    print(f"{name:18s} {t:8.3f} s   {frames / t / 1e6:8.1f} Mframes/s   {t / floor:6.2f}x floor")
print(f"sigstream vs sox: {times['sox fir'] / times['sigstream cpu']:.2f}x faster; "
      f"vs ffmpeg afir: {times['ffmpeg afir'] / times['sigstream cpu']:.2f}x")
